# shellcheck shell=bash
# shellcheck disable=SC2034  # RACE_RC, RACE_ERR are read by the .bats files
# Deterministic race tests (a root tool never touches a swapped name): a root wrapper or C helper
# run with RM_TEST_PAUSE=STEP:NAME stops just before STEP touches NAME in a
# directory nobody owns (lib/outfile's rm_test_pause, rm-plot's and the
# wrappers' own points), the test swaps NAME for a symlink to a root file,
# a FIFO or a directory as nobody, lets it go on, and checks that the root
# file, its mode and the planted directory are untouched and nothing hung.

# race_setup: RACE, a directory nobody owns (the build user's log
# directory); VICTIM, a root 0600 file; RACE_FIFO, the test's own pause FIFO.
race_setup() {
  [[ $EUID -eq 0 ]] || skip_needs_root "the race tests need root, attacked by nobody"
  command -v setpriv >/dev/null || skip_or_fail "no setpriv (util-linux)"
  id nobody >/dev/null 2>&1 || skip_or_fail "no user nobody"
  RACE_TOP=$(mktemp -d /tmp/rm-race.XXXXXX)
  chmod 755 "${RACE_TOP}"
  RACE=${RACE_TOP}/shared
  mkdir "${RACE}" && chown nobody: "${RACE}"
  RACE_FIFO=${RACE_TOP}/pause.fifo
  mkfifo -m 600 "${RACE_FIFO}"
  VICTIM=${RACE_TOP}/victim
  (umask 077 && printf 'precious\n' >"${VICTIM}")
  chmod 4750 "${VICTIM}"
}

race_teardown() {
  [[ -z "${RACE_TOP:-}" ]] || rm -rf -- "${RACE_TOP}"
}

skip_or_fail() {
  [[ "${CI:-}" != true ]] || { echo "$1" >&2; return 1; }
  skip "$1"
}

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# plant KIND PATH: PATH replaced, as nobody, by a symlink to VICTIM, a FIFO or
# an empty directory.
plant() {
  # shellcheck disable=SC2016  # expanded by the inner sh, as nobody
  as_nobody sh -c 'rm -rf -- "$2" 2>/dev/null || mv -f -- "$2" "$2.moved"
    case $1 in symlink) ln -s -- "$3" "$2" ;; fifo) mkfifo -- "$2" ;; dir) mkdir -- "$2" ;; esac' \
    _ "$1" "$2" "${VICTIM}"
}

# race_run STEP:NAME KIND CMD...: CMD (a root command in the background) is
# paused at STEP on NAME (a name in RACE), NAME planted with KIND, CMD let go;
# its status in RACE_RC, its stderr in RACE_ERR.  Fails when the step is never
# reached or CMD does not end within 120 s (a hang).
race_run() {
  local at=$1 kind=$2 pid reached
  shift 2
  RACE_ERR=${RACE_TOP}/err.${at//[^a-z0-9.-]/_}.${kind}
  RM_TEST_PAUSE=${at} RM_TEST_PAUSE_FIFO=${RACE_FIFO} "$@" </dev/null >/dev/null 2>"${RACE_ERR}" &
  pid=$!
  reached=$(timeout 120 cat "${RACE_FIFO}") || true
  if [[ "${reached}" != "${at}" ]]; then
    kill -KILL "${pid}" 2>/dev/null
    echo "step ${at} never reached (got '${reached}')" >&2
    return 1
  fi
  plant "${kind}" "${RACE}/${at#*:}"
  # shellcheck disable=SC2016  # $1 is the inner sh's
  timeout 120 sh -c ': >"$1"' _ "${RACE_FIFO}" || { echo "could not let ${at} go on" >&2; return 1; }
  # Up to 120 s for the rest: a FIFO that blocks an open is a hang, and fails here.
  local i
  for ((i = 0; i < 1200; i++)); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${pid}" 2>/dev/null; then
    pkill -KILL -P "${pid}" 2>/dev/null
    kill -KILL "${pid}" 2>/dev/null
    echo "hung after ${at} with a ${kind}" >&2
    return 1
  fi
  RACE_RC=0
  wait "${pid}" || RACE_RC=$?
}

# victim_untouched KIND: VICTIM as it was, and a planted directory still empty.
victim_untouched() {
  [[ "$(cat "${VICTIM}")" == precious ]] || { echo "victim written: $(head -c 200 "${VICTIM}")" >&2; return 1; }
  [[ "$(stat -c %a "${VICTIM}")" == 4750 ]] || { echo "victim mode now $(stat -c %a "${VICTIM}")" >&2; return 1; }
  local d
  for d in "${RACE}"/*; do
    [[ -d "${d}" && ! -L "${d}" ]] || continue
    [[ -z "$(ls -A "${d}")" ]] || { echo "planted directory ${d} got: $(ls -A "${d}")" >&2; return 1; }
  done
}

# poller_start DIR KEEP...: the findings' poller as nobody, in the
# background (POLLER its PID): it lists DIR every 1 ms and at each new name
# but KEEP... plants symlinks to VICTIM at NAME.gp and NAME.log (the names a
# tool working beside its output would make from a temporary file), renames
# NAME away and puts a symlink to VICTIM in its place.  poller_stop ends it.
poller_start() {
  local d=$1
  shift
  rm -f "${RACE_TOP}/stop"
  # shellcheck disable=SC2016  # the poller's own
  as_nobody "${PY:-python3}" -c '
import os, sys, time
d, victim, stop, keep = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
seen = set(os.listdir(d))
while not os.path.exists(stop):
    for name in sorted(set(os.listdir(d)) - seen):
        seen.add(name)
        if name.endswith((".gp", ".log", ".moved")) or name in keep:
            continue
        p = os.path.join(d, name)
        for suffix in (".gp", ".log"):
            try:
                os.symlink(victim, p + suffix)
            except OSError:
                pass
        try:
            os.rename(p, p + ".moved")
            os.symlink(victim, p)
        except OSError:
            pass
    time.sleep(0.001)
' "${d}" "${VICTIM}" "${RACE_TOP}/stop" "$@" &
  POLLER=$!
}

poller_stop() {
  touch "${RACE_TOP}/stop"
  wait "${POLLER}" || true
}
