#!/usr/bin/env bats
# The monitor when the machine is in trouble: a filesystem that fills up
# under it, and the OOM killer looking for a victim.

setup() {
  load test_helper/common
  load test_helper/trust
  MNT=
}

teardown() {
  local p
  for p in "${KILL_PIDS[@]:-}"; do
    [[ -n "${p}" ]] || continue
    kill -9 "${p}" 2>/dev/null && wait "${p}" 2>/dev/null
  done
  if [[ -n "${MNT}" ]]; then
    umount "${MNT}" 2>/dev/null || umount -l "${MNT}" 2>/dev/null
  fi
  return 0
}

KILL_PIDS=()

# small_fs: mount a 2 MiB tmpfs at MNT; skips, saying why, where mount is
# refused (not root, or in a container without CAP_SYS_ADMIN).
small_fs() {
  MNT="${BATS_TEST_TMPDIR}/fs"
  mkdir -p "${MNT}"
  if ! mount -t tmpfs -o size=2m,mode=0755 rm-trust "${MNT}" 2>"${BATS_TEST_TMPDIR}/mount.err"; then
    MNT=
    skip "cannot mount a tmpfs here: $(cat "${BATS_TEST_TMPDIR}/mount.err")"
  fi
}

# fill: write zeros into MNT until the filesystem is full.
fill() {
  dd if=/dev/zero of="${MNT}/fill" bs=4096 2>/dev/null || true
  [[ "$(df --output=avail "${MNT}" | tail -n 1 | tr -d ' ')" == 0 ]]
}

# The guarantee this file holds (docs/reliability.md, "lost rows counted"):
# rm-monitor on a full filesystem keeps sampling and counts each row it
# could not write; when space returns it writes again; its summary says
#   N rows lost from ISO-TIME
# in summary.txt, and "rows_lost": N, "rows_lost_from": "ISO-TIME" in
# summary.json; a summary that cannot be written goes to stderr instead.

@test "a filesystem that fills: the monitor keeps sampling, counts the rows it lost, resumes, and says so in its summary" {
  need rm-monitor
  under_valgrind && skip "timing: valgrind is too slow for 20 ms ticks"
  small_fs
  local csv="${MNT}/resources-full.csv" before after mon
  rm-monitor --out-dir "${MNT}" --run-id full --interval 0.02 --procs-interval 0.1 \
    --disk-path "${MNT}" 2>"${BATS_TEST_TMPDIR}/mon.err" &
  mon=$!
  KILL_PIDS+=("${mon}")
  wait_for 20 rows_at_least "${csv}" 10
  fill
  local size
  size=$(stat -c %s "${csv}")
  sleep 0.5
  before=$(lines_of "${csv}")
  sleep 1
  # Still running, and the file grows no further while the disk is full
  # (rows may still fill the page its last row began, which needs no new
  # block: at most to the next 4 KiB boundary).
  kill -0 "${mon}"
  [[ "$(lines_of "${csv}")" == "${before}" ]]
  (($(stat -c %s "${csv}") <= (size + 4095) / 4096 * 4096))
  rm -f "${MNT}/fill"
  wait_for 20 rows_at_least "${csv}" $((before + 20))
  kill -TERM "${mon}"
  wait "${mon}"
  [[ ! -s "${BATS_TEST_TMPDIR}/mon.err" ]]
  whole_rows "${csv}" 19
  after=$(lines_of "${csv}")
  echo "# ${before} lines when full, ${after} at the end"
  # The summary counts the gap: at 20 ms a tick, a second full is ~50 rows.
  run -0 grep -E '[0-9]+ rows lost from [0-9T:.-]+Z' "${MNT}/resources-full.summary.txt"
  echo "# ${output}"
  [[ "${output}" =~ ([0-9]+)\ rows\ lost ]]
  ((BASH_REMATCH[1] >= 20))
  run -0 jq -e '.rows_lost >= 20 and (.rows_lost_from | test("Z$"))' "${MNT}/resources-full.summary.json"
}

@test "a filesystem still full at the end: the summary goes to stderr" {
  need rm-monitor
  under_valgrind && skip "timing: valgrind is too slow for 20 ms ticks"
  small_fs
  local mon
  rm-monitor --out-dir "${MNT}" --run-id stuck --interval 0.02 --disk-path "${MNT}" \
    2>"${BATS_TEST_TMPDIR}/mon.err" &
  mon=$!
  KILL_PIDS+=("${mon}")
  wait_for 20 rows_at_least "${MNT}/resources-stuck.csv" 10
  fill
  sleep 0.5
  kill -TERM "${mon}"
  wait "${mon}"
  whole_rows "${MNT}/resources-stuck.csv" 19
  [[ ! -e "${MNT}/resources-stuck.summary.txt" || ! -s "${MNT}/resources-stuck.summary.txt" ]]
  run -0 grep -E '[0-9]+ rows lost from' "${BATS_TEST_TMPDIR}/mon.err"
}

