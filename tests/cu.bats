#!/usr/bin/env bats
# Compile units as a user reads them: rm-tree's exit log and rm-summarize's
# report for processes that carry the real command lines of
# tests/fixtures/cu (lib/cu's own unit test, t_cu, checks the same
# fixtures one by one).

setup() {
  load test_helper/common
}

# start_fixtures: for every fixture whose program is a compiler, a process
# of that name (bash, copied) that sleeps 2 s with the fixture's argv after
# its own -c CMD NAME; "PID FIXTURE" lines in $BATS_TEST_TMPDIR/map.
start_fixtures() {
  local f name ere
  local -a args
  ere=$(rm-tree --compilers)
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  for f in "$FIXTURES"/cu/*.argv; do
    mapfile -t args < <(grep -v '^# ' "$f")
    name=${args[0]##*/}
    # Drivers (gcc, g++, cc, c++) are no compilers to the summary.
    [[ "$name" =~ $ere ]] || continue
    [[ -e "$BATS_TEST_TMPDIR/bin/$name" ]] || cp /bin/bash "$BATS_TEST_TMPDIR/bin/$name"
    "$BATS_TEST_TMPDIR/bin/$name" -c 'sleep 2; exit 0' "$name" "${args[@]:1}" &
    echo "$! ${f##*/}" >>"$BATS_TEST_TMPDIR/map"
  done
  wait
}

@test "rm-tree and rm-summarize name every captured compiler's unit: the source, not cc1's -MD file; the linker's output; the LTRANS input" {
  export -f start_fixtures
  export FIXTURES BATS_TEST_TMPDIR
  run -0 rm-tree --exec -i 0.1 --log "$BATS_TEST_TMPDIR/log.csv" -- bash -c start_fixtures
  # --csv: every process's row, with its unit.
  run -0 rm-summarize --csv "$BATS_TEST_TMPDIR/units.csv" "$BATS_TEST_TMPDIR/log.csv"
  local pid f want got n=0
  while read -r pid f; do
    want=$(sed -n 's/^# unit: //p' "$FIXTURES/cu/$f")
    [[ "$want" == "(none)" ]] && want=''   # rustc --print: no unit
    got=$("$PY" -c 'import csv, sys
print("".join(r["unit"] for r in csv.DictReader(open(sys.argv[1])) if r["pid"] == sys.argv[2]))' "$BATS_TEST_TMPDIR/units.csv" "$pid")
    if [[ "$got" != "$want" ]]; then
      echo "$f: unit '$got', expected '$want'"
      return 1
    fi
    n=$((n + 1))
  done <"$BATS_TEST_TMPDIR/map"
  # cc1, cc1plus, clang, lto1, rustc, collect2 and five linkers at least.
  ((n >= 20))
}

@test "rm-tree keeps a long compiler command line's source in its 512-byte cmd column, and rm-summarize names it" {
  local -a args
  # A cc1 that sleeps (bash under that name) with the argv of libtool's
  # cc1 for bfd/elf.c: the source comes 1.3 KiB in, after -MD .libs/elf.d.
  cp /bin/bash "$BATS_TEST_TMPDIR/cc1"
  mapfile -t args < <(grep -v '^# ' "$FIXTURES/cu/libtool-pic-cc1.argv" | tail -n +2)
  run -0 rm-tree --exec -i 0.1 --log "$BATS_TEST_TMPDIR/log.csv" -- \
    "$BATS_TEST_TMPDIR/cc1" -c 'sleep 2; exit 0' cc1 "${args[@]}"
  run -0 "$PY" -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["comm"] == "cc1":
        print(len(r["cmd"].encode()), r["cmd"])' "$BATS_TEST_TMPDIR/log.csv"
  ((${output%% *} <= 512))
  [[ "$output" == *" ... ../../binutils-2.40/bfd/elf.c" ]]
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/log.csv"
  [[ "$(jq -r '.processes.top[] | select(.comm == "cc1") | .unit' <<<"$output")" == ../../binutils-2.40/bfd/elf.c ]]
}
