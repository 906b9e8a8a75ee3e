#!/usr/bin/env bats
# rm-summarize's run facts, what rm-monitor hands over instead of working
# them out in bash: the samplers' --status files, gap notes, companion
# files, the message kept in -o FILE, and --check.
# shellcheck disable=SC2154  # bats' run --separate-stderr sets stderr and stderr_lines

setup() {
  load test_helper/common
  F="$FIXTURES/summarize"
  T="$BATS_TEST_TMPDIR"
}

# status FILE ROWS_LOST FIRST_LOST GAPS LONGEST STAGE_FALLBACK FINAL: an
# rm-sample --status file.
status() {
  printf 'rows_written=7\nrows_lost=%s\nfirst_lost=%s\nlost_error=%s\ngaps=%s\nlongest_gap_s=%s\nstage_fallback=%s\nfinal=%s\n' \
    "$2" "$3" "$([[ $2 != 0 ]] && echo 'No space left on device')" "$4" "$5" "$6" "$7" >"$1"
}

@test "--sampler-status: the samplers' lost rows, first lost time and stage fallbacks, summed" {
  status "$T/s1" 0 '' 0 '' 0 0
  status "$T/s2" 30 2026-12-02T13:00:00.250Z 0 '' 4 0
  status "$T/s3" 22 2026-12-02T13:05:00.000Z 0 '' 1 1
  run -0 rm-summarize --json --sampler-status "$T/s1" --sampler-status "$T/s2" \
    --sampler-status "$T/s3" "$F/seed-build.csv"
  [ "$(jq -c '[.rows_lost, .rows_lost_from, .stage_fallback_rows]' <<<"$output")" = '[52,"2026-12-02T13:00:00.250Z",5]' ]
  run -0 rm-summarize --sampler-status "$T/s2" --sampler-status "$T/s3" "$F/seed-build.csv"
  [[ "$output" == *"52 rows lost from 2026-12-02T13:00:00.250Z"* ]]
  # Counts given as options are added to; a time given wins.
  run -0 rm-summarize --json --rows-lost 8 --stage-fallback 0 --rows-lost-from 2026-12-01T00:00:00Z \
    --sampler-status "$T/s2" "$F/seed-build.csv"
  [ "$(jq -c '[.rows_lost, .rows_lost_from, .stage_fallback_rows]' <<<"$output")" = '[38,"2026-12-01T00:00:00Z",4]' ]
  # Nothing lost is 0, known; no fallback says nothing of a stage file: null.
  run -0 rm-summarize --json --sampler-status "$T/s1" "$F/seed-build.csv"
  [ "$(jq -c '[.rows_lost, .rows_lost_from, .stage_fallback_rows]' <<<"$output")" = '[0,null,null]' ]
  run -0 rm-summarize --json --stage-fallback 0 --sampler-status "$T/s1" "$F/seed-build.csv"
  [ "$(jq -c '.stage_fallback_rows' <<<"$output")" = 0 ]
}

@test "--sampler-status and --gap-note: the text report ends with 'Gaps in sampling'; JSON and Markdown do not" {
  status "$T/s1" 0 '' 2 1.500 0 0
  status "$T/s2" 0 '' 1 0.910 0 1
  run -0 rm-summarize --sampler-status "$T/s1" --sampler-status "$T/s2" \
    --gap-note 'sampler died at +0:00:03 (signal KILL), restarted at +0:00:04' \
    --gap-note 'sampler died at +0:00:09 (exit status 1); not restarted' "$F/seed-build.csv"
  [ "${lines[-4]}" = "Gaps in sampling" ]
  [ "${lines[-3]}" = "  sampler died at +0:00:03 (signal KILL), restarted at +0:00:04" ]
  [ "${lines[-2]}" = "  sampler died at +0:00:09 (exit status 1); not restarted" ]
  [ "${lines[-1]}" = "  3 intervals over 3 ticks (the sampler stopped or starved), longest 0.910 s" ]
  # A note alone, and gaps alone.
  run -0 rm-summarize --gap-note 'one note' "$F/seed-build.csv"
  [ "${lines[-2]}" = "Gaps in sampling" ]
  [ "${lines[-1]}" = "  one note" ]
  run -0 rm-summarize --sampler-status "$T/s1" "$F/seed-build.csv"
  [ "${lines[-1]}" = "  2 intervals over 3 ticks (the sampler stopped or starved), longest 1.500 s" ]
  # No gap, no note: no section.
  status "$T/s0" 0 '' 0 '' 0 1
  run -0 rm-summarize --sampler-status "$T/s0" "$F/seed-build.csv"
  [[ "$output" != *"Gaps in sampling"* ]]
  run -0 rm-summarize --json --sampler-status "$T/s1" --gap-note x "$F/seed-build.csv"
  [[ "$output" != *"Gaps in sampling"* ]]
  jq -e . <<<"$output" >/dev/null
  run -0 rm-summarize --markdown --sampler-status "$T/s1" --gap-note x "$F/seed-build.csv"
  [[ "$output" != *"Gaps in sampling"* ]]
}

