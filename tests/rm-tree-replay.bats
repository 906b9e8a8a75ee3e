#!/usr/bin/env bats
# rm-tree's event recordings (src/rm-tree/replay.c): a session's proc
# connector and taskstats datagrams recorded (RM_EV_RECORD) and read back
# instead of the kernel's (RM_EV_REPLAY), so that a recorded build drives
# the process table the same way on any machine, as any user.  The
# fixture tests/fixtures/replay/ (tests/tools/replay-record.sh wrote it)
# holds a build's recording, the rows its live run wrote and the rows its
# replay writes: a change to how events become rows shows here first.

setup() {
  load test_helper/common
  NOBODY_DIR=
  FIX="$RM_TOP/tests/fixtures/replay"
  EMPTY="$BATS_TEST_TMPDIR/noproc"
  mkdir -p "$EMPTY"
}

teardown() {
  if [[ -n "$NOBODY_DIR" ]]; then
    rm -rf "$NOBODY_DIR"
  fi
}

# replay REC SELF OUT: the rows of recording REC (of rm-tree SELF) into
# OUT, with no /proc to read (every process is gone).
replay() {
  RM_PROC_ROOT="$EMPTY" RM_EV_REPLAY="$1" rm-tree -i 0.01 --log "$3" "$2"
}

# agree LIVE REPLAY SELF: the replay's rows are the live run's on every
# column the kernel's records give.  Not the command line (read from
# /proc), start_s (a live row's is stat's, in whole clock ticks; a
# replay's, the fork event's), end_s within that tick (start plus the
# record's elapsed time where the exit event came after the record),
# peak_at_s (a sample's), nor the ppid of an orphan the live run adopted
# (/proc's parent then is rm-tree SELF; the fork event's is the one that
# forked it).
agree() {
  "$PY" - "$@" <<'EOF'
import csv, sys
live = {r["pid"]: r for r in csv.DictReader(open(sys.argv[1], newline=""))}
rep = {r["pid"]: r for r in csv.DictReader(open(sys.argv[2], newline=""))}
bad = []
if set(live) != set(rep):
    bad.append("rows of pids %s in one only" % sorted(set(live) ^ set(rep)))
same = ("comm peak_rss_kib cpu_s exit read_kib write_kib majflt cpu_delay_ms io_delay_ms "
        "swapin_delay_ms reclaim_delay_ms thrash_delay_ms source scope emulated uid").split()
for pid in sorted(set(live) & set(rep)):
    a, b = live[pid], rep[pid]
    for k in same:
        if a[k] != b[k]:
            bad.append("%s %s: %s live %r, replayed %r" % (pid, a["comm"], k, a[k], b[k]))
    if a["ppid"] != b["ppid"] and a["ppid"] != sys.argv[3]:
        bad.append("%s %s: ppid live %s, replayed %s" % (pid, a["comm"], a["ppid"], b["ppid"]))
    if abs(float(a["end_s"]) - float(b["end_s"])) > 0.011:
        bad.append("%s %s: end_s live %s, replayed %s" % (pid, a["comm"], a["end_s"], b["end_s"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
}

@test "replay: the fixture build's rows come back byte for byte, as any user, twice the same" {
  local d="$BATS_TEST_TMPDIR"
  run -0 --separate-stderr replay "$FIX/build.rec" "$(cat "$FIX/self")" "$d/a.csv"
  [ -z "$stderr" ]
  diff "$FIX/replay.csv" "$d/a.csv"
  # Not root: nothing of a replay needs a privilege (an empty /proc
  # nobody can read: the test's directory is root's alone).
  NOBODY_DIR=$(mktemp -d /tmp/rm-replay.XXXXXX)
  chmod 755 "$NOBODY_DIR"
  run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups env RM_PROC_ROOT="$NOBODY_DIR" \
    RM_EV_REPLAY="$FIX/build.rec" "$RM_TOP/bin/rm-tree" -i 0.01 "$(cat "$FIX/self")"
  [ "$output" = "$(cat "$FIX/replay.csv")" ]
  # 26 processes, each row from its exit record.
  [ "$(grep -c ',exact,in,' "$d/a.csv")" -eq 26 ]
}

@test "replay: the fixture's replayed rows are its live run's on every column the kernel's records give" {
  run -0 agree "$FIX/live.csv" "$FIX/replay.csv" "$(cat "$FIX/self")"
  # The checks see a difference: a peak changed in a copy.
  sed '2s/,exact,/,sampled,/' "$FIX/replay.csv" >"$BATS_TEST_TMPDIR/bad.csv"
  run -1 agree "$FIX/live.csv" "$BATS_TEST_TMPDIR/bad.csv" "$(cat "$FIX/self")"
  [[ "$output" == *"source live 'exact', replayed 'sampled'"* ]]
}

@test "replay: a build recorded now replays to the rows its live run wrote (exact mode)" {
  local d="$BATS_TEST_TMPDIR" err self
  err=$(rm-tree --exec --log /dev/null -- true 2>&1 >/dev/null)
  [[ "$err" == "rm-tree: exact mode (proc connector, taskstats)" ]] || skip "no exact mode here: $err"
  RM_EV_RECORD="$d/rec" run -0 --separate-stderr rm-tree --exec -i 0.1 --log "$d/live.csv" -- \
    sh -c '"$0" -N 20 -j 4 -m 2 -t 0.02; "$0" -c 4,8 -t 0.1; (exit 7) & wait' "$RM_BUILD/tests/memhog"
  # The recorded rm-tree: the parent of the one row whose parent has none.
  self=$("$PY" -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1])))
pids = {r["pid"] for r in rows}
print(next(r["ppid"] for r in rows if r["ppid"] not in pids))' "$d/live.csv")
  # sh, memhog and its 20, memhog and its 2, the subshell: 26 rows.
  [ "$(wc -l <"$d/live.csv")" -eq 27 ]
  run -0 replay "$d/rec" "$self" "$d/replay.csv"
  run -0 agree "$d/live.csv" "$d/replay.csv" "$self"
}

