#!/usr/bin/env bats
# Emulated processes (qemu-user through binfmt_misc):
# named by the real program's arguments and marked emulated.  The exit
# logs here carry command lines in the kernel's binfmt forms (see
# tests/fixtures/cu/qemu-*.argv and ../shared/findings/qemu-container.md).

setup() {
  load test_helper/common
  TREE_PID=''
}

# What a failed test leaves: the fake compilers end when told, then rm-tree.
teardown() {
  local f
  for f in "$BATS_TEST_TMPDIR"/*/[en]; do
    [[ -d "$f" ]] && touch "$f/done"
  done
  if [[ -n "$TREE_PID" ]]; then
    wait_for 30 bash -c "! kill -0 $TREE_PID 2>/dev/null" || kill "$TREE_PID" 2>/dev/null || true
  fi
  return 0
}

# An exit log of an emulated build: cc1plus under Debian's interpreter
# (flag P: path, then argv0 again), as with P, cc1 without P.
emulated_log() {
  cat >"$1" <<'EOF'
pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd
100,1,make,0.000,20.000,4096,0.500,0.50,0,make -j2 core
101,100,cc1plus,1.000,15.000,313352,14.000,13.90,0,/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus -quiet -I include -imultiarch aarch64-linux-gnu -MD obj/core/core_0.d -MF obj/core/core_0.d -MQ obj/core/core_0.o -D_GNU_SOURCE core/core_0.cpp -quiet -dumpdir obj/core/ -dumpbase core_0.cpp -o /tmp/ccGqb68Y.s
102,100,as,15.000,16.000,20480,15.500,0.90,0,/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/bin/as as -I include -EL -mabi=lp64 -o obj/core/core_0.o /tmp/ccGqb68Y.s
103,100,cc1,1.000,15.000,113352,14.000,13.90,0,/usr/bin/qemu-aarch64-static /usr/lib/gcc/aarch64-linux-gnu/12/cc1 -quiet -MD obj/core/util.d src/util.c -o /tmp/ccX.s
EOF
}

@test "rm-summarize names an emulated compiler's unit by its source, not cc1's -MD file, and shows an emulated command without the interpreter" {
  emulated_log "$BATS_TEST_TMPDIR/log.csv"
  run -0 rm-summarize "$BATS_TEST_TMPDIR/log.csv"
  echo "$output"
  # The unit of cc1plus (flag P) and of cc1 (no P): the sources.
  [[ "$output" =~ cc1plus\ +core/core_0\.cpp ]]
  [[ "$output" =~ cc1\ +src/util\.c ]]
  [[ "$output" != *obj/core/core_0.d* ]]
  [[ "$output" != *obj/core/util.d* ]]
  # as: the real program's command line, its argv0 once.
  [[ "$output" =~ as\ +as\ -I\ include\ -EL\ -mabi=lp64\ -o\ obj/core/core_0\.o ]]
  [[ "$output" != *binfmt-P* ]]
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/log.csv"
  run -0 jq -r '[.compile_units[].unit] | sort | join(" ")' <<<"$output"
  [ "$output" = "core/core_0.cpp src/util.c" ]
}

# The same build as rm-tree now writes it: the emulated column last.
emulated_log_col() {
  local h='pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope,emulated'
  {
    echo "$h"
    echo '100,1,make,0.000,20.000,4096,0.500,0.50,0,make -j2 core,,,,,,,,,exact,in,no'
    echo '101,100,cc1plus,1.000,15.000,313352,14.000,13.90,0,/usr/libexec/qemu-binfmt/aarch64-binfmt-P /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus /usr/lib/gcc/aarch64-linux-gnu/12/cc1plus -quiet -MD obj/core/core_0.d core/core_0.cpp -o /tmp/a.s,,,,,,,,,exact,in,yes'
    # Registered under a name no pattern knows: rm-tree read it as an interpreter.
    echo '102,100,as,15.000,16.000,20480,15.500,0.90,0,/opt/emu/box /usr/bin/as as -EL -o obj/core/core_0.o /tmp/a.s,,,,,,,,,exact,in,yes'
    echo '103,100,cc1,1.000,15.000,163352,14.000,13.90,0,/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet -MD obj/n.d src/native.c -o /tmp/n.s,,,,,,,,,exact,in,no'
    # Never read while alive: unknown.
    echo '104,100,ld,16.000,16.100,8000,,0.10,0,,,,,,,,,,exact,in,'
  } >"$1"
}

@test "rm-summarize marks every emulated process, unit, group and -j row, says once that emulated peaks include the emulator, and reads old logs as unknown" {
  emulated_log_col "$BATS_TEST_TMPDIR/log.csv"
  run -0 rm-summarize "$BATS_TEST_TMPDIR/log.csv"
  echo "$output"
  # Processes, By command, Heaviest compile units: the emulated ones marked.
  [[ "$output" =~ cc1plus\ +core/core_0\.cpp\ \(emulated\) ]]
  [[ "$output" =~ as\ +as\ -EL\ -o\ obj/core/core_0\.o\ /tmp/a\.s\ \(emulated\) ]]
  [[ "$output" =~ cc1\ +src/native\.c$'\n' ]]
  [[ "$output" =~ $'\n'\ \ cc1plus\ +1\ +306\.0\ +13\.90\ \(emulated\) ]]
  [[ "$output" =~ 306\.0\ +-\ +cc1plus\ +core/core_0\.cpp\ \(emulated\) ]]
  [[ "$output" =~ 159\.5\ +-\ +cc1\ +src/native\.c$'\n' ]]
  # Memory per compile job: 3 compilers (cc1plus, cc1, ld), 1 emulated.
  [[ "$output" =~ \(all\)\ +3\ .*\ \ \(1\ emulated\) ]]
  # The note, once.
  [ "$(grep -c "include the emulator's own memory" <<<"$output")" = 1 ]
  [[ "$output" == *"2 processes ran emulated"* ]]
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/log.csv"
  run -0 jq -c '[.processes.top[] | [.pid, .emulated]], .processes.emulated,
    ([.compile_units[] | [.unit, .emulated]] | sort), ([.groups[] | [.comm, .emulated]] | sort),
    [.memory_per_job[] | .emulated], (.processes.emulated_note | test("native"))' <<<"$output"
  echo "$output"
  [ "${lines[0]}" = '[[101,true],[103,false],[102,true],[104,null],[100,false]]' ]
  [ "${lines[1]}" = 2 ]
  [ "${lines[2]}" = '[["core/core_0.cpp",true],["src/native.c",false]]' ]
  [ "${lines[3]}" = '[["as",true],["cc1",false],["cc1plus",true],["ld",null],["make",false]]' ]
  [ "${lines[4]}" = '[1]' ]
  [ "${lines[5]}" = true ]
  run -0 rm-summarize --markdown "$BATS_TEST_TMPDIR/log.csv"
  [[ "$output" == *'| core/core\_0.cpp (emulated) | 306.0 |'* ]]
  [[ "$output" == *'| 3 (1 emulated) | 306.0 |'* ]]
  [[ "$output" == *"include the emulator's own memory"* ]]
  # An exit log from before the column: every process unknown, no note.
  emulated_log "$BATS_TEST_TMPDIR/old.csv"
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/old.csv"
  run -0 jq -c '([.processes.top[].emulated] | unique), .processes.emulated, .processes.emulated_note' <<<"$output"
  [ "${lines[0]}" = '[null]' ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = null ]
  run -0 rm-summarize "$BATS_TEST_TMPDIR/old.csv"
  [[ "$output" != *emulated* ]]
}

@test "rm-summarize --csv ends with the emulated column: yes, no, or empty where the exit log does not know" {
  local out="$BATS_TEST_TMPDIR/p.csv"
  emulated_log_col "$BATS_TEST_TMPDIR/log.csv"
  run -0 rm-summarize --csv "$out" "$BATS_TEST_TMPDIR/log.csv"
  [ "$(head -1 "$out")" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd,emulated" ]
  [ "$(csv_cols "$out")" = 12 ]
  run -0 "$PY" -c 'import csv,sys
print(" ".join(r["pid"] + "=" + r["emulated"] for r in csv.DictReader(open(sys.argv[1], newline=""))))' "$out"
  [ "$output" = "101=yes 103=no 102=yes 104= 100=no" ]
  # An exit log from before the column: every row unknown.
  emulated_log "$BATS_TEST_TMPDIR/old.csv"
  run -0 rm-summarize --csv "$out" "$BATS_TEST_TMPDIR/old.csv"
  run -0 "$PY" -c 'import csv,sys
print(sorted({r["emulated"] for r in csv.DictReader(open(sys.argv[1], newline=""))}))' "$out"
  [ "$output" = "['']" ]
}

@test "rm-tree's exit log has the emulated column (the uid column after it): a native process is 'no' where the host's binfmt_misc registrations can be read, unknown (empty) where they cannot, never yes" {
  local want='' d="$BATS_TEST_TMPDIR"
  [[ -e /proc/sys/fs/binfmt_misc/register ]] && want=no
  local mode
  for mode in events sampled; do
    if [[ $mode == sampled ]]; then
      RM_NO_EVENTS=1 rm-tree --exec -i 0.1 --log "$d/$mode.csv" -- sh -c 'sleep 1' 2>/dev/null
    else
      rm-tree --exec -i 0.1 --log "$d/$mode.csv" -- sh -c 'sleep 1' 2>/dev/null
    fi
    head -1 "$d/$mode.csv"
    [[ "$(head -1 "$d/$mode.csv")" == *,source,scope,emulated,uid ]]
    [ "$(csv_cols "$d/$mode.csv")" = 22 ]
    run -0 "$PY" -c 'import csv, sys
print(" ".join(sorted({r["emulated"] or "-" for r in csv.DictReader(open(sys.argv[1])) if r["cmd"]})))' "$d/$mode.csv"
    [ "$output" = "${want:--}" ]
  done
}

# --- Real emulation: qemu-user through a private binfmt_misc instance ---
#
# binfmt_misc has an instance per user namespace since Linux 6.7: inside
# `unshare --user --map-root-user --mount` the test mounts its own and
# registers qemu-aarch64-static there, so the host's registrations are
# never touched (checked before and after).  The program is
# tests/helpers/fakecc.c built with aarch64-linux-gnu-gcc -static, named
# cc1plus, with a compiler's arguments; beside it the same source built
# natively, named cc1.

AARCH64_MAGIC='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
AARCH64_MASK='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

# need_emulation: the packages (a failure under CI=true, else a skip) and
# the kernel (a skip with its reason).
need_emulation() {
  local miss=''
  command -v aarch64-linux-gnu-gcc >/dev/null || miss+=' gcc-aarch64-linux-gnu'
  [[ -x /usr/bin/qemu-aarch64-static ]] || miss+=' qemu-user-static'
  if [[ -n "$miss" ]]; then
    if [[ "${CI:-}" == true ]]; then
      echo "missing packages under CI:$miss" >&2
      return 1
    fi
    skip "needs the packages$miss"
  fi
  [[ -x "$RM_BUILD/tests/fakecc" ]] || { echo "no $RM_BUILD/tests/fakecc: run make check" >&2; return 1; }
  local why
  why=$(unshare --user --map-root-user --mount true 2>&1) ||
    skip "no user namespaces here: $why"
  why=$(unshare --user --map-root-user --mount sh -c \
    'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>&1) ||
    skip "the kernel refuses a binfmt_misc instance in a user namespace (Linux 6.7 and later): $why"
}

# host_binfmt: what the host's binfmt_misc holds, to compare after.
host_binfmt() {
  grep -c binfmt_misc /proc/self/mountinfo || true
  ls -A /proc/sys/fs/binfmt_misc 2>/dev/null || true
  local f
  for f in /proc/sys/fs/binfmt_misc/*; do
    [[ -f "$f" && "${f##*/}" != register ]] && cat "$f"
  done 2>/dev/null
  return 0
}