@test "--sampler-status: a file it cannot read, or not rm-sample's, is an error naming it, exit 1" {
  run -1 --separate-stderr rm-summarize --sampler-status "$T/none" "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: cannot read --sampler-status '$T/none': No such file or directory" ]
  [ -z "$output" ]
  printf 'rows_lost=many\n' >"$T/bad"
  run -1 --separate-stderr rm-summarize --sampler-status "$T/bad" "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: --sampler-status '$T/bad': line 1: not what rm-sample --status writes" ]
  printf 'rows_lost=1\nfirst_lost=<b>\n' >"$T/bad"
  run -1 --separate-stderr rm-summarize --sampler-status "$T/bad" "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: --sampler-status '$T/bad': line 2: not what rm-sample --status writes" ]
  # rm-sample's own file is read as it is.
  run -0 rm-sample -n 2 -i 0.05 -o "$T/r.csv" --status "$T/st"
  run -0 rm-summarize --json --sampler-status "$T/st" "$T/r.csv"
  [ "$(jq -c '.rows_lost' <<<"$output")" = 0 ]
}

@test "--companions: X.csv brings X.procs.csv and X.stats.csv; every file once, however named" {
  local d="$T/d"
  mkdir -p "$d"
  cp "$F/scope/memcg-build.csv" "$F/scope/memcg-build.procs.csv" "$F/scope/memcg-build.stats.csv" "$d/"
  run -0 rm-summarize --json --companions "$d/memcg-build.csv"
  [ "$(jq -c '.files' <<<"$output")" = "[\"$d/memcg-build.csv\",\"$d/memcg-build.procs.csv\",\"$d/memcg-build.stats.csv\"]" ]
  # Named twice, or under a symlink too: once.
  ln -s memcg-build.csv "$d/latest.csv"
  ln -s memcg-build.procs.csv "$d/latest.procs.csv"
  run -0 rm-summarize --json --companions "$d/latest.csv" "$d/memcg-build.csv" "$d/memcg-build.procs.csv"
  [ "$(jq -c '.files' <<<"$output")" = "[\"$d/latest.csv\",\"$d/latest.procs.csv\",\"$d/memcg-build.stats.csv\"]" ]
  # An empty companion is left out; without --companions nothing is added.
  : >"$d/memcg-build.stats.csv"
  run -0 rm-summarize --json --companions "$d/memcg-build.csv"
  [ "$(jq -c '.files | length' <<<"$output")" = 2 ]
  run -0 rm-summarize --json "$d/memcg-build.csv"
  [ "$(jq -c '.files | length' <<<"$output")" = 1 ]
}

