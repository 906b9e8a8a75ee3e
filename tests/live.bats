#!/usr/bin/env bats
# A running build, seen: rm-tree --live's snapshot, `rm-monitor status`
# on a monitor that runs and on one that is gone, and rm-run --live's
# status line on a real terminal (a pty).

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  KILL_PIDS=()
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill -KILL "$p" 2>/dev/null
  done
  return 0
}

@test "rm-tree --live: the snapshot names the three largest processes now with their units, rewritten every tick" {
  local d="$BATS_TEST_TMPDIR" hog
  hog="$d/bin/cc1plus"
  mkdir -p "$d/bin"
  cp "$MEMHOG" "$hog"
  rm-tree --exec -i 0.2 --live "$d/live.csv" --log /dev/null -- sh -c \
    "'$hog' -m 40 -t 30 -r '$d/up1' -- -quiet src/big.cpp & '$hog' -m 20 -t 30 -r '$d/up2' -- -quiet src/small.cpp & wait" \
    2>/dev/null &
  KILL_PIDS+=($!)
  wait_for 60 test -e "$d/up1"
  wait_for 60 test -e "$d/up2"
  # A snapshot taken after both touched their memory.
  local t
  t=$(date +%s.%N)
  wait_for 60 "$PY" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert float(rows[0]["epoch"]) > float(sys.argv[2]) and len(rows) == 3, rows' "$d/live.csv" "$t"
  run -0 csv_get "$d/live.csv" unit 1
  [ "$output" = src/big.cpp ]
  run -0 csv_get "$d/live.csv" unit 2
  [ "$output" = src/small.cpp ]
  run -0 csv_get "$d/live.csv" proc_rss_kib 1
  ((output >= 40 * 1024))
  run -0 csv_get "$d/live.csv" procs 1
  [ "$output" = 3 ]
  [ "$(stat -c %a "$d/live.csv")" = "$(umask -S >/dev/null; printf '%o' $((0666 & ~0$(umask) & 0644)))" ]
  kill -TERM "${KILL_PIDS[0]}"
  wait "${KILL_PIDS[0]}" || true
  # Beside an exit log of mode 0640 (a root monitor's files), the same mode.
  : >"$d/log640.csv"
  chmod 640 "$d/log640.csv"
  rm-tree --exec -i 0.1 --live "$d/live640.csv" --log "$d/log640.csv" -- sleep 0.3 2>/dev/null
  [ "$(stat -c %a "$d/live640.csv")" = 640 ]
}

@test "rm-tree --live never writes through a symbolic link planted at its name" {
  local d="$BATS_TEST_TMPDIR"
  echo secret >"$d/target"
  ln -s "$d/target" "$d/live.csv"
  run -0 --separate-stderr rm-tree --exec -i 0.1 --live "$d/live.csv" --log /dev/null -- sleep 0.5
  [ "$(cat "$d/target")" = secret ]
  # Said once, not once a tick; CMD ran and its status is rm-tree's.
  [ "$(grep -c "cannot write --live '$d/live.csv': a symbolic link, not followed" <<<"$stderr")" = 1 ]
}

@test "rm-monitor status: a running monitor's run now, then the same run once the monitor is gone" {
  local out="$BATS_TEST_TMPDIR/out" hog="$BATS_TEST_TMPDIR/cc1plus" build
  mkdir -p "$out"
  cp "$MEMHOG" "$hog"
  "$hog" -m 48 -t 120 -r "$BATS_TEST_TMPDIR/up" -- -quiet src/held.cpp &
  build=$!
  KILL_PIDS+=("$build")
  rm-monitor --out-dir "$out" --run-id st --interval 0.2 --procs-interval 0.2 --watch-pid "$build" \
    </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/mon.err" &
  KILL_PIDS+=($!)
  wait_for 60 test -e "$BATS_TEST_TMPDIR/up"
  wait_for 60 grep -q 'src/held.cpp' "$out/resources-st.live.csv"
  run -0 rm-monitor status --out-dir "$out"
  [[ "${lines[0]}" == "Run resources-st: the monitor is running ("*"rm-sample PID "* ]]
  [[ "${lines[0]}" == *"rm-tree PID "* ]]
  [[ "$output" == *"  running  for 0:00:"*"; last sample "*" ago"* ]]
  [[ "$output" == *"  memory   "*" MiB available now; least so far "* ]]
  [[ "$output" == *"processes now, tree "* ]]
  [[ "$output" == *"cc1plus src/held.cpp (PID $build) 4"?.?" MiB"* ]]
  [[ "$output" == *"  OOM      0 kills in the build so far"* ]]
  # The same through a real terminal, as a person runs it.
  run -0 "$PY" - "$out" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("rm-monitor", ["rm-monitor", "status", "--out-dir", sys.argv[1]])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, st = os.waitpid(pid, 0)
text = out.decode("utf-8", "replace")
assert os.WEXITSTATUS(st) == 0, text
assert "the monitor is running" in text and "src/held.cpp" in text, text
EOF
  run -0 rm-monitor status --out-dir "$out" --json st
  run -0 jq -r '.processes.largest[0].unit' <<<"$output"
  [ "$output" = src/held.cpp ]
  kill -TERM "$build"
  wait_for 60 test -s "$out/resources-st.summary.json"
  wait_for 60 bash -c '! pgrep -f "resources-st\." >/dev/null'
  run -0 rm-monitor status --out-dir "$out" st
  [[ "${lines[0]}" == "Run resources-st: the monitor is gone"* ]]
  run -1 --separate-stderr rm-monitor status --out-dir "$out" nosuch
  [[ "$stderr" == *"no such run"* ]]
}

@test "rm-run --live: one status line on a terminal, at most once a second, cleared at the end; none when stderr is no terminal" {
  run -0 "$PY" - "$MEMHOG" <<'EOF'
import os, pty, re, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("rm-run", ["rm-run", "--live", "-i", "0.1", "--quiet", "--", sys.argv[1], "-m", "30", "-t", "3.5"])
t0, out = time.monotonic(), b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
wall = time.monotonic() - t0
os.waitpid(pid, 0)
text = out.decode("utf-8", "replace")
lines = re.findall(r"\r\x1b\[K\[rm-run \+0:00:0\d\] tree [0-9.]+ [MG]iB, peak [0-9.]+ [MG]iB, \d+ process(?:es)?", text)
assert len(lines) >= 2, text
assert len(lines) <= wall + 2, (len(lines), wall)
assert "largest memhog" in text, text
assert text.rstrip("\r\n").endswith("\r\x1b[K"), repr(text[-40:])
print(len(lines), round(wall, 1))
EOF
  run -0 --separate-stderr rm-run --live --quiet -- "$MEMHOG" -m 10 -t 0.5
  [[ "$stderr" != *'[rm-run +'* ]]
}
