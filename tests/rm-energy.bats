#!/usr/bin/env bats
# rm-energy on the powercap fixture trees (this machine has no RAPL), and
# rm-energy -- CMD: what CMD inherits, -o, ^C in a terminal.
# shellcheck disable=SC2016,SC2154  # awk and sh programs are single-quoted on purpose; bats sets stderr_lines

setup() { load test_helper/common; }

teardown() {
  if [[ -n "${EACCES_DIR:-}" ]]; then
    rm -rf "$EACCES_DIR"
  fi
}

# fixture NAME: a writable copy of a powercap fixture; prints its root.
fixture() {
  cp -a "$FIXTURES/powercap/$1" "$BATS_TEST_TMPDIR/$1"
  printf '%s\n' "$BATS_TEST_TMPDIR/$1"
}

# set_uj ZONE_DIR UJ: move a zone's counter as the kernel would, atomically.
set_uj() {
  printf '%s\n' "$2" >"$1/energy_uj.new"
  mv "$1/energy_uj.new" "$1/energy_uj"
}

# lines FILE: how many lines FILE holds (0 when missing).
lines() {
  local n=0
  [[ -f "$1" ]] && n=$(wc -l <"$1")
  printf '%s\n' "$n"
}

# has_lines FILE N: FILE holds at least N lines.
has_lines() {
  (($(lines "$1") >= $2))
}

@test "one Intel socket: every zone by name, subzones in order, mmio duplicate dropped, psys listed" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 --separate-stderr rm-energy
  [ "$output" = "zone,name,energy_uj,max_energy_range_uj
intel-rapl:0,package-0,100000000,262143328850
intel-rapl:0:0,core,50000000,262143328850
intel-rapl:0:1,uncore,2000000,262143328850
intel-rapl:0:2,dram,30000000,262143328850
intel-rapl:1,psys,200000000,262143328850" ]
  [ -z "$stderr" ]
}

@test "two sockets, AMD, and eleven packages numbered in hex up to intel-rapl:a" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel2" run -0 rm-energy -H
  [ "$output" = "intel-rapl:0,package-0,1000000000,262143328850
intel-rapl:0:0,dram,400000000,262143328850
intel-rapl:1,package-1,2000000000,262143328850
intel-rapl:1:0,dram,500000000,262143328850" ]
  RM_SYS_ROOT="$FIXTURES/powercap/amd" run -0 rm-energy -H
  [ "$output" = "intel-rapl:0,package-0,7000000,65712999613
intel-rapl:0:0,core,3000000,65712999613" ]
  RM_SYS_ROOT="$FIXTURES/powercap/hex" run -0 rm-energy -H
  [ "${#lines[@]}" -eq 11 ]
  [ "${lines[9]}" = "intel-rapl:9,package-9,10000000,262143328850" ]
  [ "${lines[10]}" = "intel-rapl:a,package-10,11000000,262143328850" ]
}

@test "one-shot -f prom: joules counters in base units with zone and name labels; -f jsonl parses" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 rm-energy -f prom
  [[ "$output" == *'# TYPE rm_rapl_energy_joules_total counter'* ]]
  [[ "$output" == *'rm_rapl_energy_joules_total{zone="intel-rapl:0:2",name="dram"} 30'* ]]
  [[ "$output" == *'rm_rapl_max_energy_range_joules{zone="intel-rapl:0",name="package-0"} 262143.32885'* ]]
  [ "$(grep -c '^# HELP' <<<"$output")" -eq 2 ]
  RM_SYS_ROOT="$FIXTURES/powercap/intel2" run -0 rm-energy -f jsonl
  run -0 jq -r 'select(.name == "dram") | .energy_uj' <<<"$output"
  [ "$output" = $'400000000\n500000000' ]
}

