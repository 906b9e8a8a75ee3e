#!/usr/bin/env bash
# Bench section: rm-summarize on a 1,000,000-row system CSV against mawk
# and gawk computing only the peaks; and the whole monitor's CPU cost per
# hour (rm-monitor at --interval 1 with 500 extra processes) beside a
# seed-style bash monitor's at its default 15 s.  Prints Markdown.
set -u

err() { printf 'bench/summarize: %s\n' "$*" >&2; }

readonly RUNS=5
readonly MON_SECONDS=${MON_SECONDS:-20}

# The peaks only: what a hand-written awk summary would compute.
# shellcheck disable=SC2016  # an awk program: its $6 is awk's, not ours
readonly AWK_PEAKS='NR == 1 { next }
NR == 2 || $6 > mu { mu = $6 } NR == 2 || $7 < ma { ma = $7 } NR == 2 || $9 > sw { sw = $9 }
NR == 2 || $10 < dk { dk = $10 } NR == 2 || $4 > ld { ld = $4 } NR == 2 || $5 > cp { cp = $5 }
END { print mu, ma, sw, dk, ld, cp }'

gen_csv() {
  local csv=$1
  [[ -s "${csv}" ]] && return 0
  mawk 'BEGIN {
    print "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills,psi_mem_some,psi_mem_full,psi_io_full,psi_cpu_some"
    for (i = 0; i < 1000000; i++) {
      used = 2000 + (i * 7919) % 14000
      printf "%d.000,2026-01-01T00:00:00.000Z,%d.000,%.2f,%.1f,%d,%d,%.1f,%d,%.2f,%d,%d,stage%d,g++ -O2 -c src/unit%d.cpp -o obj/unit%d.o,0,0.00,0.00,0.00,%.2f\n",
        1767225600 + i, i, (i % 900) / 100, (i % 1000) / 10, used, 16000 - used, used / 160,
        (i % 5000 == 0) ? 64 : 0, 900 - i / 5000, 10, i % 9, i / 100000, i, i, (i % 400) / 100
    }
  }' >"${csv}.tmp" && mv "${csv}.tmp" "${csv}"
}

# median_of FILE: the median of the numbers in FILE, one a line.
median_of() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_runs NAME CMD...: RUNS timed runs; appends
# "NAME median_wall_s max_rss_kib median_cpu_s" (CPU = user + system,
# steadier than wall time on a shared machine).
time_runs() {
  local name=$1 i t rss u s
  shift
  : >"${tmp}/t" && : >"${tmp}/m" && : >"${tmp}/c"
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -f '%e %M %U %S' -o "${tmp}/one" "$@" >/dev/null 2>&1 || err "${name} failed"
    read -r t rss u s <"${tmp}/one"
    echo "${t}" >>"${tmp}/t"
    echo "${rss}" >>"${tmp}/m"
    awk -v u="${u}" -v s="${s}" 'BEGIN { print u + s }' >>"${tmp}/c"
  done
  echo "${name} $(median_of "${tmp}/t") $(sort -n "${tmp}/m" | tail -n 1) $(median_of "${tmp}/c")" >>"${tmp}/results"
}

