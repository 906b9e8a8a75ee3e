#!/usr/bin/env bash
# Bench section: rm-tree's exact (event) mode against sampling.
#
# Completeness: a generated C project of EV_UNITS compile units (default
# 1000), each 20-300 ms of cc1, built with make -j2 under rm-tree --exec
# three times: exact mode, sampling every 1 s and every 0.1 s
# (RM_NO_EVENTS=1).  Ground truth: gcc -wrapper runs every cc1 under GNU
# time, which logs cc1's own peak (%M, wait4's ru_maxrss) with its
# source file.  Reported: coverage (cc1 rows over cc1 runs) and the
# per-unit peak error against GNU time.
#
# Cost: rm-tree as rm-monitor runs it (-i 1 --elsewhere --exclude-tree,
# following an idle watched process) plus rm-sample -i 1, with 2,000
# extra sleeping processes on the host, both in event mode or both
# sampling (RM_NO_EVENTS=1): CPU seconds per hour, the median of EV_REPS
# runs of EV_SECONDS (default 3 x 60 s), whole and after EV_WARM seconds
# (default 5), with the host's process events per second and its load.
# EV_ONLY=cost or EV_ONLY=completeness runs one half.
#
# Smaller runs: EV_UNITS=200 EV_SECONDS=20 EV_REPS=1 bash tests/bench/events.sh
set -u

MEMHOG="${RM_BUILD}/tests/memhog"
UNITS=${EV_UNITS:-1000}
SECS=${EV_SECONDS:-60}
WARM=${EV_WARM:-5}
REPS=${EV_REPS:-3}
work=''
pgids=()

err() { printf 'bench/events: %s\n' "$*" >&2; }

cleanup() {
  local g
  for g in "${pgids[@]}"; do
    kill -TERM -- "-${g}" 2>/dev/null
  done
  if [[ -n "${work}" ]]; then
    rm -rf -- "${work}"
  fi
}

# gen_project DIR N: N C files whose cc1 takes 20-300 ms (the number of
# functions grows with the unit's index modulo 15), and a Makefile.
gen_project() {
  local d=$1 n=$2 i k f
  mkdir -p "$d"
  for ((i = 0; i < n; i++)); do
    k=$((2 + (i * 7) % 15 * 4))
    {
      echo "int u${i}_sink;"
      for ((f = 0; f < k; f++)); do
        echo "static int f${f}(int x) { int a[64]; for (int j = 0; j < 64; j++) a[j] = x * j + ${f}; int s = 0; for (int j = 0; j < 64; j++) s += a[j] ^ (s << 1); return s; }"
      done
      echo "int u${i}(int x) { int s = 0;"
      for ((f = 0; f < k; f++)); do
        echo "  s += f${f}(x + ${f});"
      done
      echo "  return s; }"
    } >"$d/u${i}.c"
  done
  {
    echo "OBJ := \$(patsubst %.c,%.o,\$(wildcard u*.c))"
    echo "all: \$(OBJ)"
    echo "%.o: %.c"
    printf '\tgcc -O2 -wrapper %s -c -o $@ $<\n' "$d/wrap.sh"
  } >"$d/Makefile"
  # The wrapper runs each program gcc starts; cc1 runs under GNU time.
  cat >"$d/wrap.sh" <<'EOF'
#!/bin/sh
case "${1##*/}" in
  cc1)
    for a; do case "$a" in -* | .c) ;; *.c) src=$a ;; esac; done
    t=$(mktemp)
    /usr/bin/time -f %M -o "$t" "$@"
    rc=$?
    echo "${src##*/} $(tail -n 1 "$t")" >>"${GT_LOG}"
    rm -f "$t"
    exit "$rc" ;;
  *) exec "$@" ;;
esac
EOF
  chmod 755 "$d/wrap.sh"
}

