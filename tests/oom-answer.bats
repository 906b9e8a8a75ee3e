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

# The kernel's record of PID's kill from /dev/kmsg: "EPOCH RSS_KIB_OF_PARTNER"
# (the kill's log time as wall time, through this boot's offset between
# CLOCK_REALTIME and CLOCK_MONOTONIC, and the partner's resident memory in
# the task dump printed before the kill).
kernel_record() {
  "$PY" - "$1" "$2" <<'PY'
import os, re, sys, time
victim, partner = sys.argv[1], sys.argv[2]
off = time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
recs = []
while True:
    try:
        recs.append(os.read(fd, 8192).decode("utf-8", "replace"))
    except BlockingIOError:
        break
    except BrokenPipeError:
        continue
at, rss, dump = None, None, {}
for r in recs:
    head, _, msg = r.partition(";")
    msg = msg.split("\n")[0]
    if msg.startswith("Tasks state"):
        dump = {}
    m = re.match(r"\[\s*(\d+)\]\s+-?\d+\s+(\d+)\s+\d+\s+(\d+)", msg)
    if m:
        dump[m.group(2)] = int(m.group(3))
    if re.search(r"Killed process %s \(cc1plus\)" % victim, msg):
        at = off + int(head.split(",")[2]) / 1e6
        rss = dump.get(partner)
page = os.sysconf("SC_PAGESIZE") // 1024
print("%.3f %s" % (at, rss * page if rss is not None else "none"))
PY
}