@test "streaming: package and dram joules exact across a wrap, watts = joules / elapsed of the same rows; psys and core never added" {
  local root z out i
  root=$(fixture intel1)
  z="$root/devices/virtual/powercap/intel-rapl/intel-rapl:0"
  out="$BATS_TEST_TMPDIR/stream.csv"
  # Each step is written as soon as the previous row (the header: the
  # baselines) is out, half an interval before the next reading.  On a
  # loaded machine the test itself can be later than that half interval
  # (the reading then sees the step before): the run is tried again, at
  # most three times; the counts must come out exact in one of them.
  local pkg=(262133328850 10000000 30000000 30000000)
  local dram=(34000000 37000000 38500000 38500000)
  local try
  for try in 1 2 3; do
    # Start the package 20 J below its range (262143.328850 J) so that it wraps.
    set_uj "$z" 262123328850
    set_uj "$z/intel-rapl:0:2" 30000000
    RM_SYS_ROOT="$root" rm-energy -i 0.5 -n 4 >"$out" &
    for i in 0 1 2 3; do
      wait_for 5 has_lines "$out" $((i + 1))
      set_uj "$z" "${pkg[i]}"
      set_uj "$z/intel-rapl:0:2" "${dram[i]}"
      # Not part of the package sum: psys (its own zone), core (inside it).
      set_uj "$root/devices/virtual/powercap/intel-rapl/intel-rapl:1" $((300000000 + i * 100000000))
      set_uj "$z/intel-rapl:0:0" $((60000000 + i * 10000000))
    done
    wait
    [ "$(cut -d, -f5,6 "$out" | tail -n +2 | tr '\n' ' ')" = "10.000,4.000 30.000,7.000 50.000,8.500 50.000,8.500 " ] && break
    echo "# try $try: $(cut -d, -f5,6 "$out" | tail -n +2 | tr '\n' ' ')"
  done
  [ "$(head -1 "$out")" = "epoch,elapsed_s,pkg_w,dram_w,pkg_j,dram_j" ]
  [ "$(lines "$out")" -eq 5 ]
  # 10 J, then 10 J to the range and 10 J after it, 20 J, nothing.
  [ "$(cut -d, -f5,6 "$out" | tail -n +2 | tr '\n' ' ')" = "10.000,4.000 30.000,7.000 50.000,8.500 50.000,8.500 " ]
  # Each row's watts from the joules and elapsed it printed: the only slack
  # is their rounding (elapsed to 1 ms, watts to 0.01 W).
  run -0 awk -F, 'NR == 1 { next }
    { dt = $2 - pe; if (dt <= 0) { print "row " NR ": elapsed went back"; bad = 1 }
      for (k = 0; k < 2; k++) {
        w = (k ? $4 : $3); j = (k ? $6 - pd : $5 - pp); want = j / dt
        tol = want * 0.0011 / dt + 0.006
        if (w - want > tol || want - w > tol) { print "row " NR ": " w " W, want " want; bad = 1 } }
      pe = $2; pp = $5; pd = $6 }
    END { exit bad }' "$out"
  # The rows came on the interval.
  run -0 awk -F, 'NR > 1 && ($2 < 0.45 * (NR - 1) || $2 > 0.5 * (NR - 1) + 1) { exit 1 }' "$out"
}

@test "streaming two sockets: package = package-0 + package-1, dram = both dram zones" {
  local root out
  root=$(fixture intel2)
  out="$BATS_TEST_TMPDIR/two.csv"
  # The header says the baselines are read; the row is taken when the
  # watched sleep ends, after the four counters have moved (a 0.5 s tick
  # could fall between two of the writes on a loaded machine).
  sleep 600 &
  local w=$!
  RM_SYS_ROOT="$root" rm-energy -i 600 -n 1 --watch-pid "$w" >"$out" &
  local e=$!
  wait_for 30 has_lines "$out" 1
  set_uj "$root/devices/virtual/powercap/intel-rapl/intel-rapl:0" 1010000000
  set_uj "$root/devices/virtual/powercap/intel-rapl/intel-rapl:1" 2025000000
  set_uj "$root/devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0" 401000000
  set_uj "$root/devices/virtual/powercap/intel-rapl/intel-rapl:1/intel-rapl:1:0" 502000000
  kill "$w"
  wait "$e"
  [ "$(lines "$out")" -eq 2 ]
  [ "$(csv_get "$out" pkg_j)" = "35.000" ]
  [ "$(csv_get "$out" dram_j)" = "3.000" ]
}