# one_build MODE: build from clean under rm-tree in MODE (exact, s1,
# s01); prints "coverage median_err p95_err within1pct".
one_build() {
  local mode=$1 d="${work}/proj" env=() iv=1
  case "${mode}" in
    s1) env=(RM_NO_EVENTS=1) ;;
    s01) env=(RM_NO_EVENTS=1); iv=0.1 ;;
  esac
  rm -f "$d"/*.o "${work}/gt.${mode}" "${work}/log.${mode}"
  GT_LOG="${work}/gt.${mode}" env "${env[@]}" rm-tree --exec -i "${iv}" \
    --log "${work}/log.${mode}" -- make -s -C "$d" -j2 >/dev/null 2>&1
  /usr/bin/python3 - "${work}/gt.${mode}" "${work}/log.${mode}" <<'EOF'
import csv, statistics, sys
gt = {}
for line in open(sys.argv[1]):
    u, m = line.split()
    gt[u] = int(m)
rows = {}
for r in csv.DictReader(open(sys.argv[2], newline="")):
    if r["comm"] != "cc1" or not r["peak_rss_kib"]:
        continue
    for a in (r["cmd"] or "").split():
        if a.endswith(".c") and a != ".c" and not a.startswith("-"):
            rows[a.rsplit("/", 1)[-1]] = int(r["peak_rss_kib"])
errs = sorted(abs(rows[u] - gt[u]) / gt[u] * 100 for u in gt if u in rows)
cov = 100.0 * len(errs) / len(gt) if gt else 0
if errs:
    p95 = errs[min(len(errs) - 1, int(0.95 * len(errs)))]
    w1 = 100.0 * sum(1 for e in errs if e <= 1) / len(errs)
    print(f"{len(gt)} {cov:.1f} {statistics.median(errs):.2f} {p95:.2f} {w1:.1f}")
else:
    print(f"{len(gt)} {cov:.1f} - - -")
EOF
}

completeness() {
  local m r f
  gen_project "${work}/proj" "${UNITS}"
  echo "## rm-tree: exact mode against sampling, completeness (${UNITS} compile units, make -j2)"
  echo
  echo "Ground truth: every cc1 under GNU time through gcc -wrapper (its %M is wait4's ru_maxrss)."
  echo "Coverage: cc1 runs with an exit-log row; error: |rm-tree peak - GNU time %M| / %M per unit."
  echo
  echo "| mode | cc1 runs | coverage % | median error % | p95 error % | units within 1 % |"
  echo "|---|---|---|---|---|---|"
  for m in exact s1 s01; do
    r=$(one_build "$m")
    read -r -a f <<<"$r"
    set -- "${f[@]}"
    case "$m" in
      exact) m="exact (events, -i 1)" ;;
      s1) m="sampled, -i 1" ;;
      s01) m="sampled, -i 0.1" ;;
    esac
    printf '| %s | %s | %s | %s | %s | %s |\n' "$m" "$1" "$2" "$3" "$4" "$5"
  done
}

start_sleepers() {
  setsid "${MEMHOG}" -N "$1" -j "$1" -t 36000 -r "${work}/up.$1" &
  local pid=$! i
  pgids+=("${pid}")
  for ((i = 0; i < 1200; i++)); do
    [[ -e "${work}/up.$1" ]] && break
    sleep 0.1
  done
  sleep 1
}

# cpu_of PID: its user+system clock ticks so far.
cpu_of() {
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# one_cost MODE: CPU seconds per hour of rm-tree and of rm-sample over
# SECS seconds, whole (from their start, the first /proc scan included)
# and steady (from WARM seconds after their start), then the host's
# process events per second (what rm-sample received) and the 1-minute
# load average at the end.
one_cost() {
  local env=() watched t s ct0 cs0 ct cs hz ev
  [[ "$1" == sampled ]] && env=(RM_NO_EVENTS=1)
  hz=$(getconf CLK_TCK)
  sleep 36000 &
  watched=$!
  # --exclude-tree as rm-monitor passes its own PID: here rm-tree's own.
  # shellcheck disable=SC2016 # $$ and $1 are the inner shell's
  env "${env[@]}" sh -c 'exec rm-tree -i 1 --elsewhere --exclude-tree $$ --stats "$1" --log /dev/null "$2"' \
    sh "${work}/stats" "${watched}" 2>/dev/null &
  t=$!
  env "${env[@]}" RM_PCOUNT_STATS=1 rm-sample -i 1 --watch-pid "${watched}" >/dev/null 2>"${work}/sample.err" &
  s=$!
  sleep "${WARM}"
  ct0=$(cpu_of "$t")
  cs0=$(cpu_of "$s")
  sleep "$((SECS - WARM))"
  ct=$(cpu_of "$t")
  cs=$(cpu_of "$s")
  kill "$t" "$s" "${watched}" 2>/dev/null
  wait "$t" "$s" "${watched}" 2>/dev/null
  ev=$(sed -n 's/.*compilers from events: \([0-9]*\) events.*/\1/p' "${work}/sample.err")
  awk -v a="$ct" -v b="$cs" -v a0="$ct0" -v b0="$cs0" -v hz="$hz" -v s="${SECS}" -v w="${WARM}" \
    -v ev="${ev:-0}" -v la="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%.2f %.2f %.2f %.2f %.0f %s\n", a / hz * 3600 / s, b / hz * 3600 / s,
             (a - a0) / hz * 3600 / (s - w), (b - b0) / hz * 3600 / (s - w), ev / s, la }'
}

