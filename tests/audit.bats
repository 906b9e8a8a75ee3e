#!/usr/bin/env bats
# Audit of issue 12: items found still open, each with the test that
# failed before its fix.
# shellcheck disable=SC2016,SC2030,SC2031,SC2154  # scripts single-quoted on purpose; each @test is a subshell; bats sets stderr

setup() {
  load test_helper/common
}

# big_mountinfo DIR: a copy of the cgroup-v2 fixture whose mountinfo holds
# 20,000 container mounts (about 2.6 MiB) before the cgroup2 line, as on a
# busy k8s node.
big_mountinfo() {
  cp -r "$FIXTURES/cgroup-v2" "$1"
  local mi="$1/proc/self/mountinfo" i
  {
    sed -n 1,2p "$FIXTURES/cgroup-v2/proc/self/mountinfo"
    for ((i = 0; i < 20000; i++)); do
      printf '%d 23 0:%d / /var/lib/kubelet/pods/%08d-aaaa-bbbb-cccc-dddddddddddd/volumes/kubernetes.io~projected/kube-api-access rw,relatime - tmpfs tmpfs rw,size=1024k\n' \
        $((1000 + i)) $((100 + i)) "$i"
    done
    sed -n '3,$p' "$FIXTURES/cgroup-v2/proc/self/mountinfo"
  } >"$mi"
}

@test "a mountinfo of 2.6 MiB (20,000 mounts before cgroup2) still finds the cgroup (lib/cgroup find_mount)" {
  big_mountinfo "$BATS_TEST_TMPDIR/t"
  (($(stat -c %s "$BATS_TEST_TMPDIR/t/proc/self/mountinfo") > 2000000))
  export RM_PROC_ROOT="$BATS_TEST_TMPDIR/t/proc" RM_SYS_ROOT="$BATS_TEST_TMPDIR/t/sys"
  run -0 --separate-stderr rm-sample --cgroup-path /build.slice/job -f jsonl
  [ "$stderr" = "" ]
  run -0 jq -c '[.cg_mem_used_mb, .cg_mem_limit_mb, .cg_mem_avail_mb]' <<<"$output"
  [ "$output" = "[5632,8192,3072]" ]
}

@test "fuzz/run.sh seeds fz_cgroup with the cgroup fixtures (mountinfo, PID cgroup, memory.*, cpu.max), as the other targets get theirs" {
  local d="$BATS_TEST_TMPDIR"
  # A stand-in target: keeps a copy of the corpus it is given, exits 0.
  printf '#!/bin/sh\nfor a; do :; done\ncp -r "$a" "%s/seen"\n' "$d" >"$d/fz_cgroup"
  chmod +x "$d/fz_cgroup"
  FUZZ_OUT="$d/out" FUZZ_SECONDS=1 FUZZ_JOBS=1 run -0 bash "$RM_TOP/tests/fuzz/run.sh" "$d/fz_cgroup"
  local f seen_all=1
  for f in proc/self/mountinfo proc/4243/cgroup sys/fs/cgroup/build.slice/job/memory.stat \
    sys/fs/cgroup/build.slice/job/memory.events sys/fs/cgroup/build.slice/job/memory.max \
    sys/fs/cgroup/build.slice/job/cpu.max; do
    local hit=0 s
    for s in "$d"/seen/fixture-*; do
      cmp -s "$s" "$FIXTURES/cgroup-v2/$f" && hit=1
    done
    ((hit)) || { echo "not seeded: $f"; seen_all=0; }
  done
  ((seen_all))
}

@test "rm-energy -- CMD: CMD gets the signal mask and the ignored SIGPIPE rm-energy was started with, as under time(1)" {
  # The same grep, exec'd with SIGUSR1 blocked and SIGPIPE ignored:
  # straight, then under rm-energy.  What CMD sees must not differ.
  local py='import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])'
  run -0 "$PY" -c "$py" grep -E '^Sig(Blk|Ign)' /proc/self/status
  local direct=$output
  [[ "$direct" == *"SigBlk:"*"200"* ]]
  run -0 --separate-stderr "$PY" -c "$py" rm-energy -- grep -E '^Sig(Blk|Ign)' /proc/self/status
  [ "$output" = "$direct" ]
}

