#!/usr/bin/env bats
# Process events (lib/procev, lib/pcount): rm-sample's host-wide
# compilers column kept from proc connector events, checked against ps
# as processes start, are renamed, fork and stop; the fallback to one
# /proc scan per row; and events the kernel drops when a socket buffer
# is full (ENOBUFS: the hidden test knob RM_EV_RCVBUF shrinks the
# buffer), counted, resynchronised by a scan and reported, in rm-sample
# and in rm-tree.  RM_PCOUNT_STATS=1 makes rm-sample say on stderr at
# the end where its counts came from.
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # inner shells' $1 single-quoted; bats sets stderr; each test adds to its own PIDS

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  # A name no other process on this host has: the count is ours alone.
  NAME="pc$$${RANDOM}"
  NAME=${NAME:0:15}
  D=$(mktemp -d)
  chmod 755 "$D"
  cp /bin/sleep "$D/$NAME"
  PIDS=()
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  if [[ -n "${SAMPLER:-}" ]]; then
    kill "$SAMPLER" 2>/dev/null || true
    wait "$SAMPLER" 2>/dev/null || true
  fi
  rm -rf "$D"
}

# by_ps: how many live processes ps names NAME.
by_ps() {
  ps -e -o stat=,comm= | awk -v n="$NAME" '$2 == n && $1 !~ /^Z/' | wc -l
}

# last_stage: the stage column of the sampler's last row.
last_stage() {
  [[ -s "$D/out.csv" ]] && tail -n 1 "$D/out.csv" | awk -F, '{ print $13 }'
}

# rows_in STAGE: rows with that stage.
rows_in() {
  awk -F, -v s="$1" 'NR > 1 && $13 == s' "$D/out.csv" | wc -l
}

# Predicates for wait_for (evaluated on every poll).
ps_is() { [[ "$(by_ps)" -eq "$1" ]]; }
rows_at_least() { [[ "$(rows_in "$1")" -ge "$2" ]]; }
last_stage_is() { [[ "$(last_stage)" == "$1" ]]; }

# phase N: wait until ps sees N, then mark
# the stage; the rows of a phase are checked later.  Before any change a
# test calls settle, so no row of the old phase sees the change.
phase() {
  local want=$1
  wait_for 20 ps_is "$want"
  sleep 0.3
  printf '%s\n' "p$want" > "$D/stage"
  wait_for 30 rows_at_least "p$want" 4
}

settle() {
  printf 'between\n' > "$D/stage"
  wait_for 30 last_stage_is between
}

# check_phase WANT: every row of the phase but its first (whose count may
# predate the mark) says WANT.
check_phase() {
  awk -F, -v s="p$1" 'NR > 1 && $13 == s' "$D/out.csv" | tail -n +2 | awk -F, -v w="$1" '
    { n++; if ($12 != w) { print "phase " w ": row says " $12; bad = 1 } }
    END { if (n < 2) { print "phase " w ": " n " rows"; bad = 1 } exit bad }'
}

# check_phases: every phase of run_phases, in its order: 3 started, one
# killed, a renamed shell and its subshell, all stopped.
check_phases() {
  check_phase 3
  check_phase 2
  check_phase 4
  check_phase 0
}

# start_sampler [ENV...]: rm-sample -i 0.2 counting NAME, the stage from a file.
start_sampler() {
  : > "$D/stage"
  env "$@" RM_PCOUNT_STATS=1 rm-sample -i 0.2 --compilers "$NAME" --stage-file "$D/stage" \
    -o "$D/out.csv" 2>"$D/err" &
  SAMPLER=$!
  wait_for 20 test -s "$D/out.csv"
}

stop_sampler() {
  kill "$SAMPLER"
  wait "$SAMPLER" || true
  SAMPLER=
}

# The phases: 3 started (exec), one killed (exit), a shell renamed to
# NAME (comm) whose subshell keeps the name (fork without exec), the
# rename undone by exec, everything stopped.
run_phases() {
  local sh
  "$D/$NAME" 60 & PIDS+=($!)
  "$D/$NAME" 60 & PIDS+=($!)
  "$D/$NAME" 60 & PIDS+=($!)
  phase 3
  settle
  kill "${PIDS[0]}"
  phase 2
  settle
  # Both wait on a FIFO no one writes to: no more forks.
  mkfifo "$D/fifo"
  bash -c 'printf %s "$1" > /proc/$$/comm; (read -r _ <&3) & read -r _ <&3' sh "$NAME" 3<>"$D/fifo" &
  sh=$!
  PIDS+=("$sh")
  phase 4
  settle
  pkill -P "$sh" 2>/dev/null || true
  kill "$sh" "${PIDS[1]}" "${PIDS[2]}"
  phase 0
}

