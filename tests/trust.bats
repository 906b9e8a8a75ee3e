#!/usr/bin/env bats
# Trust: the commands when everything else is failing.  A full disk, a
# closed pipe, kill -9 at any moment, stage files that are FIFOs, devices
# or huge, processes hidden by hidepid, symlinks planted where outputs go.
# docs/reliability.md lists which guarantee each test holds.

setup() {
  load test_helper/common
  load test_helper/trust
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "${p}" ]] || continue
    kill -9 "${p}" 2>/dev/null && wait "${p}" 2>/dev/null
  done
  if mountpoint -q "${BATS_TEST_TMPDIR}/fs" 2>/dev/null; then
    umount "${BATS_TEST_TMPDIR}/fs" 2>/dev/null || umount -l "${BATS_TEST_TMPDIR}/fs"
  fi
  return 0
}

KILL_PIDS=()

# --- full disk -----------------------------------------------------------

@test "rm-sample writing to /dev/full exits 1 with one message, one-shot and streaming, every format" {
  local args
  for args in "" "-i 0.01 -n 5" "-f jsonl" "-f prom -i 0.01 -n 3" "-H -i 0.01 -n 2"; do
    # shellcheck disable=SC2086  # each case is a word list on purpose
    run -1 --separate-stderr bash -c 'rm-sample "$@" >/dev/full' _ $args
    [[ "${#stderr_lines[@]}" == 1 ]]
    [[ "${stderr}" == "rm-sample: cannot write output: No space left on device" ]]
  done
}

@test "rm-sample on a filesystem that fills mid-row leaves only whole rows, exits 1 with one message" {
  local mnt="${BATS_TEST_TMPDIR}/fs" redir
  mkdir -p "${mnt}"
  mount -t tmpfs -o size=64k rm-trust "${mnt}" 2>"${BATS_TEST_TMPDIR}/mount.err" ||
    skip "cannot mount a tmpfs here: $(cat "${BATS_TEST_TMPDIR}/mount.err")"
  for redir in '>' '>>'; do
    rm -f "${mnt}/s.csv"
    # 64 KiB holds a few hundred rows; the one that meets the end is cut.
    run -1 --separate-stderr timeout 60 bash -c "rm-sample -i 0.001 ${redir} \"\$1\"" _ "${mnt}/s.csv"
    [[ "${stderr}" == "rm-sample: cannot write output: No space left on device" ]]
    run -0 whole_rows "${mnt}/s.csv" 19
    echo "# ${redir}: ${output} in $(stat -c %s "${mnt}/s.csv") bytes"
  done
  umount "${mnt}"
}

@test "the other C commands writing to /dev/full exit 1 with one message" {
  local cmd
  for cmd in rm-tree rm-energy rm-gpu rm-summarize; do
    command -v "${cmd}" >/dev/null || continue
    case "${cmd}" in
      rm-tree) run --separate-stderr bash -c 'rm-tree $$ >/dev/full' ;;
      rm-energy) run --separate-stderr bash -c 'RM_SYS_ROOT="$1" rm-energy >/dev/full' _ \
        "${FIXTURES}/powercap/intel1" ;;
      rm-gpu) run --separate-stderr bash -c 'RM_SYS_ROOT="$1" rm-gpu >/dev/full' _ \
        "${FIXTURES}/drm/mixed" ;;
      rm-summarize) run --separate-stderr bash -c 'rm-summarize "$1" >/dev/full' _ \
        "${FIXTURES}/fit/monitor.csv" ;;
      *) ;;
    esac
    echo "# ${cmd}: exit ${status}: ${stderr}"
    [[ "${status}" == 1 ]]
    [[ "${#stderr_lines[@]}" == 1 ]]
    [[ "${stderr}" == "${cmd}: "*"No space left on device" ]]
  done
}

# --- a closed stdout -----------------------------------------------------

