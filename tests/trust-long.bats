#!/usr/bin/env bats
# Long runs: 100,000 ticks of rm-sample and of rm-tree streaming, with
# their open file descriptors and resident memory read from /proc at tick
# 10,000 and at tick 100,000: the same, or something leaks per tick.  At
# the smallest interval each takes (1 ms) a run lasts about two minutes.

setup() {
  load test_helper/common
  load test_helper/trust
  under_valgrind && skip "under valgrind the process read from /proc is valgrind"
  [[ "${RM_FLAVOR:-std}" != san ]] ||
    skip "ASan's quarantine keeps freed memory resident: RSS is not the program's"
  return 0
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "${p}" ]] && kill -9 "${p}" 2>/dev/null
  done
  return 0
}

KILL_PIDS=()
TICKS=100000
EARLY=10000

# settled PID: "FDS RSS": PID's fewest open descriptors and largest VmRSS
# over ten readings 20 ms apart.  A tick opens /proc files for a moment,
# so one reading can catch one more descriptor than the process keeps.
settled() {
  local i fds rss min=999999 max=0
  for ((i = 0; i < 10; i++)); do
    fds=$(fd_count "$1")
    rss=$(vm_kib "$1" VmRSS)
    ((fds < min)) && min=${fds}
    ((${rss:-0} > max)) && max=${rss}
    sleep 0.02
  done
  echo "${min} ${max}"
}

# watch NAME PID FILE: wait for FILE to hold EARLY then TICKS rows (plus a
# header), reading PID's fd count and VmRSS at each; prints what it read
# and fails when either changed.
watch() {
  local name=$1 pid=$2 file=$3 fd1 fd2 rss1 rss2 t0 t1
  wait_for 900 rows_at_least "${file}" $((EARLY + 1))
  read -r fd1 rss1 < <(settled "${pid}")
  t0=${SECONDS}
  wait_for 1800 rows_at_least "${file}" $((TICKS + 1))
  read -r fd2 rss2 < <(settled "${pid}")
  t1=${SECONDS}
  echo "# ${name}: fds ${fd1} -> ${fd2}, VmRSS ${rss1} -> ${rss2} KiB" \
    "(tick ${EARLY} -> ${TICKS}, $((t1 - t0)) s)"
  ((rss1 > 0)) && [[ "${fd1}" == "${fd2}" && "${rss1}" == "${rss2}" ]]
}

@test "100,000 ticks of rm-sample: fds and RSS the same at tick 10,000 and 100,000" {
  local d="${BATS_TEST_TMPDIR}" pid
  rm-sample -i 0.001 -n $((TICKS + 50000)) >"${d}/sample.csv" 2>"${d}/sample.err" &
  pid=$!
  KILL_PIDS+=("${pid}")
  watch rm-sample "${pid}" "${d}/sample.csv"
  [[ ! -s "${d}/sample.err" ]]
}

@test "100,000 ticks of rm-tree streaming: fds and RSS the same at tick 10,000 and 100,000" {
  need rm-tree
  rm-tree -i 0.001 -n 1 $$ >/dev/null 2>&1 ||
    skip "rm-tree does not take -i 0.001 (its floor is 0.01 s): 100,000 ticks would take 17 minutes"
  local d="${BATS_TEST_TMPDIR}" churn pid
  # A tree that changes: 20 short-lived processes a second join and leave.
  "${RM_BUILD}/tests/churn" 20 900 >/dev/null &
  churn=$!
  KILL_PIDS+=("${churn}")
  rm-tree -i 0.001 -n $((TICKS + 50000)) --timeline "${d}/tl.csv" "${churn}" \
    >"${d}/tree.csv" 2>"${d}/tree.err" &
  pid=$!
  KILL_PIDS+=("${pid}")
  watch rm-tree "${pid}" "${d}/tl.csv"
  [[ ! -s "${d}/tree.err" ]]
}