@test "without --companions too, a file named twice, or under a link's name, is read once: no process counted twice" {
  local d="$T/d" once
  mkdir -p "$d"
  cp "$F/scope/memcg-build.csv" "$F/scope/memcg-build.procs.csv" "$d/"
  ln -s memcg-build.procs.csv "$d/latest.procs.csv"
  ln "$d/memcg-build.procs.csv" "$d/hard.procs.csv"
  run -0 rm-summarize --json "$d/memcg-build.csv" "$d/memcg-build.procs.csv"
  once=$output
  [ "$(jq -c '.processes.count' <<<"${once}")" -gt 0 ]
  run -0 rm-summarize --json "$d/memcg-build.csv" "$d/memcg-build.procs.csv" \
    "$d/latest.procs.csv" "$d/hard.procs.csv" "$d/memcg-build.procs.csv"
  [ "$(jq -c '.files' <<<"$output")" = "[\"$d/memcg-build.csv\",\"$d/memcg-build.procs.csv\"]" ]
  [ "$(jq -c 'del(.files)' <<<"$output")" = "$(jq -c 'del(.files)' <<<"${once}")" ]
  # The text report says the same.
  run -0 rm-summarize "$d/memcg-build.csv" "$d/memcg-build.procs.csv"
  once=$output
  run -0 rm-summarize "$d/memcg-build.csv" "$d/latest.procs.csv" "$d/memcg-build.procs.csv"
  [ "$output" = "${once}" ]
}

@test "--keep-error: -o FILE holds the message of input it cannot summarize; exit 1, said on stderr too" {
  : >"$T/empty.csv"
  run -1 --separate-stderr rm-summarize --keep-error -o "$T/s.json" --json "$T/empty.csv"
  [ "$stderr" = "rm-summarize: '$T/empty.csv': empty file; not a CSV" ]
  [ "$(jq -r .error "$T/s.json")" = "rm-summarize: '$T/empty.csv': empty file; not a CSV" ]
  run -1 --separate-stderr rm-summarize --keep-error -o "$T/s.txt" "$T/empty.csv"
  [ "$(cat "$T/s.txt")" = "rm-summarize: '$T/empty.csv': empty file; not a CSV" ]
  # Without --keep-error nothing is left; a good input gives the report.
  run -1 --separate-stderr rm-summarize -o "$T/n.txt" "$T/empty.csv"
  [ ! -e "$T/n.txt" ]
  run -0 rm-summarize --keep-error -o "$T/s.txt" "$F/seed-build.csv"
  grep -q '^Build resources: ' "$T/s.txt"
  # Never written through a symlink, never about the output itself.
  ln -s "$T/victim" "$T/link.txt"
  run -1 --separate-stderr rm-summarize --keep-error -o "$T/link.txt" "$T/empty.csv"
  [[ "$stderr" == "rm-summarize: cannot write '$T/link.txt': a symbolic link, not followed" ]]
  [ ! -e "$T/victim" ]
  run -2 --separate-stderr rm-summarize --keep-error "$F/seed-build.csv"
  [ "${stderr_lines[0]}" = "rm-summarize: --keep-error needs -o FILE" ]
}

@test "--check: the options are checked, nothing is read, exit 0" {
  run -0 --separate-stderr rm-summarize --check --near-oom-mb 100 --low-disk-gb 0.5
  [ -z "$output$stderr" ]
  run -2 --separate-stderr rm-summarize --check --near-oom-mb lots
  [ "${stderr_lines[0]}" = "rm-summarize: invalid --near-oom-mb 'lots': MiB, a number from 0" ]
  run -2 --separate-stderr rm-summarize --check --low-disk-gb -1
  [ "${stderr_lines[0]}" = "rm-summarize: invalid --low-disk-gb '-1': GiB, a number from 0" ]
}

@test "--sampler-status: no row written and an empty CSV: the error says how many rows were lost, from when, and why" {
  : >"$T/e.csv"
  status "$T/s1" 3 2026-12-02T13:00:00.250Z 0 '' 0 0
  status "$T/s2" 2 2026-12-02T13:00:09.000Z 0 '' 0 1
  sed -i 's/^rows_written=.*/rows_written=0/' "$T/s1" "$T/s2"
  run -1 --separate-stderr rm-summarize --sampler-status "$T/s1" --sampler-status "$T/s2" "$T/e.csv"
  [ "$stderr" = "rm-summarize: 5 rows lost from 2026-12-02T13:00:00.250Z: cannot write to '$T/e.csv': No space left on device" ]
  # No status file: the plain words for an empty file.
  run -1 --separate-stderr rm-summarize "$T/e.csv"
  [ "$stderr" = "rm-summarize: '$T/e.csv': empty file; not a CSV" ]
}
