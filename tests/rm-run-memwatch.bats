#!/usr/bin/env bats
# rm-run run: memwatch's command line, exactly (rm-run(1), "memwatch").
# Each command line of memwatch's README is run as it is written there,
# `cargo run -- run` read as `rm-run run`; cargo, rustc and mpirun are
# stand-ins (shell scripts on PATH that start memhog under the names the
# README's filters look for).  Every field memwatch's src/types.rs names
# is checked by name: jq for the JSON, python's csv module for the CSVs.

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  cd "$BATS_TEST_TMPDIR" || return 1
  mkdir -p fake/target/debug/deps
  cp "$MEMHOG" fake/dis_cq
  cp "$MEMHOG" fake/target/debug/deps/mytest-1a2b
  cp "$MEMHOG" fake/rustc-driver
  # rustc: a compiler of 24 MiB; cargo: rustc, then the test binary (8 MiB).
  # (by name from PATH: the test's directory has "test" in its path)
  printf '#!/bin/sh\nexec rustc-driver -m 24 -t 0.8\n' >fake/rustc
  printf '#!/bin/sh\nrustc\nmytest-1a2b -m 8 -t 0.8\n' >fake/cargo
  # mpirun -n N CMD...: N copies of CMD at once.
  printf '#!/bin/sh\nn=$2; shift 2\ni=0\nwhile [ "$i" -lt "$n" ]; do "$@" & i=$((i + 1)); done\nwait\n' >fake/mpirun
  chmod +x fake/rustc fake/cargo fake/mpirun
  PATH="$PWD/fake:$PWD/fake/target/debug/deps:$PATH"
}