# bats test_tags=slow
@test "real: two compilers in a limited v1 memory cgroup, one killed: the verdict names its unit first, the kernel's time, the unit beside it with the dump's memory, the log line and its age, the lower-bound peak" {
  local v1=/sys/fs/cgroup/memory T="$BATS_TEST_TMPDIR" logs="$BATS_TEST_TMPDIR/logs" out="$BATS_TEST_TMPDIR/out"
  CG="$v1/oom-answer-oom-$$"
  mkdir "$CG" 2>/dev/null || skip_needs_root "cannot create a v1 memory cgroup under $v1 (not root, or no cgroup v1 memory controller)"
  CGS="$CG"
  [[ -r /dev/kmsg ]] || skip_needs_root "/dev/kmsg is not readable"
  [[ "$(cat /proc/sys/vm/oom_dump_tasks)" == 1 ]] || skip "vm.oom_dump_tasks is 0: the kernel prints no task dump"
  echo 150M >"$CG/memory.limit_in_bytes"
  mkdir -p "$T/bin" "$logs" "$out"
  # Compilers as lib/cu knows them: named cc1plus, a .cpp argument.
  cp "$RM_BUILD/tests/memhog" "$T/bin/cc1plus"
  cat >"$T/orch.sh" <<'EOS'
# The whole build in the cgroup, as a build started inside it is.
echo $$ >"$1/cgroup.procs"
touch "$3/in-cgroup"
while [[ ! -e "$3/go" ]]; do sleep 0.05; done
echo compile >"$2/stage"
echo "CXX partner.o" >>"$2/build.log"
"$3/bin/cc1plus" -m 50 -t 60 -r "$3/partner.ready" -- partner.cpp &
partner=$!
echo "$partner" >"$3/partner.pid"
while [[ ! -e "$3/partner.ready" ]]; do sleep 0.05; done
echo "CXX victim.o" >>"$2/build.log"
# Two ticks, so the line is read before the kill.
sleep 1.2
"$3/bin/cc1plus" -m 400 -t 5 -- victim.cpp &
echo $! >"$3/victim.pid"
wait $! || echo "make: *** [Makefile:7: victim.o] Error 137" >>"$2/build.log"
sleep 1
kill -TERM "$partner"
wait "$partner"
echo done >"$2/stage"
sleep 0.6
EOS
  bash "$T/orch.sh" "$CG" "$logs" "$T" &
  local orch=$!
  BG_PIDS="$orch"
  wait_for 10 test -e "$T/in-cgroup"
  rm-monitor --out-dir "$out" --run-id ans --interval 0.5 --watch-pid "$orch" \
    --stage-file "$logs/stage" --stage-log-dir "$logs" 2>"$T/monitor.err" &
  local mon=$!
  BG_PIDS="$orch $mon"
  wait_for 20 test -s "$out/resources-ans.csv"
  sleep 1
  touch "$T/go"
  wait "$orch"
  wait "$mon"
  local vpid ppid rec kat prss
  vpid=$(cat "$T/victim.pid")
  ppid=$(cat "$T/partner.pid")
  rec=$(kernel_record "$vpid" "$ppid")
  kat=${rec% *}
  prss=${rec#* }
  [[ "$prss" =~ ^[0-9]+$ ]]
  local cgname=${CG#"$v1"} files=("$out/resources-ans.csv" "$out/resources-ans.procs.csv" "$out/resources-ans.stats.csv")
  run -0 cat "$out/resources-ans.summary.txt"
  local text=$output
  # Text: the verdict leads with the killed unit.
  [[ "$text" == *"Verdict"$'\n'"  - OOM: \`victim.cpp\` (cc1plus, PID $vpid) was killed at +"*" in stage compile by the 150 MiB limit of cgroup $cgname (usage "*"), with \`partner.cpp\` ("*" MiB) compiling beside it; it had at least "*" MiB when killed. The log then (read "*" before the kill): CXX victim.o. The kernel killed 1 process of the build."* ]]
  [[ "$text" == *"beside it (the kernel's task dump, memory at the kill): \`partner.cpp\` (cc1plus, PID $ppid)"* ]]
  # JSON: the same kill, its time within 1 s of the kernel's record, the
  # partner's memory the dump's, the context line and its age.
  local j
  j=$(jq -c --arg v "$vpid" '.system.oom_kills.events[] | .victims[] | select(.pid == ($v | tonumber))' "$out/resources-ans.summary.json")
  run -0 jq -r '[.unit, .time_from, .stage, .context, (.context_age_s >= 0 and .context_age_s < 5), (.peak_rss_kib_at_least > 20000), .cgroup_limit_kib, .task_dump] | @tsv' <<<"$j"
  [ "$output" = "victim.cpp	exit	compile	CXX victim.o	true	true	153600	true" ]
  run -0 jq -r --arg p "$ppid" '.beside[] | select(.pid == ($p | tonumber)) | "\(.unit) \(.rss_kib) \(.from)"' <<<"$j"
  [ "$output" = "partner.cpp $prss task_dump" ]
  (( prss >= 50 * 1024 ))
  echo "# kill: kernel $kat, summary $(jq .killed_epoch <<<"$j"), partner $prss KiB" >&3
  run -0 jq -r --argjson k "$kat" '(.killed_epoch - $k) | fabs < 1' <<<"$j"
  [ "$output" = true ]
  run -0 jq -r '.verdicts[0] | "\(.kind) \(.unit) \(.stage)"' "$out/resources-ans.summary.json"
  [ "$output" = "oom-kill victim.cpp compile" ]
  # Markdown says the same.
  run -0 --separate-stderr rm-summarize --markdown "${files[@]}"
  [[ "$output" == *"| OOM kill | 1: victim.cpp (cc1plus, PID $vpid), at least "*" MiB when killed, killed by the 150 MiB limit of cgroup "*"; beside it: partner.cpp "*" | compile | CXX victim.o |"* ]]
  [[ "$output" == *"- OOM: \\\`victim.cpp\\\` (cc1plus, PID $vpid) was killed at +"* ]]
  # The SVG: only the build's OOM mark (other engineers' kills on this
  # host are not drawn), naming the victim and its unit ...
  run -0 rm-summarize --svg "$T/a.svg" "${files[@]}"
  run -0 grep -c '<title>OOM kill' "$T/a.svg"
  [ "$output" = 1 ]
  run -0 grep -F "<title>OOM kill: cc1plus (PID $vpid) victim.cpp" "$T/a.svg"
  # ... and the cgroup's limit and use, in a panel of their own.
  run -0 grep -cF '<title>cgroup memory limit (min per bucket)</title>' "$T/a.svg"
  [ "$output" = 1 ]
}

@test "fixture, SVG (parsed): the cgroup's used and limit in a panel of their own, the limit's change marked, one OOM line, the build's, its label inside the page" {
  rm-summarize --svg "$BATS_TEST_TMPDIR/a.svg" --kmsg "$F/gdb.kmsg" "$F/gdb-limit.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv" >/dev/null
  run -0 "$PY" - "$BATS_TEST_TMPDIR/a.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
W = float(root.get("viewBox").split()[2]) if root.get("viewBox") else float(root.get("width"))
titles = lambda tag: [(e, e.find("s:title", ns).text) for e in root.iter("{%s}%s" % (ns["s"], tag)) if e.find("s:title", ns) is not None]
lines = dict((t, e) for e, t in titles("polyline"))
assert "cgroup memory limit (min per bucket)" in lines, lines.keys()
assert "cgroup memory used (max per bucket)" in lines
# The limit's polyline reaches the panel's top tenth (600 of 880 MiB drawn) only after the change.
changes = [t for e, t in titles("line") if t.startswith("cgroup limit ")]
assert changes == ["cgroup limit 800 -> 600 MiB at +0:00:10"], changes
ooms = [t for e, t in titles("line") if t.startswith("OOM kill")]
assert len(ooms) == 1 and ooms[0].startswith("OOM kill: cc1plus (PID 14773) gdb/breakpoint.c"), ooms
for t in root.iter("{%s}text" % ns["s"]):
    if t.text == "OOM":
        x = float(t.get("x"))
        assert 0 <= x <= W - 25 or t.get("text-anchor") == "end", x
print("ok")
PY
  # The system CSV alone, no exit log beside it: the kill is drawn, of unknown scope.
  mkdir "$BATS_TEST_TMPDIR/alone"
  cp "$F/gdb.csv" "$BATS_TEST_TMPDIR/alone/"
  rm-summarize --svg "$BATS_TEST_TMPDIR/c.svg" --kmsg "$F/gdb.kmsg" "$BATS_TEST_TMPDIR/alone/gdb.csv" >/dev/null
  run -0 grep -c '<title>OOM kill (scope unknown: no exit log given nor beside the CSV)' "$BATS_TEST_TMPDIR/c.svg"
  [ "$output" = 1 ]
  run -0 grep -c '>OOM?</text>' "$BATS_TEST_TMPDIR/c.svg"
  [ "$output" = 1 ]
  # A run without a cgroup draws no such panel (and is as before).
  run -0 rm-summarize --svg "$BATS_TEST_TMPDIR/b.svg" "$FIXTURES/summarize/scope/two-builds.csv"
  run -1 grep -c 'cgroup memory' "$BATS_TEST_TMPDIR/b.svg"
}

@test "fixture, trace (jq): the OOM lane holds the build's kill, at its exit, with its unit; another program's kill in a muted lane of its own" {
  local S="$FIXTURES/summarize/scope"
  rm-summarize --trace "$BATS_TEST_TMPDIR/t.json" --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$S/two-builds.procs.csv" "$S/two-builds.stats.csv" >/dev/null
  run -0 jq -c '[.traceEvents[] | select(.cat == "oom") | [.tid, .ts, .s, .name, .args.victims[0].unit]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[[2,19500000,"g","OOM kill: src/c.cpp (cc1plus, PID 5003)","src/c.cpp"]]' ]
  run -0 jq -c '[.traceEvents[] | select(.cat == "oom-elsewhere") | [.tid, .s, .cname, .name]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[[3,"t","grey","OOM kill elsewhere: cc1plus (PID 7001)"]]' ]
  run -0 jq -r '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and (.tid == 2 or .tid == 3)) | .args.name] | join("|")' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = "OOM kills|OOM kills elsewhere on this host" ]
}

