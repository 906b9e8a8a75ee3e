#!/usr/bin/env bash
# The seed's resource-monitor.sh tick, reproduced for the benchmark: the
# same /proc reads plus the df, pgrep and tail|grep forks, TICKS times.
# usage: seed_tick.bash TICKS LOGDIR (a helper of sample.sh, not a section:
# run.sh runs only tests/bench/*.sh)
set -u

tick() {
  local logdir=$1 load1 cpu mem_total mem_avail swap_total swap_free disk comp log ctx
  read -r load1 _ </proc/loadavg
  read -r _ cpu </proc/stat
  while read -r k v _; do
    case "$k" in
      MemTotal:) mem_total=$v ;;
      MemAvailable:) mem_avail=$v ;;
      SwapTotal:) swap_total=$v ;;
      SwapFree:) swap_free=$v ;;
    esac
  done </proc/meminfo
  disk=$(df -P / | tail -n 1)
  comp=$(pgrep -c 'cc1plus|cc1|clang|rustc|lto1|ld')
  # shellcheck disable=SC2012  # the seed script did exactly this; it is what is measured
  log=$(ls -t "$logdir"/*.log 2>/dev/null | head -n 1)
  ctx=$(tail -n 50 "$log" | grep -v '^$' | tail -n 1)
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$load1" "${cpu%% *}" "$mem_total" "$mem_avail" \
    "$swap_total" "$swap_free" "${disk// /_}" "$comp" "${ctx//,/ }"
}

main() {
  local i
  for ((i = 0; i < $1; i++)); do tick "$2"; done
}

main "$@"
