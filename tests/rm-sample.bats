#!/usr/bin/env bats
# rm-sample as a user runs it: options, errors, streaming, formats, hostile
# input, and readings checked against the kernel's files and trusted tools.

setup() {
  load test_helper/common
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill "$p" 2>/dev/null
  done
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
  return 0
}

KILL_PIDS=()

# Start a copy of sleep under another process name; its PID in KILL_PIDS.
spawn_named() {
  [[ -e "$BATS_TEST_TMPDIR/$1" ]] || cp /bin/sleep "$BATS_TEST_TMPDIR/$1"
  "$BATS_TEST_TMPDIR/$1" 60 &
  KILL_PIDS+=("$!")
}

@test "--help prints the usage to stdout and exits 0; --version" {
  run -0 --separate-stderr rm-sample --help
  [[ "${lines[0]}" == "usage: rm-sample "* ]]
  [[ "$output" == *"--context-match ERE"* ]]
  [[ -z "$stderr" ]]
  run -0 rm-sample --version
  [[ "$output" =~ ^rm-sample\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "usage errors exit 2 with one line naming the bad argument, then the usage" {
  local args
  for args in "-i 0" "-i -1" "-i abc" "-n 0" "--watch-pid abc" "--bogus" "-f xml" "-i"; do
    # shellcheck disable=SC2086  # each case is a word list on purpose
    run -2 --separate-stderr rm-sample $args
    [[ -z "$output" ]]
    [[ "${stderr_lines[1]}" == "usage: rm-sample "* ]]
    case "$args" in
      "-i 0") [[ "${stderr_lines[0]}" == "rm-sample: invalid interval '0'"* ]] ;;
      "-i -1") [[ "${stderr_lines[0]}" == "rm-sample: invalid interval '-1'"* ]] ;;
      "-i abc") [[ "${stderr_lines[0]}" == "rm-sample: invalid interval 'abc'"* ]] ;;
      "-n 0") [[ "${stderr_lines[0]}" == "rm-sample: invalid count '0'"* ]] ;;
      "--watch-pid abc") [[ "${stderr_lines[0]}" == "rm-sample: invalid PID 'abc'"* ]] ;;
      "--bogus") [[ "${stderr_lines[0]}" == "rm-sample: unknown option '--bogus'" ]] ;;
      "-f xml") [[ "${stderr_lines[0]}" == "rm-sample: invalid format 'xml'"* ]] ;;
      "-i") [[ "${stderr_lines[0]}" == "rm-sample: option '-i' needs a value" ]] ;;
    esac
  done
}

@test "a PID that does not exist and a disk path that does not exist exit 1, naming them" {
  local dead
  sh -c 'exit 0' &
  dead=$!
  wait "$dead"
  run -1 --separate-stderr rm-sample -i 1 --watch-pid "$dead"
  [[ "$stderr" == "rm-sample: cannot watch PID $dead: No such process" ]]
  run -1 --separate-stderr rm-sample --disk-path /nonexistent/dir
  [[ "$stderr" == "rm-sample: cannot read disk path '/nonexistent/dir': No such file or directory" ]]
}

@test "-n 5 prints the header and 5 rows, each with the header's column count" {
  rm-sample -i 0.05 -n 5 >"$BATS_TEST_TMPDIR/out.csv"
  run -0 wc -l <"$BATS_TEST_TMPDIR/out.csv"
  [[ "$output" == 6 ]]
  run -0 csv_cols "$BATS_TEST_TMPDIR/out.csv"
  [[ "$output" == 19 ]]
  run -0 head -n 1 "$BATS_TEST_TMPDIR/out.csv"
  [[ "$output" == "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills,psi_mem_some,psi_mem_full,psi_io_full,psi_cpu_some" ]]
  # -H drops the header; a one-shot is one row.
  run -0 rm-sample -H
  [[ "${#lines[@]}" == 1 && "${lines[0]}" =~ ^[0-9]+\.[0-9]{3},20 ]]
}

