#!/bin/bash
# tree-golden.sh: does a change to rm-tree keep its output?
# Runs two rm-tree binaries over the same inputs and diffs stdout, stderr,
# exit status and every file written (exit log, timeline, job row, stats):
#  - snapshots and streams over the fixture root tests/fixtures/tree/proc
#    (RM_PROC_ROOT): every selection, -H, --pss, the outputs to files;
#  - --exec of small commands (an exit status, a signal, children, an
#    orphan that left the session, a command that is not there, --cgroup,
#    --memory-max, -i) in the mode the machine gives (exact as root);
#  - the usage errors of the outputs.
#
# usage: tests/tools/tree-golden.sh OLD_BIN NEW_BIN
#
# OLD_BIN is a copy of bin/rm-tree from before the change.  What differs
# from one run to the next is masked before the diff: over the fixture,
# the times (start_s is the fixture's start against this machine's boot
# time); under --exec, every measured figure (PIDs, times, peaks, CPU,
# I/O, delays), keeping the columns, the empty fields, comm, exit, cmd,
# source, scope, procs and mode; a file's rows are compared as a set, as
# the order of ends and the number of ticks are the machine's.
# GOLDEN_KEEP=1 keeps the outputs (the path is printed) to read them.
# Exit 0 when the outputs are identical, 1 (with the diff) when not.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
fix=$top/tests/fixtures

err() {
  printf 'tree-golden.sh: %s\n' "$*" >&2
}

# mask LEVEL FILE: LEVEL time (fixture) or all (--exec), as said above.
mask() {
  local level=$1 f=$2 tmp c
  tmp=$f.m
  c=$(head -c 1 "$f")
  if [[ $(basename "$f") == stderr || $c == "[" || $c == "{" ]]; then
    # Not a CSV (stderr, JSON): numbers of the machine masked under --exec.
    if [[ $level == all ]]; then
      sed -E 's/[0-9]+(\.[0-9]+)?/N/g' "$f" | sort -u >"$tmp"
    else
      sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/ISO/g; s/1[0-9]{9}\.[0-9]{3}/EPOCH/g; s/-?[0-9]+\.[0-9]{3}/T/g' "$f" >"$tmp"
    fi
    mv "$tmp" "$f"
    return
  fi
  gawk -v level="$level" '
    BEGIN {
      FPAT = "([^,]*)|(\"([^\"]|\"\")*\")"
      split("start_s end_s peak_at_s epoch iso elapsed_s start_epoch end_epoch", a, " ")
      for (i in a) tmask[a[i]] = 1
      split("pid ppid peak_rss_kib peak_at_s cpu_s read_kib write_kib majflt cpu_delay_ms " \
            "io_delay_ms swapin_delay_ms reclaim_delay_ms thrash_delay_ms rss_kib cpu_pct " \
            "max_proc_rss_kib cgroup_peak_kib user_s sys_s peak_file_kib cgroup_anon_kib " \
            "cgroup_file_kib cgroup_kernel_kib oom_victim events_lost resyncs", b, " ")
      for (i in b) amask[b[i]] = 1
      # Without a header (-H): the exit log columns.
      nn = split("pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib," \
                 "write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms," \
                 "thrash_delay_ms,source,scope", name, ",")
    }
    # A header: any line whose first field is a column name.
    $1 ~ /^(pid|epoch|cmd|mode)$/ {
      delete name
      for (i = 1; i <= NF; i++) name[i] = $i
      timeline = $1 == "epoch"
      print "H " $0
      next
    }
    # Under --exec the timeline has as many rows as ticks: its header only.
    level == "all" && timeline { next }
    {
      out = ""
      for (i = 1; i <= NF; i++) {
        v = $i
        # Under --exec a measured figure may be there or not (a process
        # too short for a sample): its field is masked, empty or not.
        if (level == "all" && (amask[name[i]] || (name[i] == "procs" && timeline)))
          v = "X"
        else if (v != "" && tmask[name[i]])
          v = "X"
        # Our own child before its exec has our command line, or that of CMD.
        if (name[i] == "cmd" && $3 == "rm-tree")
          v = "X"
        out = out (i > 1 ? "," : "") v
      }
      print "R " out
    }' "$f" | sort -u >"$tmp"
  mv "$tmp" "$f"
}

