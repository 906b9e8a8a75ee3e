#!/usr/bin/env bash
# Bench section: scraping rm-sample --listen --min-age 0 (every scrape
# takes a sample) against prometheus-node-exporter with its default
# collectors, side by side in one run: scrape latency (httpload, one
# client) and the server's CPU per scrape (utime + stime of every thread
# from /proc/PID/stat, before and after).  Then 20,000 requests from 32
# concurrent clients against rm-sample with the default --min-age: p50,
# p99, errors.
set -u

err() { printf 'bench/serve: %s\n' "$*" >&2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# cpu_ticks PID: utime + stime of the whole process, in clock ticks.
cpu_ticks() {
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# free_port: a loopback port nothing listens on now.
free_port() {
  /usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# measure PID PORT N: "cpu_ms_per_scrape p50_ms p99_ms errors" for N scrapes.
measure() {
  local pid=$1 port=$2 n=$3 t0 t1 out hz
  hz=$(getconf CLK_TCK)
  t0=$(cpu_ticks "$pid")
  out=$("$RM_BUILD/tests/httpload" -c 1 -n "$n" -t 600 -p /metrics "$port")
  t1=$(cpu_ticks "$pid")
  awk -v a="$t0" -v b="$t1" -v n="$n" -v hz="$hz" -v o="$out" 'BEGIN {
    split(o, f, " "); printf "%.4f %s %s %s\n", (b - a) * 1000 / hz / n, f[8], f[10], f[6] }'
}

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}

work=""

main() {
  local runs=5 n_ours=1000 n_ne=200 i ours_port ne_port ours_pid ne_pid line
  local ours_cpu=() ours_p50=() ours_p99=() ne_cpu=() ne_p50=() ne_p99=() errs=0
  work=$(mktemp -d)
  trap cleanup EXIT
  command -v prometheus-node-exporter >/dev/null || { err "prometheus-node-exporter is not installed"; return 1; }
  [[ -x "$RM_BUILD/tests/httpload" ]] || { err "build $RM_BUILD/tests/httpload first (make bench does)"; return 1; }
  rm-sample --listen 127.0.0.1:0 --min-age 0 2>"$work/ours.err" &
  ours_pid=$!
  pids+=("$ours_pid")
  ne_port=$(free_port)
  prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" 2>"$work/ne.err" &
  ne_pid=$!
  pids+=("$ne_pid")
  for ((i = 0; i < 100; i++)); do
    grep -q 'listening on' "$work/ours.err" && curl -s -o /dev/null "http://127.0.0.1:$ne_port/metrics" && break
    sleep 0.1
  done
  ours_port=$(sed -n 's/^rm-sample: listening on .*:\([0-9]*\)$/\1/p' "$work/ours.err")
  [[ -n "$ours_port" ]] || { err "rm-sample did not start"; return 1; }
  # Warm both up, then alternate runs so that the machine's load falls on both.
  "$RM_BUILD/tests/httpload" -c 1 -n 50 -p /metrics "$ours_port" >/dev/null
  "$RM_BUILD/tests/httpload" -c 1 -n 20 -p /metrics "$ne_port" >/dev/null
  for ((i = 0; i < runs; i++)); do
    read -r c p50 p99 e < <(measure "$ours_pid" "$ours_port" "$n_ours")
    ours_cpu+=("$c"); ours_p50+=("$p50"); ours_p99+=("$p99"); errs=$((errs + e))
    read -r c p50 p99 e < <(measure "$ne_pid" "$ne_port" "$n_ne")
    ne_cpu+=("$c"); ne_p50+=("$p50"); ne_p99+=("$p99"); errs=$((errs + e))
  done
  local oc op o9 nc np n9
  oc=$(printf '%s\n' "${ours_cpu[@]}" | median)
  op=$(printf '%s\n' "${ours_p50[@]}" | median)
  o9=$(printf '%s\n' "${ours_p99[@]}" | median)
  nc=$(printf '%s\n' "${ne_cpu[@]}" | median)
  np=$(printf '%s\n' "${ne_p50[@]}" | median)
  n9=$(printf '%s\n' "${ne_p99[@]}" | median)
  echo "## rm-sample --listen vs prometheus-node-exporter: one scrape (median of $runs runs)"
  echo
  echo "| server | scrapes/run | p50 ms | p99 ms | server CPU ms/scrape | body bytes |"
  echo "|---|---:|---:|---:|---:|---:|"
  printf '| rm-sample --listen --min-age 0 | %d | %s | %s | %s | %s |\n' "$n_ours" "$op" "$o9" "$oc" \
    "$(curl -s "http://127.0.0.1:$ours_port/metrics" | wc -c)"
  printf '| prometheus-node-exporter %s, default collectors | %d | %s | %s | %s | %s |\n' \
    "$(prometheus-node-exporter --version 2>&1 | awk 'NR == 1 { print $3 }')" "$n_ne" "$np" "$n9" "$nc" \
    "$(curl -s "http://127.0.0.1:$ne_port/metrics" | wc -c)"
  echo
  awk -v o="$oc" -v n="$nc" -v e="$errs" 'BEGIN {
    printf "node-exporter / rm-sample CPU per scrape = %.1fx (target >= 5); failed scrapes: %d\n", (o > 0 ? n / o : 0), e }'
  echo
  # The load on a server with the default --min-age (1 s), as deployed.
  rm-sample --listen 127.0.0.1:0 2>"$work/load.err" &
  pids+=("$!")
  for ((i = 0; i < 100; i++)); do grep -q 'listening on' "$work/load.err" && break; sleep 0.1; done
  ours_port=$(sed -n 's/^rm-sample: listening on .*:\([0-9]*\)$/\1/p' "$work/load.err")
  line=$("$RM_BUILD/tests/httpload" -c 32 -n 20000 -t 600 -p /metrics -p /healthz -p "/usage?pid=$ours_pid" "$ours_port")
  echo "20,000 requests from 32 concurrent clients (/metrics, /healthz, /usage in turn, default --min-age): $line"
}

main "$@"