@test "rm-gpu --watch-pid: one last row when the PID ends inside an interval, as rm-sample and rm-energy write" {
  sleep 1 &
  local pid=$!
  RM_SYS_ROOT="$FIXTURES/drm/mixed" RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
    run -0 --separate-stderr timeout 60 rm-gpu -i 30 --watch-pid "$pid"
  # The header, every card at the start, every card again at the end.
  local first
  first=$(printf '%s\n' "${lines[@]}" | grep -c ',0\.000$')
  ((first >= 3))
  [ "${#lines[@]}" -eq $((1 + 2 * first)) ]
  [ "$(printf '%s\n' "${lines[@]}" | grep -c '^card0,')" -eq 2 ]
  # The last row is the PID's end, not a tick 30 s later.
  awk -F, 'NR > 1 && $NF > 5 { exit 1 }' <<<"$output"
}

@test "no command calls setlocale: numbers are parsed and printed in the C locale (the guard in lib/rmtools.h)" {
  grep -q "Never call setlocale()" "$RM_TOP/lib/rmtools.h"
  run grep -rn --include='*.c' --include='*.h' --exclude=rmtools.h 'setlocale *(' "$RM_TOP/src" "$RM_TOP/lib"
  [ "$status" -eq 1 ]
  # A German locale in the environment changes nothing.
  LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 run -0 rm-summarize --json "$FIXTURES/summarize/seed-build.csv"
  [[ "$output" != *[0-9],[0-9]*MiB* ]]
  jq -e . <<<"$output" >/dev/null
}

@test "rm-energy -o: written whole and renamed into place (a hard link is never written through), a symlink refused in the words every command uses" {
  local d="$BATS_TEST_TMPDIR"
  export RM_SYS_ROOT="$FIXTURES/powercap/intel1"
  echo ORIGINAL >"$d/victim"
  ln "$d/victim" "$d/e.csv"
  run -0 --separate-stderr rm-energy -o "$d/e.csv" -- true
  [ "$(cat "$d/victim")" = ORIGINAL ]
  [ "$(head -1 "$d/e.csv")" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
  ln -s "$d/victim" "$d/link.csv"
  run -1 --separate-stderr rm-energy -o "$d/link.csv" -- touch "$d/ran"
  [ "$stderr" = "rm-energy: cannot write '$d/link.csv': a symbolic link, not followed" ]
  [ ! -e "$d/ran" ]
  [ "$(cat "$d/victim")" = ORIGINAL ]
  # No temporary file is left behind; /dev/stdout is the inherited descriptor.
  [ "$(find "$d" -name '.*' | wc -l)" -eq 0 ]
  run -0 --separate-stderr rm-energy -o /dev/stdout -- true
  [ "${lines[0]}" = "elapsed_s,pkg_j,pkg_w,dram_j,dram_w,exit" ]
}

@test "--kmsg: nothing past 256 MiB is read (a sparse 300 MiB log after a real record), said once, exit 0 (reliability.md's bound)" {
  local F="$FIXTURES/summarize/scope" k="$BATS_TEST_TMPDIR/big.kmsg"
  cp "$F/memcg-build.kmsg" "$k"
  truncate -s 300M "$k"
  run -0 --separate-stderr timeout 120 rm-summarize --kmsg "$k" "$F/memcg-build.csv"
  [ "$stderr" = "rm-summarize: --kmsg '$k': over 256 MiB, not read further" ]
  [[ "$output" == *"(kernel log: over 256 MiB, not read further)"* ]]
}

@test "rm-gpu --watch-pid of a PID that does not exist: exit 1, nothing lost to valgrind (the analyzer's leak)" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  under_san && skip "valgrind cannot run an AddressSanitizer build (make check SAN=1)"
  RM_SYS_ROOT="$FIXTURES/drm/mixed" RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
    run -1 --separate-stderr valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite "$RM_BUILD/bin/rm-gpu" -i 1 --watch-pid 4000000
  [[ "$stderr" == *"rm-gpu: cannot watch PID 4000000: No such process"* ]]
  [[ "$stderr" != *"definitely lost"* ]]
}
