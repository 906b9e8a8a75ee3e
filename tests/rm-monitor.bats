#!/usr/bin/env bats
# rm-monitor: the seed's CLI, its lifecycle (watched PID, signals, kill -9),
# safe file handling, the built-in demo build, and a real OOM kill.

setup() {
  load test_helper/common
  OUT="$BATS_TEST_TMPDIR/out"
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
  if [[ -n "${CG:-}" && -d "$CG" ]]; then
    rmdir "$CG" 2>/dev/null || true
  fi
}

# start_monitor ARGS...: rm-monitor in the background, SIGINT not ignored
# (a plain `&` in a script would ignore it); sets MON.
start_monitor() {
  "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' rm-monitor "$@" </dev/null >"$BATS_TEST_TMPDIR/mon.out" 2>"$BATS_TEST_TMPDIR/mon.err" &
  MON=$!
  BG_PIDS="${BG_PIDS:-} $MON"
}

# A row of data (not just the header) in the run's CSV.
has_rows() {
  [[ -f "$1" ]] && (($(wc -l <"$1") >= 2))
}

# brief_build CSV: a short "build" to --watch-pid, its PID in BUILD: it
# lives until the monitor's CSV has a row (at most 60 s), so a monitor slow
# to start on a loaded machine (under strace: over a second) still finds
# it alive; a fixed `sleep 1` ended before it, "cannot watch PID".
brief_build() {
  sleep 60 &
  BUILD=$!
  BG_PIDS="${BG_PIDS:-} $BUILD"
  (wait_for 60 has_rows "$1"; kill "$BUILD" 2>/dev/null) 3>&- &
}

@test "RESOURCE_MONITOR=0 does nothing and exits 0" {
  RESOURCE_MONITOR=0 run -0 rm-monitor --out-dir "$OUT" --run-id x --interval 0.1
  [ -z "$output" ]
  [ ! -e "$OUT" ]
}