@test "rm-sample: the compilers column from events agrees with ps through exec, exit, comm and fork" {
  start_sampler
  run_phases
  stop_sampler
  cat "$D/err"
  check_phases
  # from events: one scan (the first), no events lost
  grep -q "^rm-sample: compilers from events: [0-9]* events, [0-9]* comm reads, 1 scans$" "$D/err"
  run ! grep -q dropped "$D/err"
}

@test "rm-sample as nobody: the compilers column from events where the kernel allows it (Linux 6.6)" {
  local want=scans
  # Since 6.6 a kernel may let any user listen to the proc connector;
  # before, only CAP_NET_ADMIN.  Asked of the kernel, not of its version
  # (6.18 kernels that refuse are seen): a bind to the connector's group.
  if connector_for_users; then
    want=events
  fi
  chmod 777 "$D"
  : > "$D/stage"
  chmod 666 "$D/stage"
  setpriv --reuid=nobody --regid=nogroup --clear-groups env RM_PCOUNT_STATS=1 \
    "$RM_TOP/bin/rm-sample" -i 0.2 --compilers "$NAME" --stage-file "$D/stage" \
    -o "$D/out.csv" 2>"$D/err" &
  SAMPLER=$!
  wait_for 20 test -s "$D/out.csv"
  run_phases
  stop_sampler
  cat "$D/err"
  check_phases
  grep -q "^rm-sample: compilers from $want: " "$D/err"
}

@test "rm-sample: with RM_NO_EVENTS=1 the compilers column comes from a scan per row, same counts" {
  start_sampler RM_NO_EVENTS=1
  run_phases
  stop_sampler
  cat "$D/err"
  check_phases
  grep -q "^rm-sample: compilers from scans: 0 events, 0 comm reads, [0-9]* scans$" "$D/err"
}

@test "rm-sample: one row (no -i) still scans, and a fixture proc root is never mixed with events" {
  "$D/$NAME" 60 & PIDS+=($!)
  wait_for 20 ps_is 1
  run -0 --separate-stderr env RM_PCOUNT_STATS=1 rm-sample --compilers "$NAME"
  [ "$(sed -n 2p <<<"$output" | cut -d, -f12)" = 1 ]
  [[ "$stderr" == "rm-sample: compilers from scans: 0 events, 0 comm reads, 1 scans" ]]
}

# bats test_tags=slow
@test "rm-sample: events dropped by a full socket buffer are counted, rescanned and reported" {
  "$D/$NAME" 120 & PIDS+=($!)
  "$D/$NAME" 120 & PIDS+=($!)
  wait_for 20 ps_is 2
  : > "$D/stage"
  # The smallest buffer the kernel gives; 1 s between drains.
  RM_EV_RCVBUF=1 RM_PCOUNT_STATS=1 rm-sample -i 1 --compilers "$NAME" --stage-file "$D/stage" \
    -o "$D/out.csv" --status "$D/status" 2>"$D/err" &
  SAMPLER=$!
  wait_for 20 test -s "$D/out.csv"
  # A fork storm: 400 processes between two rows.
  "$MEMHOG" -N 400 -j 50 -t 0
  printf 'after\n' > "$D/stage"
  wait_for 30 rows_at_least after 3
  stop_sampler
  cat "$D/err"
  grep -Eq "^rm-sample: [1-9][0-9]* times the kernel dropped process events \(socket buffer full\); each was followed by a /proc scan$" "$D/err"
  # more than the first scan
  grep -Eq "^rm-sample: compilers from events: .* ([2-9]|[1-9][0-9]+) scans$" "$D/err"
  # the count after the storm is right
  [ "$(awk -F, '$13 == "after"' "$D/out.csv" | tail -n 1 | cut -d, -f12)" = 2 ]
  # the status file has the count stderr said, and the summary reads it there
  local n
  n=$(sed -n 's/^rm-sample: \([0-9]*\) times the kernel dropped.*/\1/p' "$D/err")
  grep -qx "events_dropped=$n" "$D/status"
  run -0 --separate-stderr rm-summarize --sampler-status "$D/status" "$D/out.csv"
  [[ "$output" == *"Process events: the kernel dropped process events $n times before rm-sample read them (socket buffer full): its compilers column was recounted from /proc after each"* ]]
}

