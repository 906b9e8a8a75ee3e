#!/usr/bin/env bats
# rm-run: the command's exit status, signals passed to its whole group,
# and the summary (rm-summarize's) where it was asked for.

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
}

@test "--help prints the usage and exits 0; usage errors exit 2" {
  run -0 rm-run --help
  [[ "${lines[0]}" == "usage: rm-run [-i SEC] [--json]"* ]]
  run -2 --separate-stderr rm-run
  [ "${stderr_lines[0]}" = "rm-run: no command to run" ]
  run -2 --separate-stderr rm-run -i 0 -- true
  [ "${stderr_lines[0]}" = "rm-run: invalid interval '0': seconds from 0.001 to 86400, or with a unit (200ms, 1.5s, 2m)" ]
  run -2 --separate-stderr rm-run --bogus -- true
  [ "${stderr_lines[0]}" = "rm-run: unknown option '--bogus'" ]
  run -2 --separate-stderr rm-run --csv
  [ "${stderr_lines[0]}" = "rm-run: option '--csv' needs a value" ]
}

@test "a bad ERE is a usage error before the command starts" {
  run -2 --separate-stderr rm-run --include 'a(' -- touch "$BATS_TEST_TMPDIR/ran"
  [ "${stderr_lines[0]}" = "rm-run: invalid --include 'a(': not a valid extended regular expression" ]
  [[ "${stderr_lines[1]}" == "usage: rm-run "* ]]
  run -2 --separate-stderr rm-run --exclude '[z-a]' -- touch "$BATS_TEST_TMPDIR/ran"
  [ "${stderr_lines[0]}" = "rm-run: invalid --exclude '[z-a]': not a valid extended regular expression" ]
  [ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "exits with the command's status, 128+N for a signal" {
  run -3 rm-run --quiet -- sh -c 'exit 3'
  run -143 rm-run --quiet -- sh -c 'kill -TERM $$'
  run -0 rm-run --quiet -- true
}

@test "a command that cannot run: 127, and still a summary" {
  run -127 --separate-stderr rm-run -- /nonexistent/cmd
  [[ "$stderr" == *"rm-tree: cannot run '/nonexistent/cmd': No such file or directory"* ]]
  [[ "$stderr" == *"/nonexistent/cmd"*"127"* ]]
}

@test "rm-run -- true: a true summary of a command that lasts a millisecond" {
  run -0 --separate-stderr rm-run --json -- true
  [ "$output" = "" ]
  echo "$stderr" | jq -e '
    .job.cmd == "true" and (.job.exit | tonumber) == 0 and .job.procs == 1 and
    .job.max_proc_rss_kib > 100 and .job.max_proc_rss_kib < 8192 and
    .job.elapsed_s < 5 and .processes.count == 1'
}

@test "the summary goes to stderr; the command's output stays on stdout" {
  run -0 --separate-stderr rm-run -- sh -c 'echo hello'
  [ "$output" = "hello" ]
  [[ "$stderr" == *"sh -c echo hello"* ]]
}

@test "-o FILE takes the summary; --quiet prints none but still writes --csv" {
  run -0 --separate-stderr rm-run -o "$BATS_TEST_TMPDIR/sum.txt" -- "$MEMHOG" -m 16 -t 0.3
  [ "$stderr" = "" ]
  grep -q memhog "$BATS_TEST_TMPDIR/sum.txt"
  run -0 --separate-stderr rm-run --quiet --csv "$BATS_TEST_TMPDIR/procs.csv" \
    --timeline "$BATS_TEST_TMPDIR/tl.csv" -- "$MEMHOG" -m 16 -t 0.3
  [ "$stderr" = "" ]
  [ "$output" = "" ]
  [ "$(csv_cols "$BATS_TEST_TMPDIR/procs.csv")" != "" ]
  [ "$(wc -l < "$BATS_TEST_TMPDIR/procs.csv")" -ge 2 ]
  [ "$(head -1 "$BATS_TEST_TMPDIR/tl.csv")" = "epoch,iso,elapsed_s,procs,rss_kib,cpu_pct" ]
}

@test "--silent discards the command's output, not the summary" {
  run -0 --separate-stderr rm-run --silent -- sh -c 'echo out; echo err >&2'
  [ "$output" = "" ]
  run ! grep -qx err <<< "$stderr"
  [[ "$stderr" == *"sh -c echo out"* ]]
}

@test "SIGINT to rm-run reaches the command's whole group; the summary still prints" {
  local d="$BATS_TEST_TMPDIR"
  # Background jobs start with SIGINT ignored: env gives rm-run the
  # default, as a terminal's foreground job has.
  env --default-signal=INT rm-run -i 0.1 -- sh -c "
    '$PY' -c 'import signal, sys, time
def bye(*a):
    open(sys.argv[1], \"w\").close(); sys.exit(7)
signal.signal(signal.SIGINT, bye); open(sys.argv[2], \"w\").close(); time.sleep(30)' $d/inner $d/started &
    sleep 30" 2> "$d/err" &
  local pid=$! rc=0
  wait_for 10 test -e "$d/started"
  kill -INT "$pid"
  wait "$pid" || rc=$?
  [ "$rc" -eq 130 ]
  [ -e "$d/inner" ]
  grep -q "sleep 30" "$d/err"
}

@test "SIGQUIT to rm-run's group is ignored (CMD, the foreground group, answers ^\\ alone): the summary still prints" {
  local d="$BATS_TEST_TMPDIR" pid pgid tree cmdpg rc=0
  ulimit -c 0
  # Its own process group, as a terminal's job; SIGQUIT's default action.
  # (bash ignores SIGQUIT itself; rm-tree, which rm-run starts with the
  # default, must too, or the job's rows and the summary are lost.)
  setsid env --default-signal=QUIT rm-run -i 0.1 -- \
    sh -c 'trap "exit 9" QUIT; echo up >"$1"; while :; do sleep 0.05; done' sh "$d/up" 2>"$d/err" &
  pid=$!
  wait_for 10 test -s "$d/up"
  pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
  tree=$(pgrep -P "$pid" -x rm-tree)
  cmdpg=$(pgrep -P "$tree" -x sh)
  [ "$pgid" = "$pid" ] && [ -n "$cmdpg" ] && [ "$cmdpg" != "$pgid" ]
  kill -QUIT -- "-$pgid"
  # Both rm-run and its rm-tree are still there after a tick or two ...
  alive() { ! grep -q . "$d/err" && kill -0 "$pid" && kill -0 "$tree"; }
  local i
  for i in 1 2 3 4 5; do
    alive || { kill -9 -- "-$cmdpg"; false; }
    sleep 0.1
  done
  # ... and the summary prints when CMD, sent its own, ends.
  kill -QUIT -- "-$cmdpg"
  wait "$pid" || rc=$?
  [ "$rc" -eq 9 ]
  grep -q "exit 9" "$d/err" || { cat "$d/err"; false; }
}

@test "--include and --exclude change what is shown, never the totals" {
  local d="$BATS_TEST_TMPDIR"
  rm-run --json -o "$d/all.json" -- sh -c "'$MEMHOG' -m 32 -t 0.5 & '$MEMHOG' -m 8 -t 0.5 & wait"
  rm-run --json -o "$d/ex.json" --exclude memhog -- sh -c "'$MEMHOG' -m 32 -t 0.5 & '$MEMHOG' -m 8 -t 0.5 & wait"
  jq -e '.job.procs == 3 and .job.max_proc_rss_kib > 32768' "$d/all.json"
  jq -e '.job.procs == 3 and .job.max_proc_rss_kib > 32768' "$d/ex.json"
  run jq -r '[.processes.top[] | .comm] | join(" ")' "$d/ex.json"
  [[ "$output" != *memhog* ]]
}

@test "--cgroup: the exact tree peak in the summary" {
  run -0 --separate-stderr rm-run --json --cgroup -- "$MEMHOG" -c 32,64 -t 0.5
  if [[ "$stderr" == *"no memory cgroup"* ]]; then
    skip_needs_root "this kernel does not let us create a memory cgroup"
  fi
  echo "$stderr" | jq -e '.job.cgroup_peak_kib > 98304 and .job.cgroup_peak_kib < 131072'
}

# The orphan's PID from "still running after CMD ended: PID comm" (the
# summary's line), so that the test can end it.
orphan_pid() {
  sed -n 's/^  still running after CMD ended: \([0-9]*\) .*/\1/p' "$1" | head -1
}

@test "a daemon left by CMD (setsid) is listed, not waited for (F1/B3)" {
  local d="$BATS_TEST_TMPDIR" rc=0 pid
  timeout 60 rm-run -- bash -c \
    '(setsid sleep 300 </dev/null >/dev/null 2>&1 &); echo build done; exit 0' \
    > "$d/out" 2> "$d/err" || rc=$?
  pid=$(orphan_pid "$d/err")
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  cat "$d/err"
  [ "$rc" -eq 0 ]
  [ "$(cat "$d/out")" = "build done" ]
  [ -n "$pid" ]
  # Named as it is when CMD ends: setsid's child may not have run exec yet.
  grep -Eq "^  still running after CMD ended: $pid (sleep|setsid)$" "$d/err"
  grep -Eq "rm-tree: still running after CMD ended, not waited for \(--wait-orphans waits\): $pid \((sleep|setsid)\)" "$d/err"
}

@test "a child still in CMD's session is waited for; --wait-orphans=SEC waits for daemons at most SEC" {
  local d="$BATS_TEST_TMPDIR" pid
  # sh's background job stays in the session: waited for, its end logged.
  run -0 --separate-stderr rm-run --json -- sh -c 'sleep 1 & exit 0'
  echo "$stderr" | jq -c '[.job.procs, [.processes.top[] | {comm, end_s}]]'
  echo "$stderr" | jq -e '.job.procs == 2 and ([.processes.top[] | select(.comm == "sleep") | .end_s] | .[0] >= 0.9)'
  # A daemon: waited for at most 1 s after CMD, then listed.
  rm-run --wait-orphans=1 -o "$d/sum" -- \
    sh -c 'setsid sleep 200 </dev/null >/dev/null 2>&1 & exit 0' 2> "$d/err"
  pid=$(orphan_pid "$d/sum")
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  [ -n "$pid" ]
  el=$(sed -n 's/.*elapsed \([0-9.]*\) s.*/\1/p' "$d/sum")
  awk -v e="$el" 'BEGIN { exit !(e >= 1) }'
}

@test "a signal after CMD ended ends rm-run at once, even with --wait-orphans" {
  local d="$BATS_TEST_TMPDIR" pid rc=0 orphan
  rm-run --wait-orphans -o "$d/sum" -- \
    sh -c "setsid sh -c 'echo \$\$ > $d/orphan; exec sleep 200' </dev/null >/dev/null 2>&1 & exit 0" \
    2> "$d/err" &
  pid=$!
  wait_for 20 test -s "$d/orphan"
  orphan=$(cat "$d/orphan")
  # CMD has ended when the orphan's parent is no longer CMD's sh (it is
  # reparented to rm-tree, the child subreaper).
  wait_for 20 sh -c "[ \"\$(ps -o comm= -p \$(ps -o ppid= -p $orphan))\" != sh ]"
  kill -TERM "$pid"
  timeout 30 tail --pid="$pid" -f /dev/null || rc=$?
  kill "$orphan" 2>/dev/null || true
  [ "$rc" -eq 0 ]
  wait "$pid" || true
  grep -q "still running after CMD ended: $orphan sleep" "$d/sum"
}

@test "CMD gets rm-run's stdin, as under time(1) (B1)" {
  run -0 --separate-stderr rm-run --quiet -- cat <<< "hi"
  [ "$output" = "hi" ]
}

@test "CMD gets the resource limits rm-run was started with (F12/B2)" {
  local hard
  hard=$(ulimit -Hn)
  [[ "$hard" == unlimited || "$hard" -gt 1024 ]] || skip "hard NOFILE limit is $hard: nothing to raise"
  run -0 --separate-stderr bash -c 'ulimit -Sn 1000; rm-run --quiet -- sh -c "ulimit -Sn"'
  [ "$output" = "1000" ]
  run -0 --separate-stderr bash -c 'ulimit -Sn 1000; rm-tree --exec --log /dev/null -- sh -c "ulimit -Sn"'
  [ "$output" = "1000" ]
}

@test "-o FILE is written whole and renamed into place, never through a link (F2)" {
  local d="$BATS_TEST_TMPDIR"
  echo ORIGINAL > "$d/victim"
  # A hard link at the target: the old code truncated and wrote through it.
  ln "$d/victim" "$d/sum.txt"
  run -0 --separate-stderr rm-run -o "$d/sum.txt" -- true
  [ "$(cat "$d/victim")" = "ORIGINAL" ]
  grep -q "^Job: true" "$d/sum.txt"
  # A symlink at the target is refused, in the words every command uses,
  # before the command runs (MW42).
  ln -s "$d/victim" "$d/link.txt"
  run -1 --separate-stderr rm-run -o "$d/link.txt" -- true
  [ "$stderr" = "rm-run: cannot write -o '$d/link.txt': a symbolic link, not followed; nothing was run" ]
  [ "$(cat "$d/victim")" = "ORIGINAL" ]
  [ -L "$d/link.txt" ]
  # No temporary file is left behind.
  [ "$(find "$d" -name '.*' -type f | wc -l)" -eq 0 ]
  # /dev/stdout is the descriptor rm-run was given, not a planted link.
  run -0 --separate-stderr rm-run -o /dev/stdout -- true
  [[ "$output" == "Job: true"* ]]
  # The summary may not replace a file rm-run reads back: refused before
  # the command runs (MW42).
  run -2 --separate-stderr rm-run -o "$d/tl.csv" --timeline "$d/tl.csv" -- touch "$d/ran"
  [ "${stderr_lines[0]}" = "rm-run: '$d/tl.csv' is named for two outputs" ]
  [ ! -e "$d/tl.csv" ] && [ ! -e "$d/ran" ]
}

@test "rm-tree: two outputs on one path are refused; /dev/stdout is allowed; a symlink is named as one" {
  local d="$BATS_TEST_TMPDIR"
  run -2 --separate-stderr rm-tree --exec -i 0.05 --log "$d/same.csv" --timeline "$d/same.csv" -- true
  [ "$stderr" = "rm-tree: '$d/same.csv' is named for two outputs" ]
  run -0 --separate-stderr rm-tree --exec --log /dev/stdout -- true
  [ "${lines[0]}" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope" ]
  ln -s "$d/nowhere" "$d/link.csv"
  run -1 --separate-stderr rm-tree --exec --log "$d/link.csv" -- true
  [ "$stderr" = "rm-tree: cannot open the exit log '$d/link.csv': a symbolic link, not followed" ]
  [ ! -e "$d/nowhere" ]
}
