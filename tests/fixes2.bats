#!/usr/bin/env bats
# Issue 12, the items the audit found NOT fixed (helper fixes2): rm-sample
# watching several PIDs and the monitor's kill -9, rm-summarize's verdicts
# without readings, and rm-energy's terminal ^C.
# shellcheck disable=SC2016,SC2030,SC2031,SC2154  # scripts single-quoted on purpose; each @test is a subshell; bats sets stderr

setup() {
  load test_helper/common
  OUT="$BATS_TEST_TMPDIR/out"
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
}

# A row of data (not just the header) in a CSV.
has_rows() {
  [[ -f "$1" ]] && (($(wc -l <"$1") >= 2))
}

gone() {
  ! kill -0 "$1" 2>/dev/null
}

# rm-sample watching two sleeps ends when the one named KILLED (1 or 2)
# ends, after one last row, exit 0; the other sleep is left running.
watch_two() {
  local a b s rc=0
  sleep 300 &
  a=$!
  sleep 300 &
  b=$!
  BG_PIDS="${BG_PIDS:-} $a $b"
  rm-sample -i 0.05 --watch-pid "$a" --watch-pid "$b" -o "$BATS_TEST_TMPDIR/w$1.csv" 2>"$BATS_TEST_TMPDIR/w$1.err" &
  s=$!
  BG_PIDS="${BG_PIDS:-} $s"
  wait_for 10 has_rows "$BATS_TEST_TMPDIR/w$1.csv"
  if (($1 == 1)); then kill "$a"; else kill "$b"; fi
  wait_for 10 gone "$s"
  wait "$s" || rc=$?
  [ "$rc" -eq 0 ]
  [ ! -s "$BATS_TEST_TMPDIR/w$1.err" ]
  if (($1 == 1)); then kill -0 "$b"; else kill -0 "$a"; fi
}

@test "rm-sample --watch-pid twice: it ends when either PID ends, the first or the last named" {
  watch_two 1
  watch_two 2
}

@test "rm-sample --watch-pid of two PIDs, one gone: exit 1 naming it" {
  local live dead
  sleep 300 &
  live=$!
  BG_PIDS="${BG_PIDS:-} $live"
  true &
  dead=$!
  wait "$dead"
  run -1 --separate-stderr timeout 20 rm-sample -i 1 --watch-pid "$dead" --watch-pid "$live"
  [ "$stderr" = "rm-sample: cannot watch PID $dead: No such process" ]
  run -2 --separate-stderr rm-sample -i 1 --watch-pid "$live" --watch-pid x
  [[ "$stderr" == "rm-sample: invalid PID 'x' for --watch-pid"* ]]
}

@test "kill -9 of rm-monitor --watch-pid: rm-sample and rm-tree end with it; the next run removes its status dir" {
  local build mon kids c rows tmp="$BATS_TEST_TMPDIR/tmp"
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
  # The next monitor run (any run-id) clears the dead run's status dir.
  TMPDIR="$tmp" rm-monitor --out-dir "$OUT" --run-id next --interval 0.05 --watch-pid "$build" \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/mon2.err" &
  mon=$!
  BG_PIDS="${BG_PIDS:-} $mon"
  wait_for 10 has_rows "$OUT/resources-next.csv"
  kill "$build"
  wait "$mon"
  [ -s "$OUT/resources-next.summary.txt" ]
  [ -z "$(ls -A "$tmp")" ]
}
