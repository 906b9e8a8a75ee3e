#!/usr/bin/env bash
# Bench section: rm-summarize on a 1,000,000-row system CSV against mawk
# and gawk computing only the peaks; rm-summarize on a 24-hour run (86,400
# system rows at 1 s) with a 1,000,000-row exit log against mawk computing
# the seed's summary, and again with a 10,000,000-row log (about 1.2 GB in
# the build tree, generated once; EXITLOG_10M=0 leaves it out, as
# BENCH_QUICK=1 does; EXITLOG_ROWS=N runs N rows instead of 1,000,000); and
# the whole monitor's CPU cost per hour (rm-monitor at
# --interval 1 with 500 extra processes) beside a seed-style bash monitor's
# at its default 15 s.  Prints Markdown.
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

# gen_run PREFIX ROWS: PREFIX.csv, 24 hours of rm-sample rows at 1 s, and
# PREFIX.procs.csv, ROWS rows of rm-tree's 22-column exit log: one in eight
# a cc1plus of one of 10,000 units, the others make, sh, as and sed.
gen_run() {
  local pre=$1 rows=$2
  [[ -s "${pre}.procs.csv" && -s "${pre}.csv" ]] && return 0
  mawk -v pre="${pre}" -v rows="${rows}" 'BEGIN {
    s = pre ".csv.tmp"; p = pre ".procs.csv.tmp"
    print "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills,psi_mem_some,psi_mem_full,psi_io_full,psi_cpu_some" > s
    for (i = 0; i < 86400; i++) {
      used = 2000 + (i * 7919) % 14000
      printf "%d.000,2026-01-01T00:00:00.000Z,%d.000,%.2f,%.1f,%d,%d,%.1f,%d,%.2f,%d,%d,stage%d,[%d/10000] Building CXX object src/unit%d.cpp.o,0,0.00,0.00,0.00,%.2f\n",
        1767225600 + i, i, (i % 900) / 100, (i % 1000) / 10, used, 16000 - used, used / 160,
        (i % 5000 == 0) ? 64 : 0, 900 - i / 5000, 10, i % 9, i / 10800, i % 10000, i % 10000, (i % 400) / 100 > s
    }
    print "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope,emulated,uid" > p
    for (i = 0; i < rows; i++) {
      pid = 1000 + i % 4000000; st = i * 86000 / rows; en = st + (i % 37) / 10
      x = sprintf("%d,%d,%d,%d,%d,0,%d,0,exact,,no,1000", (i * 13) % 5000, (i * 17) % 7000, i % 3, i % 50, i % 7, i % 11 ? 0 : i % 900)
      if (i % 8 == 0) {
        u = (i / 8) % 10000
        printf "%d,999,cc1plus,%.3f,%.3f,%d,%.3f,%.2f,0,/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet -O2 src/dir%d/unit%d.cpp -o /tmp/cc%d.s,%s\n",
          pid, st, en, 100000 + (i * 2654435761) % 900000, en, (i % 50) / 10, u % 97, u, i, x > p
      } else {
        c = i % 4
        comm = c == 0 ? "sh" : c == 1 ? "as" : c == 2 ? "make" : "sed"
        printf "%d,999,%s,%.3f,%.3f,%d,%.3f,%.2f,0,%s -c step%d,%s\n", pid, comm, st, en, 1000 + (i * 40503) % 50000, en, (i % 10) / 100, comm, i % 1000, x > p
      }
    }
    close(s); close(p)
  }' && mv "${pre}.csv.tmp" "${pre}.csv" && mv "${pre}.procs.csv.tmp" "${pre}.procs.csv"
}

# The seed's summary in mawk: the six peaks with time, stage and context,
# the near-OOM and low-disk counts, the OOM kills; from the exit log the
# process count, total CPU, the top 10 by peak, and count, largest peak
# and CPU per command.
# shellcheck disable=SC2016  # an awk program: its $6 is awk's, not ours
readonly AWK_SEED='BEGIN { FS = "," }
FNR == 1 { file++; next }
file == 1 {
  if (!n++ || $6 > mu) { mu = $6; mut = $1; mus = $13; muc = $14 }
  if (n == 1 || $7 < ma) { ma = $7; mat = $1; mas = $13; mac = $14 }
  if (n == 1 || $9 > sw) { sw = $9; swt = $1; sws = $13; swc = $14 }
  if (n == 1 || $10 < dk) { dk = $10; dkt = $1; dks = $13; dkc = $14 }
  if (n == 1 || $4 > ld) { ld = $4; ldt = $1; lds = $13; ldc = $14 }
  if (n == 1 || $5 > cp) { cp = $5; cpt = $1; cps = $13; cpc = $14 }
  if ($7 < 4096) near++
  if ($10 < 20) low++
  if (n > 1 && $15 > prev) oom += $15 - prev
  prev = $15
  next
}
{
  np++; cpu += $8; c = $3; cnt[c]++; ccpu[c] += $8
  if ($6 > cpk[c]) cpk[c] = $6
  if (nt < 10 || $6 > tp[nt]) {
    if (nt < 10) nt++
    for (k = nt; k > 1 && tp[k - 1] < $6; k--) { tp[k] = tp[k - 1]; tl[k] = tl[k - 1] }
    tp[k] = $6; tl[k] = $1 " " $3
  }
}
END {
  printf "mem used %s at %s (%s) %s\nmem avail %s at %s (%s) %s\n", mu, mut, mus, muc, ma, mat, mas, mac
  printf "swap %s at %s (%s) %s\ndisk %s at %s (%s) %s\n", sw, swt, sws, swc, dk, dkt, dks, dkc
  printf "load %s at %s (%s) %s\ncpu %s at %s (%s) %s\n", ld, ldt, lds, ldc, cp, cpt, cps, cpc
  printf "near-OOM %d low-disk %d oom kills %d\nprocesses %d cpu %.2f\n", near, low, oom, np, cpu
  for (k = 1; k <= nt; k++) print tp[k], tl[k]
  for (c in cnt) printf "%s %d %d %.2f\n", c, cnt[c], cpk[c], ccpu[c]
}'

