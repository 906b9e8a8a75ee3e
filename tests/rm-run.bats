#!/usr/bin/env bats
# rm-run: the command's exit status, signals passed to its whole group,
# and the summary (rm-summarize's) where it was asked for; and rm-run as a
# drop-in for memwatch's users (the second half).

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  cd "$BATS_TEST_TMPDIR" || return 1
}

teardown() {
  local p
  for p in "${HOGS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
}

@test "--help prints the usage and exits 0; usage errors exit 2" {
  run -0 rm-run --help
  [[ "${lines[0]}" == "usage: rm-run [-i SEC] [--json]"* ]]
  run -2 --separate-stderr rm-run
  [ "${stderr_lines[0]}" = "rm-run: no command to run" ]
  run -2 --separate-stderr rm-run -i 0 -- true
  [ "${stderr_lines[0]}" = "rm-run: invalid interval '0': seconds from 0.001 to 86400 (or with a unit: 200ms, 1.5s, 2m, 1h)" ]
  run -2 --separate-stderr rm-run --bogus -- true
  [ "${stderr_lines[0]}" = "rm-run: unknown option '--bogus'" ]
  run -2 --separate-stderr rm-run --csv
  [ "${stderr_lines[0]}" = "rm-run: option '--csv' needs a value" ]
}

