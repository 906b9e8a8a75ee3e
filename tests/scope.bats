#!/usr/bin/env bats
# Scope: only the build's processes and OOM
# kills are charged to the build; other programs' go under "Elsewhere on
# this host"; a memory cgroup's kill is worded as such; the kernel log is
# matched by PID and name, its time only orders kills; every read of
# --kmsg is bounded.  Fixture files first, then the real pipeline.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize/scope"
  OUT="$BATS_TEST_TMPDIR/out"
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
  for cg in ${CGS:-}; do
    [[ -d "$cg" ]] || continue
    # Move anything left back to the root before removing the group.
    while read -r p; do echo "$p" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null || true; done <"$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null || true
  done
}

two_builds() {
  rm-summarize "$@" --kmsg "$F/two-builds.kmsg" "$F/two-builds.csv" "$F/two-builds.procs.csv" "$F/two-builds.stats.csv"
}

@test "scope=out rows are not the build's: processes, units, -j advice count only scope=in" {
  run -0 --separate-stderr two_builds
  [[ "$output" == *"Processes: 5, 21.60 s CPU in all, largest 600.0 MiB (cc1plus)"* ]]
  [[ "$output" == *"Heaviest compile units (4 in all)"* ]]
  [[ "${output%%Elsewhere on this host (not*}" != *"neighbour/huge.cpp"* ]]
  [[ "$output" == *"  compile                  3     600.0     600.0          640"* ]]
  # The neighbour's 900 MiB cc1plus and its python are named, apart; their
  # command lines (no user recorded: another user's, for all we know) only
  # with --elsewhere-cmdlines.
  [[ "$output" == *"Elsewhere on this host (not charged to the build)"*"7001      900.0  -          cc1plus         "$'\n'*"7002      700.0  -          python3"* ]]
  [[ "$output" != *"neighbour/huge.cpp"* ]]
  run -0 --separate-stderr two_builds --elsewhere-cmdlines
  [[ "$output" == *"Elsewhere on this host (not charged to the build)"*"7001      900.0  -          cc1plus         /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet neighbour/huge.cpp"*"7002      700.0  -          python3"* ]]
  run -0 --separate-stderr two_builds --json
  run -0 jq -c '[.processes.count, (.compile_units | length), [.memory_per_job[].compilers], .elsewhere.processes, [.elsewhere.top[].pid]]' <<<"$output"
  [ "$output" = '[5,4,[3,1],2,[7001,7002]]' ]
  # --csv: the build's processes only.
  run -0 two_builds --csv "$BATS_TEST_TMPDIR/p.csv"
  run -0 cut -d, -f1 "$BATS_TEST_TMPDIR/p.csv"
  [[ "$output" != *7001* && "$output" != *7002* && "$output" == *5003* ]]
}

@test "an exit log without a scope column: every row is the build's, as before" {
  cut -d, -f1-10 "$F/two-builds.procs.csv" >"$BATS_TEST_TMPDIR/old.csv"
  run -0 --separate-stderr rm-summarize "$BATS_TEST_TMPDIR/old.csv"
  [[ "$output" == *"Processes: 7,"* ]]
  [[ "$output" != *"Elsewhere on this host"* ]]
}

