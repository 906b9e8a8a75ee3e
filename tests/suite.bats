#!/usr/bin/env bats
# The test runner itself (tests/run.sh, tests/test_helper/common.bash): slow
# tests only in make check-long, a hung test killed and reported, a root
# test that skips as root under CI failing, the valgrind stand-ins first on
# PATH, make check T=NAME.  Each runs tests/run.sh on a small bats file in
# tests/fixtures/suite, or on a real one.

setup() {
  load test_helper/common
  S=tests/fixtures/suite
  cd "$RM_TOP"
}

# suite ARGS...: tests/run.sh ARGS, in an environment of its own (not this
# bats run's).
suite() {
  env -u CI -u VALGRIND -u RM_TIMING -u RM_JOBS -u RM_TEST_TIMEOUT -u RM_SUITE_TIMEOUT -u RM_WATCHDOG_LOG RM_TOP="$RM_TOP" "$@"
}

@test "make check leaves out the tests tagged slow, make check-long runs only them; the last line counts" {
  run -0 suite bash tests/run.sh "$S/tags.bats"
  [[ "$output" == *"ok 1 quick one"* && "$output" != *"slow one"* ]]
  [ "${lines[-1]}" = "1 passed, 0 failed, 0 skipped" ]
  run -0 suite bash tests/run.sh --long "$S/tags.bats"
  [[ "$output" == *"ok 1 slow one"* && "$output" != *"quick one"* ]]
  [ "${lines[-1]}" = "1 passed, 0 failed, 0 skipped" ]
  grep -q '^check-long:' Makefile
}

@test "the failed tests are listed again above the count, each with its first diagnostics" {
  run -1 suite bash tests/run.sh "$S/fails.bats"
  # A log cut to its tail, as CI's, still names what failed and why.
  local -a tail=("${lines[@]: -8}")
  printf '%s\n' "${tail[@]}"
  [ "${lines[-1]}" = "1 passed, 2 failed, 0 skipped" ]
  local i
  for i in "${!lines[@]}"; do [[ "${lines[i]}" == "# the failed tests again:" ]] && break; done
  [[ "${lines[i]}" == "# the failed tests again:" ]]
  [[ "${lines[i + 1]}" == "not ok 1 fails with a reason" ]]
  [[ "${lines[*]:i + 2}" == *"# the reason it failed"* ]]
  [[ "${lines[*]:i + 1}" == *"not ok 3 fails quietly"* ]]
  [[ "${lines[*]:i}" != *"passes between"* && "${lines[*]:i}" != *"nothing to say"* ]]
}

@test "a test that hangs is killed after RM_TEST_TIMEOUT seconds, reported failed, and the suite goes on" {
  local t0=$SECONDS
  run -1 suite RM_TEST_TIMEOUT=3 RM_WATCHDOG_GRACE=3 bash tests/run.sh "$S/hang.bats"
  echo "# took $((SECONDS - t0)) s"
  [[ "$output" == *"not ok 1 hangs in a command"* ]]
  [[ "$output" == *"watchdog: 'hang.bats: hangs in a command' ran past 3 s (RM_TEST_TIMEOUT); killing what it started:"*"sleep 1000"* ]]
  # A bare wait does not wait for the watchdog.
  [[ "$output" == *"ok 2 a bare wait"* && "$output" != *"not ok 2"* ]]
  # A loop in the test's own shell: the test itself is killed, and counted.
  [[ "$output" == *"not ok - watchdog killed hang.bats: hangs in its own shell: still running 3 s after"* ]]
  [[ "$output" == *"ok 4 after the hangs"* && "$output" != *"not ok 4"* ]]
  [ "${lines[-1]}" = "2 passed, 2 failed, 0 skipped" ]
  # Bounded well below the 1000 s the test would sleep.
  ((SECONDS - t0 < 120))
}

@test "skip_needs_root: a skip outside CI; as root under CI=true a failure; a capability root lacks is a skip" {
  run -0 suite bash tests/run.sh "$S/needsroot.bats"
  [[ "$output" == *"ok 1 needs root # skip pretend root could not do it"* ]]
  [[ "$output" == *"ok 2 needs a capability root lacks # skip pretend root lacks it"* ]]
  [ "${lines[-1]}" = "1 passed, 0 failed, 2 skipped" ]
  if [[ $EUID -eq 0 ]]; then
    run -1 suite CI=true bash tests/run.sh "$S/needsroot.bats"
    [[ "$output" == *"not ok 1 needs root"* ]]
    [[ "$output" == *"running as root under CI, yet: pretend root could not do it"* ]]
    [[ "$output" == *"ok 2 needs a capability root lacks # skip pretend root lacks it (this machine withholds capability 63 even from root)"* ]]
    [ "${lines[-1]}" = "1 passed, 1 failed, 1 skipped" ]
  else
    run -0 suite CI=true bash tests/run.sh "$S/needsroot.bats"
    [ "${lines[-1]}" = "1 passed, 0 failed, 2 skipped" ]
  fi
}