# run_emulated MODE FLAGS INTERP: rm-tree (MODE exact or sampled) runs a
# private binfmt_misc instance with qemu-aarch64-static registered as
# INTERP with FLAGS, the emulated cc1plus and the native cc1 in it; their
# ends are decided by the test (two timeline ticks after both started).
# Leaves $d/log.csv.
run_emulated() {
  local mode=$1 flags=$2 interp=$3 n i
  d="$BATS_TEST_TMPDIR/$mode-$flags"
  mkdir -p "$d/bin" "$d/e" "$d/n" "$d/emu"
  aarch64-linux-gnu-gcc -static -O2 -o "$d/bin/cc1plus" "$RM_TOP/tests/helpers/fakecc.c"
  cp "$RM_BUILD/tests/fakecc" "$d/bin/cc1"
  [[ "$interp" == /usr/bin/qemu-aarch64-static ]] || cp /usr/bin/qemu-aarch64-static "$interp"
  cat >"$d/inner.sh" <<EOS
set -e
mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
echo ':rmtools-emu-$$:M::$AARCH64_MAGIC:$AARCH64_MASK:$interp:$flags' >/proc/sys/fs/binfmt_misc/register
cat /proc/sys/fs/binfmt_misc/rmtools-emu-$$
FAKECC_DIR=$d/n $d/bin/cc1 -quiet n/native_3.c -MD obj/native_3.d -o /tmp/n.s &
FAKECC_DIR=$d/e FAKECC_MIB=32 $d/bin/cc1plus -quiet x/unit_7.cpp -MD obj/unit_7.d -o /tmp/x.s
wait
EOS
  if [[ $mode == sampled ]]; then
    RM_NO_EVENTS=1 rm-tree --exec -i 0.2 --log "$d/log.csv" --timeline "$d/tl.csv" -- \
      unshare --user --map-root-user --mount bash "$d/inner.sh" >"$d/out" 2>"$d/err" &
  else
    rm-tree --exec -i 0.2 --log "$d/log.csv" --timeline "$d/tl.csv" -- \
      unshare --user --map-root-user --mount bash "$d/inner.sh" >"$d/out" 2>"$d/err" &
  fi
  TREE_PID=$!
  local tree=$!
  wait_for 60 test -e "$d/e/started" -a -e "$d/n/started"
  # Two ticks while both live: each has had its command line read.
  n=$(wc -l <"$d/tl.csv")
  for ((i = 0; i < 600 && $(wc -l <"$d/tl.csv") < n + 2; i++)); do sleep 0.1; done
  touch "$d/e/done" "$d/n/done"
  wait "$tree" || { cat "$d/out" "$d/err"; return 1; }
  cat "$d/out" "$d/err"
  grep -q "flags: $flags" "$d/out"
}

