#!/usr/bin/env bats
# rm-summarize --compare OLD NEW and --fail-on: real runs of one generated
# project under rm-monitor, made in setup_file: "old", "same" (the same
# project again, from another checkout directory) and "heavy" (one unit,
# src/b.cpp, made heavier).  The compilers are memhog copies named
# cc1plus, so each unit's memory is what the Makefile says, exactly.

# build_run ID DIR B_MIB: build the project checked out in DIR (its units
# use their absolute paths, as CMake's do) under rm-monitor, into $RUNS.
build_run() {
  local id=$1 dir=$2 b=$3 build
  mkdir -p "$dir/src" "$dir/bin"
  cp "$RM_BUILD/tests/memhog" "$dir/bin/cc1plus"
  printf '%s\n' 'all: a b c' \
    "a:; \$(CURDIR)/bin/cc1plus -m 40 -t 0.6 -- -quiet \$(CURDIR)/src/a.cpp -o a.s" \
    "b:; \$(CURDIR)/bin/cc1plus -m $b -t 0.6 -- -quiet \$(CURDIR)/src/b.cpp -o b.s" \
    "c:; \$(CURDIR)/bin/cc1plus -m 20 -t 0.6 -- -quiet \$(CURDIR)/lib/c.cpp -o c.s" >"$dir/Makefile"
  echo "make -j2" >"$dir/build.log"
  # The build waits for the monitor's first row, then runs.
  bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; make -s -C "$2" -j2 >/dev/null' \
    _ "$dir/go" "$dir" &
  build=$!
  rm-monitor --out-dir "$RUNS" --run-id "$id" --interval 0.2 --stage-log-dir "$dir" \
    --watch-pid "$build" </dev/null >/dev/null 2>"$RUNS/$id.err" &
  local mon=$! n=0
  until [[ -f "$RUNS/resources-$id.csv" ]] && (($(wc -l <"$RUNS/resources-$id.csv") >= 2)); do
    sleep 0.05
    ((++n < 1200)) || return 1
  done
  touch "$dir/go"
  wait "$build"
  wait "$mon"
  [[ -s "$RUNS/resources-$id.summary.json" ]]
}

setup_file() {
  load test_helper/common
  RUNS="$BATS_FILE_TMPDIR/runs"
  export RUNS
  mkdir -p "$RUNS"
  build_run old "$BATS_FILE_TMPDIR/ci/job1/proj" 30
  build_run same "$BATS_FILE_TMPDIR/home/dev/checkout" 30
  build_run heavy "$BATS_FILE_TMPDIR/ci/job2/proj" 90
}

setup() {
  load test_helper/common
}

@test "--compare names the unit made heavier first, matched across checkouts, with its growth" {
  run -0 --separate-stderr rm-summarize --compare "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  [[ "$output" == "Compared: "*"resources-old.csv -> "*"resources-heavy.csv"* ]]
  # The first unit line is src/b.cpp, about 30 -> 90 MiB: +60 MiB, +200 %.
  local first
  first=$(printf '%s\n' "$output" | sed -n '/^Compile units/{n;n;p;q}')
  [[ "$first" == *" src/b.cpp" ]]
  [[ "$first" =~ \+(5[0-9]|6[0-9])\.[0-9]\ \(\+(1[5-9][0-9]|2[0-9][0-9])\.[0-9]\ %\) ]]
  # The other two matched too (their checkout differs), none added or removed.
  [[ "$output" == *" src/a.cpp"* && "$output" == *" lib/c.cpp"* ]]
  ! printf '%s\n' "$output" | grep -E '^ .* (added|removed|ambiguous) '

}

@test "--compare --fail-on grow=10% exits 3 and says which unit grew; the same build twice exits 0" {
  run -3 --separate-stderr rm-summarize --compare --fail-on grow=10% \
    "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  [[ "$stderr" == *"fail-on grow=10%: unit src/b.cpp grew "* ]]
  # At the top of the summary too.
  [[ "${lines[0]}" == "fail-on grow=10%: "* ]]
  run -0 --separate-stderr rm-summarize --compare --fail-on grow=10% \
    "$RUNS/resources-old.csv" "$RUNS/resources-same.csv"
  [ -z "$stderr" ]
  [[ "$output" != *fail-on* ]]
}

