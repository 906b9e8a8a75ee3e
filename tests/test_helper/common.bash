#!/usr/bin/env bash
# Shared setup for the bats files: the built commands on PATH, fixture and
# build locations, and small helpers used across files.
# shellcheck disable=SC2034  # variables here are used by the .bats files

bats_require_minimum_version 1.5.0

RM_TOP=${RM_TOP:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
RM_BUILD=${RM_BUILD:-$RM_TOP/build/std}
FIXTURES="$RM_TOP/tests/fixtures"
PATH="$RM_TOP/bin:$PATH"
# python3 with Debian's python3-psutil, whatever python3 is first on PATH.
PY=/usr/bin/python3
export PATH

# csv_cols FILE: prints the set of column counts of every record, via
# python's csv module (one number when every row matches the header).
csv_cols() {
  "$PY" -c 'import csv,sys
rows=list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8", errors="strict")))
print(" ".join(sorted({str(len(r)) for r in rows})))' "$1"
}

# csv_get FILE COLUMN [ROW]: a field by header name (ROW counts from 1).
csv_get() {
  "$PY" -c 'import csv,sys
rows=list(csv.DictReader(open(sys.argv[1], newline="")))
print(rows[int(sys.argv[3])-1][sys.argv[2]])' "$1" "$2" "${3:-1}"
}

# under_san: true in `make check SAN=1`, where ASan's shadow memory and
# quarantine make a program's resident set say nothing about the program.
under_san() {
  [[ "${RM_FLAVOR:-std}" == san ]]
}

# wait_for TIMEOUT_S CMD ARGS...: poll every 20 ms until CMD succeeds.
wait_for() {
  local i limit=$(( $1 * 50 ))
  shift
  for ((i = 0; i < limit; i++)); do
    if "$@"; then return 0; fi
    sleep 0.02
  done
  return 1
}
