#!/usr/bin/env bats
# rm-demo without --out-dir: its files stay in ./rm-demo-out, a new run-id
# and directory each run, and it says where they are.

setup() {
  load test_helper/common
}

# bats test_tags=slow
@test "rm-demo keeps each run's files in ./rm-demo-out/RUN-ID and prints where they are" {
  command -v g++ >/dev/null || skip "g++ is not installed"
  cd "$BATS_TEST_TMPDIR"
  run -0 rm-demo --interval 0.5
  local where first
  where=$(printf '%s\n' "${lines[@]}" | sed -n 's/^(files in \(.*\))$/\1/p')
  [[ "$where" == "$BATS_TEST_TMPDIR/rm-demo-out/demo-"* ]]
  first=${where##*/}
  [ -s "$where/resources-$first.csv" ]
  [ -s "$where/resources-$first.summary.txt" ]
  [[ "${lines[0]}" == "Build resources: $where/resources-$first.csv"* ]]
  # A second run (within the same second or not) gets a run-id of its own
  # and leaves the first run's files as they were.
  cp "$where/resources-$first.summary.txt" "$BATS_TEST_TMPDIR/first.txt"
  run -0 rm-demo --interval 0.5
  local second
  second=$(printf '%s\n' "${lines[@]}" | sed -n 's/^(files in \(.*\))$/\1/p')
  [ "$second" != "$where" ]
  [ -s "$second/resources-${second##*/}.summary.txt" ]
  cmp "$where/resources-$first.summary.txt" "$BATS_TEST_TMPDIR/first.txt"
  [ "$(find rm-demo-out -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 2 ]
}