@test "ticks keep to absolute deadlines: 20 rows at 0.05 s, each near a deadline of its own (a stall skips deadlines, delays none)" {
  # On a busy machine a tick can wake late, and a stall (the process not
  # run at all for a while) makes rm_tick_next skip the deadlines it
  # missed, so every later row sits a whole number of intervals later.
  # What makes the deadlines absolute is that a late tick delays no later
  # one: most rows, and one of the last five at least, stay within 0.04 s
  # after start + k * 0.05 for some whole k (the deadline it was due at,
  # which no other row shares).  A machine busy enough to make most ticks
  # late says nothing either way: the run is tried again, at most three
  # times.
  local try
  for try in 1 2 3; do
    rm-sample -i 0.05 -n 20 >"$BATS_TEST_TMPDIR/out.csv"
    run -0 "$PY" -c 'import csv,sys
r=list(csv.DictReader(open(sys.argv[1])))
e=[float(x["elapsed_s"]) - float(r[0]["elapsed_s"]) for x in r]
slots=[int(v / 0.05 + 0.1) for v in e]
dev=[abs(v - k * 0.05) for v, k in zip(e, slots)]
print("# deviations from the deadline due (s):", " ".join(f"{d:.3f}" for d in dev))
print("# deadlines:", " ".join(str(k) for k in slots))
ok = sum(d < 0.04 for d in dev) >= 15 and min(dev[-5:]) < 0.04 and all(b > a for a, b in zip(slots, slots[1:]))
print(len(r), ok)' "$BATS_TEST_TMPDIR/out.csv"
    [[ "${lines[-1]}" == "20 True" ]] && break
    echo "# try $try: ${lines[-1]}"
  done
  printf '%s\n' "${lines[@]}"
  [[ "${lines[-1]}" == "20 True" ]]
}

@test "with -i 10 --watch-pid the stream ends within 0.5 s of the PID's exit (pidfd and polling)" {
  local mode start end pid r0 r1
  for mode in 0 1; do
    # What starting, sampling once and ending costs on this machine now: a
    # busy one adds it to the 0.5 s.
    r0=$(date +%s.%N)
    RM_NO_PIDFD=$mode rm-sample -n 1 >/dev/null
    r1=$(date +%s.%N)
    sleep 1 &
    pid=$!
    start=$(date +%s.%N)
    RM_NO_PIDFD=$mode rm-sample -i 10 --watch-pid "$pid" >"$BATS_TEST_TMPDIR/out.csv"
    end=$(date +%s.%N)
    run -0 awk -v s="$start" -v e="$end" -v r="$(awk -v a="$r0" -v b="$r1" 'BEGIN { print b - a }')" \
      'BEGIN { d = e - s; print (d > 0.9 && d < 1.5 + 2 * r) ? "ok" : d " (reference " r ")" }'
    [[ "$output" == ok ]]
    # The header, the first row, and one last row when the PID ended.
    run -0 wc -l <"$BATS_TEST_TMPDIR/out.csv"
    [[ "$output" == 3 ]]
  done
}

@test "SIGTERM, SIGINT and SIGHUP mid-stream leave only whole rows and exit 0" {
  local sig pid rc
  for sig in TERM INT HUP; do
    rm-sample -i 0.01 >"$BATS_TEST_TMPDIR/$sig.csv" &
    pid=$!
    # Mid-stream: some rows first (a tick is slower on a busy host, so
    # wait for them rather than for a fixed time).
    wait_for 30 bash -c '(($(wc -l <"$1") > 5))' _ "$BATS_TEST_TMPDIR/$sig.csv"
    kill -"$sig" "$pid"
    # (bats' run cannot wait for a child of the test itself: plain wait.)
    rc=0
    wait "$pid" || rc=$?
    [[ "$rc" == 0 ]]
    run -0 csv_cols "$BATS_TEST_TMPDIR/$sig.csv"
    [[ "$output" == 19 ]]
    run -0 tail -c 1 "$BATS_TEST_TMPDIR/$sig.csv"
    [[ "$output" == "" ]]
    [[ $(wc -l <"$BATS_TEST_TMPDIR/$sig.csv") -gt 5 ]]
  done
}

