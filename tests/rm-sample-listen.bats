#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats' run --separate-stderr sets stderr and stderr_lines
# rm-sample --listen as its clients see it: curl and jq on every route,
# a real Prometheus server scraping it, a bounded load (fds and memory
# steady), and hostile clients (half requests, a 1 MiB header).

setup() {
  load test_helper/common
  HTTPLOAD="$RM_BUILD/tests/httpload"
  SRV_PID=
  KILL_PIDS=()
  KILL_DIR=
}

# What a test started: the server, processes in KILL_PIDS, a directory
# outside BATS_TEST_TMPDIR (KILL_DIR: one nobody can reach).
teardown() {
  local p
  if [[ -n "${SRV_PID}" ]]; then kill "${SRV_PID}" 2>/dev/null; fi
  if [[ -n "${PROM_PID:-}" ]]; then kill "${PROM_PID}" 2>/dev/null; fi
  for p in "${KILL_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  if [[ -n "${KILL_DIR}" ]]; then rm -rf "${KILL_DIR}"; fi
  return 0
}

under_valgrind() {
  [[ "${VALGRIND:-}" == 1 ]]
}

# start_server ARGS...: rm-sample ARGS --listen 127.0.0.1:0 in the
# background; PORT is the port it chose (from its stderr).  The file is
# removed first: the background child truncates it only once it runs, so
# a second server's wait could read the first one's line (and port).
start_server() {
  rm -f "$BATS_TEST_TMPDIR/srv.err"
  rm-sample "$@" 2>"$BATS_TEST_TMPDIR/srv.err" &
  SRV_PID=$!
  wait_for 30 grep -q 'listening on' "$BATS_TEST_TMPDIR/srv.err"
  PORT=$(sed -n 's/^rm-sample: listening on .*:\([0-9]*\)$/\1/p' "$BATS_TEST_TMPDIR/srv.err")
  [[ -n "$PORT" ]]
}

# stop_server: SIGTERM, and the server must end with status 0.
stop_server() {
  local rc=0
  kill -TERM "$SRV_PID"
  wait "$SRV_PID" || rc=$?
  SRV_PID=
  cat "$BATS_TEST_TMPDIR/srv.err" >&2
  [[ "$rc" -eq 0 ]]
}

fd_count() { find "/proc/$SRV_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SRV_PID/status"; }
# fd_count_is N: the server has N descriptors open now (counted afresh on
# each call, so wait_for can poll it).
fd_count_is() { [[ "$(fd_count)" -eq "$1" ]]; }
# fds_back_to N [TRIES]: wait until the server is back to N descriptors
# (its connections drain after their answers); if it is not, list them.
fds_back_to() {
  wait_for "${2:-10}" fd_count_is "$1" && return 0
  echo "descriptors: $(fd_count), expected $1:"
  ls -l "/proc/$SRV_PID/fd"
  return 1
}