@test "fixture, Markdown: a long context is cut to its unit or 80 characters, the cgroup's row and the limit's change kept" {
  local long="/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet -I. -I../../gdb -I../../gdb/config -DLOCALEDIR=/usr/local/share/locale -DHAVE_CONFIG_H -I../../gdb/../include/opcode ../../gdb/buildsym.c -o /tmp/ccX.s"
  sed "s|  CXX    buildsym.o|$long|" "$F/gdb-limit.csv" >"$BATS_TEST_TMPDIR/g.csv"
  run -0 --separate-stderr rm-summarize --markdown --kmsg "$F/gdb.kmsg" "$BATS_TEST_TMPDIR/g.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"| max memory used (host) | 3600 MiB (15.7 %) | +0:00:10 | gdb | ../../gdb/buildsym.c |"* ]]
  [[ "$output" != *"-DLOCALEDIR"*"| gdb |"* ]]
  [[ "$output" == *"| min available (cgroup) | 1 MiB of 600 MiB | +0:00:10 | gdb |"* ]]
  [[ "$output" == *"| cgroup limit changed | 800 -> 600 MiB | +0:00:10 | gdb |  |"* ]]
  # Not a compiler's command: its first 80 characters.
  sed "s|  CXX    buildsym.o|$(printf 'x%.0s' {1..120})|" "$F/gdb.csv" >"$BATS_TEST_TMPDIR/h.csv"
  run -0 --separate-stderr rm-summarize --markdown "$BATS_TEST_TMPDIR/h.csv"
  [[ "$output" == *"| $(printf 'x%.0s' {1..80})... |"* ]]
}