@test "OOM kills: the victim by PID and name; another cgroup's kill is elsewhere, not the build's, not drawn" {
  run -0 --separate-stderr two_builds
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)"* ]]
  # The kill's time is the victim's exit (19.5 s, in stage compile), not
  # the sample at 20 s that saw the counter rise (stage link).
  [[ "$output" == *"  at +0:00:20  stage compile  1 kill, victim cc1plus (PID 5003)"* ]]
  [[ "$output" == *"OOM kills outside the build: 1"*"at +0:00:10  cc1plus (PID 7001), killed by the limit of cgroup /neighbour-ci"* ]]
  [[ "$output" == *"OOM: \`src/c.cpp\` (cc1plus, PID 5003) was killed at +0:00:19.5 in stage compile; it had at least 600.0 MiB when killed. The log then (read 4.5 s before the kill): g++ -c c.cpp. The kernel killed 1 process of the build."* ]]
  run -0 --separate-stderr two_builds --json
  run -0 jq -c '[.system.oom_kills.count, .system.oom_kills.elsewhere, [.system.oom_kills.events[] | [.elapsed_s, .victims[0].pid, .victims[0].constraint]], [.elsewhere.oom_kills[] | [.pid, .constraint, .oom_memcg]]]' <<<"$output"
  [ "$output" = '[1,1,[[20,5003,"CONSTRAINT_NONE"]],[[7001,"CONSTRAINT_MEMCG","/neighbour-ci"]]]' ]
  # The SVG draws the build's kill only.
  run -0 two_builds --svg "$BATS_TEST_TMPDIR/t.svg"
  run -0 grep -c '<title>OOM kill' "$BATS_TEST_TMPDIR/t.svg"
  [ "$output" = 1 ]
  run -0 grep -F '<title>OOM kill: cc1plus (PID 5003)' "$BATS_TEST_TMPDIR/t.svg"
  # Markdown says the same.
  run -0 --separate-stderr two_builds --markdown
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)."* ]]
  [[ "$output" == *"#### Elsewhere on this host"*"- OOM kill at +0:00:10: cc1plus (PID 7001), killed by the limit of cgroup /neighbour-ci"* ]]
}

@test "only other programs' kills: no OOM verdict for the build, the kill named elsewhere" {
  # The build's own cc1plus was not killed: drop its kill from the log
  # and the counter's second rise.
  grep -v 'pid=5003\|process 5003' "$F/two-builds.kmsg" >"$BATS_TEST_TMPDIR/k"
  sed 's/,2,0.00,0.00,0.00,1.00$/,1,0.00,0.00,0.00,1.00/' "$F/two-builds.csv" >"$BATS_TEST_TMPDIR/s.csv"
  run -0 --separate-stderr rm-summarize --kmsg "$BATS_TEST_TMPDIR/k" "$BATS_TEST_TMPDIR/s.csv" "$F/two-builds.procs.csv" "$F/two-builds.stats.csv"
  [[ "$output" == *"OOM kills: 0 (and 1 elsewhere on this host)"* ]]
  [[ "$output" != *"OOM: the kernel killed"* ]]
  [[ "$output" != *"add RAM"* ]]
  [[ "$output" == *"No OOM kill in the build: the kernel killed 1 process elsewhere on this host (first: cc1plus, PID 7001, killed by the limit of cgroup /neighbour-ci)."* ]]
  run -0 rm-summarize --svg "$BATS_TEST_TMPDIR/t.svg" --kmsg "$BATS_TEST_TMPDIR/k" "$BATS_TEST_TMPDIR/s.csv" "$F/two-builds.procs.csv" "$F/two-builds.stats.csv"
  run -1 grep -c '<title>OOM kill' "$BATS_TEST_TMPDIR/t.svg"
}

@test "a kill by a memory cgroup's limit is worded as such, not 'add RAM' or '-j'" {
  run -0 --separate-stderr rm-summarize --kmsg "$F/memcg-build.kmsg" "$F/memcg-build.csv" "$F/memcg-build.procs.csv" "$F/memcg-build.stats.csv"
  [[ "$output" == *"1 kill, victim cc1plus (PID 301) killed by the limit of cgroup /ci/job-42"* ]]
  [[ "$output" == *"It was killed by the limit of cgroup /ci/job-42, not for want of memory on the host"* ]]
  run -0 grep -F 'OOM:' <<<"$output"
  [[ "$output" != *"add RAM"* && "$output" != *"-j"* ]]
}

