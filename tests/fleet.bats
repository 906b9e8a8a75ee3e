#!/usr/bin/env bats
# The fleet view: Debian's prometheus-node-exporter, started here on
# 127.0.0.1 with only its textfile collector, serves what rm-sample,
# rm-energy, rm-gpu and rm-monitor --prom-dir write; and every -f prom
# block keeps Prometheus naming (base units, _total counters, ratios 0..1,
# HELP and TYPE on each).

setup() {
  load test_helper/common
  NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter || true)
  PROM_DIR="$BATS_TEST_TMPDIR/textfile"
  mkdir -p "$PROM_DIR"
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill "$p" 2>/dev/null
  done
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "$p" ]] && wait "$p" 2>/dev/null
  done
  return 0
}

KILL_PIDS=()

# start_exporter DIR: node_exporter on a free 127.0.0.1 port with only the
# textfile collector reading DIR; sets URL once it answers.
start_exporter() {
  local try port pid
  [[ -n "$NODE_EXPORTER" ]] || {
    echo "prometheus-node-exporter is not installed (Debian: apt install prometheus-node-exporter)" >&2
    return 1
  }
  for try in 1 2 3 4 5; do
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$NODE_EXPORTER" --web.listen-address="127.0.0.1:$port" \
      --collector.disable-defaults --collector.textfile \
      --collector.textfile.directory="$1" \
      >"$BATS_TEST_TMPDIR/exporter.log" 2>&1 &
    pid=$!
    KILL_PIDS+=("$pid")
    URL="http://127.0.0.1:$port/metrics"
    if wait_for 10 curl -fsS -o /dev/null "$URL" 2>/dev/null; then
      return 0
    fi
    kill "$pid" 2>/dev/null  # another process took the port: next one
  done
  cat "$BATS_TEST_TMPDIR/exporter.log" >&2
  return 1
}

# scrape FILE: the exporter's page into FILE; fails unless HTTP 200.
scrape() {
  curl -fsS -o "$1" "$URL"
}

# metric FILE NAME: the value of the one sample NAME{...} in FILE.
metric() {
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 { print $NF; found++ }
    END { exit found != 1 }' "$1"
}

# gone PID: PID has ended (a zombie not yet reaped by this shell counts).
gone() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  [[ ${stat:0:1} == Z ]]
}

# write_prom DIR CMD ARGS...: CMD's exposition into DIR/rm-tools.prom the
# way a timer or cron job should: a temporary file in DIR, then rename.
write_prom() {
  local dir=$1 tmp
  shift
  tmp=$(mktemp "$dir/.rm-tools.prom.XXXXXX") || return 1
  if "$@" >"$tmp"; then
    mv -f "$tmp" "$dir/rm-tools.prom"
  else
    rm -f "$tmp"
    return 1
  fi
}

# check_prom FILE: the exposition keeps Prometheus naming; prints every
# problem and fails when there is one.
check_prom() {
  "$PY" - "$1" <<'EOF'
import math, re, sys
bad, help_, type_, seen = [], {}, {}, set()
name_re = re.compile(r'^rm_[a-z][a-z0-9_]*$')
sample_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\})? (\S+)$')
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
if lines[-1] != "":
    bad.append("no final newline")
for ln in lines[:-1]:
    if ln.startswith("# HELP "):
        n, _, text = ln[7:].partition(" ")
        if n in help_: bad.append("second HELP for " + n)
        if not text.strip(): bad.append("empty HELP for " + n)
        help_[n] = text
        continue
    if ln.startswith("# TYPE "):
        n, _, t = ln[7:].partition(" ")
        if n in type_: bad.append("second TYPE for " + n)
        if n not in help_: bad.append("TYPE before HELP for " + n)
        if t not in ("gauge", "counter"): bad.append("%s: type %s" % (n, t))
        type_[n] = t
        continue
    m = sample_re.match(ln)
    if not m:
        bad.append("not a sample line: %r" % ln)
        continue
    n, v = m.group(1), m.group(3)
    seen.add(n)
    if n not in help_ or n not in type_:
        bad.append(n + ": sample without HELP and TYPE before it")
    if not name_re.match(n):
        bad.append(n + ": not an rm_ name in lower_snake")
    if re.search(r'_(mb|kib|gb|gib|mib|kb|pct|percent|ms|us|uj|w|j|c)(_|$)', n):
        bad.append(n + ": not a base unit")
    t = type_.get(n)
    if (t == "counter") != n.endswith("_total"):
        bad.append(n + ": counters, and only counters, end in _total")
    if "joules" in n and t == "counter" and not n.endswith("_joules_total"):
        bad.append(n + ": energy counters end in _joules_total")
    try:
        x = float(v)
    except ValueError:
        bad.append("%s: value %r" % (n, v))
        continue
    if math.isnan(x) or math.isinf(x):
        bad.append(n + ": NaN or Inf stands for an unknown reading")
    if n.endswith("_ratio") and not 0 <= x <= 1:
        bad.append("%s: ratio %s outside 0..1" % (n, v))
    if re.search(r'_(bytes|seconds|joules_total)$', n) and x < 0:
        bad.append("%s: negative %s" % (n, v))