@test "streaming AMD: no dram zone, so dram columns are empty, never 0" {
  local out="$BATS_TEST_TMPDIR/amd.csv"
  RM_SYS_ROOT="$FIXTURES/powercap/amd" run -0 rm-energy -i 0.05 -n 2
  printf '%s\n' "$output" >"$out"
  [ "$(csv_get "$out" pkg_j 2)" = "0.000" ]
  [ "$(csv_get "$out" pkg_w 2)" = "0.00" ]
  [ -z "$(csv_get "$out" dram_w 2)" ]
  [ -z "$(csv_get "$out" dram_j 2)" ]
  RM_SYS_ROOT="$FIXTURES/powercap/amd" run -0 rm-energy -i 0.05 -n 1 -f jsonl
  run -0 jq -c '[.dram_w, .dram_j, .pkg_w]' <<<"$output"
  [ "$output" = "[null,null,0]" ]
}

@test "streaming -f prom: package watts and joules counters, each with HELP and TYPE" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 rm-energy -i 0.05 -n 1 -f prom
  [[ "$output" == *$'# TYPE rm_package_power_watts gauge\nrm_package_power_watts 0'* ]]
  [[ "$output" == *$'# TYPE rm_package_energy_joules_total counter\nrm_package_energy_joules_total 0'* ]]
  [[ "$output" == *'rm_dram_energy_joules_total 0'* ]]
  [ "$(grep -c '^# HELP' <<<"$output")" -eq "$(grep -c '^# TYPE' <<<"$output")" ]
}

@test "--watch-pid: ends as soon as the PID does, with a last row for the part interval" {
  local root z out start
  root=$(fixture intel1)
  z="$root/devices/virtual/powercap/intel-rapl/intel-rapl:0"
  out="$BATS_TEST_TMPDIR/watch.csv"
  sleep 4 &
  local victim=$!
  start=$(date +%s.%N)
  RM_SYS_ROOT="$root" rm-energy -i 30 --watch-pid "$victim" >"$out" &
  wait_for 5 has_lines "$out" 1
  set_uj "$z" 107000000
  wait
  # It did not wait for the 30 s tick.
  run -0 awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { exit !(e - s < 15) }'
  [ "$(lines "$out")" -eq 2 ]
  [ "$(csv_get "$out" pkg_j)" = "7.000" ]
}

@test "-- CMD: the joules CMD cost (it moves the counters itself, through a wrap) and its exit status" {
  local root z
  root=$(fixture intel1)
  z="$root/devices/virtual/powercap/intel-rapl/intel-rapl:0"
  set_uj "$z" 261143328850
  # The command wraps the package counter past its range and adds 2.5 J of dram.
  RM_SYS_ROOT="$root" run -3 --separate-stderr rm-energy -i 0.05 -- sh -c '
    printf "262143000000\n" >"$1/energy_uj.n"; mv "$1/energy_uj.n" "$1/energy_uj"; sleep 0.2
    printf "500000000\n" >"$1/energy_uj.n"; mv "$1/energy_uj.n" "$1/energy_uj"
    printf "32500000\n" >"$1/intel-rapl:0:2/energy_uj"
    echo "own output"; exit 3' sh "$z"
  [ "$output" = "own output" ]
  # 1000 J to the range (262143.328850 J), then 500 J after the wrap.
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/run.csv"
  [ "$(head -1 "$BATS_TEST_TMPDIR/run.csv")" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/run.csv" pkg_j)" = "1500.000" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/run.csv" dram_j)" = "2.500" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/run.csv" exit)" = "3" ]
  # Mean watts are the joules over the elapsed time it printed.
  run -0 awk -F, 'NR == 2 { want = $2 / $1; exit !($3 - want < want * 0.002 / $1 + 0.006 && want - $3 < want * 0.002 / $1 + 0.006) }' \
    "$BATS_TEST_TMPDIR/run.csv"
}