# check_emulated MODE: the rows and the summary of run_emulated's log.
check_emulated() {
  cut -d, -f1-3,6,10,19- "$d/log.csv"
  run -0 "$PY" -c 'import csv, sys
rows = {r["comm"]: r for r in csv.DictReader(open(sys.argv[1]))}
e, n = rows["cc1plus"], rows["cc1"]
print(e["emulated"], n["emulated"], e["source"], e["peak_rss_kib"], n["peak_rss_kib"])' "$d/log.csv"
  echo "$output"
  local emu nat src epeak npeak
  read -r emu nat src epeak npeak <<<"$output"
  [ "$emu" = yes ]
  [ "$nat" = no ]
  [ "$src" = "$1" ]
  # Both touched 32 MiB; the emulated one's peak includes qemu's own.
  ((npeak >= 32768 && epeak > npeak))
  echo "# $1: emulated cc1plus peak $epeak KiB, native $npeak KiB" >&3
  run -0 rm-summarize --json "$d/log.csv"
  run -0 jq -c '([.compile_units[] | [.unit, .comm, .emulated]] | sort), [.memory_per_job[] | [.compilers, .emulated]]' <<<"$output"
  echo "$output"
  [ "${lines[0]}" = '[["n/native_3.c","cc1",false],["x/unit_7.cpp","cc1plus",true]]' ]
  [ "${lines[1]}" = '[[2,1]]' ]
  run -0 rm-summarize "$d/log.csv"
  [[ "$output" =~ cc1plus\ +x/unit_7\.cpp\ \(emulated\) ]]
  [[ "$output" == *"include the emulator's own memory"* ]]
}