for n in help_:
    if n not in seen: bad.append(n + ": HELP without a sample")
if not seen:
    bad.append("no samples")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

@test "node_exporter's textfile collector serves rm-sample -f prom: rm_ metrics, no scrape error" {
  start_exporter "$PROM_DIR"
  write_prom "$PROM_DIR" rm-sample -f prom
  scrape "$BATS_TEST_TMPDIR/page"
  run -0 metric "$BATS_TEST_TMPDIR/page" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  run -0 grep -c '^rm_' "$BATS_TEST_TMPDIR/page"
  ((output >= 14))
  grep -q '^# HELP rm_memory_available_bytes ' "$BATS_TEST_TMPDIR/page"
  grep -q '^# TYPE rm_memory_available_bytes gauge$' "$BATS_TEST_TMPDIR/page"
  grep -q '^# TYPE rm_oom_kills_total counter$' "$BATS_TEST_TMPDIR/page"
  # What the exporter serves is what the file says, value for value.
  local n want got
  for n in rm_memory_available_bytes rm_disk_available_bytes rm_swap_used_bytes; do
    want=$(metric "$PROM_DIR/rm-tools.prom" "$n")
    got=$(metric "$BATS_TEST_TMPDIR/page" "$n")
    awk -v a="$want" -v b="$got" 'BEGIN { exit !(a + 0 == b + 0 && a + 0 > 0 || a + 0 == 0 && b + 0 == 0) }'
  done
  # And the machine agrees within what moves between two reads.
  want=$(awk '$1 == "MemAvailable:" { print $2 * 1024 }' /proc/meminfo)
  got=$(metric "$BATS_TEST_TMPDIR/page" rm_memory_available_bytes)
  awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 2 * 1024 ^ 3) }'
}

@test "two scrapes a few ticks apart show changed sample values" {
  start_exporter "$PROM_DIR"
  # A writer keeps the file current every 0.2 s, as a timer would.
  (while :; do write_prom "$PROM_DIR" rm-sample -f prom || exit 1; sleep 0.2; done) &
  KILL_PIDS+=("$!")
  wait_for 10 test -e "$PROM_DIR/rm-tools.prom"
  scrape "$BATS_TEST_TMPDIR/page1"
  # 256 MiB more in use for the next few ticks.
  "$PY" -c 'import sys, time; b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(1.5)' &
  KILL_PIDS+=("$!")
  sleep 1
  scrape "$BATS_TEST_TMPDIR/page2"
  run -0 metric "$BATS_TEST_TMPDIR/page1" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  run -0 metric "$BATS_TEST_TMPDIR/page2" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  local a b
  a=$(metric "$BATS_TEST_TMPDIR/page1" rm_memory_used_bytes)
  b=$(metric "$BATS_TEST_TMPDIR/page2" rm_memory_used_bytes)
  [[ -n "$a" && -n "$b" && "$a" != "$b" ]]
  # The exporter re-reads the file at every scrape: the pages differ.
  run -1 diff <(grep '^rm_' "$BATS_TEST_TMPDIR/page1") <(grep '^rm_' "$BATS_TEST_TMPDIR/page2")
}

@test "a hostile stage name is a well-escaped label the exporter parses" {
  printf 'a"b\\c\x1b[31m\xff\nsecond line\n' >"$BATS_TEST_TMPDIR/stage"
  start_exporter "$PROM_DIR"
  write_prom "$PROM_DIR" rm-sample -f prom --stage-file "$BATS_TEST_TMPDIR/stage"
  scrape "$BATS_TEST_TMPDIR/page"
  run -0 metric "$BATS_TEST_TMPDIR/page" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  run -0 grep '^rm_memory_used_bytes{' "$BATS_TEST_TMPDIR/page"
  [[ "$output" == 'rm_memory_used_bytes{stage="a\"b\\c'$'\xef\xbf\xbd''"} '* ]]
}