# --top N is the processes' count: the units are every one, with or
# without it (rm-monitor's summary JSON is --top 10, and a report of a
# few of them could not be compared with another run's).
@test "fixture, JSON: every compile unit is listed, with --top N too (which lists N processes); the limit's change" {
  awk -F, 'NR == 1 { print; next } { print } END { for (i = 1; i <= 12; i++) printf "%d,14700,cc1plus,1.000,2.000,%d,,0.10,0,cc1plus -quiet u%02d.cpp -o /tmp/x.s,0,0,0,,,,,,exact,in\n", 40000 + i, 1000 * i, i }' \
    "$F/gdb.procs.csv" >"$BATS_TEST_TMPDIR/p.csv"
  run -0 --separate-stderr rm-summarize --json --kmsg "$F/gdb.kmsg" "$F/gdb-limit.csv" "$BATS_TEST_TMPDIR/p.csv" "$F/gdb.stats.csv"
  run -0 jq -c '[(.compile_units | length), .system.cgroup.limit_changes]' <<<"$output"
  [ "$output" = '[14,[{"from_mb":800,"to_mb":600,"epoch":1800000010,"iso":"2027-01-15T08:00:10.000Z","elapsed_s":10,"stage":"gdb"}]]' ]
  run -0 --separate-stderr rm-summarize --json --top 3 "$F/gdb.csv" "$BATS_TEST_TMPDIR/p.csv"
  run -0 jq -c '[(.compile_units | length), (.processes.top | length)]' <<<"$output"
  [ "$output" = '[14,3]' ]
  run -0 --separate-stderr rm-summarize --kmsg "$F/gdb.kmsg" "$F/gdb-limit.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"  cgroup limit changed        800 -> 600 MiB           at +0:00:10  stage gdb"* ]]
}

@test "fixture: the Stages table's compilers are the build's own at once, the host-wide count beside it; rows without a command line are counted" {
  # The sampler saw 14 compilers on the host; the build had at most 2.
  awk -F, -v OFS=, 'NR > 1 && $12 > 0 { $12 = 14 } { print }' "$F/gdb.csv" >"$BATS_TEST_TMPDIR/g.csv"
  run -0 --separate-stderr rm-summarize "$BATS_TEST_TMPDIR/g.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"  stage   duration  samples  peak used  min avail  min disk compilers host comp near-OOM  cg avail"$'\n'"  gdb      0:00:20        4       3600      19400    100.00         2        14        1         1"* ]]
  run -0 --separate-stderr rm-summarize --json "$BATS_TEST_TMPDIR/g.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  run -0 jq -c '.system.stages[0] | [.max_build_compilers, .max_compilers]' <<<"$output"
  [ "$output" = '[2,14]' ]
  run -0 --separate-stderr rm-summarize --markdown "$BATS_TEST_TMPDIR/g.csv" "$F/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"| max compilers | max compilers (host-wide) |"*"| gdb | 0:00:20 | 4 | 3600 | 19400 | 100.00 | 2 | 14 | 1 | 1 |"* ]]
  # buildsym.c started after breakpoint.c ended: one at a time.
  sed 's/^32141,32140,cc1plus,8.010,/32141,32140,cc1plus,12.500,/' "$F/gdb.procs.csv" >"$BATS_TEST_TMPDIR/p.csv"
  run -0 --separate-stderr rm-summarize "$BATS_TEST_TMPDIR/g.csv" "$BATS_TEST_TMPDIR/p.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"  gdb      0:00:20        4       3600      19400    100.00         1        14        1         1"* ]]
  # A process whose command line was never read.
  sed 's|^32140,14700,g++,8.000,14.000,2048,,0.01,1,g++ -c -o buildsym.o gdb/buildsym.c,|32140,14700,g++,8.000,14.000,2048,,0.01,1,,|' "$F/gdb.procs.csv" >"$BATS_TEST_TMPDIR/q.csv"
  run -0 --separate-stderr rm-summarize "$F/gdb.csv" "$BATS_TEST_TMPDIR/q.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"Process data: exact mode"*$'\n'"  1 process without a command line (ended before it was read): their units are unknown"* ]]
}