# free_port: a port nothing listens on now, for a program that cannot
# take port 0 (Prometheus).
free_port() {
  "$PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

@test "--listen: bad addresses are usage errors (exit 2)" {
  local a
  for a in 18093 localhost:80 ":65536" ":x" "::1:80" "[::1]" ""; do
    run -2 --separate-stderr rm-sample --listen "$a"
    [[ "${stderr}" == *"invalid --listen"* ]]
  done
  run -2 --separate-stderr rm-sample --listen :0 --min-age -1
  [[ "${stderr}" == *"invalid --min-age"* ]]
  run -2 --separate-stderr rm-sample --min-age 2
  [[ "${stderr_lines[0]}" == "rm-sample: --min-age needs --listen" ]]
  run -2 --separate-stderr rm-sample --expose-cmdline
  [[ "${stderr_lines[0]}" == "rm-sample: --expose-cmdline needs --listen" ]]
}

@test "--listen: /metrics, /healthz, 404, 405 with Allow: GET; SIGTERM ends it with 0" {
  start_server --listen :0
  run -0 curl -sS -D "$BATS_TEST_TMPDIR/h" "http://127.0.0.1:$PORT/metrics"
  grep -qi '^Content-Type: text/plain; version=0.0.4' "$BATS_TEST_TMPDIR/h"
  [[ "$output" == *"# TYPE rm_memory_used_bytes gauge"* ]]
  [[ "$output" == *"# HELP rm_cpu_busy_ratio "* ]]
  # The same metric names as -f prom.
  diff <(grep '^# TYPE' <<<"$output" | sort) \
       <(rm-sample -f prom | grep '^# TYPE' | sort)
  run -0 curl -sS "http://127.0.0.1:$PORT/healthz"
  [[ "$output" == "ok" ]]
  # A port already taken: a runtime error, said on one line.
  run -1 --separate-stderr rm-sample --listen ":$PORT"
  [[ "$stderr" == "rm-sample: cannot listen on ':$PORT': Address already in use" ]]
  run -0 curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope"
  [[ "$output" == 404 ]]
  run -0 curl -sS -D "$BATS_TEST_TMPDIR/h" -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/metrics"
  [[ "$output" == 405 ]]
  grep -qi '^Allow: GET' "$BATS_TEST_TMPDIR/h"
  stop_server
}

@test "--listen [::1]:0 serves over IPv6" {
  [[ -e /proc/net/if_inet6 ]] || skip "no IPv6 in this kernel"
  start_server --listen '[::1]:0'
  grep -q 'listening on \[::1\]:' "$BATS_TEST_TMPDIR/srv.err"
  run -0 curl -sS -g "http://[::1]:$PORT/healthz"
  [[ "$output" == "ok" ]]
  stop_server
}

@test "--listen: /usage?pid= is rm-tree -f json's object (jq), /bankml/usage the same, no pid is 400" {
  sleep 60 &
  local child=$!
  start_server --listen :0 --expose-cmdline
  run -0 curl -sS "http://127.0.0.1:$PORT/usage?pid=$$"
  echo "$output" | jq -e --argjson c "$child" '
    (.source == "rm-sample") and (.cores >= 1) and (.mem_total_bytes > 0) and
    (.mem_available_bytes <= .mem_total_bytes) and (.swap_total_bytes | type == "number") and
    (.interval_ms == 250) and (.rss_bytes > 0) and (.cpu_percent >= 0) and
    ([.processes[] | select(.pid == $c and .name == "sleep" and .rss_bytes > 0
                            and (.cmd | startswith("sleep 60")))] | length == 1)'
  # The same keys as rm-tree -f json (cmd is ours, with --expose-cmdline).
  diff <(echo "$output" | jq -S 'del(.processes) | keys') \
       <(rm-tree -f json "$$" | jq -S 'del(.processes) | keys')
  run -0 curl -sS "http://127.0.0.1:$PORT/bankml/usage?pid=$child"
  echo "$output" | jq -e --argjson c "$child" '.processes | map(.pid) == [$c]'
  run -0 curl -sS -w '\n%{http_code}' "http://127.0.0.1:$PORT/usage"
  [[ "${lines[0]}" == "missing parameter: pid" && "${lines[1]}" == 400 ]]
  run -0 curl -sS -w '\n%{http_code}' "http://127.0.0.1:$PORT/usage?pid=abc"
  [[ "${lines[0]}" == *"invalid parameter pid"* && "${lines[1]}" == 400 ]]
  kill "$child"
  stop_server
}

@test "--listen with --watch-pid: /usage without pid is the watched tree" {
  sleep 60 &
  local child=$!
  start_server --listen :0 --watch-pid "$child"
  run -0 curl -sS "http://127.0.0.1:$PORT/usage"
  echo "$output" | jq -e --argjson c "$child" '.processes | map(.pid) == [$c]'
  # The watched PID's end stops the server.
  kill "$child"
  wait "$SRV_PID"
  SRV_PID=
}

@test "--listen: concurrent /usage requests share one sample" {
  # Those that come during the 0.5 s window wait for it; any later one
  # gets the same result from the cache.
  start_server --listen :0 --min-age 30
  local i urls=()
  for i in 1 2 3 4 5 6 7 8; do
    urls+=(-o "$BATS_TEST_TMPDIR/u$i" "http://127.0.0.1:$PORT/usage?pid=$$")
  done
  run -0 curl -sS -Z --parallel-immediate --parallel-max 8 "${urls[@]}"
  # Eight answers, one sample: every body is the same bytes.
  [[ $(cat "$BATS_TEST_TMPDIR"/u? | sort -u | wc -l) -eq 1 ]]
  jq -e --argjson p "$$" '.processes[0].pid == $p' "$BATS_TEST_TMPDIR/u1"
  stop_server
}

@test "--listen with -i: /metrics is the last tick's row, CSV rows go on" {
  start_server -i 30 -o "$BATS_TEST_TMPDIR/rows.csv" --listen :0
  wait_for 30 test -s "$BATS_TEST_TMPDIR/rows.csv"
  local a b mem
  a=$(curl -sS "http://127.0.0.1:$PORT/metrics")
  sleep 1.1
  b=$(curl -sS "http://127.0.0.1:$PORT/metrics")
  # No sample of its own: the same row twice, and it is the CSV's.
  [[ "$a" == "$b" ]]
  mem=$(csv_get "$BATS_TEST_TMPDIR/rows.csv" mem_used_mb 1)
  # The CSV rounds to MiB; Prometheus has the bytes.
  awk -v m="$mem" '/^rm_memory_used_bytes/ { d = $2 - m * 1048576; ok = d < 524289 && d > -524289 }
                   END { exit !ok }' <<<"$a"
  [[ $(wc -l <"$BATS_TEST_TMPDIR/rows.csv") -eq 2 ]]
  stop_server
}

@test "--listen without -i: --min-age 0 samples every scrape, the default reuses one" {
  local a b
  cp /bin/sleep "$BATS_TEST_TMPDIR/rmtestcc"
  start_server --listen :0 --min-age 0 --compilers rmtestcc
  a=$(curl -sS "http://127.0.0.1:$PORT/metrics" | sed -n 's/^rm_compilers{[^}]*} //p')
  "$BATS_TEST_TMPDIR/rmtestcc" 60 &
  local cc=$!
  b=$(curl -sS "http://127.0.0.1:$PORT/metrics" | sed -n 's/^rm_compilers{[^}]*} //p')
  kill "$cc"
  wait "$cc" || true
  stop_server
  echo "compilers before ${a}, with one more ${b}"
  [[ "$a" == 0 && "$b" == 1 ]]
  start_server --listen :0 --min-age 60 --compilers rmtestcc
  a=$(curl -sS "http://127.0.0.1:$PORT/metrics" | sed -n 's/^rm_compilers{[^}]*} //p')
  "$BATS_TEST_TMPDIR/rmtestcc" 60 &
  cc=$!
  b=$(curl -sS "http://127.0.0.1:$PORT/metrics" | sed -n 's/^rm_compilers{[^}]*} //p')
  kill "$cc"
  wait "$cc" || true
  [[ "$a" == "$b" ]]
  stop_server
}

@test "--listen beyond loopback leaves cmd out unless --expose-cmdline" {
  unshare -n true 2>/dev/null || skip_needs_root "needs a network namespace (unshare -n, root)" 21
  # In a fresh network namespace 0.0.0.0 reaches nothing but its own lo.
  # shellcheck disable=SC2016  # the script expands $1 and $$ in the namespace
  run -0 unshare -n bash -c '
    ip link set lo up || exit 3
    for opt in "" --expose-cmdline; do
      rm-sample --listen 0.0.0.0:0 $opt 2>"$1/err" &
      pid=$!
      for _ in $(seq 300); do grep -q listening "$1/err" && break; sleep 0.1; done
      port=$(sed -n "s/.*listening on .*:\([0-9]*\)\$/\1/p" "$1/err")
      curl -sS "http://127.0.0.1:$port/usage?pid=$$" | jq -c "[.processes[] | has(\"cmd\")] | unique"
      kill "$pid"; wait "$pid" || exit 4
    done' _ "$BATS_TEST_TMPDIR"
  [[ "${lines[0]}" == "[false]" ]]
  [[ "${lines[1]}" == "[true]" ]]
}

@test "--listen: 1,000 requests leave fds as they were and RSS within 64 KiB of the warm-up's" {
  start_server --listen :0
  local fd0 rss0 rss1
  fd0=$(fd_count)
  run -0 "$HTTPLOAD" -c 8 -n 1000 -t 120 -p /metrics -p "/usage?pid=$$" -p /healthz "$PORT"
  echo "$output"
  rss0=$(rss_kib)
  run -0 "$HTTPLOAD" -c 8 -n 1000 -t 120 -p /metrics -p "/usage?pid=$$" -p /healthz "$PORT"
  echo "$output"
  [[ "$output" == *" errors 0 "* ]]
  rss1=$(rss_kib)
  # Connections drain after their answers: wait for the last ones.
  fds_back_to "$fd0"
  echo "RSS after warm-up ${rss0} KiB, after 1,000 more ${rss1} KiB"
  if ! under_san && ! under_valgrind; then
    [[ $((rss1 - rss0)) -le 64 && $((rss0 - rss1)) -le 64 ]]
  fi
  stop_server
}

@test "--listen: 200 half requests held open do not stop a scrape within 2 s" {
  start_server --listen :0
  "$HTTPLOAD" -S 200 -t 20 "$PORT" >"$BATS_TEST_TMPDIR/held" &
  local slow=$! t
  wait_for 30 grep -q '^held' "$BATS_TEST_TMPDIR/held"
  cat "$BATS_TEST_TMPDIR/held"
  t=$(curl -sS -o "$BATS_TEST_TMPDIR/m" -w '%{time_total}' --max-time 10 "http://127.0.0.1:$PORT/metrics")
  echo "scrape with 200 silent half-requests: ${t} s"
  grep -q '^rm_memory_used_bytes' "$BATS_TEST_TMPDIR/m"
  if ! under_valgrind; then
    awk -v t="$t" 'BEGIN { exit !(t < 2.0) }'
  fi
  kill "$slow" 2>/dev/null || true
  stop_server
}

@test "--listen: 1 MiB of header bytes gets 431, and the server carries on" {
  start_server --listen :0
  run -0 "$HTTPLOAD" -B 1048576 "$PORT"
  [[ "$output" == 431 || "$output" == 400 ]]
  run -0 curl -sS "http://127.0.0.1:$PORT/healthz"
  [[ "$output" == ok ]]
  # A malformed request line: 400, and the server still answers.
  # shellcheck disable=SC2016  # $1 is the inner script's argument
  run -0 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "NOT HTTP\r\n\r\n" >&3; head -c 24 <&3' _ "$PORT"
  [[ "$output" == "HTTP/1.1 400 Bad Request" ]]
  run -0 curl -sS "http://127.0.0.1:$PORT/healthz"
  stop_server
}

@test "--listen: a client that sends half a request and goes silent is cut off (5 s deadline)" {
  start_server --listen :0
  # shellcheck disable=SC2016  # $1 is the inner script's argument
  run -0 timeout 30 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf "GET /metrics HTTP/1.1\r\nHost: x\r\n" >&3
    s=$SECONDS; cat <&3; echo "closed after $((SECONDS - s)) s"' _ "$PORT"
  echo "$output"
  # Nothing was answered, and the server closed it, no earlier than 4 s.
  [[ "$output" =~ ^closed\ after\ ([0-9]+)\ s$ ]]
  (( BASH_REMATCH[1] >= 4 ))
  run -0 curl -sS "http://127.0.0.1:$PORT/healthz"
  stop_server
}

# bats test_tags=slow
@test "--listen: a real Prometheus scrapes /metrics and PromQL returns a fresh value" {
  command -v prometheus >/dev/null || skip "prometheus is not installed"
  start_server --listen :0
  local pport dir="$BATS_TEST_TMPDIR/prom" i ts now v
  pport=$(free_port)
  mkdir -p "$dir/data"
  cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: rm-sample
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn 2>"$dir/log" &
  PROM_PID=$!
  for ((i = 0; i < 120; i++)); do
    v=$(curl -sS "http://127.0.0.1:$pport/api/v1/query?query=timestamp(rm_memory_used_bytes)" 2>/dev/null |
        jq -r '.data.result[0].value[1] // empty' 2>/dev/null) || true
    [[ -n "$v" ]] && break
    sleep 0.5
  done
  [[ -n "$v" ]] || { cat "$dir/log"; false; }
  now=$(date +%s)
  ts=${v%.*}
  echo "sample at ${ts}, now ${now}"
  (( now - ts < 30 ))
  v=$(curl -sS "http://127.0.0.1:$pport/api/v1/query?query=rm_memory_used_bytes" |
      jq -r '.data.result[0].value[1]')
  (( v > 0 ))
  curl -sS "http://127.0.0.1:$pport/api/v1/query?query=up" | jq -e '.data.result[0].value[1] == "1"'
  kill "$PROM_PID"
  wait "$PROM_PID" || true
  PROM_PID=
  stop_server
}

# bats test_tags=slow
@test "--listen: 20,000 requests from 32 concurrent clients, 0 errors, p50/p99 reported" {
  start_server --listen :0
  local fd0
  fd0=$(fd_count)
  run -0 "$HTTPLOAD" -c 32 -n 20000 -t 300 -p /metrics -p "/usage?pid=$$" -p /healthz "$PORT"
  echo "$output" >&3
  [[ "$output" == "requests 20000 ok 20000 errors 0 "* ]]
  fds_back_to "$fd0"
  stop_server
}

@test "--listen: /usage carries package_watts and gpus, the cards as rm-tree -f json gives them" {
  local drm="$FIXTURES/drm/mixed" stub="$RM_BUILD/tests/nvml_stub.so"
  NVML_STUB_LOG="$BATS_TEST_TMPDIR/nvml.log" RM_SYS_ROOT="$drm" RM_NVML_LIB="$stub" \
    start_server --listen :0 --min-age 0
  run -0 curl -sS "http://127.0.0.1:$PORT/usage?pid=$$"
  echo "$output" | jq -e 'has("package_watts") and .package_watts == null and (.gpus | length == 5)'
  diff <(echo "$output" | jq -S 'del(.processes) | keys') \
       <(RM_SYS_ROOT="$drm" RM_NVML_LIB="$stub" rm-tree -f json "$$" | jq -S 'del(.processes) | keys')
  diff <(echo "$output" | jq -c '.gpus') \
       <(RM_SYS_ROOT="$drm" RM_NVML_LIB="$stub" rm-tree -f json "$$" | jq -c '.gpus')
  # Another answer (--min-age 0: a new sample) reads the GPUs again
  # through the same NVML, brought up once for the server.
  run -0 curl -sS "http://127.0.0.1:$PORT/usage?pid=$$"
  echo "$output" | jq -e '[.gpus[] | .card] == ["card0", "card1", "card2", "nvidia0", "nvidia2"]'
  stop_server
  [ "$(cat "$BATS_TEST_TMPDIR/nvml.log")" = $'init\nshutdown' ]
}

# cpu_ticks PID: utime + stime of PID (proc(5) fields 14 and 15).
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

@test "--listen: out of descriptors (EMFILE) the listener backs off, no busy loop (CPU against a spinner's)" {
  command -v prlimit >/dev/null || skip "prlimit is not installed"
  under_valgrind && skip "memcheck's own descriptors change the limit's meaning"
  prlimit --nofile=16 rm-sample --listen :0 -i 1 -o "$BATS_TEST_TMPDIR/o.csv" \
    2>"$BATS_TEST_TMPDIR/srv.err" &
  SRV_PID=$!
  wait_for 30 grep -q 'listening on' "$BATS_TEST_TMPDIR/srv.err"
  PORT=$(sed -n 's/^rm-sample: listening on .*:\([0-9]*\)$/\1/p' "$BATS_TEST_TMPDIR/srv.err")
  # 30 idle clients: the first take the descriptors left, the rest wait
  # in the backlog, which stays readable for the whole window.
  "$PY" -c 'import socket, sys, time
cs = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(30)]
print("connected", flush=True)
time.sleep(8)' "$PORT" >"$BATS_TEST_TMPDIR/clients" &
  local clients=$! spin t0 t1 rm_ticks spin_ticks
  wait_for 30 grep -q connected "$BATS_TEST_TMPDIR/clients"
  # The reference: a busy loop over the same 3 s, on the same host now.
  t0=$(cpu_ticks "$SRV_PID")
  "$PY" -c 'import time
e = time.monotonic() + 3
while time.monotonic() < e: pass' &
  spin=$!
  spin_ticks=0
  while kill -0 "$spin" 2>/dev/null; do
    spin_ticks=$(cpu_ticks "$spin" 2>/dev/null || echo "$spin_ticks"); sleep 0.2
  done
  t1=$(cpu_ticks "$SRV_PID")
  rm_ticks=$((t1 - t0))
  echo "rm-sample: ${rm_ticks} ticks of CPU in the window, the busy loop ${spin_ticks}"
  kill "$clients" 2>/dev/null || true
  (( spin_ticks >= 10 ))
  (( rm_ticks * 4 < spin_ticks ))
  # Descriptors again: it serves.
  wait "$clients" 2>/dev/null || true
  wait_for 30 curl -sS -o /dev/null "http://127.0.0.1:$PORT/healthz"
  stop_server
}