@test "| head -n 1 ends rm-sample quietly: exit 0, nothing on stderr, csv and jsonl" {
  local fmt
  for fmt in csv jsonl prom; do
    run -0 bash -c 'rm-sample -f "$1" -i 0.01 2>"$2" | head -n 1 >/dev/null
      echo "${PIPESTATUS[0]}"' _ "${fmt}" "${BATS_TEST_TMPDIR}/err"
    [[ "${output}" == 0 ]]
    [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
  done
  # One-shot: the row is written after head has gone.
  run -0 bash -c 'rm-sample 2>"$1" | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}"' _ \
    "${BATS_TEST_TMPDIR}/err"
  [[ "${output}" == 0 ]]
  [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
}

@test "| head -n 1 ends rm-tree quietly: snapshot and stream, exit 0, nothing on stderr" {
  need rm-tree
  run -0 bash -c 'rm-tree 2>"$1" | head -n 1 >/dev/null; echo "${PIPESTATUS[0]}"' _ \
    "${BATS_TEST_TMPDIR}/err"
  [[ "${output}" == 0 ]]
  [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
  # A stream's exit log gets a row whenever a process ends: keep some ending.
  "${RM_BUILD}/tests/churn" 200 20 >/dev/null &
  KILL_PIDS+=("$!")
  run -0 timeout 15 bash -c 'rm-tree -i 0.01 --match . 2>"$1" | head -n 2 >/dev/null
    echo "${PIPESTATUS[0]}"' _ "${BATS_TEST_TMPDIR}/err"
  [[ "${output}" == 0 ]]
  [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
}

# --- kill -9 at random moments -------------------------------------------

@test "20 kill -9s at random moments of streaming rm-sample leave only whole rows" {
  under_valgrind && skip "valgrind starts slower than the kill window: nothing to cut"
  local i pid f out rows=0
  for i in $(seq 20); do
    f="${BATS_TEST_TMPDIR}/kill-${i}.csv"
    rm-sample -i 0.001 >"${f}" 2>"${BATS_TEST_TMPDIR}/err" &
    pid=$!
    sleep "$(printf '0.%03d' $((RANDOM % 400 + 5)))"
    kill -9 "${pid}"
    wait "${pid}" 2>/dev/null || true
    [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
    out=$(whole_rows "${f}" 19)
    rows=$((rows + ${out% rows}))
  done
  echo "# ${rows} rows in 20 killed streams"
  ((rows > 20))
}

@test "20 kill -9s at random moments of streaming rm-tree leave only whole rows (exit log and timeline)" {
  under_valgrind && skip "valgrind starts slower than the kill window: nothing to cut"
  need rm-tree
  local i pid out rows=0 ncols
  ncols=$(xl_ncols)
  # Processes ending all the time, so the exit log is being written.
  "${RM_BUILD}/tests/churn" 300 60 >/dev/null &
  KILL_PIDS+=("$!")
  for i in $(seq 20); do
    rm-tree -i 0.01 --match . --timeline "${BATS_TEST_TMPDIR}/tl-${i}.csv" \
      >"${BATS_TEST_TMPDIR}/log-${i}.csv" 2>"${BATS_TEST_TMPDIR}/err" &
    pid=$!
    sleep "$(printf '0.%03d' $((RANDOM % 500 + 20)))"
    kill -9 "${pid}"
    wait "${pid}" 2>/dev/null || true
    [[ ! -s "${BATS_TEST_TMPDIR}/err" ]]
    out=$(whole_rows "${BATS_TEST_TMPDIR}/log-${i}.csv" "${ncols}")
    rows=$((rows + ${out% rows}))
    # Killed before it opened its timeline (an ASan build starts slowly):
    # no file, nothing cut.
    [[ ! -e "${BATS_TEST_TMPDIR}/tl-${i}.csv" ]] || whole_rows "${BATS_TEST_TMPDIR}/tl-${i}.csv" 6
  done
  echo "# ${rows} exit-log rows in 20 killed streams"
  ((rows > 20))
}

# --- stage files that are not files --------------------------------------

# stage_run FILE [WANT]: 400 ticks at 10 ms with FILE as the stage file; checks that
# every tick came (no hang), the stage is WANT (default empty), stderr is quiet, and the
# resident set did not grow between tick 30 and tick 290.  Under valgrind
# (a tick takes it ~0.2 s, and /proc shows valgrind's memory): 20 ticks,
# no RSS check.
stage_run() {
  local f=$1 want=${2:-} out="${BATS_TEST_TMPDIR}/stage.csv" pid rss_early= rss_late= last n=400 limit=15
  if under_valgrind; then
    n=20
    limit=60
  fi
  rm-sample -i 0.01 -n "${n}" --stage-file "${f}" \
    --stage-log-dir "${BATS_TEST_TMPDIR}/logs" >"${out}" 2>"${BATS_TEST_TMPDIR}/err" &
  pid=$!
  if ! under_valgrind; then
    wait_for 20 rows_at_least "${out}" 30
    rss_early=$(vm_kib "${pid}" VmRSS)
    wait_for 20 rows_at_least "${out}" 290
    rss_late=$(vm_kib "${pid}" VmRSS)
  fi
  run -0 timeout "${limit}" tail --pid="${pid}" -f /dev/null
  wait "${pid}"
  [[ ! -s "${BATS_TEST_TMPDIR}/err" ]] || { cat "${BATS_TEST_TMPDIR}/err"; false; }
  [[ "$(whole_rows "${out}" 19)" == "$((n + 1)) rows" ]]
  run -0 csv_get "${out}" stage "${n}"
  [[ "${output}" == "${want}" ]]
  # 400 ticks of 10 ms: a hang of even one tick on the file would show.
  last=$(csv_get "${out}" elapsed_s "${n}")
  echo "# ${f##*/}: ${n} ticks in ${last} s, VmRSS ${rss_early} -> ${rss_late} KiB"
  awk -v t="${last}" -v l="${limit}" 'BEGIN { exit !(t < l) }'
  if [[ -n "${rss_early}" && -n "${rss_late}" ]] && ! under_san; then
    ((rss_late - rss_early <= 256))
  fi
}

@test "a stage file that is a FIFO with no writer never hangs a tick" {
  mkdir -p "${BATS_TEST_TMPDIR}/logs"
  mkfifo "${BATS_TEST_TMPDIR}/fifo"
  stage_run "${BATS_TEST_TMPDIR}/fifo"
}

@test "a stage file that is a FIFO whose writer never writes never hangs a tick" {
  mkdir -p "${BATS_TEST_TMPDIR}/logs"
  mkfifo "${BATS_TEST_TMPDIR}/fifo"
  # The writer blocks in open until a reader comes, then holds it open.
  sleep 60 >"${BATS_TEST_TMPDIR}/fifo" &
  KILL_PIDS+=("$!")
  stage_run "${BATS_TEST_TMPDIR}/fifo"
}

@test "/dev/zero as the stage file never hangs a tick nor grows memory" {
  mkdir -p "${BATS_TEST_TMPDIR}/logs"
  stage_run /dev/zero
}

@test "a 1 GiB stage file and a 1 GiB newest log never hang a tick nor grow memory" {
  mkdir -p "${BATS_TEST_TMPDIR}/logs"
  truncate -s 1G "${BATS_TEST_TMPDIR}/big"
  # Older logs that are not regular files are passed over, never opened.
  mkfifo "${BATS_TEST_TMPDIR}/logs/fifo.log"
  ln -s /dev/zero "${BATS_TEST_TMPDIR}/logs/zero.log"
  truncate -s 1G "${BATS_TEST_TMPDIR}/logs/huge.log"
  # A stage file with no name in it (NULs) falls back to the newest log.
  stage_run "${BATS_TEST_TMPDIR}/big" huge
  run -0 csv_get "${BATS_TEST_TMPDIR}/stage.csv" context $(($(lines_of "${BATS_TEST_TMPDIR}/stage.csv") - 1))
  [[ -z "${output}" ]]
  # And the log as the stage source: its name, read from the directory.
  run -0 timeout 20 rm-sample -i 0.01 -n 20 --stage-log-dir "${BATS_TEST_TMPDIR}/logs"
  run -0 csv_get <(printf '%s\n' "${lines[@]}") stage 20
  [[ "${output}" == huge ]]
}

# --- hidden processes ----------------------------------------------------

# as_nobody_hidepid CMD...: run CMD as nobody in a private mount namespace
# whose /proc is mounted hidepid=2; skips when namespaces are refused.
as_nobody_hidepid() {
  unshare -m --propagation private true 2>/dev/null ||
    skip "unshare -m is refused here (not root, or no user namespaces)"
  run --separate-stderr unshare -m --propagation private bash -c '
    mount -t proc -o hidepid=2 proc /proc || exit 99
    exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"' _ "$@"
  [[ "${status}" != 99 ]] || skip "mount -t proc -o hidepid=2 is refused here"
}

@test "hidepid=2: rm-sample as nobody counts only what it can see and says nothing about the rest" {
  # A compiler owned by root: visible to root, hidden from nobody.
  cp /bin/sleep "${BATS_TEST_TMPDIR}/cc1plus"
  "${BATS_TEST_TMPDIR}/cc1plus" 60 &
  KILL_PIDS+=("$!")
  run -0 --separate-stderr rm-sample -f jsonl
  run -0 jq -r .compilers <<<"${output}"
  ((output >= 1))
  as_nobody_hidepid "${RM_TOP}/bin/rm-sample" -f jsonl -i 0.01 -n 5
  [[ "${status}" == 0 ]]
  [[ -z "${stderr}" ]]
  [[ "${#lines[@]}" == 5 ]]
  run -0 jq -r '[.compilers, (.mem_avail_mb > 0)] | @csv' <<<"${lines[4]}"
  [[ "${output}" == "0,true" ]]
}

@test "hidepid=2: rm-tree as nobody lists only what it can see, snapshot and stream, and says nothing" {
  need rm-tree
  # A name of its own: other test files running beside this one (make
  # check runs them in parallel) start sleeps as nobody, which nobody sees.
  cp /bin/sleep "${BATS_TEST_TMPDIR}/rootsleeper"
  "${BATS_TEST_TMPDIR}/rootsleeper" 60 &
  KILL_PIDS+=("$!")
  run -0 "${RM_TOP}/bin/rm-tree" --match . -o pid,comm
  [[ "${output}" == *",rootsleeper"* ]]
  as_nobody_hidepid "${RM_TOP}/bin/rm-tree" --match . -o pid,comm
  [[ "${status}" == 0 ]]
  [[ -z "${stderr}" ]]
  # Only nobody's own processes: the rm-tree itself; never root's sleeper.
  [[ "${output}" != *",rootsleeper"* ]]
  [[ "${output}" == *",rm-tree"* ]]
  as_nobody_hidepid "${RM_TOP}/bin/rm-tree" --match . -i 0.01 -n 20
  [[ "${status}" == 0 ]]
  [[ -z "${stderr}" ]]
}

# --- files and paths -----------------------------------------------------

@test "every output file is opened with O_NOFOLLOW, and no temporary file is made in a shared directory" {
  # Every open() that may create a file in src/ and lib/ says O_NOFOLLOW
  # (a symlink planted at an output path is refused, never written
  # through); no fopen() for writing; no tmpfile/tmpnam/mktemp and nothing
  # under /tmp (temporary files are made with O_EXCL beside their target).
  run -0 "${PY}" - "${RM_TOP}" <<'EOF'
import glob, re, sys
top = sys.argv[1]
bad = []
for path in sorted(glob.glob(f"{top}/src/**/*.c", recursive=True) + glob.glob(f"{top}/lib/*.c")):
    text = open(path, encoding="utf-8").read()
    rel = path[len(top) + 1:]
    for m in re.finditer(r"\b(open|openat)\s*\(([^;]*?)\)\s*[;)]", text, re.S):
        args = m.group(2)
        if "O_CREAT" in args and "O_NOFOLLOW" not in args:
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{rel}:{line}: {m.group(1)} without O_NOFOLLOW: {' '.join(args.split())}")
    for m in re.finditer(r"\bfopen\s*\([^;]*\"[wa]", text):
        bad.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: fopen for writing")
    for m in re.finditer(r"\b(tmpnam|tempnam|tmpfile|mktemp)\s*\(|\"/tmp/", text):
        bad.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: temporary file in a shared directory")
print("\n".join(bad))
EOF
  echo "${output}"
  [[ -z "${output}" ]]
}

@test "a symlink planted where an output goes is refused, and its target is left alone" {
  local victim="${BATS_TEST_TMPDIR}/victim" link="${BATS_TEST_TMPDIR}/link" checked=0
  local -a failed=()
  # try DESCRIPTION STATUS CMD...: CMD must exit STATUS with a message
  # naming the path, the victim intact (rm-run checks every output path
  # before the command starts: exit 1, nothing run).  Every command
  # is tried; the failures are listed at the end.
  try() {
    echo precious >"${victim}"
    ln -sfn "${victim}" "${link}"
    run --separate-stderr "${@:3}"
    echo "# $1: exit ${status}: ${stderr%%$'\n'*}"
    if [[ "$(cat "${victim}")" != precious || "${status}" != "$2" || "${stderr}" != *"${link}"* ]]; then
      failed+=("$1")
    fi
    checked=$((checked + 1))
  }
  if command -v rm-tree >/dev/null; then
    try "rm-tree --timeline" 1 rm-tree -i 0.01 -n 2 --timeline "${link}" $$
    try "rm-tree --log" 1 rm-tree -i 0.01 -n 2 --log "${link}" $$
    try "rm-tree --job" 1 rm-tree --exec --job "${link}" -- true
  fi
  if command -v rm-summarize >/dev/null; then
    try "rm-summarize --svg" 1 rm-summarize --svg "${link}" "${FIXTURES}/fit/monitor.csv"
    try "rm-summarize --csv" 1 rm-summarize --csv "${link}" "${FIXTURES}/fit/resources-demo.procs.csv"
  fi
  if command -v rm-energy >/dev/null; then
    try "rm-energy -o" 1 env RM_SYS_ROOT="${FIXTURES}/powercap/intel1" rm-energy -o "${link}" -- true
  fi
  if command -v rm-run >/dev/null; then
    try "rm-run -o" 1 rm-run -o "${link}" -- true
    try "rm-run --csv" 1 rm-run --csv "${link}" -- true
    try "rm-run --timeline" 1 rm-run --timeline "${link}" -- true
  fi
  ((checked > 0)) || skip "no command with an output file option has landed"
  ((${#failed[@]} == 0)) || { echo "followed the symlink: ${failed[*]}"; false; }
}

@test "the shell wrappers pass shellcheck -o all, every exception justified in a comment, and never eval" {
  local f n=0
  for f in "${RM_TOP}"/scripts/rm-* "${RM_TOP}"/scripts/*.sh; do
    [[ -f "${f}" ]] || continue
    # A wrapper, or the helpers they source (no shebang: a shellcheck shell= line).
    head -n 1 "${f}" | grep -qE '^(#!.*|# shellcheck shell=)(ba)?sh' || continue
    n=$((n + 1))
    run shellcheck -x -o all "${f}"
    [[ "${status}" == 0 ]] || { echo "${output}"; false; }
    # A disable with no reason after it: "# shellcheck disable=SCnnnn  # why".
    run grep -nE '^[[:space:]]*# shellcheck disable=[A-Z0-9,]+[[:space:]]*$' "${f}"
    [[ "${status}" == 1 ]] || { echo "${f}: disable without a reason: ${output}"; false; }
    run grep -nE '(^|[;&|[:space:]])eval([[:space:]]|$)' "${f}"
    [[ "${status}" == 1 ]] || { echo "${f}: eval: ${output}"; false; }
  done
  ((n > 0)) || skip "no shell wrappers in scripts/ yet"
}