@test "replay: a recording cut short replays what it holds; a file that is none, too big, missing, or another rm-tree's PID, is refused" {
  local d="$BATS_TEST_TMPDIR" self size
  self=$(cat "$FIX/self")
  size=$(stat -c %s "$FIX/build.rec")
  head -c $((size / 2)) "$FIX/build.rec" >"$d/cut.rec"
  run -0 --separate-stderr replay "$d/cut.rec" "$self" "$d/cut.csv"
  # Fewer rows, each a whole one of the full replay's (or its survivor).
  [ "$(wc -l <"$d/cut.csv")" -gt 2 ]
  [ "$(wc -l <"$d/cut.csv")" -lt "$(wc -l <"$FIX/replay.csv")" ]
  run -0 awk -F, 'NR > 1 && $19 == "exact"' "$d/cut.csv"
  while IFS= read -r line; do
    grep -qxF -- "$line" "$FIX/replay.csv"
  done <<<"$output"
  printf 'pid,ppid\n' >"$d/none.rec"
  run -1 --separate-stderr replay "$d/none.rec" "$self" "$d/x.csv"
  [ "$stderr" = "rm-tree: RM_EV_REPLAY: '$d/none.rec' is not an rm-tree event recording" ]
  run -1 --separate-stderr replay "$FIX/build.rec" 1 "$d/x.csv"
  [ "$stderr" = "rm-tree: RM_EV_REPLAY: give the recorded rm-tree's PID, $self, alone" ]
  run -1 --separate-stderr replay "$d/missing.rec" "$self" "$d/x.csv"
  [ "$stderr" = "rm-tree: RM_EV_REPLAY: cannot read '$d/missing.rec': No such file or directory" ]
  # A read is bounded: 16 MiB at most.
  truncate -s 17M "$d/big.rec"
  run -1 --separate-stderr replay "$d/big.rec" "$self" "$d/x.csv"
  [ "$stderr" = "rm-tree: RM_EV_REPLAY: cannot read '$d/big.rec': File too large" ]
}
