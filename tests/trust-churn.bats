#!/usr/bin/env bats
# Churn: thousands of processes a second come and go while the samplers
# read /proc.  Whatever vanishes mid-read is skipped silently; nothing
# crashes, no row is malformed, nothing is said on stderr.

setup() {
  load test_helper/common
  load test_helper/trust
}

@test "churn: 2,000 processes/s for 10 s under rm-sample -i 0.01, rm-tree --match . -i 0.01 and rm-tree --exec: no crash, no bad row, no noise" {
  need rm-tree
  under_valgrind && skip "valgrind runs the samplers too slowly to meet the storm"
  local d="${BATS_TEST_TMPDIR}" job started f
  # The fork-heavy job, followed from its first instant.
  rm-tree --exec -i 0.01 --log "${d}/exec.csv" --timeline "${d}/exec-tl.csv" \
    --job "${d}/job.csv" -- "${RM_BUILD}/tests/churn" 2000 10 >"${d}/started" 2>"${d}/exec.err" &
  job=$!
  # The system-wide samplers, for as long as the job runs.
  rm-sample -i 0.01 --watch-pid "${job}" >"${d}/sample.csv" 2>"${d}/sample.err" &
  rm-tree --match . -i 0.01 --watch-pid "${job}" --timeline "${d}/match-tl.csv" \
    --stats "${d}/match-stats.csv" >"${d}/match.csv" 2>"${d}/match.err" &
  local rc=0
  wait "${job}" || rc=$?
  ((rc == 0)) || { echo "rm-tree --exec exited ${rc}"; false; }
  wait %2
  wait %3
  started=$(cat "${d}/started")
  echo "# churn started ${started} processes"
  ((started >= 10000))
  for f in exec sample match; do
    [[ ! -s "${d}/${f}.err" ]] || { echo "${f}: $(head -c 500 "${d}/${f}.err")"; false; }
  done
  whole_rows "${d}/sample.csv" 19
  whole_rows "${d}/match.csv" "$(xl_ncols)"
  whole_rows "${d}/match-tl.csv" 6
  whole_rows "${d}/exec.csv" "$(xl_ncols)"
  whole_rows "${d}/exec-tl.csv" 6
  [[ "$(whole_rows "${d}/job.csv" 21)" == "2 rows" ]]
  # The storm was seen: compilers counted, churned processes logged.
  run "${PY}" - "${d}" <<'PYEOF'
import csv, sys
d = sys.argv[1]
def rows(f):
    return list(csv.DictReader(open(f"{d}/{f}", newline="")))
sample, match, ex, job = rows("sample.csv"), rows("match.csv"), rows("exec.csv"), rows("job.csv")
print(f"sample: {len(sample)} rows, max compilers {max(int(r['compilers']) for r in sample)}")
print(f"match: {sum(r['comm'] == 'cc1' for r in match)} cc1 of {len(match)} rows; stats {rows('match-stats.csv')}")
print(f"exec: {sum(r['comm'] == 'cc1' for r in ex)} cc1 of {len(ex)} rows; job procs {job[0]['procs']}, exit {job[0]['exit']}")
assert len(sample) >= 100, "rm-sample fell behind"
assert max(int(r["compilers"]) for r in sample) >= 1, "rm-sample never saw a churned cc1"
assert any(r["comm"] == "cc1" for r in match), "rm-tree --match never logged a churned cc1"
assert any(r["comm"] == "cc1" for r in ex), "rm-tree --exec never logged a churned cc1"
assert job[0]["exit"] == "0"
for name, rs in (("match", match), ("exec", ex)):
    for r in rs:
        assert r["pid"].isdigit() and r["ppid"].isdigit(), (name, r)
PYEOF
  printf '# %s\n' "${lines[@]}"
  ((status == 0))
}