@test "-- CMD: -o FILE, a signal ends CMD (exit 128+N), a missing command (127), CMD's options stay its own" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -143 rm-energy -o "$BATS_TEST_TMPDIR/o.csv" -- sh -c 'kill -TERM $$'
  [ -z "$output" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/o.csv" exit)" = "143" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/o.csv" pkg_j)" = "0.000" ]
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -127 --separate-stderr rm-energy -- no-such-command-rm
  [[ "$stderr" == *"rm-energy: cannot run 'no-such-command-rm': No such file or directory"* ]]
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 --separate-stderr rm-energy -H -f jsonl -- echo -n -i
  [ "$output" = "-i" ]
  run -0 jq -r '.exit' <<<"$stderr"
  [ "$output" = "0" ]
}

@test "-- CMD: a stop signal is passed on to CMD, whose status rm-energy exits with; its end is seen at once without pidfd" {
  local out="$BATS_TEST_TMPDIR/sig.csv" pid start
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" rm-energy -o "$out" -- \
    sh -c 'trap "exit 7" TERM; echo up >"$1"; while :; do sleep 0.05; done' sh "$BATS_TEST_TMPDIR/up" &
  pid=$!
  wait_for 5 test -s "$BATS_TEST_TMPDIR/up"
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 7 ]
  [ "$(csv_get "$out" exit)" = "7" ]
  # Where pidfd_open is missing a zombie still answers kill(pid, 0): SIGCHLD
  # must end the wait, not the 30 s interval.
  start=$(date +%s.%N)
  RM_NO_PIDFD=1 RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 --separate-stderr rm-energy -i 30 -- true
  run -0 awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { exit !(e - s < 5) }'
}

