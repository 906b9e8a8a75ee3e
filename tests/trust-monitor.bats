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
    skip_needs_root "cannot mount a tmpfs here: $(cat "${BATS_TEST_TMPDIR}/mount.err")" 21
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
  wait_for 30 lost_a_row "${mon}"
  # A writer that got part of a row in as the disk filled cut its file
  # back (whole rows only), and may have freed a page: take it too.
  dd if=/dev/zero of="${MNT}/fill2" bs=4096 2>/dev/null || true
  local size lost
  size=$(stat -c %s "${csv}")
  lost=$(rows_lost "${mon}")
  before=$(lines_of "${csv}")
  # Still sampling, and counting each row the full disk refuses ...
  wait_for 30 rows_lost_at_least "${mon}" $((lost + 20))
  kill -0 "${mon}"
  # ... while the file grows no further than the 4 KiB page its last row
  # ends in, which needs no new block.  A row shorter than the one refused
  # may still fit there (rows differ by a few bytes): so the bound is the
  # page, not the line count.
  (($(stat -c %s "${csv}") <= (size + 4095) / 4096 * 4096))
  echo "# ${before} lines when full, $(lines_of "${csv}") after 20 more rows lost"
  (($(lines_of "${csv}") < before + 10))
  rm -f "${MNT}/fill" "${MNT}/fill2"
  wait_for 20 rows_at_least "${csv}" $((before + 20))
  kill -TERM "${mon}"
  local rc=0
  wait "${mon}" || rc=$?
  # rm-tree's exit log is on the same full disk: where processes ended
  # meanwhile (a busy host), it says once that it could not write them,
  # stops, and the monitor restarts it; then the summary says what the log
  # misses, and the monitor exits 1.  Nothing else is said.
  run grep -Ev '^rm-tree: cannot write the exit log: No space left on device$|^rm-monitor: rm-tree ended \(exit status 1\); restarted: processes that ended in between are missing$' \
    "${BATS_TEST_TMPDIR}/mon.err"
  [[ -z "${output}" ]] || { echo "${output}"; false; }
  if grep -q '^rm-monitor: rm-tree ended' "${BATS_TEST_TMPDIR}/mon.err"; then
    [[ "${rc}" == 1 ]]
    grep -q 'process log (rm-tree) died at' "${MNT}/resources-full.summary.txt"
  else
    [[ "${rc}" == 0 ]]
  fi
  whole_rows "${csv}" 19
  after=$(lines_of "${csv}")
  echo "# ${before} lines when full, ${after} at the end"
  # The summary counts the gap: 20 rows or more were lost while full.
  run -0 grep -E '[0-9]+ rows lost from [0-9T:.-]+Z' "${MNT}/resources-full.summary.txt"
  echo "# ${output}"
  [[ "${output}" =~ ([0-9]+)\ rows\ lost ]]
  ((BASH_REMATCH[1] >= 20))
  run -0 jq -e '.rows_lost >= 20 and (.rows_lost_from | test("Z$"))' "${MNT}/resources-full.summary.json"
}

# lost_a_row MONITOR_PID: that monitor's rm-sample says in its --status
# file that it has lost a row.
lost_a_row() {
  rows_lost_at_least "$1" 1
}

# rows_lost MONITOR_PID: the rows_lost of that monitor's rm-sample (0
# before its --status file is written).
rows_lost() {
  local n
  n=$(sed -n 's/^rows_lost=//p' "${TMPDIR:-/tmp}/rm-monitor.$1".*/status.* 2>/dev/null | head -n 1)
  echo "${n:-0}"
}

# rows_lost_at_least MONITOR_PID N: it has lost N rows or more.
rows_lost_at_least() {
  (($(rows_lost "$1") >= $2))
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
  # Until the sampler has lost a row (its --status file says so), however
  # slow the machine: a fixed sleep was too short under SAN=1 on a busy host.
  wait_for 30 lost_a_row "${mon}"
  kill -TERM "${mon}"
  # The summary could not be kept: that is a failure (exit 1).
  local rc=0
  wait "${mon}" || rc=$?
  [[ "${rc}" == 1 ]]
  whole_rows "${MNT}/resources-stuck.csv" 19
  [[ ! -e "${MNT}/resources-stuck.summary.txt" || ! -s "${MNT}/resources-stuck.summary.txt" ]]
  run -0 grep -E '[0-9]+ rows lost from' "${BATS_TEST_TMPDIR}/mon.err"
}