@test "kernel log time only orders kills: a log from a long uptime still names the victims" {
  # Log times of about 100 days of uptime and a CSV of 2027: no clock
  # conversion could put them together; PID and name do.
  sed 's/^\([0-9]*\),\([0-9]*\),\([0-9]*\),/\1,\2,86400\3,/' "$F/two-builds.kmsg" >"$BATS_TEST_TMPDIR/k"
  run -0 --separate-stderr rm-summarize --kmsg "$BATS_TEST_TMPDIR/k" "$F/two-builds.csv" "$F/two-builds.procs.csv" "$F/two-builds.stats.csv"
  [[ "$output" == *"stage compile  1 kill, victim cc1plus (PID 5003)"* ]]
  [[ "$output" == *"cc1plus (PID 7001), killed by the limit of cgroup /neighbour-ci"* ]]
}

@test "--kmsg /dev/zero returns at once with a clear error (bounded read)" {
  run -0 --separate-stderr timeout 30 rm-summarize --kmsg /dev/zero "$F/memcg-build.csv"
  [[ "$output" == *"victim unknown (kernel log: not a kernel log (no /dev/kmsg record in its first 64 KiB))"* ]]
  [[ "$stderr" == "rm-summarize: --kmsg '/dev/zero': not a kernel log (no /dev/kmsg record in its first 64 KiB)" ]]
  run -0 --separate-stderr timeout 30 rm-summarize --json --kmsg /dev/urandom "$F/memcg-build.csv"
  run -0 jq -r .system.oom_kills.kernel_log <<<"$output"
  [[ "$output" == "not a kernel log"* ]]
}

@test "--stats: the mode, events lost, and the sysctl that turns delay accounting on" {
  run -0 --separate-stderr two_builds
  [[ "$output" == *"Process data: exact mode (proc connector, taskstats: every process, the kernel's own peaks); 0 events lost"* ]]
  [[ "$output" != *"task_delayacct"* ]]
  run -0 --separate-stderr rm-summarize "$F/memcg-build.csv" "$F/memcg-build.procs.csv" "$F/memcg-build.stats.csv"
  [[ "$output" == *"3 events lost, 1 resync from /proc"* ]]
  [[ "$output" == *"delay columns are empty: delay accounting is off (sysctl kernel.task_delayacct=1 turns it on)"* ]]
  [ "$(grep -c 'Process data' <<<"$output")" = 1 ]
  run -0 --separate-stderr rm-summarize "$F/memcg-build.procs.csv" "$F/sampled.stats.csv"
  [[ "$output" == *"Process data: sampled mode (taskstats needs CAP_NET_ADMIN)"* ]]
  run -0 --separate-stderr rm-summarize --json "$F/memcg-build.procs.csv" "$F/sampled.stats.csv"
  run -0 jq -c '[.collection.mode, .collection.events_lost, .collection.delayacct, .collection.taskstats_error, (.collection.hint | test("kernel.task_delayacct"))]' <<<"$output"
  [ "$output" = '["sampled",null,0,"taskstats needs CAP_NET_ADMIN",true]' ]
  # rm-run has no --stats file: rm-tree --exec's job row gives the mode.
  run -0 --separate-stderr rm-summarize "$F/two-builds.procs.csv" "$F/job-exact.csv"
  [[ "$output" == *"Process data: exact mode (proc connector, taskstats: every process, the kernel's own peaks)"* ]]
}