# as_nobody CMD...: CMD as the unprivileged user nobody.
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }

@test "--listen under hidepid=2: /usage shows a peer only its own processes (TCP and unix:PATH), root all; cmd only with --expose-cmdline" {
  [[ $EUID -eq 0 ]] || skip_needs_root "mounts a proc with hidepid and runs clients as nobody" 21
  unshare --mount true 2>/dev/null || skip_needs_root "needs a mount namespace (unshare --mount)" 21
  command -v setpriv >/dev/null || skip "setpriv is not installed"
  local d
  d=$(mktemp -d /tmp/rm-listen-hp.XXXXXX)
  KILL_DIR=$d
  chmod 755 "$d"
  # One process each (a child left behind would hold bats' output open).
  "$PY" -c 'import time; time.sleep(600)' --db-password=hunter2 &
  local rootjob=$!
  setpriv --reuid 65534 --regid 65534 --clear-groups sleep 600 &
  local own=$!
  KILL_PIDS=("$rootjob" "$own")
  # shellcheck disable=SC2016  # the script expands its own arguments
  run -0 unshare --mount --propagation private bash -c '
    d=$1 rootjob=$2 own=$3
    nob() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
    mkdir "$d/proc" && mount -t proc -o hidepid=2 proc "$d/proc" || exit 3
    RM_PROC_ROOT=$d/proc rm-sample --listen :0 2>"$d/tcp.err" & t=$!
    RM_PROC_ROOT=$d/proc rm-sample --listen "unix:$d/sock" 2>"$d/unix.err" & u=$!
    for _ in $(seq 300); do
      grep -q listening "$d/tcp.err" && grep -q listening "$d/unix.err" && break; sleep 0.1
    done
    port=$(sed -n "s/.*listening on .*:\([0-9]*\)\$/\1/p" "$d/tcp.err")
    q() { jq -c "[.processes[].pid] | sort" ; }
    echo "nobody-tcp-root $(nob curl -sS "http://127.0.0.1:$port/usage?pid=$rootjob" | q)"
    echo "nobody-tcp-own $(nob curl -sS "http://127.0.0.1:$port/usage?pid=$own" | q)"
    echo "nobody-tcp-init $(nob curl -sS "http://127.0.0.1:$port/usage?pid=1" |
      jq -c --argjson r "$rootjob" --argjson o "$own" "[(.processes | map(.pid) | index(\$r)), (.processes | map(.pid) | index(\$o) != null)]")"
    echo "nobody-unix-root $(nob curl -sS --unix-socket "$d/sock" "http://x/usage?pid=$rootjob" | q)"
    echo "nobody-unix-own $(nob curl -sS --unix-socket "$d/sock" "http://x/usage?pid=$own" | q)"
    echo "root-tcp-root $(curl -sS "http://127.0.0.1:$port/usage?pid=$rootjob" | q)"
    echo "root-unix-root $(curl -sS --unix-socket "$d/sock" "http://x/usage?pid=$rootjob" | q)"
    echo "cmd $(curl -sS "http://127.0.0.1:$port/usage?pid=$rootjob" | jq -c "[.processes[] | has(\"cmd\")] | unique")"
    echo "socket $(stat -c %F "$d/sock")"
    kill "$t" "$u"; wait "$t" "$u" || exit 4
    echo "socket-after $(stat -c %F "$d/sock" 2>&1 | grep -c "No such")"
    umount "$d/proc"' _ "$d" "$rootjob" "$own"
  echo "$output"
  [[ "$output" == *"nobody-tcp-root []"* ]]
  [[ "$output" == *"nobody-tcp-own [$own]"* ]]
  [[ "$output" == *"nobody-tcp-init [null,true]"* ]]
  [[ "$output" == *"nobody-unix-root []"* ]]
  [[ "$output" == *"nobody-unix-own [$own]"* ]]
  [[ "$output" == *"root-tcp-root [$rootjob]"* ]]
  [[ "$output" == *"root-unix-root [$rootjob]"* ]]
  [[ "$output" == *"cmd [false]"* ]]
  [[ "$output" == *"socket socket"* ]]
  [[ "$output" == *"socket-after 1"* ]]
  # Without hidepid, /proc shows nobody every process's readings: so
  # does /usage (the seed's endpoint, a Prometheus scraper not root).
  start_server --listen :0
  run -0 as_nobody curl -sS "http://127.0.0.1:$PORT/usage?pid=$rootjob"
  echo "$output" | jq -e --argjson r "$rootjob" '[.processes[].pid] | index($r) != null'
  echo "$output" | jq -e '[.processes[] | has("cmd")] | unique == [false]'
  stop_server
}

