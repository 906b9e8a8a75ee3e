#!/usr/bin/env bats
# rm-run as a drop-in for memwatch's users (issue 13): the summary on a
# pipe, every process and timeline point in the JSON, ISO times, filter
# metadata, -i units, memwatch's column names, one row per process, output
# paths checked first, and figures that agree with each other.

# shellcheck disable=SC2154  # bats' run --separate-stderr sets stderr, stderr_lines

setup() {
  load test_helper/common
  MEMHOG="$RM_BUILD/tests/memhog"
  cd "$BATS_TEST_TMPDIR" || return 1
}

# A job of 1 sh and N sleeps (and no other process).
sleeps() {
  local i
  for ((i = 0; i < $1; i++)); do
    printf 'sleep 0.3 & '
  done
  printf 'wait'
}

@test "MW4: -o - puts the summary alone on stdout, CMD's stdout on stderr; --json alone stays on stderr" {
  run -0 --separate-stderr rm-run --json -o - -- sh -c 'echo CMDOUT'
  [[ "$stderr" == *CMDOUT* ]]
  echo "$output" | jq -e '.job.exit == 0'
  [ ! -e ./- ]
  run -0 --separate-stderr rm-run -o - -- sh -c 'echo CMDOUT'
  [[ "${lines[0]}" == "Job: sh -c echo CMDOUT" ]]
  run -1 grep -x CMDOUT <<<"$output"
  # Like time(1): without -o the summary is on stderr, the output on stdout.
  run -0 --separate-stderr rm-run --json -- echo X
  [ "$output" = X ]
  echo "$stderr" | jq -e '.job.exit == 0'
  # The pipe of the man page.
  run -0 bash -c 'rm-run --json -o - -- sh -c "echo noise" 2>/dev/null | jq -r .job.exit'
  [ "$output" = 0 ]
}

# table_rows: the rows of the process table in a text summary on stdin.
table_rows() {
  grep -Ec '^ +[0-9]+ +([0-9.]+|-) +([0-9.]+|-) +([0-9.]+|-) +'
}

@test "MW9: --top N and --top all; the text keeps 10, the JSON lists every process" {
  rm-run -i 0.1 -o all.json --json -- sh -c "$(sleeps 13)"
  jq -e '.processes.count == 14 and (.processes.top | length) == 14' all.json
  run -0 --separate-stderr rm-run -o - -- sh -c "$(sleeps 13)"
  [ "$(table_rows <<<"$output")" -eq 10 ]
  [[ "$output" == *"... 4 more (--top N, --csv FILE)"* ]]
  run -0 --separate-stderr rm-run --top all -o - -- sh -c "$(sleeps 13)"
  [ "$(table_rows <<<"$output")" -eq 14 ]
  [[ "$output" != *"more (--top N"* ]]
  run -0 --separate-stderr rm-run --top 3 --json -o - -- sh -c "$(sleeps 5)"
  echo "$output" | jq -e '(.processes.top | length) == 3 and .processes.count == 6'
  run -2 --separate-stderr rm-run --top 0 -- touch ran
  [ "${stderr_lines[0]}" = "rm-run: invalid --top '0': a whole number from 1, or all" ]
  [ ! -e ran ]
}

@test "MW10: with --timeline the JSON carries every timeline point" {
  rm-run -i 0.1 --timeline tl.csv --json -o run.json -- "$MEMHOG" -m 8 -t 0.6
  rows=$(($(wc -l <tl.csv) - 1))
  [ "$rows" -ge 2 ]
  jq -e --argjson n "$rows" '.timeline.points | length == $n' run.json
  # The same numbers as the CSV's last row.
  last=$(tail -1 tl.csv)
  IFS=, read -r epoch iso el procs rss _ <<<"$last"
  jq -e --arg iso "$iso" --argjson p "$procs" --argjson r "${rss:-null}" --argjson e "$epoch" \
    '.timeline.points[-1] | .iso == $iso and .procs == $p and .rss_kib == $r and .epoch == $e' run.json
  [ "$el" != "" ]
}