@test "fixture: rm-run --memory-max 600M: the -j advice is sized from the budget, and the budget line names the killed unit" {
  local T="$BATS_TEST_TMPDIR"
  printf '%s\n' 'cmd,start_epoch,end_epoch,elapsed_s,exit,procs,peak_rss_kib,peak_at_s,max_proc_rss_kib,cgroup_peak_kib,user_s,sys_s,mem_max_kib,oom_kills,oom_victim' \
    '"make -j2",1800000000.000,1800000060.000,60.000,2,3,614400,30.000,464956,614400,40.0,2.0,614400,1,cc1plus (PID 19245)' >"$T/job.csv"
  cat >"$T/procs.csv" <<'CSV'
pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope
19240,1,make,0.000,60.000,4096,,0.50,2,make -j2,0,0,0,,,,,,exact,in
19245,19240,cc1plus,1.000,30.000,330924,,10.00,SIGKILL,/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet gdb/breakpoint.c -o /tmp/a.s,0,0,0,,,,,,exact,in
19246,19240,cc1plus,1.000,40.000,464956,,20.00,0,/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet gdb/ada-lang.c -o /tmp/b.s,0,0,0,,,,,,exact,in
CSV
  run -0 --separate-stderr rm-summarize --cores 2 "$T/job.csv" "$T/procs.csv"
  [[ "$output" == *"memory budget (--memory-max)     600.0 MiB: OOM-killed inside the budget (1 kill, first victim \`gdb/breakpoint.c\` (cc1plus, PID 19245))"* ]]
  [[ "$output" == *"-j for 600 MiB memory budget (--memory-max), 2 cores)"*"  (all)                    2     454.1     454.1          512        1  memory budget"* ]]
  [[ "$output" != *"bound by cores"* && "$output" != *"        2  cores"* ]]
}

@test "fixture: Elsewhere on this host groups the rows by command, so a neighbour's build stands out (cc1 x5, up to 189.0 MiB)" {
  local S="$FIXTURES/summarize/scope"
  {
    cat "$S/two-builds.procs.csv"
    for k in 111 122 134 165 189; do
      printf '%d,1,cc1,1.000,5.000,%d,,1.00,0,,0,0,0,,,,,,exact,out\n' $((8000 + k)) $((k * 1024))
    done
    for k in 365 364 366; do
      printf '%d,1,rm-summarize,1.000,5.000,%d,,1.00,0,,0,0,0,,,,,,exact,out\n' $((9000 + k)) $((k * 1024))
    done
  } >"$BATS_TEST_TMPDIR/p.csv"
  run -0 --separate-stderr rm-summarize --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$BATS_TEST_TMPDIR/p.csv" "$S/two-builds.stats.csv"
  [[ "$output" == *"  by command: cc1plus x1, up to 900.0 MiB; python3 x1, up to 700.0 MiB; rm-summarize x3, up to 366.0 MiB; cc1 x5, up to 189.0 MiB"$'\n'* ]]
}

