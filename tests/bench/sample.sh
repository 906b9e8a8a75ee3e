#!/usr/bin/env bash
# Bench section: CPU per tick of rm-sample streaming vs a seed-style bash
# tick, python3-psutil and the syscall floor (the calls rm-sample makes
# now, tests/bench/sample_floor.c); peak RSS of each.
set -u

err() { printf 'bench/sample: %s\n' "$*" >&2; }

# cpu_rss CMD...: run CMD, print "cpu_seconds maxrss_kib" of it alone.
cpu_rss() {
  "$RM_BUILD/bench/rusage" "$@"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

work=""

main() {
  local floor ticks=2000 bash_ticks=100 runs=5 i
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/logs"
  for i in $(seq 1 2000); do printf '[%d/2000] Building CXX src/file%d.cc\n' "$i" "$i"; done >"$work/logs/build.log"
  floor="$RM_BUILD/bench/sample_floor"
  cc -O2 -o "$floor" tests/bench/sample_floor.c || { err "cannot build the floor"; return 1; }
  cc -O2 -o "$RM_BUILD/bench/rusage" tests/bench/rusage.c || { err "cannot build rusage"; return 1; }

  local ours=() bash_t=() ps=() fl=() ours_rss=() bash_rss=() ps_rss=() fl_rss=()
  for ((i = 0; i < runs; i++)); do
    read -r c r < <(cpu_rss rm-sample -i 0.001 -n "$ticks" --stage-log-dir "$work/logs")
    ours+=("$(awk -v c="$c" -v n="$ticks" 'BEGIN { print c / n * 1000 }')"); ours_rss+=("$r")
    read -r c r < <(cpu_rss bash tests/bench/seed_tick.bash "$bash_ticks" "$work/logs")
    bash_t+=("$(awk -v c="$c" -v n="$bash_ticks" 'BEGIN { print c / n * 1000 }')"); bash_rss+=("$r")
    read -r c r < <(/usr/bin/python3 tests/bench/sample_psutil.py "$ticks" "$work/logs")
    ps+=("$(awk -v c="$c" 'BEGIN { print c * 1000 }')"); ps_rss+=("$r")
    read -r c r < <(cpu_rss "$floor" "$ticks" "$work/logs")
    fl+=("$(awk -v c="$c" -v n="$ticks" 'BEGIN { print c / n * 1000 }')"); fl_rss+=("$r")
  done
  local m_ours m_bash m_ps m_fl
  m_ours=$(printf '%s\n' "${ours[@]}" | median)
  m_bash=$(printf '%s\n' "${bash_t[@]}" | median)
  m_ps=$(printf '%s\n' "${ps[@]}" | median)
  m_fl=$(printf '%s\n' "${fl[@]}" | median)
  local nproc_now
  nproc_now=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
  echo "## rm-sample: CPU per tick ($nproc_now processes, median of $runs runs)"
  echo
  echo "| reader | CPU ms/tick | peak RSS KiB | vs rm-sample |"
  echo "|---|---:|---:|---:|"
  awk -v o="$m_ours" -v b="$m_bash" -v p="$m_ps" -v f="$m_fl" \
    -v ro="$(printf '%s\n' "${ours_rss[@]}" | median)" -v rb="$(printf '%s\n' "${bash_rss[@]}" | median)" \
    -v rp="$(printf '%s\n' "${ps_rss[@]}" | median)" -v rf="$(printf '%s\n' "${fl_rss[@]}" | median)" 'BEGIN {
      printf "| rm-sample -i (%s ticks) | %.3f | %d | 1.00x |\n", "'"$ticks"'", o, ro
      printf "| syscall floor (rm-sample'"'"'s own calls, in C, no parsing) | %.3f | %d | %.2fx |\n", f, rf, f / o
      printf "| python3-psutil, same readings | %.3f | %d | %.1fx |\n", p, rp, p / o
      printf "| seed-style bash tick (df, pgrep, tail forks) | %.3f | %d | %.1fx |\n", b, rb, b / o
      printf "\nrm-sample / floor = %.2f (target <= 1.3); bash / rm-sample = %.0fx (target >= 20); psutil / rm-sample = %.1fx (target >= 3); rm-sample RSS %.2f MiB (target < 2)\n", o / f, b / o, p / o, ro / 1024
    }'
}

main "$@"