# exitlog_runs ROWS: rm-summarize's text report, its summary JSON (--json
# --top 10: every unit, the top 10 processes), its JSON of every process
# (--json, as rm-run's of one job), the text with --top all, --csv and
# --trace files (in $tmp, rewritten each round) and mawk's seed summary of
# one generated run, EXITLOG_RUNS (3) alternating rounds; one Markdown row each: median
# CPU, largest peak RSS, CPU / mawk's.
exitlog_runs() {
  local rows=$1 pre="${RM_BUILD}/bench/run-${1}" i name cpu rss l0 runs=${EXITLOG_RUNS:-3}
  # The outputs that list every process (--json, --top all, --csv and
  # --trace) read it back from an external sort (spill.c), at every size.
  local -a names=(text json jsonall topall files mawk)
  gen_run "${pre}" "${rows}" || {
    err "cannot generate ${pre}"
    return 1
  }
  cat "${pre}.csv" "${pre}.procs.csv" >/dev/null # the page cache, for every contender
  l0=$(cut -d' ' -f1 /proc/loadavg)
  for name in "${names[@]}"; do
    : >"${tmp}/c.${name}" && : >"${tmp}/m.${name}"
  done
  for ((i = 0; i < runs; i++)); do
    for name in "${names[@]}"; do
      case ${name} in
      text) set -- rm-summarize "${pre}.csv" "${pre}.procs.csv" ;;
      json) set -- rm-summarize --json --top 10 "${pre}.csv" "${pre}.procs.csv" ;;
      jsonall) set -- rm-summarize --json "${pre}.csv" "${pre}.procs.csv" ;;
      topall) set -- rm-summarize --top all "${pre}.csv" "${pre}.procs.csv" ;;
      files) set -- rm-summarize --csv "${tmp}/o.csv" --trace "${tmp}/o.json" "${pre}.csv" "${pre}.procs.csv" ;;
      mawk) set -- mawk "${AWK_SEED}" "${pre}.csv" "${pre}.procs.csv" ;;
      esac
      read -r cpu rss < <("${RM_BUILD}/bench/rusage" "$@") || err "${name} failed"
      echo "${cpu}" >>"${tmp}/c.${name}"
      echo "${rss}" >>"${tmp}/m.${name}"
    done
  done
  local mawk_cpu
  mawk_cpu=$(median_of "${tmp}/c.mawk")
  for name in "${names[@]}"; do
    cpu=$(median_of "${tmp}/c.${name}")
    rss=$(sort -n "${tmp}/m.${name}" | tail -n 1)
    awk -v r="${rows}" -v n="${name}" -v c="${cpu}" -v m="${rss}" -v w="${mawk_cpu}" -v l="${l0} - $(cut -d' ' -f1 /proc/loadavg)" \
      'BEGIN { printf "| %d | %s | %.2f | %.1f | %s | %.2fx | %s |\n", r, (n == "mawk" ? "mawk seed summary" : n == "json" ? "rm-summarize --json --top 10" : n == "jsonall" ? "rm-summarize --json (every process)" : n == "topall" ? "rm-summarize --top all (text)" : n == "files" ? "rm-summarize --csv F --trace F (and text)" : "rm-summarize (text)"), c, m / 1024, (n == "mawk" ? "-" : (m / 1024 < 32 ? "yes" : "no")), (w > 0 ? c / w : 0), l }'
  done
}

bench_exitlog() {
  echo "## rm-summarize: a 24-hour run (86,400 system rows) with a long exit log, median of ${EXITLOG_RUNS:-3}"
  echo
  echo "One in eight rows is a cc1plus of one of 10,000 units (rm-tree's 22 columns).  The text report"
  echo "and the summary JSON (--json --top 10: every unit, the top 10 processes) fold the exit log as they"
  echo "read it; what lists every process (--json without --top, as rm-run's JSON of one job; --top all;"
  echo "--csv and --trace, written to files) reads it back from an external sort on disk."
  echo "Target: peak RSS under 32 MiB at 1,000,000 and 10,000,000 rows for every reader, CPU at most"
  echo "mawk's computing the seed's summary (the text report and the summary JSON; the others write more)."
  echo
  echo "| exit rows | reader | median CPU s | peak RSS MiB | under 32 MiB | CPU / mawk's | load (start - end) |"
  echo "|---|---|---|---|---|---|---|"
  exitlog_runs "${EXITLOG_ROWS:-1000000}" || return 1
  if [[ "${EXITLOG_10M:-1}" != 0 ]]; then
    exitlog_runs 10000000 || return 1
  fi
  echo
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
  bench_exitlog || return 1
  bench_monitor
}

tmp=
main "$@"
