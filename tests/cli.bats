#!/usr/bin/env bats
# The option conventions every C command shares (lib/cli, lib/rmtools).

setup() {
  load test_helper/common
}

@test "-i takes a unit everywhere: 200ms, 1.5s, 2m, 1h; a bare number is seconds" {
  local cmd
  mkdir -p "$BATS_TEST_TMPDIR/sys"
  cp -a "$FIXTURES/drm/mixed/." "$FIXTURES/powercap/intel1/." "$BATS_TEST_TMPDIR/sys/"
  run -0 rm-sample -f jsonl -i 200ms -n 2
  [ "${#lines[@]}" -eq 2 ]
  # Ticks are absolute deadlines 0.2 s apart: the second row is at >= 0.2 s.
  "$PY" -c 'import json,sys; r=[json.loads(l) for l in sys.argv[1:]]; assert r[1]["elapsed_s"] >= 0.199, r' "${lines[@]}"
  # -n 1 prints the first row at once, so long intervals cost nothing.
  for cmd in rm-sample rm-gpu; do
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 1h -n 1
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 1.5s -n 1
    RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 "$cmd" -i 2m -n 1
  done
  # rm-energy's first row is watts over one whole interval.
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 rm-energy -i 100ms -n 1
  run -0 rm-tree -i 50ms -n 1 $$
}

@test "-i with a unit that is not one, or out of range once converted, is a usage error naming it" {
  local arg
  for arg in 2d 25h 0.5ms "1 s" ms 1e3s; do
    run -2 --separate-stderr rm-sample -i "$arg" -n 1
    [ "${stderr_lines[0]}" = "rm-sample: invalid interval '$arg': seconds from 0.001 to 86400 (or with a unit: 200ms, 1.5s, 2m, 1h)" ]
    [[ "${stderr_lines[1]}" == "usage: rm-sample "* ]]
  done
}