@test "VALGRIND=1: the valgrind stand-ins stay first on PATH, before bin/" {
  local vg="$BATS_TEST_TMPDIR/valgrind-bin"
  mkdir -p "$vg"
  printf '#!/bin/sh\nexit 0\n' >"$vg/rm-sample"
  chmod 755 "$vg/rm-sample"
  # What tests/run.sh sets up under VALGRIND=1: the stand-ins, then bin/.
  run -0 suite PATH="$vg:$RM_TOP/bin:$PATH" EXPECT_RM_SAMPLE="$vg/rm-sample" \
    bats --tap "$S/path.bats"
  [[ "$output" == *"ok 1 rm-sample is the one first on PATH before common.bash"* ]]
  # Without them, bin/ comes first.
  run -0 suite PATH="/usr/bin:/bin" EXPECT_RM_SAMPLE="$RM_TOP/bin/rm-sample" \
    bats --tap "$S/path.bats"
}

@test "make check T=NAME: only tests/NAME.bats, and the unit tests of the lib modules NAME's command links" {
  # The units, as the objects' symbols say: rm-gpu links lib/gpu and
  # lib/tick, not lib/csvread or lib/kmsg; rm-summarize the other way round.
  run -0 suite bash tests/run.sh --units rm-gpu
  [[ "$output" == *t_gpu* && "$output" == *t_tick* && "$output" == *t_cli* ]]
  [[ "$output" != *t_csvread* && "$output" != *t_kmsg* && "$output" != *t_procev* ]]
  run -0 suite bash tests/run.sh --units rm-summarize
  [[ "$output" == *t_csvread* && "$output" == *t_kmsg* && "$output" != *t_gpu* ]]
  # A unit test of a command's own source (t_comps: src/rm-summarize's).
  [[ "$output" == *t_comps* ]]
  run -0 suite bash tests/run.sh --units rm-gpu
  [[ "$output" != *t_comps* ]]
  # A command's other files are its: rm-tree-exact runs rm-tree's units.
  run -0 suite bash tests/run.sh --units rm-tree-exact
  [[ "$output" == *t_procev* && "$output" == *t_ptree* ]]
  # A subject file runs alone, with no unit test.
  run -0 suite bash tests/run.sh --units cli
  [ "$output" = "" ]
  run -0 suite bash tests/run.sh --for cli
  [[ "$output" != *"# unit:"* && "$output" != *"shellcheck"* ]]
  [ "${lines[-1]}" = "$(bats --count tests/cli.bats) passed, 0 failed, 0 skipped" ]
  # A name with no file is refused, the names listed.
  run -2 suite bash tests/run.sh --for no-such-file
  [[ "$output" == *"--for 'no-such-file': no tests/no-such-file.bats (the names: "*" rm-gpu "* ]]
  # make passes T on.
  run -0 make -n check T="rm-gpu cli"
  [[ "$output" == *"tests/run.sh --for rm-gpu --for cli"* ]]
}

# A sysctl is the machine's: kernel.ns_last_pid written by rm-tree-sampled's
# PID-reuse test, beside rm-tree-exact in the parallel group, gave the
# chain test's processes PIDs forced for another test (one loaded make
# check: "the deepest process of a chain ... 3 rows").
@test "every bats file that writes a kernel setting under /proc/sys runs in the serial group" {
  local f name serial
  serial=" $(sed -n 's/^SERIAL_FILES=(\(.*\))$/\1/p' "$RM_TOP/tests/run.sh") "
  [[ "$serial" == *" rm-tree-exact "* ]]
  for f in "$RM_TOP"/tests/*.bats; do
    name=$(basename "$f" .bats)
    [[ "$name" != suite ]] || continue  # this test's own pattern
    if grep -Eq '(>|open\()[^|;]*/proc/sys/|sysctl -w' "$f"; then
      echo "# $name writes under /proc/sys"
      [[ "$serial" == *" $name "* ]]
    fi
  done
}

@test "no wait_for polls a test whose operands were expanded once, before the first try" {
  # A test of a command substitution as wait_for's command expands it once, so
  # it waits for a constant: poll a function that counts afresh instead.
  run grep -nE 'wait_for +[0-9]+ +(test|\[) [^|;]*\$\(' "$RM_TOP"/tests/*.bats "$RM_TOP"/tests/test_helper/*.bash
  echo "$output"
  [ "$status" -eq 1 ]
}