@test "usage errors exit 2: run-id with / or .., bad numbers, unknown flags" {
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --run-id a/b
  [[ "$stderr" == "rm-monitor: invalid --run-id 'a/b'"* ]]
  [[ "$stderr" == *$'\nusage: rm-monitor '* ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --run-id ..
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --run-id x..y
  # Values are checked by the binary that uses them, before anything starts.
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --interval fast
  # Their messages name the command typed, with its usage.
  [[ "$stderr" == "rm-monitor: invalid interval 'fast': seconds from 0.001 to 86400"* ]]
  [[ "$stderr" == *$'\nusage: rm-monitor '* && "$stderr" != *rm-sample* ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --interval 0
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --interval 100000
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --procs-interval 100000
  [[ "$stderr" == "rm-monitor: invalid --procs-interval '100000'"* ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --context-match '('
  # EREs grep -E takes but regcomp(3) does not: refused at once.
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --context-match '(?i)error'
  [[ "$stderr" == "rm-monitor: invalid --context-match '(?i)error': "* ]]
  run -1 --separate-stderr rm-monitor --out-dir "$OUT" --disk-path /nonexistent
  [ "$stderr" = "rm-monitor: cannot read disk path '/nonexistent': No such file or directory" ]
  # A run-id no file name can hold: at once, in words.
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --run-id "$(printf 'x%.0s' {1..300})"
  [ "${stderr_lines[0]}" = "rm-monitor: invalid --run-id: file name too long" ]
  run -2 --separate-stderr rm-monitor --bogus
  [[ "$stderr" == "rm-monitor: unknown option '--bogus'"* ]]
  # The summary's thresholds: checked at start by rm-summarize, which uses them.
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --near-oom-mb lots
  [ "${stderr_lines[0]}" = "rm-monitor: invalid --near-oom-mb 'lots': MiB, a number from 0" ]
  [ "${stderr_lines[1]}" = "usage: rm-monitor [--out-dir DIR] [--run-id ID] [--interval SEC] [--stage-log-dir DIR]" ]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --low-disk-gb=-1
  [ "${stderr_lines[0]}" = "rm-monitor: invalid --low-disk-gb '-1': GiB, a number from 0" ]
  # What only the monitor uses, it checks.
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --watch-pid self
  [ "${stderr_lines[0]}" = "rm-monitor: invalid --watch-pid 'self': a PID" ]
  # Its own PID (a subshell's $BASHPID, exec'd into the monitor) would never end.
  run -2 --separate-stderr bash -c 'exec rm-monitor --out-dir "$1" --watch-pid $$' _ "$OUT"
  [[ "${stderr_lines[0]}" == "rm-monitor: --watch-pid "*" is this monitor's own PID (it would wait for itself): give the build's PID" ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --scope tree
  [ "${stderr_lines[0]}" = "rm-monitor: --scope tree needs --watch-pid" ]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --scope cgroup:
  [ "${stderr_lines[0]}" = "rm-monitor: invalid --scope 'cgroup:': tree, host or cgroup:PATH" ]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --interval
  [ "${stderr_lines[0]}" = "rm-monitor: option '--interval' needs a value" ]
  [ ! -e "$OUT" ]
}

@test "--prom-dir: a missing one is made below a directory only we may write; else CSV-only with a warning" {
  local d="$BATS_TEST_TMPDIR/d"
  mkdir -m 0755 "$d" && mkdir -m 1777 "$d/shared"
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id p --interval 0.2 --prom-dir "$d/prom/sub" -- true
  echo "stderr: $stderr"
  [ -z "$stderr" ]
  [ -d "$d/prom/sub" ] && has_rows "$OUT/resources-p.csv" && [ -s "$OUT/resources-p.summary.txt" ]
  # Another user may write the parent: no name made there, the build monitored all the same.
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id q --interval 0.2 --prom-dir "$d/shared/prom" -- true
  [ "$stderr" = "rm-monitor: --prom-dir '$d/shared/prom': '$d/shared' may be written by another user: not creating a directory in it; carrying on without rm-tools.prom" ]
  [ ! -e "$d/shared/prom" ] && has_rows "$OUT/resources-q.csv" && [ -s "$OUT/resources-q.summary.txt" ]
  # One rm-sample cannot write (not a directory): the same.
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id r --interval 0.2 --prom-dir /etc/hostname -- true
  [ "$stderr" = "rm-monitor: --prom-dir '/etc/hostname': cannot write --prom-file '/etc/hostname/rm-tools.prom': Not a directory; carrying on without rm-tools.prom" ]
  has_rows "$OUT/resources-r.csv"
}

@test "--help and --version exit 0 at once, even with standard output closed: never a monitor" {
  cd "$BATS_TEST_TMPDIR"
  run -0 timeout 10 bash -c 'rm-monitor --help >&-'
  run -0 timeout 10 bash -c 'rm-monitor --version >&-'
  run -0 timeout 10 bash -c 'rm-monitor --help | head -c 1'
  [ "$(find . -name 'resources-*' | wc -l)" -eq 0 ]
}

@test "an out-dir it cannot write is a clear error at start, exit 1" {
  run -1 --separate-stderr rm-monitor --out-dir /proc/sys --run-id x --interval 0.1
  [[ "$stderr" == "rm-monitor: cannot write in out-dir '/proc/sys': "* ]]
  run -1 --separate-stderr rm-monitor --out-dir /etc/hostname/sub --run-id x
  [ "$stderr" = "rm-monitor: cannot use out-dir '/etc/hostname/sub': not a directory" ]
  run -1 --separate-stderr rm-monitor --out-dir "$OUT" --watch-pid 4194303
  [ "$stderr" = "rm-monitor: cannot watch PID 4194303: no such process" ]
}

@test "the watched PID's end gives a summary within a second, even at --interval 15" {
  local t0 t1
  # The build ends once the first row is written: under ASan beside busy
  # loops the monitor took over 5 s to write it, after a fixed sleep 2.
  brief_build "$OUT/resources-w.csv"
  start_monitor --out-dir "$OUT" --run-id w --interval 15 --watch-pid "$BUILD"
  wait_for 60 has_rows "$OUT/resources-w.csv"
  wait "$BUILD" || true
  t0=$(date +%s.%N)
  wait_for 10 test -s "$OUT/resources-w.summary.json"
  t1=$(date +%s.%N)
  wait "$MON"
  # Within a second on a quiet machine; on a busy one, plus what the summary
  # itself costs there now (rm-summarize on the same CSV, timed here).
  local r0 r1
  r0=$(date +%s.%N)
  rm-summarize --json "$OUT/resources-w.csv" >/dev/null
  r1=$(date +%s.%N)
  "$PY" -c 'import sys; d = float(sys.argv[2]) - float(sys.argv[1]); ref = float(sys.argv[4]) - float(sys.argv[3]); print(d, ref); assert d < 1.0 + 2 * ref, (d, ref)' "$t0" "$t1" "$r0" "$r1"
  run -0 jq -r '.system.samples' "$OUT/resources-w.summary.json"
  [ "$output" -ge 1 ]
  grep -q '^Build resources: ' "$OUT/resources-w.summary.txt"
  # Nothing half-written is left behind.
  run -0 find "$OUT" -name '.rm-monitor.*'
  [ -z "$output" ]
}

@test "SIGTERM, SIGINT and SIGHUP each stop it after a whole row and write the summary" {
  local sig
  for sig in TERM INT HUP; do
    start_monitor --out-dir "$OUT" --run-id "s$sig" --interval 0.1
    wait_for 10 has_rows "$OUT/resources-s$sig.csv"
    kill -"$sig" "$MON"
    wait "$MON"
    [ -s "$OUT/resources-s$sig.summary.txt" ]
    jq -e '.system.samples >= 1' "$OUT/resources-s$sig.summary.json" >/dev/null
    # Whole rows only: every record has the header's column count.
    [ "$(csv_cols "$OUT/resources-s$sig.csv")" = 19 ]
  done
}

@test "kill -9 of the monitor: its children end and 'rm-monitor summarize' reads what it left" {
  start_monitor --out-dir "$OUT" --run-id k9 --interval 0.1
  wait_for 10 has_rows "$OUT/resources-k9.csv"
  sleep 0.3
  local kids c
  # rm-sample and rm-tree.
  kids=$(pgrep -P "$MON")
  [ "$(wc -w <<<"$kids")" -eq 2 ]
  kill -KILL "$MON"
  wait "$MON" || true
  # rm-sample and rm-tree watch the monitor and stop by themselves.
  for c in $kids; do
    wait_for 5 bash -c '! kill -0 "$1" 2>/dev/null' _ "$c"
  done
  [ ! -e "$OUT/resources-k9.summary.txt" ]
  run -0 rm-monitor summarize "$OUT/resources-k9.csv"
  [[ "$output" == "Build resources: $OUT/resources-k9.csv"* ]]
  run -0 resource-monitor.sh summarize --json "$OUT/resources-k9.csv"
  jq -e '.system.samples >= 2' <<<"$output" >/dev/null
}

@test "without --watch-pid, rm-tree follows the compilers rm-tree --compilers names (a cc1objplus too)" {
  local fake tree ere
  cp /bin/sleep "$BATS_TEST_TMPDIR/cc1objplus"
  "$BATS_TEST_TMPDIR/cc1objplus" 60 &
  fake=$!
  BG_PIDS="${BG_PIDS:-} $fake"
  start_monitor --out-dir "$OUT" --run-id cu --interval 0.1
  wait_for 10 has_rows "$OUT/resources-cu.csv"
  # The rm-tree it started matches the ERE rm-tree --compilers prints.
  ere=$(rm-tree --compilers)
  wait_for 10 pgrep -P "$MON" -f 'rm-tree .*--match'
  tree=$(pgrep -P "$MON" -f 'rm-tree .*--match')
  [[ "$(tr '\0' '\n' <"/proc/$tree/cmdline" | grep -A1 -x -e --match | tail -n 1)" == "$ere" ]]
  kill -TERM "$MON"
  wait "$MON"
  # Still running at the end, the cc1objplus has its row in the exit log.
  grep -q "^$fake,[0-9]*,cc1objplus," "$OUT/resources-cu.procs.csv"
  kill "$fake"
  wait "$fake" || true
}

@test "two monitors with different run-ids in one dir do not collide" {
  start_monitor --out-dir "$OUT" --run-id a --interval 0.1
  local a=$MON
  start_monitor --out-dir "$OUT" --run-id b --interval 0.1
  wait_for 10 has_rows "$OUT/resources-a.csv"
  wait_for 10 has_rows "$OUT/resources-b.csv"
  kill -TERM "$a" "$MON"
  wait "$a"
  wait "$MON"
  run -0 jq -r '.files[0]' "$OUT/resources-a.summary.json"
  [ "$output" = "$OUT/resources-a.csv" ]
  run -0 jq -r '.files[0]' "$OUT/resources-b.summary.json"
  [ "$output" = "$OUT/resources-b.csv" ]
}

@test "the same run-id twice keeps both runs' files" {
  local i
  for i in 1 2; do
    start_monitor --out-dir "$OUT" --run-id same --interval 0.1
    wait_for 10 has_rows "$OUT/resources-same$([[ $i == 2 ]] && echo -2).csv"
    kill -TERM "$MON"
    wait "$MON"
  done
  [ -s "$OUT/resources-same.summary.txt" ]
  [ -s "$OUT/resources-same-2.summary.txt" ]
  run -0 jq -r '.files[0]' "$OUT/resources-same-2.summary.json"
  [ "$output" = "$OUT/resources-same-2.csv" ]
  # The first run's CSV was not touched by the second: it holds the rows
  # its summary read, no more.  (Not by the end's epoch: the summary's
  # times are the run's origin plus elapsed_s, which can differ from the
  # epoch column by the millisecond both are rounded to.)
  run -0 jq -r '.system.samples' "$OUT/resources-same.summary.json"
  [ "$output" = "$(($(wc -l <"$OUT/resources-same.csv") - 1))" ]
}

@test "a symlink planted at an output path is never followed" {
  mkdir -p "$OUT"
  echo precious >"$BATS_TEST_TMPDIR/victim"
  ln -s "$BATS_TEST_TMPDIR/victim" "$OUT/resources-p.csv"
  ln -s "$BATS_TEST_TMPDIR/nowhere" "$OUT/resources-p-2.summary.json"
  start_monitor --out-dir "$OUT" --run-id p --interval 0.1
  wait_for 10 has_rows "$OUT/resources-p-3.csv"
  kill -TERM "$MON"
  wait "$MON"
  [ "$(cat "$BATS_TEST_TMPDIR/victim")" = precious ]
  [ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
  [ -L "$OUT/resources-p.csv" ]
  [ -s "$OUT/resources-p-3.summary.json" ]
}

@test "starts under setsid with no terminal; the orchestrator's exit status is its own" {
  cat >"$BATS_TEST_TMPDIR/orch.sh" <<'EOF'
set -e
setsid rm-monitor --out-dir "$1" --run-id orch --interval 0.2 --watch-pid $$ </dev/null >/dev/null 2>&1 &
# The monitor refuses a build already gone at its start: the stand-in
# build lives until it has claimed its CSV (at most 60 s), then 1.5 s.
i=0
until [ -e "$1/resources-orch.csv" ] || [ "$i" -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1.5
exit 7
EOF
  run -7 bash "$BATS_TEST_TMPDIR/orch.sh" "$OUT"
  wait_for 60 test -s "$OUT/resources-orch.summary.json"
  jq -e '.system.samples >= 1' "$OUT/resources-orch.summary.json" >/dev/null
}

@test "resource-monitor.sh is the same program under the seed's name" {
  run -0 resource-monitor.sh --help
  [[ "$output" == "usage: rm-monitor "* ]]
  RESOURCE_MONITOR=0 run -0 resource-monitor.sh --out-dir "$OUT"
  [ ! -e "$OUT" ]
}

@test "--energy and --gpu reach rm-sample; thresholds reach the summary" {
  start_monitor --out-dir "$OUT" --run-id eg --interval 0.1 --energy --gpu --near-oom-mb 1000000 --low-disk-gb 0.5
  wait_for 10 has_rows "$OUT/resources-eg.csv"
  kill -TERM "$MON"
  wait "$MON"
  run -0 head -n 1 "$OUT/resources-eg.csv"
  [[ "$output" == *",pkg_w,gpu_busy_pct,gpu_vram_used_mb,gpu_vram_total_mb" ]]
  run -0 jq -c '[.system.near_oom.threshold_mb, .system.near_oom.samples == .system.samples, .system.low_disk.threshold_gb]' "$OUT/resources-eg.summary.json"
  [ "$output" = '[1000000,true,0.5]' ]
}

# The summary JSON is rm-summarize --json --top 10: the exit log folded
# as it is read, in memory bounded by what it lists (every compile unit,
# the 10 heaviest processes), not one entry a process of a long build.
@test "the summary JSON lists the 10 heaviest of 15 processes; .procs.csv has all 15" {
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id top --interval 0.1 -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do sleep 0.01; done'
  run -0 jq -c '[.processes.count, (.processes.top | length)]' "$OUT/resources-top.summary.json"
  [ "$output" = '[15,10]' ]
  # the build's 15 (not a heavy process of a test beside it: --elsewhere)
  run -0 "$PY" -c 'import csv, sys
print(sum(r["scope"] == "in" for r in csv.DictReader(open(sys.argv[1], newline=""))))' "$OUT/resources-top.procs.csv"
  [ "$output" -eq 15 ]
}

# bats test_tags=slow
@test "end to end: the demo build, monitored at --interval 0.5" {
  local d="$BATS_TEST_TMPDIR/demo"
  run -0 rm-demo --out-dir "$d"
  [[ "$output" == "Build resources: $d/resources-demo.csv"* ]]
  # compilers was above 0 while it compiled.
  run -0 "$PY" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(max(int(r["compilers"]) for r in rows if r["compilers"]))' "$d/resources-demo.csv"
  [ "$output" -gt 0 ]
  # The memory peak names a stage of the build and a line from its logs.
  run -0 jq -r '.system.peaks.max_mem_used_mb | "\(.stage)\t\(.context)"' "$d/resources-demo.summary.json"
  local stage=${output%%$'\t'*} ctx=${output#*$'\t'}
  [[ "$stage" == core || "$stage" == app || "$stage" == setup ]]
  [ -n "$ctx" ]
  cat "$d"/logs/*.log | grep -qxF -- "$ctx"
  # The heaviest compile units are the generated sources, with real peaks.
  run -0 jq -r '.compile_units[] | select(.unit | test("^src/(core|app)_[0-9]+\\.cpp$")) | "\(.unit) \(.peak_rss_kib)"' "$d/resources-demo.summary.json"
  [ "$(wc -l <<<"$output")" -ge 4 ]
  while read -r unit kib; do
    [ -f "$d/$unit" ]
    ((kib > 10000))
  done <<<"$output"
  jq -e '.memory_per_job | length >= 1' "$d/resources-demo.summary.json" >/dev/null
}

# bats test_tags=slow
@test "a real OOM kill in a small memory cgroup is found, the victim named" {
  local v1=/sys/fs/cgroup/memory
  CG="$v1/rm-monitor-test-$$"
  if ! mkdir "$CG" 2>/dev/null; then
    skip_needs_root "cannot create a v1 memory cgroup under $v1 (not root, or no cgroup v1 memory controller)"
  fi
  echo 64M >"$CG/memory.limit_in_bytes"
  cat >"$BATS_TEST_TMPDIR/orch.sh" <<'EOF'
mkdir -p "$3"
echo oomtest >"$3/stage"
# The stage's log once the monitor runs: an earlier log is never context.
while [ ! -s "$4" ]; do sleep 0.05; done
echo "running the allocator" >"$3/oomtest.log"
sleep 0.6
bash -c 'echo $BASHPID >"$1/cgroup.procs" && exec "$2" 256 2' _ "$1" "$2" || echo "allocator ended: $?"
sleep 1
EOF
  bash "$BATS_TEST_TMPDIR/orch.sh" "$CG" "$RM_BUILD/tests/oomer" "$BATS_TEST_TMPDIR/logs" \
    "$OUT/resources-oom.csv" &
  local orch=$!
  BG_PIDS="$orch"
  run -0 rm-monitor --out-dir "$OUT" --run-id oom --interval 0.2 --watch-pid "$orch" \
    --stage-file "$BATS_TEST_TMPDIR/logs/stage" --stage-log-dir "$BATS_TEST_TMPDIR/logs"
  wait "$orch"
  run -0 cat "$OUT/resources-oom.summary.txt"
  [[ "$output" == *"OOM kills: 1"* ]]
  [[ "$output" == *"stage oomtest  1 kill, victim oomer (PID "* ]]
  [[ "$output" == *"context: running the allocator"* ]]
  jq -e '.system.oom_kills.events[0].victims[0].name == "oomer"' "$OUT/resources-oom.summary.json" >/dev/null
}

@test "kill -9 of rm-sample while the build runs: restarted, the gap in the summary, exit 1" {
  sleep 30 &
  local build=$! old new
  BG_PIDS="$build"
  start_monitor --out-dir "$OUT" --run-id k9s --interval 0.1 --watch-pid "$build"
  wait_for 10 has_rows "$OUT/resources-k9s.csv"
  old=$(pgrep -P "$MON" -x rm-sample)
  kill -KILL "$old"
  # A new sampler, appending to the same CSV.
  wait_for 20 bash -c 'p=$(pgrep -P "$1" -x rm-sample) && [ "$p" != "$2" ]' _ "$MON" "$old"
  new=$(pgrep -P "$MON" -x rm-sample)
  local rows
  rows=$(wc -l < "$OUT/resources-k9s.csv")
  wait_for 10 bash -c '(($(wc -l < "$1") > $2))' _ "$OUT/resources-k9s.csv" "$rows"
  kill "$build"
  local rc=0
  wait "$MON" || rc=$?
  # The system rows have a gap: not a clean run (nobody reads a background monitor's stderr).
  [ "$rc" -eq 1 ]
  grep -q "rm-sample ended (signal KILL); restarted" "$BATS_TEST_TMPDIR/mon.err"
  grep -Eq '^  sampler died at \+0:00:[0-9]{2} \(signal KILL\), restarted at \+0:00:[0-9]{2}$' \
    "$OUT/resources-k9s.summary.txt"
  # One header, whole rows from both samplers.
  [ "$(grep -c '^epoch,' "$OUT/resources-k9s.csv")" -eq 1 ]
  [ "$(csv_cols "$OUT/resources-k9s.csv")" = "$(head -n 1 "$OUT/resources-k9s.csv" | tr ',' '\n' | wc -l)" ]
}

@test "a watched PID that ends while the monitor starts: still a row and a real summary" {
  # The build ends the moment the run's sampler starts.
  bash -c 'while ! pgrep -f "resources-[r]ace[.]stats[.]csv" >/dev/null; do sleep 0.01; done' &
  local build=$!
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id race --interval 0.5 --watch-pid "$build"
  has_rows "$OUT/resources-race.csv"
  grep -q '^Build resources: ' "$OUT/resources-race.summary.txt"
  jq -e '.system.samples >= 1' "$OUT/resources-race.summary.json"
  # As root nothing it writes is readable by others, whatever the umask.
  if [ "$(id -u)" -eq 0 ]; then
    local f
    for f in "$OUT"/resources-race.*; do
      # The .latest symlinks' own mode means nothing (their targets count).
      [[ -L "$f" ]] && continue
      (((8#$(stat -c %a "$f") & 8#7) == 0))
    done
  fi
}

@test "rm-tree ending with the build before the sampler's next tick is the build's end, not a gap (exit 0)" {
  # rm-tree sees the build's last process end at once; the sampler here ends a
  # second after it would (a stand-in beside a copy of rm-monitor), so rm-tree's
  # clean end always comes first.
  local d="$BATS_TEST_TMPDIR/bin" f
  mkdir -p "$d"
  for f in "$RM_TOP"/bin/*; do cp -p "$f" "$d/"; done
  mv "$d/rm-sample" "$d/rm-sample.real"
  printf '#!/bin/sh\n"%s" "$@"; rc=$?\ncase " $* " in *" --check "*) ;; *) sleep 1 ;; esac\nexit $rc\n' \
    "$d/rm-sample.real" >"$d/rm-sample"
  chmod 755 "$d/rm-sample"
  brief_build "$OUT/resources-tend.csv"
  run -0 --separate-stderr "$d/rm-monitor" --out-dir "$OUT" --run-id tend --interval 0.5 --watch-pid "$BUILD"
  echo "$stderr"
  [[ "$stderr" != *"rm-tree ended"* ]]
  ! grep -q "process log (rm-tree)" "$OUT/resources-tend.summary.txt"
  has_rows "$OUT/resources-tend.csv"
}

@test "rm-monitor summarize -- ends the options" {
  mkdir -p "$OUT"
  rm-sample -n 2 -i 0.05 > "$OUT/-weird.csv"
  cd "$OUT"
  run -0 rm-monitor summarize -- -weird.csv
  [[ "$output" == "Build resources: -weird.csv"* ]]
}

@test "rm-monitor summarize passes rm-summarize's options on; rm-summarize names what it refuses" {
  mkdir -p "$OUT"
  rm-sample -n 3 -i 0.05 >"$OUT/r.csv"
  run -0 rm-monitor summarize --series "$OUT/r.csv"
  [[ "${lines[0]}" == "#"* ]]
  run -0 rm-monitor --near-oom-mb 1000000 summarize --json "$OUT/r.csv"
  [ "$(jq '.system.near_oom.threshold_mb' <<<"$output")" = 1000000 ]
  run -2 --separate-stderr rm-monitor summarize --bogus "$OUT/r.csv"
  [ "${stderr_lines[0]}" = "rm-summarize: unknown option '--bogus'" ]
  run -2 --separate-stderr rm-monitor summarize
  [ "${stderr_lines[0]}" = "rm-summarize: no input files" ]
}

@test "a PATH without coreutils is named as the cause" {
  local d="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$d"
  ln -s "$(command -v bash)" "$d/bash"
  run -1 --separate-stderr env PATH="$d" "$RM_TOP/bin/rm-monitor" --out-dir "$OUT" --run-id p --interval 0.1
  [ "$stderr" = "rm-monitor: 'mkdir' not found in PATH '$d'" ]
}

@test "a stopped sampler leaves a gap the text summary reports" {
  start_monitor --out-dir "$OUT" --run-id stop --interval 0.05
  wait_for 10 has_rows "$OUT/resources-stop.csv"
  local s
  s=$(pgrep -P "$MON" -x rm-sample)
  kill -STOP "$s"
  sleep 1
  kill -CONT "$s"
  local rows
  rows=$(wc -l < "$OUT/resources-stop.csv")
  wait_for 10 bash -c '(($(wc -l < "$1") > $2 + 2))' _ "$OUT/resources-stop.csv" "$rows"
  kill -TERM "$MON"
  wait "$MON"
  grep -Eq '^  [0-9]+ intervals over 3 ticks \(the sampler stopped or starved\), longest [0-9.]+ s$' \
    "$OUT/resources-stop.summary.txt"
}

# Its end by kill -9, run-ids used twice, inputs read once, stages
# from logs, the seed columns.

gone() {
  ! kill -0 "$1" 2>/dev/null
}

@test "kill -9 of rm-monitor --watch-pid: rm-sample and rm-tree end with it; the next run removes its status dir" {
  local build mon dead kids c rows tmp="$BATS_TEST_TMPDIR/tmp"
  mkdir -p "$tmp"
  sleep 300 &
  build=$!
  BG_PIDS="${BG_PIDS:-} $build"
  TMPDIR="$tmp" rm-monitor --out-dir "$OUT" --run-id k9w --interval 0.05 --watch-pid "$build" \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/mon.err" &
  mon=$!
  BG_PIDS="${BG_PIDS:-} $mon"
  wait_for 10 has_rows "$OUT/resources-k9w.csv"
  wait_for 10 bash -c '[ "$(pgrep -c -P "$1")" -eq 2 ]' _ "$mon"
  kids=$(pgrep -P "$mon")
  [ -n "$(ls -A "$tmp")" ]
  kill -KILL "$mon"
  wait "$mon" || true
  # Both watch the monitor as well as the build, which still runs.
  for c in $kids; do
    wait_for 10 gone "$c"
  done
  kill -0 "$build"
  rows=$(wc -l <"$OUT/resources-k9w.csv")
  [ "$(csv_cols "$OUT/resources-k9w.csv")" = "$(head -n 1 "$OUT/resources-k9w.csv" | tr ',' '\n' | wc -l)" ]
  # The CSV stopped growing: no sampler is left to write to it.
  run -1 pgrep -f "resources-k9w.csv"
  [ "$(wc -l <"$OUT/resources-k9w.csv")" -eq "$rows" ]
  # The next monitor run (any run-id) clears the dead run's status dir,
  # and nothing else: not a live PID's, not a file.
  mkdir "$tmp/rm-monitor.$$.Live01"
  : >"$tmp/rm-monitor.$mon.File01"
  dead=$mon
  TMPDIR="$tmp" rm-monitor --out-dir "$OUT" --run-id next --interval 0.05 --watch-pid "$build" \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/mon2.err" &
  mon=$!
  BG_PIDS="${BG_PIDS:-} $mon"
  wait_for 10 has_rows "$OUT/resources-next.csv"
  kill "$build"
  wait "$mon"
  [ -s "$OUT/resources-next.summary.txt" ]
  [ -d "$tmp/rm-monitor.$$.Live01" ] && [ -f "$tmp/rm-monitor.$dead.File01" ]
  [ "$(find "$tmp" -mindepth 1 -maxdepth 1 | wc -l)" -eq 2 ]
}

# run_monitor ID ARGS...: one short monitored "build" (brief_build), its
# CSV the name a reused ID gets (resources-ID-2.csv...).
run_monitor() {
  local id=$1 f k=2
  shift
  f="$OUT/resources-$id.csv"
  while [[ -e "$f" ]]; do f="$OUT/resources-$id-$k.csv" && k=$((k + 1)); done
  brief_build "$f"
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id "$id" --interval 0.1 --watch-pid "$BUILD" "$@"
}

# bats test_tags=slow
@test "a reused run-id says which name it got; resources-ID.latest.* point at the newest run" {
  run_monitor same
  [ -z "$stderr" ]
  [ "$(readlink "$OUT/resources-same.latest.csv")" = resources-same.csv ]
  run_monitor same
  [ "$stderr" = "rm-monitor: run-id 'same' was used before in '$OUT': this run's files are $OUT/resources-same-2.*" ]
  local n
  for n in csv procs.csv summary.txt summary.json stats.csv; do
    [ "$(readlink "$OUT/resources-same.latest.$n")" = "resources-same-2.$n" ]
  done
  # "This run" when ids repeat: the .latest names.
  run -0 jq -r '.files[0]' "$OUT/resources-same.latest.summary.json"
  [ "$output" = "$OUT/resources-same-2.csv" ]
  # Inputs may be symlinks: the .latest CSV summarizes (only outputs refuse links).
  run -0 rm-summarize "$OUT/resources-same.latest.csv"
  [[ "${lines[0]}" == "Build resources: $OUT/resources-same.latest.csv (rm-sample CSV)"* ]]
  run -0 rm-monitor summarize --json "$OUT/resources-same.latest.csv"
  [ "$(jq -r '.files | length' <<<"$output")" -ge 2 ]
  # A third run moves every link; the earlier runs' files stay.
  run_monitor same
  [ "$(readlink "$OUT/resources-same.latest.summary.txt")" = resources-same-3.summary.txt ]
  [ -s "$OUT/resources-same.summary.txt" ] && [ -s "$OUT/resources-same-2.summary.txt" ]
  # No temporary link is left behind.
  run -0 find "$OUT" -name '.rm-monitor*'
  [ -z "$output" ]
}

@test "a file that is not a symlink at a .latest name is left alone, and said" {
  mkdir -p "$OUT"
  echo precious >"$OUT/resources-p.latest.csv"
  run_monitor p --scope host
  [ "$stderr" = "rm-monitor: '$OUT/resources-p.latest.csv' is not a symlink: left as it is" ]
  [ "$(cat "$OUT/resources-p.latest.csv")" = precious ]
  [ "$(readlink "$OUT/resources-p.latest.summary.txt")" = resources-p.summary.txt ]
  [ ! -e "$OUT/resources-p.latest.stats.csv" ]
}

@test "rm-monitor summarize X.csv X.procs.csv reads each file once, however it is named" {
  local d="$BATS_TEST_TMPDIR/r32"
  mkdir -p "$d"
  cp "$FIXTURES/fit/monitor.csv" "$d/resources-r.csv"
  cp "$FIXTURES/fit/resources-demo.procs.csv" "$d/resources-r.procs.csv"
  ln -s resources-r.procs.csv "$d/other-name.csv"
  run -0 rm-monitor summarize "$d/resources-r.csv"
  local once
  once=$(grep '^Processes: ' <<<"$output")
  [[ "$once" == "Processes: 21, "* ]]
  cd "$d"
  local second
  for second in "$d/resources-r.procs.csv" ./resources-r.procs.csv other-name.csv "$d/../r32/resources-r.procs.csv"; do
    run -0 rm-monitor summarize "$d/resources-r.csv" "$second"
    [ "$(grep '^Processes: ' <<<"$output")" = "$once" ]
  done
  run -0 rm-monitor summarize --json resources-r.csv resources-r.procs.csv
  [ "$(jq '.processes.count' <<<"$output")" = 21 ]
}

# bats test_tags=slow
@test "stage: rm-monitor with a stage file never written stages by the logs, and the summary says so" {
  local d="$BATS_TEST_TMPDIR/st"
  mkdir -p "$d/logs"
  cat >"$d/build.sh" <<'B'
# The logs once the monitor runs: a log older than the run is never the stage.
while [ ! -s "$2" ]; do sleep 0.05; done
echo "rm -rf obj" >"$1/clean.log"
sleep 0.8
echo "cc -c big.c" >"$1/build.log"
sleep 0.8
B
  bash "$d/build.sh" "$d/logs" "$OUT/resources-fb.csv" &
  local b=$!
  run -0 rm-monitor --out-dir "$OUT" --run-id fb --interval 0.1 --stage-file "$d/stage" \
    --stage-log-dir "$d/logs" --watch-pid "$b"
  run -0 "$PY" -c 'import csv, sys
print(" ".join(sorted({r["stage"] for r in csv.DictReader(open(sys.argv[1]))})))' "$OUT/resources-fb.csv"
  [[ "$output" == "build clean" || "$output" == " build clean" ]]
  run -0 grep -c "note     stage from the newest log's name in [0-9]* rows: the stage file was missing or empty" "$OUT/resources-fb.summary.txt"
  run -0 jq '.stage_fallback_rows' "$OUT/resources-fb.summary.json"
  ((output >= 5))
  run -0 jq -r '[.system.stages[].stage] | map(select(. != "(none)" and . != "")) | join(" ")' "$OUT/resources-fb.summary.json"
  [ "$output" = "clean build" ]
  # A stage file that is written: no fallback, no note (0 in the JSON).
  printf 'base\n' >"$d/stage"
  run -0 rm-monitor --out-dir "$OUT" --run-id fb2 --interval 0.1 --stage-file "$d/stage" \
    --stage-log-dir "$d/logs" --watch-pid "$(watched_until "$OUT/resources-fb2.csv")"
  run -1 grep -c "stage from the newest log" "$OUT/resources-fb2.summary.txt"
  [ "$(jq '.stage_fallback_rows' "$OUT/resources-fb2.summary.json")" = 0 ]
  # Without a stage file there is nothing to fall back from: null.
  [ "$(rm-summarize --json "$OUT/resources-fb2.csv" | jq '.stage_fallback_rows')" = null ]
}

@test "rm-monitor --seed-columns passes it to rm-sample; the summary reads the file as a seed CSV" {
  brief_build "$OUT/resources-sc.csv"
  run -0 rm-monitor --out-dir "$OUT" --run-id sc --interval 0.2 --seed-columns --watch-pid "$BUILD"
  run -0 head -n 1 "$OUT/resources-sc.csv"
  [ "$output" = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context" ]
  [ "$(csv_cols "$OUT/resources-sc.csv")" = 14 ]
  run -0 head -n 2 "$OUT/resources-sc.summary.txt"
  [[ "${lines[0]}" == *"(seed monitor CSV)" ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --seed-columns --gpu
  [ ! -e "$OUT/resources-sc-2.csv" ]
}

# Every open, chmod, chown, link or symlink by path of a name inside DIR in strace's
# trace FILE, but the reads the C commands make (O_RDONLY|O_NONBLOCK: a FIFO cannot
# block them): what must not be there.
writes_by_name() {
  grep -F "\"$2/" "$1" | grep -Ev "openat\(AT_FDCWD, \"[^\"]*\", O_RDONLY\|[A-Z_|]*O_NONBLOCK"
}

@test "rm-monitor never opens, chmods or links a name in its out-dir by path: rm-out makes them through the directory's descriptor, handed on open" {
  command -v strace >/dev/null || skip "no strace"
  brief_build "$OUT/resources-g1.csv"
  run -0 strace -f -qq -o "$BATS_TEST_TMPDIR/trace" -e trace=open,openat,creat,chmod,fchmodat,chown,fchownat,lchown,link,linkat,symlink,symlinkat,truncate,mknodat \
    rm-monitor --out-dir "$OUT" --run-id g1 --interval 0.2 --watch-pid "$BUILD"
  run writes_by_name "$BATS_TEST_TMPDIR/trace" "$OUT"
  echo "$output"
  [ -z "$output" ]
  # What the run made is all there, and the exit log's rows went into the claimed file.
  [ -s "$OUT/resources-g1.csv" ] && [ -s "$OUT/resources-g1.procs.csv" ] && [ -s "$OUT/resources-g1.summary.txt" ]
  [ "$(readlink "$OUT/resources-g1.latest.csv")" = resources-g1.csv ]
}

@test "a CSV replaced during the run is not summarized as the run's: a FIFO there hangs nothing" {
  start_monitor --out-dir "$OUT" --run-id g3 --interval 0.1
  wait_for 20 has_rows "$OUT/resources-g3.csv"
  rm "$OUT/resources-g3.csv"
  mkfifo "$OUT/resources-g3.csv"
  kill -TERM "$MON"
  # Ends within the watchdog's time, whatever was planted.
  wait_for 30 bash -c '! kill -0 "$1" 2>/dev/null' _ "$MON"
  local rc=0
  wait "$MON" || rc=$?
  [ "$rc" = 1 ]
  grep -Fx "rm-monitor: '$OUT/resources-g3.csv' is no longer the file this run wrote: replaced during the run; no summary" "$BATS_TEST_TMPDIR/mon.err"
}

@test "two monitors sharing a --prom-dir each keep their own rm-tools-ID.prom; the first to end removes only its own" {
  local pd="$BATS_TEST_TMPDIR/prom" a b
  mkdir -p "$pd"
  sleep 60 &
  a=$!
  BG_PIDS="${BG_PIDS:-} $a"
  sleep 60 &
  b=$!
  BG_PIDS="${BG_PIDS:-} $b"
  rm-monitor --out-dir "$OUT" --run-id buildA --interval 0.1 --watch-pid "$a" --prom-dir "$pd" 2>/dev/null &
  local ma=$!
  rm-monitor --out-dir "$OUT" --run-id buildB --interval 0.1 --watch-pid "$b" --prom-dir "$pd" 2>/dev/null &
  local mb=$!
  BG_PIDS="${BG_PIDS:-} $ma $mb"
  wait_for 30 test -s "$pd/rm-tools-buildA.prom"
  wait_for 30 test -s "$pd/rm-tools-buildB.prom"
  grep -q 'run_id="buildA"' "$pd/rm-tools-buildA.prom"
  grep -q 'run_id="buildB"' "$pd/rm-tools-buildB.prom"
  ! grep -q 'run_id="buildB"' "$pd/rm-tools-buildA.prom"
  kill "$b"
  wait "$mb" || true
  [ ! -e "$pd/rm-tools-buildB.prom" ]
  # A's metrics are still live, and still being rewritten.
  [ -s "$pd/rm-tools-buildA.prom" ]
  local before
  before=$(stat -c %Y.%i "$pd/rm-tools-buildA.prom")
  wait_for 30 bash -c '[[ "$(stat -c %Y.%i "$1")" != "$2" ]]' _ "$pd/rm-tools-buildA.prom" "$before"
  kill "$a"
  wait "$ma" || true
  [ -z "$(ls -A "$pd")" ]
}

@test "a live monitor's status directory is never removed, even from another PID namespace: only one whose lock no process holds" {
  local t="$BATS_TEST_TMPDIR/tmp" live dead holder
  mkdir -p "$t"
  # A monitor in another PID namespace: its PID is none of ours, its lock held.
  live="$t/rm-monitor.4194000.AbCdEf"
  dead="$t/rm-monitor.4194001.GhIjKl"
  mkdir -m 700 "$live" "$dead"
  : >"$live/lock"
  : >"$dead/lock"
  echo 'rows_written=3' >"$live/status.01"
  flock "$live/lock" sleep 120 &
  holder=$!
  BG_PIDS="${BG_PIDS:-} $holder"
  wait_for 20 bash -c '! flock -n "$1" true' _ "$live/lock"
  brief_build "$OUT/resources-r6.csv"
  run -0 env TMPDIR="$t" rm-monitor --out-dir "$OUT" --run-id r6 --interval 0.2 --watch-pid "$BUILD"
  [ -f "$live/status.01" ]
  [ ! -e "$dead" ]
  # Our own is gone at the end.
  [ "$(ls "$t")" = "${live##*/}" ]
}

@test "rm-monitor needs no flock(1): with none on PATH (an image's busybox lacks it) the run is whole and its status lock held" {
  local p="$BATS_TEST_TMPDIR/path" f d
  mkdir -p "$p"
  # Every command of this machine but flock, and ours.
  for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    for f in "$d"/*; do
      [[ -x "$f" && ! -d "$f" && "${f##*/}" != flock && ! -e "$p/${f##*/}" ]] && ln -s "$f" "$p/${f##*/}"
    done
  done
  for f in rm-monitor rm-out rm-sample rm-tree rm-summarize; do ln -sf "$(command -v "$f")" "$p/$f"; done
  brief_build "$OUT/resources-nf.csv"
  PATH="$p" run -0 rm-monitor --out-dir "$OUT" --run-id nf --interval 0.2 --watch-pid "$BUILD"
  [[ "$output" != *flock* ]]
  [ -s "$OUT/resources-nf.summary.txt" ]
}

@test "rm-out --lock holds a descriptor's lock while its caller keeps it; --unlocked says whether any process holds one" {
  local f="$BATS_TEST_TMPDIR/lock"
  : >"$f"
  run -0 rm-out --unlocked "$f"
  # A shell that locked its descriptor through rm-out and keeps it open.
  bash -c 'exec 9>"$1" && rm-out --lock 9 && echo locked >"$1.ok" && exec sleep 120' _ "$f" &
  local holder=$!
  BG_PIDS="${BG_PIDS:-} $holder"
  wait_for 20 test -e "$f.ok"
  run -1 rm-out --unlocked "$f"
  run -1 rm-out --lock 7 7>>"$f"
  [[ "$output" == *"locked by another process"* ]]
  kill "$holder"
  wait_for 20 rm-out --unlocked "$f"
  # Never through a symlink, never a FIFO.
  ln -s "$f" "$f.link"
  run -1 rm-out --unlocked "$f.link"
  mkfifo "$f.fifo"
  run -1 rm-out --unlocked "$f.fifo"
  [[ "$output" == *"not a regular file"* ]]
  run -2 rm-out --lock x
}

@test "rm-tree killed under the monitor is restarted like rm-sample: the summary gives the gap, calls the process data incomplete, not every process, later processes are logged, exit 1" {
  local d="$BATS_TEST_TMPDIR/g9" t n
  mkdir -p "$d"
  # The build: 20 short shells one after another, each at least 0.6 s,
  # begun once rm-tree has written its header (it follows from then: a
  # monitor slow to start, loaded or under ASan, missed the first three
  # and the wait below saw no row); after the third it waits for the
  # restarted rm-tree (on a loaded host a restart may take longer than a
  # few shells: seen in CI).
  (wait_for 60 test -s "$OUT/resources-g9.procs.csv"
  for i in $(seq 20); do
    sh -c 'sleep 0.6'
    if ((i == 3)); then until [ -e "$d/restarted" ]; do sleep 0.1; done; fi
  done) 3>&- &
  local w=$!
  BG_PIDS="${BG_PIDS:-} $w"
  rm-monitor --out-dir "$OUT" --run-id g9 --interval 0.2 --watch-pid "$w" 2>"$d/err" &
  local m=$!
  BG_PIDS="${BG_PIDS:-} $m"
  # Once rows come, the rm-tree is the one writing them (an rm-tree met
  # before may be the monitor's start-up --check, gone a moment later).
  wait_for 60 bash -c '(($(grep -c "sh -c sleep 0.6" "$1") >= 2))' _ "$OUT/resources-g9.procs.csv"
  t=$(pgrep -P "$m" -x rm-tree)
  kill -KILL "$t"
  wait_for 60 bash -c 'p=$(pgrep -P "$1" -x rm-tree) && [ "$p" != "$2" ]' _ "$m" "$t"
  touch "$d/restarted"
  local rc=0
  wait "$m" || rc=$?
  [ "$rc" = 1 ]
  grep -q 'rm-monitor: rm-tree ended (signal KILL); restarted' "$d/err"
  grep -Eq 'process log \(rm-tree\) died at \+[0-9:]+ \(signal KILL\), restarted at \+[0-9:]+: processes that ended in between are missing, and those reparented meanwhile may be missing from later rows' \
    "$OUT/resources-g9.summary.txt"
  # The process data line says which data is incomplete and from when, never
  # "every process" nor a lost-event count as if rm-tree had run throughout.
  grep -Eq '^Process data: [a-z]+ mode, INCOMPLETE: the process log \(rm-tree\) has a gap(; [0-9]+ events? lost \(the last rm-tree.s count\))?$' \
    "$OUT/resources-g9.summary.txt"
  grep -A1 '^Process data:' "$OUT/resources-g9.summary.txt" | grep -Eq '^  process log \(rm-tree\) died at \+[0-9:]+ \(signal KILL\), restarted at'
  run -1 grep -c "every process" "$OUT/resources-g9.summary.txt"
  run -1 grep -Ec "[0-9]+ events? lost$" "$OUT/resources-g9.summary.txt"
  jq -e '.collection.complete == false and (.collection.gaps | length) == 1
    and (.collection.gaps[0] | test("^process log \\(rm-tree\\) died at"))' "$OUT/resources-g9.summary.json"
  # The restarted rm-tree logged the rest of the build (the 17 shells
  # after the third, and the two before the kill), under the one header.
  n=$(grep -c 'sh -c sleep 0.6' "$OUT/resources-g9.procs.csv")
  echo "# ${n} of 20 shells logged"
  ((n >= 19))
  [ "$(grep -c '^pid,' "$OUT/resources-g9.procs.csv")" = 1 ]
}

# stopped_at_end NAME: the monitor's NAME (rm-sample, rm-tree) stopped, so
# it cannot answer the TERM that ends the monitor: the watchdog KILLs it
# after 5 s; the monitor exits 1.
stopped_at_end() {
  local p rc=0
  p=$(pgrep -P "$MON" -x "$1")
  kill -STOP "$p"
  kill -TERM "$MON"
  wait "$MON" || rc=$?
  [ "$rc" = 1 ]
}

@test "a sampler killed at the end (no final record in its status): the summary says the system rows stop early, exit 1" {
  start_monitor --out-dir "$OUT" --run-id fin --interval 0.1
  wait_for 20 has_rows "$OUT/resources-fin.csv"
  stopped_at_end rm-sample
  grep -Eq '^rm-monitor: rm-sample was killed at the end: the system rows stop before \+[0-9:]+$' "$BATS_TEST_TMPDIR/mon.err"
  grep -Eq 'sampler killed at the end \(no final record in its status\): the system rows stop before \+[0-9:]+' \
    "$OUT/resources-fin.summary.txt"
}

@test "rm-tree killed at the end (no clean end within 5 s of TERM): the summary calls the process data incomplete and says from when, exit 1" {
  sleep 120 &
  local build=$!
  BG_PIDS="${BG_PIDS:-} $build"
  start_monitor --out-dir "$OUT" --run-id tkill --interval 0.1 --watch-pid "$build"
  wait_for 20 has_rows "$OUT/resources-tkill.csv"
  # rm-tree has started (its header comes after its stats): stopped
  # before, it has written no stats and the summary cannot name its mode.
  wait_for 60 test -s "$OUT/resources-tkill.procs.csv"
  stopped_at_end rm-tree
  grep -Eq '^rm-monitor: rm-tree was killed at the end: processes still running at \+[0-9:]+ have no row in ' "$BATS_TEST_TMPDIR/mon.err"
  grep -Eq '^Process data: [a-z]+ mode, INCOMPLETE: the process log \(rm-tree\) has a gap' "$OUT/resources-tkill.summary.txt"
  grep -A1 '^Process data:' "$OUT/resources-tkill.summary.txt" |
    grep -Eq '^  process log \(rm-tree\) killed at the end \(no clean end within 5 s of TERM\): processes still running at \+[0-9:]+ have no row$'
  run -1 grep -c "every process" "$OUT/resources-tkill.summary.txt"
}
