#!/usr/bin/env bash
# Bench section: rm-tree's steady cost against the host's idle processes.
# rm-tree runs as rm-monitor runs it (exact mode, -i 1, --elsewhere,
# --stats, --live, --containers) following a build (pacer) that starts
# TI_RATE processes a second, once on a host of about TI_LOW processes and
# once with idle processes added up to TI_HIGH, alternately (low, high,
# low, high, ...: each high run is paired with the low run before it).
# CPU from /proc/PID/schedstat (ns) between t = TI_START and TI_END s;
# the CPU before TI_START (the start-up scan of /proc, plus TI_START s
# of ticks) is given apart, less TI_START s at the steady rate.
#
# The idle processes are memhog children (one pid each, well below
# pid_max), in a cpuacct cgroup that the cleanup empties.
#
# Knobs: TI_PAIRS (3), TI_START (20), TI_END (80), TI_LOW (100),
# TI_HIGH (10000), TI_RATE (10).  A quick look: TI_END=40 (BENCH_QUICK=1
# sets it); the output then says the window was shortened.
set -u

TI_PAIRS=${TI_PAIRS:-3}
TI_START=${TI_START:-20}
TI_END=${TI_END:-80}
TI_LOW=${TI_LOW:-100}
TI_HIGH=${TI_HIGH:-10000}
TI_RATE=${TI_RATE:-10}
CPUACCT=/sys/fs/cgroup/cpuacct
MEMHOG="${RM_BUILD}/tests/memhog"
PACER="${RM_BUILD}/bench/pacer"
work=''
idle_cg=''
build_cg=''
build=''
base=0

err() { printf 'bench/tree_idle: %s\n' "$*" >&2; }

procs() { local p=(/proc/[0-9]*); echo "${#p[@]}"; }

# empty CG: every process of cgroup CG killed, then CG removed.
empty() {
  local p i
  [[ -n "$1" && -d "$1" ]] || return 0
  for ((i = 0; i < 100; i++)); do
    p=$(cat "$1/cgroup.procs" 2>/dev/null)
    [[ -n "${p}" ]] || break
    # shellcheck disable=SC2086  # PIDs, one a word
    kill -KILL ${p} 2>/dev/null
    sleep 0.1
  done
  rmdir "$1" 2>/dev/null
}

cleanup() {
  empty "${idle_cg}"
  empty "${build_cg}"
  [[ -z "${work}" ]] || rm -rf -- "${work}"
}

# idle N: N idle processes (added to the host's) until idle_stop.
idle() {
  local i
  rm -f "${work}/up"
  mkdir -p "${idle_cg}"
  bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' - "${idle_cg}" \
    "${MEMHOG}" -N "$1" -j "$1" -t 36000 -r "${work}/up" </dev/null >/dev/null 2>&1 &
  disown
  for ((i = 0; i < 1200; i++)); do [[ -e "${work}/up" ]] && break; sleep 0.1; done
}

# idle_stop: the idle processes killed, and gone from /proc (reaped: the
# next low run must not count thousands still dying), within 2 minutes.
idle_stop() {
  local p i
  for ((i = 0; i < 100; i++)); do
    p=$(cat "${idle_cg}/cgroup.procs" 2>/dev/null)
    [[ -n "${p}" ]] || break
    # shellcheck disable=SC2086  # PIDs, one a word
    kill -KILL ${p} 2>/dev/null
    sleep 0.1
  done
  for ((i = 0; i < 1200; i++)); do
    (($(procs) <= base + 200)) && break
    sleep 0.1
  done
}

ns_of() { local ns; read -r ns _ 2>/dev/null <"/proc/$1/schedstat" && echo "${ns}"; }

# one_run LABEL: rm-tree following the build from t = 0 to TI_END; prints
# "LABEL PROCS STEADY_NS STARTUP_NS LOAD0 LOAD1".
one_run() {
  local t0 pid a b n l0 l1
  l0=$(cut -d' ' -f1 /proc/loadavg)
  n=$(procs)
  t0=${EPOCHREALTIME}
  # --exclude-tree: rm-tree's own (rm-monitor gives its own PID; ours is the build's parent)
  # shellcheck disable=SC2016  # $$ is the inner shell's, which execs rm-tree
  bash -c 'exec rm-tree -i 1 --watch-pid "$1" --elsewhere --exclude-tree $$ --stats "$2/stats.csv" \
    --live "$2/live.csv" --containers "$2/containers.csv" "$3"' - "$$" "${work}" "${build}" \
    </dev/null >"${work}/procs.csv" 2>"${work}/err" &
  pid=$!
  sleep_until "${t0}" "${TI_START}"
  a=$(ns_of "${pid}")
  sleep_until "${t0}" "${TI_END}"
  b=$(ns_of "${pid}")
  l1=$(cut -d' ' -f1 /proc/loadavg)
  kill -TERM "${pid}" 2>/dev/null
  wait "${pid}" 2>/dev/null
  if [[ -z "${a}" || -z "${b}" ]]; then
    err "rm-tree ended early: $(head -3 "${work}/err")"
    return 1
  fi
  echo "$1 ${n} $((b - a)) $((a - (b - a) * TI_START / (TI_END - TI_START))) ${l0} ${l1}"
}

