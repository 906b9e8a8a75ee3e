#!/usr/bin/env bash
# Bench section: the whole rm-monitor at --interval 1 against sysstat's
# collector (sadc 1), in the steady state.  Both run side by side, each in
# a cpuacct cgroup (v1) of its own, so that every process of each counts,
# the wrapper's short-lived children too, in nanoseconds (cpuacct.usage),
# not in 10 ms ticks.  The host holds MON_IDLE idle processes and the
# monitor follows a build (pacer) that starts MON_RATE processes a second.
# The window is t = MON_START to MON_END s after both start; the CPU
# before it (start-up: rm-tree's and rm-sample's first scans, the
# wrapper's --check runs, plus MON_START s of ticks) is given apart.
# Each pair's parts come from /proc/TID/schedstat (run time in ns) of the
# monitor's live tasks at the window's edges; "other" is what the cgroup
# counted beyond them (children that lived and ended inside the window).
#
# Beside them, in a third cgroup, follow_floor: the least an exact
# follower pays in the kernel for each build process (connector and
# taskstats sockets, a 2 ms settle per wake-up, the command line read at
# each exec, a row written per record to a file beside the monitor's, as
# rm-tree writes its rows), so that the table says how much
# of rm-tree's cost any exact follower pays here, and how much is ours.
#
# Knobs: MON_PAIRS (3), MON_START (20), MON_END (320), MON_IDLE (2000),
# MON_RATE (10).  A quick look: MON_END=80 (BENCH_QUICK=1 sets it); the
# output then says that the window was shortened.
set -u

MON_PAIRS=${MON_PAIRS:-3}
MON_START=${MON_START:-20}
MON_END=${MON_END:-320}
MON_IDLE=${MON_IDLE:-2000}
MON_RATE=${MON_RATE:-10}
CPUACCT=/sys/fs/cgroup/cpuacct
MEMHOG="${RM_BUILD}/tests/memhog"
PACER="${RM_BUILD}/bench/pacer"
FLOOR="${RM_BUILD}/bench/follow_floor"
SADC=''
work=''
cgs=()
pids=()

err() { printf 'bench/monitor: %s\n' "$*" >&2; }

cleanup() {
  local p c i
  for p in "${pids[@]}"; do kill -TERM "${p}" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do
    # what is left in each cgroup (the idle processes, a monitor's children)
    p=$(cat "${cgs[@]/%//cgroup.procs}" 2>/dev/null)
    [[ -n "${p}" ]] || break
    # shellcheck disable=SC2086  # PIDs, one a word
    kill -KILL ${p} 2>/dev/null
    sleep 0.1
  done
  for c in "${cgs[@]}"; do rmdir "${c}" 2>/dev/null; done
  [[ -z "${work}" ]] || rm -rf -- "${work}"
}

find_sadc() {
  local d
  for d in /usr/lib/sysstat/sadc /usr/lib64/sa/sadc /usr/libexec/sysstat/sadc; do
    [[ -x "${d}" ]] && SADC=${d} && return 0
  done
  if command -v apt-get >/dev/null; then
    err "sysstat not installed: installing it (apt-get install sysstat)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysstat >/dev/null 2>&1
    [[ -x /usr/lib/sysstat/sadc ]] && SADC=/usr/lib/sysstat/sadc && return 0
  fi
  return 1
}

# in_cgroup CG CMD...: CMD in cgroup CG (made now), in the background; its
# PID in REPLY.  The cleanup ends whatever is left in each such cgroup.
in_cgroup() {
  local cg=$1 i
  shift
  mkdir -p "${cg}" && cgs+=("${cg}")
  rm -f "${work}/pid"
  bash -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2" && shift 2 && exec "$@"' - "${cg}" "${work}/pid" "$@" \
    </dev/null >/dev/null 2>&1 &
  disown  # killed at the end: no job message
  for ((i = 0; i < 100; i++)); do [[ -s "${work}/pid" ]] && break; sleep 0.1; done
  REPLY=$(cat "${work}/pid")
  pids+=("${REPLY}")
}

# tasks_ns CG: "COMM NS" for each live task of CG (its run time so far).
tasks_ns() {
  local t c ns
  while read -r t; do
    read -r ns _ 2>/dev/null <"/proc/${t}/schedstat" || continue
    c=$(cat "/proc/${t}/comm" 2>/dev/null) || continue
    printf '%s %s %s\n' "${t}" "${c}" "${ns}"
  done <"$1/tasks"
}

