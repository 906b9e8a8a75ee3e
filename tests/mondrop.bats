#!/usr/bin/env bats
# Issue 13, the seed monitor's users: resource-monitor.sh from an
# orchestrator's tree (RM1), a reused run-id and its .latest links (RM42),
# stage names from logs while the stage file is not written, one read per
# summarize input (RM32), --seed-columns (RM44/RM6), and the disk rate
# fitted only over a long enough window.

setup() {
  load test_helper/common
  OUT="$BATS_TEST_TMPDIR/out"
  ORCH="$BATS_TEST_TMPDIR/orch/linux/scripts/01-core"
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
}

# A PATH with the system's commands but not bin/.
bare_path() {
  printf '%s' "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

@test "RM1: resource-monitor.sh copied or symlinked into an orchestrator tree finds rm-monitor" {
  mkdir -p "$ORCH"
  # Copied, rm-monitor on PATH: the orchestrator's call works.
  cp "$RM_TOP/bin/resource-monitor.sh" "$ORCH/"
  run -0 bash "$ORCH/resource-monitor.sh" --help
  [[ "$output" == "usage: rm-monitor "* ]]
  # Copied, rm-monitor nowhere: it says where it looked, exit 127.
  run -127 --separate-stderr env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --help
  [ "$stderr" = "resource-monitor.sh: rm-monitor not found: looked for $ORCH/rm-monitor, then on PATH ($(bare_path))" ]
  # Symlinked: the rm-monitor beside the link's target, PATH or not.
  rm "$ORCH/resource-monitor.sh"
  ln -s "$RM_TOP/bin/resource-monitor.sh" "$ORCH/resource-monitor.sh"
  run -0 env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --help
  [[ "$output" == "usage: rm-monitor "* ]]
  # A relative symlink called through a relative path, from the tree's top.
  ln -sfn "$(realpath --relative-to="$ORCH" "$RM_TOP/bin/resource-monitor.sh")" "$ORCH/resource-monitor.sh"
  cd "$BATS_TEST_TMPDIR/orch"
  RESOURCE_MONITOR=0 run -0 env PATH="$(bare_path)" bash linux/scripts/01-core/resource-monitor.sh --out-dir "$OUT"
  [ ! -e "$OUT" ]
  # And it really monitors from there: one run, its summary written.
  run -0 env PATH="$(bare_path)" bash linux/scripts/01-core/resource-monitor.sh \
    --out-dir "$OUT" --run-id rm1 --interval 0.1 --watch-pid "$(sleep 0.5 & echo $!)"
  [ -s "$OUT/resources-rm1.summary.txt" ]
}

@test "RM1: after make install PREFIX=DIR, resource-monitor.sh copied or symlinked runs the installed rm-monitor" {
  local inst="$BATS_TEST_TMPDIR/inst"
  make -s -C "$RM_TOP" --no-print-directory install PREFIX="$inst" >/dev/null
  mkdir -p "$ORCH"
  cp "$inst/bin/resource-monitor.sh" "$ORCH/"
  run -0 env PATH="$inst/bin:$(bare_path)" bash "$ORCH/resource-monitor.sh" --version
  [ "$output" = "rm-monitor 0.1.0" ]
  ln -sf "$inst/bin/resource-monitor.sh" "$ORCH/resource-monitor.sh"
  run -0 env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --version
  [ "$output" = "rm-monitor 0.1.0" ]
  # The installed copy itself, called by its path.
  run -0 env PATH="$(bare_path)" bash "$inst/bin/resource-monitor.sh" --version
}

# start_monitor ARGS...: rm-monitor in the background; sets MON.
start_monitor() {
  rm-monitor "$@" </dev/null >"$BATS_TEST_TMPDIR/mon.out" 2>"$BATS_TEST_TMPDIR/mon.err" &
  MON=$!
  BG_PIDS="${BG_PIDS:-} $MON"
}

# A row of data (not just the header) in the run's CSV.
has_rows() {
  [[ -f "$1" ]] && (($(wc -l <"$1") >= 2))
}

# run_monitor ID ARGS...: one short monitored "build" (a 1 s sleep).
run_monitor() {
  local id=$1
  shift
  sleep 1 &
  local b=$!
  run -0 --separate-stderr rm-monitor --out-dir "$OUT" --run-id "$id" --interval 0.1 --watch-pid "$b" "$@"
}

# bats test_tags=slow
@test "RM42: a reused run-id says which name it got; resources-ID.latest.* point at the newest run" {
  run_monitor same
  [ -z "$stderr" ]
  [ "$(readlink "$OUT/resources-same.latest.csv")" = resources-same.csv ]
  run_monitor same
  [ "$stderr" = "rm-monitor: run-id 'same' was used before in '$OUT': this run's files are $OUT/resources-same-2.*" ]
  local n
  for n in csv procs.csv summary.txt summary.json stats.csv; do
    [ "$(readlink "$OUT/resources-same.latest.$n")" = "resources-same-2.$n" ]
  done
  # "This run" when ids repeat: the .latest names.
  run -0 jq -r '.files[0]' "$OUT/resources-same.latest.summary.json"
  [ "$output" = "$OUT/resources-same-2.csv" ]
  # Inputs may be symlinks: the .latest CSV summarizes (only outputs refuse links).
  run -0 rm-summarize "$OUT/resources-same.latest.csv"
  [[ "${lines[0]}" == "Build resources: $OUT/resources-same.latest.csv (rm-sample CSV)"* ]]
  run -0 rm-monitor summarize --json "$OUT/resources-same.latest.csv"
  [ "$(jq -r '.files | length' <<<"$output")" -ge 2 ]
  # A third run moves every link; the earlier runs' files stay.
  run_monitor same
  [ "$(readlink "$OUT/resources-same.latest.summary.txt")" = resources-same-3.summary.txt ]
  [ -s "$OUT/resources-same.summary.txt" ] && [ -s "$OUT/resources-same-2.summary.txt" ]
  # No temporary link is left behind.
  run -0 find "$OUT" -name '.rm-monitor*'
  [ -z "$output" ]
}

@test "RM42: a file that is not a symlink at a .latest name is left alone, and said" {
  mkdir -p "$OUT"
  echo precious >"$OUT/resources-p.latest.csv"
  run_monitor p --scope host
  [ "$stderr" = "rm-monitor: '$OUT/resources-p.latest.csv' is not a symlink: left as it is" ]
  [ "$(cat "$OUT/resources-p.latest.csv")" = precious ]
  [ "$(readlink "$OUT/resources-p.latest.summary.txt")" = resources-p.summary.txt ]
  [ ! -e "$OUT/resources-p.latest.stats.csv" ]
}

@test "RM32: rm-monitor summarize X.csv X.procs.csv reads each file once, however it is named" {
  local d="$BATS_TEST_TMPDIR/r32"
  mkdir -p "$d"
  cp "$FIXTURES/fit/monitor.csv" "$d/resources-r.csv"
  cp "$FIXTURES/fit/resources-demo.procs.csv" "$d/resources-r.procs.csv"
  ln -s resources-r.procs.csv "$d/other-name.csv"
  run -0 rm-monitor summarize "$d/resources-r.csv"
  local once
  once=$(grep '^Processes: ' <<<"$output")
  [[ "$once" == "Processes: 21, "* ]]
  cd "$d"
  local second
  for second in "$d/resources-r.procs.csv" ./resources-r.procs.csv other-name.csv "$d/../r32/resources-r.procs.csv"; do
    run -0 rm-monitor summarize "$d/resources-r.csv" "$second"
    [ "$(grep '^Processes: ' <<<"$output")" = "$once" ]
  done
  run -0 rm-monitor summarize --json resources-r.csv resources-r.procs.csv
  [ "$(jq '.processes.count' <<<"$output")" = 21 ]
}

@test "stage: a stage file missing or empty falls back to the newest log's name; names are trimmed" {
  local d="$BATS_TEST_TMPDIR/st"
  mkdir -p "$d/logs"
  echo "cc -c a.c" >"$d/logs/clean.log"
  run -0 rm-sample --stage-file "$d/never" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  : >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  printf ' \t \n' >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = clean ]
  # A written stage file wins, its name trimmed of spaces and tabs.
  printf '  torch \t\nsecond line\n' >"$d/stage"
  run -0 rm-sample --stage-file "$d/stage" --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = torch ]
  run -0 rm-sample --stage-file "$d/stage"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = torch ]
  # A log's name is trimmed too.
  echo x >"$d/logs/ spaced .log"
  run -0 rm-sample --stage-log-dir "$d/logs"
  [ "$(csv_get <(printf '%s\n' "$output") stage)" = spaced ]
}

