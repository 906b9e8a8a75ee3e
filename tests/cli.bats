#!/usr/bin/env bats
# The option conventions every C command shares (lib/cli, lib/rmtools).

setup() {
  load test_helper/common
}

@test "-i takes a unit everywhere: 200ms, 1.5s, 2m, 1h; a bare number is seconds" {
  local cmd
  mkdir -p "$BATS_TEST_TMPDIR/sys"
  cp -a "$FIXTURES/drm/mixed/." "$FIXTURES/powercap/intel1/." "$BATS_TEST_TMPDIR/sys/"
  run -0 rm-sample -f jsonl -i 200ms -n 2
  [ "${#lines[@]}" -eq 2 ]
  # Ticks are absolute deadlines 0.2 s apart: the second row is at >= 0.2 s.
  "$PY" -c 'import json,sys; r=[json.loads(l) for l in sys.argv[1:]]; assert r[1]["elapsed_s"] >= 0.199, r' "${lines[@]}"
  # -n 1 prints the first row at once, so long intervals cost nothing.
  for cmd in rm-sample rm-gpu; do
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 1h -n 1
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 1.5s -n 1
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 2m -n 1
  done
  # rm-energy's first row is watts over one whole interval.
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 rm-energy -i 100ms -n 1
  run -0 rm-tree -i 50ms -n 1 $$
}

@test "-i with a unit that is not one, or out of range once converted, is a usage error naming it" {
  local arg
  for arg in 2d 25h 0.5ms "1 s" ms 1e3s; do
    run -2 --separate-stderr rm-sample -i "$arg" -n 1
    [ "${stderr_lines[0]}" = "rm-sample: invalid interval '$arg': seconds from 0.001 to 86400 (or with a unit: 200ms, 1.5s, 2m, 1h)" ]
    [[ "${stderr_lines[1]}" == "usage: rm-sample "* ]]
  done
}

# The four commands on lib/cli's table report errors with err(3)/warn(3),
# which print program_invocation_short_name: each sets it to its own name.
@test "errors name the command, not the file it was copied to, each in one write" {
  local cmd
  mkdir -p "$BATS_TEST_TMPDIR/sys" "$BATS_TEST_TMPDIR/bin"
  for cmd in rm-energy rm-gpu rm-sample rm-tree; do
    cp "$(command -v "$cmd")" "$BATS_TEST_TMPDIR/bin/renamed-$cmd"
  done
  cd "$BATS_TEST_TMPDIR/bin"
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -1 --separate-stderr ./renamed-rm-energy
  [ "$stderr" = "rm-energy: no RAPL zones under '$BATS_TEST_TMPDIR/sys/class/powercap': No such file or directory" ]
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -1 --separate-stderr ./renamed-rm-gpu
  [ "$stderr" = "rm-gpu: no GPUs: no cards under '$BATS_TEST_TMPDIR/sys/class/drm' and none through NVML" ]
  run -1 --separate-stderr ./renamed-rm-sample --disk-path "$BATS_TEST_TMPDIR/none"
  [ "$stderr" = "rm-sample: cannot read disk path '$BATS_TEST_TMPDIR/none': No such file or directory" ]
  RM_PROC_ROOT="$BATS_TEST_TMPDIR/none" run -1 --separate-stderr ./renamed-rm-tree
  [ "$stderr" = "rm-tree: cannot open '$BATS_TEST_TMPDIR/none': No such file or directory" ]
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -127 --separate-stderr ./renamed-rm-energy -- "$BATS_TEST_TMPDIR/none"
  [ "${stderr_lines[1]}" = "rm-energy: cannot run '$BATS_TEST_TMPDIR/none': No such file or directory" ]
  # A line whole in one write(2), as rm-monitor's samplers share a stderr.
  under_valgrind && skip "strace of the valgrind stand-in"
  run -1 strace -f -s 512 -e trace=write -o "$BATS_TEST_TMPDIR/trace" "$RM_TOP/bin/rm-sample" --disk-path "$BATS_TEST_TMPDIR/none"
  run -0 grep -c '^[0-9 ]*write(2, "rm-sample: cannot read disk path .*: No such file or directory\\n"' "$BATS_TEST_TMPDIR/trace"
  [ "$output" = 1 ]
}

# Every command calls rm_set_prog first thing: lib's messages go through
# err(3)/warnx(3), which name the command and leave in one write(2).
@test "lib/rmtools prints through err(3) and warnx(3), not by hand" {
  run -1 grep -n 'fprintf(stderr' "$RM_TOP/lib/rmtools.c"
  run grep -L 'rm_set_prog(prog);' "$RM_TOP"/src/rm-*.c "$RM_TOP"/src/*/main.c
  [ "$output" = "" ]
  run -1 --separate-stderr bash -c 'rm-summarize "$1" >/dev/full' _ "$FIXTURES/summarize/seed-build.csv"
  [ "$stderr" = "rm-summarize: cannot write output: No space left on device" ]
}

@test "no command calls setlocale: numbers are parsed and printed in the C locale (the guard in lib/rmtools.h)" {
  grep -q "Never call setlocale()" "$RM_TOP/lib/rmtools.h"
  run grep -rn --include='*.c' --include='*.h' --exclude=rmtools.h 'setlocale *(' "$RM_TOP/src" "$RM_TOP/lib"
  [ "$status" -eq 1 ]
  # A German locale in the environment changes nothing.
  LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 run -0 rm-summarize --json "$FIXTURES/summarize/seed-build.csv"
  [[ "$output" != *[0-9],[0-9]*MiB* ]]
  jq -e . <<<"$output" >/dev/null
}

@test "--version: every C command gives the Makefile's VERSION, and each wrapper gives its C commands' (no number of its own)" {
  local v p d="$BATS_TEST_TMPDIR/bin"
  v=$(sed -n 's/^VERSION *= *//p' "$RM_TOP/Makefile")
  [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
  for p in rm-sample rm-tree rm-summarize rm-energy rm-gpu; do
    run -0 "$p" --version
    [ "$output" = "$p $v" ]
  done
  for p in rm-run rm-monitor rm-plot; do
    run -0 "$p" --version
    [ "$output" = "$p $v" ]
  done
  # A copy of bin/ whose C commands are of another version: the wrappers say that one.
  cp -r "$RM_TOP/bin" "$d"
  for p in rm-sample rm-tree rm-summarize; do
    printf '#!/bin/sh\necho "%s 9.8.7"\n' "$p" >"$d/$p"
  done
  for p in rm-run rm-monitor rm-plot; do
    run -0 "$d/$p" --version
    [ "$output" = "$p 9.8.7" ]
  done
  run -0 "$d/resource-monitor.sh" --version
  [ "$output" = "rm-monitor 9.8.7" ]
}
