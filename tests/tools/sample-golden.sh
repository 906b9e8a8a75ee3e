#!/bin/bash
# sample-golden.sh: does a change to rm-sample keep its output?
# Runs two rm-sample binaries over the same fixture roots (RM_PROC_ROOT,
# RM_SYS_ROOT under tests/fixtures) in every format and with the options
# that change what is read or written (-o, --status, --prom-file, stage
# files and logs, --energy, --gpu, --cgroup-path, --seed-columns, -i/-n),
# plus the usage errors, and diffs stdout, stderr, exit status and every
# file written.
#
# usage: tests/tools/sample-golden.sh OLD_BIN NEW_BIN
#
# OLD_BIN is a copy of bin/rm-sample from before the change.  What differs
# from one run to the next is masked before the diff: the epoch and ISO
# time of a row (and Prometheus timestamps), elapsed_s, and --status's gap
# figures (a busy machine may make a gap).  The disk is /dev (devtmpfs: no
# other writer), and streaming runs count a compiler name no process has,
# as the proc connector's events are the whole host's.
# GOLDEN_KEEP=1 keeps the outputs (the path is printed) to read them.
# Exit 0 when the outputs are identical, 1 (with the diff) when not.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
fix=$top/tests/fixtures

err() {
  printf 'sample-golden.sh: %s\n' "$*" >&2
}

# mask FILE: what changes between two runs of the same binary, replaced.
mask() {
  sed -E -i \
    -e 's/1[0-9]{9}\.[0-9]{3}/EPOCH/g; s/1[0-9]{9}([,}])/EPOCH\1/g; s/ 1[0-9]{12}$/ TS/' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3})?Z/ISO/g' \
    -e 's/^(EPOCH,ISO,)[0-9.]+/\1EL/; s/("elapsed_s":)[0-9.]+/\1EL/' \
    -e 's/^(gaps=|longest_gap_s=).*/\1G/' "$1"
}