@test "-f jsonl parses with jq, unknown readings are null; -f prom has HELP and TYPE for every metric" {
  run -0 bash -c 'rm-sample -f jsonl -i 0.05 -n 3 | jq -c "[.mem_avail_mb > 0, (.iso|test(\"Z$\")), .context]"'
  [[ "${lines[0]}" == '[true,true,""]' && "${#lines[@]}" == 3 ]]
  RM_PROC_ROOT="$FIXTURES/proc-old" rm-sample -f jsonl >"$BATS_TEST_TMPDIR/old.jsonl"
  run -0 jq -c '[.mem_avail_mb, .psi_mem_some, .oom_kills, .load1]' "$BATS_TEST_TMPDIR/old.jsonl"
  [[ "$output" == '[null,null,null,0.5]' ]]
  rm-sample -f prom >"$BATS_TEST_TMPDIR/out.prom"
  run -0 awk '
    /^# HELP / { help[$3] = 1; next }
    /^# TYPE / { type[$3] = 1; next }
    /^#/ { next }
    { name = $1; sub(/\{.*/, "", name); n++
      if (!(name in help) || !(name in type)) { print "missing HELP/TYPE: " name; bad = 1 } }
    END { if (!bad) print n " samples ok" }' "$BATS_TEST_TMPDIR/out.prom"
  [[ "$output" =~ ^1[0-9]\ samples\ ok$ ]]
  grep -q '^rm_memory_available_bytes{stage=""} [0-9]\+$' "$BATS_TEST_TMPDIR/out.prom"
  grep -q '^# TYPE rm_oom_kills_total counter$' "$BATS_TEST_TMPDIR/out.prom"
}

@test "an old kernel's /proc (no MemAvailable, no pressure, no oom_kill) gives empty fields, not 0" {
  RM_PROC_ROOT="$FIXTURES/proc-old" rm-sample --compilers cc1plus,rustc >"$BATS_TEST_TMPDIR/o.csv"
  run -0 "$PY" -c 'import csv,sys
r=next(csv.DictReader(open(sys.argv[1])))
print(",".join(r[k] for k in ["load1","mem_used_mb","mem_avail_mb","mem_pct","swap_used_mb","compilers","oom_kills","psi_mem_some","psi_mem_full","psi_io_full","psi_cpu_some"]))' "$BATS_TEST_TMPDIR/o.csv"
  # swap lines are absent too; the zombie rustc is not a live compiler.
  [[ "$output" == "0.50,,,,,1,,,,," ]]
}

@test "stage comes from --stage-file, else the newest log; context is its last (matching) line" {
  local d="$BATS_TEST_TMPDIR/logs"
  mkdir -p "$d"
  printf 'configure done\n' >"$d/01-configure.log"
  touch -d '1 hour ago' "$d/01-configure.log"
  printf '[1/2] Building CXX a.cc\nwarning: unused\n[2/2] Building CXX b.cc\n\n' >"$d/02-build.log"
  run -0 rm-sample --stage-log-dir "$d"
  [[ "$(csv_get <(printf '%s\n' "${lines[@]}") stage)" == 02-build ]]
  [[ "$(csv_get <(printf '%s\n' "${lines[@]}") context)" == "[2/2] Building CXX b.cc" ]]
  run -0 rm-sample --stage-log-dir "$d" --context-match '^warning'
  [[ "$(csv_get <(printf '%s\n' "${lines[@]}") context)" == "warning: unused" ]]
  printf 'link-stage\nignored\n' >"$BATS_TEST_TMPDIR/stage"
  run -0 rm-sample --stage-log-dir "$d" --stage-file "$BATS_TEST_TMPDIR/stage"
  [[ "$(csv_get <(printf '%s\n' "${lines[@]}") stage)" == link-stage ]]
  [[ "$(csv_get <(printf '%s\n' "${lines[@]}") context)" == "[2/2] Building CXX b.cc" ]]
  run -2 --separate-stderr rm-sample --context-match '('
  [[ "${stderr_lines[0]}" == "rm-sample: invalid --context-match '('"* ]]
}

@test "hostile log and process names lose nothing: every row parses with the header's columns" {
  local d="$BATS_TEST_TMPDIR/logs" w
  mkdir -p "$d"
  spawn_named 'x,"y) z'
  spawn_named 'q"r) s'
  # A writer appends colour codes, progress bars, commas, quotes, a 1 MiB
  # line, invalid UTF-8 and NUL bytes while rm-sample follows the log.
  (
    for i in $(seq 1 30); do
      printf '\033[1;32m[%d/30]\033[0m Building "CXX" a,b.cc\r\n' "$i"
      printf ' 10%%\r 50%%\r100%% ok\r'
      printf 'bad \xff\xfe utf8 \x00 nul\n'
      if ((i == 10)); then head -c 1048576 /dev/zero | tr '\0' 'x'; printf '\n'; fi
      sleep 0.02
    done
    printf '\033[31mfinal, "line"\033[0m \xc3\xa9\n'
  ) >>"$d/build.log" &
  w=$!
  rm-sample -i 0.02 -n 60 --stage-log-dir "$d" --compilers 'q"r) s' >"$BATS_TEST_TMPDIR/out.csv"
  wait "$w"
  rm-sample --stage-log-dir "$d" -H >>"$BATS_TEST_TMPDIR/out.csv"
  run -0 csv_cols "$BATS_TEST_TMPDIR/out.csv"
  [[ "$output" == 19 ]]
  run -0 csv_get "$BATS_TEST_TMPDIR/out.csv" context 61
  [[ "$output" == 'final, "line" é' ]]
  run -0 "$PY" -c 'import csv,sys
rows=list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
bad=[r["context"] for r in rows if any(ord(c) < 32 or c == "\x7f" for c in r["context"]) or len(r["context"]) > 512]
print(len(bad), max(int(r["compilers"]) for r in rows[:-1]))' "$BATS_TEST_TMPDIR/out.csv"
  [[ "$output" == "0 1" ]]
}

@test "mem_avail_mb agrees with /proc/meminfo and python3-psutil within 2 %" {
  run -0 bash -c 'rm-sample | tail -n 1 | cut -d, -f7; awk "/MemAvailable/ {print int(\$2/1024)}" /proc/meminfo; '"$PY"' -c "import psutil; print(psutil.virtual_memory().available // 1048576)"'
  local ours=${lines[0]} kernel=${lines[1]} ps=${lines[2]}
  run -0 awk -v a="$ours" -v b="$kernel" -v c="$ps" 'BEGIN { ok = (a - b) ^ 2 <= (0.02 * b) ^ 2 && (a - c) ^ 2 <= (0.02 * c) ^ 2; print ok ? "ok" : a " " b " " c }'
  [[ "$output" == ok ]]
}

@test "disk_avail_gb and disk_pct agree with df (0.1 GiB, 1 point)" {
  local path
  for path in / "$BATS_TEST_TMPDIR"; do
    run -0 bash -c "rm-sample --disk-path '$path' | tail -n 1 | cut -d, -f10,11; df -B1 --output=avail,pcent '$path' | tail -n 1"
    run -0 awk -v a="${lines[0]}" -v b="${lines[1]}" 'BEGIN {
      split(a, x, ","); split(b, y, " "); sub(/%/, "", y[2])
      ga = x[1]; gb = y[1] / 1073741824
      ok = (ga - gb) ^ 2 <= 0.01 && (x[2] - y[2]) ^ 2 <= 1
      print ok ? "ok" : a " vs " b }'
    [[ "$output" == ok ]]
  done
}

