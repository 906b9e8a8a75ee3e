#!/usr/bin/env bats
# OOM kills of a run made in a PID namespace (a container): summarized
# on the host, the kernel log's host PIDs name no row of the exit log
# (namespace PIDs), so a kill is tied by the cgroup the run recorded
# (rm-tree --stats), exactly, and the victim's row is inferred by
# command, cgroup and end time, and said to be.  Summarized inside the
# container there is no kernel log: the build cgroup's own counter says
# how many kills were the build's.
# shellcheck disable=SC2016,SC2154  # awk programs are single-quoted on purpose; bats sets output, lines

setup() {
  load test_helper/common
  F="$FIXTURES/summarize/pidns"
  D="$BATS_TEST_TMPDIR"
}

# fixture END EXIT: the fixture files into $D with this boot's times: the
# run started 10 minutes ago, the build's kill 75 s in (the neighbour's
# 5 s before it), cc1plus 112 ended END s in with EXIT.
fixture() {
  local up now t k
  read -r up _ </proc/uptime
  now=$(date +%s)
  t=$((now - 600))
  # Kernel log time: microseconds of uptime (CLOCK_MONOTONIC, as the log's).
  k=$(awk -v up="$up" 'BEGIN { printf "%d", (up - 600 + 75) * 1000000 }')
  awk -v t="$t" '{
    while (match($0, /@T\+[0-9]+@/)) {
      n = substr($0, RSTART + 3, RLENGTH - 4)
      $0 = substr($0, 1, RSTART - 1) (t + n) ".000" substr($0, RSTART + RLENGTH)
    }
    print }' "$F/in.csv" >"$D/in.csv"
  sed -e "s/@END@/$1/" -e "s/@EXIT@/$2/" "$F/in.procs.csv" >"$D/in.procs.csv"
  cp "$F/in.stats.csv" "$D/in.stats.csv"
  sed -e "s/@K@/${k}/" -e "s/@K-5@/$((k - 5000000))/" "$F/in.kmsg" >"$D/in.kmsg"
}

@test "a container's run summarized on the host: its kill is the build's, tied by the container's cgroup; the victim's row (PID 112, not 17798) inferred and said to be" {
  fixture 76.000 ''
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)"* ]]
  [[ "$output" == *"victim cc1plus (PID 17798) killed by the limit of cgroup /crossbuild3/1b2954b2a0c14e7e9a5e1f1c8d3b2a19f0e4d5c6b7a8910111213141516171819; the build's: its cgroup is the run's (the run's PIDs are a PID namespace's); its row inferred by command, cgroup and end time: PID 112 there"* ]]
  [[ "$output" == *"OOM: \`core/core_1.cpp\` (cc1plus, PID 17798) was killed at +0:01:16.0 by the 440 MiB limit of cgroup /crossbuild3/"*"The kernel killed 1 process of the build."* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  # The neighbour's kill, in another cgroup at the same moment, stays elsewhere.
  [[ "$output" == *"fakecc (PID 28751)"* ]]
  run -0 rm-summarize --json --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  run -0 jq -c '[.system.oom_kills.count, .system.oom_kills.elsewhere, (.system.oom_kills.events[0].victims[0] | .pid, .name, .tied_by, .row_pid, .row_inferred)]' <<<"$output"
  [ "$output" = '[1,1,17798,"cc1plus","cgroup",112,true]' ]
}

@test "tied by cgroup only where it is exact: another cgroup, a run in the initial PID namespace, a private cgroup namespace, or another time tie nothing" {
  fixture 76.000 ''
  # The container's cgroup's sibling is not it.
  sed 's|/crossbuild3/1b29[0-9a-f]*$|/crossbuild3/1b2954b2a0c1|' "$D/in.stats.csv" >"$D/s1.csv"
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/s1.csv"
  [[ "$output" == *"No OOM kill in the build"* ]]
  # PIDs of the initial namespace are the kernel log's: a PID that names no row is no tie.
  sed 's/,4026532311,/,4026531836,/' "$D/in.stats.csv" >"$D/s2.csv"
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/s2.csv"
  [[ "$output" == *"No OOM kill in the build"* ]]
  # A path written in a private cgroup namespace is not the kernel's.
  sed 's/,4026531835,/,4026532400,/' "$D/in.stats.csv" >"$D/s3.csv"
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/s3.csv"
  [[ "$output" == *"No OOM kill in the build"* ]]
  # The same cgroup's kill an hour before the run is not this run's.
  awk -F, -v OFS=, '{ split($3, a, ";"); $3 = $3 - 3600000000; print }' "$D/in.kmsg" >"$D/k4"
  run -0 rm-summarize --kmsg "$D/k4" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" != *"PID 112 there"* ]]
}

@test "the victim's row is not inferred where two rows of its name fit, or none" {
  fixture 76.000 ''
  # Both cc1plus rows end within the kill's window: no row is named.
  sed 's/^106,105,cc1plus,2.000,55.000,/106,105,cc1plus,2.000,77.000,/' "$D/in.procs.csv" >"$D/p2.csv"
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/p2.csv" "$D/in.stats.csv"
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)"* ]]
  [[ "$output" == *"its cgroup is the run's"* && "$output" != *"its row inferred"* ]]
  # The row ended long after the kill: not its victim.
  fixture 200.000 ''
  run -0 rm-summarize --kmsg "$D/in.kmsg" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" == *"its cgroup is the run's"* && "$output" != *"its row inferred"* ]]
}