# bats test_tags=slow
@test "stage: rm-monitor with a stage file never written stages by the logs, and the summary says so" {
  local d="$BATS_TEST_TMPDIR/st"
  mkdir -p "$d/logs"
  cat >"$d/build.sh" <<'B'
echo "rm -rf obj" >"$1/clean.log"
sleep 0.8
echo "cc -c big.c" >"$1/build.log"
sleep 0.8
B
  bash "$d/build.sh" "$d/logs" &
  local b=$!
  run -0 rm-monitor --out-dir "$OUT" --run-id fb --interval 0.1 --stage-file "$d/stage" \
    --stage-log-dir "$d/logs" --watch-pid "$b"
  run -0 "$PY" -c 'import csv, sys
print(" ".join(sorted({r["stage"] for r in csv.DictReader(open(sys.argv[1]))})))' "$OUT/resources-fb.csv"
  [[ "$output" == "build clean" || "$output" == " build clean" ]]
  run -0 grep -c "note     stage from the newest log's name in [0-9]* rows: the stage file was missing or empty" "$OUT/resources-fb.summary.txt"
  run -0 jq '.stage_fallback_rows' "$OUT/resources-fb.summary.json"
  ((output >= 5))
  run -0 jq -r '[.system.stages[].stage] | map(select(. != "(none)" and . != "")) | join(" ")' "$OUT/resources-fb.summary.json"
  [ "$output" = "clean build" ]
  # A stage file that is written: no fallback, no note (0 in the JSON).
  printf 'base\n' >"$d/stage"
  sleep 0.5 &
  run -0 rm-monitor --out-dir "$OUT" --run-id fb2 --interval 0.1 --stage-file "$d/stage" \
    --stage-log-dir "$d/logs" --watch-pid "$!"
  run -1 grep -c "stage from the newest log" "$OUT/resources-fb2.summary.txt"
  [ "$(jq '.stage_fallback_rows' "$OUT/resources-fb2.summary.json")" = 0 ]
  # Without a stage file there is nothing to fall back from: null.
  [ "$(rm-summarize --json "$OUT/resources-fb2.csv" | jq '.stage_fallback_rows')" = null ]
}