@test "-- CMD: a stop signal sent the moment CMD starts is passed on too: the handlers are set before the fork" {
  command -v strace >/dev/null || skip "no strace"
  # CI found rm-energy killed by a SIGTERM that came before its handler
  # was set, CMD left running.  The order of the calls says it for sure:
  # our handler for SIGTERM, then the fork (the parent alone is traced).
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 strace -qq -o "$BATS_TEST_TMPDIR/trace" \
    -e trace=rt_sigaction,clone,clone3,fork,vfork rm-energy -- true
  run -0 awk '/^rt_sigaction\(SIGTERM, \{sa_handler=0x/ && !h { h = NR }
              /^(clone|clone3|fork|vfork)\(/ && !f { f = NR }
              END { exit !(h && f && h < f) }' "$BATS_TEST_TMPDIR/trace"
  # And as a user sees it: CMD signals us first thing, and gets it back.
  local i
  for i in 1 2 3 4 5; do
    RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -7 --separate-stderr timeout 60 rm-energy -- \
      sh -c 'trap "exit 7" TERM; kill -TERM "$PPID"; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; exit 3'
  done
  # An ignored SIGINT (a job started with &) stays ignored in CMD.
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 --separate-stderr sh -c \
    'trap "" INT; exec rm-energy -- sh -c "kill -INT \$\$; echo alive"'
  [ "$output" = "alive" ]
}

@test "-- CMD: the terminal's ^\\ (SIGQUIT to the process group) is CMD's to answer; rm-energy writes its row and exits with its status" {
  local out="$BATS_TEST_TMPDIR/quit.csv" up="$BATS_TEST_TMPDIR/up" pid pgid rc=0
  ulimit -c 0
  # In a process group of its own, as a terminal's foreground job is, and
  # with SIGQUIT's default action (bash ignores it in a background job).
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" setsid env --default-signal=QUIT rm-energy -o "$out" -- \
    sh -c 'trap "exit 9" QUIT; echo up >"$1"; while :; do sleep 0.05; done' sh "$up" &
  pid=$!
  wait_for 10 test -s "$up"
  pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
  [ "$pgid" = "$pid" ]
  kill -QUIT -- "-$pgid"
  wait "$pid" || rc=$?
  [ "$rc" -eq 9 ]
  [ "$(csv_get "$out" exit)" = "9" ]
  # CMD gets SIGQUIT as rm-energy was started with it: default, or ignored.
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -131 --separate-stderr env --default-signal=QUIT \
    rm-energy -- sh -c 'kill -QUIT $$'
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 --separate-stderr sh -c \
    'trap "" QUIT; exec rm-energy -- sh -c "kill -QUIT \$\$; echo alive"'
  [ "$output" = "alive" ]
}

@test "energy_uj the user may not read (root-only since 5.10): one message naming the file, why and the remedy; exit 1" {
  command -v setpriv >/dev/null || skip "no setpriv"
  id nobody >/dev/null 2>&1 || skip "no user nobody"
  [[ $EUID -eq 0 ]] || skip_needs_root "needs root to switch to nobody"
  EACCES_DIR=$(mktemp -d /tmp/rm-energy-eacces.XXXXXX)
  chmod 755 "$EACCES_DIR"
  cp -a "$FIXTURES/powercap/intel1" "$EACCES_DIR/root"
  cp "$RM_TOP/bin/rm-energy" "$EACCES_DIR/rm-energy"
  chmod -R a+rX "$EACCES_DIR"
  local f="$EACCES_DIR/root/class/powercap/intel-rapl:0/energy_uj"
  chmod 0400 "$EACCES_DIR"/root/devices/virtual/powercap/*/*/energy_uj \
    "$EACCES_DIR"/root/devices/virtual/powercap/*/*/*/energy_uj
  local mode
  for mode in "" "-i 0.1 -n 1"; do
    # shellcheck disable=SC2086  # mode is a list of options on purpose
    run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
      env RM_SYS_ROOT="$EACCES_DIR/root" "$EACCES_DIR/rm-energy" $mode
    [ -z "$output" ]
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "rm-energy: cannot read '$f': Permission denied"* ]]
    [[ "$stderr" == *"root-only since Linux 5.10, CVE-2020-8694"* ]]
    [[ "$stderr" == *"run as root"* ]]
    [[ "$stderr" == *"chmod a+r $EACCES_DIR/root/class/powercap/intel-rapl:*/energy_uj"* ]]
  done
  # -- CMD runs CMD all the same, as time(1) would: energy empty, its status kept.
  run -3 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env RM_SYS_ROOT="$EACCES_DIR/root" "$EACCES_DIR/rm-energy" -- sh -c 'echo ran; exit 3'
  [ "$output" = ran ]
  [ "${stderr_lines[0]}" = "rm-energy: cannot read '$f': Permission denied (RAPL energy counters are root-only since Linux 5.10); energy not measured, running the command anyway" ]
  [ "${stderr_lines[1]}" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
  [[ "${stderr_lines[2]}" =~ ^[0-9]+\.[0-9]{3},,,,,3$ ]]
  # rm-sample --energy says it once and carries on with pkg_w empty.
  cp "$RM_TOP/bin/rm-sample" "$EACCES_DIR/rm-sample"
  run -0 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env RM_SYS_ROOT="$EACCES_DIR/root" "$EACCES_DIR/rm-sample" --energy -i 0.05 -n 2
  [ "$stderr" = "rm-sample: pkg_w stays empty: energy_uj is root-only since Linux 5.10 (see rm-energy(1))" ]
  [ "${#lines[@]}" -eq 3 ]
  [[ "${lines[2]}" == *, ]]
  # The same tree read by root works: the failure was the permission.
  RM_SYS_ROOT="$EACCES_DIR/root" run -0 "$EACCES_DIR/rm-energy" -H
  [ "${lines[0]}" = "intel-rapl:0,package-0,100000000,262143328850" ]
}