@test "summarized inside the container (no kernel log): the build cgroup's counter makes 1 of the 2 host-wide kills the build's, the rest elsewhere; a SIGKILLed row is the inferred victim" {
  fixture 76.000 ''
  run -0 rm-summarize --kmsg "$D/none" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" == *"OOM kills: 1 (and 1 elsewhere on this host)"* ]]
  [[ "$output" == *"victim unknown (kernel log: No such file or directory); counted by the build's cgroup's own oom_kill"* ]]
  [[ "$output" == *"OOM: the kernel killed 1 process of the build; the first at +0:01:30, while: make: *** [Makefile:9: obj/core/core_1.o] Error 1. The build's own cgroup counted it (no kernel log here to say more), whose limit is 440 MiB: raise that limit (docker run --memory), or make the build fit under it."* ]]
  [[ "$output" != *"add RAM"* ]]
  [[ "$output" == *"Process data: sampled mode"* ]]
  # The victim a direct child of rm-tree --exec: its exit status says SIGKILL.
  fixture 76.000 137
  run -0 rm-summarize --kmsg "$D/none" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" == *"victim cc1plus (PID 112), inferred: the build's cgroup counted the kill (no kernel log here) and this row ended by SIGKILL then"* ]]
  run -0 --separate-stderr rm-summarize --json --kmsg "$D/none" "$D/in.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  run -0 jq -c '[.system.oom_kills.count, .system.oom_kills.elsewhere, (.system.oom_kills.events[0].victims[0] | .pid, .tied_by, .row_inferred)]' <<<"$output"
  [ "$output" = '[1,1,112,"exit_status",true]' ]
  # A shell's 137 passed on from a child that ended then is no SIGKILL of its own.
  fixture 76.000 ''
  sed 's/^111,7,g++,2.900,76.000,4000,3.000,0.01,1,/111,7,g++,2.900,76.000,4000,3.000,0.01,137,/' "$D/in.procs.csv" >"$D/p137.csv"
  grep -q '^111,.*,137,g++' "$D/p137.csv"
  run -0 --separate-stderr rm-summarize --kmsg "$D/none" "$D/in.csv" "$D/p137.csv" "$D/in.stats.csv"
  [[ "$output" == *"victim unknown (kernel log: No such file or directory); counted by the build's cgroup's own oom_kill"* ]]
  # Without the cgroup's counter, as before: both kills unknown, counted as the build's.
  cut -d, -f1-23,25- "$D/in.csv" >"$D/nocg.csv"
  run -0 rm-summarize --kmsg "$D/none" "$D/nocg.csv" "$D/in.procs.csv" "$D/in.stats.csv"
  [[ "$output" == *"OOM kills: 2"* ]]
}
