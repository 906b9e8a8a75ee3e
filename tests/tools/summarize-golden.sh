#!/bin/bash
# summarize-golden.sh: does a change to rm-summarize keep its output?
# Runs two rm-summarize binaries over the same inputs in every format
# (text, Markdown, JSON, --svg, --csv, --trace, --series, -o, options)
# and diffs stdout, stderr, exit status and every file written.
#
# usage: tests/tools/summarize-golden.sh OLD_BIN NEW_BIN [HARVEST_DIR]
#
# OLD_BIN is a copy of bin/rm-summarize from before the change.  The inputs
# are every CSV under tests/fixtures (summarize, trace, plot, diskfit, fit),
# alone and in the groups the tests use, plus, with HARVEST_DIR, every
# invocation summarize-harvest.sh recorded while the bats files ran.
# Exit 0 when the outputs are byte-identical, 1 (with the diff) when not.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
fix=$top/tests/fixtures

err() {
  printf 'summarize-golden.sh: %s\n' "$*" >&2
}

# run_case BIN OUTDIR NAME STDIN ARGS...: one run, its results in OUTDIR/NAME.
run_case() {
  local bin=$1 out=$2 name=$3 stdin=$4 f
  shift 4
  mkdir -p "$out/$name"
  rm -rf "${work:?}"/*
  (cd "$work" && NO_COLOR=1 "$bin" "$@" <"$stdin" >"$out/$name/stdout" 2>"$out/$name/stderr"
   echo $? >"$out/$name/rc")
  for f in "$work"/*; do
    [[ -e $f ]] && cp "$f" "$out/$name/out.$(basename "$f")"
  done
}

# matrix BIN OUTDIR: every fixture in every format, and the groups.
matrix() {
  local bin=$1 out=$2 f b c i=0
  local -a inputs groups
  mapfile -t inputs < <(find "$fix/summarize" "$fix/trace" "$fix/plot" "$fix/diskfit" "$fix/fit" \
    -name '*.csv' | sort)
  for f in "${inputs[@]}"; do
    b=$(printf '%s' "${f#"$fix"/}" | tr / _)
    run_case "$bin" "$out" "m.$b.text" /dev/null "$f"
    run_case "$bin" "$out" "m.$b.md" /dev/null --markdown "$f"
    run_case "$bin" "$out" "m.$b.json" /dev/null --json "$f"
    run_case "$bin" "$out" "m.$b.svg" /dev/null --svg "$work/o.svg" "$f"
    run_case "$bin" "$out" "m.$b.csv" /dev/null --csv "$work/o.csv" "$f"
    run_case "$bin" "$out" "m.$b.trace" /dev/null --trace "$work/o.json" "$f"
    run_case "$bin" "$out" "m.$b.series" /dev/null --series "$f"
    run_case "$bin" "$out" "m.$b.opts" /dev/null --near-oom-mb 100000 --low-disk-gb 1000 \
      --cores 64 --top 3 --include cc1 --exclude ld "$f"
    run_case "$bin" "$out" "m.$b.stdin" "$f" --json -
    # --json --top N folds the exit log as read (fold.c), as the text does.
    run_case "$bin" "$out" "m.$b.jsontop" /dev/null --json --top 3 "$f"
    run_case "$bin" "$out" "m.$b.jsonopts" /dev/null --json --top 10 --include cc1 --exclude ld \
      --run-csv "$work/run.csv" "$f"
  done
  local s=$fix/summarize
  groups=(
    "$s/seed-build.csv $s/exitlog.csv $s/job.csv $s/timeline.csv"
    "$s/exitlog.csv $s/job.csv"
    "$s/scope/memcg-build.csv $s/scope/memcg-build.procs.csv $s/scope/memcg-build.stats.csv --kmsg $s/scope/memcg-build.kmsg"
    "$s/scope/two-builds.csv $s/scope/two-builds.procs.csv $s/scope/two-builds.stats.csv --kmsg $s/scope/two-builds.kmsg"
    "$s/oom-kills.csv $s/exitlog.csv --kmsg $s/scope/two-builds.kmsg"
    "$s/scope/job-exact.csv $s/scope/sampled.stats.csv $fix/trace/exitlog-io.csv"
    "$fix/fit/monitor.csv $fix/fit/resources-demo.procs.csv"
    "$s/seed-build.csv $s/energy-gpu.csv $s/oom-kills.csv"
  )
  for c in "${groups[@]}"; do
    i=$((i + 1))
    local -a g
    read -r -a g <<<"$c"
    run_case "$bin" "$out" "g.$i.text" /dev/null "${g[@]}"
    run_case "$bin" "$out" "g.$i.md" /dev/null --markdown "${g[@]}"
    run_case "$bin" "$out" "g.$i.json" /dev/null --json "${g[@]}"
    run_case "$bin" "$out" "g.$i.jsontop" /dev/null --json --top 2 --run-csv "$work/run.csv" "${g[@]}"
    run_case "$bin" "$out" "g.$i.files" /dev/null --svg "$work/o.svg" --csv "$work/o.csv" \
      --trace "$work/t.json" -o "$work/rep.txt" "${g[@]}"
    run_case "$bin" "$out" "g.$i.series" /dev/null --series "${g[@]}"
  done
}

# harvested BIN OUTDIR DIR: replay what summarize-harvest.sh recorded.
harvested() {
  local bin=$1 out=$2 dir=$3 c a stdin
  local -a args
  for c in "$dir"/c.*; do
    [[ -d $c ]] || continue
    args=()
    stdin=/dev/null
    while IFS= read -r -d '' a; do
      case $a in
        IN:* | PIPE:*) args+=("$c/${a#*:}") ;;
        OUT:*) args+=("$work/${a#OUT:}") ;;
        STDIN) args+=(-); stdin=$c/stdin ;;
        *) args+=("$a") ;;
      esac
    done <"$c/args"
    run_case "$bin" "$out" "h.$(basename "$c")" "$stdin" "${args[@]}"
  done
}

main() {
  if (($# < 2)); then
    err "usage: summarize-golden.sh OLD_BIN NEW_BIN [HARVEST_DIR]"
    exit 2
  fi
  local old new tmp
  old=$(realpath "$1") new=$(realpath "$2")
  tmp=$(mktemp -d)
  work=$tmp/work
  mkdir -p "$work"
  matrix "$old" "$tmp/old"
  matrix "$new" "$tmp/new"
  if (($# > 2)); then
    harvested "$old" "$tmp/old" "$3"
    harvested "$new" "$tmp/new" "$3"
  fi
  if diff -r "$tmp/old" "$tmp/new"; then
    echo "same output in $(find "$tmp/old" -mindepth 1 -maxdepth 1 | wc -l) cases"
    rm -rf "$tmp"
    exit 0
  fi
  err "outputs differ (kept in $tmp)"
  exit 1
}

main "$@"
