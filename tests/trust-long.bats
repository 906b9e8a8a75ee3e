#!/usr/bin/env bats
# Long runs: 100,000 ticks of rm-sample and of rm-tree streaming, with
# their open file descriptors and resident memory read from /proc between
# two ticks at tick 10,000 and at tick 100,000: the same, or something
# leaks per tick.  At the smallest interval each takes (1 ms) a run lasts
# about two minutes.

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
    [[ -n "${p}" ]] || continue
    kill -9 "${p}" 2>/dev/null && wait "${p}" 2>/dev/null
  done
  return 0
}

KILL_PIDS=()
TICKS=100000
EARLY=10000

# between_ticks PID: "FDS ANON RSS" read while PID is stopped inside
# ppoll(2), between two ticks: its open descriptors, RssAnon and VmRSS in
# KiB.  Mid-tick a sampler holds /proc files open for a moment, so only a
# reading between ticks is comparable.  x86_64 and aarch64 (where the
# ppoll syscall numbers are known); fails after 2,000 tries.
between_ticks() {
  local pid=$1 nr i state sys
  case "$(uname -m)" in
    x86_64) nr=271 ;;
    aarch64) nr=73 ;;
    *) return 2 ;;
  esac
  for ((i = 0; i < 2000; i++)); do
    kill -STOP "${pid}" || return 1
    state=
    while [[ "${state}" != T ]]; do
      read -r _ _ state _ <"/proc/${pid}/stat" || break
    done
    read -r sys _ <"/proc/${pid}/syscall" || sys=
    if [[ "${sys}" == "${nr}" ]]; then
      echo "$(fd_count "${pid}") $(vm_kib "${pid}" RssAnon) $(vm_kib "${pid}" VmRSS)"
      kill -CONT "${pid}"
      return 0
    fi
    kill -CONT "${pid}"
    sleep "0.00$((RANDOM % 9 + 1))"
  done
  return 1
}

# watch NAME PID FILE: wait for FILE to hold EARLY then TICKS rows (plus a
# header), reading PID between two ticks at each; prints what it read and
# fails when the descriptors grew, when the anonymous memory (heap and
# stack: what a leak grows) grew by more than 16 KiB, or VmRSS by more
# than 64 KiB.  16 KiB is one-off growth (a row buffer doubling when a row
# gets longer, malloc's heap top moving by a page or two; seen: 0 and
# 8 KiB); a leak of even one byte a tick would be 88 KiB over these 90,000
# ticks.  VmRSS also counts pages of the program and libc first run late,
# which are file-backed, not a leak.
watch() {
  local name=$1 pid=$2 file=$3 fd1 fd2 anon1 anon2 rss1 rss2 t0 t1
  wait_for 900 rows_at_least "${file}" $((EARLY + 1))
  read -r fd1 anon1 rss1 < <(between_ticks "${pid}")
  t0=${SECONDS}
  wait_for 1800 rows_at_least "${file}" $((TICKS + 1))
  read -r fd2 anon2 rss2 < <(between_ticks "${pid}")
  t1=${SECONDS}
  echo "# ${name}: fds ${fd1} -> ${fd2}, RssAnon ${anon1} -> ${anon2} KiB," \
    "VmRSS ${rss1} -> ${rss2} KiB (tick ${EARLY} -> ${TICKS}, $((t1 - t0)) s)"
  # Descriptors may go with the processes they were kept for; a leak grows.
  ((fd1 > 0 && anon1 > 0 && fd2 <= fd1)) &&
    ((anon2 - anon1 <= 16 && rss2 - rss1 <= 64))
}

# bats test_tags=slow
@test "100,000 ticks of rm-sample: fds and RSS the same at tick 10,000 and 100,000" {
  local d="${BATS_TEST_TMPDIR}" pid
  rm-sample -i 0.001 -n $((TICKS + 50000)) >"${d}/sample.csv" 2>"${d}/sample.err" &
  pid=$!
  KILL_PIDS+=("${pid}")
  watch rm-sample "${pid}" "${d}/sample.csv"
  [[ ! -s "${d}/sample.err" ]]
}

# bats test_tags=slow
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