@test "rm-sample -f prom keeps Prometheus naming: base units, _total, ratios, HELP and TYPE" {
  rm-sample -f prom >"$BATS_TEST_TMPDIR/s.prom"
  run -0 check_prom "$BATS_TEST_TMPDIR/s.prom"
  # The checker does fail: a percentage, a counter without _total, no HELP.
  printf '# HELP rm_cpu_pct x\n# TYPE rm_cpu_pct gauge\nrm_cpu_pct 50\n' >"$BATS_TEST_TMPDIR/bad.prom"
  run -1 check_prom "$BATS_TEST_TMPDIR/bad.prom"
  [[ "$output" == *"rm_cpu_pct: not a base unit"* ]]
  printf '# HELP rm_x_joules x\n# TYPE rm_x_joules counter\nrm_x_joules 5\nrm_y_ratio 2\n' >"$BATS_TEST_TMPDIR/bad.prom"
  run -1 check_prom "$BATS_TEST_TMPDIR/bad.prom"
  [[ "$output" == *"rm_x_joules: counters, and only counters, end in _total"* ]]
  [[ "$output" == *"rm_y_ratio: sample without HELP and TYPE"* ]]
  [[ "$output" == *"rm_y_ratio: ratio 2 outside 0..1"* ]]
}

@test "rm-energy -f prom on the RAPL fixtures keeps Prometheus naming" {
  command -v rm-energy >/dev/null || skip "rm-energy is not built yet"
  local f
  for f in "$FIXTURES"/powercap/*/; do
    RM_SYS_ROOT="$f" rm-energy -f prom >"$BATS_TEST_TMPDIR/e.prom"
    run -0 check_prom "$BATS_TEST_TMPDIR/e.prom"
    grep -q '^rm_rapl_energy_joules_total{' "$BATS_TEST_TMPDIR/e.prom"
    RM_SYS_ROOT="$f" rm-energy -f prom -i 0.05 -n 1 >"$BATS_TEST_TMPDIR/e.prom"
    run -0 check_prom "$BATS_TEST_TMPDIR/e.prom"
    grep -q '^rm_package_energy_joules_total ' "$BATS_TEST_TMPDIR/e.prom"
  done
}

@test "rm-gpu -f prom on the drm fixtures, NVML stub included, keeps Prometheus naming" {
  command -v rm-gpu >/dev/null || skip "rm-gpu is not built yet"
  RM_SYS_ROOT="$FIXTURES/drm/mixed" rm-gpu -f prom >"$BATS_TEST_TMPDIR/g.prom"
  run -0 check_prom "$BATS_TEST_TMPDIR/g.prom"
  grep -q '^rm_gpu_vram_used_bytes{card="card0",driver="amdgpu"} 2147483648$' "$BATS_TEST_TMPDIR/g.prom"
  grep -q '^rm_gpu_busy_ratio{card="card0",driver="amdgpu"} 0.42$' "$BATS_TEST_TMPDIR/g.prom"
  # A card without readings has no samples, never zeros.
  run -1 grep 'card="card2"' "$BATS_TEST_TMPDIR/g.prom"
  if [[ -f "$RM_BUILD/tests/nvml_stub.so" ]]; then
    RM_NVML_LIB="$RM_BUILD/tests/nvml_stub.so" RM_SYS_ROOT="$FIXTURES/drm/mixed" \
      rm-gpu -f prom -i 0.05 -n 1 >"$BATS_TEST_TMPDIR/g.prom"
    run -0 check_prom "$BATS_TEST_TMPDIR/g.prom"
    grep -q '^rm_gpu_power_watts{card="nvidia0",driver="nvidia"} ' "$BATS_TEST_TMPDIR/g.prom"
  fi
}

# same_series FILE: the samples of an exposition that Prometheus would
# take for one series (an empty label is the same as no label); none
# printed and success when there are none.
same_series() {
  "$PY" - "$1" <<'PYEOF'
import re, sys
seen, dup = {}, []
for ln in open(sys.argv[1], encoding="utf-8"):
    if ln.startswith("#") or not ln.strip():
        continue
    m = re.match(r'^([^{ ]+)(?:\{(.*)\})? ', ln)
    labels = tuple(sorted((k, v) for k, v in re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(2) or "") if v))
    key = (m.group(1), labels)
    if key in seen:
        dup.append(seen[key].strip() + "  and  " + ln.strip())
    seen[key] = ln
print("\n".join(dup))
sys.exit(1 if dup else 0)
PYEOF
}

@test "rm-sample, rm-energy and rm-gpu textfiles side by side, as docs/fleet.md sets them up: one page, no clash" {
  command -v rm-energy >/dev/null || skip "rm-energy is not built yet"
  start_exporter "$PROM_DIR"
  write_prom "$PROM_DIR" rm-sample -f prom
  mv "$PROM_DIR/rm-tools.prom" "$PROM_DIR/sample.prom"
  RM_SYS_ROOT="$FIXTURES/powercap/intel1" rm-energy -f prom >"$PROM_DIR/energy.prom"
  if command -v rm-gpu >/dev/null; then
    RM_SYS_ROOT="$FIXTURES/drm/mixed" rm-gpu -f prom >"$PROM_DIR/gpu.prom"
  fi
  scrape "$BATS_TEST_TMPDIR/page"
  run -0 metric "$BATS_TEST_TMPDIR/page" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  grep -q '^rm_memory_used_bytes{' "$BATS_TEST_TMPDIR/page"
  grep -q '^rm_rapl_energy_joules_total{name="package-0",zone="intel-rapl:0"} 100$' "$BATS_TEST_TMPDIR/page"
  if command -v rm-gpu >/dev/null; then
    grep -q '^rm_gpu_busy_ratio{card="card0",driver="amdgpu"} 0.42$' "$BATS_TEST_TMPDIR/page"
  fi
  # No two samples are one series to Prometheus, which would drop them.
  run -0 same_series "$BATS_TEST_TMPDIR/page"
  # The check does catch a clash: the same gauge, with and without an
  # empty label, from two files.
  printf 'rm_x{stage=""} 1\nrm_x 2\n' >"$BATS_TEST_TMPDIR/clash"
  run -1 same_series "$BATS_TEST_TMPDIR/clash"
}

@test "rm-monitor --prom-dir: node_exporter serves its run, labelled, changing, then finished" {
  command -v rm-monitor >/dev/null || skip "rm-monitor is not built yet"
  rm-monitor --help | grep -q -- '--prom-dir' ||
    skip "rm-monitor --help does not mention --prom-dir yet"
  start_exporter "$PROM_DIR"
  local out="$BATS_TEST_TMPDIR/out" a b
  mkdir -p "$out" "$BATS_TEST_TMPDIR/logs"
  sleep 30 &
  local job=$!
  KILL_PIDS+=("$job")
  rm-monitor --prom-dir "$PROM_DIR" --out-dir "$out" --run-id fleet1 \
    --interval 0.2 --stage-log-dir "$BATS_TEST_TMPDIR/logs" --watch-pid "$job" &
  local mon=$!
  KILL_PIDS+=("$mon")
  wait_for 10 test -s "$PROM_DIR/rm-tools-fleet1.prom"
  # The stage's log, written once the run has started (a log older than
  # the run is an earlier build's, never the stage).
  echo "configure" >"$BATS_TEST_TMPDIR/logs/configure.log"
  wait_for 10 grep -q 'stage="configure"' "$PROM_DIR/rm-tools-fleet1.prom"
  scrape "$BATS_TEST_TMPDIR/page1"
  # More memory in use and a new stage for the next few ticks.
  "$PY" -c 'import time; b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(2)' &
  KILL_PIDS+=("$!")
  echo "compile" >"$BATS_TEST_TMPDIR/logs/compile.log"
  sleep 1.2
  scrape "$BATS_TEST_TMPDIR/page2"
  local p
  for p in page1 page2; do
    run -0 metric "$BATS_TEST_TMPDIR/$p" node_textfile_scrape_error
    [[ "$output" == 0 ]]
    # Every rm_ sample carries the run and the stage.
    grep '^rm_' "$BATS_TEST_TMPDIR/$p" >"$BATS_TEST_TMPDIR/$p.rm"
    run -0 wc -l <"$BATS_TEST_TMPDIR/$p.rm"
    ((output >= 10))
    run -1 grep -v 'run_id="fleet1"' "$BATS_TEST_TMPDIR/$p.rm"
    run -1 grep -v 'stage="' "$BATS_TEST_TMPDIR/$p.rm"
  done
  grep -q '^rm_memory_used_bytes{.*stage="configure"' "$BATS_TEST_TMPDIR/page1"
  grep -q '^rm_memory_used_bytes{.*stage="compile"' "$BATS_TEST_TMPDIR/page2"
  a=$(grep '^rm_memory_used_bytes{' "$BATS_TEST_TMPDIR/page1" | awk '{ print $NF }')
  b=$(grep '^rm_memory_used_bytes{' "$BATS_TEST_TMPDIR/page2" | awk '{ print $NF }')
  [[ -n "$a" && -n "$b" && "$a" != "$b" ]]
  # The file is whole at every instant: the collector never sees a torn one.
  local i
  for ((i = 0; i < 10; i++)); do
    check_prom "$PROM_DIR/rm-tools-fleet1.prom"
    sleep 0.07
  done
  # The run ends with the watched PID: the file is gone or says finished.
  kill "$job"
  wait_for 10 gone "$mon"
  if [[ -e "$PROM_DIR/rm-tools-fleet1.prom" ]]; then
    grep -Eq '^rm_monitor_finished(\{[^}]*\})? 1$' "$PROM_DIR/rm-tools-fleet1.prom"
  fi
  run -0 ls -A "$PROM_DIR"
  [[ "$output" != *.rm-tools-fleet1.prom.* ]]
}

# doc_file NAME: the fenced block docs/fleet.md marks "<!-- file: NAME -->".
doc_file() {
  awk -v m="<!-- file: $1 -->" '$0 == m { f = 1; next }
    f && /^```/ && !b { b = 1; next }
    b && /^```$/ { exit }
    b' "$RM_TOP/docs/fleet.md"
}

need_promtool() {
  command -v promtool >/dev/null ||
    skip "promtool is not installed (Debian: apt install prometheus)"
}

@test "docs/fleet.md: promtool accepts its alert rules and its prometheus.yml" {
  need_promtool
  cd "$BATS_TEST_TMPDIR"
  doc_file rm-tools.rules.yml >rm-tools.rules.yml
  doc_file prometheus.yml >prometheus.yml
  run -0 promtool check rules rm-tools.rules.yml
  [[ "$output" == *"SUCCESS: 3 rules found"* ]]
  run -0 promtool check config prometheus.yml
  grep -q 'predict_linear(' rm-tools.rules.yml
}

@test "docs/fleet.md: the alerts fire on near-OOM with compilers and a disk full within the hour, and only then" {
  need_promtool
  cd "$BATS_TEST_TMPDIR"
  doc_file rm-tools.rules.yml >rm-tools.rules.yml
  cp "$FIXTURES/fit/alerts.test.yml" .
  run -0 promtool test rules alerts.test.yml
  [[ "$output" == *SUCCESS* ]]
  # The test can fail: a 4 GiB threshold halved no longer pages for b1.
  sed -i 's/< 4 \* 1024/< 2 * 1024/' rm-tools.rules.yml
  run -1 promtool test rules alerts.test.yml
}

@test "docs/fleet.md: the timer's command writes a file node_exporter serves" {
  local cmd
  cmd=$(doc_file rm-sample-prom.service | sed -n 's/^ExecStart=\/bin\/sh -c //p')
  cmd=${cmd#\'}
  cmd=${cmd%\'}
  [[ "$cmd" == *'rm-sample -f prom'*'mv -f'* ]]
  cmd=${cmd//\/var\/lib\/prometheus\/node-exporter/$PROM_DIR}
  cmd=${cmd//\/run\/build-stage/$BATS_TEST_TMPDIR/stage}
  echo "compile aten" >"$BATS_TEST_TMPDIR/stage"
  sh -c "$cmd"
  run -0 ls -A "$PROM_DIR"
  [[ "$output" == rm-tools.prom ]]
  start_exporter "$PROM_DIR"
  scrape "$BATS_TEST_TMPDIR/page"
  run -0 metric "$BATS_TEST_TMPDIR/page" node_textfile_scrape_error
  [[ "$output" == 0 ]]
  grep -q '^rm_memory_available_bytes{stage="compile aten"} ' "$BATS_TEST_TMPDIR/page"
}

@test "docs/fleet.md names only rm_ metrics the commands print" {
  local all="$BATS_TEST_TMPDIR/all.prom" n
  rm-sample -f prom >"$all"
  if command -v rm-energy >/dev/null; then
    RM_SYS_ROOT="$FIXTURES/powercap/intel1" rm-energy -f prom >>"$all"
    RM_SYS_ROOT="$FIXTURES/powercap/intel1" rm-energy -f prom -i 0.05 -n 1 >>"$all"
  fi
  if command -v rm-gpu >/dev/null; then
    RM_SYS_ROOT="$FIXTURES/drm/mixed" rm-gpu -f prom >>"$all"
  fi
  run -0 grep -oE '\brm_[a-z0-9_]+' "$RM_TOP/docs/fleet.md"
  ((${#lines[@]} >= 15))
  for n in $(printf '%s\n' "${lines[@]}" | sort -u); do
    grep -q "^# TYPE $n " "$all" || {
      echo "docs/fleet.md names $n, which no command prints"
      return 1
    }
  done
}