@test "--compare --json and --markdown carry the same units and changes" {
  run -0 rm-summarize --compare --json "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  run -0 jq -r '.units[0] | "\(.unit) \(.status) \(.peak_kib.change_pct > 150)"' <<<"$output"
  [ "$output" = "src/b.cpp matched true" ]
  run -0 rm-summarize --compare --json "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  run -0 jq -r '[.units[].unit] | sort | join(" ")' <<<"$output"
  [ "$output" = "lib/c.cpp src/a.cpp src/b.cpp" ]
  run -3 --separate-stderr rm-summarize --compare --json --fail-on grow=10% "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  run -0 jq -r '.fail_on[] | select(contains(" unit "))' <<<"$output"
  [[ "$output" == "fail-on grow=10%: unit src/b.cpp grew "* ]]
  run -0 rm-summarize --compare --markdown "$RUNS/resources-old.csv" "$RUNS/resources-heavy.csv"
  [[ "$output" == "### Build resources compared"* ]]
  printf '%s\n' "$output" | grep -E '^\| src/b\.cpp \| 3[0-9]\.[0-9] \| 9[0-9]\.[0-9] \| \+'
}

@test "--fail-on on one run: unit=SIZE and peak=SIZE name the unit, oom holds not, exit 3 or 0" {
  # Without its exit log a run cannot be judged by unit: said, not passed quietly.
  run -0 --separate-stderr rm-summarize --fail-on unit=64M "$RUNS/resources-heavy.csv"
  [[ "$stderr" == *"fail-on unit=64M: not judged: no rm-tree exit log among the inputs"* ]]
  run -3 --separate-stderr rm-summarize --companions --fail-on unit=64M,oom "$RUNS/resources-heavy.csv"
  # One run's unit is named as its exit log has it.
  [[ "$stderr" == *"fail-on unit=64M: unit $BATS_FILE_TMPDIR/ci/job2/proj/src/b.cpp peaked at 9"?.?" MiB (cc1plus"* ]]
  [[ "$stderr" != *"fail-on oom"* ]]
  [[ "${lines[0]}" == "fail-on unit=64M: unit $BATS_FILE_TMPDIR/ci/job2/proj/src/b.cpp"* ]]
  run -0 --separate-stderr rm-summarize --companions --fail-on unit=64M,oom,peak=64M "$RUNS/resources-old.csv"
  [ -z "$stderr" ]
  run -3 --separate-stderr rm-summarize --companions --fail-on peak=64M --markdown "$RUNS/resources-heavy.csv"
  [[ "$output" == *"**Budget gate (--fail-on) failed:**"* ]]
  [[ "$output" == *"- fail-on peak=64M: the largest process peaked at "* ]]
}

@test "--compare and --fail-on refuse what they cannot judge: exit 2" {
  run -2 --separate-stderr rm-summarize --fail-on grow=10% "$RUNS/resources-old.csv"
  [[ "$stderr" == *"need --compare"* ]]
  run -2 --separate-stderr rm-summarize --fail-on bogus "$RUNS/resources-old.csv"
  [[ "$stderr" == *"unknown condition 'bogus'"* ]]
  run -2 --separate-stderr rm-summarize --fail-on unit=lots "$RUNS/resources-old.csv"
  run -2 --separate-stderr rm-summarize --fail-on oom=1 "$RUNS/resources-old.csv"
  run -2 --separate-stderr rm-summarize --compare "$RUNS/resources-old.csv"
  [[ "$stderr" == *"two runs: OLD NEW"* ]]
  run -2 --separate-stderr rm-summarize --compare "$RUNS/resources-old.csv" "$RUNS/resources-old.csv"
  [[ "$stderr" == *"two different runs"* ]]
}

# ci_steps NAME...: the `run: |` blocks of the named steps of the GitHub
# Actions job in docs/recipes.md, as one bash script, in the job's order.
ci_steps() {
  "$PY" - "$RM_TOP/docs/recipes.md" "$@" <<'PYEOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
yaml = text.split("## CI: monitor the build", 1)[1].split("```yaml\n", 1)[1].split("\n```", 1)[0]
want, steps, name, body = sys.argv[2:], {}, None, None
for ln in yaml.split("\n") + ["      - end"]:
    m = re.match(r"      - (name: (.*)|uses: .*|end)$", ln)
    if m:
        if name is not None and body is not None:
            steps[name] = "\n".join(body)
        name, body = m.group(2), None
    elif re.match(r"        run: \|$", ln):
        body = []
    elif body is not None and ln.startswith("          "):
        body.append(ln[10:])
    elif body is not None and ln.strip():
        body = None if not ln.startswith("        ") else body
for w in want:
    if w not in steps:
        sys.exit("no step %r with a run block in the CI recipe" % w)
    print("set -e\n" + steps[w])
PYEOF
}