@test "fixture: Elsewhere on this host names each row's user (the uid column, through /etc/passwd) and groups by user and command; other users' command lines only with --elsewhere-cmdlines" {
  local S="$FIXTURES/summarize/scope" T="$BATS_TEST_TMPDIR"
  {
    # the build's rows are uid 1000's; a uid with no passwd entry stays a number
    sed -e '1s/$/,emulated,uid/' -e '2,$s/$/,,1000/' "$S/two-builds.procs.csv"
    for k in 111 122 134 165 189; do
      printf '%d,1,cc1,1.000,5.000,%d,,1.00,0,/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet neighbour/secret%d.c,0,0,0,,,,,,exact,out,no,65534\n' $((8000 + k)) $((k * 1024)) "$k"
    done
    printf '%d,1,ld,1.000,5.000,%d,,1.00,0,ld -o hidden-output,0,0,0,,,,,,exact,out,no,4242424\n' 9001 $((150 * 1024)) 9002 $((140 * 1024))
    printf '9100,1,python3,1.000,5.000,%d,,1.00,0,python3 my-own-script.py,0,0,0,,,,,,exact,out,no,1000\n' $((120 * 1024))
  } >"$T/p.csv"
  run -0 --separate-stderr rm-summarize --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$T/p.csv" "$S/two-builds.stats.csv"
  [[ "$output" == *"  by user and command: "*"; nobody: cc1 x5, up to 189.0 MiB; 4242424: ld x2, up to 150.0 MiB"$'\n'* ]]
  [[ "$output" =~ \ 8189\ +189\.0\ \ nobody\ +cc1\ +$'\n' ]]
  # other users' command lines are not copied; the build's user's are
  [[ "$output" != *secret* && "$output" != *hidden-output* ]]
  [[ "$output" == *"python3 my-own-script.py"* ]]
  [[ "$output" == *"  command lines of 7 processes of other users not shown (rm-summarize --elsewhere-cmdlines shows them)"* ]]
  run -0 --separate-stderr rm-summarize --markdown --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$T/p.csv" "$S/two-builds.stats.csv"
  [[ "$output" == *"| 8189 | nobody | cc1 | 189.0 |  |"* && "$output" == *"nobody: cc1 x5, up to 189.0 MiB"* ]]
  [[ "$output" != *secret* && "$output" != *hidden-output* ]]
  run -0 --separate-stderr rm-summarize --json --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$T/p.csv" "$S/two-builds.stats.csv"
  [[ "$output" != *secret* && "$output" != *hidden-output* ]]
  [ "$(jq -c '.elsewhere.cmdlines_hidden, [.elsewhere.groups[] | select(.comm == "cc1" or .comm == "ld") | [.user, .uid, .comm, .count]]' <<<"$output" | tr '\n' ' ')" = '7 [["nobody",65534,"cc1",5],["4242424",4242424,"ld",2]] ' ]
  # asked for, they show
  run -0 --separate-stderr rm-summarize --elsewhere-cmdlines --top all --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$T/p.csv" "$S/two-builds.stats.csv"
  [[ "$output" == *"neighbour/secret189.c"* && "$output" == *"ld -o hidden-output"* && "$output" != *"not shown"* ]]
  # an exit log from before the uid column still summarizes: no user, grouped by command
  run -0 --separate-stderr rm-summarize --kmsg "$S/two-builds.kmsg" "$S/two-builds.csv" "$S/two-builds.procs.csv" "$S/two-builds.stats.csv"
  [[ "$output" == *"Elsewhere on this host"* && "$output" != *"by user and command"* ]]
  [[ "$output" =~ \ 7002\ +700\.0\ \ -\ +python3\ +$'\n' ]]
  [[ "$output" == *"  command lines of 2 processes not shown: other users' or of no recorded user (rm-summarize --elsewhere-cmdlines shows them)"* ]]
}

@test "fixture: the Process data line counts the samplers' dropped-event bursts from their --status files, in text, Markdown and JSON; a status file from before the count says nothing" {
  run -0 --separate-stderr gdb_summary --sampler-status "$F/gdb.status" --sampler-status "$F/gdb.status"
  [[ "$output" == *"Process data: exact mode"*$'\n'"  the kernel dropped process events 6 times before rm-sample read them (socket buffer full): its compilers column was recounted from /proc after each"$'\n'* ]]
  run -0 --separate-stderr gdb_summary --markdown --sampler-status "$F/gdb.status"
  [[ "$output" == *"Process data: exact mode"*"; the kernel dropped process events 3 times before rm-sample read them"* ]]
  run -0 --separate-stderr gdb_summary --json --sampler-status "$F/gdb.status"
  [ "$(jq -c '.collection | [.mode, .sampler_events_dropped, .processes_without_cmd]' <<<"$output")" = '["exact",3,0]' ]
  grep -v '^events_dropped=' "$F/gdb.status" >"$BATS_TEST_TMPDIR/old.status"
  run -0 --separate-stderr gdb_summary --sampler-status "$BATS_TEST_TMPDIR/old.status"
  [[ "$output" == *"Process data: exact mode"* && "$output" != *"dropped process events"* ]]
  run -0 --separate-stderr gdb_summary --json --sampler-status "$BATS_TEST_TMPDIR/old.status"
  [ "$(jq -c '.collection.sampler_events_dropped' <<<"$output")" = null ]
}