cost() {
  local m i
  start_sleepers 2000
  echo "## rm-monitor: cost of following a build, event mode against sampling (2,000 extra sleeping processes)"
  echo
  echo "rm-tree as rm-monitor starts it (-i 1 --elsewhere --exclude-tree, following an idle process)"
  echo "and rm-sample -i 1, both in event mode (proc connector, taskstats) or both sampling"
  echo "(RM_NO_EVENTS=1); CPU seconds per hour, median of ${REPS} runs of ${SECS} s.  Whole: from"
  echo "their start (the one /proc scan each makes at the start included); steady: the last"
  echo "$((SECS - WARM)) s.  Host events/s: the fork, exec, comm and exit events of processes (not threads)"
  echo "rm-sample received in event mode, i.e. how busy the rest of the host was."
  echo
  echo "| mode | rm-tree s/h | rm-sample s/h | both s/h, whole | both s/h, steady | host events/s | load avg (1 min) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for m in exact sampled 'exact, without the 2,000'; do
    if [[ "$m" == exact,* ]]; then
      # the same, with the sleepers gone: the cost of following the
      # build must not depend on them
      kill -TERM -- "-${pgids[-1]}" 2>/dev/null
      sleep 2
    fi
    for ((i = 0; i < REPS; i++)); do
      one_cost "${m%%,*}"
    done | awk -v m="$m" '
      function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return a[int((n + 1) / 2)] }
      { t[NR] = $1; s[NR] = $2; w[NR] = $1 + $2; st[NR] = $3 + $4; ev[NR] = $5; la[NR] = $6 }
      END { e = m ~ /^sampled/ ? "-" : sprintf("%.0f", med(ev, NR))
            printf "| %s | %.1f | %.1f | %.1f | %.1f | %s | %.2f |\n", m, med(t, NR), med(s, NR), med(w, NR), med(st, NR), e, med(la, NR) }'
  done
}

main() {
  work=$(mktemp -d) || exit 1
  trap cleanup EXIT
  if [[ "$(rm-tree --exec --log /dev/null -- true 2>&1)" != *"exact mode"* ]]; then
    echo "## rm-tree: exact mode: not available here (needs root / CAP_NET_ADMIN); skipped"
    return 0
  fi
  # EV_ONLY=cost or EV_ONLY=completeness runs one half.
  if [[ "${EV_ONLY:-}" != cost ]]; then
    completeness
    echo
  fi
  if [[ "${EV_ONLY:-}" != completeness ]]; then
    cost
  fi
}

main "$@"
