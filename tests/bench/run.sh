#!/usr/bin/env bash
# make bench: run every tests/bench/*.sh section and print its Markdown.
# Figures are for reading, never asserted.
set -u

err() { printf 'bench: %s\n' "$*" >&2; }

main() {
  local top s
  top=$(cd "$(dirname "$0")/../.." && pwd)
  cd "$top" || exit 1
  export RM_TOP="$top" RM_BUILD="$top/${RM_BUILD:-build/std}"
  RM_BUILD=${RM_BUILD/#"$top/$top"/$top}
  export PATH="$top/bin:$PATH"
  mkdir -p "$RM_BUILD/bench"
  echo "# rm-tools benchmarks"
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  for s in tests/bench/*.sh; do
    [[ "$s" == tests/bench/run.sh ]] && continue
    bash "$s" || err "$s failed"
    echo
  done
}

main "$@"