# run_case BIN OUTDIR NAME ENV... -- ARGS...: one run, its results in
# OUTDIR/NAME.  The work directory holds what setup_work put there.
run_case() {
  local bin=$1 out=$2 name=$3 f
  shift 3
  local -a envs=()
  while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$out/$name"
  setup_work
  (cd "$work" && env "${envs[@]}" "$bin" "$@" </dev/null >"$out/$name/stdout" 2>"$out/$name/stderr"
   echo $? >"$out/$name/rc")
  for f in "$work"/*; do
    [[ -f $f ]] && cp "$f" "$out/$name/out.$(basename "$f")"
  done
  for f in "$out/$name"/*; do
    mask "$f"
  done
  # The binary's own name in its messages.
  sed -i "s|$bin|BIN|g" "$out/$name/stderr"
}

# The work directory of a case: a stage file, a log directory, a CSV
# from an earlier run to append to, one of another format.
setup_work() {
  rm -rf "${work:?}"/* "$work"/.[!.]* 2>/dev/null
  mkdir -p "$work/logs"
  printf 'compile\n' >"$work/stage.txt"
  printf 'one\nerror: two\nthree\n' >"$work/logs/build.log"
  printf '{"epoch":1}\n' >"$work/other.jsonl"
}

# matrix BIN OUTDIR: every case, results in OUTDIR.
matrix() {
  local bin=$1 out=$2 r i=0
  local -a roots=("$fix/proc-old" "$fix/tree/proc" "$fix/cgroup-v2/proc")
  local cg="RM_PROC_ROOT=$fix/cgroup-v2/proc RM_SYS_ROOT=$fix/cgroup-v2/sys"
  local none="RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
  local d=--disk-path=/dev
  local stream=(--compilers zz-no-such-compiler -i 0.2 -n 3)
  for r in "${roots[@]}"; do
    i=$((i + 1))
    local p="RM_PROC_ROOT=$r"
    run_case "$bin" "$out" "r$i.csv" "$p" -- "$d"
    run_case "$bin" "$out" "r$i.H" "$p" -- "$d" -H
    run_case "$bin" "$out" "r$i.jsonl" "$p" -- "$d" -f jsonl
    run_case "$bin" "$out" "r$i.prom" "$p" -- "$d" -f prom
    run_case "$bin" "$out" "r$i.seed" "$p" -- "$d" --seed-columns
    run_case "$bin" "$out" "r$i.comp" "$p" -- "$d" --compilers rustc,cc1plus,init
    run_case "$bin" "$out" "r$i.stage" "$p" -- "$d" --stage-file stage.txt --stage-log-dir logs
    run_case "$bin" "$out" "r$i.log" "$p" -- "$d" --stage-log-dir logs --context-match 'err'
    run_case "$bin" "$out" "r$i.seedlog" "$p" -- "$d" --seed-columns --stage-log-dir logs
    run_case "$bin" "$out" "r$i.nostage" "$p" -- "$d" --stage-file missing.txt --stage-log-dir logs
    run_case "$bin" "$out" "r$i.files" "$p" -- "$d" -o o.csv --status st.txt --prom-file o.prom \
      --prom-label job=build --prom-label 'host=a"b'
    run_case "$bin" "$out" "r$i.stream" "$p" -- "$d" "${stream[@]}"
    run_case "$bin" "$out" "r$i.streamjson" "$p" -- "$d" "${stream[@]}" -f jsonl
    run_case "$bin" "$out" "r$i.streamprom" "$p" -- "$d" "${stream[@]}" -f prom
    run_case "$bin" "$out" "r$i.streamfiles" "$p" -- "$d" "${stream[@]}" -o o.csv --status st.txt \
      --prom-file o.prom --stage-file stage.txt
    run_case "$bin" "$out" "r$i.energy" "$p" "RM_SYS_ROOT=$fix/powercap/intel1" -- "$d" --energy
    run_case "$bin" "$out" "r$i.gpu" "$p" "RM_SYS_ROOT=$fix/drm/mixed" "$none" -- "$d" --gpu
    run_case "$bin" "$out" "r$i.both" "$p" "RM_SYS_ROOT=$fix/drm/mixed" "$none" -- "$d" --gpu --energy -f jsonl
  done
  # shellcheck disable=SC2086 # $cg is two words
  {
    run_case "$bin" "$out" cg.auto $cg -- "$d" --cgroup-path auto
    run_case "$bin" "$out" cg.auto.jsonl $cg -- "$d" --cgroup-path auto -f jsonl
    run_case "$bin" "$out" cg.auto.prom $cg -- "$d" --cgroup-path auto -f prom
    run_case "$bin" "$out" cg.path $cg -- "$d" --cgroup-path /build.slice
    run_case "$bin" "$out" cg.none $cg -- "$d" --cgroup-path /no/such
    run_case "$bin" "$out" cg.stream $cg -- "$d" --cgroup-path auto "${stream[@]}" -o o.csv
  }
  local p="RM_PROC_ROOT=$fix/proc-old"
  # Appending: to our own CSV (no second header), to another format.
  run_case "$bin" "$out" app.twice "$p" -- sh -c "'$bin' $d -o a.csv && '$bin' $d -o a.csv"
  run_case "$bin" "$out" app.jsonl "$p" -- sh -c "'$bin' $d -f jsonl -o a.jsonl && '$bin' $d -f jsonl -o a.jsonl"
  run_case "$bin" "$out" app.other "$p" -- "$d" -o other.jsonl
  run_case "$bin" "$out" app.otherH "$p" -- "$d" -H -o other.jsonl
  run_case "$bin" "$out" app.prom "$p" -- "$d" -f prom -o other.jsonl
  run_case "$bin" "$out" out.stdout "$p" -- "$d" -o /dev/stdout
  run_case "$bin" "$out" out.symlink "$p" -- sh -c "ln -s o.csv link.csv; '$bin' $d -o link.csv"
  run_case "$bin" "$out" check.ok "$p" -- "$d" --check -o o.csv --status st.txt
  run_case "$bin" "$out" check.missing "$p" -- --check --disk-path /no/such
  run_case "$bin" "$out" check.promdir "$p" -- "$d" --check --prom-file /no/such/dir/x.prom
  # Usage errors and the help.
  local a
  local -a bad=(
    "--help" "--version" "-i 0" "-i abc" "-n 0" "-f xml" "--seed-columns -f jsonl"
    "--seed-columns --energy" "--watch-pid 1" "--watch-pid abc -i 1" "--prom-label stage=x"
    "--prom-label 9a=b" "--prom-label nolabel" "--listen nowhere" "--min-age 2"
    "--expose-cmdline" "--listen :0 --min-age -1" "--compilers ," "--cgroup-path="
    "extra" "-o x.csv --prom-file x.csv" "--status s --prom-file s" "--prom-file="
    "--context-match (" "--no-such-option" "-i 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1 --watch-pid 1"
  )
  i=0
  for a in "${bad[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # each entry is its words
    run_case "$bin" "$out" "usage.$i" "$p" -- $a
  done
}

main() {
  if (($# != 2)); then
    err "usage: sample-golden.sh OLD_BIN NEW_BIN"
    exit 2
  fi
  local old new tmp
  old=$(realpath "$1") new=$(realpath "$2")
  tmp=$(mktemp -d)
  work=$tmp/work
  mkdir -p "$work"
  matrix "$old" "$tmp/old"
  matrix "$new" "$tmp/new"
  if diff -r "$tmp/old" "$tmp/new"; then
    echo "same output in $(find "$tmp/old" -mindepth 1 -maxdepth 1 | wc -l) cases"
    if [[ ${GOLDEN_KEEP:-} ]]; then echo "kept in $tmp"; else rm -rf "$tmp"; fi
    exit 0
  fi
  err "outputs differ (kept in $tmp)"
  exit 1
}

main "$@"
