#!/usr/bin/env bats
# rm-summarize --trace: Chrome Trace Event JSON for Perfetto and
# chrome://tracing, from the monitor's files or rm-run's timeline and exit
# log, checked for what the format requires and for packed lanes.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize"
  T="$FIXTURES/trace"
}

# check_trace FILE: the JSON parses; every event has name, ph, ts, pid,
# tid (dur for X, s for i); every tid used is named; no two events of a
# lane overlap.  Prints a one-line digest for the test to compare.
check_trace() {
  "$PY" - "$1" <<'PYEOF'
import json, sys, collections
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
named = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = collections.defaultdict(list)
for e in ev:
    for k in ("name", "ph", "ts", "pid", "tid"):
        assert k in e, (k, e)
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    if e["ph"] == "X":
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        assert e["tid"] in named, ("unnamed lane", e)
        lanes[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    if e["ph"] == "i":
        assert e["s"] in ("g", "p", "t"), e
        assert e["tid"] in named, ("unnamed lane", e)
for tid, spans in lanes.items():
    spans.sort()
    for a, b in zip(spans, spans[1:]):
        assert a[1] <= b[0], ("overlap on lane", tid, a, b)
counts = collections.Counter(e["ph"] for e in ev)
print(" ".join(f"{k}={counts[k]}" for k in sorted(counts)), "lanes=%d" % len(lanes))
PYEOF
}

@test "--trace: the monitor's files make a valid trace: processes, lanes, stages, counters" {
  run -0 rm-summarize --kmsg /dev/null --trace "$BATS_TEST_TMPDIR/t.json" "$F/oom-kills.csv" "$F/exitlog.csv"
  run -0 check_trace "$BATS_TEST_TMPDIR/t.json"
  echo "$output"
  # 7 processes, 2 stages; make spans the run, so the rest need 2 more lanes.
  [[ "$output" == *"X=9"* && "$output" == *"i=2"* && "$output" == *"lanes=4"* ]]
  run -0 jq -c '[.traceEvents[] | select(.cat == "process" and .args.pid == 101)
                 | [.name, .ts, .dur, .args.peak_mib, .args.cpu_s, .args.exit, .args.comm]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[["src/big.cpp",1000000,4000000,512,3.9,"0","cc1plus"]]' ]
  run -0 jq -c '[.traceEvents[] | select(.cat == "stage") | [.name, .ts, .dur]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[["compile",0,10000000],["link",10000000,6000000]]' ]
  run -0 jq -c '[.traceEvents[] | select(.ph == "C") | .name] | unique' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '["CPU busy %","disk available GiB","memory MiB","swap used MiB"]' ]
  run -0 jq -c '[.traceEvents[] | select(.ph == "C" and .name == "memory MiB")][1].args' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '{"used":3100,"available":4900}' ]
  # A command with quotes and commas survives as one JSON string.
  run -0 jq -r '.traceEvents[] | select(.args.pid == 105) | .args.command' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = 'weird "name", with comma' ]
}

@test "--trace: OOM kills are instant events that name the victim" {
  local csv="$BATS_TEST_TMPDIR/now.csv" kmsg="$BATS_TEST_TMPDIR/kmsg"
  "$PY" - "$csv" "$kmsg" <<'PYEOF'
import sys, time
now, mono = time.time(), time.clock_gettime(time.CLOCK_MONOTONIC)
t0 = now - 100
with open(sys.argv[1], "w") as f:
    f.write("epoch,elapsed_s,mem_used_mb,mem_avail_mb,stage,context,oom_kills\n")
    for i, k in enumerate([0, 0, 1, 1, 1, 1]):
        f.write(f"{t0 + 10*i:.3f},{10*i}.000,1000,3000,s{i//3},line {i},{k}\n")
def us(epoch): return int((epoch - now + mono) * 1e6)
with open(sys.argv[2], "w") as f:
    f.write(f"3,2,{us(t0+15)},-;Memory cgroup out of memory: Killed process 4242 (cc1plus) total-vm:1kB\n")
PYEOF
  run -0 rm-summarize --kmsg "$kmsg" --trace "$BATS_TEST_TMPDIR/t.json" "$csv"
  run -0 check_trace "$BATS_TEST_TMPDIR/t.json"
  run -0 jq -c '[.traceEvents[] | select(.ph == "i") | [.name, .ts, .args.victims]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[["OOM kill: cc1plus (PID 4242)",20000000,[{"name":"cc1plus","pid":4242}]]]' ]
}

