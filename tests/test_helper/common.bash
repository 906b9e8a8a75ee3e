#!/usr/bin/env bash
# Shared setup for the bats files: the built commands on PATH, fixture and
# build locations, and small helpers used across files.
# shellcheck disable=SC2034  # variables here are used by the .bats files

bats_require_minimum_version 1.5.0

RM_TOP=${RM_TOP:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
RM_BUILD=${RM_BUILD:-$RM_TOP/build/std}
FIXTURES="$RM_TOP/tests/fixtures"
# The built commands first on PATH, unless bin/ is on it already: under
# `make check VALGRIND=1` tests/run.sh puts the valgrind stand-ins before
# bin/, and they must stay first.
case ":$PATH:" in
  *":$RM_TOP/bin:"*) ;;
  *) PATH="$RM_TOP/bin:$PATH" ;;
esac
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

# skip_needs_root REASON [CAP]: skip a test that cannot run without root,
# saying REASON.  Where it runs as root under CI (CI=true, as .ci/run sets
# it) the test fails instead: there root has what the test needs, and a
# skip would hide a test that never runs.  CAP (a capability number, see
# has_cap) is what root needs for it: root without CAP on this machine (a
# container's) is a limit root has too, a plain skip that says so.
skip_needs_root() {
  local reason=${1:-needs root} cap=${2:-}
  if [[ -n "${cap}" && $EUID -eq 0 ]] && ! has_cap "${cap}"; then
    skip "${reason} (this machine withholds capability ${cap} even from root)"
  fi
  if [[ $EUID -eq 0 && "${CI:-}" == true ]]; then
    echo "skip_needs_root: running as root under CI, yet: ${reason}" >&2
    return 1
  fi
  skip "${reason}"
}

# has_cap N: this process has capability number N in its effective set
# (/proc/self/status CapEff; 24 is CAP_SYS_RESOURCE, 21 CAP_SYS_ADMIN).
has_cap() {
  local eff
  eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status 2>/dev/null) || return 1
  [[ -n "${eff}" ]] || return 1
  (((16#${eff} >> $1) & 1))
}