@test "I/O and delays: totals, who wrote and read most, who and which stage stalled in reclaim" {
  run -0 --separate-stderr two_builds
  [[ "$output" == *"read 17.1 MiB, written 30.00 GiB, 15 major faults (written counts page-cache dirtying"* ]]
  [[ "$output" == *"most written (page cache dirtied):"$'\n'"       30.00 GiB     5004 ld              link             app"* ]]
  [[ "$output" == *"most read:"$'\n'"        10.0 MiB     5004 ld"* ]]
  [[ "$output" == *"most time stalled in memory reclaim:"$'\n'"          4.20 s     5003 cc1plus         compile          src/c.cpp"* ]]
  [[ "$output" == *"stage with the most reclaim stall: compile (5.95 s)"* ]]
  run -0 --separate-stderr two_builds --json
  run -0 jq -c '[.io.write_kib, .io.read_kib, .io.top_write[0].pid, .io.top_reclaim[0].pid, .io.reclaim_stage, .io.reclaim_delay_ms, .io.write_means]' <<<"$output"
  [ "$output" = '[31460872,17528,5004,5003,"compile",5950,"page-cache dirtying"]' ]
  run -0 --separate-stderr two_builds --markdown
  [[ "$output" == *"| written | 5004 | ld | 30.00 GiB | link |"* ]]
  # Without a --stats file (rm-run) the rows' source column says the mode.
  run -0 --separate-stderr rm-summarize "$F/two-builds.procs.csv"
  [[ "$output" == *"Process data: 5 rows exact (taskstats), 0 sampled"* ]]
  # Missing readings stay missing: no I/O section without the columns.
  run -0 --separate-stderr rm-summarize "$FIXTURES/summarize/exitlog.csv"
  [[ "$output" != *"I/O and delays"* ]]
  run -0 --separate-stderr rm-summarize --json "$FIXTURES/summarize/exitlog.csv"
  run -0 jq -c '[.io, .collection]' <<<"$output"
  [ "$output" = '[null,null]' ]
}

@test "rm-run: the job's write total and top writer in its summary and JSON" {
  need_scope_tree
  run -0 rm-run -o "$BATS_TEST_TMPDIR/s.json" --json -- \
    sh -c 'dd if=/dev/zero of="$1" bs=1M count=40 conv=fsync 2>/dev/null' _ "$BATS_TEST_TMPDIR/f"
  run -0 jq -r '.io | "\(.write_kib >= 40960) \(.top_write[0].comm) \(.write_means)"' "$BATS_TEST_TMPDIR/s.json"
  [ "$output" = "true dd page-cache dirtying" ]
  run -0 rm-run -o "$BATS_TEST_TMPDIR/s.txt" -- \
    sh -c 'dd if=/dev/zero of="$1" bs=1M count=40 conv=fsync 2>/dev/null' _ "$BATS_TEST_TMPDIR/f"
  run -0 cat "$BATS_TEST_TMPDIR/s.txt"
  [[ "$output" == *"most written (page cache dirtied):"$'\n'*" dd "* ]]
}

# --- The real pipeline: rm-monitor, rm-tree, rm-summarize, the kernel's
# OOM killer in cgroup v1 memory groups. ---

# A v1 memory cgroup limited to MIB, its path in CG (removed in teardown).
new_memcg() {
  local v1=/sys/fs/cgroup/memory
  CG="$v1/rm-scope-test-$$-$1"
  mkdir "$CG" 2>/dev/null || skip_needs_root "cannot create a v1 memory cgroup under $v1 (not root, or no cgroup v1 memory controller)"
  CGS="${CGS:-} $CG"
  echo "$2M" >"$CG/memory.limit_in_bytes"
}

# The end-to-end tests that need rm-tree's scope options.
need_scope_tree() {
  rm-tree --help 2>/dev/null | grep -q -- --exclude-tree ||
    skip "this rm-tree has no --exclude-tree (scope options not built in)"
}

# oomer as a process of cgroup $1, which the kernel kills; its PID in
# OOM_PID.  (Other OOM kills on a shared host may come at the same time:
# the tests look for this one by its PID.)
oom_in_cgroup() {
  bash -c 'echo $BASHPID >"$1/cgroup.procs" && exec "$2" 256 2' _ "$1" "$RM_BUILD/tests/oomer" &
  OOM_PID=$!
  wait "$OOM_PID" || true
}

# monitor_up CSV: the monitor has written a row of CSV (at most 60 s).  A
# kill or a compile the test needs seen comes after it: a monitor slow to
# start (loaded, or under ASan) would miss what came before.
monitor_up() {
  wait_for 60 bash -c '[ "$(wc -l 2>/dev/null <"$1" || echo 0)" -ge 2 ]' _ "$1"
}