# compiler_names: the default --compilers names, one a line, from the ERE
# rm-tree --compilers prints (^(cc1|cc1plus|...|clang\+\+|...)$).
compiler_names() {
  rm-tree --compilers | sed 's/^^(//; s/)\$$//; s/\\//g' | tr '|' '\n'
}

@test "compilers counts, by default, every name rm-tree --compilers prints: cc1objplus, collect2, ld.mold too" {
  local root="$BATS_TEST_TMPDIR/proc" pid=200 name names before
  cp -r "$FIXTURES/proc-old" "$root"
  # The fixture's live cc1plus (its rustc is a zombie).
  before=$(RM_PROC_ROOT="$root" rm-sample -H | cut -d, -f12)
  [[ "$before" == 1 ]]
  names=$(compiler_names)
  [[ $'\n'"$names"$'\n' == *$'\ncc1objplus\n'* && "$names" == *collect2* && "$names" == *ld.mold* ]]
  # One live process per name, and one that is no compiler.
  for name in $names make; do
    mkdir "$root/$pid"
    printf '%s\n' "$name" >"$root/$pid/comm"
    printf '%d (%s) S 1 %d %d 0 -1 4194304 0 0 0 0 10 5 0 0 20 0 1 0 500 0 0 0\n' "$pid" "$name" "$pid" "$pid" >"$root/$pid/stat"
    pid=$((pid + 1))
  done
  run -0 env RM_PROC_ROOT="$root" rm-sample -H
  [[ "$(cut -d, -f12 <<<"$output")" == $((1 + $(wc -l <<<"$names"))) ]]
  run -0 env RM_PROC_ROOT="$root" rm-sample -H --compilers cc1objplus
  [[ "$(cut -d, -f12 <<<"$output")" == 1 ]]
}

@test "compilers agrees with pgrep -c -x while two cc1plus and one rustc sleep" {
  spawn_named cc1plus
  spawn_named cc1plus
  spawn_named rustc
  wait_for 5 pgrep -x rustc
  local try ours theirs name
  # Another build on this machine may start or end a compiler between the
  # two reads: compare a few times and accept the first agreement.
  for try in 1 2 3 4 5; do
    ours=$(rm-sample -H | cut -d, -f12)
    # pgrep refuses -x patterns over 15 characters: one call per name of
    # the default list, which rm-tree --compilers prints as an ERE.
    theirs=0
    for name in $(compiler_names); do
      theirs=$((theirs + $(pgrep -c -x "${name//+/\\+}" || true)))
    done
    [[ "$ours" == "$theirs" ]] && break
  done
  [[ "$ours" == "$theirs" && "$ours" -ge 3 ]]
  # --compilers rustc counts the rustc processes of the host: ours and
  # any another build runs meanwhile, so it is compared with pgrep's
  # count taken around it, a few times, and is at least ours.
  for try in 1 2 3 4 5; do
    theirs=$(pgrep -c -x rustc || true)
    run -0 rm-sample -H --compilers rustc
    ours=$(cut -d, -f12 <<<"$output")
    [[ "$ours" == "$theirs" && "$ours" == "$(pgrep -c -x rustc || true)" ]] && break
  done
  echo "rustc: rm-sample ${ours}, pgrep ${theirs}"
  [[ "$ours" == "$theirs" && "$ours" -ge 1 ]]
}