@test "the monitor lowers its own oom_score_adj where it may, and its samplers' with it" {
  need rm-monitor
  # Lowering needs CAP_SYS_RESOURCE (bit 24 of CapEff), which root in a
  # container may lack: a limit of the machine, a plain skip.
  has_cap 24 && bash -c 'printf -- "-1\n" >/proc/self/oom_score_adj' 2>/dev/null ||
    skip "this machine does not let even root lower oom_score_adj (no CAP_SYS_RESOURCE in CapEff $(awk '$1 == "CapEff:" { print $2 }' /proc/self/status))"
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
  pid=$(watched_until "${d}/resources-atom.csv")
  # Its stderr says why, should it fail (a loaded make check SAN=1 saw
  # it exit non-zero once, with nothing to tell why).
  strace -f -qq -y -e trace=open,openat,creat,rename,renameat,renameat2,link,linkat \
    -o "${BATS_TEST_TMPDIR}/trace" \
    rm-monitor --out-dir "${d}" --run-id atom --interval 0.1 --watch-pid "${pid}" \
    2>"${BATS_TEST_TMPDIR}/mon.err" || { cat "${BATS_TEST_TMPDIR}/mon.err"; false; }
  [[ -s "${d}/resources-atom.summary.txt" && -s "${d}/resources-atom.summary.json" ]]
  run -0 "${PY}" - "${BATS_TEST_TMPDIR}/trace" "${d}" <<'PYEOF'
import re, sys
trace, d = sys.argv[1], sys.argv[2]
# strace -y: a name relative to a directory descriptor (openat, renameat) as the path.
lines = [re.sub(r'\b\d+<([^>]*)>, "([^"]*)"', r'"\1/\2"', l) for l in open(trace).read().splitlines()]
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

@test "an out-dir full from the start: the lost rows on stderr, exit 1, no bash write errors" {
  need rm-monitor
  MNT="${BATS_TEST_TMPDIR}/tiny"
  mkdir -p "${MNT}"
  if ! mount -t tmpfs -o size=16k,mode=0755 rm-trust "${MNT}" 2>"${BATS_TEST_TMPDIR}/mount.err"; then
    MNT=
    skip_needs_root "cannot mount a tmpfs here: $(cat "${BATS_TEST_TMPDIR}/mount.err")" 21
  fi
  fill
  # The build lives 3 s past the start of the monitor's sampler (found by
  # its --watch-pid, the monitor's PID), at most 60 s: a fixed 5 s was
  # too short for an ASan build's start under load (a loaded make check
  # SAN=1 lost one row, not two).
  sh -c 'i=0
    while [ "$i" -lt 600 ]; do
      m=$(pgrep -f -- "rm-monitor --out-dir $1 --run-id full" | head -n 1)
      [ -n "$m" ] && pgrep -f -- "rm-sample .*--watch-pid $m " >/dev/null && break
      sleep 0.1
      i=$((i + 1))
    done
    sleep 3' _ "${MNT}" </dev/null >/dev/null 2>&1 3>&- &
  local w=$!
  run -1 --separate-stderr rm-monitor --out-dir "${MNT}" --run-id full --interval 0.1 --watch-pid "${w}"
  echo "${stderr}"
  [[ "${stderr}" =~ rm-monitor:\ ([0-9]+)\ rows\ lost\ from\ [0-9T:.-]+Z:\ cannot\ write\ to\ \'${MNT}/resources-full.csv\':\ No\ space\ left\ on\ device ]]
  ((BASH_REMATCH[1] >= 2))
  [[ "${stderr}" != *"write error"* ]]
  [[ "${stderr}" != *"line "* ]]
}

# --- rm-sample: refuse at once, say it in the same words ----------------

@test "rm-sample --prom-file into a missing or unwritable directory fails at once" {
  run -1 --separate-stderr timeout 20 rm-sample -n 2 -i 0.01 --prom-file /nonexistent/dir/x.prom
  [ "$stderr" = "rm-sample: cannot write --prom-file '/nonexistent/dir/x.prom': No such file or directory" ]
  mkdir -m 0555 "$BATS_TEST_TMPDIR/ro"
  run -1 --separate-stderr timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$(command -v rm-sample)" -n 2 -i 0.01 --prom-file "$BATS_TEST_TMPDIR/ro/x.prom"
  [ "$stderr" = "rm-sample: cannot write --prom-file '$BATS_TEST_TMPDIR/ro/x.prom': Permission denied" ]
}

@test "rm-sample -o refuses to append another format or column set; two outputs on one path are refused" {
  local f="$BATS_TEST_TMPDIR/m.csv"
  run -0 rm-sample -o "$f" -n 1
  run -1 --separate-stderr rm-sample -o "$f" -n 1 -f jsonl
  [ "$stderr" = "rm-sample: cannot append to '$f': it holds another format or other columns" ]
  run -1 --separate-stderr rm-sample -o "$f" -n 1 --energy
  [ "$stderr" = "rm-sample: cannot append to '$f': it holds another format or other columns" ]
  run -0 rm-sample -o "$f" -n 1
  [ "$(csv_cols "$f")" = 19 ]
  [ "$(wc -l < "$f")" -eq 3 ]
  run -2 --separate-stderr rm-sample -o "$f" --prom-file "$f" -n 1
  [ "${stderr_lines[0]}" = "rm-sample: '$f' is named for two outputs" ]
  run -0 --separate-stderr rm-sample -n 1 -o /dev/stdout
  [ "${#lines[@]}" -eq 2 ]
}

@test "rm-sample names the option it does not know, even inside a cluster" {
  run -2 --separate-stderr rm-sample -Zi 1
  [ "${stderr_lines[0]}" = "rm-sample: unknown option '-Z'" ]
  run -2 --separate-stderr rm-sample -HZ
  [ "${stderr_lines[0]}" = "rm-sample: unknown option '-Z'" ]
  run -2 --separate-stderr rm-sample --interval
  [ "${stderr_lines[0]}" = "rm-sample: option '--interval' needs a value" ]
}

@test "rm-sample --status: rows written and lost, gaps, and final only at a clean end" {
  local st="$BATS_TEST_TMPDIR/st" pid
  run -0 rm-sample -i 0.05 -n 4 -o "$BATS_TEST_TMPDIR/s.csv" --status "$st"
  grep -qx 'rows_written=4' "$st"
  grep -qx 'rows_lost=0' "$st"
  grep -qx 'final=1' "$st"
  # SIGSTOP for longer than 3 ticks: a gap, counted.
  rm-sample -i 0.05 -o "$BATS_TEST_TMPDIR/g.csv" --status "$st.g" &
  pid=$!
  wait_for 20 grep -qx 'rows_written=[1-9][0-9]*' "$st.g"
  kill -STOP "$pid"
  sleep 1
  kill -CONT "$pid"
  wait_for 20 grep -qx 'gaps=[1-9][0-9]*' "$st.g"
  grep -qx 'final=0' "$st.g"
  kill -KILL "$pid"
  wait "$pid" || true
  # Killed: never marked final.
  grep -qx 'final=0' "$st.g"
  awk -F= '$1 == "longest_gap_s" { exit !($2 >= 0.9) }' "$st.g"
}

@test "rm-sample writes a row even when the watched PID ends during its first window" {
  local i
  for i in 1 2 3 4 5 6 7 8; do
    sleep 0.05 &
    local p=$!
    # The PID may be gone before rm-sample watches it (an error, exit 1),
    # or end in its first 100 ms: then one row, never none.
    run --separate-stderr rm-sample -i 1 --watch-pid "$p"
    if [ "$status" -eq 0 ]; then
      [ "${#lines[@]}" -eq 2 ]
    else
      [ "$stderr" = "rm-sample: cannot watch PID $p: No such process" ]
    fi
  done
  sleep 2 &
  run -0 --separate-stderr rm-sample -i 5 --watch-pid $!
  [ "${#lines[@]}" -ge 2 ]
}

# --- stage file and logs: never through a symlink, never another user's ----

@test "the stage file and stage logs are never read through a symlink, nor a log of another owner" {
  local d="$BATS_TEST_TMPDIR"
  mkdir -p "$d/logs"
  echo 'building foo' > "$d/logs/compile.log"
  printf 'root:secret\n' > "$d/secret"
  chmod 600 "$d/secret"
  ln -s "$d/secret" "$d/stagefile"
  run -0 --separate-stderr rm-sample --stage-file "$d/stagefile" --stage-log-dir "$d/logs"
  [[ "$output" != *secret* ]]
  [ "$(csv_get <(printf '%s\n' "${lines[@]}") context)" = "building foo" ]
  [ "$stderr" = "rm-sample: --stage-file '$d/stagefile': a symbolic link, not followed" ]
  # A newer log that is a symlink to a root-only file is passed over.
  printf 'line1\nAWS_SECRET=hunter2\n' > "$d/rootsecret"
  chmod 600 "$d/rootsecret"
  ln -s "$d/rootsecret" "$d/logs/zzz.log"
  touch -d '+1 min' "$d/logs/zzz.log" 2>/dev/null || true
  run -0 --separate-stderr rm-sample --stage-log-dir "$d/logs"
  [[ "$output" != *hunter2* ]]
  [ "$(csv_get <(printf '%s\n' "${lines[@]}") stage)" = compile ]
  # A log owned by neither us nor the directory's owner: skipped, said once.
  printf 'nobody was here\n' > "$d/logs/other.log"
  chown nobody "$d/logs/other.log"
  touch -d '+2 min' "$d/logs/other.log"
  run -0 --separate-stderr rm-sample -i 0.02 -n 3 --stage-log-dir "$d/logs"
  [[ "$output" != *"nobody was here"* ]]
  [ "$stderr" = "rm-sample: --stage-log-dir: skipping 'other.log': owned by neither this user nor the directory's owner" ]
}

@test "as root the CSV is never more open than 0640, whatever the umask" {
  [[ $EUID -eq 0 ]] || skip_needs_root "needs root"
  (umask 022 && rm-sample -n 1 -o "$BATS_TEST_TMPDIR/r.csv")
  [ "$(stat -c %a "$BATS_TEST_TMPDIR/r.csv")" = 640 ]
  (umask 077 && rm-sample -n 1 -o "$BATS_TEST_TMPDIR/r2.csv")
  [ "$(stat -c %a "$BATS_TEST_TMPDIR/r2.csv")" = 600 ]
}

@test "a stage-log-dir of 2,000 logs is not listed every tick; the log written last is the newest" {
  command -v strace >/dev/null || skip "strace is not installed"
  under_valgrind && skip "strace under valgrind"
  local d="$BATS_TEST_TMPDIR/logs" i n pid
  mkdir -p "$d"
  for ((i = 0; i < 2000; i++)); do : >"$d/f$i.log"; done
  echo first >"$d/zz.log"
  # -y names each getdents64's directory: count the listings of $d.
  strace -f -y -e trace=getdents64 -o "$BATS_TEST_TMPDIR/st" \
    rm-sample -i 0.01 -n 60 --stage-log-dir "$d" >"$BATS_TEST_TMPDIR/s.csv"
  n=$(grep -c "<$d>" "$BATS_TEST_TMPDIR/st" || true)
  echo "# $n listings of the directory in 60 ticks"
  ((n >= 1 && n <= 10))
  [ "$(csv_get "$BATS_TEST_TMPDIR/s.csv" stage 60)" = zz ]
  # Appending changes no directory mtime, yet the appended log is newest.
  rm-sample -i 0.05 --stage-log-dir "$d" >"$BATS_TEST_TMPDIR/t.csv" &
  pid=$!
  wait_for 20 grep -q ',zz,first' "$BATS_TEST_TMPDIR/t.csv"
  echo "building f7" >>"$d/f7.log"
  wait_for 20 grep -q ',f7,building f7' "$BATS_TEST_TMPDIR/t.csv"
  # The newest removed: the one before it again.
  rm "$d/f7.log"
  echo again >>"$d/zz.log"
  wait_for 20 bash -c '[[ "$(tail -n 1 "$1")" == *,zz,again* ]]' _ "$BATS_TEST_TMPDIR/t.csv"
  kill "$pid"
  wait "$pid" || true
}
