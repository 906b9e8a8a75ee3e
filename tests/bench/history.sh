#!/usr/bin/env bash
# Bench section: rm-monitor history (rm-summarize --history) over 1,000
# generated runs (resources-build-N.run.csv, BENCH_HISTORY_RUNS for a
# quicker look), against an awk that prints the same rows in start order
# from the same files; CPU and peak RSS, median of 5 runs each.
set -u

err() { printf 'bench/history: %s\n' "$*" >&2; }

work=""

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

main() {
  local n=${BENCH_HISTORY_RUNS:-1000} i ours=() awk_t=() ours_rss=() c r
  local rusage="$RM_BUILD/bench/rusage"
  work=$(mktemp -d) || return 1
  trap 'rm -rf "$work"' EXIT
  for ((i = 1; i <= n; i++)); do
    printf '%s\n%s\n' 'run_id,start,start_epoch,duration_s,exit,peak_used_mib,peak_used_source,oom_kills,near_oom_samples,heaviest_unit,heaviest_unit_mib,largest_process,largest_process_mib' \
      "build-$i,,$((1796300000 + i * 3600)).000,3600.0,0,$((8000 + i % 97)).0,cgroup,0,0,src/unit_$((i % 50)).cpp,$((300 + i % 13)).0,cc1plus,$((300 + i % 13)).0" \
      >"$work/resources-build-$i.run.csv"
  done
  for ((i = 0; i < 5; i++)); do
    read -r c r < <("$rusage" rm-summarize --history "$work" --csv - 2>/dev/null)
    ours+=("$c") && ours_rss+=("$r")
    read -r c r < <("$rusage" sh -c "awk -F, 'FNR == 2 { print \$3, \$0 }' '$work'/*.run.csv | sort -n" 2>/dev/null)
    awk_t+=("$c")
  done
  local mo ma mr
  mo=$(printf '%s\n' "${ours[@]}" | median)
  ma=$(printf '%s\n' "${awk_t[@]}" | median)
  mr=$(printf '%s\n' "${ours_rss[@]}" | median)
  echo "## rm-monitor history: $n runs (median of 5; load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "| command | CPU s | peak RSS MiB |"
  echo "|---|---:|---:|"
  awk -v o="$mo" -v r="$mr" 'BEGIN { printf "| rm-summarize --history DIR --csv - | %.3f | %.1f |\n", o, r / 1024 }'
  awk -v a="$ma" 'BEGIN { printf "| awk FNR == 2 over the files, sorted by start | %.3f | - |\n", a }'
  awk -v o="$mo" -v a="$ma" 'BEGIN { printf "\nrm-summarize / awk = %.2f CPU (the awk prints the rows; it neither reads them as CSV nor finds each series).\n", (a > 0 ? o / a : 0) }'
}

main "$@"