@test "--trace: read and write KiB come from the exit log's columns by name, null when empty" {
  run -0 rm-summarize --trace "$BATS_TEST_TMPDIR/t.json" "$T/exitlog-io.csv"
  run -0 check_trace "$BATS_TEST_TMPDIR/t.json"
  # make, two cc1plus at once, a third inside them: 4 lanes; ld and sh reuse.
  [[ "$output" == *"X=6"* && "$output" == *"lanes=4"* ]]
  run -0 jq -c '[.traceEvents[] | select(.cat == "process") | [.args.pid, .args.read_kib, .args.write_kib, .args.exit]]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[[200,12,0,"0"],[201,2048,512,"0"],[202,1024,256,"0"],[203,null,null,"1"],[205,null,null,"0"],[204,8192,4096,"0"]]' ]
  # The exit log of today's columns: read and write are null.
  run -0 rm-summarize --trace "$BATS_TEST_TMPDIR/t.json" "$F/exitlog.csv"
  run -0 jq -c '[.traceEvents[] | select(.cat == "process") | .args.read_kib] | unique' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[null]' ]
}

@test "--trace: an rm-run timeline and exit log give job counters on the job's clock" {
  run -0 rm-summarize --trace "$BATS_TEST_TMPDIR/t.json" "$F/timeline.csv" "$F/job.csv" "$F/exitlog.csv"
  run -0 check_trace "$BATS_TEST_TMPDIR/t.json"
  run -0 jq -c '[.traceEvents[] | select(.ph == "C") | .name] | unique' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '["job CPU %","job RSS MiB","job processes"]' ]
  run -0 jq -c '[.traceEvents[] | select(.ph == "C" and .name == "job RSS MiB")][1] | [.ts, .args.rss]' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = '[4000000,616]' ]
  run -0 jq '.otherData.origin_epoch' "$BATS_TEST_TMPDIR/t.json"
  [ "$output" = 1700002000 ]
}

@test "--trace: a real rm-tree --exec run opens as a valid trace with one event per process" {
  local d="$BATS_TEST_TMPDIR"
  run -0 rm-tree --exec --log "$d/exit.csv" --timeline "$d/tl.csv" -i 0.05 -- \
    sh -c 'sleep 0.3 & sleep 0.3 & sleep 0.2; wait'
  run -0 rm-summarize --trace "$d/t.json" "$d/tl.csv" "$d/exit.csv"
  run -0 check_trace "$d/t.json"
  echo "$output"
  run -0 jq '[.traceEvents[] | select(.cat == "process")] | length' "$d/t.json"
  [ "$output" -eq "$(($(wc -l <"$d/exit.csv") - 1))" ]
}

@test "--trace: an unwritable trace file is an error (exit 1), the report is not printed" {
  run -1 --separate-stderr rm-summarize --trace /nonexistent/dir/t.json "$F/exitlog.csv"
  # shellcheck disable=SC2154  # bats' run --separate-stderr sets stderr
  [[ "$stderr" == "rm-summarize: cannot write '/nonexistent/dir/t.json': "* ]]
  [[ -z "$output" ]]
}

@test "--trace: a symlink or a FIFO at the name is refused, its target untouched, nothing waits; a file there is replaced whole" {
  local d="$BATS_TEST_TMPDIR/tr"
  mkdir -p "$d"
  printf 'precious\n' >"$d/victim"
  ln -s "$d/victim" "$d/t.json"
  run -1 --separate-stderr timeout -s KILL 60 rm-summarize --trace "$d/t.json" "$F/exitlog.csv"
  [ "$stderr" = "rm-summarize: cannot write '$d/t.json': a symbolic link, not followed" ]
  rm -f "$d/t.json" && mkfifo "$d/t.json"
  run -1 --separate-stderr timeout -s KILL 60 rm-summarize --trace "$d/t.json" "$F/exitlog.csv"
  [ "$stderr" = "rm-summarize: cannot write '$d/t.json': a FIFO with no reader" ]
  [ "$(cat "$d/victim")" = precious ]
  [ -p "$d/t.json" ]
  # A hard link to another file at the name is replaced, the other file untouched.
  rm -f "$d/t.json" && ln "$d/victim" "$d/t.json"
  run -0 rm-summarize --trace "$d/t.json" "$F/exitlog.csv"
  [ "$(cat "$d/victim")" = precious ]
  check_trace "$d/t.json" >/dev/null
}