# shape FIELD: the format class of one CSV field as the seed printed it.
shape() {
  local f=$1
  if [[ "$f" =~ ^-?[0-9]+$ ]]; then echo int
  elif [[ "$f" =~ ^[0-9]+\.[0-9][0-9]$ ]]; then echo dec2
  elif [[ "$f" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]; then echo iso
  elif [[ "$f" =~ ^\".*\"$ ]]; then echo quoted
  else echo "other:$f"
  fi
}

# shapes LINE: the shapes of a row's fields, split as awk -F, splits them.
shapes() {
  local -a f
  IFS=, read -r -a f <<<"$1"
  local x
  for x in "${f[@]}"; do shape "$x"; done | tr '\n' ' '
}

@test "RM44/RM6: rm-sample --seed-columns writes the seed's 14 columns in the seed's printf formats" {
  local d="$BATS_TEST_TMPDIR/seed"
  mkdir -p "$d/logs" "$d/out"
  echo "[ 12/6233] Building CXX object aten/foo.cpp.o" >"$d/logs/torch.log"
  # The seed's own script (its printf) for two ticks.
  sleep 1.5 &
  bash "$FIXTURES/summarize/seed-resource-monitor.bash" --out-dir "$d/out" --run-id s \
    --interval 1 --stage-log-dir "$d/logs" --watch-pid "$!"
  local seed_head seed_row
  seed_head=$(head -n 1 "$d/out/resources-s.csv")
  seed_row=$(sed -n 2p "$d/out/resources-s.csv")
  run -0 rm-sample --seed-columns --stage-log-dir "$d/logs" -i 0.2 -n 2
  [ "${lines[0]}" = "$seed_head" ]
  [ "$(shapes "${lines[1]}")" = "$(shapes "$seed_row")" ]
  [ "$(shapes "${lines[2]}")" = "$(shapes "$seed_row")" ]
  [ "$(shapes "${lines[1]}")" = "int iso int dec2 int int int int int int int int other:torch quoted " ]
  # What awk and shell arithmetic on the seed's file did, they do on ours.
  [ "$(awk -F, 'NR == 2 { print NF, $NF }' <<<"$output")" = '14 "[ 12/6233] Building CXX object aten/foo.cpp.o"' ]
  local epoch=${lines[1]%%,*}
  (( epoch - 1700000000 > 0 ))
  # The same second in epoch and iso.
  [ "$(date -u -d "@$epoch" +%FT%TZ)" = "$(cut -d, -f2 <<<"${lines[1]}")" ]
  # A context with quotes is quoted as the seed quoted it.
  echo 'say "hi", then' >>"$d/logs/torch.log"
  run -0 rm-sample --seed-columns -H --stage-log-dir "$d/logs"
  [[ "$output" == *',torch,"say ""hi"", then"' ]]
  # Without it: the seed's 14 first and in order, new columns after, epoch in ms.
  run -0 rm-sample
  [[ "${lines[0]}" == "$seed_head,"* ]]
  [[ "${lines[1]%%,*}" =~ ^[0-9]+\.[0-9]{3}$ ]]
  # Nothing the 14 columns cannot hold.
  run -2 --separate-stderr rm-sample --seed-columns --energy
  [[ "$stderr" == "rm-sample: --seed-columns writes the seed's 14 CSV columns: not with -f, --energy, --gpu or --cgroup-path"* ]]
  run -2 rm-sample --seed-columns -f jsonl
}

@test "RM44: rm-monitor --seed-columns passes it to rm-sample; the summary reads the file as a seed CSV" {
  sleep 1 &
  run -0 rm-monitor --out-dir "$OUT" --run-id sc --interval 0.2 --seed-columns --watch-pid "$!"
  run -0 head -n 1 "$OUT/resources-sc.csv"
  [ "$output" = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context" ]
  [ "$(csv_cols "$OUT/resources-sc.csv")" = 14 ]
  run -0 head -n 2 "$OUT/resources-sc.summary.txt"
  [[ "${lines[0]}" == *"(seed monitor CSV)" ]]
  run -2 --separate-stderr rm-monitor --out-dir "$OUT" --seed-columns --gpu
  [ ! -e "$OUT/resources-sc-2.csv" ]
}

@test "disk: a 25 s run gets no rate and no verdict; it says why" {
  run -0 rm-summarize "$FIXTURES/diskfit/short-25s.csv"
  [[ "$output" == *$'\nDisk: 78.79 -> 78.57 GiB available; no rate from 25.0 s and 26 samples (it needs 10 min and 20)\n'* ]]
  [[ "$output" != *"Disk falling"* ]]
  [[ "$output" != *"full in"* ]]
  run -0 rm-summarize --json "$FIXTURES/diskfit/short-25s.csv"
  [ "$(jq -c '.system.disk | [.fit_seconds, .fit_samples, .rate_gb_per_hour, .rate_ci95_gb_per_hour, .hours_to_full]' <<<"$output")" = '[25,26,null,null,null]' ]
  [ "$(jq -r '[.verdicts[].kind] | join(" ")' <<<"$output")" = ok ]
}

@test "disk: a steady 15 min fall is fitted with a 95 % interval, and the verdict gives it" {
  run -0 rm-summarize "$FIXTURES/diskfit/fall-15m.csv"
  [[ "$output" == *$'\nDisk: 60.01 -> 50.01 GiB available, -39.99 GiB/h (95 % interval -40.07 to -39.92 over 15m00s); full in 1h15m01s (1h14m53s to 1h15m09s) at that rate\n'* ]]
  [[ "$output" == *"  - Disk falling: 39.99 GiB/h (95 % interval 39.92 to 40.07, fitted over 15m00s and 31 samples); at that rate it crosses the 20 GiB threshold in 45m01s (44m56s to 45m06s) and is full in 1h15m01s (1h14m53s to 1h15m09s). Prune build caches before the next run."* ]]
  run -0 rm-summarize --json "$FIXTURES/diskfit/fall-15m.csv"
  [ "$(jq -c '.system.disk | [.rate_gb_per_hour, .rate_ci95_gb_per_hour, .hours_to_full, .hours_to_threshold]' <<<"$output")" = '[-39.994,[-40.067,-39.922],1.25,0.75]' ]
  [ "$(jq -r '[.verdicts[].kind] | join(" ")' <<<"$output")" = disk-falling ]
  # The same fall in 10 samples (one every 90 s): fewer than 20, no rate.
  awk 'NR % 3 == 1' "$FIXTURES/diskfit/fall-15m.csv" >"$BATS_TEST_TMPDIR/sparse.csv"
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/sparse.csv"
  [ "$(jq -c '.system.disk | [.fit_samples, .rate_gb_per_hour]' <<<"$output")" = '[10,null]' ]
  [ "$(jq -r '[.verdicts[].kind] | join(" ")' <<<"$output")" = ok ]
}

@test "disk: a noisy flat disk over 20 min has an interval across zero: no time to full, no verdict" {
  run -0 rm-summarize "$FIXTURES/diskfit/flat-noisy.csv"
  [[ "$output" == *$'\nDisk: 50.30 -> 49.75 GiB available, -0.06 GiB/h (95 % interval -0.77 to +0.65 over 20m00s)\n'* ]]
  [[ "$output" != *"full in"* && "$output" != *"Disk falling"* ]]
  run -0 rm-summarize --json "$FIXTURES/diskfit/flat-noisy.csv"
  [ "$(jq -c '.system.disk | [.rate_ci95_gb_per_hour, .hours_to_full, .hours_to_full_ci95, .hours_to_threshold]' <<<"$output")" = '[[-0.771,0.652],null,null,null]' ]
  [ "$(jq -r '[.verdicts[].kind] | join(" ")' <<<"$output")" = ok ]
}
