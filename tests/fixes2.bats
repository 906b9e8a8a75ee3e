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

# sys_csv FILE MEM_AVAIL SWAP DISK_AVAIL: three rm-sample rows with those
# values (empty for no reading).
sys_csv() {
  local i
  {
    echo 'epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills'
    for i in 0 1 2; do
      echo "$((1796283588 + i)),x,$i,1,5,400,$2,2,$3,$4,${4:+19},0,,,0"
    done
  } >"$1"
}

@test "rm-summarize: available memory not recorded, swap in use: 'not recorded', never nan, in text, Markdown and JSON" {
  local f="$BATS_TEST_TMPDIR/noavail.csv"
  sys_csv "$f" "" 100 50
  run -0 rm-summarize "$f"
  [[ "$output" != *nan* ]]
  [[ "$output" == *"OOM edge: swap in use up to 100 MiB (available memory not recorded), at +0:00:00."* ]]
  [[ "$output" == *"Near-OOM (available below 4096 MiB): not recorded"* ]]
  run -0 rm-summarize --markdown "$f"
  [[ "$output" != *nan* ]]
  [[ "$output" == *"Near-OOM below 4096 MiB available: not recorded."* ]]
  [[ "$output" == *"(available memory not recorded)"* ]]
  [[ "$output" == *"| (none) | 0:00:02 | 3 | 400 | - | 50.00 | 0 | 0 |"* ]]
  run -0 rm-summarize --json "$f"
  [[ "$output" != *[Nn]a[Nn]* ]]
  jq -e '.system.near_oom.samples == null and .system.low_disk.samples == 0' <<<"$output" >/dev/null
  jq -e '.verdicts[0].text | test("available memory not recorded")' <<<"$output" >/dev/null
}

@test "rm-summarize: no disk readings: 'disk not recorded', never 'disk above N GiB' nor a low-disk count" {
  local f="$BATS_TEST_TMPDIR/nodisk.csv"
  sys_csv "$f" 20000 0 ""
  run -0 rm-summarize "$f"
  [[ "$output" != *"disk above"* && "$output" != *nan* ]]
  [[ "$output" == *"No headroom problem: available memory stayed above 4096 MiB, no swap in use, no OOM kill, disk not recorded."* ]]
  [[ "$output" == *"Low disk (available below 20 GiB): not recorded"* ]]
  run -0 rm-summarize --markdown "$f"
  [[ "$output" != *"disk above"* && "$output" != *nan* ]]
  [[ "$output" == *"Low disk below 20 GiB: not recorded."* ]]
  [[ "$output" == *"| (none) | 0:00:02 | 3 | 400 | 20000 | - | 0 | 0 |"* ]]
  run -0 rm-summarize --json "$f"
  jq -e '.system.low_disk.samples == null and .system.near_oom.samples == 0' <<<"$output" >/dev/null
  jq -e '.verdicts[0].text | test("disk not recorded")' <<<"$output" >/dev/null
  # With readings, the same words as before.
  sys_csv "$f" 20000 0 50
  run -0 rm-summarize "$f"
  [[ "$output" == *"no OOM kill, disk above 20 GiB."* ]]
  [[ "$output" == *"Low disk (available below 20 GiB): 0 samples"* ]]
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