@test "the monitor lowers its own oom_score_adj where it may, and its samplers' with it" {
  need rm-monitor
  # Lowering needs CAP_SYS_RESOURCE, which root in a container may lack.
  bash -c 'printf -- "-1\n" >/proc/self/oom_score_adj' 2>/dev/null ||
    skip "this machine does not let even root lower oom_score_adj (no CAP_SYS_RESOURCE)"
  local d="${BATS_TEST_TMPDIR}/out" mon pid adj
  mkdir -p "${d}"
  rm-monitor --out-dir "${d}" --run-id oom --interval 0.05 --procs-interval 0.1 \
    2>"${BATS_TEST_TMPDIR}/mon.err" &
  mon=$!
  KILL_PIDS+=("${mon}")
  wait_for 20 rows_at_least "${d}/resources-oom.csv" 3
  adj=$(cat "/proc/${mon}/oom_score_adj")
  echo "# monitor oom_score_adj ${adj}"
  ((adj < 0))
  for pid in $(pgrep -P "${mon}"); do
    echo "# child $(cat "/proc/${pid}/comm") oom_score_adj $(cat "/proc/${pid}/oom_score_adj")"
    (($(cat "/proc/${pid}/oom_score_adj") < 0))
  done
  kill -TERM "${mon}"
  wait "${mon}"
  [[ ! -s "${BATS_TEST_TMPDIR}/mon.err" ]]
}

@test "where lowering oom_score_adj is not permitted the monitor says nothing and carries on" {
  need rm-monitor
  local d mon
  d=$(mktemp -d)
  chmod 777 "${d}"
  setpriv --reuid=65534 --regid=65534 --clear-groups -- \
    "${RM_TOP}/bin/rm-monitor" --out-dir "${d}" --run-id nobody --interval 0.05 \
    --procs-interval 0.1 2>"${BATS_TEST_TMPDIR}/mon.err" &
  mon=$!
  KILL_PIDS+=("${mon}")
  wait_for 20 rows_at_least "${d}/resources-nobody.csv" 3
  [[ "$(cat "/proc/${mon}/oom_score_adj")" == 0 ]]
  kill -TERM "${mon}"
  wait "${mon}"
  [[ ! -s "${BATS_TEST_TMPDIR}/mon.err" ]] || { cat "${BATS_TEST_TMPDIR}/mon.err"; false; }
  whole_rows "${d}/resources-nobody.csv" 19
  [[ -s "${d}/resources-nobody.summary.txt" ]]
  rm -rf "${d}"
}

@test "summaries appear whole: written to an O_EXCL temporary file beside them, then renamed" {
  need rm-monitor
  command -v strace >/dev/null || skip "strace is not installed"
  local d="${BATS_TEST_TMPDIR}/out" pid
  mkdir -p "${d}"
  sleep 2 &
  pid=$!
  strace -f -qq -e trace=open,openat,creat,rename,renameat,renameat2,link,linkat \
    -o "${BATS_TEST_TMPDIR}/trace" \
    rm-monitor --out-dir "${d}" --run-id atom --interval 0.1 --watch-pid "${pid}" \
    2>"${BATS_TEST_TMPDIR}/mon.err"
  [[ -s "${d}/resources-atom.summary.txt" && -s "${d}/resources-atom.summary.json" ]]
  run -0 "${PY}" - "${BATS_TEST_TMPDIR}/trace" "${d}" <<'PYEOF'
import re, sys
trace, d = sys.argv[1], sys.argv[2]
lines = open(trace).read().splitlines()
bad = []
for name in ("summary.txt", "summary.json"):
    target = f"{d}/resources-atom.{name}"
    # Never opened for writing under its own name...
    for l in lines:
        if re.search(r'open(at)?\(.*"' + re.escape(target) + r'".*O_(WRONLY|RDWR|CREAT)', l):
            bad.append(f"{name} written in place: {l}")
    # ...but renamed into place from a file in the same directory...
    ren = [l for l in lines if re.search(r'rename(at2?)?\(.*"' + re.escape(target) + r'"', l)]
    if not ren:
        bad.append(f"{name}: no rename into place")
        continue
    src = re.search(r'"([^"]+)"', ren[-1]).group(1)
    if not src.startswith(d + "/"):
        bad.append(f"{name}: temporary file {src} is not beside its target")
    # ...that was first created with O_EXCL (reopening it later is ours to do).
    made = [l for l in lines if f'"{src}"' in l and "O_CREAT" in l]
    if not made or "O_EXCL" not in made[0]:
        bad.append(f"{name}: temporary file {src} not created with O_EXCL: {made}")
print("\n".join(bad) or "ok")
PYEOF
  echo "${output}"
  [[ "${output}" == ok ]]
}
