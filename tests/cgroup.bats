#!/usr/bin/env bats
# Headroom as the build sees it: a memory cgroup's limit (rm-sample
# --cgroup-path, rm-summarize), effective cores (affinity and CPU quotas),
# and rm-run --memory-max, a memory budget to rehearse under.

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  V2="$FIXTURES/cgroup-v2"
  CG=''
}

teardown() {
  if [[ -n "$CG" && -d "$CG" ]]; then
    # Anything left inside first (the test's shell, its memhog).
    local p
    while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$CG/cgroup.procs"
    wait_for 5 rmdir "$CG" 2>/dev/null || true
  fi
}

# make_cg MIB: a fresh memory cgroup limited to MIB MiB in $CG (v1 where the
# memory controller is mounted on its own, else v2), or skip.
make_cg() {
  if [[ -w /sys/fs/cgroup/memory/cgroup.procs ]]; then
    CG=/sys/fs/cgroup/memory/rm-cg-test-$$
    mkdir "$CG" || skip_needs_root "cannot create a v1 memory cgroup"
    echo $(($1 * 1048576)) >"$CG/memory.limit_in_bytes"
  elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
    CG=/sys/fs/cgroup/rm-cg-test-$$
    mkdir "$CG" || skip_needs_root "cannot create a v2 cgroup"
    echo $(($1 * 1048576)) >"$CG/memory.max"
  else
    skip_needs_root "no writable memory cgroup controller (needs root)"
  fi
}

# bats test_tags=slow
@test "a build in a 512 MiB cgroup: near-OOM by the cgroup's headroom only while it allocates; the verdict names the limit" {
  make_cg 512
  local t=$BATS_TEST_TMPDIR
  # The "build": a shell in the cgroup that idles, allocates 470 MiB for a
  # while, then idles again.  The host has far more than --near-oom-mb.
  sh -c 'echo $$ >"$1/cgroup.procs" && : >"$2/in" && sleep 2 && "$3" -m 470 -t 4 -r "$2/held" && sleep 2' \
    sh "$CG" "$t" "$MEMHOG" &
  local build=$!
  wait_for 10 test -e "$t/in"
  run -0 rm-sample -i 0.5 --watch-pid "$build" --cgroup-path auto -o "$t/r.csv"
  wait "$build"
  [ -e "$t/held" ]
  # The host stayed far above the threshold the whole time.
  run -0 "$PY" -c 'import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
assert min(float(r["mem_avail_mb"]) for r in rows) > 2048, "host ran short: not this test"
near=[float(r["cg_mem_avail_mb"]) < 0.15*float(r["cg_mem_limit_mb"]) for r in rows]
print(len(rows), sum(near), near[0], near[-1], rows[0]["cg_mem_limit_mb"])' "$t/r.csv"
  read -r n nnear first last limit <<<"$output"
  [ "$limit" = 512 ]
  ((nnear > 0 && nnear < n))
  [ "$first" = False ]   # not from the first sample
  [ "$last" = False ]    # and not after memhog let go
  run -0 rm-summarize --near-oom-mb 1024 "$t/r.csv"
  [[ "$output" == *"limits   near-OOM below 1024 MiB available, low disk below"*"; cgroup limit 512 MiB (host RAM "* ]]
  [[ "$output" == *"Near-OOM (available below 1024 MiB, or within the cgroup below 77 MiB): $nnear samples"* ]]
  [[ "$output" == *"min available (cgroup) "*" MiB of 512 MiB"* ]]
  [[ "$output" == *"cg avail"* ]]
  [[ "$output" == *"OOM edge: available within the build's cgroup fell to "*" MiB of its 512 MiB limit at +"*"(host RAM: "*" free)"* ]]
  run -0 rm-summarize --json --near-oom-mb 1024 "$t/r.csv"
  [ "$(jq -r '.system.cgroup.limit_mb' <<<"$output")" = 512 ]
  [ "$(jq -r '.system.near_oom.samples' <<<"$output")" = "$nnear" ]
}