# bats test_tags=slow
@test "rm-tree: events dropped by a full socket buffer are counted, resynchronised and reported" {
  local err
  err=$(rm-tree --exec --log /dev/null -- true 2>&1 >/dev/null)
  [[ "$err" == "rm-tree: exact mode (proc connector, taskstats)" ]] || skip "no exact mode here: $err"
  RM_EV_RCVBUF=1 run -0 --separate-stderr rm-tree --exec -i 1 --log "$D/log.csv" \
    --stats "$D/stats.csv" -- sh -c '"$1" -N 400 -j 50 -t 0 && sleep 1.5' sh "$MEMHOG"
  echo "$stderr"
  cat "$D/stats.csv"
  [ "$(head -n 1 "$D/stats.csv")" = "mode,events_lost,resyncs,delayacct,taskstats_error,pid_ns,cgroup_ns,cgroup" ]
  run awk -F, 'NR == 2 && $1 == "exact" && $2 > 0 && $3 > 0' "$D/stats.csv"
  [ -n "$output" ]
  [[ "$stderr" == *"rm-tree: "*" times the kernel dropped events (socket buffer full); each was followed by a /proc scan"* ]]
  # the command's own row is still there
  [ "$(awk -F, '$3 == "sh"' "$D/log.csv" | wc -l)" -ge 1 ]
}

@test "rm-tree: children a watched process starts after seconds of quiet have rows and command lines" {
  local err pid
  err=$(rm-tree --exec --log /dev/null -- true 2>&1 >/dev/null)
  [[ "$err" == "rm-tree: exact mode (proc connector, taskstats)" ]] || skip "no exact mode here: $err"
  # Quiet first (the host's other events then no longer wake rm-tree),
  # then 20 children of 0.05 s, each with its own argument, 0.3 s apart.
  sh -c 'sleep 3; i=0; while [ $i -lt 20 ]; do i=$((i + 1)); "$0" -n quietkid -t 0.05 -- "arg$i"; sleep 0.3; done' \
    "$MEMHOG" &
  pid=$!
  PIDS+=("$pid")
  rm-tree -i 1 --log "$D/log.csv" "$pid" 2>/dev/null
  "$PY" - "$D/log.csv" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["comm"] == "quietkid"]
cmds = sorted((r["cmd"].split() or [""])[-1] for r in rows)
want = sorted("arg%d" % i for i in range(1, 21))
bad = [r for r in rows if r["source"] != "exact" or not r["peak_rss_kib"]]
if cmds != want or bad:
    print(len(rows), "rows:", cmds, bad)
    sys.exit(1)
PYEOF
}

# metrics_compilers PORT: rm_compilers from one scrape.
metrics_compilers() {
  curl -sf "http://127.0.0.1:$1/metrics" | awk '/^rm_compilers[{ ]/ { print $NF }'
}
compilers_are() { [[ "$(metrics_compilers "$1")" == "$2" ]]; }

# Serving without -i: before, every scrape read every /proc/PID/comm (the
# cost that made a scrape 4.6x node_exporter's); the server's poll now
# reads the events as they come.
@test "rm-sample --listen: rm_compilers from events read between scrapes, agreeing with ps" {
  local port
  RM_PCOUNT_STATS=1 rm-sample --listen 127.0.0.1:0 --min-age 0 --compilers "$NAME" \
    2>"$D/err" &
  SAMPLER=$!
  wait_for 30 grep -q 'listening on' "$D/err"
  port=$(sed -n 's/^rm-sample: listening on .*:\([0-9]*\)$/\1/p' "$D/err")
  [[ "$(metrics_compilers "$port")" == 0 ]]
  "$D/$NAME" 60 & PIDS+=($!)
  "$D/$NAME" 60 & PIDS+=($!)
  "$D/$NAME" 60 & PIDS+=($!)
  wait_for 20 ps_is 3
  wait_for 20 compilers_are "$port" 3
  kill "${PIDS[0]}"
  wait_for 20 ps_is 2
  wait_for 20 compilers_are "$port" 2
  kill "${PIDS[1]}" "${PIDS[2]}"
  wait_for 20 ps_is 0
  wait_for 20 compilers_are "$port" 0
  stop_sampler
  cat "$D/err"
  grep -q "^rm-sample: compilers from events: [0-9]* events, [0-9]* comm reads, 1 scans$" "$D/err"
}