@test "the CI recipe's job runs as written: the first run passes, the next with a heavier unit fails with exit 3 and says why" {
  local w="$BATS_TEST_TMPDIR/job" steps="build under the monitor" rc
  mkdir -p "$w/src" "$w/lib" "$w/bin" "$w/prev"
  cp "$RM_BUILD/tests/memhog" "$w/bin/cc1plus"
  cimake() {
    printf '%s\n' 'all: a b' \
      "a:; \$(CURDIR)/bin/cc1plus -m 30 -t 0.5 -- -quiet \$(CURDIR)/lib/a.cpp -o a.s" \
      "b:; \$(CURDIR)/bin/cc1plus -m $1 -t 0.5 -- -quiet \$(CURDIR)/src/b.cpp -o b.s" >"$w/Makefile"
  }
  ci_steps "$steps" summary "compare with the previous run" >"$BATS_TEST_TMPDIR/steps.sh"
  grep -q 'rm-monitor --out-dir rm-out' "$BATS_TEST_TMPDIR/steps.sh"
  cimake 30
  (cd "$w" && GITHUB_RUN_NUMBER=1 GITHUB_STEP_SUMMARY="$w/summary1.md" bash "$BATS_TEST_TMPDIR/steps.sh") \
    >"$BATS_TEST_TMPDIR/run1.out" 2>&1
  grep -q '^### Build resources: ' "$w/summary1.md"
  grep -q '^no previous run to compare with' "$w/summary1.md"
  # The artifact: this run's files, downloaded by the next run into prev/.
  cp "$w"/rm-out/resources-build-1.* "$w/prev/"
  rm -rf "$w/rm-out"
  cimake 90
  rc=0
  (cd "$w" && GITHUB_RUN_NUMBER=2 GITHUB_STEP_SUMMARY="$w/summary2.md" bash "$BATS_TEST_TMPDIR/steps.sh") \
    >"$BATS_TEST_TMPDIR/run2.out" 2>&1 || rc=$?
  [ "$rc" = 3 ]
  grep -q '^### Build resources compared' "$w/summary2.md"
  grep -q '^- fail-on grow=10%: unit src/b.cpp grew ' "$w/summary2.md"
  grep -q 'rm-summarize: fail-on grow=10%: unit src/b.cpp grew ' "$BATS_TEST_TMPDIR/run2.out"
}

@test "rm-monitor summarize passes --fail-on on: exit 3 with the line on stderr" {
  run -3 --separate-stderr rm-monitor summarize --fail-on unit=64M "$RUNS/resources-heavy.csv"
  [[ "$stderr" == *"fail-on unit=64M: unit "*"/src/b.cpp peaked at "* ]]
  run -0 --separate-stderr rm-monitor summarize --fail-on unit=64M "$RUNS/resources-old.csv"
}

@test "every monitored run leaves resources-ID.run.csv; rm-monitor history lists them oldest first" {
  local f
  for f in old same heavy; do
    run -0 csv_get "$RUNS/resources-$f.run.csv" run_id
    [ "$output" = "$f" ]
  done
  run -0 csv_get "$RUNS/resources-heavy.run.csv" heaviest_unit
  [[ "$output" == */ci/job2/proj/src/b.cpp ]]
  run -0 csv_get "$RUNS/resources-heavy.run.csv" oom_kills
  [ "$output" = 0 ]
  run -0 rm-monitor history --out-dir "$RUNS"
  [[ "${lines[0]}" == "Runs in $RUNS (3, oldest first;"* ]]
  [[ "${lines[2]}" == *" old "* && "${lines[3]}" == *" same "* && "${lines[4]}" == *" heavy "* ]]
  run -0 rm-monitor history --out-dir "$RUNS" --json
  run -0 jq -r '[.runs[].run_id] | join(" ")' <<<"$output"
  [ "$output" = "old same heavy" ]
}

