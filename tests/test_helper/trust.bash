#!/usr/bin/env bash
# Helpers for the trust-*.bats files: checks that a file holds only whole
# CSV rows, that a command stayed quiet, and readings of a running
# process (fds, RSS) from /proc.
# shellcheck disable=SC2154  # $status and $stderr are set by bats' run

# xl_ncols: how many columns this rm-tree's exit log has (a new column
# goes at its end; readers read by name).
xl_ncols() {
  local f
  f=$(mktemp "${BATS_TEST_TMPDIR}/xl.XXXXXX")
  rm-tree --exec --log "${f}" -- true 2>/dev/null
  head -n 1 "${f}" | awk -F, '{ print NF }'
}

# whole_rows FILE [NCOLS]: FILE is empty or ends with a newline, is valid
# UTF-8, and every record has NCOLS fields (default: as many as the
# first).  Prints "N rows"; on failure says what was wrong.
whole_rows() {
  "${PY}" - "$1" "${2:-0}" <<'EOF'
import csv, io, sys
path, want = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
if data and not data.endswith(b"\n"):
    sys.exit(f"{path}: cut row at the end: {data[-80:]!r}")
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"{path}: invalid UTF-8: {e}")
rows = list(csv.reader(io.StringIO(text, newline="")))
if rows and not want:
    want = len(rows[0])
for i, r in enumerate(rows, 1):
    if len(r) != want:
        sys.exit(f"{path}: record {i} has {len(r)} fields, not {want}: {r!r}")
print(f"{len(rows)} rows")
EOF
}

# fd_count PID: open file descriptors of PID.
fd_count() {
  local fds
  fds=("/proc/$1/fd/"*)
  echo "${#fds[@]}"
}

# vm_kib PID FIELD: a Vm* line of /proc/PID/status in KiB (VmRSS, VmHWM).
vm_kib() {
  awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# need CMD: skip the test, saying so, when CMD is not built yet.
need() {
  command -v "$1" >/dev/null 2>&1 || skip "$1 is not built (has it landed?)"
}

# under_valgrind: true when make check VALGRIND=1 put memcheck in front of
# the commands (timing and /proc readings of the process are valgrind's).
under_valgrind() {
  [[ "${VALGRIND:-}" == 1 ]]
}

# lines_of FILE: its number of lines (0 when missing).
lines_of() {
  local n
  n=$(wc -l 2>/dev/null <"$1") || n=0
  echo "${n:-0}"
}

# rows_at_least FILE N: FILE has N lines or more (for wait_for).
rows_at_least() {
  (($(lines_of "$1") >= $2))
}