sleep_until() {
  local left
  left=$(awk -v t0="$1" -v s="$2" -v now="${EPOCHREALTIME}" 'BEGIN { d = t0 + s - now; printf "%.3f", (d > 0 ? d : 0) }')
  sleep "${left}"
}

main() {
  local i have add short='' lo hi span
  work=$(mktemp -d) || return 1
  trap cleanup EXIT
  idle_cg="${CPUACCT}/rm-bench-tidle.$$"
  build_cg="${CPUACCT}/rm-bench-tbuild.$$"
  if ! mkdir -p "${idle_cg}" "${build_cg}" 2>/dev/null; then
    echo "## rm-tree's steady cost against the host's idle processes"
    echo
    echo "Skipped: no cgroup v1 cpuacct controller at ${CPUACCT} (to hold and end the idle processes)."
    return 0
  fi
  cc -O2 -o "${PACER}" tests/bench/pacer.c || return 1
  bash -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2" && shift 2 && exec "$@"' - "${build_cg}" "${work}/build.pid" \
    "${PACER}" "${TI_RATE}" 0 </dev/null >/dev/null 2>&1 &
  disown  # killed at the end: no job message
  for ((i = 0; i < 100; i++)); do [[ -s "${work}/build.pid" ]] && break; sleep 0.1; done
  build=$(cat "${work}/build.pid")
  span=$((TI_END - TI_START))
  ((TI_START == 20 && TI_END == 80 && TI_PAIRS >= 3)) ||
    short=" **Shortened run**: window ${TI_START}–${TI_END} s, ${TI_PAIRS} pairs (full: 20–80 s, 3 pairs)."
  echo "## rm-tree's steady cost against the host's idle processes"
  echo
  echo "rm-tree as rm-monitor runs it (exact mode, -i 1, --elsewhere, --stats, --live, --containers),"
  echo "following a build that starts ${TI_RATE} processes a second; CPU from /proc/PID/schedstat (ns) in the"
  echo "window t = ${TI_START}–${TI_END} s; start-up: the CPU before it less ${TI_START} s at the steady rate."
  echo "Low and high runs alternate; each ratio is a high run over the low run before it.${short}"
  echo
  echo "| pair | processes (low / high) | steady s/h (low / high) | ratio | start-up s (low / high) | load (low; high) |"
  echo "|---:|---|---|---:|---|---|"
  base=$(procs)
  for ((i = 1; i <= TI_PAIRS; i++)); do
    have=$(procs)
    ((have < TI_LOW)) && idle $((TI_LOW - have))
    lo=$(one_run low) || return 1
    idle_stop
    have=$(procs)
    add=$((TI_HIGH - have))
    ((add > 0)) && idle "${add}"
    hi=$(one_run high) || return 1
    idle_stop
    read -r _ ln ls lsu la lb <<<"${lo}"
    read -r _ hn hs hsu ha hb <<<"${hi}"
    awk -v i="${i}" -v ln="${ln}" -v hn="${hn}" -v ls="${ls}" -v hs="${hs}" -v lsu="${lsu}" -v hsu="${hsu}" \
      -v w="${span}" -v l="${la} → ${lb}; ${ha} → ${hb}" 'BEGIN {
      printf "| %d | %d / %d | %.2f / %.2f | **%.2f** | %.3f / %.3f | %s |\n", i, ln, hn,
        ls / 1e9 * 3600 / w, hs / 1e9 * 3600 / w, (ls > 0 ? hs / ls : 0), lsu / 1e9, hsu / 1e9, l }'
    awk -v ls="${ls}" -v hs="${hs}" 'BEGIN { printf "%.4f\n", (ls > 0 ? hs / ls : 0) }' >>"${work}/ratios"
  done
  echo
  sort -n "${work}/ratios" | awk '{ r[NR] = $1 } END {
    m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "Median ratio, %s idle processes against %s: **%.2f** (target ≤ 1.2: %s).\n", hi, lo, m, (m <= 1.2 ? "met" : "**missed**") }' \
    lo="${TI_LOW}" hi="${TI_HIGH}"
}

main "$@"