@test "MW6: the job's start and end in ISO 8601 next to the epochs, in text and JSON" {
  rm-run --json -o run.json -- true
  jq -e '.job.start | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")' run.json
  jq -e '(.job.start_epoch | floor | todate | .[0:19]) == (.job.start | .[0:19])' run.json
  jq -e '(.job.end_epoch | floor | todate | .[0:19]) == (.job.end | .[0:19])' run.json
  run -0 --separate-stderr rm-run -o - -- true
  [[ "${lines[2]}" =~ ^\ \ started\ [0-9-]{10}T[0-9:.]{12}Z,\ ended\ [0-9-]{10}T[0-9:.]{12}Z\ \(epoch\ [0-9]+\.[0-9]{3}\ to\ [0-9]+\.[0-9]{3}\)$ ]]
}

@test "MW11/MW25: the filters' patterns, matched count and left-out peaks in text and JSON; the CSV stays plain" {
  rm-tree --exec -i 0.1 --log log.csv --job job.csv -- sh -c "$(sleeps 3)" 2>/dev/null
  rm-summarize --json --top all log.csv job.csv >all.json
  rm-summarize --json --include '^sleep$' --csv f.csv log.csv job.csv >f.json
  jq -e '.filter == null' all.json
  want=$(jq '[.processes.top[] | select(.comm != "sleep") | .peak_rss_kib] | add' all.json)
  jq -e --argjson w "$want" '.filter.include == "^sleep$" and .filter.exclude == null and
    .filter.matched_count == 3 and .filter.excluded_count == 1 and
    .filter.excluded_peak_rss_kib_sum == $w and .filter.warning == null' f.json
  # RFC 4180: the header, then one row per shown process, no comment line.
  [ "$(head -1 f.csv)" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd" ]
  [ "$(wc -l <f.csv)" -eq 4 ]
  run -1 grep -c '^#' f.csv
  [ "$(csv_cols f.csv)" = 11 ]
  # The text says it too, through rm-run.
  run -0 --separate-stderr rm-run --include sleep --exclude '^sh' -o - -- sh -c "$(sleeps 2)"
  [[ "$output" == *"  filters: --include 'sleep' --exclude '^sh'; 2 of 3 processes match; the 1 left out peaked at "*" MiB together"* ]]
}

@test "MW24: filters that match nothing: a warning with the names seen and what to try" {
  run -0 --separate-stderr rm-run --include zzz -- sh -c "$(sleeps 1)"
  [[ "$stderr" == *"  warning: no process matches --include 'zzz': the 2 processes are in the totals but none is listed."* ]]
  [[ "$stderr" == *"names seen: "*sleep* ]]
  [[ "$stderr" == *"Try --include with one of them."* ]]
  # With -o FILE the summary is in the file: a word on stderr too.
  run -0 --separate-stderr rm-run --include zzz -o sum.txt -- true
  [ "$stderr" = "rm-summarize: warning: no process matches the filters; 'sum.txt' says which names were seen" ]
  grep -q "^  warning: no process matches --include 'zzz'" sum.txt
  run -0 --separate-stderr rm-run --json --include zzz --exclude x -- true
  echo "$stderr" | jq -e '.filter.matched_count == 0 and (.filter.warning | test("no process matches --include .zzz. --exclude .x."))'
}

@test "MW3: -i takes units; a bare -i of 50 or more is taken as seconds, with a word on stderr" {
  run -0 --separate-stderr rm-run -i 200ms -o /dev/null -- true
  [ -z "$stderr" ] || [[ "$stderr" != *"taking -i"* ]]
  run -0 --separate-stderr rm-run -i 1.5s -o /dev/null -- true
  run -0 --separate-stderr rm-run -i 2m -o /dev/null -- true
  run -0 --separate-stderr rm-run -i 200 -o /dev/null -- true
  [ "${stderr_lines[0]}" = "rm-run: taking -i 200 as 200 s; did you mean 200ms?" ]
  run -0 --separate-stderr rm-run -i 49 -o /dev/null -- true
  [[ "$stderr" != *"taking -i"* ]]
  run -2 --separate-stderr rm-run -i 10x -- true
  [ "${stderr_lines[0]}" = "rm-run: invalid interval '10x': seconds from 0.001 to 86400, or with a unit (200ms, 1.5s, 2m)" ]
  run -2 --separate-stderr rm-run -i 0.5ms -- true
}

# The awk line of rm-run(1) that follows "$1" (a header it prints), with
# the man page's \e as a backslash.
man_awk() {
  sed -n "/^awk -F, 'NR == 1 { print \"$1/,/' [a-z]*\\.csv\$/p" "$RM_TOP/docs/rm-run.1" | sed 's/\\e/\\/g'
}

@test "MW14/MW15: the awk lines of rm-run(1) turn our --csv and --timeline into memwatch's columns" {
  rm-run -i 0.1 --csv procs.csv --timeline timeline.csv -o /dev/null -- sh -c "$MEMHOG -m 8 -t 0.5 & wait"
  prog=$(man_awk pid,ppid,command)
  [ -n "$prog" ]
  run -0 bash -c "$prog"
  [ "${lines[0]}" = "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen" ]
  [ "${#lines[@]}" -eq "$(wc -l <procs.csv)" ]
  IFS=, read -r pid ppid comm kib mibs first last <<<"${lines[1]}"
  [ "$pid" = "$(csv_get procs.csv pid)" ] && [ "$ppid" = "$(csv_get procs.csv ppid)" ]
  [ "$comm" = "$(csv_get procs.csv comm)" ] && [ "$kib" = "$(csv_get procs.csv peak_rss_kib)" ]
  [ "$first" = "$(csv_get procs.csv start_s)" ] && [ "$last" = "$(csv_get procs.csv end_s)" ]
  awk -v k="$kib" -v m="$mibs" 'BEGIN { d = k / 1024 - m; exit !(d < 0.06 && d > -0.06) }'
  prog=$(man_awk timestamp,elapsed)
  [ -n "$prog" ]
  run -0 bash -c "$prog"
  [ "${lines[0]}" = "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count" ]
  [ "${#lines[@]}" -eq "$(wc -l <timeline.csv)" ]
  IFS=, read -r ts el kib mibs n <<<"${lines[1]}"
  [ "$ts" = "$(csv_get timeline.csv iso)" ] && [ "$el" = "$(csv_get timeline.csv elapsed_s)" ]
  [ "$kib" = "$(csv_get timeline.csv rss_kib)" ] && [ "$n" = "$(csv_get timeline.csv procs)" ]
}

# rows_once FILE: the exit log has one row per pid.
rows_once() {
  [ -z "$(tail -n +2 "$1" | cut -d, -f1 | sort | uniq -d)" ]
}

# bats test_tags=slow
@test "MW31: one row per process, sampled and exact: zombies reaped by rm-tree, children reaped before their fork event" {
  local mode i
  for mode in 1 ''; do
    for i in 1 2 3 4 5 6 7 8; do
      RM_NO_EVENTS=$mode rm-tree --exec -i 0.1 --log log.csv --job job.csv -- \
        perl -e 'for (1..3) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.8)' 2>/dev/null
      rows_once log.csv
      [ "$(wc -l <log.csv)" -eq 5 ]
      [ "$(csv_get job.csv procs)" -eq 4 ]
    done
    for _ in $(seq 20); do
      RM_NO_EVENTS=$mode rm-tree --exec --log log.csv --job job.csv -- true 2>/dev/null
      [ "$(wc -l <log.csv)" -eq 2 ]
      [ "$(csv_get job.csv procs)" -eq 1 ]
    done
  done
  # The summary's count and list.
  run -0 --separate-stderr rm-run -i 0.1 --csv dup.csv -o - -- \
    perl -e 'for (1..3) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.8)'
  [[ "$output" == *"Processes: 4, "* ]]
  grep -Eq '^  true +3 ' <<<"$output"
  rows_once dup.csv
}

teardown() {
  local p
  for p in "${HOGS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
}

# bats test_tags=slow
@test "MW31: children met by a scan as zombies before their fork events were read are still listed, once" {
  # Busy loops of our own make the race (scan before events) likely.
  HOGS=()
  local mode _ n
  for _ in 1 2 3; do
    (while :; do :; done) &
    HOGS+=($!)
  done
  for mode in '' 1; do
    for _ in 1 2 3 4 5 6; do
      RM_NO_EVENTS=$mode rm-tree --exec -i 0.05 --log log.csv --job job.csv -- \
        perl -e 'for (1..20) { exec "/bin/true" if fork() == 0 } select(undef, undef, undef, 0.3)' 2>/dev/null
      n=$(($(wc -l <log.csv) - 1))
      echo "mode '$mode': $n rows, procs $(csv_get job.csv procs)"
      rows_once log.csv
      [ "$n" -eq 21 ]
      [ "$(csv_get job.csv procs)" -eq 21 ]
    done
  done
}

@test "MW42: every output path is checked before CMD starts: exit 1, the path named, nothing run" {
  run -1 --separate-stderr rm-run --csv /nonexistent/x.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --csv '/nonexistent/x.csv': no directory '/nonexistent'; nothing was run" ]
  run -1 --separate-stderr rm-run --timeline /proc/x.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --timeline '/proc/x.csv': cannot create a file in '/proc'; nothing was run" ]
  mkdir adir
  run -1 --separate-stderr rm-run -o adir -- touch ran
  [ "$stderr" = "rm-run: cannot write -o 'adir': a directory; nothing was run" ]
  ln -s nowhere link.csv
  run -1 --separate-stderr rm-run --csv link.csv -- touch ran
  [ "$stderr" = "rm-run: cannot write --csv 'link.csv': a symbolic link, not followed; nothing was run" ]
  [ ! -e ran ] && [ ! -e nowhere ] && [ ! -e /proc/x.csv ]
  # A good path is left as it was: no file made by the check.
  run -0 --separate-stderr rm-run --csv new.csv -o - -- true
  [ "$(head -1 new.csv)" = "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd" ]
}

@test "MW42: an output that fails later is reported, the summary kept, and the status says so" {
  [ -w /dev/full ] || skip "no /dev/full"
  run -1 --separate-stderr rm-run --csv /dev/full -- echo ran
  [ "$output" = ran ]
  [[ "$stderr" == *"rm-summarize: cannot write '/dev/full': No space left on device"* ]]
  [[ "$stderr" == *"Job: echo ran"* ]]
  [[ "$stderr" == *"rm-run: an output could not be written (said above)"* ]]
  # The command's own failure is the status, as before.
  run -3 --separate-stderr rm-run --csv /dev/full -- sh -c 'exit 3'
  [[ "$stderr" == *"Job: sh -c exit 3"* ]]
  # The timeline streams while CMD runs: its failure too.
  run -1 --separate-stderr rm-run --timeline /dev/full -- echo ran
  [[ "$stderr" == *"rm-tree: cannot write the timeline: No space left on device"* ]]
  [[ "$stderr" == *"Job: echo ran"* ]]
}

@test "the exact largest process and its row agree (exact mode)" {
  run -0 --separate-stderr rm-run -- true
  [[ "$stderr" == *"Process data: exact mode"* ]] || skip "exact mode is not available here"
  local _
  for _ in 1 2 3; do
    rm-run --json -o run.json -- true
    jq -e '.job as $j | $j.max_proc_pid != null and
      $j.max_proc_rss_kib == (.processes.top[] | select(.pid == $j.max_proc_pid) | .peak_rss_kib)' run.json
    rm-run --json -o run.json -- sh -c "$MEMHOG -m 24 -t 0.2; true"
    jq -e '.job.max_proc_rss_kib == .processes.top[0].peak_rss_kib and .job.max_proc_pid == .processes.top[0].pid' run.json
  done
  run -0 --separate-stderr rm-run -o - -- "$MEMHOG" -m 16 -t 0.2
  pid=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB (memhog, PID \([0-9]*\))$/\2/p' <<<"$output")
  mib=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB (memhog, PID [0-9]*)$/\1/p' <<<"$output")
  [ -n "$pid" ] && [ -n "$mib" ]
  grep -Eq "^ +$pid +$mib " <<<"$output"
}

@test "sampled mode: a largest-process figure no row carries says so, beside the largest row" {
  local _
  for _ in 1 2 3; do
    run -0 --separate-stderr env RM_NO_EVENTS=1 rm-run -o - -- sh -c "$MEMHOG -m 24 -t 0.2; true"
    line=$(grep '^  largest single process (exact)' <<<"$output")
    if [[ "$line" =~ \(memhog,\ PID\ ([0-9]+)\)$ ]]; then
      mib=$(sed -n 's/^  largest single process (exact) *\([0-9.]*\) MiB.*/\1/p' <<<"$line")
      grep -Eq "^ +${BASH_REMATCH[1]} +$mib " <<<"$output"
    else
      [[ "$line" =~ ^\ \ largest\ single\ process\ \(exact\)\ +[0-9.]+\ MiB\ \(the\ kernel\'s\ maxrss\ over\ the\ tree,\ which\ names\ no\ process\;\ the\ largest\ row,\ [a-z]+\ PID\ [0-9]+,\ was\ sampled\ at\ [0-9.]+\ MiB\)$ ]]
    fi
  done
}

@test "--cgroup: one line says where the sampled total and the exact cgroup peak part ways" {
  run --separate-stderr rm-run --cgroup --json -i 0.1 -o run.json -- \
    sh -c "for i in 1 2 3 4; do $MEMHOG -m 4 -t 1.2 & done; wait"
  if ((status == 125)) || [[ "$stderr" == *"no memory cgroup"* ]]; then
    skip "this kernel does not let us create a memory cgroup"
  fi
  [ "$status" -eq 0 ]
  # Four processes map the same libc and memhog: the sampled sum counts
  # those pages four times, the cgroup once (or not at all when they were
  # cached before the job).
  jq -e '.job.cgroup_gap.peak_file_kib > 0 and .job.cgroup_gap.cgroup_anon_kib > 0 and
    .job.cgroup_gap.cgroup_file_kib >= 0 and .job.cgroup_gap.cgroup_kernel_kib >= 0' run.json
  jq -e '.job.cgroup_gap.text | test("^sampled minus exact [+-][0-9.]+ MiB: at the sampled peak the total had [0-9.]+ MiB anonymous \\+ [0-9.]+ MiB file-backed")' run.json
  run -0 --separate-stderr rm-run --cgroup -i 0.1 -o - -- sh -c "for i in 1 2 3 4; do $MEMHOG -m 4 -t 1.2 & done; wait"
  [ "$(grep -c '^  sampled minus exact ' <<<"$output")" -eq 1 ]
}

@test "rm-tree's exit 125 (no cgroup for --memory-max): one reason on stderr, not two" {
  mkdir bin
  cp "$RM_TOP/bin/rm-run" bin/
  ln -s "$RM_TOP/bin/rm-summarize" bin/rm-summarize
  printf '#!/bin/sh\necho "rm-tree: --memory-max: cannot make a memory cgroup: stub" >&2\nexit 125\n' >bin/rm-tree
  chmod +x bin/rm-tree
  run -125 --separate-stderr bin/rm-run --memory-max 1G -- touch ran
  [ "$stderr" = "rm-tree: --memory-max: cannot make a memory cgroup: stub" ]
}
