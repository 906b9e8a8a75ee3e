#!/usr/bin/env bash
# make bench: run every tests/bench/*.sh section, print its Markdown and
# write the whole report to docs/BENCHMARKS.md (BENCH_OUT overrides), so
# that every figure in it comes from one run of one commit: the commit,
# the machine, the date and each section's load and duration are written
# with it.  Figures are for reading, never asserted.
#
# Exit status: 0 when every section ran to the end with status 0, 1 when
# one failed (the report still has the others, and says which failed).
#
# A quick look: BENCH_QUICK=1 shortens the long sections (the knobs below,
# each of which may also be set alone); BENCHMARKS.md then says, at the
# top and under every section it applies to, that its figures come from a
# shortened run.  BENCH_SECTIONS="sample tree" runs those sections only and
# writes no docs/BENCHMARKS.md (only BENCH_OUT, when set).
set -u

err() { printf 'bench: %s\n' "$*" >&2; }

# The knobs that shorten a run, with what BENCH_QUICK=1 sets them to.
QUICK_KNOBS=(EV_SECONDS=15 EV_REPS=1 EV_UNITS=200 BENCH_RUNS=3 BENCH_TICKS=500 BENCH_HISTORY_RUNS=200 XR_SECONDS=5 XR_REPS=1 MON_END=80 TI_END=40 EXITLOG_10M=0)

# shortened [SECTION]: the knobs set in the environment (those SECTION's
# file reads, when given), "K=V ..." (empty: none).
shortened() {
  local kv k out=()
  for kv in "${QUICK_KNOBS[@]}"; do
    k=${kv%%=*}
    [[ -n "${!k:-}" ]] || continue
    [[ "$k" != EXITLOG_10M || "${!k}" == 0 ]] || continue  # 1: the default
    [[ -z "${1:-}" ]] || grep -q "$k" "$1" || continue
    out+=("$k=${!k}")
  done
  printf '%s' "${out[*]}"
}

load1() { cut -d' ' -f1 /proc/loadavg; }

commit() {
  local c
  c=$(git rev-parse --short=12 HEAD 2>/dev/null) || { echo "unknown (not a git checkout)"; return; }
  # Changes not committed make the figures another code's than the commit's.
  if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    c="$c with uncommitted changes"
  fi
  printf '%s' "$c"
}

report() {
  local s name t0 t1 l0 l1 rc short mine
  short=$(shortened)
  echo "# rm-tools benchmarks"
  echo
  echo "Written by \`make bench\` in one run of one commit; every figure is a median of"
  echo "repeated runs on the machine below, our command and the alternative measured"
  echo "side by side in that run."
  echo
  echo "Commit: $(commit)"
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  if [[ -n "$short" ]]; then
    echo "**Shortened run** ($short): the figures of the sections marked so below"
    echo "come from fewer or shorter repetitions than \`make bench\` makes, for a quick look."
    echo
  fi
  for s in tests/bench/*.sh; do
    [[ "$s" == tests/bench/run.sh ]] && continue
    name=${s##*/}
    name=${name%.sh}
    if [[ -n "${BENCH_SECTIONS:-}" && " ${BENCH_SECTIONS} " != *" ${name} "* ]]; then
      continue
    fi
    mine=$(shortened "$s")
    l0=$(load1)
    t0=$(date +%s)
    rc=0
    bash "$s" || rc=$?
    t1=$(date +%s)
    l1=$(load1)
    echo
    if ((rc != 0)); then
      err "$s failed (exit $rc)"
      failed+=("$name")
      echo "**This section failed (exit $rc)**: its figures above, if any, are incomplete."
      echo
    fi
    printf '_Section %s: %d s, load average %s at its start and %s at its end%s._\n' \
      "$name" "$((t1 - t0))" "$l0" "$l1" "${mine:+; **shortened run** ($mine)}"
    echo
  done
  if ((${#failed[@]} > 0)); then
    echo "Failed sections: ${failed[*]}."
  else
    echo "Every section ran to the end."
  fi
}

main() {
  local top out tmp k name
  failed=()
  top=$(cd "$(dirname "$0")/../.." && pwd)
  cd "$top" || exit 1
  export RM_TOP="$top" RM_BUILD="$top/${RM_BUILD:-build/std}"
  RM_BUILD=${RM_BUILD/#"$top/$top"/$top}
  export PATH="$top/bin:$PATH"
  if [[ "${BENCH_QUICK:-}" == 1 ]]; then
    for k in "${QUICK_KNOBS[@]}"; do
      name=${k%%=*}
      [[ -n "${!name:-}" ]] || export "${k?}"
    done
  fi
  mkdir -p "$RM_BUILD/bench"
  # rusage: CPU and peak RSS of one command alone, for every section.
  cc -O2 -o "$RM_BUILD/bench/rusage" tests/bench/rusage.c || exit 1
  if [[ -n "${BENCH_SECTIONS:-}" && -z "${BENCH_OUT:-}" ]]; then
    report
    ((${#failed[@]} == 0))
    return
  fi
  out=${BENCH_OUT:-docs/BENCHMARKS.md}
  tmp=$(mktemp "$out.XXXXXX") || exit 1
  # report runs in this shell (not a pipeline's subshell), so that the
  # failed sections it records are known here.
  report > >(tee "$tmp")
  wait "$!"
  chmod 644 "$tmp"
  mv -f "$tmp" "$out"
  ((${#failed[@]} == 0))
}

main "$@"
