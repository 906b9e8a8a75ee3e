#!/usr/bin/env bash
# Bench section: the CPU rm-sample --cgroup-path adds per tick (the memory
# cgroup's usage, limit, memory.stat, OOM counter and pressure read every
# tick), against rm-sample alone in the same run.  Target: < 5 %.
#
# Two figures: the cgroup reading measured alone (cgroup_read, many calls,
# little noise) over rm-sample's median tick; and the two rm-sample runs
# side by side, which on a busy machine differ by more than the cgroup
# costs (the /proc scan varies with every process that comes and goes).
set -u

err() { printf 'bench/sample_cgroup: %s\n' "$*" >&2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

main() {
  local ticks=${BENCH_TICKS:-2000} runs=${BENCH_RUNS:-7} i c where
  local plain=() cg=() alone=() kern=() a k files
  [[ -x "$RM_BUILD/bench/rusage" ]] || cc -O2 -o "$RM_BUILD/bench/rusage" tests/bench/rusage.c ||
    { err "cannot build rusage"; return 1; }
  cc -O2 -Ilib -o "$RM_BUILD/bench/cgroup_read" tests/bench/cgroup_read.c "$RM_BUILD/librmtools.a" ||
    { err "cannot build cgroup_read"; return 1; }
  if ! where=$(rm-sample --cgroup-path auto -f jsonl 2>&1 >/dev/null) || [[ -n "$where" ]]; then
    err "no memory cgroup here (${where:-?}): nothing to compare"
    return 0
  fi
  # Alternate the runs so that load from elsewhere falls on each alike.
  for ((i = 0; i < runs; i++)); do
    read -r c _ < <("$RM_BUILD/bench/rusage" rm-sample -i 0.001 -n "$ticks")
    plain+=("$(awk -v c="$c" -v n="$ticks" 'BEGIN { print c / n * 1000 }')")
    read -r c _ < <("$RM_BUILD/bench/rusage" rm-sample -i 0.001 -n "$ticks" --cgroup-path auto)
    cg+=("$(awk -v c="$c" -v n="$ticks" 'BEGIN { print c / n * 1000 }')")
    read -r a k files < <("$RM_BUILD/bench/cgroup_read" $((ticks * 5)))
    alone+=("$a") kern+=("$k")
  done
  local m_plain m_cg m_alone m_kern
  m_plain=$(printf '%s\n' "${plain[@]}" | median)
  m_cg=$(printf '%s\n' "${cg[@]}" | median)
  m_alone=$(printf '%s\n' "${alone[@]}" | median)
  m_kern=$(printf '%s\n' "${kern[@]}" | median)
  echo "## rm-sample --cgroup-path: CPU added per tick (median of $runs runs of $ticks ticks)"
  echo
  echo "| what | CPU ms/tick |"
  echo "|---|---:|"
  awk -v p="$m_plain" -v g="$m_cg" -v a="$m_alone" -v k="$m_kern" 'BEGIN {
      printf "| rm-sample alone | %.4f |\n| rm-sample --cgroup-path auto | %.4f |\n", p, g
      printf "| the cgroup reading alone (rm_cg_read) | %.4f |\n", a
      printf "| its kernel part: the same preads, nothing parsed | %.4f |\n", k
      printf "\nadded: %.1f %% (cgroup reading / rm-sample tick; target < 5 %%), of which the kernel'"'"'s reads %.1f %% and parsing %.1f %%; side by side %+.1f %%\n", a / p * 100, k / p * 100, (a - k) / p * 100, (g / p - 1) * 100
    }'
  # What each file costs the kernel (the last run), against the target.
  awk -v p="$m_plain" -v f="$files" 'BEGIN {
      n = split(f, part, ",")
      printf "\nthe kernel'"'"'s part, file by file (the last run): "
      for (i = 1; i <= n; i++) {
        split(part[i], kv, "=")
        printf "%s%s %.2f us (%.1f %% of the tick)", (i > 1 ? "; " : ""), kv[1], kv[2] * 1000, kv[2] / p * 100
      }
      printf "; the target, 5 %% of the tick, is %.2f us\n", p * 0.05 * 1000
    }'
}

main "$@"
