#!/usr/bin/env bats
# rm-tree in sampled mode (no taskstats: not CAP_NET_ADMIN) where the proc
# connector is still allowed (any user since Linux 6.6): membership of a
# tree selection from fork and exec events, so a tick reads the members'
# own /proc files instead of listing /proc; readings, rows and the mode
# line stay sampled.  RM_NO_EVENTS=1 keeps the old full sampling.  These
# tests run as root and drop to nobody with setpriv.

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  SAMPLED="rm-tree: sampled mode: taskstats needs CAP_NET_ADMIN"
  D=$(mktemp -d)
  chmod 777 "$D"
}

teardown() {
  resume_stopped
  if [[ -n "${SLEEPERS:-}" ]]; then
    kill -TERM -- "-$SLEEPERS" 2>/dev/null || true
  fi
  if [[ -n "${WATCHED:-}" ]]; then
    kill "$WATCHED" 2>/dev/null || true
  fi
  rm -rf "$D"
}

as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# need_nobody: these tests drop from root to nobody.
need_nobody() {
  [[ $EUID -eq 0 ]] || skip_needs_root "drops to nobody with setpriv"
}

# rows FILE: "comm peak-or-empty source" per row, sorted.
rows() {
  "$PY" -c 'import csv,sys
for r in sorted(csv.DictReader(open(sys.argv[1], newline="")), key=lambda r: r["comm"]):
    print(r["comm"], "peak" if r["peak_rss_kib"] else "-", r["source"], r["scope"])' "$1"
}

# getdents FILE: the getdents64 calls in strace -c's summary FILE.
getdents() {
  awk '$NF == "getdents64" { n = $4 } END { print n + 0 }' "$1"
}

# sleepers N: N idle processes (a process group), started and waited for.
sleepers() {
  setsid "$MEMHOG" -N "$1" -j "$1" -t 3600 -r "$D/up" &
  SLEEPERS=$!
  wait_for 120 test -e "$D/up"
}