# bats test_tags=slow
@test "real: a build inside a limited cgroup: its kill names victim and stage, worded as the cgroup's limit" {
  new_memcg build 64
  local logs="$BATS_TEST_TMPDIR/logs"
  mkdir -p "$logs"
  cat >"$BATS_TEST_TMPDIR/orch.sh" <<'EOS'
echo oomtest >"$3/stage"
echo "running the allocator" >"$3/oomtest.log"
# once the monitor has written a row (at most 60 s), then 0.6 s
i=0
while [ "$(wc -l 2>/dev/null <"$4" || echo 0)" -lt 2 ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.6
bash -c 'echo $BASHPID >"$1/cgroup.procs" && exec "$2" 256 2' _ "$1" "$2" || echo "allocator ended: $?"
sleep 1
EOS
  bash "$BATS_TEST_TMPDIR/orch.sh" "$CG" "$RM_BUILD/tests/oomer" "$logs" "$OUT/resources-memcg.csv" &
  local orch=$!
  BG_PIDS="$orch"
  run -0 rm-monitor --out-dir "$OUT" --run-id memcg --interval 0.2 --watch-pid "$orch" \
    --stage-file "$logs/stage" --stage-log-dir "$logs"
  wait "$orch"
  local cgname=${CG#/sys/fs/cgroup/memory}
  run -0 cat "$OUT/resources-memcg.summary.txt"
  [[ "$output" == *"OOM kills: 1"* ]]
  [[ "$output" == *"stage oomtest  1 kill, victim oomer (PID "*") killed by the limit of cgroup $cgname"* ]]
  [[ "$output" == *"It was killed by the limit of cgroup $cgname, not for want of memory on the host"* ]]
  [[ "$output" != *"add RAM"* ]]
  run -0 jq -c '.system.oom_kills.events[0].victims[0] | [.name, .constraint, .oom_memcg]' "$OUT/resources-memcg.summary.json"
  [ "$output" = "[\"oomer\",\"CONSTRAINT_MEMCG\",\"$cgname\"]" ]
}

# bats test_tags=slow
@test "real: a kill in an unrelated cgroup while the monitor watches another build is not the build's" {
  need_scope_tree
  new_memcg other 64
  sleep 120 &
  local build=$!
  BG_PIDS="$build"
  rm-monitor --out-dir "$OUT" --run-id other --interval 0.2 --watch-pid "$build" &
  local mon=$!
  BG_PIDS="$build $mon"
  monitor_up "$OUT/resources-other.csv"
  sleep 1
  oom_in_cgroup "$CG"
  sleep 2
  kill "$build"
  wait "$mon"
  local cgname=${CG#/sys/fs/cgroup/memory}
  run -0 cat "$OUT/resources-other.summary.txt"
  [[ "$output" == *"OOM kills: 0 (and "*" elsewhere on this host)"* ]]
  [[ "$output" == *"Elsewhere on this host"*"oomer (PID $OOM_PID), killed by the limit of cgroup $cgname"* ]]
  [[ "$output" != *"OOM: the kernel killed"* && "$output" != *"add RAM"* ]]
  run -0 jq -c --argjson p "$OOM_PID" '[.system.oom_kills.count, (.elsewhere.oom_kills[] | select(.pid == $p) | [.name, .constraint])]' "$OUT/resources-other.summary.json"
  [ "$output" = '[0,["oomer","CONSTRAINT_MEMCG"]]' ]
}

# A compile job of the synthetic builds: a copy of memhog named cc1plus
# holding MIB for SEC, its command line that of cc1plus compiling SRC.
make_compilers() {
  mkdir -p "$BATS_TEST_TMPDIR/$1"
  cp "$RM_BUILD/tests/memhog" "$BATS_TEST_TMPDIR/$1/cc1plus"
  cat >"$BATS_TEST_TMPDIR/$1/build.sh" <<'EOS'
# build.sh DIR MIB SEC SRC...: each SRC compiled, two at a time.
dir=$1 mib=$2 sec=$3
shift 3
while (($# > 0)); do
  "$dir/cc1plus" -m "$mib" -t "$sec" -- -quiet "$1" -o /tmp/x.s &
  [[ -n "${2:-}" ]] && "$dir/cc1plus" -m "$mib" -t "$sec" -- -quiet "$2" -o /tmp/y.s &
  wait
  shift 2 || shift
done
EOS
}

# bats test_tags=slow
@test "real: two builds and an OOM kill elsewhere: each charged right" {
  need_scope_tree
  new_memcg neighbour 64
  make_compilers watched
  make_compilers neighbour
  # The neighbour: heavier compilers, not descended from the watched PID,
  # and an OOM kill in its own small cgroup.
  setsid bash "$BATS_TEST_TMPDIR/neighbour/build.sh" "$BATS_TEST_TMPDIR/neighbour" 200 3 \
    neighbour/n1.cpp neighbour/n2.cpp neighbour/n3.cpp neighbour/n4.cpp </dev/null >/dev/null 2>&1 &
  local nb=$!
  # The watched build compiles once the monitor has written a row.
  (monitor_up "$OUT/resources-two.csv"
  exec bash "$BATS_TEST_TMPDIR/watched/build.sh" "$BATS_TEST_TMPDIR/watched" 120 2 \
    watched/w1.cpp watched/w2.cpp watched/w3.cpp watched/w4.cpp watched/w5.cpp watched/w6.cpp) 3>&- &
  local build=$!
  BG_PIDS="$nb $build"
  rm-monitor --out-dir "$OUT" --run-id two --interval 0.5 --procs-interval 0.2 --watch-pid "$build" &
  local mon=$!
  BG_PIDS="$nb $build $mon"
  monitor_up "$OUT/resources-two.csv"
  sleep 2
  oom_in_cgroup "$CG"
  wait "$mon"
  wait "$nb" || true
  local js="$OUT/resources-two.summary.json"
  # The build's: its six units, each once, and no neighbour's.
  run -0 jq -r '[.compile_units[].unit] | sort | join(" ")' "$js"
  [ "$output" = "watched/w1.cpp watched/w2.cpp watched/w3.cpp watched/w4.cpp watched/w5.cpp watched/w6.cpp" ]
  run -0 jq -r '[.memory_per_job[].compilers] | add' "$js"
  [ "$output" = 6 ]
  run -0 jq -r '[.processes.top[].comm] | map(select(. == "rm-monitor" or . == "rm-sample" or . == "rm-tree" or . == "rm-summarize")) | length' "$js"
  [ "$output" = 0 ]
  # The neighbour's heavy compilers are logged as elsewhere (scope=out),
  # never the build's (the summary lists the heaviest of a busy host).
  # (Only the neighbour's compilers hold 200 MiB; an exit record of a
  # process outside the scope carries no command line.)
  run -0 "$PY" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
big = lambda r: r["comm"] == "cc1plus" and int(r["peak_rss_kib"] or 0) >= 200 * 1024
print(min(1, len([r for r in rows if r["scope"] == "out" and big(r)])),
      len([r for r in rows if r["scope"] == "in" and (big(r) or "neighbour/" in r["cmd"])]))' "$OUT/resources-two.procs.csv"
  [ "$output" = "1 0" ]
  run -0 jq -r '.elsewhere.processes' "$js"
  [ "$output" -ge 1 ]
  run -0 jq -r '[.processes.top[].cmd] | map(select(test("neighbour/"))) | length' "$js"
  [ "$output" = 0 ]
  # The kill in the unrelated cgroup is not the build's.
  run -0 jq -c --argjson p "$OOM_PID" '[.system.oom_kills.count, ([.elsewhere.oom_kills[] | select(.pid == $p)] | length)]' "$js"
  [ "$output" = '[0,1]' ]
  run -0 cat "$OUT/resources-two.summary.txt"
  [[ "$output" == *"Process data: "*" mode"* ]]
  [[ "$output" == *"Elsewhere on this host"* ]]
  [[ "$output" != *"OOM: the kernel killed"* ]]
}