# bats test_tags=slow
@test "rm-run --memory-max 64M around a 200 MiB allocator: OOM-killed inside the budget, reported, exit 137" {
  [[ -w /sys/fs/cgroup/memory/cgroup.procs ]] || grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    skip_needs_root "no writable memory cgroup controller (needs root)"
  sleep 60 &
  local bystander=$!
  run -137 --separate-stderr rm-run --memory-max 64M -- "$MEMHOG" -m 200 -t 1
  [[ "$stderr" == *"memory budget (--memory-max)     64.0 MiB: OOM-killed inside the budget (1 kill"* ]]
  [[ "$stderr" == *"exact peak "*" MiB"* ]]
  # The kernel log names the victim where it can be read.
  if dd if=/dev/kmsg iflag=nonblock count=1 of=/dev/null 2>/dev/null; then
    [[ "$stderr" == *"first victim memhog (PID "* ]]
  fi
  # The host is untouched: a process outside the budget lives on.
  kill -0 "$bystander"
  kill "$bystander"
  run -0 rm-run --json --quiet -o "$BATS_TEST_TMPDIR/s.json" --memory-max 64M -- "$MEMHOG" -m 16 -t 0.1
  run -0 jq -r '.job | "\(.mem_max_kib) \(.oom_kills) \(.oom_victim)"' "$BATS_TEST_TMPDIR/s.json"
  [ "$output" = "65536 0 null" ]
}

# bats test_tags=slow
@test "rm-tree --memory-max names the victim by the kernel log's records after the job's start, not by comparing its clock with CLOCK_MONOTONIC" {
  [[ -w /sys/fs/cgroup/memory/cgroup.procs ]] || grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    skip_needs_root "no writable memory cgroup controller (needs root)"
  # The kernel log's stamps are local_clock, which on a host up for days
  # trails CLOCK_MONOTONIC by seconds.  A log (RM_KMSG) whose record of
  # this budget's kill, written during the job, carries the stamp 0 (the
  # clock far behind): it is named all the same.
  local k="$BATS_TEST_TMPDIR/kmsg"
  printf '6,1,0,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/rm-tree.1,task_memcg=/rm-tree.1,task=before,pid=41,uid=0\n' >"$k"
  # shellcheck disable=SC2016  # the job's shell expands them
  RM_KMSG="$k" run -137 rm-tree --exec --memory-max 64M --job "$BATS_TEST_TMPDIR/job.csv" -- sh -c '
    printf "6,2,0,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/rm-tree.%d,task_memcg=/rm-tree.%d,task=early,pid=4242,uid=0\n" "$PPID" "$PPID" >>"$1"
    exec "$2" -m 200 -t 1' _ "$k" "$MEMHOG"
  run -0 csv_get "$BATS_TEST_TMPDIR/job.csv" oom_victim
  [ "$output" = "early (PID 4242)" ]
}

@test "rm-tree --exec --memory-max moves the job into its cgroup once, not twice" {
  [[ -w /sys/fs/cgroup/memory/cgroup.procs ]] || grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    skip_needs_root "no writable memory cgroup controller (needs root)"
  command -v strace >/dev/null || skip "no strace"
  run -0 strace -f -qq -e trace=openat -o "$BATS_TEST_TMPDIR/trace" rm-tree --exec --memory-max 256M -- true
  run grep -c 'rm-tree\.[0-9]*/cgroup\.procs", O_WRONLY' "$BATS_TEST_TMPDIR/trace"
  [ "$output" = 1 ]
}

@test "rm-run --memory-max where no cgroup can be made: said, exit 125, CMD never runs" {
  [[ $EUID -eq 0 ]] || skip_needs_root "needs root to become nobody"
  local d
  d=$(mktemp -d /tmp/rm-cg.XXXXXX)
  chmod 777 "$d"
  run -125 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$RM_TOP/bin/rm-run" --memory-max 64M -- touch "$d/ran"
  [[ "$stderr" == *"rm-tree: --memory-max: cannot make a memory cgroup for the budget: "*"; 'touch' not run"* ]]
  [ ! -e "$d/ran" ]
  rm -rf "$d"
  run -2 --separate-stderr rm-run --memory-max 64Q -- true
  [ "${stderr_lines[0]}" = "rm-run: invalid --memory-max '64Q': a size such as 512M or 8G" ]
}