@test "real qemu-user emulation (private binfmt_misc, flags PF): rm-tree exact and sampled count the emulated cc1plus as a compiler, mark it emulated, name its unit x/unit_7.cpp; the host's binfmt_misc is untouched" {
  need_emulation
  local before after
  before=$(host_binfmt)
  if [[ $EUID -eq 0 ]]; then
    run_emulated exact PF /usr/bin/qemu-aarch64-static
    check_emulated exact
  fi
  run_emulated sampled PF /usr/bin/qemu-aarch64-static
  check_emulated sampled
  # P: the original argv0 follows the path.
  grep -q 'qemu-aarch64-static [^ ]*/bin/cc1plus [^ ]*/bin/cc1plus -quiet x/unit_7.cpp' "$d/log.csv"
  after=$(host_binfmt)
  [ "$before" = "$after" ]
  [[ $EUID -eq 0 ]] || skip_needs_root "exact mode (the proc connector and taskstats) needs root"
}

@test "real qemu-user emulation (flags F, no P, an interpreter no name pattern knows): only the registration read in the process's own root says emulated; the unit is still x/unit_7.cpp" {
  need_emulation
  local before after
  before=$(host_binfmt)
  if [[ $EUID -eq 0 ]]; then
    run_emulated exact F "$BATS_TEST_TMPDIR/box-exact"
    check_emulated exact
  fi
  run_emulated sampled F "$BATS_TEST_TMPDIR/box-sampled"
  check_emulated sampled
  # No P: the path, then the arguments.
  grep -q 'box-sampled [^ ]*/bin/cc1plus -quiet x/unit_7.cpp' "$d/log.csv"
  after=$(host_binfmt)
  [ "$before" = "$after" ]
  [[ $EUID -eq 0 ]] || skip_needs_root "exact mode (the proc connector and taskstats) needs root"
}