# parts BEFORE AFTER: "rm-tree rm-sample bash other" ns in the window of
# the tasks alive at both ends, by command name (bash: the wrapper).
parts() {
  awk -v total="$3" 'NR == FNR { a[$1] = $3; next }
    ($1 in a) { d = $3 - a[$1]; k = ($2 == "rm-tree" || $2 == "rm-sample" || $2 == "bash") ? $2 : "x"; s[k] += d; sum += d }
    END { printf "%d %d %d %d\n", s["rm-tree"], s["rm-sample"], s["bash"], total - sum }' "$1" "$2"
}

usage_ns() { cat "$1/cpuacct.usage"; }

sh_of() { awk -v ns="$1" -v s="$2" 'BEGIN { printf "%.2f", ns / 1e9 * 3600 / s }'; }

one_pair() {
  local i=$1 mcg scg fcg t0 m0 m1 s0 s1 f0 f1 l0 l1 span mon sad flo
  mcg="${CPUACCT}/rm-bench-mon.$$.${i}"
  scg="${CPUACCT}/rm-bench-sadc.$$.${i}"
  fcg="${CPUACCT}/rm-bench-floor.$$.${i}"
  mkdir -p "${work}/out.${i}"
  l0=$(cut -d' ' -f1 /proc/loadavg)
  t0=${EPOCHREALTIME}
  in_cgroup "${mcg}" rm-monitor --interval 1 --watch-pid "${build}" --out-dir "${work}/out.${i}"
  local mon_pid=${REPLY}
  in_cgroup "${scg}" "${SADC}" 1 $((MON_END + 30)) "${work}/sa.${i}"
  local sadc_pid=${REPLY}
  in_cgroup "${fcg}" "${FLOOR}" "${work}/floor.${i}.csv"
  local floor_pid=${REPLY}
  sleep_until "${t0}" "${MON_START}"
  m0=$(usage_ns "${mcg}") s0=$(usage_ns "${scg}") f0=$(usage_ns "${fcg}")
  tasks_ns "${mcg}" >"${work}/t0.${i}"
  sleep_until "${t0}" "${MON_END}"
  m1=$(usage_ns "${mcg}") s1=$(usage_ns "${scg}") f1=$(usage_ns "${fcg}")
  tasks_ns "${mcg}" >"${work}/t1.${i}"
  l1=$(cut -d' ' -f1 /proc/loadavg)
  kill -TERM "${mon_pid}" "${sadc_pid}" "${floor_pid}" 2>/dev/null
  while [[ -d "/proc/${mon_pid}" ]]; do sleep 0.2; done
  span=$((MON_END - MON_START))
  mon=$((m1 - m0)) sad=$((s1 - s0)) flo=$((f1 - f0))
  read -r tr sa ba ot < <(parts "${work}/t0.${i}" "${work}/t1.${i}" "${mon}")
  # start-up: the CPU before the window less MON_START s at the steady rate
  local su_m su_s
  su_m=$(awk -v c="${m0}" -v r="${mon}" -v w="${span}" -v s="${MON_START}" 'BEGIN { printf "%.3f", (c - r / w * s) / 1e9 }')
  su_s=$(awk -v c="${s0}" -v r="${sad}" -v w="${span}" -v s="${MON_START}" 'BEGIN { printf "%.3f", (c - r / w * s) / 1e9 }')
  printf '| %d | %s | %s | **%s** | %s / %s / %s / %s | %s | %s | %s s / %s s | %s → %s |\n' "${i}" \
    "$(sh_of "${mon}" "${span}")" "$(sh_of "${sad}" "${span}")" \
    "$(awk -v a="${mon}" -v b="${sad}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "$(sh_of "${tr}" "${span}")" "$(sh_of "${sa}" "${span}")" "$(sh_of "${ba}" "${span}")" "$(sh_of "${ot}" "${span}")" \
    "$(sh_of "${flo}" "${span}")" "$(awk -v a="${tr}" -v b="${flo}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "${su_m}" "${su_s}" "${l0}" "${l1}"
  awk -v a="${mon}" -v b="${sad}" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }' >>"${work}/ratios"
  awk -v a="${tr}" -v b="${flo}" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }' >>"${work}/tree_floor"
  awk -v a="${flo}" -v b="${sad}" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }' >>"${work}/floor_sadc"
}