@test "v2 fixture: memory.max max below an 8 GiB parent, working set, swap, PSI; CSV, JSONL and Prometheus" {
  export RM_PROC_ROOT="$V2/proc" RM_SYS_ROOT="$V2/sys"
  run -0 rm-sample --cgroup-path /build.slice/job -f jsonl
  run -0 jq -c '[.cg_mem_used_mb, .cg_mem_limit_mb, .cg_mem_avail_mb, .cg_swap_used_mb, .cg_oom_kills, .cg_psi_mem_full]' <<<"$output"
  # 5632 MiB used, 8 GiB limit (the parent's), 8192 - (5632 - 512) = 3072.
  [ "$output" = "[5632,8192,3072,100,0,7.25]" ]
  run -0 rm-sample --cgroup-path /sys/fs/cgroup/build.slice/job
  [[ "${lines[0]}" != *",gpu_vram_total_mb"* ]]
  [[ "${lines[0]}" == *",psi_cpu_some,cg_mem_used_mb,cg_mem_limit_mb,cg_mem_avail_mb,cg_swap_used_mb,cg_oom_kills,cg_psi_mem_full,cores" ]]
  run -0 rm-sample --cgroup-path auto -f prom
  [[ "$output" == *"# HELP rm_cg_mem_limit_bytes "*"# TYPE rm_cg_mem_limit_bytes gauge"*"rm_cg_mem_limit_bytes{stage=\"\"} 8589934592"* ]]
  [[ "$output" == *"rm_cg_mem_available_bytes{stage=\"\"} 3221225472"* ]]
  [[ "$output" == *"# TYPE rm_cg_oom_kills_total counter"* ]]
  [[ "$output" == *"rm_cg_pressure_memory_full_ratio{stage=\"\"} 0.0725"* ]]
  # No limit anywhere up the tree: limit and available are empty, never 0.
  run -0 rm-sample --cgroup-path /free.slice -f jsonl
  run -0 jq -c '[.cg_mem_used_mb, .cg_mem_limit_mb, .cg_mem_avail_mb]' <<<"$output"
  [ "$output" = "[200,null,null]" ]
  run -0 --separate-stderr rm-sample --cgroup-path /no/such -f jsonl
  [[ "$stderr" == "rm-sample: cg_* columns stay empty: no memory cgroup found"* ]]
  run -0 jq -c '[.cg_mem_used_mb, .cg_mem_limit_mb]' <<<"$output"
  [ "$output" = "[null,null]" ]
}

@test "effective cores: taskset -c 0 gives 1 in rm-tree's JSON and rm-sample's cores; a 1.5-CPU quota gives 2, 0.5 gives 1" {
  taskset -c 0 sleep 30 &
  local p=$!
  run -0 rm-tree -f json --no-children "$p"
  [ "$(jq -r .cores <<<"$output")" = 1 ]
  run -0 taskset -c 0 rm-sample --cgroup-path auto -f jsonl
  [ "$(jq -r .cores <<<"$output")" = 1 ]
  kill "$p"
  local n
  n=$(nproc)
  RM_PROC_ROOT="$V2/proc" RM_SYS_ROOT="$V2/sys" run -0 rm-sample --cgroup-path auto -f jsonl
  [ "$(jq -r .cores <<<"$output")" = $((n < 2 ? n : 2)) ]
}

# A monitor CSV with the cgroup columns and an exit log of compilers.
write_cg_run() {
  local t=$1 e0=1796000000
  {
    echo "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills,psi_mem_some,psi_mem_full,psi_io_full,psi_cpu_some,cg_mem_used_mb,cg_mem_limit_mb,cg_mem_avail_mb,cg_swap_used_mb,cg_oom_kills,cg_psi_mem_full,cores"
    for i in $(seq 0 9); do
      local av=$((8192 - 1000 - i * 780))
      ((av < 310)) && av=310
      echo "$((e0 + i * 60)).000,x,$((i * 60)).000,1.0,50.0,60000,194560,23.0,0,500.00,10,2,make,,0,0,0,0,0,$((8192 - av)),8192,$av,0,0,0.00,2"
    done
  } >"$t/m.csv"
  {
    echo "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd"
    for i in $(seq 1 20); do
      echo "$((1000 + i)),1,cc1plus,$((i * 20)).0,$((i * 20 + 10)).0,1048576,$((i * 20 + 5)).0,9.0,0,cc1plus a$i.cc -o a$i.o"
    done
  } >"$t/p.csv"
}