@test "cpu_pct is near 50 % on this 2-core machine while one core spins (and near 100/N elsewhere)" {
  [[ "${VALGRIND:-}" != 1 ]] || skip "under valgrind rm-sample itself keeps a core busy"
  local n expect
  n=$(nproc)
  expect=$((100 / n))
  bash -c 'while :; do :; done' &
  KILL_PIDS+=("$!")
  sleep 0.3
  # The machine may be busy besides: the reference is /proc/stat read by
  # the test over the same second as rm-sample's last row (read as each row
  # arrives).  With one core spinning, busy is at least 100/N.
  run -0 "$PY" - "$expect" <<'EOF'
import subprocess, sys
expect = float(sys.argv[1])
def busy_idle():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + f[4]
    return sum(f[:8]) - idle, idle
p = subprocess.Popen(["rm-sample", "-i", "1", "-n", "3"], stdout=subprocess.PIPE, text=True)
marks, rows = [], []
for line in p.stdout:
    rows.append(line)
    marks.append(busy_idle())
p.wait()
(b0, i0), (b1, i1) = marks[-2], marks[-1]
ref = 100.0 * (b1 - b0) / max(1, (b1 - b0) + (i1 - i0))
v = float(rows[-1].split(",")[4])
print(f"# cpu_pct {v}, /proc/stat over the same second {ref:.1f}, floor {expect}")
print("ok" if abs(v - ref) <= 10 and v >= expect - 10 else "bad")
EOF
  printf '%s\n' "${lines[@]}"
  [[ "${lines[-1]}" == ok ]]
}