@test "-- CMD without RAPL (this machine): CMD runs, its status passes through, energy said unavailable" {
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" run -7 --separate-stderr rm-energy -o "$BATS_TEST_TMPDIR/e.csv" -- sh -c 'echo built; exit 7'
  [ "$output" = built ]
  [ "$stderr" = "rm-energy: no RAPL zones under '$BATS_TEST_TMPDIR/class/powercap': energy not measured, running the command anyway" ]
  [ "$(sed -n 1p "$BATS_TEST_TMPDIR/e.csv")" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
  [[ "$(sed -n 2p "$BATS_TEST_TMPDIR/e.csv")" =~ ^[0-9]+\.[0-9]{3},,,,,7$ ]]
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" run -0 --separate-stderr rm-energy -f jsonl -- true
  [[ "${stderr_lines[1]}" == *'"pkg_j":null'* ]]
}

@test "no powercap (this machine): exit 1 saying there are no RAPL zones" {
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" run -1 --separate-stderr rm-energy
  [ "$stderr" = "rm-energy: no RAPL zones under '$BATS_TEST_TMPDIR/class/powercap': No such file or directory" ]
  mkdir -p "$BATS_TEST_TMPDIR/class/powercap/intel-rapl"
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" run -1 --separate-stderr rm-energy -i 1
  [ "$stderr" = "rm-energy: no RAPL zones under '$BATS_TEST_TMPDIR/class/powercap'" ]
  [ -z "$output" ]
}

@test "a zone whose counter cannot be read: empty field in the list, empty sum in the stream, not 0" {
  local root
  root=$(fixture intel1)
  printf 'garbage\n' >"$root/devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:2/energy_uj"
  RM_SYS_ROOT="$root" run -0 rm-energy -H
  [ "${lines[3]}" = "intel-rapl:0:2,dram,,262143328850" ]
  RM_SYS_ROOT="$root" run -0 rm-energy -i 0.05 -n 1
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  [ "$(csv_get "$BATS_TEST_TMPDIR/o.csv" pkg_j)" = "0.000" ]
  [ -z "$(csv_get "$BATS_TEST_TMPDIR/o.csv" dram_j)" ]
  [ -z "$(csv_get "$BATS_TEST_TMPDIR/o.csv" dram_w)" ]
}

@test "usage: bad values and combinations exit 2 with the usage line; --help and --version exit 0" {
  run -2 --separate-stderr rm-energy -i 0
  [[ "${stderr_lines[0]}" == "rm-energy: invalid interval '0'"* ]]
  [[ "${stderr_lines[1]}" == "usage: rm-energy "* ]]
  run -2 --separate-stderr rm-energy -n 2 -- true
  [[ "${stderr_lines[0]}" == "rm-energy: -n does not go with -- CMD" ]]
  run -2 --separate-stderr rm-energy -o x
  [[ "${stderr_lines[0]}" == "rm-energy: -o FILE needs -- CMD" ]]
  run -2 --separate-stderr rm-energy true
  [[ "${stderr_lines[0]}" == "rm-energy: unexpected argument 'true' (put -- before a command)" ]]
  run -2 --separate-stderr rm-energy --
  [[ "${stderr_lines[0]}" == "rm-energy: no command after --" ]]
  run -2 --separate-stderr rm-energy --watch-pid 1
  run -2 --separate-stderr rm-energy -f xml
  run -0 rm-energy --help
  [[ "${lines[0]}" == "usage: rm-energy [-H] [-i SEC] [-n COUNT] [--watch-pid PID] [-f csv|jsonl|prom]" ]]
  run -0 rm-energy --version
  [[ "$output" == "rm-energy "[0-9]* ]]
}

@test "rm-sample --energy: pkg_w is the package watts over the last interval (dram, psys and core not in it)" {
  local root z out
  root=$(fixture intel2)
  z="$root/devices/virtual/powercap/intel-rapl"
  out="$BATS_TEST_TMPDIR/sample.csv"
  RM_SYS_ROOT="$root" rm-sample --energy -i 1 -n 2 >"$out" &
  # After the first row: 6 J on package-0, 4 J on package-1, and dram moves.
  wait_for 5 has_lines "$out" 2
  set_uj "$z/intel-rapl:0" 1006000000
  set_uj "$z/intel-rapl:1" 2004000000
  set_uj "$z/intel-rapl:0/intel-rapl:0:0" 900000000
  wait
  [ "$(head -1 "$out" | tr ',' '\n' | tail -1)" = "pkg_w" ]
  # The first row covers the 100 ms warm-up, when nothing moved.
  [ "$(csv_get "$out" pkg_w 1)" = "0.00" ]
  # 10 J over the time between the rows: rm-sample reads the counters
  # after its /proc scan, a few ms after elapsed_s, so allow 10 % (one
  # package alone would be 40 % off, dram added 50 times too much).
  run -0 awk -F, -v w="$(csv_get "$out" pkg_w 2)" \
    -v e1="$(csv_get "$out" elapsed_s 1)" -v e2="$(csv_get "$out" elapsed_s 2)" \
    'BEGIN { j = w * (e2 - e1); print w " W, " j " J"; exit !(j >= 9 && j <= 11) }' || { cat "$out"; false; }
}

@test "rm-sample --energy without RAPL (this machine): pkg_w empty, nothing fails, nothing said" {
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" run -0 --separate-stderr rm-sample --energy
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  [ -z "$stderr" ]
  [ "$(csv_cols "$BATS_TEST_TMPDIR/o.csv")" = "20" ]
  [ -z "$(csv_get "$BATS_TEST_TMPDIR/o.csv" pkg_w)" ]
  if [[ ! -d /sys/class/powercap/intel-rapl:0 ]]; then
    run -0 --separate-stderr rm-sample --energy -f jsonl
    run -0 jq -c '.pkg_w' <<<"$output"
    [ "$output" = "null" ]
  fi
}

@test "rm-sample --energy -f prom: rm_package_power_watts, a gauge with HELP" {
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" run -0 rm-sample --energy -f prom
  [[ "$output" == *$'# TYPE rm_package_power_watts gauge\nrm_package_power_watts{stage=""} 0'* ]]
}

@test "a counter at 2^64-1 prints every digit in CSV and JSON (never through a double)" {
  local root
  root=$(fixture intel1)
  set_uj "$root/class/powercap/intel-rapl:0" 18446744073709551615
  RM_SYS_ROOT=$root run -0 rm-energy -H
  [ "${lines[0]}" = "intel-rapl:0,package-0,18446744073709551615,262143328850" ]
  RM_SYS_ROOT=$root run -0 rm-energy -f jsonl
  [[ "$output" == *'"energy_uj":18446744073709551615,'* ]]
}

# What CMD inherits: the signal mask, ignored signals, the terminal.

@test "rm-energy -- CMD: CMD gets the signal mask and the ignored SIGPIPE rm-energy was started with, as under time(1)" {
  # The same grep, exec'd with SIGUSR1 blocked and SIGPIPE ignored:
  # straight, then under rm-energy.  What CMD sees must not differ.
  local py='import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])'
  run -0 "$PY" -c "$py" grep -E '^Sig(Blk|Ign)' /proc/self/status
  local direct=$output
  [[ "$direct" == *"SigBlk:"*"200"* ]]
  run -0 --separate-stderr "$PY" -c "$py" rm-energy -- grep -E '^Sig(Blk|Ign)' /proc/self/status
  [ "$output" = "$direct" ]
}

@test "rm-energy -o: written whole and renamed into place (a hard link is never written through), a symlink refused in the words every command uses" {
  local d="$BATS_TEST_TMPDIR"
  export RM_SYS_ROOT="$FIXTURES/powercap/intel1"
  echo ORIGINAL >"$d/victim"
  ln "$d/victim" "$d/e.csv"
  run -0 --separate-stderr rm-energy -o "$d/e.csv" -- true
  [ "$(cat "$d/victim")" = ORIGINAL ]
  [ "$(head -1 "$d/e.csv")" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
  ln -s "$d/victim" "$d/link.csv"
  run -1 --separate-stderr rm-energy -o "$d/link.csv" -- touch "$d/ran"
  [ "$stderr" = "rm-energy: cannot write '$d/link.csv': a symbolic link, not followed" ]
  [ ! -e "$d/ran" ]
  [ "$(cat "$d/victim")" = ORIGINAL ]
  # No temporary file is left behind; /dev/stdout is the inherited descriptor.
  [ "$(find "$d" -name '.*' | wc -l)" -eq 0 ]
  run -0 --separate-stderr rm-energy -o /dev/stdout -- true
  [ "${lines[0]}" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
}

# The driver of the rm-energy ^C test: rm-energy -- CMD on a new pty, as
# in a terminal.  CMD (python) takes SIGINT and SIGTERM with sigwaitinfo
# and logs each one's si_code and sender.  rm-energy is stopped while ^C is
# typed, so CMD has logged the terminal's SIGINT before rm-energy can
# pass anything on: a second SIGINT can never merge with the first.
# Prints CMD's log, then rm-energy's exit status.
ENERGY_PTY='import os, pty, signal, sys, time
log = sys.argv[1]
cmd = """import signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
f = open(sys.argv[1], "a", buffering=1)
f.write("ready\\n")
while True:
    si = signal.sigwaitinfo({signal.SIGINT, signal.SIGTERM})
    f.write("%s %d %s\\n" % (signal.Signals(si.si_signo).name, si.si_code, "us" if si.si_pid == int(sys.argv[2]) else si.si_pid))
    if si.si_signo == signal.SIGTERM:
        sys.exit(0)
"""
pid, fd = pty.fork()
if pid == 0:
    os.execvp("rm-energy", ["rm-energy", "--", sys.executable, "-c", cmd, log, str(os.getpid())])
def until(what, secs=20):
    end = time.monotonic() + secs
    while not what():
        if time.monotonic() > end:
            sys.exit("timed out: " + open(log).read())
        try:
            os.read(fd, 4096) if os.path.exists("/proc/%d" % pid) else None
        except OSError:
            pass
        time.sleep(0.02)
def lines():
    return open(log).read().split("\n")[:-1] if os.path.exists(log) else []
def state():
    return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
def pending():
    return [int(l.split()[1], 16) for l in open("/proc/%d/status" % pid) if l.startswith("ShdPnd")][0]
os.set_blocking(fd, False)
until(lambda: "ready" in lines())
os.kill(pid, signal.SIGSTOP)
until(lambda: state() == "T")
os.write(fd, b"\x03")                      # ^C, from the terminal
until(lambda: len(lines()) == 2)
until(lambda: pending() & (1 << (signal.SIGINT - 1)))
os.kill(pid, signal.SIGCONT)
until(lambda: not pending() & (1 << (signal.SIGINT - 1)))
os.kill(pid, signal.SIGINT)                # kill(1): SI_USER
until(lambda: any(l.startswith("SIGINT 0") for l in lines()))
os.kill(pid, signal.SIGTERM)
_, st = os.waitpid(pid, 0)
print("\n".join(lines()[1:]))
print("exit", os.waitstatus_to_exitcode(st))
'

@test "rm-energy -- CMD in a terminal: ^C reaches CMD once (from the terminal), a kill(1) SIGINT is passed on once" {
  local log="$BATS_TEST_TMPDIR/cmd.log"
  run -0 timeout 60 "$PY" -c "$ENERGY_PTY" "$log"
  # SI_KERNEL (128): the terminal's own; SI_USER (0) from rm-energy ("us").
  [ "$output" = $'SIGINT 128 0\nSIGINT 0 us\nSIGTERM 0 us\nexit 0' ]
}
