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

@test "binding headroom: the container's limit, not the host's 24 GiB: near-OOM, stage table, -j advice and verdict name the container" {
  run -0 rm-summarize --companions --kmsg "$C/r2.kmsg" "$C/r2-tied.csv"
  [[ "$output" == *"; RAM 24105 MiB (the host's); 2 cores (effective)"* ]]
  [[ "$output" == *"  containers of the build by stage, with their memory limits:"*"    core     1b29e0a7c4d5 (crossbuild-core) 600 MiB"*"    app      61fa62343399 (crossbuild-app) 600 MiB, 440 MiB from +0:12:55"* ]]
  [[ "$output" == *"  min available (container)   6 MiB of 440 MiB         at +0:13:10  stage app"*"container 61fa62343399 (crossbuild-app)"* ]]
  [[ "$output" == *"Near-OOM (available below 4096 MiB): 0 samples
  within container 61fa62343399 (crossbuild-app): 4 readings below 66 MiB (its limit 440 MiB), first at +0:12:55 in stage app"* ]]
  # compilers: the build's own at once (exit log); host comp: the host's.
  [[ "$output" == *"host comp near-OOM  ctr avail"*"  core     0:09:00      108       2766      21339     74.90         1         2        0        112"*"  app      0:04:30       55       2746      21359     74.90         2         2        0          6"* ]]
  [[ "$output" == *"  core                     4     296.9     296.9          320        1  container 1b29e0a7c4d5 memory"* ]]
  [[ "$output" == *"  app                      2     282.9     282.9          320        1  container 61fa62343399 memory"* ]]
  [[ "$output" == *"- OOM edge: available within container 61fa62343399 (crossbuild-app) fell to 6 MiB of its 440 MiB limit at +0:13:10 in stage app (4 readings below 66 MiB). Lower the memory per job for that stage (safe -j 1 at 320 MiB per job), or raise the container's memory limit (docker run --memory)."* ]]
  # The system CSV's memory, load and CPU are the host's, and say so.
  [[ "$output" == *"  max memory used (host)      2766 MiB (11.5 %)        at +0:08:05  stage core"* ]]
  [[ "$output" == *"  max load1 (host)            16.50"* ]]
  [[ "$output" != *"safe -j 2"* ]]
  [[ "$output" != *"bound by cores"* ]]
}

@test "binding headroom: two containers at once in one stage are each judged by their own limit" {
  local d=$BATS_TEST_TMPDIR
  head -21 "$C/r2-tied.csv" >"$d/two.csv"    # +0:00:00 to +0:01:40, stages setup and core
  {
    echo "epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,failcnt,oom_kills,state"
    for t in 20 40 60 80; do
      echo "$((1796311760 + t)).000,$t.000,aaaa11112222cccc,web,/docker/aaaa11112222cccc,label,262144,$((200000 + t * 500)),250000,0,0,run"
      echo "$((1796311760 + t)).000,$t.000,bbbb33334444dddd,db,/docker/bbbb33334444dddd,name,2097152,400000,400000,0,0,run"
    done
  } >"$d/two.containers.csv"
  run -0 rm-summarize --companions "$d/two.csv"
  [[ "$output" == *"    core     aaaa11112222 (web) 256 MiB; bbbb33334444 (db) 2 GiB"* ]]
  [[ "$output" == *"  within container aaaa11112222 (web): 2 readings below 38 MiB (its limit 256 MiB), first at +0:01:00 in stage core"* ]]
  [[ "$output" != *"within container bbbb33334444"* ]]
  [[ "$output" == *"- OOM edge: available within container aaaa11112222 (web) fell to 22 MiB of its 256 MiB limit at +0:01:20 in stage core (2 readings below 38 MiB)."* ]]
  [[ "$output" != *"container bbbb33334444 (db) fell"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  # Roomy containers only: no problem, and the verdict says how close the closest came.
  sed -i 's/,262144,/,1048576,/' "$d/two.containers.csv"
  run -0 rm-summarize --companions "$d/two.csv"
  [[ "$output" == *"  within the build's 2 containers with a limit: 0 readings below the smaller of 4096 MiB and 15 % of its limit"* ]]
  [[ "$output" == *"- No headroom problem: available memory stayed above 4096 MiB (within the build's containers: lowest 790 MiB of the 1 GiB limit of aaaa11112222 (web)), no swap in use, no OOM kill, disk above 20 GiB."* ]]
}

@test "OOM in a tied container is the build's: the kernel log's cgroup names it, even when the exit log has the victim as another program's row" {
  # The findings' default scope: the compilers are scope=out rows
  # ("elsewhere on this host"); the containers CSV ties their container.
  run -0 rm-summarize --kmsg "$C/r2.kmsg" "$C/r2-tied.csv" "$C/r2-untied.procs.csv" "$C/r2-tied.containers.csv"
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)"* ]]
  [[ "$output" == *"  at +0:13:15  stage app  1 kill, victim cc1plus (PID 15122) killed by the limit of cgroup /docker/61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a (container 61fa62343399 (crossbuild-app))"* ]]
  [[ "$output" == *"- OOM: the kernel killed 1 process of the build in container 61fa62343399 (crossbuild-app); the first at +0:13:15 (killed cc1plus (PID 15122)) in stage app, while: make: *** Waiting for unfinished jobs..... It was killed by the container's memory limit, 440 MiB, not for want of memory on the host: raise that limit (docker run --memory) or run fewer jobs in it."* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  # With the build's own rows the victim's unit is named, and the advice comes from the container's limit.
  run -0 rm-summarize --companions --kmsg "$C/r2.kmsg" "$C/r2-tied.csv"
  [[ "$output" == *"(killed \`app/app_0.cpp\` (cc1plus, PID 15122, emulated)) in stage app"*"It was killed by the container's memory limit, 440 MiB, not for want of memory on the host: raise that limit (docker run --memory) or run fewer jobs in it (safe -j 1 at 320 MiB per job)."* ]]
}

@test "OOM in a tied container is the build's: its own oom_kill count rose, though neither the host's count nor the kernel log saw it" {
  awk -F, 'BEGIN { OFS = "," } NR > 1 { $15 = 0 } { print }' "$C/r2-tied.csv" >"$BATS_TEST_TMPDIR/r.csv"
  run -0 --separate-stderr rm-summarize --kmsg "$BATS_TEST_TMPDIR/none.kmsg" "$BATS_TEST_TMPDIR/r.csv" "$C/r2-tied.procs.csv" "$C/r2-tied.containers.csv"
  [[ "$output" == *"OOM kills: 1 (by the oom_kill counts of the build's containers)
  the build's container 61fa62343399 (crossbuild-app): its oom_kill count says 1 (at +0:13:15)"* ]]
  [[ "$output" == *"- OOM: the kernel killed 1 process of the build in container 61fa62343399 (crossbuild-app); the first at +0:13:15 in stage app (its own oom_kill count rose; the kernel log names no victim). It was killed by the container's memory limit, 440 MiB"* ]]
  [[ "$output" != *"OOM kills: 0"* ]]
}

@test "no exact tie: container clients whose containers it could not tie: said plainly, the host's containers listed, never 'No OOM kill in the build' or 'No headroom problem'" {
  # The findings' r2 with the default scope: the build is the docker clients.
  run -0 rm-summarize --companions --kmsg "$C/r2.kmsg" "$C/r2-untied.csv"
  [[ "$output" == *"Containers during the build (not tied to it): 4
  the build ran 3 container clients whose containers could not be tied to it; --label rm-tools.run=\$RUN_ID or --cgroup-parent PARENT on each docker run ties them"* ]]
  [[ "$output" == *"  61fa62343399 (crossbuild-app)  stage app  cgroup /docker/61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a
    limit 600 MiB, 440 MiB from +0:12:55; peak at least 439.0 MiB (last read at +0:13:15); OOM kills 1 (at +0:13:15)"* ]]
  [[ "$output" == *"  9e8d7c6b5a49 (neighbour-db)  stage setup, core, app"* ]]
  [[ "$output" == *"- A container not tied to the build was OOM-killed during it: 61fa62343399 (crossbuild-app), memory limit 440 MiB, 1 kill, the first at +0:13:15 (victim cc1plus, PID 15122) in stage app. The build ran container clients whose containers could not be tied to it, so this may have been the build's own kill"*"The kernel also killed 1 process elsewhere on this host."* ]]
  [[ "$output" == *"- Containers not tied: the build ran 3 container clients (docker or podman run, create, start or exec) whose containers could not be tied to it"*"To tie them, add --label rm-tools.run=\$RUN_ID (or --cgroup-parent PARENT) to each docker run line."* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  # Without the kill: still no headroom verdict for what it could not see.
  awk -F, 'BEGIN { OFS = "," } NR > 1 { $11 = 0 } { print }' "$C/r2-untied.containers.csv" >"$BATS_TEST_TMPDIR/u.containers.csv"
  run -0 rm-summarize "$C/r2-untied.csv" "$C/r2-untied.procs.csv" "$BATS_TEST_TMPDIR/u.containers.csv"
  [[ "$output" == *"- Containers not tied: the build ran 3 container clients"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  [[ "$output" != *"A container not tied to the build was OOM-killed"* ]]
}

@test "no exact tie: only docker/podman run, create, start and exec are container clients; other containers are the host's" {
  local d=$BATS_TEST_TMPDIR
  sed 's/docker run --rm --memory 600m/docker -H unix:\/\/\/x.sock ps -a --memory 600m/' "$C/r2-untied.procs.csv" >"$d/p.procs.csv"
  run -0 rm-summarize "$C/r2-untied.csv" "$d/p.procs.csv" "$C/r2-untied.containers.csv"
  [[ "$output" == *"Containers during the build (not tied to it): 4"* ]]
  [[ "$output" != *"container clients"* ]]
  [[ "$output" != *"Containers not tied"* ]]
  sed 's/docker run --rm --memory 600m/podman --log-level info container create --memory 600m/' "$C/r2-untied.procs.csv" >"$d/p.procs.csv"
  run -0 rm-summarize "$C/r2-untied.csv" "$d/p.procs.csv" "$C/r2-untied.containers.csv"
  [[ "$output" == *"- Containers not tied: the build ran 3 container clients"* ]]
}

@test "JSON: a containers array with every field, the binding container, and the -j advice from its limit" {
  run -0 rm-summarize --json --companions --kmsg "$C/r2.kmsg" "$C/r2-tied.csv"
  local j=$output
  run -0 jq -c '.containers[] | select(.short_id == "61fa62343399") | [.id, .name, .cgroup, .tied, .stages, .gone, .limit_kib, [.limits[] | [.limit_kib, .from.elapsed_s]], .limit_changes, .peak_kib, .peak_lower_bound, .last_read.elapsed_s, .min_avail_kib, .min_avail_at.elapsed_s, .near_oom_readings, .oom_kills, [.oom_rises[] | [.kills, .at.elapsed_s]], .kernel_log_kills]' <<<"$j"
  [ "$output" = '["61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a","crossbuild-app","/docker/61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a","label",["app"],true,450560,[[614400,555],[450560,775]],1,449536,true,795,6000,790,4,1,[[1,795]],1]' ]
  run -0 jq -c '[(.containers | length), .containers_tied, .container_clients, .binding_container, .peaks_of, (.containers[] | select(.name == "neighbour-db") | [.tied, .peak_lower_bound, .peak_kib])]' <<<"$j"
  [ "$output" = '[4,3,3,"61fa62343399","host",[null,false,310000]]' ]
  run -0 jq -c '[.memory_per_job[] | [.stage, .safe_jobs, .bound_by, .budget_mb, .container]], [.system.stages[].min_container_avail_mb], [.verdicts[] | .kind]' <<<"$j"
  [ "$output" = '[["core",1,"container 1b29e0a7c4d5 memory",600,"1b29e0a7c4d5"],["app",1,"container 61fa62343399 memory",440,"61fa62343399"]]
[591,112,6]
["oom-kill","oom-elsewhere","oom-edge"]' ]
  run -0 jq -c '.system.oom_kills | [.count, .in_build_containers, .in_untied_containers, [.events[].victims[] | [.pid, .container]]]' <<<"$j"
  [ "$output" = '[1,1,0,[[15122,"61fa62343399"]]]' ]
  run -0 jq -r '.verdicts[0].text' <<<"$j"
  [[ "$output" == "OOM: the kernel killed 1 process of the build in container 61fa62343399 (crossbuild-app);"*"440 MiB"*"(safe -j 1 at 320 MiB per job)." ]]
  # Untied: the same containers, tied null, and the two verdicts.
  run -0 rm-summarize --json --companions --kmsg "$C/r2.kmsg" "$C/r2-untied.csv"
  run -0 jq -c '[.containers_tied, .container_clients, .binding_container, [.containers[].tied], [.verdicts[].kind]]' <<<"$output"
  [ "$output" = '[0,3,null,[null,null,null,null],["oom-untied-container","containers-not-tied"]]' ]
  run -0 rm-summarize --json --companions --kmsg "$C/r2.kmsg" "$C/r2-untied.csv"
  run -0 jq -c '.system.oom_kills | [.count, .elsewhere, .in_build_containers, .in_untied_containers]' <<<"$output"
  [ "$output" = '[0,2,0,1]' ]
}

@test "Markdown: the containers table, the binding headroom, host peaks marked, and the same verdicts" {
  run -0 rm-summarize --markdown --companions --kmsg "$C/r2.kmsg" "$C/r2-tied.csv"
  [[ "$output" == *"Within the build's containers, by each one's limit: 4 readings, in 1 container."* ]]
  [[ "$output" == *"| max memory used (host) | 2766 MiB (11.5 %) |"* ]]
  [[ "$output" == *"| min available (container) | 6 MiB of 440 MiB | +0:13:10 | app | 61fa62343399 (crossbuild-app) |"* ]]
  [[ "$output" == *"| near-OOM | container min avail MiB |"*"| app | 0:04:30 | 55 | 2746 | 21359 | 74.90 | 2 | 2 | 0 | 6 |"* ]]
  [[ "$output" == *"**Containers of the build**: 3 (and 1 on this host not tied to the build)"* ]]
  [[ "$output" == *"| 61fa62343399 | crossbuild-app | app | label | /docker/61fa62343399bbb97fb4c3a7efd644ba9beffcd54cbedce3bef1f7228352333a | 600 MiB, 440 MiB from +0:12:55 | at least 439.0 MiB (last read at +0:13:15) | 1 (at +0:13:15) |"* ]]
  [[ "$output" == *"| app | 2 (2 emulated) | 282.9 | 320 | 1 | container 61fa62343399 memory |"* ]]
  [[ "$output" == *"- OOM: the kernel killed 1 process of the build in container 61fa62343399 (crossbuild-app)"* ]]
  run -0 rm-summarize --markdown --companions --kmsg "$C/r2.kmsg" "$C/r2-untied.csv"
  [[ "$output" == *"**Containers during the build (not tied to it)**: 4. The build ran 3 container clients whose containers could not be tied to it"* ]]
  [[ "$output" == *"- A container not tied to the build was OOM-killed during it: 61fa62343399 (crossbuild-app)"* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  [[ "$output" != *"No headroom problem"* ]]
}

@test "containers companion: a container shorter than a tick, seen only in its gone row, has a lower bound and its OOM kill" {
  local d=$BATS_TEST_TMPDIR
  head -4 "$C/r2-tied.csv" >"$d/s.csv"
  {
    echo "epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,failcnt,oom_kills,state"
    echo "1796311765.000,5.000,cccc55556666eeee,quick,/docker/cccc55556666eeee,cidfile,102400,90000,102000,7,1,gone"
  } >"$d/s.containers.csv"
  run -0 rm-summarize --companions "$d/s.csv"
  [[ "$output" == *"  cccc55556666 (quick)  stage setup  tied by cidfile  cgroup /docker/cccc55556666eeee
    limit 100 MiB; peak at least 99.6 MiB (last read at +0:00:05); OOM kills 1 (at +0:00:05)"* ]]
  [[ "$output" == *"- OOM: the kernel killed 1 process of the build in container cccc55556666 (quick); the first at +0:00:05 in stage setup (its own oom_kill count rose; the kernel log names no victim). It was killed by the container's memory limit, 100 MiB"* ]]
}

# ctr_edited AWK: run r2-tied in the test's directory, its containers file
# as AWK rewrites it; rm-summarize's text in $output.
ctr_edited() {
  local d=$BATS_TEST_TMPDIR
  cp "$C"/r2-tied.csv "$C"/r2-tied.procs.csv "$C"/r2-tied.stats.csv "$d/"
  awk -F, -v OFS=, "$1" "$C/r2-tied.containers.csv" >"$d/r2-tied.containers.csv"
  run -0 rm-summarize --companions --kmsg "$C/r2.kmsg" "$d/r2-tied.csv"
}

@test "containers companion: no limit in a container's first row and one in its second is its limit from the start (docker writes it just after making the cgroup); no limit for two rows is a change" {
  # 1b29e0a7c4d5's first row without its limit, as rm-tree read it
  # between docker's mkdir and its write of memory.limit_in_bytes.
  ctr_edited '$3 ~ /^1b29e0a7c4d5/ && !seen++ { $7 = "" } { print }'
  [[ "$output" == *"    limit 600 MiB; peak at least 488.3 MiB (last read at +0:09:05); OOM kills 0"* ]]
  # its first two rows without: a limit set later, said as a change
  ctr_edited '$3 ~ /^1b29e0a7c4d5/ && seen++ < 2 { $7 = "" } { print }'
  [[ "$output" == *"    limit none, 600 MiB from +0:"* ]]
}

@test "a container first seen between the last sample of a stage and the first of the next is the next stage's (an orchestrator marks the stage, then starts it); one seen before is not" {
  # core's last sample is at 1796312305, app's first at 1796312310: the
  # app container's first row moved to 1796312307 (elapsed 547).
  ctr_edited '$3 ~ /^61fa62343399/ && !seen++ { $1 = "1796312307.000"; $2 = "547.000" } { print }'
  [[ "$output" == *"  61fa62343399 (crossbuild-app)  stage app  tied by label"* ]]
  # at 1796312304, before core's last sample: core's too, as read
  ctr_edited '$3 ~ /^61fa62343399/ && !seen++ { $1 = "1796312304.000"; $2 = "544.000" } { print }'
  [[ "$output" == *"  61fa62343399 (crossbuild-app)  stage core, app  tied by label"* ]]
}