@test "a bad ERE is a usage error before the command starts" {
  run -2 --separate-stderr rm-run --include 'a(' -- touch "$BATS_TEST_TMPDIR/ran"
  [[ "${stderr_lines[0]}" == "rm-run: invalid --include 'a(': "* ]]
  [[ "${stderr_lines[1]}" == "usage: rm-run "* ]]
  run -2 --separate-stderr rm-run --exclude '[z-a]' -- touch "$BATS_TEST_TMPDIR/ran"
  [[ "${stderr_lines[0]}" == "rm-run: invalid --exclude '[z-a]': "* ]]
  [ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "rm-run validates no option in shell: each usage error is rm-tree's or rm-summarize's own (--check), in its words under rm-run's name" {
  local opt what want
  while IFS='|' read -r what opt; do
    # The binary's own first line of the error, with its name swapped.
    read -ra args <<<"$opt"
    if [[ "$what" == tree ]]; then
      run -2 --separate-stderr rm-tree --check --exec "${args[@]}" -- true
      want="rm-run: ${stderr_lines[0]#rm-tree: }"
    else
      run -2 --separate-stderr rm-summarize --check "${args[@]}"
      want="rm-run: ${stderr_lines[0]#rm-summarize: }"
    fi
    run -2 --separate-stderr rm-run "${args[@]}" -- touch "$BATS_TEST_TMPDIR/ran"
    echo "# $opt: $want / ${stderr_lines[0]}"
    [ "${stderr_lines[0]}" = "$want" ]
    [[ "${stderr_lines[1]}" == "usage: rm-run "* ]]
  done <<'OPTS'
tree|-i 0
tree|-i 10x
tree|-i 90000
tree|--memory-max 12q
summary|--include a(
summary|--exclude [z-a]
summary|--top 0
summary|--top many
summary|--fail-on oom,bogus
OPTS
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

@test "a job that ends before a second tick: one tick, one process, and a word on what the sampled total is worth" {
  # -i 60s: the first tick is the only one, however loaded the machine.
  run -0 --separate-stderr rm-run -i 60s -- true
  echo "$stderr"
  [[ "$stderr" == *", 1 process"$'\n'* ]]
  # Its one tick, unless the job ended before even that.
  [[ "$stderr" == *$'\nTimeline: 1 tick, peak tree total '* || "$stderr" != *Timeline:* ]]
  [[ "$stderr" == *$'\n  (the job ended before a second tick, so the sampled total says little: a shorter -i samples sooner; the exact largest process above does not depend on it)\n'* ]]
  [[ "$stderr" != *" 1 ticks"* && "$stderr" != *" 1 processes"* ]]
  # Two ticks or more: no such word.
  run -0 --separate-stderr rm-run -i 0.05 -- sleep 1
  [[ "$stderr" =~ Timeline:\ [0-9]+\ ticks, ]]
  [[ "$stderr" != *"before a second tick"* ]]
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

@test "a daemon left by CMD (setsid) is listed, not waited for" {
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

@test "a daemon still running is never named with the exact figure of the processes that ended; its sampled peak is said beside it" {
  run -0 --separate-stderr rm-run -- true
  [[ "$stderr" == *"Process data: exact mode"* ]] || skip "exact mode is not available here"
  local d="$BATS_TEST_TMPDIR" pid line named mib dmib
  # CMD ends once the daemon holds its 30 MiB and a few ticks have seen it.
  daemon_run() {
    rm-run -i 0.1 "$@" -- sh -c 'setsid "$0" -m 30 -t 120 </dev/null >/dev/null 2>&1 &
      p=$!; n=0
      until [ "$(awk "/^VmRSS/ { print \$2 }" /proc/$p/status 2>/dev/null || echo 0)" -ge 30000 ]; do
        n=$((n + 1)); [ $n -lt 1200 ] || exit 9; sleep 0.05
      done
      sleep 1' "$MEMHOG"
  }
  daemon_run --json -o "$d/run.json"
  pid=$(jq -r '.processes.top[] | select(.exit == null and .end_s == null) | .pid' "$d/run.json" | head -1)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  [ -n "$pid" ]
  # The JSON names the largest process that ended, with its own figure.
  jq -e --argjson pid "$pid" '.job as $j | $j.max_proc_pid != $pid and
    $j.max_proc_rss_kib == (.processes.top[] | select(.pid == $j.max_proc_pid) | .peak_rss_kib)' "$d/run.json"
  daemon_run -o "$d/sum"
  pid=$(orphan_pid "$d/sum")
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  cat "$d/sum"
  [ -n "$pid" ]
  # The text likewise, and says the daemon's sampled peak beside it.
  line=$(grep '^  largest single process (exact)' "$d/sum")
  echo "$line"
  named=$(sed -n 's/^  largest single process (exact) *[0-9.]* MiB ([a-z]*, PID \([0-9]*\)).*/\1/p' <<<"$line")
  mib=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB.*/\1/p' <<<"$line")
  [ -n "$named" ] && [ "$named" != "$pid" ]
  grep -Eq "^ +$named +$mib " "$d/sum"
  dmib=$(sed -n "s/^ *$pid *\([0-9.]*\) .*/\1/p" "$d/sum")
  [[ "$line" == *"; memhog PID $pid, still running after CMD ended, was sampled at $dmib MiB" ]]
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

@test "CMD gets rm-run's stdin, as under time(1)" {
  run -0 --separate-stderr rm-run --quiet -- cat <<< "hi"
  [ "$output" = "hi" ]
}

@test "CMD gets the resource limits rm-run was started with" {
  local hard
  hard=$(ulimit -Hn)
  [[ "$hard" == unlimited || "$hard" -gt 1024 ]] || skip "hard NOFILE limit is $hard: nothing to raise"
  run -0 --separate-stderr bash -c 'ulimit -Sn 1000; rm-run --quiet -- sh -c "ulimit -Sn"'
  [ "$output" = "1000" ]
  run -0 --separate-stderr bash -c 'ulimit -Sn 1000; rm-tree --exec --log /dev/null -- sh -c "ulimit -Sn"'
  [ "$output" = "1000" ]
}

@test "-o FILE is written whole and renamed into place, never through a link" {
  local d="$BATS_TEST_TMPDIR"
  echo ORIGINAL > "$d/victim"
  # A hard link at the target: the old code truncated and wrote through it.
  ln "$d/victim" "$d/sum.txt"
  run -0 --separate-stderr rm-run -o "$d/sum.txt" -- true
  [ "$(cat "$d/victim")" = "ORIGINAL" ]
  grep -q "^Job: true" "$d/sum.txt"
  # A symlink at the target is refused, in the words every command uses,
  # before the command runs.
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
  # the command runs.
  run -2 --separate-stderr rm-run -o "$d/tl.csv" --timeline "$d/tl.csv" -- touch "$d/ran"
  [ "${stderr_lines[0]}" = "rm-run: '$d/tl.csv' is named for two outputs" ]
  [ ! -e "$d/tl.csv" ] && [ ! -e "$d/ran" ]
}

@test "rm-tree: two outputs on one path are refused; /dev/stdout is allowed; a symlink is named as one" {
  local d="$BATS_TEST_TMPDIR"
  run -2 --separate-stderr rm-tree --exec -i 0.05 --log "$d/same.csv" --timeline "$d/same.csv" -- true
  [ "$stderr" = "rm-tree: '$d/same.csv' is named for two outputs" ]
  run -0 --separate-stderr rm-tree --exec --log /dev/stdout -- true
  [ "${lines[0]}" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope,emulated,uid" ]
  ln -s "$d/nowhere" "$d/link.csv"
  run -1 --separate-stderr rm-tree --exec --log "$d/link.csv" -- true
  [ "$stderr" = "rm-tree: cannot open the exit log '$d/link.csv': a symbolic link, not followed" ]
  [ ! -e "$d/nowhere" ]
}

# As a drop-in for memwatch's users: the summary on a pipe, every process
# and timeline point in the JSON, ISO times, filter metadata, -i units,
# memwatch's column names, one row per process, output paths checked
# first, and figures that agree with each other.

# A job of 1 sh and N sleeps (and no other process).
sleeps() {
  local i
  for ((i = 0; i < $1; i++)); do
    printf 'sleep 0.3 & '
  done
  printf 'wait'
}

@test "-o - puts the summary alone on stdout, CMD's stdout on stderr; --json alone stays on stderr" {
  run -0 --separate-stderr rm-run --json -o - -- sh -c 'echo CMDOUT'
  [[ "$stderr" == *CMDOUT* ]]
  echo "$output" | jq -e '.job.exit == 0'
  [ ! -e ./- ]
  run -0 --separate-stderr rm-run -o - -- sh -c 'echo CMDOUT'
  [[ "${lines[0]}" == "Job: sh -c echo CMDOUT" ]]
  run -1 grep -x CMDOUT <<<"$output"
  # Like time(1): without -o the summary is on stderr, the output on stdout.
  run -0 --separate-stderr rm-run --json -- echo X
  [ "$output" = X ]
  echo "$stderr" | jq -e '.job.exit == 0'
  # The pipe of the man page.
  run -0 bash -c 'rm-run --json -o - -- sh -c "echo noise" 2>/dev/null | jq -r .job.exit'
  [ "$output" = 0 ]
}

# table_rows: the rows of the process table in a text summary on stdin.
table_rows() {
  grep -Ec '^ +[0-9]+ +([0-9.]+|-) +([0-9.]+|-) +([0-9.]+|-) +'
}

@test "--top N and --top all; the text keeps 10, the JSON lists every process" {
  rm-run -i 0.1 -o all.json --json -- sh -c "$(sleeps 13)"
  jq -e '.processes.count == 14 and (.processes.top | length) == 14' all.json
  run -0 --separate-stderr rm-run -o - -- sh -c "$(sleeps 13)"
  [ "$(table_rows <<<"$output")" -eq 10 ]
  [[ "$output" == *"... 4 more (--top N, --csv FILE)"* ]]
  run -0 --separate-stderr rm-run --top all -o - -- sh -c "$(sleeps 13)"
  [ "$(table_rows <<<"$output")" -eq 14 ]
  [[ "$output" != *"more (--top N"* ]]
  run -0 --separate-stderr rm-run --top 3 --json -o - -- sh -c "$(sleeps 5)"
  echo "$output" | jq -e '(.processes.top | length) == 3 and .processes.count == 6'
  run -2 --separate-stderr rm-run --top 0 -- touch ran
  [ "${stderr_lines[0]}" = "rm-run: invalid --top '0': a whole number from 1, or all" ]
  [ ! -e ran ]
}

@test "with --timeline the JSON carries every timeline point" {
  rm-run -i 0.1 --timeline tl.csv --json -o run.json -- "$MEMHOG" -m 8 -t 0.6
  rows=$(($(wc -l <tl.csv) - 1))
  [ "$rows" -ge 2 ]
  jq -e --argjson n "$rows" '.timeline.points | length == $n' run.json
  # The same numbers as the CSV's last row.
  last=$(tail -1 tl.csv)
  IFS=, read -r epoch iso el procs rss _ <<<"$last"
  jq -e --arg iso "$iso" --argjson p "$procs" --argjson r "${rss:-null}" --argjson e "$epoch" \
    '.timeline.points[-1] | .iso == $iso and .procs == $p and .rss_kib == $r and .epoch == $e' run.json
  [ "$el" != "" ]
}

@test "the job's start and end in ISO 8601 next to the epochs, in text and JSON" {
  rm-run --json -o run.json -- true
  jq -e '.job.start | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")' run.json
  jq -e '(.job.start_epoch | floor | todate | .[0:19]) == (.job.start | .[0:19])' run.json
  jq -e '(.job.end_epoch | floor | todate | .[0:19]) == (.job.end | .[0:19])' run.json
  run -0 --separate-stderr rm-run -o - -- true
  [[ "${lines[2]}" =~ ^\ \ started\ [0-9-]{10}T[0-9:.]{12}Z,\ ended\ [0-9-]{10}T[0-9:.]{12}Z\ \(epoch\ [0-9]+\.[0-9]{3}\ to\ [0-9]+\.[0-9]{3}\)$ ]]
}

@test "the filters' patterns, matched count and left-out peaks in text and JSON; the CSV stays plain" {
  rm-tree --exec -i 0.1 --log log.csv --job job.csv -- sh -c "$(sleeps 3)" 2>/dev/null
  rm-summarize --json --top all log.csv job.csv >all.json
  rm-summarize --json --include '^sleep$' --csv f.csv log.csv job.csv >f.json
  jq -e '.filter == null' all.json
  want=$(jq '[.processes.top[] | select(.comm != "sleep") | .peak_rss_kib] | add' all.json)
  jq -e --argjson w "$want" '.filter.include == "^sleep$" and .filter.exclude == null and
    .filter.matched_count == 3 and .filter.excluded_count == 1 and
    .filter.excluded_peak_rss_kib_sum == $w and .filter.warning == null' f.json
  # RFC 4180: the header, then one row per shown process, no comment line.
  [ "$(head -1 f.csv)" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd,emulated" ]
  [ "$(wc -l <f.csv)" -eq 4 ]
  run -1 grep -c '^#' f.csv
  [ "$(csv_cols f.csv)" = 12 ]
  # The text says it too, through rm-run.
  run -0 --separate-stderr rm-run --include sleep --exclude '^sh' -o - -- sh -c "$(sleeps 2)"
  [[ "$output" == *"  filters: --include 'sleep' --exclude '^sh'; 2 of 3 processes match; the 1 left out peaked at "*" MiB together"* ]]
}

@test "filters that match nothing: a warning with the names seen and what to try" {
  run -0 --separate-stderr rm-run --include zzz -- sh -c "$(sleeps 1)"
  [[ "$stderr" == *"  warning: no process matches --include 'zzz': the 2 processes are in the totals but none is listed."* ]]
  [[ "$stderr" == *"names seen: "*sleep* ]]
  [[ "$stderr" == *"Try --include with one of them."* ]]
  # With -o FILE the summary is in the file: a word on stderr too.
  run -0 --separate-stderr rm-run --include zzz -o sum.txt -- true
  [ "$stderr" = "rm-summarize: warning: no process matches the filters; 'sum.txt' says which names were seen" ]
  grep -q "^  warning: no process matches --include 'zzz'" sum.txt
  run -0 --separate-stderr rm-run --json --include zzz --exclude x -- true
  echo "$stderr" | jq -e '.filter.matched_count == 0 and (.filter.warning | test("no process matches --include .zzz. --exclude .x."))'
}

@test "-i takes units; a bare -i of 50 or more is taken as seconds, with a word on stderr" {
  run -0 --separate-stderr rm-run -i 200ms -o /dev/null -- true
  [ -z "$stderr" ] || [[ "$stderr" != *"taking -i"* ]]
  run -0 --separate-stderr rm-run -i 1.5s -o /dev/null -- true
  run -0 --separate-stderr rm-run -i 2m -o /dev/null -- true
  run -0 --separate-stderr rm-run -i 200 -o /dev/null -- true
  [ "${stderr_lines[0]}" = "rm-run: taking -i 200 as 200 s; did you mean 200ms?" ]
  # Said once, also when rm-out runs rm-run again with the timeline open.
  run -0 --separate-stderr rm-run -i 200 --timeline "$BATS_TEST_TMPDIR/tl.csv" -o /dev/null -- true
  [ "$(grep -c "taking -i" <<<"$stderr")" -eq 1 ]
  run -0 --separate-stderr rm-run -i 49 -o /dev/null -- true
  [[ "$stderr" != *"taking -i"* ]]
  run -2 --separate-stderr rm-run -i 10x -- true
  [ "${stderr_lines[0]}" = "rm-run: invalid interval '10x': seconds from 0.001 to 86400 (or with a unit: 200ms, 1.5s, 2m, 1h)" ]
  run -2 --separate-stderr rm-run -i 0.5ms -- true
}

# The awk line of rm-run(1) that follows "$1" (a header it prints), with
# the man page's \e as a backslash.
man_awk() {
  sed -n "/^awk -F, 'NR == 1 { print \"$1/,/' [a-z]*\\.csv\$/p" "$RM_TOP/docs/rm-run.1" | sed 's/\\e/\\/g'
}

@test "the awk lines of rm-run(1) turn our --csv and --timeline into memwatch's columns" {
  rm-run -i 0.1 --csv procs.csv --timeline timeline.csv -o /dev/null -- sh -c "$MEMHOG -m 8 -t 0.5 & wait"
  prog=$(man_awk pid,ppid,command)
  [ -n "$prog" ]
  run -0 bash -c "$prog"
  [ "${lines[0]}" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  [ "${#lines[@]}" -eq "$(wc -l <procs.csv)" ]
  IFS=, read -r pid ppid comm kib mibs first last <<<"${lines[1]}"
  [ "$pid" = "$(csv_get procs.csv pid)" ] && [ "$ppid" = "$(csv_get procs.csv ppid)" ]
  [ "$comm" = "$(csv_get procs.csv comm)" ] && [ "$kib" = "$(csv_get procs.csv peak_rss_kib)" ]
  [ "$first" = "$(csv_get procs.csv start_s)" ] && [ "$last" = "$(csv_get procs.csv end_s)" ]
  awk -v k="$kib" -v m="$mibs" 'BEGIN { d = k / 1024 - m; exit !(d < 0.06 && d > -0.06) }'
  prog=$(man_awk timestamp,elapsed)
  [ -n "$prog" ]
  run -0 bash -c "$prog"
  [ "${lines[0]}" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
  [ "${#lines[@]}" -eq "$(wc -l <timeline.csv)" ]
  IFS=, read -r ts el kib mibs n <<<"${lines[1]}"
  [ "$ts" = "$(csv_get timeline.csv iso)" ] && [ "$el" = "$(csv_get timeline.csv elapsed_s)" ]
  [ "$kib" = "$(csv_get timeline.csv rss_kib)" ] && [ "$n" = "$(csv_get timeline.csv procs)" ]
}

# rows_once FILE: the exit log has one row per pid.
rows_once() {
  [ -z "$(tail -n +2 "$1" | cut -d, -f1 | sort | uniq -d)" ]
}

# bats test_tags=slow
@test "one row per process, sampled and exact: zombies reaped by rm-tree, children reaped before their fork event" {
  local mode i
  for mode in 1 ''; do
    for i in 1 2 3 4 5 6 7 8; do
      RM_NO_EVENTS=$mode rm-tree --exec -i 0.1 --log log.csv --job job.csv -- \
        perl -e 'for (1..3) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.8)' 2>/dev/null
      rows_once log.csv
      [ "$(wc -l <log.csv)" -eq 5 ]
      [ "$(csv_get job.csv procs)" -eq 4 ]
    done
    for _ in $(seq 20); do
      RM_NO_EVENTS=$mode rm-tree --exec --log log.csv --job job.csv -- true 2>/dev/null
      [ "$(wc -l <log.csv)" -eq 2 ]
      [ "$(csv_get job.csv procs)" -eq 1 ]
    done
  done
  # The summary's count and list.
  run -0 --separate-stderr rm-run -i 0.1 --csv dup.csv -o - -- \
    perl -e 'for (1..3) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.8)'
  [[ "$output" == *"Processes: 4, "* ]]
  grep -Eq '^  true +3 ' <<<"$output"
  rows_once dup.csv
}

# bats test_tags=slow
@test "children met by a scan as zombies before their fork events were read are still listed, once" {
  # Busy loops of our own make the race (scan before events) likely.
  HOGS=()
  local mode _ n
  for _ in 1 2 3; do
    (while :; do :; done) &
    HOGS+=($!)
  done
  for mode in '' 1; do
    for _ in 1 2 3 4 5 6; do
      RM_NO_EVENTS=$mode rm-tree --exec -i 0.05 --log log.csv --job job.csv -- \
        perl -e 'for (1..20) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.3)' 2>/dev/null
      n=$(($(wc -l <log.csv) - 1))
      echo "mode '$mode': $n rows, procs $(csv_get job.csv procs)"
      rows_once log.csv
      [ "$n" -eq 21 ]
      [ "$(csv_get job.csv procs)" -eq 21 ]
    done
  done
}

@test "every output path is checked before CMD starts: exit 1, the path named, nothing run" {
  run -1 --separate-stderr rm-run --csv /nonexistent/x.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --csv '/nonexistent/x.csv': no directory '/nonexistent'; nothing was run" ]
  run -1 --separate-stderr rm-run --timeline /proc/x.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --timeline '/proc/x.csv': cannot create a file in '/proc'; nothing was run" ]
  mkdir adir
  run -1 --separate-stderr rm-run -o adir -- touch ran
  [ "$stderr" = "rm-run: cannot write -o 'adir': a directory; nothing was run" ]
  ln -s nowhere link.csv
  run -1 --separate-stderr rm-run --csv link.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --csv 'link.csv': a symbolic link, not followed; nothing was run" ]
  [ ! -e ran ] && [ ! -e nowhere ] && [ ! -e /proc/x.csv ]
  # A good path is left as it was: no file made by the check.
  run -0 --separate-stderr rm-run --csv new.csv -o - -- true
  [ "$(head -1 new.csv)" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd,emulated" ]
}

@test "an output that fails later is reported, the summary kept, and the status says so" {
  [ -w /dev/full ] || skip "no /dev/full"
  run -1 --separate-stderr rm-run --csv /dev/full -- echo ran
  [ "$output" = ran ]
  [[ "$stderr" == *"rm-summarize: cannot write '/dev/full': No space left on device"* ]]
  [[ "$stderr" == *"Job: echo ran"* ]]
  [[ "$stderr" == *"rm-run: an output could not be written (said above)"* ]]
  # The command's own failure is the status, as before.
  run -3 --separate-stderr rm-run --csv /dev/full -- sh -c 'exit 3'
  [[ "$stderr" == *"Job: sh -c exit 3"* ]]
  # The timeline streams while CMD runs: its failure too.
  run -1 --separate-stderr rm-run --timeline /dev/full -- echo ran
  [[ "$stderr" == *"rm-tree: cannot write the timeline: No space left on device"* ]]
  [[ "$stderr" == *"Job: echo ran"* ]]
}

@test "the exact largest process and its row agree (exact mode)" {
  run -0 --separate-stderr rm-run -- true
  [[ "$stderr" == *"Process data: exact mode"* ]] || skip "exact mode is not available here"
  local _
  for _ in 1 2 3; do
    rm-run --json -o run.json -- true
    jq -e '.job as $j | $j.max_proc_pid != null and
      $j.max_proc_rss_kib == (.processes.top[] | select(.pid == $j.max_proc_pid) | .peak_rss_kib)' run.json
    rm-run --json -o run.json -- sh -c "$MEMHOG -m 24 -t 0.2; true"
    jq -e '.job.max_proc_rss_kib == .processes.top[0].peak_rss_kib and .job.max_proc_pid == .processes.top[0].pid' run.json
  done
  run -0 --separate-stderr rm-run -o - -- "$MEMHOG" -m 16 -t 0.2
  pid=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB (memhog, PID \([0-9]*\))$/\2/p' <<<"$output")
  mib=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB (memhog, PID [0-9]*)$/\1/p' <<<"$output")
  [ -n "$pid" ] && [ -n "$mib" ]
  grep -Eq "^ +$pid +$mib " <<<"$output"
}

@test "sampled mode: a largest-process figure no row carries says so, beside the largest row" {
  local _
  for _ in 1 2 3; do
    run -0 --separate-stderr env RM_NO_EVENTS=1 rm-run -o - -- sh -c "$MEMHOG -m 24 -t 0.2; true"
    line=$(grep '^  largest single process (exact)' <<<"$output")
    if [[ "$line" =~ \(memhog,\ PID\ ([0-9]+)\)$ ]]; then
      mib=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB.*/\1/p' <<<"$line")
      grep -Eq "^ +${BASH_REMATCH[1]} +$mib " <<<"$output"
    else
      [[ "$line" =~ ^\ \ largest\ single\ process\ \(exact\)\ +[0-9.]+\ MiB\ \(the\ kernel\'s\ maxrss\ over\ the\ tree,\ which\ names\ no\ process\;\ the\ largest\ row,\ [a-z]+\ PID\ [0-9]+,\ was\ sampled\ at\ [0-9.]+\ MiB\)$ ]]
    fi
  done
}

@test "--cgroup: one line says where the sampled total and the exact cgroup peak part ways" {
  run --separate-stderr rm-run --cgroup --json -i 0.1 -o run.json -- \
    sh -c "for i in 1 2 3 4; do $MEMHOG -m 4 -t 1.2 & done; wait"
  if ((status == 125)) || [[ "$stderr" == *"no memory cgroup"* ]]; then
    skip "this kernel does not let us create a memory cgroup"
  fi
  [ "$status" -eq 0 ]
  # Four processes map the same libc and memhog: the sampled sum counts
  # those pages four times, the cgroup once (or not at all when they were
  # cached before the job).
  jq -e '.job.cgroup_gap.peak_file_kib > 0 and .job.cgroup_gap.cgroup_anon_kib > 0 and
    .job.cgroup_gap.cgroup_file_kib >= 0 and .job.cgroup_gap.cgroup_kernel_kib >= 0' run.json
  jq -e '.job.cgroup_gap.text | test("^sampled minus exact [+-][0-9.]+ MiB: at the sampled peak the total had [0-9.]+ MiB anonymous \\+ [0-9.]+ MiB file-backed")' run.json
  run -0 --separate-stderr rm-run --cgroup -i 0.1 -o - -- sh -c "for i in 1 2 3 4; do $MEMHOG -m 4 -t 1.2 & done; wait"
  [ "$(grep -c '^  sampled minus exact ' <<<"$output")" -eq 1 ]
}

@test "rm-tree's exit 125 (no cgroup for --memory-max): one reason on stderr, not two" {
  mkdir bin
  cp "$RM_TOP/bin/rm-run" "$RM_TOP/bin/wrapper-lib.sh" bin/
  ln -s "$RM_TOP/bin/rm-summarize" bin/rm-summarize
  printf '#!/bin/sh\necho "rm-tree: --memory-max: cannot make a memory cgroup: stub" >&2\nexit 125\n' >bin/rm-tree
  chmod +x bin/rm-tree
  run -125 --separate-stderr bin/rm-run --memory-max 1G -- touch ran
  [ "$stderr" = "rm-tree: --memory-max: cannot make a memory cgroup: stub" ]
}

@test "--fail-on: a condition that holds exits 3 when CMD succeeded, CMD's own failure wins, a bad list stops before CMD runs" {
  local hog="$RM_BUILD/tests/memhog" mark="$BATS_TEST_TMPDIR/ran"
  run -3 --separate-stderr rm-run --quiet --fail-on peak=8M -- "$hog" -m 24 -t 0.3
  [[ "$stderr" == *"fail-on peak=8M: the largest process peaked at "*" MiB: memhog"* ]]
  run -0 --separate-stderr rm-run --quiet --fail-on peak=512M -- "$hog" -m 24 -t 0.3
  [[ "$stderr" != *fail-on* ]]
  run -7 --separate-stderr rm-run --quiet --fail-on peak=8M -- sh -c "'$hog' -m 24 -t 0.3; exit 7"
  [[ "$stderr" == *"fail-on peak=8M: "* ]]
  run -2 --separate-stderr rm-run --fail-on 'peak=lots' -- touch "$mark"
  [[ "$stderr" == *"invalid --fail-on 'peak=lots'"* ]]
  [ ! -e "$mark" ]
}
@test "an output path that is a FIFO with no reader is refused before CMD runs, never waited on" {
  local d="$BATS_TEST_TMPDIR/ff" opt
  mkdir -p "$d"
  for opt in --timeline -o --csv; do
    rm -f "$d/out"
    mkfifo "$d/out"
    run -1 --separate-stderr timeout -s KILL 60 rm-run "$opt" "$d/out" -- echo hello
    [ "$output" = "" ]
    [ "$stderr" = "rm-run: cannot write $opt '$d/out': a FIFO with no reader; nothing was run" ]
  done
}

@test "--memory-max takes exactly the sizes rm-tree takes, and says so under rm-run's name" {
  local s
  [[ $EUID -eq 0 ]] || skip_needs_root "a --memory-max run needs a memory cgroup"
  for s in 0x40000000 1e9 1.G 512M; do
    run -0 --separate-stderr rm-run --quiet --memory-max "$s" -- true
  done
  for s in 0 99999999999999999999G 12Q; do
    run -2 --separate-stderr rm-run --memory-max "$s" -- true
    [ "${stderr_lines[0]}" = "rm-run: invalid --memory-max '$s': a size such as 512M or 8G" ]
    [[ "${stderr_lines[1]}" == "usage: rm-run "* ]]
  done
}

# bats test_tags=slow
@test "--memory-max: the OOM victim is the kernel log's record logged during the run, whatever its stamp; one logged before, stamped inside the run, is not the run's" {
  [[ $EUID -eq 0 ]] || skip_needs_root "a --memory-max run needs a memory cgroup, and a PID namespace"
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || [[ -w /sys/fs/cgroup/memory/cgroup.procs ]] ||
    skip "no writable memory cgroup controller"
  command -v unshare >/dev/null || skip "no unshare (util-linux)"
  # The kernel log's stamps are local_clock, not CLOCK_MONOTONIC: on a host
  # up for days they drift apart by seconds, so a stamp says nothing of
  # whether a record came before the run.  The fake log (RM_KMSG) holds, as
  # the run starts, a kill stamped 5 s from now (inside the run, were the
  # stamps compared with CLOCK_MONOTONIC) in the cgroup rm-tree will make:
  # rm-tree.PID, its PID small and unknown in a PID namespace of our own, so
  # one record for each PID up to 400.  The job then logs its own kill
  # stamped 0 (long before the run, by the same comparison) and is killed
  # for real at its 64 MiB budget: that one is the run's.
  local k="$BATS_TEST_TMPDIR/kmsg" now
  now=$("$PY" -c 'import time; print(int(time.monotonic() * 1e6) + 5000000)')
  # shellcheck disable=SC2016  # awk's own
  awk -v t="$now" 'BEGIN { for (p = 1; p <= 400; p++)
    printf "6,%d,%d,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/rm-tree.%d,task_memcg=/rm-tree.%d,task=before,pid=41,uid=0\n", p, t, p, p }' >"$k"
  # shellcheck disable=SC2016  # the job's shell expands them
  RM_KMSG="$k" run -137 --separate-stderr unshare --fork --pid --mount-proc \
    "$RM_TOP/bin/rm-run" --json -o "$BATS_TEST_TMPDIR/s.json" --memory-max 64M -- sh -c '
    printf "6,401,0,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/rm-tree.%d,task_memcg=/rm-tree.%d,task=during,pid=4242,uid=0\n" "$PPID" "$PPID" >>"$1"
    exec "$2" -m 200 -t 1' _ "$k" "$MEMHOG"
  run -0 jq -r '.job | "\(.oom_kills) \(.oom_victim)"' "$BATS_TEST_TMPDIR/s.json"
  [ "$output" = "1 during (PID 4242)" ]
}

@test "--timeline is opened once (rm-out --open) and read back through that descriptor: a name swapped during the run for a symlink to another file is never read as the timeline, and CMD does not hold it" {
  local d="$BATS_TEST_TMPDIR/tls"
  mkdir -p "$d"
  printf 'root:SECRET-LINE:19000::\n' >"$d/secret"
  # CMD stands for the directory's owner: once a tick is written it lists its
  # descriptors, moves the timeline away and puts a symlink in its place.
  # shellcheck disable=SC2016  # CMD's shell expands them
  run -0 --separate-stderr rm-run -i 0.1 --timeline "$d/tl.csv" -- sh -c '
    while [ "$(wc -l <"$1/tl.csv")" -lt 2 ]; do sleep 0.1; done
    ls -l /proc/$$/fd/ >"$1/fds"
    mv "$1/tl.csv" "$1/tl.moved" && ln -s "$1/secret" "$1/tl.csv"' _ "$d"
  [[ "$stderr" != *SECRET* ]]
  # The summary read the file rm-tree wrote, under its descriptor.
  [[ "$stderr" == *$'\nTimeline: '*' tick'*', peak tree total '* ]]  # "1 tick" or "N ticks"
  [ "$(head -n 1 "$d/tl.moved")" = "epoch,iso,elapsed_s,procs,rss_kib,cpu_pct" ]
  [ "$(cat "$d/secret")" = "root:SECRET-LINE:19000::" ]
  run -1 grep -E 'tl\.(csv|moved)' "$d/fds"
  # rm-out --open alone: the file on fd 3 for CMD, emptied; a symlink refused.
  printf 'old old old\n' >"$d/o.txt"
  run -0 rm-out --open "$d/o.txt" -- sh -c 'echo new >&3'
  [ "$(cat "$d/o.txt")" = new ]
  run -1 --separate-stderr rm-out --open "$d/tl.csv" -- sh -c 'echo ran'
  [ "$stderr" = "rm-out: cannot write '$d/tl.csv': a symbolic link, not followed" ]
  [ -z "$output" ]
}