# sleep_until T0 S: until S seconds after EPOCHREALTIME T0.
sleep_until() {
  local left
  left=$(awk -v t0="$1" -v s="$2" -v now="${EPOCHREALTIME}" 'BEGIN { d = t0 + s - now; printf "%.3f", (d > 0 ? d : 0) }')
  sleep "${left}"
}

main() {
  local i short=''
  if [[ ! -d "${CPUACCT}" ]] || ! mkdir -p "${CPUACCT}/rm-bench-probe.$$" 2>/dev/null; then
    echo "## rm-monitor against sadc"
    echo
    echo "Skipped: no cgroup v1 cpuacct controller at ${CPUACCT} (the CPU of every process of each, in ns)."
    return 0
  fi
  rmdir "${CPUACCT}/rm-bench-probe.$$"
  find_sadc || { err "no sadc (sysstat) and it could not be installed"; return 1; }
  work=$(mktemp -d) || return 1
  trap cleanup EXIT
  cc -O2 -o "${PACER}" tests/bench/pacer.c || return 1
  cc -O2 -Ilib -o "${FLOOR}" tests/bench/follow_floor.c "${RM_BUILD}/librmtools.a" || return 1
  in_cgroup "${CPUACCT}/rm-bench-idle.$$" "${MEMHOG}" -N "${MON_IDLE}" -j "${MON_IDLE}" -t 36000 -r "${work}/up"
  for ((i = 0; i < 1200; i++)); do [[ -e "${work}/up" ]] && break; sleep 0.1; done
  in_cgroup "${CPUACCT}/rm-bench-build.$$" "${PACER}" "${MON_RATE}" 0
  build=${REPLY}
  if ((MON_START != 20 || MON_END != 320 || MON_PAIRS < 3)); then
    short=" **Shortened run**: window ${MON_START}–${MON_END} s, ${MON_PAIRS} pairs (full: 20–320 s, 3 pairs)."
  fi
  echo "## rm-monitor --interval 1 against sadc 1 (steady state)"
  echo
  echo "Side by side, each in a cpuacct cgroup of its own (ns, every process of each): \`rm-monitor"
  echo "--interval 1 --watch-pid BUILD\` and \`sadc 1\` ($("${SADC}" -V 2>&1 | head -1)), window t = ${MON_START}–${MON_END} s,"
  local p=(/proc/[0-9]*)
  echo "${#p[@]} processes on the host (${MON_IDLE} idle added), the build starting ${MON_RATE} processes a second.${short}"
  echo "Parts from /proc/TID/schedstat of the monitor's tasks alive at both ends of the window; other: the"
  echo "cgroup's count beyond them (children that ended inside it). Start-up: the CPU before the window less"
  echo "${MON_START} s at the steady rate. Floor: tests/bench/follow_floor.c, side by side in a cgroup of its own,"
  echo "the least an exact follower pays for each build process (connector and taskstats sockets, a 2 ms"
  echo "settle per wake-up, the command line read at each exec, one write a record to a file beside the monitor's;"
  echo "no table, no tick)."
  echo
  echo "| pair | rm-monitor s/h | sadc s/h | ratio | rm-tree / rm-sample / wrapper / other s/h | floor s/h | rm-tree / floor | start-up: rm-monitor / sadc | load |"
  echo "|---:|---:|---:|---:|---|---:|---:|---:|---|"
  for ((i = 1; i <= MON_PAIRS; i++)); do one_pair "${i}"; done
  echo
  local m f fs
  m=$(median <"${work}/ratios") f=$(median <"${work}/tree_floor") fs=$(median <"${work}/floor_sadc")
  awk -v m="${m}" -v f="${f}" -v fs="${fs}" 'BEGIN {
    printf "Median ratio rm-monitor / sadc: **%.2f** (target ≤ 1.0: %s). ", m, m <= 1.0 ? "met" : "**missed**"
    printf "The floor alone is %.2fx sadc; rm-tree is %.2fx the floor.\n", fs, f }'
}

# median: of the numbers on stdin, one a line (as the other sections').
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

main "$@"