@test "-o appends with one header; rows the disk refuses are counted and reported at the end" {
  local f="$BATS_TEST_TMPDIR/a.csv"
  rm-sample -i 0.02 -n 3 -o "$f"
  rm-sample -i 0.02 -n 2 -o "$f"
  run -0 grep -c '^epoch,' "$f"
  [[ "$output" == 1 ]]
  run -0 csv_cols "$f"
  [[ "$output" == 19 ]]
  [[ $(wc -l <"$f") == 6 ]]
  ln -s "$f" "$BATS_TEST_TMPDIR/link.csv"
  run -1 --separate-stderr rm-sample -o "$BATS_TEST_TMPDIR/link.csv"
  [[ "$stderr" == "rm-sample: cannot open '$BATS_TEST_TMPDIR/link.csv': a symbolic link, not followed" ]]
  run -1 --separate-stderr rm-sample -i 0.01 -n 7 -o /dev/full
  [[ "$stderr" =~ ^rm-sample:\ 7\ rows\ lost\ from\ 20[0-9-]+T[0-9:.]+Z:\ cannot\ write\ to\ \'/dev/full\':\ No\ space\ left\ on\ device$ ]]
}

@test "--prom-file is replaced whole every tick, with the --prom-label labels on every sample" {
  local d="$BATS_TEST_TMPDIR/prom" pid n=0 i
  mkdir -p "$d"
  rm-sample -i 0.01 -o /dev/null --prom-file "$d/rm.prom" --prom-label run_id='r"1' \
    --prom-label host=h1 &
  pid=$!
  wait_for 5 test -s "$d/rm.prom"
  # A reader never sees half a file: every read ends with the last metric.
  for ((i = 0; i < 200; i++)); do
    if [[ "$(tail -n 1 "$d/rm.prom")" == rm_pressure_cpu_some_ratio* ]]; then n=$((n + 1)); fi
  done
  kill "$pid"
  wait "$pid"
  ((n == 200))
  run -0 grep -v '^#' "$d/rm.prom"
  local line
  for line in "${lines[@]}"; do
    [[ "$line" == *'{stage="",run_id="r\"1",host="h1"} '* ]]
  done
  # No temporary file is left beside it.
  [[ "$(find "$d" -type f | wc -l)" == 1 ]]
  run -2 --separate-stderr rm-sample --prom-label 9x=1
  [[ "${stderr_lines[0]}" == "rm-sample: invalid --prom-label '9x=1'"* ]]
}

@test "loadavg 1e70 prints every digit and nothing else; nan and inf are empty in CSV, null in JSON, no Prometheus sample" {
  local d="$BATS_TEST_TMPDIR/proc"
  cp -a "$FIXTURES/proc-old" "$d"
  printf '1e70 0.00 0.00 1/1 1\n' >"$d/loadavg"
  RM_PROC_ROOT=$d run -0 rm-sample
  # The double nearest 1e70, digit for digit.
  [ "$(csv_get <(printf '%s\n' "$output") load1)" = 10000000000000000725314363815292351261583744096465219555182101554790400.00 ]
  # Every byte of the row is printable text: no stack bytes, no NUL.
  run -0 bash -c 'RM_PROC_ROOT=$1 rm-sample -H | tr -d "[:print:]\n" | wc -c' _ "$d"
  [ "$output" = 0 ]
  for v in nan inf -inf; do
    printf '%s 0.00 0.00 1/1 1\n' "$v" >"$d/loadavg"
    RM_PROC_ROOT=$d run -0 rm-sample
    [ "$(csv_get <(printf '%s\n' "$output") load1)" = "" ]
    RM_PROC_ROOT=$d run -0 rm-sample -f jsonl
    [ "$(jq -c .load1 <<<"$output")" = null ]
    RM_PROC_ROOT=$d run -0 rm-sample -f prom
    [[ "$output" != *"rm_load1{"* ]]
  done
}

@test "RM_T0 (the monitor run's origin, CLOCK_BOOTTIME seconds) is elapsed_s 0; unset, bad or future values change nothing" {
  local t0
  t0=$(awk '{ printf "%.2f", $1 - 30 }' /proc/uptime) # not print: its %.6g rounds past 10,000 s of uptime
  RM_T0=$t0 run -0 rm-sample -n 2 -i 0.05
  # 30 s before this command started: at least 30, and not a minute more.
  run -0 awk -F, 'NR > 1 && !($3 >= 30 && $3 < 90) { bad = 1 } END { exit bad }' <<<"$output"
  for t0 in "" x -5 999999999999; do
    RM_T0=$t0 run -0 rm-sample -n 1
    [ "$(csv_get <(printf '%s\n' "$output") elapsed_s)" = 0.000 ]
  done
}

@test "under a monitor (RM_T0), an earlier build's log is neither stage nor context; what the run appends to it is" {
  local d="$BATS_TEST_TMPDIR/logs" t0 out="$BATS_TEST_TMPDIR/run.csv"
  mkdir -p "$d"
  echo "old build: linking libold.so" >"$d/build.log"
  touch -d '-60 seconds' "$d/build.log"
  t0=$(awk '{ printf "%.2f", $1 - 5 }' /proc/uptime) # the run began 5 s ago, after that log
  RM_T0=$t0 run -0 rm-sample -n 1 --stage-log-dir "$d"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = "" ]
  [ "$(csv_get <(printf '%s\n' "$output") context)" = "" ]
  # A probe with no run (no RM_T0) still shows the newest log, as before.
  run -0 rm-sample -n 1 --stage-log-dir "$d"
  [ "$(csv_get <(printf '%s\n' "$output") context)" = "old build: linking libold.so" ]
  # The new build appends to the same log during the run: only its line.
  RM_T0=$t0 rm-sample -i 0.1 -n 400 --stage-log-dir "$d" >"$out" &
  local s=$!
  KILL_PIDS+=("$s")
  wait_for 30 grep -q '^[0-9].*,' "$out" # a row, not just the header
  echo "[1/9] CXX src/new.cpp" >>"$d/build.log"
  wait_for 30 grep -q 'src/new.cpp' "$out"
  kill -TERM "$s"
  wait "$s" || true
  run -1 grep -q 'libold' "$out"
  [ "$(csv_get "$out" stage 1)" = "" ]
  grep -q ',build,\[1/9\] CXX src/new.cpp' "$out"
}

# The context is the newest log's last line: read from the end of the
# log (its last 64 KiB) each tick, it cost a build log's worth of reads
# and regexec(3) calls a tick however little the log had changed.  Now an
# unchanged log is not read, and a grown one only from its last line on.
@test "--stage-log-dir: an unchanged log is not read again each tick, a grown one only from its last line, a line written in two parts is whole" {
  local d="$BATS_TEST_TMPDIR/logs" out="$BATS_TEST_TMPDIR/run.csv" s bytes
  mkdir -p "$d"
  # 80 KiB of build log, more than the 64 KiB read from its end.
  for ((i = 0; i < 2000; i++)); do printf '[%d/2000] CXX src/file_%04d.cpp\n' "$i" "$i"; done >"$d/build.log"
  echo "warning: the last warning" >>"$d/build.log"
  echo "[2000/2000] LINK app" >>"$d/build.log"
  strace -y -e trace=read -o "$BATS_TEST_TMPDIR/st" rm-sample -i 0.05 -n 40 --stage-log-dir "$d" \
    --context-match '^warning' >"$out"
  [ "$(csv_get "$out" context 40)" = "warning: the last warning" ]
  bytes=$(awk -F' = ' '/^read\([0-9]+<[^>]*build\.log>/ { n += $NF } END { print n + 0 }' "$BATS_TEST_TMPDIR/st")
  echo "# $bytes bytes of build.log read in 40 ticks" >&3
  ((bytes > 0 && bytes <= 2 * 65537))
  # A grown log: the line written in two parts is whole once it ends;
  # lines that do not match keep the last one that did.
  rm-sample -i 0.05 -n 600 --stage-log-dir "$d" >"$out" &
  s=$!
  KILL_PIDS+=("$s")
  wait_for 30 last_context_is "$out" "[2000/2000] LINK app"
  printf '[1/1] CXX src/pa' >>"$d/build.log"
  wait_for 30 last_context_is "$out" "[1/1] CXX src/pa"
  printf 'rt.cpp\n\n' >>"$d/build.log"
  wait_for 30 last_context_is "$out" "[1/1] CXX src/part.cpp"
  kill -TERM "$s"
  wait "$s" || true
}

# last_context_is CSV TEXT: the last whole row's context is TEXT.
last_context_is() {
  [ "$("$PY" -c 'import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r.get("psi_cpu_some") is not None]
print(rows[-1]["context"] if rows else "")' "$1")" = "$2" ]
}

# --watch-pid given more than once.

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

@test "stage: a stage file missing or empty falls back to the newest log's name; names are trimmed" {
  local d="$BATS_TEST_TMPDIR/st"
  mkdir -p "$d/logs"
  echo "cc -c a.c" >"$d/logs/clean.log"
  run -0 rm-sample --stage-file "$d/never" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  : >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  printf ' \t \n' >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  # A written stage file wins, its name trimmed of spaces and tabs.
  printf '  torch \t\nsecond line\n' >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = torch ]
  run -0 rm-sample --stage-file "$d/stage"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = torch ]
  # A log's name is trimmed too.
  echo x >"$d/logs/ spaced .log"
  run -0 rm-sample --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = spaced ]
}

