#!/usr/bin/env bats
# Emulated processes (qemu-user through binfmt_misc, issue 19 item 3):
# named by the real program's arguments and marked emulated.  The exit
# logs here carry command lines in the kernel's binfmt forms (see
# tests/fixtures/cu/qemu-*.argv and ../shared/findings/qemu-container.md).

setup() {
  load test_helper/common
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
