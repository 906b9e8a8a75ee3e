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

# connector_for_users: true when this kernel lets a user without
# CAP_NET_ADMIN listen to the proc connector (Linux 6.6 may; some builds
# refuse): asked of the kernel by a bind, as nobody.
connector_for_users() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$PY" -c 'import socket
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11)  # NETLINK_CONNECTOR
s.bind((0, 1))  # CN_IDX_PROC' 2>/dev/null
}

# under_san: true in `make check SAN=1`, where ASan's shadow memory and
# quarantine make a program's resident set say nothing about the program.
under_san() {
  [[ "${RM_FLAVOR:-std}" == san ]]
}

# under_valgrind: true in `make check VALGRIND=1`, where the commands run
# under memcheck: their /proc entries (RSS, comm) and timing are valgrind's.
under_valgrind() {
  [[ "${VALGRIND:-}" == 1 ]]
}

# png_bytes FILE: "WIDTH HEIGHT N" of a PNG, N the distinct byte values of
# its inflated pixel data (a blank picture has one or two); fails when
# FILE is not a PNG.
png_bytes() {
  "$PY" - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR":
        w, h = struct.unpack(">II", data[pos + 8:pos + 16])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
print(w, h, len(set(zlib.decompress(idat))))
EOF
}

# strace ARGS...: strace(1), but in `make check SAN=1` with LeakSanitizer
# off for the traced commands (it refuses to run under ptrace and fails the
# command; AddressSanitizer's other checks stay on).
strace() {
  if under_san; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+${ASAN_OPTIONS}:}detect_leaks=0" command strace "$@"
  else
    command strace "$@"
  fi
}

# wait_for TIMEOUT_S CMD ARGS...: poll every 20 ms until CMD succeeds,
# TIMEOUT_S * 50 tries: at least TIMEOUT_S seconds, more where CMD itself
# is slow (a python reading of a long CSV: 0.1-0.2 s a try makes 60 "s"
# six to ten minutes before a failure is reported).
wait_for() {
  local i limit=$(( $1 * 50 ))
  shift
  for ((i = 0; i < limit; i++)); do
    if "$@"; then return 0; fi
    sleep 0.02
  done
  return 1
}

# watched_until CSV: start a stand-in build that lives until CSV has a
# row under its header (at most 60 s), and print its PID.  rm-monitor
# refuses a build already gone when it starts, and its start-up (the
# --check runs of its binaries) can outlast a fixed sleep on a loaded host
# or under ASan: wait for the monitor's sampler to have written instead.
watched_until() {
  sh -c 'i=0
    while [ "$(wc -l 2>/dev/null <"$1" || echo 0)" -lt 2 ] && [ "$i" -lt 1200 ]; do
      sleep 0.05
      i=$((i + 1))
    done' _ "$1" </dev/null >/dev/null 2>&1 3>&- &
  echo "$!"
}

# stop_pid PID: SIGSTOP PID, a child of the test started in the
# background with fd 3 closed.  resume_pid PID sends it SIGCONT when the
# test is done with it.  A test that fails in between (a wait_for that
# timed out) leaves it stopped, holding the test's pipes: bats then waits
# for it until the suite's timeout kills every file beside it.  So each
# file's teardown calls resume_stopped, which resumes and TERMs what is
# still stopped.  A PID is only listed while it is the test's unwaited
# child, so it is never another process's by then.
STOPPED_PIDS=()
stop_pid() {
  STOPPED_PIDS+=("$1")
  kill -STOP "$1"
}
resume_pid() {
  local p keep=()
  for p in "${STOPPED_PIDS[@]}"; do
    [[ "${p}" == "$1" ]] || keep+=("${p}")
  done
  STOPPED_PIDS=("${keep[@]}")
  kill -CONT "$1"
}
resume_stopped() {
  local p
  for p in "${STOPPED_PIDS[@]}"; do
    kill -CONT "${p}" 2>/dev/null
    kill -TERM "${p}" 2>/dev/null
  done
  STOPPED_PIDS=()
  return 0
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

# The per-test watchdog.  tests/run.sh sets RM_TEST_TIMEOUT (seconds): a
# test still running then has every process it started killed, with a
# diagnostic in its output (and in RM_WATCHDOG_LOG), so that it fails and
# the suite goes on; a test that still does not end (a loop in the test's
# own shell) is killed itself RM_WATCHDOG_GRACE seconds later (default 30).
# The watchdog is no child of the test (bats' BATS_TEST_TIMEOUT is, and a
# test's bare `wait` would wait for it), holds none of bats' pipes, and
# ends when the test does.

# _rm_descendants PID: the PIDs of PID's descendants, one per line.
_rm_descendants() {
  ps -eo pid=,ppid= 2>/dev/null | awk -v root="$1" '
    { parent[$1] = $2; order[NR] = $1 }
    END {
      for (i = 1; i <= NR; i++) {
        p = order[i]
        for (q = parent[p]; q in parent && q != root && q > 1; q = parent[q]) {}
        if (q == root) print p
      }
    }'
}

# _rm_watchdog PID LIMIT: as above, for the test whose shell is PID.
_rm_watchdog() {
  local pid=$1 limit=$2 grace=${RM_WATCHDOG_GRACE:-30} kids what msg
  timeout "${limit}" tail --pid="${pid}" -f /dev/null >/dev/null 2>&1
  (($? == 124)) || return 0
  what="${BATS_TEST_FILENAME##*/}: ${BATS_TEST_DESCRIPTION}"
  kids=$(_rm_descendants "${pid}" | paste -sd ' ')
  msg="watchdog: '${what}' ran past ${limit} s (RM_TEST_TIMEOUT); killing what it started:"
  {
    echo "${msg}"
    [[ -n "${kids}" ]] && ps -o pid=,etimes=,args= -p "${kids// /,}" 2>/dev/null | sed 's/^/  /'
  } | tee -a "${RM_WATCHDOG_LOG:-/dev/null}" >&2
  # shellcheck disable=SC2086  # a list of PIDs
  [[ -n "${kids}" ]] && kill -TERM ${kids} 2>/dev/null
  sleep 2
  kids=$(_rm_descendants "${pid}" | paste -sd ' ')
  # shellcheck disable=SC2086
  [[ -n "${kids}" ]] && kill -KILL ${kids} 2>/dev/null
  timeout "${grace}" tail --pid="${pid}" -f /dev/null >/dev/null 2>&1
  (($? == 124)) || return 0
  echo "KILLED ${what}: still running ${grace} s after its processes were killed; the test itself killed" |
    tee -a "${RM_WATCHDOG_LOG:-/dev/null}" >&2
  kill -KILL "${pid}" 2>/dev/null
}

# Started once per test, from setup (which loads this file).
if [[ -n "${BATS_TEST_NAME:-}" && "${RM_TEST_TIMEOUT:-0}" =~ ^[0-9]+$ ]] &&
  ((RM_TEST_TIMEOUT > 0)) && [[ "${_RM_WATCHDOG_FOR:-}" != "${BASHPID}" ]]; then
  _RM_WATCHDOG_FOR=${BASHPID}
  (_rm_watchdog "${_RM_WATCHDOG_FOR}" "${RM_TEST_TIMEOUT}" &) </dev/null 3>&- 4>&-
fi
