#!/usr/bin/env bats
# The OOM answer in full: the verdict leads with the killed
# compile unit, at its exit's time, in the stage and beside the log line
# then (with its age), under the limit of the cgroup that acted (its usage
# and limit from the kernel's report), with the other units of that
# cgroup and their memory at the kill (the kernel's task dump), and the
# victim's peak as a lower bound; the same in text, Markdown and JSON.
# Fixture files first (a gdb build's kill, modelled on
# shared/findings/real-build-gdb.md), then a real kill in a v1 memory
# cgroup.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize/oom-answer"
  PAGE_KIB=$(($(getconf PAGESIZE) / 1024))
}

teardown() {
  local p cg
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
  for cg in ${CGS:-}; do
    [[ -d "$cg" ]] || continue
    while read -r p; do echo "$p" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null || true; done <"$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null || true
  done
}

gdb_summary() {
  rm-summarize "$@" --kmsg "$F/gdb.kmsg" "$F/gdb.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
}

@test "fixture: the verdict leads with the killed unit, its exit's time, the cgroup's limit and the unit beside it (text)" {
  local beside
  beside=$(awk -v k="$PAGE_KIB" 'BEGIN { printf "%.1f MiB", 68000 * k / 1024 }')
  run -0 --separate-stderr gdb_summary
  # The kill at the victim's exit (12.3 s), not the sample at 15 s; the
  # context read last before it (at 10 s), not the make error after it.
  [[ "$output" == *"Verdict"*"  - OOM: \`gdb/breakpoint.c\` (cc1plus, PID 14773) was killed at +0:00:12.3 in stage gdb by the 600 MiB limit of cgroup /rmA (usage 600.0 MiB), with \`gdb/buildsym.c\` ($beside) compiling beside it; it had at least 438.5 MiB when killed. The log then (read 2.3 s before the kill):   CXX    buildsym.o. The kernel killed 1 process of the build. It was killed by the limit of cgroup /rmA, not for want of memory on the host"* ]]
  # The OOM verdict comes first.
  local v=${output#*Verdict$'\n'}
  [[ "$v" == "  - OOM: \`gdb/breakpoint.c\`"* ]]
  [[ "$output" == *"OOM kills: 1"$'\n'"  at +0:00:12  stage gdb  1 kill, victim cc1plus (PID 14773) killed by the limit of cgroup /rmA"$'\n'"    \`gdb/breakpoint.c\` (cc1plus, PID 14773): killed at +0:00:12.3 (its exit), at least 438.5 MiB when killed"$'\n'"    cgroup /rmA at the kill: usage 600.0 MiB, limit 600 MiB"$'\n'"    beside it (the kernel's task dump, memory at the kill): \`gdb/buildsym.c\` (cc1plus, PID 32141) $beside; make (PID 14700)"* ]]
  [[ "$output" == *"    context:   CXX    buildsym.o (read 2.3 s before the kill)"* ]]
  [[ "$output" != *"while: make: *** [Makefile:11122: all-gdb] Error 2"* ]]
}

@test "fixture: the same kill in JSON and Markdown" {
  run -0 --separate-stderr gdb_summary --json
  run -0 jq -c '.verdicts[0] | [.kind, .unit, .pid, .at_s, .stage, (.text | startswith("OOM: `gdb/breakpoint.c` (cc1plus, PID 14773) was killed at +0:00:12.3"))]' <<<"$output"
  [ "$output" = '["oom-kill","gdb/breakpoint.c",14773,12.3,"gdb",true]' ]
  run -0 --separate-stderr gdb_summary --json
  run -0 jq -c '.system.oom_kills.events[0].victims[0] | [.unit, .killed_at_s, .time_from, .stage, .context, .context_age_s, .peak_rss_kib_at_least, .cgroup_usage_kib, .cgroup_limit_kib, .task_dump, (.beside | map(select(.unit)) | map([.pid, .unit, .rss_kib, .from]))]' <<<"$output"
  [ "$output" = "[\"gdb/breakpoint.c\",12.3,\"exit\",\"gdb\",\"  CXX    buildsym.o\",2.3,449020,614400,614400,true,[[32141,\"gdb/buildsym.c\",$((68000 * PAGE_KIB)),\"task_dump\"]]]" ]
  run -0 --separate-stderr gdb_summary --markdown
  [[ "$output" == *"| OOM kill | 1: gdb/breakpoint.c (cc1plus, PID 14773), at least 438.5 MiB when killed, killed by the 600 MiB limit of cgroup /rmA; beside it: gdb/buildsym.c "*" | +0:00:12 | gdb |   CXX    buildsym.o |"* ]]
  [[ "$output" == *"- OOM: \\\`gdb/breakpoint.c\\\` (cc1plus, PID 14773) was killed at +0:00:12.3 in stage gdb by the 600 MiB limit of cgroup /rmA"* ]]
}

@test "fixture: without the kernel's task dump, the units alive at the kill with their peaks" {
  grep -v 'Tasks state\|\[ ' "$F/gdb.kmsg" >"$BATS_TEST_TMPDIR/k"
  run -0 --separate-stderr rm-summarize --kmsg "$BATS_TEST_TMPDIR/k" "$F/gdb.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"with \`gdb/buildsym.c\` (alive then, peak 293.0 MiB) compiling beside it"* ]]
  [[ "$output" == *"    beside it (no task dump: alive then, their peaks): \`gdb/buildsym.c\` (cc1plus, PID 32141) 293.0 MiB"* ]]
}