# the memwatch JSON's fields, each by name, in a file
check_json() {
  run -0 jq -e '
    (.command | type == "array" and length > 0 and all(type == "string")) and
    (.start_time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$")) and
    (.end_time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")) and
    (.end_time >= .start_time) and
    (.duration_seconds > 0) and (.interval_ms > 0) and
    (.max_total_rss_kib > 0) and (.samples >= 1) and
    (.processes | type == "array" and length > 0) and
    ([.processes[].max_rss_kib] == ([.processes[].max_rss_kib] | sort | reverse)) and
    (.processes | all(has("pid") and has("ppid") and has("command") and has("max_rss_kib")
                      and has("first_seen") and has("last_seen") and has("peak_time"))) and
    (.processes | all(.max_rss_kib > 0 and (.first_seen | test("Z$")) and .last_seen >= .first_seen)) and
    (.exit_code | type == "number")
  ' "$1"
}

@test "rm-run run -- <command> [args...]: memwatch's text summary, CMD's status" {
  run -4 --separate-stderr rm-run run -- sh -c "'$MEMHOG' -m 16 -t 1; exit 4"
  [[ "$output" == *"MEMORY SUMMARY"* ]]
  [[ "$output" == *"PER-PROCESS PEAKS"* ]]
  [[ "$output" == *"PID      MEMORY      TIME      COMMAND"* ]]
  [[ "$output" == *"PROCESS GROUPS"* ]]
  [[ "$output" == *"(every 500 ms)"* ]]
  [[ "$output" == *"memhog -m 16 -t 1"* ]]
}

@test "rm-run run -i 200 -- cargo test --release: -i in milliseconds, every form" {
  run -0 --separate-stderr rm-run run -i 200 --json -- cargo test --release
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '.interval_ms == 200 and .command == ["cargo", "test", "--release"]' j.json
  # memwatch's getopt forms: -i200, --interval=200, --interval 200
  for form in -i200 --interval=200 '--interval 200'; do
    # shellcheck disable=SC2086  # the form is one or two words
    run -0 --separate-stderr rm-run run $form --json -- true
    [ "$(jq .interval_ms <<<"$output")" = 200 ]
  done
  run -0 --separate-stderr rm-run run --json -- true
  [ "$(jq .interval_ms <<<"$output")" = 500 ]
  run -2 --separate-stderr rm-run run -i 0 -- true
  [ "${stderr_lines[0]}" = "rm-run run: invalid --interval '0': milliseconds, a whole number from 1" ]
  [[ "${stderr_lines[1]}" == "usage: rm-run run [-i MS] [--json] [--quiet] [--silent] [--csv FILE]"* ]]
}

@test "rm-run run --json -- <command>: the JSON on stdout after CMD's own output" {
  run -3 --separate-stderr rm-run run -i 100 --json -- sh -c "echo OUT; '$MEMHOG' -m 16 -t 1; exit 3"
  [ "${lines[0]}" = OUT ]
  printf '%s\n' "${lines[@]:1}" >j.json
  check_json j.json
  run -0 jq -e '.exit_code == 3 and .max_total_rss_kib >= 16384 and
    .processes[0].max_rss_kib >= 16384 and (.processes[0].command | test("memhog -m 16"))
    and (.processes[0].peak_time | test("Z$")) and (has("timeline") | not) and (has("filter") | not)
    and (.command | length == 3)' j.json
  # memwatch's users read it so
  [ "$(jq .max_total_rss_kib j.json)" -ge 16384 ]
  # --silent hides CMD's output; --quiet the text, not the JSON
  run -0 --separate-stderr rm-run run --silent --quiet --json -- sh -c 'echo OUT; echo ERR >&2'
  [ "$stderr" = "" ]
  jq -e '.command[0] == "sh"' <<<"$output"
  run -0 --separate-stderr rm-run run --quiet -- sh -c 'echo OUT'
  [ "$output" = OUT ]
}

@test "rm-run run --csv processes.csv -- <command>: memwatch's columns, no 0-RSS rows" {
  run -0 --separate-stderr rm-run run -i 100 --csv processes.csv -- sh -c "'$MEMHOG' -m 16 -t 1 & '$MEMHOG' -m 4 -t 1; wait"
  [ "$(head -1 processes.csv)" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  run -0 "$PY" -c 'import csv
rows = list(csv.DictReader(open("processes.csv", newline="")))
assert rows, "no rows"
for r in rows:
    kib = int(r["max_rss_kib"])
    assert kib > 0, r
    assert abs(float(r["max_rss_mib"]) - kib / 1024) < 0.01, r
    assert r["first_seen"].endswith("Z") and r["last_seen"] >= r["first_seen"], r
    int(r["pid"]); int(r["ppid"])
kib = [int(r["max_rss_kib"]) for r in rows]
assert kib == sorted(kib, reverse=True), kib
assert "memhog -m 16" in rows[0]["command"] and kib[0] >= 16384, rows[0]
print(len(rows))'
  [ "$output" -ge 3 ]
}

@test "rm-run run --timeline timeline.csv -- <command>: one row per sample, and the JSON's timeline" {
  run -0 --separate-stderr rm-run run -i 100 --json --timeline timeline.csv -- "$MEMHOG" -m 16 -t 1
  echo "$output" >j.json
  check_json j.json
  [ "$(head -1 timeline.csv)" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
  run -0 "$PY" -c 'import csv, json
rows = list(csv.DictReader(open("timeline.csv", newline="")))
j = json.load(open("j.json"))
assert len(rows) == j["samples"] == len(j["timeline"]), (len(rows), j["samples"])
for r, t in zip(rows, j["timeline"]):
    assert r["timestamp"] == t["timestamp"] and r["timestamp"].endswith("Z")
    assert float(r["elapsed_seconds"]) == t["elapsed_seconds"]
    assert int(r["total_rss_kib"]) == t["total_rss_kib"]
    assert abs(float(r["total_rss_mib"]) - t["total_rss_kib"] / 1024) < 0.01
    assert int(r["process_count"]) == t["process_count"]
assert max(int(r["total_rss_kib"]) for r in rows) == j["max_total_rss_kib"]
print(len(rows))'
  [ "$output" -ge 5 ]
}

@test "rm-run run --csv procs.csv --timeline time.csv -- <command>: both; and the --opt=VALUE forms" {
  run -0 --separate-stderr rm-run run --csv procs.csv --timeline time.csv -- "$MEMHOG" -m 8 -t 0.6
  [ "$(csv_cols procs.csv)" = 7 ]
  [ "$(csv_cols time.csv)" = 5 ]
  run -0 --separate-stderr rm-run run --csv=eq.csv --timeline=eqt.csv --include=memhog --exclude=zz -- "$MEMHOG" -m 8 -t 0.6
  # A filter puts memwatch's comment lines above the header: read past them.
  grep -v '^#' eq.csv >eq-rows.csv
  grep -v '^#' eqt.csv >eqt-rows.csv
  [ "$(csv_get eq-rows.csv command)" = "$MEMHOG -m 8 -t 0.6" ]
  [ "$(csv_cols eqt-rows.csv)" = 5 ]
}

@test "rm-run run --exclude 'cargo|rustc' -- cargo test: hidden from the lists, kept in the totals" {
  run -0 --separate-stderr rm-run run -i 100 --json --exclude 'cargo|rustc' -- cargo test
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '(.processes | all(.command | test("cargo|rustc") | not)) and
    (.processes | any(.command | test("mytest-1a2b"))) and
    .filter == {"exclude_pattern": "cargo|rustc"} and
    .filtered_process_count >= 2 and .filtered_total_rss_kib >= 24576 and
    .max_total_rss_kib >= 24576' j.json
}

@test "rm-run run --include 'dis_cq' -- mpirun -n 8 cargo test" {
  # the README's line, as written: no dis_cq runs, so everything is filtered out
  run -0 --separate-stderr rm-run run --include 'dis_cq' -- mpirun -n 8 cargo test
  [[ "$output" == *"warning: every process was filtered out by --include 'dis_cq'"* ]]
  # and with the ranks named dis_cq
  run -0 --separate-stderr rm-run run -i 100 --json --include 'dis_cq' -- mpirun -n 8 dis_cq -m 4 -t 1
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '([.processes[] | select(.command | startswith("dis_cq -m 4"))] | length == 8) and
    (.processes | all(.command | test("dis_cq"))) and
    .filter.include_pattern == "dis_cq" and .filter.exclude_pattern == null and
    .filtered_process_count == 0' j.json
}

@test "rm-run run --include 'test' --exclude 'cargo' -- cargo test: include first, then exclude" {
  run -0 --separate-stderr rm-run run -i 100 --json --include 'test' --exclude 'cargo' -- cargo test
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '(.processes | length == 1) and (.processes[0].command | test("mytest-1a2b -m 8")) and
    .filter == {"exclude_pattern": "cargo", "include_pattern": "test"}' j.json
}

@test "rm-run run with a filter: memwatch's comment lines above each CSV's header, the JSON's filter with only the patterns given" {
  run -0 --separate-stderr rm-run run -i 100 --json --csv p.csv --timeline t.csv \
    --include 'test' --exclude 'cargo' -- cargo test
  echo "$output" >j.json
  n=$(jq .filtered_process_count j.json)
  k=$(jq .filtered_total_rss_kib j.json)
  [ "$n" -ge 1 ]
  [ "$(sed -n 1p p.csv)" = "# Filter: exclude='cargo' include='test' ($n processes filtered out, totaling $k KiB)" ]
  [ "$(sed -n 2p p.csv)" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  [ "$(sed -n 1p t.csv)" = "# Filter: exclude='cargo' include='test'" ]
  [ "$(sed -n 2p t.csv)" = "# Note: total_rss_kib and process_count both show all processes (unfiltered)" ]
  [ "$(sed -n 3p t.csv)" = "# Filtering only affects the per-process CSV export and final summary display" ]
  [ "$(sed -n 4p t.csv)" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
  # Read as a memwatch user reads them: comment lines skipped, then by header name.
  run -0 "$PY" -c 'import csv,sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
tl = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#")))
assert rows and all("test" in r["command"] and "cargo" not in r["command"] for r in rows), rows
assert tl and max(int(r["process_count"]) for r in tl) >= 1, tl
print(len(rows))' p.csv t.csv
  jq -e '.filter == {"exclude_pattern": "cargo", "include_pattern": "test"}' j.json
  # One pattern: the other key is left out, as memwatch's serde leaves it.
  run -0 --separate-stderr rm-run run -i 100 --json --csv p1.csv --exclude 'cargo' -- cargo test
  echo "$output" | jq -e '.filter == {"exclude_pattern": "cargo"}'
  [[ "$(sed -n 1p p1.csv)" == "# Filter: exclude='cargo' ("*" processes filtered out, totaling "*" KiB)" ]]
  # No filter: the header is the first line.
  run -0 --separate-stderr rm-run run -i 100 --csv p2.csv --timeline t2.csv --quiet -- cargo test
  [ "$(sed -n 1p p2.csv)" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  [ "$(sed -n 1p t2.csv)" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
}

@test "memwatch run -- mpirun -n 4 ...: every rank of the job" {
  run -0 --separate-stderr rm-run run -i 100 --json -- mpirun -n 4 dis_cq -m 8 -t 1
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '([.processes[] | select(.command | startswith("dis_cq -m 8"))] | length == 4) and
    .max_total_rss_kib >= 4 * 8192' j.json
}

@test "rm-run run: Rust regexes translated, the rest refused by name before CMD runs" {
  run -0 --separate-stderr rm-run run --json --include '(?i)MEMHOG\s+-m\s+\d+' -- "$MEMHOG" -m 8 -t 0.6
  jq -e '.processes | length == 1' <<<"$output"
  run -0 --separate-stderr rm-run run --json --include '\bmemhog\b' -- "$MEMHOG" -m 8 -t 0.6
  jq -e '.processes | length == 1' <<<"$output"
  run -2 --separate-stderr rm-run run --include 'mem.*?hog' -- touch ran
  [[ "$stderr" == "rm-run run: invalid --include 'mem.*?hog': a lazy quantifier"* ]]
  run -2 --separate-stderr rm-run run --exclude '\p{Greek}' -- touch ran
  [[ "$stderr" == *"a Unicode class (\\p{...})"* ]]
  run -2 --separate-stderr rm-run run --exclude '(?x) a' -- touch ran
  [[ "$stderr" == *"the flag group (?x)"* ]]
  run -2 --separate-stderr rm-run run --include 'a(?=b)' -- touch ran
  [[ "$stderr" == *"look-around"* ]]
  run -2 --separate-stderr rm-run run --include '(' -- touch ran
  [[ "$stderr" == "rm-run run: invalid --include '(': "* ]]
  [ ! -e ran ]
}

@test "rm-run run: usage errors exit 2 naming rm-run run; plain rm-run keeps its own options" {
  run -2 --separate-stderr rm-run run --bogus -- true
  [ "${stderr_lines[0]}" = "rm-run run: unknown option '--bogus'" ]
  run -2 --separate-stderr rm-run run --csv
  [ "${stderr_lines[0]}" = "rm-run run: option '--csv' needs a value" ]
  run -2 --separate-stderr rm-run run
  [ "${stderr_lines[0]}" = "rm-run run: no command to run" ]
  run -0 rm-run run --help
  [[ "${lines[0]}" == "usage: rm-run run [-i MS]"* ]]
  # plain rm-run: seconds, its summary on stderr
  run -0 --separate-stderr rm-run -i 0.1 --json -o - -- true
  jq -e '.job.exit == "0" or .job.exit == 0' <<<"$output"
}

@test "rm-run run: an output that cannot be written stops it before CMD runs; a quick exit says so" {
  run -1 --separate-stderr rm-run run --csv /nonexistent/x.csv -- touch ran
  [ "$stderr" = "rm-run run: cannot write --csv '/nonexistent/x.csv': No such file or directory; nothing was run" ]
  run -1 --separate-stderr rm-run run --timeline "$BATS_TEST_TMPDIR/no/t.csv" -- touch ran
  [[ "$stderr" == "rm-run run: cannot write --timeline '$BATS_TEST_TMPDIR/no/t.csv': "*"; nothing was run" ]]
  [ ! -e ran ]
  run -0 --separate-stderr rm-run run -- true
  [[ "$output" == *"try a shorter interval, -i 50"* ]]
  [[ "$output" == *"PER-PROCESS PEAKS"* ]]
}

@test "rm-run run: SIGINT is passed on to CMD, and its status is rm-run's" {
  # (CMD ends by itself after a minute: a SIGINT not passed on fails, not hangs)
  rm-run run --json -- sh -c 'trap "exit 7" INT; touch started; i=0; while [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done' >int.json &
  local pid=$! i=0
  while [ ! -e started ] && ((i < 600)); do
    sleep 0.1
    i=$((i + 1))
  done
  [ -e started ]
  kill -INT "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 7 ]
  jq -e '.exit_code == 7' int.json
}

@test "rm-summarize --memwatch renders files rm-tree --exec already wrote" {
  rm-tree --exec -i 100ms --log log.csv --job job.csv --timeline tl.csv -- "$MEMHOG" -m 16 -t 1
  run -0 --separate-stderr rm-summarize --memwatch --json --memwatch-interval 100 \
    --memwatch-arg memhog --memwatch-arg -m --memwatch-timeline mt.csv --memwatch-csv mp.csv \
    --exclude '^zz' log.csv job.csv tl.csv
  echo "$output" >j.json
  check_json j.json
  run -0 jq -e '.command == ["memhog", "-m"] and .interval_ms == 100 and .processes[0].max_rss_kib >= 16384
    and (.timeline | length) == .samples and .filter.exclude_pattern == "^zz"' j.json
  [ "$(grep -v '^#' mp.csv | head -1)" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  [ "$(grep -v '^#' mt.csv | head -1)" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
  run -2 --separate-stderr rm-summarize --memwatch-csv x.csv log.csv
  [[ "${stderr_lines[0]}" == "rm-summarize: --memwatch-csv, --memwatch-timeline, --memwatch-interval and --memwatch-arg need --memwatch" ]]
  run -2 --separate-stderr rm-summarize --memwatch --svg x.svg log.csv
  [[ "${stderr_lines[0]}" == "rm-summarize: --memwatch takes only"* ]]
}