@test "rm-summarize: the cgroup's limit binds the verdict and the -j advice; cores bind below memory" {
  local t=$BATS_TEST_TMPDIR
  write_cg_run "$t"
  run -0 rm-summarize "$t/m.csv" "$t/p.csv"
  [[ "$output" == *"; cgroup limit 8192 MiB (host RAM 254560 MiB); 2 cores (effective)"* ]]
  [[ "$output" == *"OOM edge: available within the build's cgroup fell to 310 MiB of its 8 GiB limit at +0:09:00 (host RAM: 190 GiB free) in stage make. "* ]]
  # -j: 8 GiB less 2 GiB headroom over 1 GiB per job is 6, but 2 cores bind.
  [[ "$output" == *"-j for 8192 MiB cgroup limit, 2 cores"* ]]
  run -0 rm-summarize --json "$t/m.csv" "$t/p.csv"
  [ "$(jq -c '.system | [.ram_mb, .cores, .cgroup.min_avail_mb, .cgroup.limit_mb, .cgroup.host_avail_mb]' <<<"$output")" = '[254560,2,310,8192,194560]' ]
  [ "$(jq -c '.memory_per_job[0] | [.safe_jobs, .memory_jobs, .bound_by]' <<<"$output")" = '[2,6,"cores"]' ]
  run -0 rm-summarize --markdown "$t/m.csv" "$t/p.csv"
  [[ "$output" == *"| near-OOM | cgroup min avail MiB |"* ]]
  [[ "$output" == *"| safe -j | bound by |"*"| 1024 | 2 | cores |"* ]]
  # With more cores than memory allows, memory (the cgroup's) binds.
  run -0 rm-summarize --json --cores 64 "$t/m.csv" "$t/p.csv"
  [ "$(jq -c '.memory_per_job[0] | [.safe_jobs, .bound_by]' <<<"$output")" = '[6,"cgroup memory"]' ]
}

@test "rm-monitor passes --cgroup-path auto with --watch-pid: the CSV has the cgroup columns" {
  local out=$BATS_TEST_TMPDIR/out w m
  # The watched build lives until the monitor has rows (under ASan a
  # 2 s sleep ended before the monitor read its cgroup).
  sleep 300 &
  w=$!
  rm-monitor --out-dir "$out" --run-id cg --interval 0.5 --watch-pid "$w" &
  m=$!
  wait_for 120 has_rows "$out/resources-cg.csv" 1
  kill "$w"
  wait "$m"
  run -0 head -1 "$out/resources-cg.csv"
  [[ "$output" == *",cg_mem_used_mb,cg_mem_limit_mb,cg_mem_avail_mb,cg_swap_used_mb,cg_oom_kills,cg_psi_mem_full,cores" ]]
}

# has_rows FILE N: FILE has N rows after its header.
has_rows() { [[ -e "$1" ]] && (($(wc -l <"$1") > $2)); }

# The cgroup's files are read every tick: each is opened once, then read
# with pread (a path lookup in cgroupfs cost as much as the read: with the
# tick down to 0.2 ms since the compilers count came from events, the
# reading was a third of it).  The readings still follow the cgroup.
@test "--cgroup-path: the cgroup's files are opened once, not every tick, and still read live values" {
  command -v strace >/dev/null || skip "no strace"
  make_cg 256
  local d="$BATS_TEST_TMPDIR" n
  strace -f -e trace=open,openat -o "$d/trace" \
    rm-sample -i 0.05 -n 40 --cgroup-path "$CG" >"$d/out.csv" &
  local pid=$!
  wait_for 30 has_rows "$d/out.csv" 10
  echo $((128 * 1048576)) >"$CG/memory.limit_in_bytes" 2>/dev/null ||
    echo $((128 * 1048576)) >"$CG/memory.max"
  wait "$pid"
  n=$(grep -c 'memory\.stat"' "$d/trace")
  echo "# memory.stat opened ${n} times in 40 ticks"
  ((n <= 2))
  [[ "$(csv_get "$d/out.csv" cg_mem_limit_mb 2)" == 256 ]]
  [[ "$(csv_get "$d/out.csv" cg_mem_limit_mb 40)" == 128 ]]
}

# A mountinfo of a busy node, and the fuzz corpus of lib/cgroup.

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
