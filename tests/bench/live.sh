#!/usr/bin/env bash
# Bench section: what rm-tree --live costs (the snapshot rm-monitor status
# reads, rewritten every tick): rm-tree following a 50-process tree for 200
# ticks at -i 0.05, with and without --live, CPU median of 5 runs each.
set -u

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

main() {
  local rusage="$RM_BUILD/bench/rusage" work leader i c with=() without=()
  work=$(mktemp -d) || return 1
  setsid "$RM_BUILD/tests/memhog" -N 50 -j 50 -t 600 -r "$work/up" &
  leader=$!
  while [[ ! -e "$work/up" ]]; do sleep 0.05; done
  for ((i = 0; i < 5; i++)); do
    read -r c _ < <("$rusage" rm-tree -i 0.05 -n 200 --log /dev/null "$leader" 2>/dev/null)
    without+=("$c")
    read -r c _ < <("$rusage" rm-tree -i 0.05 -n 200 --log /dev/null --live "$work/live.csv" "$leader" 2>/dev/null)
    with+=("$c")
  done
  kill -TERM -- "-$leader" 2>/dev/null
  rm -rf "$work"
  local a b
  a=$(printf '%s\n' "${without[@]}" | median)
  b=$(printf '%s\n' "${with[@]}" | median)
  echo "## rm-tree --live: the snapshot's cost (51 processes, 200 ticks of 0.05 s, the file rewritten at most once a second; median of 5; load $(cut -d' ' -f1 /proc/loadavg))"
  echo
  awk -v a="$a" -v b="$b" 'BEGIN {
    printf "| rm-tree -i 0.05 | CPU s | per tick ms |\n|---|---:|---:|\n"
    printf "| without --live | %.3f | %.3f |\n| with --live | %.3f | %.3f |\n", a, a / 200 * 1000, b, b / 200 * 1000
    printf "\n--live adds %.3f ms of CPU a tick (%.2fx).\n", (b - a) / 200 * 1000, (a > 0 ? b / a : 0) }'
}

main "$@"
