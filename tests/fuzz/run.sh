#!/usr/bin/env bash
# Run the libFuzzer targets `make fuzz` built, each for FUZZ_SECONDS, on a
# fresh copy of its seed corpus, and fail on any crash.
#
# usage: FUZZ_SECONDS=N bash tests/fuzz/run.sh build/fuzz/fz_NAME...
#
# Seeds of target fz_NAME: tests/fuzz/corpus/fz_NAME/, the crash
# regressions in tests/fixtures/fuzz-regress/fz_NAME/, and the fixture
# files under tests/fixtures/ that hold what that parser reads (see
# seed_globs).  Work files (corpus, log, crash inputs) go to
# FUZZ_OUT/fz_NAME (default fuzz-out/, git-ignored).  Targets run
# FUZZ_JOBS at a time (default: the number of CPUs), so the wall time is
# about FUZZ_SECONDS * targets / FUZZ_JOBS.  Prints, per target, the total
# executions and executions per second, then one line with the totals.
set -u

err() { printf 'fuzz/run.sh: %s\n' "$*" >&2; }

# seed_globs NAME: find(1) -path patterns of fixture files fed to NAME.
seed_globs() {
  case "$1" in
    fz_pstat) echo '*/[0-9]*/stat' ;;
    fz_pstatus) printf '%s\n' '*/status' '*/smaps_rollup' ;;
    fz_cmdline) echo '*/cmdline' ;;
    fz_meminfo) echo '*/meminfo' ;;
    fz_procstat) printf '%s\n' '*/proc*/stat' '*/loadavg' ;;
    fz_psi) echo '*/pressure/*' ;;
    fz_vmstat) echo '*/vmstat' ;;
    fz_sanitize) printf '%s\n' '*.log' '*/comm' ;;
    fz_number) printf '%s\n' '*/energy_uj' '*/max_energy_range_uj' '*_uw' \
      '*/gpu_busy_percent' '*/mem_info_*' '*/power1_*' '*/temp1_input' \
      '*/memory.peak' '*/memory.max_usage_in_bytes' ;;
    fz_csvread) echo '*.csv' ;;
    fz_kmsg) echo '*kmsg*' ;;
    fz_cgroup) printf '%s\n' '*/mountinfo' '*/proc/*/cgroup' '*/memory.stat' \
      '*/memory.events' '*/memory.max' '*/memory.limit_in_bytes' \
      '*/memory.oom_control' '*/cpu.max' ;;
    *) ;;
  esac
}

# seed NAME DIR: fill DIR with NAME's seeds; prints how many.
seed() {
  local name=$1 dir=$2 g n=0 f
  local -a globs
  mkdir -p "${dir}" || return 1
  for f in "tests/fuzz/corpus/${name}"/* "tests/fixtures/fuzz-regress/${name}"/*; do
    [[ -f "${f}" ]] || continue
    cp "${f}" "${dir}/seed-$((n += 1))"
  done
  mapfile -t globs < <(seed_globs "${name}" || true)
  for g in "${globs[@]}"; do
    while IFS= read -r -d '' f; do
      cp "${f}" "${dir}/fixture-$((n += 1))"
    done < <(find tests/fixtures -path tests/fixtures/fuzz-regress -prune \
      -o -type f -path "${g}" -size -64k -print0 2>/dev/null || true)
  done
  echo "${n}"
}

# run_one BIN: fuzz one target; its exit status is the fuzzer's.
run_one() {
  local bin=$1 name work
  name=${bin##*/}
  work="${FUZZ_OUT}/${name}"
  rm -rf "${work}"
  mkdir -p "${work}" || return 1
  seed "${name}" "${work}/corpus" >"${work}/seeds" || return 1
  # -timeout: one input taking 10 s is a hang and fails the target.
  "${bin}" -max_total_time="${FUZZ_SECONDS}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="${work}/" "${work}/corpus" \
    >"${work}/log" 2>&1
}

# stat_of LOG KEY: a libFuzzer final statistic (0 when missing).
stat_of() {
  local v
  v=$(sed -n "s/^stat::$2: *\\([0-9]*\\).*/\\1/p" "$1" 2>/dev/null || true)
  v=${v##*$'\n'}
  echo "${v:-0}"
}

main() {
  local top bin name log rc failed=0 total=0 execs rate seeds
  local -a pids=() bins=()
  local -A status=()
  top=$(cd "$(dirname "$0")/../.." && pwd)
  cd "${top}" || exit 1
  FUZZ_SECONDS=${FUZZ_SECONDS:-10}
  FUZZ_OUT=${FUZZ_OUT:-fuzz-out}
  FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
  if (($# == 0)); then
    err "no fuzz targets given"
    exit 2
  fi
  for bin in "$@"; do
    if [[ ! -x "${bin}" ]]; then
      err "not a fuzz target: '${bin}'"
      exit 2
    fi
  done
  mkdir -p "${FUZZ_OUT}" || exit 1

  echo "# fuzzing $# targets, ${FUZZ_SECONDS} s each, ${FUZZ_JOBS} at a time"
  for bin in "$@"; do
    local -a running
    mapfile -t running < <(jobs -rp || true)
    while ((${#running[@]} >= FUZZ_JOBS)); do
      wait -n
      mapfile -t running < <(jobs -rp || true)
    done
    run_one "${bin}" &
    pids+=("$!")
    bins+=("${bin}")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[i]}"
    status[${bins[i]}]=$?
  done

  printf '%-14s %6s %14s %10s %s\n' target seeds executions exec/s result
  for bin in "$@"; do
    name=${bin##*/}
    log="${FUZZ_OUT}/${name}/log"
    rc=${status[${bin}]}
    seeds=$(cat "${FUZZ_OUT}/${name}/seeds" 2>/dev/null || echo "?")
    execs=$(stat_of "${log}" number_of_executed_units)
    rate=$(stat_of "${log}" average_exec_per_sec)
    total=$((total + execs))
    if ((rc == 0)); then
      printf '%-14s %6s %14s %10s ok\n' "${name}" "${seeds}" "${execs}" "${rate}"
      continue
    fi
    failed=$((failed + 1))
    printf '%-14s %6s %14s %10s FAILED (exit %d)\n' "${name}" "${seeds}" "${execs}" "${rate}" "${rc}"
    sed -n '/ERROR\|broken promise\|SUMMARY\|^    #[0-9] /s/^/#   /p' "${log}" |
      head -n 20 || true
    for f in "${FUZZ_OUT}/${name}"/crash-* "${FUZZ_OUT}/${name}"/timeout-* \
      "${FUZZ_OUT}/${name}"/oom-* "${FUZZ_OUT}/${name}"/leak-*; do
      [[ -f "${f}" ]] || continue
      echo "#   input: ${f}"
      echo "#   keep it: cp '${f}' tests/fixtures/fuzz-regress/${name}/WHAT-IT-BROKE"
    done
  done
  echo "total: ${total} executions; ${failed} of $# targets failed"
  ((failed == 0))
}

main "$@"
