#!/usr/bin/env bats
# Races against a root wrapper writing into a directory another user owns
# (a root tool never writes through a swapped name): at each step that touches a name there, paused by
# RM_TEST_PAUSE (tests/test_helper/race.bash), nobody swaps the name for a
# symlink to a root file, a FIFO or a directory; the root file stays as it
# was, nothing is written into the directory, and nothing hangs.
# docs/reliability.md lists the promise each test holds.

setup() {
  load test_helper/common
  load test_helper/trust
  load test_helper/race
  race_setup
}

teardown() {
  race_teardown
}

# monitor_race STEP:NAME...: each step, with each kind of plant, under a
# root rm-monitor whose out-dir nobody owns.
monitor_race() {
  local at kind
  for at in "$@"; do
    for kind in symlink fifo dir; do
      rm -rf "${RACE:?}"/* "${RACE}"/.[!.]*
      # The build: alive until the monitor has claimed its names (it
      # refuses a build that is gone before it starts, which a loaded
      # machine's start-up outlasted with a plain sleep 1), then 1 s more.
      # shellcheck disable=SC2016  # expanded by the inner sh
      sh -c 'i=0; while [ ! -e "$1/resources-r.csv" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
        sleep 1' _ "${RACE}" 3>&- &
      race_run "${at}" "${kind}" rm-monitor --out-dir "${RACE}" --run-id r --interval 0.2 --watch-pid $! || return 1
      echo "${at} ${kind}: rc ${RACE_RC}: $(cat "${RACE_ERR}")"
      victim_untouched || return 1
      ((RACE_RC <= 1)) || return 1
    done
  done
}

# bats test_tags=slow
@test "rm-monitor: a name swapped while the run's files are claimed or linked never redirects a root write" {
  need rm-monitor
  monitor_race claim:resources-r.csv claim:resources-r.procs.csv \
    symlink:resources-r.latest.csv symlink-rename:resources-r.latest.csv
}

# bats test_tags=slow
@test "rm-monitor: a name swapped while the summaries and stats are written never redirects a root write" {
  need rm-monitor
  monitor_race out-tmp:resources-r.summary.txt out-rename:resources-r.summary.txt \
    out-tmp:resources-r.stats.csv out-rename:resources-r.stats.csv
}

# bats test_tags=slow
@test "rm-plot: a name swapped at the PNG's temporary file or its rename never redirects a root write" {
  need rm-plot
  command -v gnuplot >/dev/null || skip_or_fail "no gnuplot"
  local at kind
  for at in out-tmp:run.png out-rename:run.png; do
    for kind in symlink fifo dir; do
      rm -rf "${RACE:?}"/*
      cp "${FIXTURES}/fit/monitor.csv" "${RACE}/run.csv"
      chown nobody: "${RACE}/run.csv"
      race_run "${at}" "${kind}" rm-plot "${RACE}/run.csv" || return 1
      echo "${at} ${kind}: rc ${RACE_RC}: $(cat "${RACE_ERR}")"
      victim_untouched || return 1
    done
  done
}

# bats test_tags=slow
@test "rm-run: a name swapped as its timeline is opened or its summary and peaks CSV are written never redirects a root write" {
  need rm-run
  local at kind
  for at in open:tl.csv out-tmp:sum.txt out-rename:sum.txt out-tmp:peaks.csv out-rename:peaks.csv; do
    for kind in symlink fifo dir; do
      rm -rf "${RACE:?}"/* "${RACE}"/.[!.]*
      race_run "${at}" "${kind}" rm-run -i 0.1 -o "${RACE}/sum.txt" --csv "${RACE}/peaks.csv" \
        --timeline "${RACE}/tl.csv" -- sh -c 'echo ran' || return 1
      echo "${at} ${kind}: rc ${RACE_RC}: $(cat "${RACE_ERR}")"
      victim_untouched || return 1
      ((RACE_RC <= 1)) || return 1
    done
  done
}

# bats test_tags=slow
@test "rm-monitor beside the findings' poller (every new name in its out-dir swapped for a symlink to a root file): the file untouched, nothing hangs" {
  need rm-monitor
  local i rc
  poller_start "${RACE}"
  for i in 1 2 3; do
    sleep 2 &
    rc=0
    timeout -s KILL 120 rm-monitor --out-dir "${RACE}" --run-id "p${i}" --interval 0.2 --watch-pid $! </dev/null \
      >/dev/null 2>"${RACE_TOP}/err" || rc=$?
    echo "run ${i}: rc ${rc}: $(cat "${RACE_TOP}/err")"
    victim_untouched || break
    ((rc <= 1)) || break
  done
  poller_stop
  victim_untouched
  ((rc <= 1))
}