bench_summarize() {
  local csv="${RM_BUILD}/bench/sys-1m.csv" size ours best name t rss cpu ours_cpu best_cpu
  gen_csv "${csv}" || {
    err "cannot generate ${csv}"
    return 1
  }
  size=$(stat -c %s "${csv}")
  : >"${tmp}/results"
  cat "${csv}" >/dev/null # warm the page cache for every contender
  time_runs rm-summarize rm-summarize --json "${csv}"
  time_runs mawk mawk -F, "${AWK_PEAKS}" "${csv}"
  time_runs gawk gawk -F, "${AWK_PEAKS}" "${csv}"
  ours=$(awk '$1 == "rm-summarize" { print $2 }' "${tmp}/results")
  best=$(awk '$1 != "rm-summarize" { print $2 }' "${tmp}/results" | sort -g | head -n 1)
  ours_cpu=$(awk '$1 == "rm-summarize" { print $4 }' "${tmp}/results")
  best_cpu=$(awk '$1 != "rm-summarize" { print $4 }' "${tmp}/results" | sort -g | head -n 1)
  echo "## rm-summarize: 1,000,000-row system CSV ($((size / 1048576)) MiB), median of ${RUNS}"
  echo
  echo "| reader | median wall s | MB/s | wall vs rm-summarize | median CPU s | CPU vs rm-summarize | max RSS MiB |"
  echo "|---|---|---|---|---|---|---|"
  while read -r name t rss cpu; do
    awk -v n="${name}" -v t="${t}" -v r="${rss}" -v s="${size}" -v o="${ours}" -v c="${cpu}" -v oc="${ours_cpu}" \
      'BEGIN { printf "| %s | %.3f | %.0f | %.2fx | %.3f | %.2fx | %.1f |\n", n, t, (t > 0 ? s / 1e6 / t : 0), (o > 0 ? t / o : 0), c, (oc > 0 ? c / oc : 0), r / 1024 }'
  done <"${tmp}/results"
  echo
  awk -v o="${ours}" -v b="${best}" -v oc="${ours_cpu}" -v bc="${best_cpu}" 'BEGIN { printf "rm-summarize (every peak with time, stage and context, runs, stages, verdicts) is %.1fx faster in wall time and %.1fx in CPU time than the faster awk computing only the six peaks.\n", (o > 0 ? b / o : 0), (oc > 0 ? bc / oc : 0) }'
  echo
}

# cpu_of SECONDS CMD...: run CMD for SECONDS, SIGTERM it, print the CPU
# seconds (user + system) of it and every descendant it reaped.
cpu_of() {
  /usr/bin/python3 - "$@" <<'EOF'
import os, resource, signal, subprocess, sys, time
secs = float(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
time.sleep(secs)
os.killpg(p.pid, signal.SIGTERM)
p.wait()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}")
EOF
}

bench_monitor() {
  local i pids=() ours seed_tick ours_h seed_h seed1_h
  for ((i = 0; i < 500; i++)); do
    sleep 600 &
    pids+=($!)
  done
  mkdir -p "${tmp}/mon" "${tmp}/seed"
  ours=$(cpu_of "${MON_SECONDS}" rm-monitor --out-dir "${tmp}/mon" --run-id b --interval 1)
  seed_tick=$(cpu_of "${MON_SECONDS}" bash tests/fixtures/summarize/seed-resource-monitor.bash \
    --out-dir "${tmp}/seed" --run-id b --interval 1)
  kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  ours_h=$(awk -v c="${ours}" -v s="${MON_SECONDS}" 'BEGIN { printf "%.1f", c / s * 3600 }')
  seed1_h=$(awk -v c="${seed_tick}" -v s="${MON_SECONDS}" 'BEGIN { printf "%.1f", c / s * 3600 }')
  seed_h=$(awk -v c="${seed_tick}" -v s="${MON_SECONDS}" 'BEGIN { printf "%.1f", c / s * 3600 / 15 }')
  echo "## Monitor CPU cost per hour, 500 extra processes (${MON_SECONDS} s measured each, scaled)"
  echo
  echo "| monitor | interval | CPU s measured | CPU s per hour | vs seed at 15 s |"
  echo "|---|---|---|---|---|"
  awk -v c="${ours}" -v h="${ours_h}" -v s="${seed_h}" 'BEGIN { printf "| rm-monitor (rm-sample + rm-tree) | 1 s (and procs 1 s) | %.2f | %.1f | %.2fx |\n", c, h, (s > 0 ? h / s : 0) }'
  awk -v c="${seed_tick}" -v h="${seed1_h}" -v s="${seed_h}" 'BEGIN { printf "| seed-style bash | 1 s | %.2f | %.1f | %.2fx |\n", c, h, (s > 0 ? h / s : 0) }'
  echo "| seed-style bash | 15 s (per-tick cost x 240) | - | ${seed_h} | 1.00x |"
  echo
}

main() {
  tmp=$(mktemp -d) || exit 1
  trap 'rm -rf -- "${tmp}"' EXIT
  if ! command -v mawk >/dev/null || ! command -v gawk >/dev/null; then
    err "mawk and gawk are needed"
    return 1
  fi
  bench_summarize
  bench_monitor
}

tmp=
main "$@"