# spawn N SECS: N processes `sleep SECS` with a 500-byte argv[0], which
# die with the spawner (PR_SET_PDEATHSIG); the spawner's PID in SPAWNER,
# once all of them run.
spawn() {
  "$PY" -c 'import ctypes, os, signal, sys, time
n, secs = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None)
for _ in range(n):
    if os.fork() == 0:
        libc.prctl(1, 9)
        os.execv("/bin/sleep", ["sleep" + "x" * 500, secs])
print("spawned", flush=True)
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
time.sleep(float(secs))' "$1" "$2" >"$BATS_TEST_TMPDIR/spawned" &
  SPAWNER=$!
  KILL_PIDS+=("$SPAWNER")
  wait_for 60 grep -q spawned "$BATS_TEST_TMPDIR/spawned"
}

@test "--listen: 64 clients that do not read a large /usage answer; RSS is back near its start once they close" {
  under_valgrind && skip "memcheck's own heap"
  under_san && skip "ASan keeps freed memory in quarantine"
  spawn 300 120
  start_server --listen :0 --expose-cmdline --min-age 60
  local size rss0 rss1 fd0
  size=$(curl -sS "http://127.0.0.1:$PORT/usage?pid=1" | wc -c)
  rss0=$(rss_kib)
  fd0=$(fd_count)
  "$PY" -c 'import socket, sys, time
cs = []
for _ in range(64):
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(b"GET /usage?pid=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    cs.append(c)
time.sleep(3)
for c in cs: c.close()' "$PORT"
  fds_back_to "$fd0" 30
  rss1=$(rss_kib)
  echo "answer ${size} bytes; RSS ${rss0} KiB before 64 unread answers, ${rss1} KiB after they closed"
  (( size > 150000 ))
  # 64 copies kept would be 64 times the answer; one shared copy and
  # buffers freed on close leave RSS within a few answers of the start.
  (( (rss1 - rss0) * 1024 < 4 * size + 524288 ))
  stop_server
}

# rows_gap CSV: the number of rows and the longest step between two
# rows' epoch, in seconds.
rows_gap() {
  "$PY" -c 'import csv, sys
t = [float(r["epoch"]) for r in csv.DictReader(open(sys.argv[1], newline=""))]
print(len(t), "%.3f" % max([b - a for a, b in zip(t, t[1:])] or [0]))' "$1"
}

# bats test_tags=slow
@test "--listen: a /usage flood from nobody does not delay a tick: rows keep a reference sampler's cadence" {
  [[ $EUID -eq 0 ]] || skip_needs_root "floods as the unprivileged user nobody"
  under_valgrind && skip "memcheck's slowness is the test's own load"
  command -v setpriv >/dev/null || skip "setpriv is not installed"
  # A scan of /proc costs in the number of processes, which any user
  # controls: 1,500 more make each new /usage key a costly one.
  spawn 1500 120
  sleep 8 &
  local w=$! ref fl
  KILL_PIDS+=("$w")
  rm-sample -i 0.2 --watch-pid "$w" -o "$BATS_TEST_TMPDIR/ref.csv" &
  local refp=$!
  KILL_PIDS+=("$refp")
  start_server -i 0.2 --watch-pid "$w" -o "$BATS_TEST_TMPDIR/fl.csv" --listen :0
  # A sample of every process (longer than a 0.2 s interval leaves on a
  # loaded host) is taken in steps between the ticks, and answered.
  run -0 curl -sS -w '\n%{http_code}' "http://127.0.0.1:$PORT/usage?pid=1"
  [[ "${lines[-1]}" == 200 ]]
  echo "${lines[0]}" | jq -e '.processes | length >= 1500'
  # 32 connections from nobody, each asking for a new key (pid=1 and a
  # random PID), a new connection as each answer comes, until w ends.
  run -0 setpriv --reuid 65534 --regid 65534 --clear-groups "$PY" -c '
import collections, random, selectors, socket, sys, time
port, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
sel, seen = selectors.DefaultSelector(), collections.Counter()
def dial():
    s = socket.socket(); s.setblocking(False); s.connect_ex(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_WRITE, [b""])
for _ in range(32): dial()
while time.monotonic() < end:
    for key, ev in sel.select(0.1):
        s, st = key.fileobj, key.data
        try:
            if ev & selectors.EVENT_WRITE:
                s.send(b"GET /usage?pid=1&pid=%d HTTP/1.1\r\nConnection: close\r\n\r\n"
                       % random.randint(2, 4194304))
                sel.modify(s, selectors.EVENT_READ, st); continue
            d = s.recv(65536)
            if d:
                st[0] = (st[0] + d)[:16]; continue
            seen[st[0][9:12].decode() or "none"] += 1
        except OSError:
            seen["error"] += 1
        sel.unregister(s); s.close(); dial()
print(" ".join("%s=%d" % kv for kv in sorted(seen.items())))' "$PORT" 7
  echo "answers: $output"
  wait "$refp"
  wait "$SRV_PID"
  SRV_PID=
  ref=$(rows_gap "$BATS_TEST_TMPDIR/ref.csv")
  fl=$(rows_gap "$BATS_TEST_TMPDIR/fl.csv")
  echo "reference: ${ref} (rows, longest step s); flooded: ${fl}"
  # As many rows as the reference (within one in ten, and two), and no
  # step longer than the reference's longest and two intervals.
  "$PY" -c 'import sys
rn, rg, fn, fg = map(float, sys.argv[1:])
sys.exit(not (fn >= rn * 0.9 - 2 and fg <= rg + 0.4))' $ref $fl
  # New keys beyond the rate are refused, not queued.
  [[ "$output" == *"429="* ]]
}