@test "history: a series (ID-N, date-made ids) gets the change of its peak; hostile files in the dir are skipped, never hang" {
  local h="$BATS_TEST_TMPDIR/hist"
  mkdir -p "$h"
  cp "$RUNS/resources-old.run.csv" "$h/resources-build-41.run.csv"
  cp "$RUNS/resources-heavy.run.csv" "$h/resources-build-42.run.csv"
  sed -i '2s/^heavy,/build-42,/; 2s/^old,/build-41,/' "$h"/resources-build-4?.run.csv
  sed -i '2s/^old,/build-41,/' "$h/resources-build-41.run.csv"
  ln -s /etc/shadow "$h/resources-evil.run.csv"
  mkfifo "$h/resources-fifo.run.csv"
  printf 'run_id,start_epoch,heaviest_unit\n"x\033[31my",1,"a\033]0;b"\n' >"$h/resources-esc.run.csv"
  run -0 --separate-stderr timeout 20 rm-summarize --history "$h" --csv -
  run -0 csv_get <(printf '%s\n' "$output") series 3
  [ "$output" = build ]
  run -0 timeout 20 rm-summarize --history "$h" --csv -
  run -0 "$PY" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ids = [r["run_id"] for r in rows]
assert ids == ["xy", "build-41", "build-42"], ids
assert rows[1]["peak_change_mib"] == "", rows[1]
assert float(rows[2]["peak_change_mib"]) != 0, rows[2]
assert "\x1b" not in open(sys.argv[1]).read()' <(printf '%s\n' "$output")
  run -0 timeout 20 rm-summarize --history "$h"
  [[ "$output" != *$'\033'* && "$output" != *root:* ]]
  run -2 --separate-stderr rm-summarize --history "$h" "$RUNS/resources-old.csv"
}

@test "--compare of two exit logs: a unit added, one removed, one ambiguous, in text and JSON" {
  local a="$BATS_TEST_TMPDIR/a.procs.csv" b="$BATS_TEST_TMPDIR/b.procs.csv"
  {
    echo 'pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd'
    echo '10,1,cc1plus,0,1,10240,0.5,1,0,cc1plus -quiet /w1/p/src/a.cpp -o a.s'
    echo '11,1,cc1plus,0,1,20480,0.5,1,0,cc1plus -quiet /w1/p/src/gone.cpp -o g.s'
    echo '12,1,cc1plus,0,1,30720,0.5,1,0,cc1plus -quiet /w1/p/util/x.cpp -o x.s'
  } >"$a"
  {
    echo 'pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd'
    echo '20,1,cc1plus,0,1,11264,0.5,1,0,cc1plus -quiet /w2/q/src/a.cpp -o a.s'
    echo '21,1,cc1plus,0,1,40960,0.5,1,0,cc1plus -quiet /w2/q/src/new.cpp -o n.s'
    echo '22,1,cc1plus,0,1,30720,0.5,1,0,cc1plus -quiet /w2/q/one/util/x.cpp -o x.s'
    echo '23,1,cc1plus,0,1,30720,0.5,1,0,cc1plus -quiet /w2/q/two/util/x.cpp -o x.s'
  } >"$b"
  run -0 rm-summarize --compare --json "$a" "$b"
  run -0 jq -r '.units[] | "\(.unit) \(.status)"' <<<"$output"
  [ "${lines[0]}" = "src/a.cpp matched" ]
  [[ "$output" == *"src/new.cpp added"* && "$output" == *"src/gone.cpp removed"* ]]
  [[ "$output" == *"util/x.cpp ambiguous"* ]]
  run -0 rm-summarize --compare "$a" "$b"
  [[ "$output" == *"ambiguous"*"util/x.cpp (2 units of the new run end so)"* ]]
}

@test "--fail-on used=SIZE of a build in containers: the largest peak of its tied containers' cgroups; untied, not judged" {
  local c="$FIXTURES/containers"
  run -3 --separate-stderr rm-summarize --companions --kmsg "$c/r2.kmsg" --fail-on used=400M "$c/r2-tied.csv"
  [[ "$stderr" == *"fail-on used=400M: the build's peak memory was 488.3 MiB (the cgroup's peak)"* ]]
  run -0 --separate-stderr rm-summarize --companions --kmsg "$c/r2.kmsg" --fail-on used=600M "$c/r2-tied.csv"
  run -0 --separate-stderr rm-summarize --companions --kmsg "$c/r2.kmsg" --fail-on used=400M "$c/r2-untied.csv"
  [[ "$stderr" == *"fail-on used=400M: not judged: the build's peak memory is not in the inputs"* ]]
}
