#!/usr/bin/env bats
# rm-summarize and the containers companion (rm-tree --containers): the
# build's containers, their headroom, their OOM kills, and what is said
# when none of the build's containers could be tied to it.  Fixtures made
# like the findings' run r2 (tests/fixtures/containers/gen.py).

setup() {
  load test_helper/common
  C="$FIXTURES/containers"
}

@test "containers companion: each container's stage, tie, cgroup, limit over time, peak and OOM kills" {
  run -0 rm-summarize --companions --kmsg "$C/r2.kmsg" "$C/r2-tied.csv"
  [[ "$output" == *"Containers of the build: 3"* ]]
  [[ "$output" == *"  61fa62343399 (crossbuild-app)  stage app  tied by label  cgroup /docker/61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a"* ]]
  [[ "$output" == *"    limit 600 MiB, 440 MiB from +0:12:55; peak at least 439.0 MiB (last read at +0:13:15); OOM kills 1 (at +0:13:15)"* ]]
  [[ "$output" == *"  1b29e0a7c4d5 (crossbuild-core)  stage core  tied by label"* ]]
  [[ "$output" == *"    limit 600 MiB; peak at least 488.3 MiB (last read at +0:09:05); OOM kills 0"* ]]
  [[ "$output" == *"  (and 1 container on this host not tied to the build)"* ]]
  # Named on the command line, by its header, it is read the same.
  run -0 rm-summarize --kmsg "$C/r2.kmsg" "$C/r2-tied.csv" "$C/r2-tied.containers.csv"
  [[ "$output" == *"OOM kills 1 (at +0:13:15)"* ]]
}

@test "containers companion: a container still running at the end has its peak, not a lower bound; rows fold per container" {
  local d=$BATS_TEST_TMPDIR
  head -4 "$C/r2-tied.csv" >"$d/run.csv"
  {
    echo "epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,failcnt,oom_kills,state"
    echo "1796311760.000,0.000,aaaaaaaaaaaabbbb,,/P/aaaaaaaaaaaabbbb,cgroup-parent,,1024,2048,0,0,run"
    echo "1796311765.000,5.000,aaaaaaaaaaaabbbb,,/P/aaaaaaaaaaaabbbb,cgroup-parent,,1024,4096,0,2,run"
    echo "1796311770.000,10.000,aaaaaaaaaaaabbbb,,/P/aaaaaaaaaaaabbbb,cgroup-parent,,1024,4096,0,3,run"
  } >"$d/run.containers.csv"
  run -0 rm-summarize --companions "$d/run.csv"
  [[ "$output" == *"Containers of the build: 1"* ]]
  [[ "$output" == *"  aaaaaaaaaaaa  stage setup, core  tied by cgroup-parent  cgroup /P/aaaaaaaaaaaabbbb"* ]]
  [[ "$output" == *"    limit none; peak 4.0 MiB at +0:00:05; OOM kills 3 (2 at +0:00:05, 1 at +0:00:10)"* ]]
  # A state rm-tree does not write is not a containers companion row.
  echo "1796311775.000,15.000,aaaaaaaaaaaabbbb,,/P/a,cgroup-parent,,1,1,0,3,paused" >>"$d/run.containers.csv"
  run -1 rm-summarize --companions "$d/run.csv"
  [[ "$output" == *"run.containers.csv': line 5: state 'paused', not run or gone"* ]]
}