@test "fixture, SVG (parsed): rm-summarize --svg A.svg X.csv, as the docs show it, finds X.csv's companions beside it: only the build's kill is drawn, with its unit; alone, each kill is drawn as of unknown scope, none as the build's" {
  local S="$FIXTURES/summarize/scope" T="$BATS_TEST_TMPDIR"
  mkdir "$T/run" "$T/alone"
  cp "$S/two-builds.csv" "$T/run/resources-r1.csv"
  cp "$S/two-builds.procs.csv" "$T/run/resources-r1.procs.csv"
  cp "$S/two-builds.stats.csv" "$T/run/resources-r1.stats.csv"
  cp "$S/two-builds.csv" "$T/alone/resources-r1.csv"
  rm-summarize --svg "$T/run.svg" --kmsg "$S/two-builds.kmsg" "$T/run/resources-r1.csv" >/dev/null
  rm-summarize --svg "$T/alone.svg" --kmsg "$S/two-builds.kmsg" "$T/alone/resources-r1.csv" >/dev/null
  run -0 "$PY" - "$T/run.svg" "$T/alone.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
def ooms(path):
    root = ET.parse(path).getroot()
    lines = [(l.get("stroke-dasharray"), l.find(S + "title").text) for l in root.iter(S + "line")
             if l.find(S + "title") is not None and l.find(S + "title").text.startswith("OOM kill")]
    labels = [t.text for t in root.iter(S + "text") if t.text in ("OOM", "OOM?")]
    return lines, labels
lines, labels = ooms(sys.argv[1])
# the build's kill only, solid, named with its unit; the neighbour's (PID 7001) not drawn
assert len(lines) == 1 and lines[0][0] is None, lines
assert lines[0][1].startswith("OOM kill: cc1plus (PID 5003) src/c.cpp"), lines
assert labels == ["OOM"], labels
lines, labels = ooms(sys.argv[2])
# no exit log: no kill is drawn as the build's
assert lines and all(d and t.startswith("OOM kill (scope unknown: no exit log given nor beside the CSV)") for d, t in lines), lines
assert labels and set(labels) == {"OOM?"}, labels
print("ok")
PY
}

@test "fixture: a stage where the build was OOM-killed sizes its -j by its largest compiler, not by a p95 of many small ones (a gdb build killed at -j2 was told safe -j 2); the host's peaks say (host) under a cgroup limit" {
  local d="$BATS_TEST_TMPDIR" i
  # The gdb stage of the fixture, with 40 small C compiles beside the two
  # heavy units: their p95 is 20 MiB, which fits 22 jobs in 450 MiB.
  cp "$F/gdb.procs.csv" "$d/gdb.procs.csv"
  for ((i = 0; i < 40; i++)); do
    printf '%d,14700,cc1,%d.100,%d.600,20480,,0.40,0,/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet gdb/small%d.c -o /tmp/s%d.s,0,0,0,,,,,,exact,in\n' \
      $((20000 + i)) $((i % 10)) $((i % 10)) "$i" "$i" >>"$d/gdb.procs.csv"
  done
  run -0 --separate-stderr rm-summarize --kmsg "$F/gdb.kmsg" "$F/gdb.csv" "$d/gdb.procs.csv" "$F/gdb.stats.csv"
  echo "$output" | sed -n '/^Memory per compile job/,/^$/p'
  [[ "$output" == *$'\n'"  gdb                     42      20.0     438.5          448        1  cgroup memory  (per job: the largest, OOM-killed here)"$'\n'* ]]
  [[ "$output" == *$'\n'"  max memory used (host)      3600 MiB"* ]]
  [[ "$output" == *$'\n'"  max load1 (host)            2.00 "* ]]
  run -0 --separate-stderr rm-summarize --json --kmsg "$F/gdb.kmsg" "$F/gdb.csv" "$d/gdb.procs.csv" "$F/gdb.stats.csv"
  run -0 jq -c '[.memory_per_job[0] | .stage, .sized_by, .suggest_mb_per_job, .safe_jobs, .bound_by]' <<<"$output"
  [ "$output" = '["gdb","max",448,1,"cgroup memory"]' ]
  run -0 --separate-stderr rm-summarize --markdown --kmsg "$F/gdb.kmsg" "$F/gdb.csv" "$d/gdb.procs.csv" "$F/gdb.stats.csv"
  [[ "$output" == *"| gdb | 42 | 20.0 | 448 | 1 | cgroup memory (per job: the largest, OOM-killed here) |"* ]]
  [[ "$output" == *"| max memory used (host) | 3600 MiB"* ]]
}
