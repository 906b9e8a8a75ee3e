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

@test "rm-tree's exit log ends with the emulated column: a native process is 'no' where the host's binfmt_misc registrations can be read, unknown (empty) where they cannot, never yes" {
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
    [[ "$(head -1 "$d/$mode.csv")" == *,source,scope,emulated ]]
    [ "$(csv_cols "$d/$mode.csv")" = 21 ]
    run -0 "$PY" -c 'import csv, sys
print(" ".join(sorted({r["emulated"] or "-" for r in csv.DictReader(open(sys.argv[1])) if r["cmd"]})))' "$d/$mode.csv"
    [ "$output" = "${want:--}" ]
  done
}