# shape FIELD: the format class of one CSV field as the seed printed it.
shape() {
  local f=$1
  if [[ "$f" =~ ^-?[0-9]+$ ]]; then echo int
  elif [[ "$f" =~ ^[0-9]+\.[0-9][0-9]$ ]]; then echo dec2
  elif [[ "$f" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]; then echo iso
  elif [[ "$f" =~ ^\".*\"$ ]]; then echo quoted
  else echo "other:$f"
  fi
}

# shapes LINE: the shapes of a row's fields, split as awk -F, splits them.
shapes() {
  local -a f
  IFS=, read -r -a f <<<"$1"
  local x
  for x in "${f[@]}"; do shape "$x"; done | tr '\n' ' '
}

@test "rm-sample --seed-columns writes the seed's 14 columns in the seed's printf formats" {
  local d="$BATS_TEST_TMPDIR/seed"
  mkdir -p "$d/logs" "$d/out"
  echo "[ 12/6233] Building CXX object aten/foo.cpp.o" >"$d/logs/torch.log"
  # The seed's own script (its printf) for two ticks.
  sleep 1.5 &
  bash "$FIXTURES/summarize/seed-resource-monitor.bash" --out-dir "$d/out" --run-id s \
    --interval 1 --stage-log-dir "$d/logs" --watch-pid "$!"
  local seed_head seed_row
  seed_head=$(head -n 1 "$d/out/resources-s.csv")
  seed_row=$(sed -n 2p "$d/out/resources-s.csv")
  run -0 rm-sample --seed-columns --stage-log-dir "$d/logs" -i 0.2 -n 2
  [ "${lines[0]}" = "$seed_head" ]
  [ "$(shapes "${lines[1]}")" = "$(shapes "$seed_row")" ]
  [ "$(shapes "${lines[2]}")" = "$(shapes "$seed_row")" ]
  [ "$(shapes "${lines[1]}")" = "int iso int dec2 int int int int int int int int other:torch quoted " ]
  # What awk and shell arithmetic on the seed's file did, they do on ours.
  [ "$(awk -F, 'NR == 2 { print NF, $NF }' <<<"$output")" = '14 "[ 12/6233] Building CXX object aten/foo.cpp.o"' ]
  local epoch=${lines[1]%%,*}
  (( epoch - 1700000000 > 0 ))
  # The same second in epoch and iso.
  [ "$(date -u -d "@$epoch" +%FT%TZ)" = "$(cut -d, -f2 <<<"${lines[1]}")" ]
  # A context with quotes is quoted as the seed quoted it.
  echo 'say "hi", then' >>"$d/logs/torch.log"
  run -0 rm-sample --seed-columns -H --stage-log-dir "$d/logs"
  [[ "$output" == *',torch,"say ""hi"", then"' ]]
  # Without it: the seed's 14 first and in order, new columns after, epoch in ms.
  run -0 rm-sample
  [[ "${lines[0]}" == "$seed_head,"* ]]
  [[ "${lines[1]%%,*}" =~ ^[0-9]+\.[0-9]{3}$ ]]
  # Nothing the 14 columns cannot hold.
  run -2 --separate-stderr rm-sample --seed-columns --energy
  [[ "$stderr" == "rm-sample: --seed-columns writes the seed's 14 CSV columns: not with -f, --energy, --gpu or --cgroup-path"* ]]
  run -2 rm-sample --seed-columns -f jsonl

}

@test "-o onto a FIFO with no reader is refused at once, not waited on for ever" {
  mkfifo "$BATS_TEST_TMPDIR/fifo"
  run -1 --separate-stderr timeout -s KILL 60 rm-sample -n 1 -o "$BATS_TEST_TMPDIR/fifo"
  [ "$stderr" = "rm-sample: cannot open '$BATS_TEST_TMPDIR/fifo': a FIFO with no reader" ]
}

@test "-o /dev/fd/N onto a file that has rows appends without a second header (rm-monitor's restarted sampler)" {
  local f="$BATS_TEST_TMPDIR/a.csv"
  rm-sample -n 1 -o "$f"
  run -0 bash -c 'rm-sample -n 1 -o /dev/fd/3 3>>"$1"' _ "$f"
  [ "$(grep -c '^epoch,' "$f")" = 1 ]
  [ "$(wc -l <"$f")" = 3 ]
}

@test "rm-sample maps no libm: a running sampler's memory maps name libc and the loader only (libm was 328 KiB of its 2.2 MiB peak RSS)" {
  # STATIC=1 links no shared library at all: nothing to map.
  if ! readelf -d "$RM_TOP/bin/rm-sample" 2>/dev/null | grep -q NEEDED; then
    skip "rm-sample is linked statically (STATIC=1): it maps no shared library"
  fi
  rm-sample -i 0.2 >/dev/null &
  local p=$! maps
  # Mapped once its first row is due; a busy machine may take longer.
  wait_for 30 grep -q 'libc[.-]' "/proc/$p/maps"
  maps=$(awk '$6 ~ /\.so/ { n = split($6, a, "/"); print a[n] }' "/proc/$p/maps" | sort -u)
  kill "$p" 2>/dev/null || true
  wait "$p" || true
  # make check SAN=1: the sanitizer runtimes map libm themselves.
  [[ "$maps" != *libasan* && "$maps" != *libubsan* ]] || skip "a sanitizer build: its runtime maps libm"
  [[ "$maps" == *libc.so* ]]
  [[ "$maps" != *libm.so* ]]
}

@test "--status is one file from the first row to the last, rewritten in place and whole at every look, no temporary file left beside it" {
  local d="$BATS_TEST_TMPDIR/st" ino now seen=0 whole
  whole='^rows_written=[0-9]+
rows_lost=0
first_lost=
lost_error=
gaps=[0-9]+
longest_gap_s=[0-9.]*
stage_fallback=0
events_dropped=[0-9]+
final=[01]$'
  mkdir "$d"
  rm-sample -i 0.02 -n 150 --status "$d/status" -o "$d/rows.csv" &
  local p=$!
  BG_PIDS="${BG_PIDS:-} $p"
  wait_for 30 grep -qx 'rows_written=[1-9][0-9]*' "$d/status"
  ino=$(stat -c %i "$d/status")
  # Read while rows are written: every look holds the nine keys, in order.
  while kill -0 "$p" 2>/dev/null; do
    now=$(cat "$d/status")
    [[ "$now" =~ $whole ]]
    [ "$(stat -c %i "$d/status")" = "$ino" ]
    seen=$((seen + 1))
  done
  wait "$p"
  ((seen > 0))
  grep -qx rows_written=150 "$d/status"
  grep -qx final=1 "$d/status"
  [ "$(stat -c %i "$d/status")" = "$ino" ]
  [ "$(find "$d" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" = "rows.csv status " ]
}