@test "sampled as nobody: --exec on a small tree gives the rows of full sampling, says sampled once" {
  need_nobody
  local tree="\"\$0\" -n aa -m 8 -t 0.8 & \"\$0\" -n bb -m 16 -t 1.2 & \"\$0\" -n cc -t 0.6; wait"
  run -0 --separate-stderr as_nobody "$RM_TOP/bin/rm-tree" --exec --log "$D/ev.csv" \
    --stats "$D/ev.stats" -- sh -c "$tree" "$MEMHOG"
  [ "$stderr" = "$SAMPLED" ]
  RM_NO_EVENTS=1 run -0 --separate-stderr as_nobody "$RM_TOP/bin/rm-tree" --exec \
    --log "$D/no.csv" -- sh -c "$tree" "$MEMHOG"
  [ "$stderr" = "rm-tree: sampled mode: RM_NO_EVENTS=1" ]
  [ "$(rows "$D/ev.csv")" = "$(rows "$D/no.csv")" ]
  [ "$(rows "$D/ev.csv")" = "aa peak sampled in
bb peak sampled in
cc peak sampled in
sh peak sampled in" ]
  [ "$(csv_get "$D/ev.csv" read_kib)" = "" ]
  [[ "$(sed -n 2p "$D/ev.stats" | cut -d, -f1-5)" == "sampled,0,0,"*",taskstats needs CAP_NET_ADMIN" ]]
}

@test "sampled as nobody: children that live between two ticks get rows, readings empty" {
  need_nobody
  connector_for_users ||
    skip "this kernel refuses the proc connector to users without CAP_NET_ADMIN: no fork events to see such children by"
  # -i 5: after the first tick (at once), none before the job ends.  The
  # memhog children of 0.05 s start after it and are reaped by sh: only
  # their fork and exec events say they were there (full sampling: no row).
  run -0 --separate-stderr as_nobody "$RM_TOP/bin/rm-tree" --exec -i 5 --log "$D/log.csv" -- \
    sh -c 'sleep 0.3; "$0" -n quick1 -t 0.05; "$0" -n quick2 -t 0.05' "$MEMHOG"
  [ "$stderr" = "$SAMPLED" ]
  "$PY" -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 4, rows  # sh, sleep, quick1, quick2
empty = [r for r in rows if r["peak_rss_kib"] == ""]
assert len(empty) >= 2, rows
for r in rows:
    assert r["source"] == "sampled" and r["end_s"] != "", r
for r in empty:
    # no sample met it: no reading, never a made-up 0
    assert r["peak_at_s"] == "" and r["cpu_s"] == "", r' "$D/log.csv"
}

# bats test_tags=slow
@test "sampled as nobody: with 2,000 idle processes a tick does not list /proc; RM_NO_EVENTS=1 does" {
  need_nobody
  connector_for_users ||
    skip "this kernel refuses the proc connector to users without CAP_NET_ADMIN: every tick lists /proc"
  command -v strace >/dev/null || skip "no strace"
  sleepers 2000
  setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 3600 &
  WATCHED=$!
  wait_for 20 test -e "/proc/$WATCHED"
  # 30 ticks at 0.1 s, following one idle process.
  run -0 strace -f -c -e trace=getdents64 -o "$D/ev.strace" setpriv --reuid=nobody \
    --regid=nogroup --clear-groups "$RM_TOP/bin/rm-tree" -i 0.1 -n 30 --stats "$D/ev.stats" \
    --log "$D/ev.csv" "$WATCHED"
  RM_NO_EVENTS=1 run -0 strace -f -c -e trace=getdents64 -o "$D/no.strace" setpriv \
    --reuid=nobody --regid=nogroup --clear-groups "$RM_TOP/bin/rm-tree" -i 0.1 -n 30 \
    --log "$D/no.csv" "$WATCHED"
  local ev no
  ev=$(getdents "$D/ev.strace")
  no=$(getdents "$D/no.strace")
  echo "getdents64 calls: membership from events $ev, RM_NO_EVENTS=1 $no"
  [[ "$(sed -n 2p "$D/ev.stats" | cut -d, -f1-5)" == "sampled,"*",taskstats needs CAP_NET_ADMIN" ]]
  # Full sampling lists /proc every tick (31 listings: 30 ticks and the
  # end's); with events, the first scan and the end's only.
  ((ev > 0))
  ((no >= 10 * ev))
  # The same one row (the survivor), sampled, either way.
  [ "$(rows "$D/ev.csv")" = "sleep peak sampled in" ]
  [ "$(rows "$D/no.csv")" = "sleep peak sampled in" ]
}

@test "sampled: RM_NO_EVENTS=1 opens no connector at all" {
  need_nobody
  command -v strace >/dev/null || skip "no strace"
  RM_NO_EVENTS=1 run -0 strace -f -e trace=socket -o "$D/no.strace" setpriv --reuid=nobody \
    --regid=nogroup --clear-groups "$RM_TOP/bin/rm-tree" --exec --log /dev/null -- true
  run -1 grep -c NETLINK "$D/no.strace"
  run -0 strace -f -e trace=socket -o "$D/ev.strace" setpriv --reuid=nobody \
    --regid=nogroup --clear-groups "$RM_TOP/bin/rm-tree" --exec --log /dev/null -- true
  grep -q NETLINK_CONNECTOR "$D/ev.strace"
}

@test "--exec, sampled: an orphan reaped on the PID of a member gone unseen gets its own row, its zombie read by path" {
  [[ $EUID -eq 0 ]] || skip_needs_root "sets kernel.ns_last_pid to reuse a PID" 21
  [[ -w /proc/sys/kernel/ns_last_pid ]] || skip "kernel.ns_last_pid is not writable here"
  # CMD starts A (sleep), waits until rm-tree keeps A's stat open, kills
  # and reaps A itself (rm-tree's next listing is 5 s away), then makes B
  # on A's PID as an orphan, which rm-tree (the subreaper) reaps: the kept
  # descriptor is A's and fails; B's zombie must be read by its path, so
  # that A's row ends and B gets a row of its own with B's exit status.
  # shellcheck disable=SC2016
  RM_NO_EVENTS=1 run -0 --separate-stderr rm-tree --exec -i 5 -- "$PY" -c '
import os, subprocess, sys, time
a = subprocess.Popen(["sleep", "60"]).pid
tree, want, end = os.getppid(), "/proc/%d/stat" % a, time.monotonic() + 30
def kept():
    for f in os.listdir("/proc/%d/fd" % tree):
        try:
            if os.readlink("/proc/%d/fd/%s" % (tree, f)) == want: return True
        except OSError: pass
    return False
while not kept():
    if time.monotonic() > end: sys.exit("rm-tree never kept %s open" % want)
    time.sleep(0.05)
os.kill(a, 9); os.waitpid(a, 0)
for _ in range(50):
    mid = os.fork()
    if mid == 0:
        with open("/proc/sys/kernel/ns_last_pid", "w") as f: f.write(str(a - 1))
        b = os.fork()
        if b == 0:
            time.sleep(0.3)          # its parent is gone: rm-tree adopts it
            os._exit(7 if os.getpid() == a else 8)
        os._exit(0 if b == a else 1)
    if os.waitpid(mid, 0)[1] == 0: break
else:
    sys.exit("no child got PID %d" % a)
print(a, file=sys.stderr)
time.sleep(1)'
  echo "$output"
  echo "$stderr"
  local a
  a=$(grep -x '[0-9]*' <<<"$stderr" | tail -1)
  [[ -n "$a" ]]
  # B: pid A, python3, exit 7; A's own row (sleep) does not take B's status.
  run -0 "$PY" -c 'import csv, io, sys
rows = [r for r in csv.DictReader(io.StringIO(sys.argv[1])) if r["pid"] == sys.argv[2]]
print(" ".join("%s:%s" % (r["comm"], r["exit"]) for r in rows))' "$output" "$a"
  echo "rows of PID $a: $output"
  [[ "$output" == *"python3:7"* ]]
  [[ "$output" != *"sleep:7"* ]]
}

# A process whose parent ends right after forking it (cmd & at the end of
# a script, a double fork) is reparented before its fork is read; with the
# parent's end not yet seen (sampled mode sees it at a tick), its identity
# check must not take it for a stranger on the pid: its row came early,
# while it ran, and a second one when it ended.  rm-tree is stopped while
# it happens, so the events are read after it, every time.
@test "sampled as nobody: a process left by its parent right after its fork stays followed: one row, ending when it ends" {
  need_nobody
  # shellcheck disable=SC2016
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$RM_TOP/bin/rm-tree" --exec -i 0.5 \
    --log "$D/l.csv" -- \
    sh -c ': >"$1/started"; until [ -e "$1/go" ]; do sleep 0.05; done
      sh -c "\"\$0\" -n orphan -t 2.5 & echo \$! >$1/orphan" "$0" "$1"
      sleep 3' "$MEMHOG" "$D" 2>"$D/err" 3>&- &
  local tree=$!
  # CMD runs: rm-tree has its event listener open and has started CMD (its
  # header alone comes before CMD's fork: stopped then, CMD never ran).
  wait_for 30 test -e "$D/started"
  stop_pid "$tree"
  touch "$D/go"
  wait_for 30 test -s "$D/orphan"
  # The parent has ended: the orphan is rm-tree's child now.
  wait_for 30 sh -c "awk '{ exit \$4 != $tree }' /proc/$(cat "$D/orphan")/stat"
  resume_pid "$tree"
  wait "$tree"
  cat "$D/err"
  run -0 "$PY" -c 'import csv,sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["comm"] == "orphan"]
print(len(rows), " ".join("%.1f" % (float(r["end_s"]) - float(r["start_s"])) for r in rows if r["end_s"]))' "$D/l.csv"
  echo "# orphan rows, lives: $output"
  [[ "$output" == "1 "* ]]
  local life=${output#1 }
  "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 2.0 else 1)' "$life"
}
