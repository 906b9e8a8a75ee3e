#!/usr/bin/env bash
# resource-monitor.sh: the seed's name for rm-monitor, so an orchestrator
# written for the seed runs unchanged, from wherever it keeps this script
# (a copy or a symlink in linux/scripts/01-core/, say).  Runs the first
# rm-monitor of: beside the script's resolved path (readlink -f), beside
# the path it was called by, on PATH; else says where it looked, exit 127.
set -u
self=${BASH_SOURCE[0]}
dirs=()
real=$(readlink -f -- "${self}" 2>/dev/null) && [[ -n "${real}" ]] && dirs+=("${real%/*}")
dir=$(dirname -- "${self}")
[[ ${#dirs[@]} -gt 0 && "${dir}" -ef "${dirs[0]}" ]] || dirs+=("${dir}")
tried=
for dir in "${dirs[@]}"; do
  [[ -f "${dir}/rm-monitor" && -x "${dir}/rm-monitor" ]] && exec "${dir}/rm-monitor" "$@"
  tried+="${dir}/rm-monitor, "
done
monitor=$(command -v rm-monitor 2>/dev/null) && exec "${monitor}" "$@"
printf 'resource-monitor.sh: rm-monitor not found: looked for %sthen on PATH (%s)\n' \
  "${tried}" "${PATH-}" >&2
exit 127