# run_case BIN OUTDIR NAME LEVEL ENV... -- ARGS...: one run, its results
# in OUTDIR/NAME.
run_case() {
  local bin=$1 out=$2 name=$3 level=$4 f
  shift 4
  local -a envs=()
  while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$out/$name"
  rm -rf "${work:?}"/*
  (cd "$work" && env "${envs[@]}" timeout 60 "$bin" "$@" </dev/null >"$out/$name/stdout" 2>"$out/$name/stderr"
   echo $? >"$out/$name/rc")
  for f in "$work"/*; do
    [[ -f $f ]] && cp "$f" "$out/$name/out.$(basename "$f")"
  done
  sed -i "s|$bin|BIN|g" "$out/$name/stderr"
  for f in "$out/$name"/*; do
    [[ $(basename "$f") == rc ]] || mask "$level" "$f"
  done
}

matrix() {
  local bin=$1 out=$2 i=0 a
  local p="RM_PROC_ROOT=$fix/tree/proc"
  local st=(-i 0.05 -n 3)
  # Snapshots and streams over the fixture.
  local -a fx=(
    "" "-f json" "-o pid,comm,pss_kib,cmd" "-H" "--match cc1" "100" "50 --no-children"
    "--exclude-tree 100" "1 --exclude-tree 80"
    "${st[*]}" "${st[*]} -H" "${st[*]} 100" "${st[*]} 50 --no-children" "${st[*]} --match ^c"
    "${st[*]} --exclude-tree 100" "${st[*]} --pss" "${st[*]} --elsewhere=100 100"
    "${st[*]} --log l.csv --timeline t.csv --stats s.csv"
    "${st[*]} --log - --timeline /dev/stderr" "${st[*]} 999"
  )
  for a in "${fx[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # each entry is its words
    run_case "$bin" "$out" "fx.$i" time "$p" -- $a
  done
  # --exec: what the machine runs, measured figures masked.
  local L=(--log l.csv --timeline t.csv --job j.csv --stats s.csv)
  run_case "$bin" "$out" ex.exit all -- "${L[@]}" --exec -- sh -c 'exit 3'
  run_case "$bin" "$out" ex.true all -- "${L[@]}" --exec -- true
  run_case "$bin" "$out" ex.stdout all -- --exec -- sh -c 'echo hello'
  run_case "$bin" "$out" ex.H all -- -H --job j.csv --exec -- true
  run_case "$bin" "$out" ex.signal all -- "${L[@]}" --exec -- sh -c 'kill -TERM $$'
  run_case "$bin" "$out" ex.kids all -- "${L[@]}" -i 0.05 --exec -- \
    sh -c 'sleep 0.2 & sh -c "sleep 0.1; exit 4" & wait'
  run_case "$bin" "$out" ex.cmd127 all -- "${L[@]}" --exec -- no-such-command-rm-golden
  run_case "$bin" "$out" ex.cmd126 all -- "${L[@]}" --exec -- /dev/null
  run_case "$bin" "$out" ex.orphan all -- "${L[@]}" --exec -- sh -c 'setsid sleep 1 </dev/null >/dev/null 2>&1 & sleep 0.3'
  run_case "$bin" "$out" ex.wait all -- "${L[@]}" --wait-orphans=10 --exec -- \
    sh -c 'setsid sleep 0.5 </dev/null >/dev/null 2>&1 & sleep 0.3'
  run_case "$bin" "$out" ex.cgroup all -- "${L[@]}" --cgroup --exec -- sh -c 'head -c 20000000 /dev/zero | tail -c 1 >/dev/null'
  run_case "$bin" "$out" ex.memmax all -- "${L[@]}" --memory-max 200M --exec -- true
  run_case "$bin" "$out" ex.pss all -- "${L[@]}" --pss -i 0.05 --exec -- sleep 0.2
  run_case "$bin" "$out" ex.elsewhere all -- "${L[@]}" --elsewhere=1000000000 --exec -- true
  # The outputs' errors.
  run_case "$bin" "$out" err.same all -- --log a.csv --timeline a.csv --exec -- true
  run_case "$bin" "$out" err.same2 all -- --job ./a.csv --timeline a.csv --exec -- true
  run_case "$bin" "$out" err.link all -- sh -c "ln -s x.csv l.csv; '$bin' --log l.csv --exec -- true"
  run_case "$bin" "$out" err.dir all -- --log /no/such/dir/l.csv --exec -- true
  run_case "$bin" "$out" err.full all -- --log /dev/full --exec -- true
  run_case "$bin" "$out" err.full2 time "$p" -- "${st[@]}" --timeline /dev/full
}

main() {
  if (($# != 2)); then
    err "usage: tree-golden.sh OLD_BIN NEW_BIN"
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
