#!/usr/bin/env bash
# make bench: run every tests/bench/*.sh section, print its Markdown and
# write the whole report to docs/BENCHMARKS.md (BENCH_OUT overrides).
# Figures are for reading, never asserted.
set -u

err() { printf 'bench: %s\n' "$*" >&2; }

report() {
  local s
  echo "# rm-tools benchmarks"
  echo
  echo "Written by \`make bench\`; every figure is a median of repeated runs on the"
  echo "machine below, our command and the alternative measured side by side in one run."
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  for s in tests/bench/*.sh; do
    [[ "$s" == tests/bench/run.sh ]] && continue
    bash "$s" || err "$s failed"
    echo
  done
}

main() {
  local top out tmp
  top=$(cd "$(dirname "$0")/../.." && pwd)
  cd "$top" || exit 1
  export RM_TOP="$top" RM_BUILD="$top/${RM_BUILD:-build/std}"
  RM_BUILD=${RM_BUILD/#"$top/$top"/$top}
  export PATH="$top/bin:$PATH"
  mkdir -p "$RM_BUILD/bench"
  # rusage: CPU and peak RSS of one command alone, for every section.
  cc -O2 -o "$RM_BUILD/bench/rusage" tests/bench/rusage.c || exit 1
  out=${BENCH_OUT:-docs/BENCHMARKS.md}
  tmp=$(mktemp "$out.XXXXXX") || exit 1
  report | tee "$tmp"
  chmod 644 "$tmp"
  mv -f "$tmp" "$out"
}

main "$@"
