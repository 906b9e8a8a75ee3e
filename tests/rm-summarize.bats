#!/usr/bin/env bats
# rm-summarize: the seed's CSV and rm-sample's with known answers, OOM
# kills, energy and GPU columns, rm-tree's files, bad input, SVG.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize"
}

@test "seed 14-column CSV: peaks with time, stage and context" {
  run -0 --separate-stderr rm-summarize --cores 8 "$F/seed-build.csv"
  [[ "$output" == *"(seed monitor CSV)"* ]]
  [[ "$output" == *"12 samples, every 15.00 s"* ]]
  [[ "$output" == *"max memory used        14500 MiB (90.6 %)       at +0:01:30  stage torch"* ]]
  [[ "$output" == *"context: [ 412/6233] Building CXX object aten/src/ATen/native/BatchLinearAlgebra.cpp.o"* ]]
  [[ "$output" == *"min memory available   1500 MiB                 at +0:01:30  stage torch"* ]]
  [[ "$output" == *"max swap used          512 MiB                  at +0:01:45  stage torch"* ]]
  # The seed wrote its context unquoted: a comma in it is joined back.
  [[ "$output" == *"context: [1200/6233] Linking CXX shared library libtorch_cpu.so, please wait"* ]]
  [[ "$output" == *"min disk available     18.00 GiB"*"at +0:02:30  stage export"* ]]
  [[ "$output" == *"max load1              9.10                     at +0:01:30"* ]]
  [[ "$output" == *"max CPU busy           100.0 %                  at +0:01:15  stage torch"* ]]
  [[ "$output" == *"Near-OOM (available below 4096 MiB): 3 samples, first at +0:01:15 in stage torch, longest run 3 samples (30.0 s)"* ]]
  [[ "$output" == *"Low disk (available below 20 GiB): 3 samples, first at +0:02:15 in stage export, longest run 3 samples (30.0 s)"* ]]
  [[ "$output" == *"OOM kills: not recorded (no oom_kills column)"* ]]
}

@test "seed CSV: the per-stage table, exactly" {
  run -0 rm-summarize "$F/seed-build.csv"
  [[ "$output" == *"  base      0:01:00        4       3000      13000     48.50         4        0"* ]]
  [[ "$output" == *"  torch     0:01:15        5      14500       1500     25.00         8        3"* ]]
  [[ "$output" == *"  export    0:00:30        3       4000      12000     18.00         1        0"* ]]
  run -0 rm-summarize --json "$F/seed-build.csv"
  run -0 jq -c '[.system.stages[] | [.stage, .duration_s, .samples, .peak_mem_used_mb, .min_mem_avail_mb, .min_disk_avail_gb, .max_compilers, .near_oom_samples]]' <<<"$output"
  [ "$output" = '[["base",60,4,3000,13000,48.5,4,0],["torch",75,5,14500,1500,25,8,3],["export",30,3,4000,12000,18,1,0]]' ]
}

@test "seed CSV: verdicts follow the seed's reading rules" {
  run -0 rm-summarize --cores 8 --json "$F/seed-build.csv"
  run -0 jq -r '.verdicts[].kind' <<<"$output"
  [ "$output" = $'oom-edge\nram-bound\nlow-disk' ]
  run -0 rm-summarize --cores 8 "$F/seed-build.csv"
  [[ "$output" == *"OOM edge: available memory fell to 1500 MiB; swap in use up to 512 MiB and climbing, at +0:01:30 in stage torch, while: [ 412/6233]"* ]]
  [[ "$output" == *"RAM-bound: while available memory was below 4096 MiB, 2.3 compilers ran on average on 8 cores"* ]]
  # Two cores: 2.3 compilers is not "well below".
  run -0 rm-summarize --cores 2 --json "$F/seed-build.csv"
  run -0 jq -r '[.verdicts[].kind] | join(" ")' <<<"$output"
  [ "$output" = "oom-edge low-disk" ]
}

@test "thresholds: --near-oom-mb and --low-disk-gb change the counts" {
  run -0 rm-summarize --json --near-oom-mb 2000 --low-disk-gb 45.5 "$F/seed-build.csv"
  run -0 jq -c '[.system.near_oom.samples, .system.low_disk.samples, .system.low_disk.first.stage]' <<<"$output"
  [ "$output" = '[1,8,"torch"]' ]
}

@test "disk: first and last, and no rate or time to full from 165 s (the fitted ones are at the end of this file)" {
  run -0 rm-summarize --json "$F/seed-build.csv"
  run -0 jq -r '.system.disk | "\(.first_gb) \(.last_gb) \(.rate_gb_per_hour) \(.hours_to_full)"' <<<"$output"
  [ "$output" = "50 18.5 null null" ]
}

@test "OOM kills from a rising oom_kills: time, stage, context; CRLF and a cut last row read" {
  run -0 --separate-stderr rm-summarize "$F/oom-kills.csv"
  [[ "$output" == *"9 samples"* ]]
  [[ "$output" == *"the last row was cut short"* ]]
  [[ "$output" == *"OOM kills: 3"* ]]
  [[ "$output" == *"  at +0:00:06  stage compile  1 kill, victim not in the kernel log"*"    context: g++ -c big.cpp"* ]]
  [[ "$output" == *"  at +0:00:10  stage link  2 kills"*'    context: g++ -c "huge, template".cpp'* ]]
  run -0 rm-summarize --json "$F/oom-kills.csv"
  run -0 jq -c '[.system.oom_kills.count, [.system.oom_kills.events[] | [.kills, .elapsed_s, .stage]], .system.stages[-1].samples]' <<<"$output"
  [ "$output" = '[3,[[1,6,"compile"],[2,10,"link"]],4]' ]
}

@test "OOM victims are named from kernel log lines near the kill" {
  local csv="$BATS_TEST_TMPDIR/now.csv" kmsg="$BATS_TEST_TMPDIR/kmsg"
  # A CSV of this boot's recent past and kernel log lines at the same
  # moments (monotonic microseconds), one outside every kill's window.
  "$PY" - "$csv" "$kmsg" <<'EOF'
import sys, time
now, mono = time.time(), time.clock_gettime(time.CLOCK_MONOTONIC)
t0 = now - 100
with open(sys.argv[1], "w") as f:
    f.write("epoch,elapsed_s,mem_used_mb,mem_avail_mb,stage,context,oom_kills\n")
    for i, k in enumerate([0, 0, 1, 1, 1, 1]):
        f.write(f"{t0 + 10*i:.3f},{10*i}.000,1000,3000,s{i//3},line {i},{k}\n")
def us(epoch): return int((epoch - now + mono) * 1e6)
with open(sys.argv[2], "w") as f:
    f.write(f"6,1,{us(t0+15)},-;oom-kill:constraint=CONSTRAINT_MEMCG,task=cc1plus,pid=4242,uid=0\n")
    f.write(f"3,2,{us(t0+15)},-;Memory cgroup out of memory: Killed process 4242 (cc1plus) total-vm:1kB\n")
    f.write(f"3,3,{us(t0+45)},-;Out of memory: Killed process 999 (ld) total-vm:1kB\n")
EOF
  run -0 rm-summarize --kmsg "$kmsg" "$csv"
  [[ "$output" == *"stage s0  1 kill, victim cc1plus (PID 4242)"* ]]
  [[ "$output" == *"victim cc1plus (PID 4242)"*"context: line 2"* ]]
  run -0 rm-summarize --json --kmsg "$kmsg" "$csv"
  run -0 jq -c '.system.oom_kills.events[0].victims | map({pid, name, in_scope, constraint, oom_memcg, tied_by, row_pid, row_inferred, unit, time_from})' <<<"$output"
  [ "$output" = '[{"pid":4242,"name":"cc1plus","in_scope":null,"constraint":"CONSTRAINT_MEMCG","oom_memcg":null,"tied_by":null,"row_pid":null,"row_inferred":false,"unit":null,"time_from":"sample"}]' ]
  # An unreadable kernel log is said, not hidden.
  run -0 rm-summarize --kmsg /nonexistent/kmsg "$csv"
  [[ "$output" == *"victim unknown (kernel log: No such file or directory)"* ]]
}

@test "energy and GPU columns: joules, mean and peak watts per stage, GPU peaks" {
  run -0 rm-summarize "$F/energy-gpu.csv"
  [[ "$output" == *"Energy: 1300 J over 50 s, mean 26.0 W, peak 40.0 W at +0:00:30 in stage eval"* ]]
  [[ "$output" == *"max GPU busy           95.0 %                   at +0:00:20  stage train"* ]]
  [[ "$output" == *"max GPU VRAM used      7500 of 8192 MiB         at +0:00:20  stage train"* ]]
  run -0 rm-summarize --json "$F/energy-gpu.csv"
  run -0 jq -c '[.system.energy.joules, [.system.stages[].energy_j], .system.peaks.max_gpu_busy_pct.context]' <<<"$output"
  [ "$output" = '[1300,[500,800],"step 2"]' ]
  # Without those columns there is no energy or GPU section at all.
  run -0 rm-summarize --json "$F/seed-build.csv"
  run -0 jq -c '[.system.energy, .system.peaks.max_gpu_busy_pct]' <<<"$output"
  [ "$output" = '[null,null]' ]
}

@test "columns found by name: reordered, extra and missing optional columns" {
  local csv="$BATS_TEST_TMPDIR/odd.csv"
  printf '%s\n' 'future_col,mem_avail_mb,epoch,mem_used_mb,stage' \
    'x,5000,100.5,3000,a' 'y,3000,101.5,5000,b,extra,fields' >"$csv"
  run -0 rm-summarize --json "$csv"
  run -0 jq -c '[.system.samples, .system.peaks.max_mem_used_mb.value, .system.peaks.max_mem_used_mb.stage, .system.peaks.min_disk_avail_gb, .system.oom_kills]' <<<"$output"
  [ "$output" = '[2,5000,"b",null,null]' ]
}

@test "bad input: each a clear error and exit 1" {
  local d="$BATS_TEST_TMPDIR"
  : >"$d/empty.csv"
  run -1 --separate-stderr rm-summarize "$d/empty.csv"
  [ "$stderr" = "rm-summarize: '$d/empty.csv': empty file; not a CSV" ]

  head -n 1 "$F/oom-kills.csv" >"$d/header.csv"
  run -1 --separate-stderr rm-summarize "$d/header.csv"
  [ "$stderr" = "rm-summarize: '$d/header.csv': no rows after the header" ]

  head -c 4096 /dev/urandom >"$d/garbage.csv"
  printf 'x\0y' >>"$d/garbage.csv"
  run -1 --separate-stderr rm-summarize "$d/garbage.csv"
  [[ "$stderr" == "rm-summarize: '$d/garbage.csv': "* ]]
  # Random bytes: whichever of these comes first.
  [[ "$stderr" == *"binary data (a NUL byte); not a CSV" || "$stderr" == *"not a CSV rm-summarize reads"* ||
    "$stderr" == *"lines end in a lone CR"* || "$stderr" == *"a quoted field opened here is never closed"* ]]
  printf 'epoch,mem_used_mb\n1,2\n\0\n' >"$d/nul.csv"
  run -1 --separate-stderr rm-summarize "$d/nul.csv"
  [ "$stderr" = "rm-summarize: '$d/nul.csv': line 3: binary data (a NUL byte); not a CSV" ]

  { head -n 2 "$F/oom-kills.csv"; printf '1,2,3\r\n'; tail -n +3 "$F/oom-kills.csv"; } >"$d/short.csv"
  run -1 --separate-stderr rm-summarize "$d/short.csv"
  [ "$stderr" = "rm-summarize: '$d/short.csv': line 3: 3 fields where the header has 19" ]

  printf 'name,size\nx,1\n' >"$d/other.csv"
  run -1 --separate-stderr rm-summarize "$d/other.csv"
  [[ "$stderr" == "rm-summarize: '$d/other.csv': not a CSV rm-summarize reads (header 'name,size')"* ]]

  run -1 --separate-stderr rm-summarize "$d/missing.csv"
  [ "$stderr" = "rm-summarize: cannot open '$d/missing.csv': No such file or directory" ]
}

@test "bad input: a 100 MB file that is one endless record" {
  local big="$BATS_TEST_TMPDIR/one-record.csv"
  { head -n 1 "$F/oom-kills.csv"; head -c 100000000 /dev/zero | tr '\0' 'x'; } >"$big"
  run -1 --separate-stderr rm-summarize "$big"
  [ "$stderr" = "rm-summarize: '$big': line 2: a record longer than 1048576 bytes; not a CSV this toolkit writes" ]
}

@test "a 100 MB CSV is read streaming: right counts, memory bounded" {
  local big="$BATS_TEST_TMPDIR/big.csv"
  "$PY" - "$big" <<'EOF'
import sys
hdr = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills,psi_mem_some,psi_mem_full,psi_io_full,psi_cpu_some\n"
with open(sys.argv[1], "w") as f:
    f.write(hdr)
    n = 0
    rows = []
    while f.tell() < 100_000_000:
        for _ in range(10000):
            used = 1000 + (n * 7919) % 9000
            if n == 500000:
                used = 15000
            rows.append(f"{1700000000 + n}.000,2023-11-14T22:13:20.000Z,{n}.000,1.00,50.0,{used},{16000 - used},10.0,0,80.00,20,{n % 5},stage{n // 200000},\"g++ -c unit{n}.cpp, with comma\",0,0.00,0.00,0.00,0.00\n")
            n += 1
        f.write("".join(rows))
        rows = []
print(n)
EOF
  run -0 /usr/bin/time -f 'maxrss %M' rm-summarize --json "$big"
  local json=${output%%$'\n'maxrss*} rss=${output##*maxrss }
  run -0 jq -c '[.system.peaks.max_mem_used_mb.value, .system.peaks.max_mem_used_mb.elapsed_s, .system.peaks.max_mem_used_mb.context, (.system.stages | length)]' <<<"$json"
  [ "$output" = '[15000,500000,"g++ -c unit500000.cpp, with comma",4]' ]
  # Streaming: the resident set stays far below the file's 100 MB (not
  # measurable under ASan, whose shadow memory is in it, nor under valgrind,
  # whose own is).
  under_san || under_valgrind || ((rss < 16384))
}

# exitlog_pair DIR N: DIR/sys.csv (an hour at 10 s) and DIR/N.procs.csv, N rows
# of rm-tree's 22 columns: one in eight a cc1plus of one of 1,000 units whose
# parent is a clang of it, pids reused, a few of another user elsewhere.
exitlog_pair() {
  mawk -v d="$1" -v rows="$2" 'BEGIN {
    s = d "/sys.csv"; p = d "/" rows ".procs.csv"
    print "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context" > s
    for (i = 0; i < 360; i++)
      printf "%d,x,%d,1,50,%d,%d,10,0,80,20,2,stage%d,c%d\n", 1700000000 + 10 * i, 10 * i, 4000 + i, 12000 - i, i / 120, i > s
    print "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope,emulated,uid" > p
    for (i = 0; i < rows; i++) {
      t = i * 3500 / rows; pid = 300 + i % 30000; u = int(i / 8) % 1000
      x = sprintf(",%d,%d,%d,%d,%d,0,%d,0,%s,%s,no,%d", (i * 13) % 5000, (i * 17) % 7000, i % 3, i % 50,
        i % 7, i % 11 ? 0 : i % 900, i % 10 ? "exact" : "sampled", i % 997 ? "" : "out", i % 997 ? 1000 : 1001)
      if (i % 8 == 0)
        printf "%d,%d,cc1plus,%.3f,%.3f,%d,%.3f,0.50,0,cc1plus -quiet src/u%d.cpp -o /tmp/x.s%s\n", pid, pid + 1, t, t + 1, 50000 + (i * 7919) % 400000, t + 0.5, u, x > p
      else if (i % 8 == 1)
        printf "%d,200,clang,%.3f,%.3f,%d,%.3f,0.01,0,clang -c src/u%d.cpp -o u%d.o%s\n", pid, t - 1, t + 1.1, 3000 + i % 50, t, u, u, x > p
      else
        printf "%d,200,sh%d,%.3f,%.3f,%d,%.3f,0.01,0,sh -c step%d%s\n", pid, i % 5, t, t + 0.2, 1000 + (i * 31) % 5000, t, i, x > p
    }
  }'
}

@test "a long build's exit log is folded as read: the same report, --csv and --trace, and memory that hardly grows per row" {
  local d=$BATS_TEST_TMPDIR n=40000 rss1 rss10 held folded fmt
  exitlog_pair "$d" "$n"
  exitlog_pair "$d" $((10 * n))
  # Held rows (RM_SUMMARIZE_HOLD, a test knob) and folded rows print the
  # same report, and write the same --csv and --trace files.
  for args in "--json --top 10" "--json --top 4 --include cc1 --exclude sh2" "--json --top 3 --exclude ." \
    "--markdown" "--markdown --top 2 --include sh1" "--exclude ." "--top 3 --include cc1 --exclude sh2" ""; do
    # shellcheck disable=SC2086  # the options, word-split on purpose
    held=$(RM_SUMMARIZE_HOLD=1 rm-summarize --csv "$d/held.csv" --trace "$d/held.json" $args "$d/sys.csv" "$d/$n.procs.csv")
    # shellcheck disable=SC2086
    folded=$(rm-summarize --csv "$d/rows.csv" --trace "$d/rows.json" $args "$d/sys.csv" "$d/$n.procs.csv")
    [ "$held" = "$folded" ]
    cmp "$d/held.csv" "$d/rows.csv"
    cmp "$d/held.json" "$d/rows.json"
  done
  [ "$(RM_SUMMARIZE_HOLD=1 rm-summarize "$d/$n.procs.csv")" = "$(rm-summarize "$d/$n.procs.csv")" ]
  [[ "$folded" == *"Processes: $((n - n / 997 - 1)), "* ]]  # less the rows elsewhere
  [[ "$folded" == *"src/u"*".cpp (x"* ]]
  under_san || under_valgrind && skip "RSS not measurable under ASan or valgrind"
  # The summary JSON of the top N, as the text; what lists every row (the
  # JSON without --top, as rm-run's of one job, --top all, --csv and
  # --trace) through the external sort (spill.c).
  for fmt in "--top 10" "--json --top 10" --json "--top all" "--csv $d/o.csv --trace $d/o.json"; do
    # shellcheck disable=SC2086  # the options, word-split on purpose
    /usr/bin/time -f %M -o "$d/rss1" rm-summarize $fmt "$d/sys.csv" "$d/$n.procs.csv" >/dev/null
    # shellcheck disable=SC2086
    /usr/bin/time -f %M -o "$d/rss10" rm-summarize $fmt "$d/sys.csv" "$d/$((10 * n)).procs.csv" >"$d/out"
    read -r rss1 <"$d/rss1" && read -r rss10 <"$d/rss10"
    # (n = 40,000: every one of the log's 30,000 PIDs has its row in the
    # unit walk's table already, a bounded 2 MiB at most.)
    # Ten times the rows cost under 12 bytes a row more (held: about 370;
    # folded, 6 measured: the compilers' figures, 16 bytes each, one row in
    # eight, and their arrays' doubling.  It was 31 with a 22-byte parent
    # link kept for every row and 40 bytes a compiler, then 19 with the
    # links gone.)
    echo "$fmt: rss $rss1 KiB for $n rows, $rss10 KiB for $((10 * n))" >&3
    # Every row listed, where every row is asked for.
    case $fmt in
      --json) [ "$(jq '.processes.top | length' "$d/out")" -eq "$((10 * n - 10 * n / 997 - 1))" ] ;;
      "--top all") [ "$(awk '/^ +PID +peak MiB +at s/ { on = 1; next } on && !NF { exit } on { k++ } END { print k }' "$d/out")" -eq "$((10 * n - 10 * n / 997 - 1))" ] ;;
      --csv*) [ "$(($(wc -l <"$d/o.csv") - 1))" -eq "$((10 * n - 10 * n / 997 - 1))" ] ;;
    esac
    (((rss10 - rss1) * 1024 < 12 * 9 * n))
  done
}

@test "folded compilers' figures that no whole millisecond or KiB holds, and survivors: the same p95, largest and most alive at once as held rows" {
  local d=$BATS_TEST_TMPDIR held folded
  exitlog_pair "$d" 2000
  # Each cc1plus starts 0.4 ms before its clang (the next row, 1.75 s
  # later, 2.1 s long) ends: the two are alive at once only to the tenth
  # of a millisecond.  Peaks with a fraction; some compilers with no end
  # (alive at the end of the run), some with no start.
  local ends
  for ends in all some; do
    mawk -v ends="$ends" 'BEGIN { FS = OFS = "," } NR == 1 { print; next }
      $3 == "cc1plus" { $4 = sprintf("%.4f", $4 + 2.8496); $5 = sprintf("%.4f", $4 + 1); $6 = $6 + 0.25 }
      $3 == "cc1plus" && ends == "some" && NR % 7 == 0 { $5 = "" }
      $3 == "cc1plus" && NR % 11 == 0 { $4 = "" }
      { print }' "$d/2000.procs.csv" >"$d/odd-$ends.procs.csv"
  done
  [ "$(grep -c '^[^,]*,[^,]*,cc1plus,[^,]*\.[0-9]\{4\},' "$d/odd-all.procs.csv")" -gt 200 ]
  local args
  for ends in all some; do
    for args in "--json --top 10" "" "--markdown"; do
      # shellcheck disable=SC2086  # the options, word-split on purpose
      held=$(RM_SUMMARIZE_HOLD=1 rm-summarize $args "$d/sys.csv" "$d/odd-$ends.procs.csv")
      # shellcheck disable=SC2086
      folded=$(rm-summarize $args "$d/sys.csv" "$d/odd-$ends.procs.csv")
      [ "$held" = "$folded" ]
    done
  done
  # The figures are there to compare: two compilers alive at once (the
  # 0.4 ms), a p95.
  folded=$(rm-summarize --json --top 10 "$d/sys.csv" "$d/odd-all.procs.csv")
  jq -e '[.memory_per_job[] | .p95_rss_kib] | length > 0' <<<"$folded"
  jq -c '[.system.stages[] | .max_build_compilers]' <<<"$folded"
  [ "$(jq -c '[.system.stages[] | .max_build_compilers] | max' <<<"$folded")" = 2 ]
}

@test "a unit's runs on a log of reused PIDs: each compile once per driver, as a walk over every row counts them, held or folded" {
  local d=$BATS_TEST_TMPDIR
  # 60,000 rows on 30,000 PIDs: every cc1plus is read before its clang
  # (its parent, of the same unit, the next row), and the last row read on
  # that PID is an older process's, ended 1,750 s before.
  exitlog_pair "$d" 60000
  # The reference: every shown row in memory; a row's parent is the row of
  # its parent PID that started no later and had not ended before it
  # started; a unit's run is a row of it with a peak and no ancestor of it.
  "$PY" - "$d/60000.procs.csv" >"$d/want" <<'PY'
import collections, csv, re, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["scope"] != "out"]
num = lambda x: float(x) if x else float("nan")
unit = lambda r: (re.search(r"(\S+\.cpp)", r["cmd"]) or [None, None])[1]
bypid = collections.defaultdict(list)
for r in rows:
    bypid[r["pid"]].append(r)
def parent(c):
    s = num(c["start_s"])
    for p in bypid.get(c["ppid"], []):
        if p is not c and num(p["start_s"]) <= s and not num(p["end_s"]) < s:
            return p
runs = collections.Counter()
for r in rows:
    u = unit(r)
    if not u or not r["peak_rss_kib"]:
        continue
    c = r
    for _ in range(64):
        c = parent(c)
        if c is None or unit(c) == u:
            break
    if c is None or unit(c) != u:
        runs[u] += 1
for u in sorted(runs):
    print(u, runs[u])
PY
  [ "$(wc -l <"$d/want")" -eq 1000 ]
  [ "$(awk '{ n += $2 } END { print n }' "$d/want")" -eq 7500 ]
  # Folded (--top 10) and held (RM_SUMMARIZE_HOLD): the same counts.
  local how
  for how in "" 1; do
    RM_SUMMARIZE_HOLD=$how rm-summarize --json --top 10 "$d/sys.csv" "$d/60000.procs.csv" |
      jq -r '.compile_units[] | "\(.unit) \(.count)"' | sort >"$d/got"
    diff "$d/want" "$d/got"
  done
}

@test "filters on a held exit log cost about what reading it does: each name is looked up once, not against every heavier row" {
  local d=$BATS_TEST_TMPDIR n=100000 plain filt
  exitlog_pair "$d" "$n"
  # CPU in ms of one run (user + system: steady on a busy machine).
  cpu_ms() {
    /usr/bin/time -f '%U %S' -o "$d/t" "$@" >/dev/null
    awk '{ printf "%d", ($1 + $2) * 1000 }' "$d/t"
  }
  # RM_SUMMARIZE_HOLD=1 (a test knob) holds every row, as --compare and
  # --fail-on do; --include leaves 90 % out.
  plain=$(cpu_ms env RM_SUMMARIZE_HOLD=1 rm-summarize --json "$d/sys.csv" "$d/$n.procs.csv")
  filt=$(cpu_ms env RM_SUMMARIZE_HOLD=1 rm-summarize --json --include sh1 "$d/sys.csv" "$d/$n.procs.csv")
  echo "CPU: $plain ms unfiltered, $filt ms with --include" >&3
  ((filt < 2 * plain + 200))
}

@test "--markdown: tables for a CI job summary" {
  run -0 rm-summarize --markdown "$F/seed-build.csv"
  [[ "$output" == "### Build resources: "* ]]
  [[ "$output" == *"| peak | value | at | stage | context |"* ]]
  [[ "$output" == *"| max memory used | 14500 MiB (90.6 %) | +0:01:30 | torch | \[ 412/6233\] Building CXX object aten/src/ATen/native/BatchLinearAlgebra.cpp.o |"* ]]
  [[ "$output" == *"| torch | 0:01:15 | 5 | 14500 | 1500 | 25.00 | 8 | 3 |"* ]]
}

@test "--svg: well-formed XML that renders to a non-blank PNG" {
  local svg="$BATS_TEST_TMPDIR/t.svg" png="$BATS_TEST_TMPDIR/t.png"
  run -0 rm-summarize --svg "$svg" "$F/oom-kills.csv"
  "$PY" -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag.endswith("svg"), r.tag' "$svg"
  # Self-contained: no scripts, no links to anything outside.
  ! grep -Eq '<script|href=|url\(' "$svg"
  grep -q 'OOM' "$svg"
  rsvg-convert -o "$png" "$svg"
  # Decode the PNG and count distinct pixel values: a blank page has one.
  run -0 png_bytes "$png"
  read -r w h distinct <<<"$output"
  [ "$w" -eq 1000 ] && [ "$distinct" -gt 20 ]
}

@test "--svg with hostile stage and context text stays well-formed" {
  local csv="$BATS_TEST_TMPDIR/h.csv" svg="$BATS_TEST_TMPDIR/h.svg"
  printf 'epoch,mem_used_mb,mem_avail_mb,stage,context\n' >"$csv"
  printf '1,100,200,"<b>&amp;""x""</b>","\033[31mred\033[0m \377\376 ]]> <!--"\n' >>"$csv"
  printf '2,300,100,"<b>&amp;""x""</b>",plain\n' >>"$csv"
  run -0 rm-summarize --svg "$svg" "$csv"
  "$PY" -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$svg"
  [[ "$output" != *$'\033'* ]]
}

@test "rm-tree files: job peak, largest process, groups, compile units" {
  run -0 rm-summarize "$F/exitlog.csv" "$F/job.csv" "$F/timeline.csv"
  [[ "$output" == *"Job: make -j2"* ]]
  [[ "$output" == *"peak memory (sampled tree total) 683.6 MiB at +11.00 s"* ]]
  [[ "$output" == *"peak memory (exact, cgroup)      703.1 MiB"* ]]
  [[ "$output" == *"largest single process (exact)   600.0 MiB"* ]]
  [[ "$output" == *"Processes: 7, 11.11 s CPU in all, largest 600.0 MiB (cc1plus)"* ]]
  [[ "$output" == *"  cc1plus              3            600.0       9.60"* ]]
  [[ "$output" == *"       600.0  -                cc1plus    src/big.cpp (x2)"* ]]
  [[ "$output" == *"       256.0  -                ld         app"* ]]
  run -0 rm-summarize --json "$F/exitlog.csv" "$F/job.csv"
  run -0 jq -c '[.job.peak_rss_kib, .job.cgroup_peak_kib, .processes.count, .processes.top[0].peak_at_s, .memory_per_job[0].p95_rss_kib, .memory_per_job[0].suggest_mb_per_job]' <<<"$output"
  [ "$output" = '[700000,720000,7,11,614400,640]' ]
}

@test "a link's driver chain (collect2 and its ld, both of unit app) is one unit, counted once; two links twice" {
  local f="$BATS_TEST_TMPDIR/link.csv"
  {
    printf 'pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd\n'
    printf '200,1,g++,1.000,2.000,2620,1.500,0.00,0,g++ -o app a.o b.o\n'
    printf '201,200,collect2,1.010,1.990,1908,1.500,0.00,0,/usr/lib/gcc/x86_64-linux-gnu/12/collect2 -o app a.o b.o\n'
    printf '202,201,ld,1.020,1.980,19408,1.500,0.15,0,/usr/bin/ld -o app a.o b.o\n'
  } >"$f"
  run -0 rm-summarize "$f"
  [[ "$output" == *"        19.0  -                ld         app"$'\n'* ]]
  [[ "$output" != *"(x2)"* ]]
  # The same link again (a relink): two of unit app.
  printf '300,1,ld,3.000,4.000,20000,3.500,0.15,0,/usr/bin/ld -o app a.o b.o\n' >>"$f"
  run -0 rm-summarize "$f"
  [[ "$output" == *"        19.5  -                ld         app (x2)"* ]]
}

@test "one job peak, one time: the Timeline line and timeline.peak_at_s are the peak row's elapsed_s, whatever the wall clock did" {
  local tl="$BATS_TEST_TMPDIR/tl.csv"
  # The first row's wall time 4.7 s later than its elapsed_s says (a slow first
  # scan under load, as rm-tree wrote it before): the peak's time is still +11.00 s.
  {
    printf 'epoch,iso,elapsed_s,procs,rss_kib,cpu_pct\n'
    printf '1700002004.700,2023-11-14T22:46:44.700Z,0.000,1,4096,5.0\n'
    printf '1700002011.000,2023-11-14T22:46:51.000Z,11.000,3,700000,190.0\n'
    printf '1700002020.000,2023-11-14T22:47:00.000Z,20.000,1,4096,5.0\n'
  } >"$tl"
  run -0 rm-summarize "$F/exitlog.csv" "$F/job.csv" "$tl"
  [[ "$output" == *"peak memory (sampled tree total) 683.6 MiB at +11.00 s"* ]]
  [[ "$output" == *"peak tree total 683.6 MiB at +11.00 s"* ]]
  run -0 rm-summarize --json "$F/exitlog.csv" "$F/job.csv" "$tl"
  run -0 jq -c '[.job.peak_at_s, .timeline.peak_at_s]' <<<"$output"
  [ "$output" = '[11,11]' ]
}

@test "--include and --exclude change what is shown, never the totals" {
  run -0 rm-summarize --json --include '^cc1' "$F/exitlog.csv"
  run -0 jq -c '[.processes.count, .processes.matching, .processes.cpu_s, [.processes.top[].pid], [.groups[].comm]]' <<<"$output"
  [ "$output" = '[7,3,11.11,[106,101,102],["cc1plus"]]' ]
  run -0 rm-summarize --json --exclude 'cc1plus|make' "$F/exitlog.csv"
  run -0 jq -c '[.processes.count, [.processes.top[].comm]]' <<<"$output"
  [ "$output" = '[7,["ld","as","a (b) c"]]' ]
  run -2 --separate-stderr rm-summarize --include '(' "$F/exitlog.csv"
  [[ "$stderr" == "rm-summarize: invalid --include '(': "* ]]
  [[ "$stderr" == *$'\nusage: rm-summarize '* ]]
}

@test "--csv: per-process peaks as valid CSV, heaviest first" {
  local out="$BATS_TEST_TMPDIR/p.csv"
  run -0 rm-summarize --csv "$out" "$F/exitlog.csv"
  [ "$(csv_cols "$out")" = 12 ]
  [ "$(csv_get "$out" pid 1)" = 106 ]
  [ "$(csv_get "$out" unit 1)" = src/big.cpp ]
  [ "$(csv_get "$out" cmd 7)" = 'weird "name", with comma' ]
}

# --csv and --trace list every row, so a long build's are sorted on
# disk (spill.c): runs of RM_SUMMARIZE_SPILL_KIB (64 here, a dozen runs)
# in an unnamed temporary file in $TMPDIR, merged as written.  Where no
# temporary file can be made or written, one warning, the same files.
@test "--csv and --trace of a long log: sorted in runs on disk and merged, the same files as sorted in memory, nothing named in TMPDIR; a full or missing TMPDIR warns and loses nothing" {
  local d=$BATS_TEST_TMPDIR mnt=$BATS_TEST_TMPDIR/fs
  exitlog_pair "$d" 20000
  mkdir "$d/tmp"
  RM_SUMMARIZE_SPILL_KIB=1000000 rm-summarize --csv "$d/mem.csv" --trace "$d/mem.json" "$d/sys.csv" "$d/20000.procs.csv" >/dev/null
  TMPDIR=$d/tmp RM_SUMMARIZE_SPILL_KIB=64 strace -f -o "$d/st" -e trace=openat,pwrite64 \
    rm-summarize --csv "$d/disk.csv" --trace "$d/disk.json" "$d/sys.csv" "$d/20000.procs.csv" >/dev/null
  cmp "$d/mem.csv" "$d/disk.csv"
  cmp "$d/mem.json" "$d/disk.json"
  # One unnamed file a sort, written in runs; nothing left in the directory.
  [ "$(grep -c "openat(AT_FDCWD, \"$d/tmp\", O_RDWR|O_EXCL|O_CLOEXEC|O_TMPFILE" "$d/st")" -eq 2 ]
  (($(grep -c '^[0-9]* *pwrite64(' "$d/st") > 20))
  [ -z "$(ls -A "$d/tmp")" ]
  # Heaviest first, ties by PID: every row of the log in scope.
  python3 - "$d/disk.csv" "$d/20000.procs.csv" <<'PY'
import csv, sys
got = [(float(r["peak_rss_kib"]), int(r["pid"])) for r in csv.DictReader(open(sys.argv[1]))]
want = sorted(((float(r["peak_rss_kib"]), int(r["pid"])) for r in csv.DictReader(open(sys.argv[2]))
               if r["scope"] != "out"), key=lambda x: (-x[0], x[1]))
assert got == want, (len(got), len(want))
PY
  # No temporary file to be made: a warning, the same file.  (Not under
  # make check VALGRIND=1: valgrind makes its own files in TMPDIR.)
  if ! under_valgrind; then
    run -0 --separate-stderr env TMPDIR="$d/none" RM_SUMMARIZE_SPILL_KIB=64 \
      rm-summarize --csv "$d/none.csv" "$d/sys.csv" "$d/20000.procs.csv"
    [ "$stderr" = "rm-summarize: warning: cannot make a temporary file in '$d/none' (No such file or directory): the rows to sort are held in memory" ]
    cmp "$d/mem.csv" "$d/none.csv"
  fi
  # A full one: the runs written so far are kept, the rest held.
  mkdir -p "$mnt"
  mount -t tmpfs -o size=256k rm-sum "$mnt" 2>"$d/mount.err" ||
    skip_needs_root "cannot mount a tmpfs here: $(cat "$d/mount.err")" 21
  run -0 --separate-stderr env TMPDIR="$mnt" RM_SUMMARIZE_SPILL_KIB=64 \
    rm-summarize --csv "$d/full.csv" "$d/sys.csv" "$d/20000.procs.csv"
  umount "$mnt"
  [ "$stderr" = "rm-summarize: warning: cannot write to a temporary file in '$mnt' (No space left on device): the rows to sort are held in memory" ]
  cmp "$d/mem.csv" "$d/full.csv"
}

@test "colour only on a terminal, never with NO_COLOR" {
  run -0 rm-summarize "$F/seed-build.csv"
  [[ "$output" != *$'\033['* ]]
  run -0 script -qec "rm-summarize '$F/seed-build.csv'" /dev/null
  [[ "$output" == *$'\033[1m'* ]]
  NO_COLOR=1 run -0 script -qec "rm-summarize '$F/seed-build.csv'" /dev/null
  [[ "$output" != *$'\033['* ]]
}

@test "several system CSVs: one report each, one JSON object a line" {
  run -0 rm-summarize --json "$F/seed-build.csv" "$F/oom-kills.csv" "$F/exitlog.csv"
  [ "$(wc -l <<<"$output")" -eq 2 ]
  run -0 jq -sc '[.[] | [.system.format, (.processes != null)]]' <<<"$output"
  [ "$output" = '[["seed",false],["rm-sample",true]]' ]
}

@test "usage errors exit 2" {
  run -2 --separate-stderr rm-summarize
  [[ "$stderr" == "rm-summarize: no input files"* ]]
  run -2 --separate-stderr rm-summarize --json --markdown "$F/seed-build.csv"
  run -2 --separate-stderr rm-summarize --near-oom-mb lots "$F/seed-build.csv"
  [[ "$stderr" == "rm-summarize: invalid --near-oom-mb 'lots'"* ]]
  run -0 rm-summarize --help
  [[ "$output" == "usage: rm-summarize "* ]]
}

@test "an rm-energy stream CSV: energy only, no memory verdict" {
  local csv="$BATS_TEST_TMPDIR/energy.csv"
  printf '%s\n' 'epoch,elapsed_s,pkg_w,dram_w,pkg_j,dram_j' '100.000,0.000,,,,' \
    '101.000,1.000,20.5,3.0,20.5,3.0' '102.000,2.000,30.0,3.0,50.5,6.0' >"$csv"
  run -0 rm-summarize "$csv"
  [[ "$output" == *"(rm-energy CSV)"* ]]
  [[ "$output" == *"Energy: 50 J over 2 s, mean 25.2 W, peak 30.0 W at +0:00:02"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  [[ "$output" != *"OOM kills"* ]]
}

@test "--rows-lost: the run's unwritten rows in text, JSON and Markdown; exits are numbers; a flat disk is never full" {
  run -0 rm-summarize --rows-lost 52 --rows-lost-from 2026-12-02T13:00:00.250Z "$FIXTURES/summarize/seed-build.csv"
  [[ "$output" == *"52 rows lost from 2026-12-02T13:00:00.250Z"* ]]
  run -0 rm-summarize --markdown --rows-lost 52 --rows-lost-from 2026-12-02T13:00:00.250Z "$FIXTURES/summarize/seed-build.csv"
  [[ "$output" == *"52 rows lost from 2026-12-02T13:00:00.250Z"* ]]
  run -0 rm-summarize --json --rows-lost 52 --rows-lost-from 2026-12-02T13:00:00.250Z "$FIXTURES/summarize/seed-build.csv"
  [[ "$(jq -c '[.rows_lost, .rows_lost_from]' <<<"$output")" == '[52,"2026-12-02T13:00:00.250Z"]' ]]
  run -0 rm-summarize --json "$FIXTURES/summarize/seed-build.csv"
  [[ "$(jq -c '[.rows_lost, .rows_lost_from]' <<<"$output")" == '[null,null]' ]]
  run -2 --separate-stderr rm-summarize --rows-lost-from 'x;y' "$FIXTURES/summarize/seed-build.csv"
  [[ "${stderr_lines[0]}" == "rm-summarize: invalid --rows-lost-from 'x;y'"* ]]
  # exit statuses are JSON numbers (or null for a process still running).
  run -0 rm-summarize --json "$FIXTURES/summarize/exitlog.csv" "$FIXTURES/summarize/job.csv"
  [[ "$(jq -r '[.job.exit, (.processes.top[].exit)] | map(type) | unique | join(",")' <<<"$output")" =~ ^(null,)?number$ ]]
  # A disk whose free space does not fall has no time to full.
  rm-sample -i 0.02 -n 4 >"$BATS_TEST_TMPDIR/flat2.csv"
  run -0 rm-summarize --json "$BATS_TEST_TMPDIR/flat2.csv"
  [[ "$(jq -c '.system.disk.hours_to_full' <<<"$output")" == null ]]
}

@test "a pipe, a FIFO, <(...), /dev/stdin and - read as the file itself (each input read once)" {
  local want f="$F/seed-build.csv" fifo="$BATS_TEST_TMPDIR/fifo"
  want=$(rm-summarize --json "$f" | jq -c 'del(.files, .system.file)')
  run -0 --separate-stderr bash -c 'rm-summarize --json <(cat "$1")' _ "$f"
  [ "$(jq -c 'del(.files, .system.file)' <<<"$output")" = "$want" ]
  run -0 --separate-stderr bash -c 'cat "$1" | rm-summarize --json -' _ "$f"
  [ "$(jq -c 'del(.files, .system.file)' <<<"$output")" = "$want" ]
  run -0 --separate-stderr bash -c 'cat "$1" | rm-summarize --json /dev/stdin' _ "$f"
  [ "$(jq -c 'del(.files, .system.file)' <<<"$output")" = "$want" ]
  mkfifo "$fifo"
  (cat "$f" >"$fifo" &)
  run -0 --separate-stderr timeout 20 rm-summarize --json "$fifo"
  [ "$(jq -c 'del(.files, .system.file)' <<<"$output")" = "$want" ]
  # A system CSV and an exit log, both through pipes, in one report.
  run -0 --separate-stderr bash -c 'rm-summarize <(cat "$1") <(cat "$2")' _ "$f" "$F/exitlog.csv"
  [[ "$output" == *"(seed monitor CSV)"* ]]
  [[ "$output" == *"Processes: 7, 11.11 s CPU in all, largest 600.0 MiB (cc1plus)"* ]]
  # An empty pipe is what it says; '-' twice is refused.
  run -1 --separate-stderr bash -c ': | rm-summarize -'
  [ "$stderr" = "rm-summarize: '-': empty file; not a CSV" ]
  run -2 --separate-stderr bash -c 'rm-summarize - - </dev/null'
  [ "${stderr_lines[0]}" = "rm-summarize: '-' (standard input) given twice" ]
}

@test "--svg and --csv refuse to overwrite an input, or each other, and leave it whole" {
  mkdir "$BATS_TEST_TMPDIR/w"
  cp "$F/seed-build.csv" "$BATS_TEST_TMPDIR/w/run.csv"
  cp "$F/exitlog.csv" "$BATS_TEST_TMPDIR/w/el.csv"
  cd "$BATS_TEST_TMPDIR/w"
  run -2 --separate-stderr rm-summarize --svg run.csv run.csv
  [ "${stderr_lines[0]}" = "rm-summarize: --svg 'run.csv' is an input file; not overwritten" ]
  cmp run.csv "$F/seed-build.csv"
  # Another name of the same file (a hard link, ./) is the same file.
  ln el.csv el-link.csv
  run -2 --separate-stderr rm-summarize --csv ./el-link.csv run.csv el.csv
  [ "${stderr_lines[0]}" = "rm-summarize: --csv 'el.csv' is an input file; not overwritten" ]
  cmp el.csv "$F/exitlog.csv"
  run -2 --separate-stderr rm-summarize --svg out --csv ./out run.csv el.csv
  [ "${stderr_lines[0]}" = "rm-summarize: --svg and --csv name the same file" ]
  [ ! -e out ]
  # A symlink at the output is refused in the shared words, its target kept.
  ln -s run.csv link.svg
  run -1 --separate-stderr rm-summarize --svg link.svg "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: cannot write 'link.svg': a symbolic link, not followed" ]
  cmp run.csv "$F/seed-build.csv"
  # --svg - and /dev/stdout write to standard output, never renamed onto.
  run -0 --separate-stderr bash -c 'rm-summarize --svg - "$1" >/dev/null; rm-summarize --svg /dev/stderr "$1" 2>&1 >/dev/null | head -c 5' _ run.csv
  [ "$output" = "<?xml" ] || [ "$output" = "<svg " ]
  # Written through a temporary file: nothing else is left in the directory.
  run -0 rm-summarize --svg new.svg --csv new.csv run.csv el.csv
  run -0 bash -c 'ls -A | sort | tr "\n" " "'
  [ "$output" = "el-link.csv el.csv link.svg new.csv new.svg run.csv " ]
}

@test "--svg onto an existing file on a full filesystem: exit 1, the old file whole" {
  local mnt="$BATS_TEST_TMPDIR/fs"
  mkdir -p "$mnt"
  mount -t tmpfs -o size=16k rm-sum "$mnt" 2>"$BATS_TEST_TMPDIR/mount.err" ||
    skip_needs_root "cannot mount a tmpfs here: $(cat "$BATS_TEST_TMPDIR/mount.err")" 21
  printf 'OLD SVG\n' >"$mnt/old.svg"
  dd if=/dev/zero of="$mnt/fill" bs=1k count=64 2>/dev/null || true
  run -1 --separate-stderr rm-summarize --svg "$mnt/old.svg" "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: cannot write '$mnt/old.svg': No space left on device" ]
  [ "$(cat "$mnt/old.svg")" = "OLD SVG" ]
  run -0 bash -c 'ls -A "$1" | sort | tr "\n" " "' _ "$mnt"
  [ "$output" = "fill old.svg " ]
  umount "$mnt"
}

# --csv and --trace write as they go: a disk that fills part-way through
# leaves the old files whole and nothing else behind.
@test "--csv and --trace onto existing files on a filesystem that fills part-way: exit 1, the old files whole" {
  local d=$BATS_TEST_TMPDIR mnt="$BATS_TEST_TMPDIR/fs"
  exitlog_pair "$d" 20000
  mkdir -p "$mnt"
  mount -t tmpfs -o size=512k rm-sum "$mnt" 2>"$d/mount.err" ||
    skip_needs_root "cannot mount a tmpfs here: $(cat "$d/mount.err")" 21
  printf 'OLD CSV\n' >"$mnt/old.csv"
  printf 'OLD TRACE\n' >"$mnt/old.json"
  run -1 --separate-stderr rm-summarize --csv "$mnt/old.csv" "$d/sys.csv" "$d/20000.procs.csv"
  [ "$stderr" = "rm-summarize: cannot write '$mnt/old.csv': No space left on device" ]
  run -1 --separate-stderr rm-summarize --trace "$mnt/old.json" "$d/sys.csv" "$d/20000.procs.csv"
  [ "$stderr" = "rm-summarize: cannot write '$mnt/old.json': No space left on device" ]
  [ "$(cat "$mnt/old.csv")" = "OLD CSV" ]
  [ "$(cat "$mnt/old.json")" = "OLD TRACE" ]
  run -0 bash -c 'ls -A "$1" | sort | tr "\n" " "' _ "$mnt"
  [ "$output" = "old.csv old.json " ]
  umount "$mnt"
}

@test "an unterminated quote is an error naming the line where it opened, not one swallowed row (exit 1)" {
  local f="$BATS_TEST_TMPDIR/uq.csv"
  # Row 4 opens a quote that never closes; 10 rows follow it.
  awk -F, -v OFS=, 'NR == 4 { $14 = "\"" $14 } { print }' "$F/seed-build.csv" >"$f"
  run -1 --separate-stderr rm-summarize "$f"
  [ "$stderr" = "rm-summarize: '$f': line 4: a quoted field opened here is never closed (at the end of the file or after 64 KiB); not a CSV this toolkit writes" ]
  [ -z "$output" ]
  # Quoted line feeds within the limit stay legal.
  awk -F, -v OFS=, 'NR == 4 { $14 = "\"two\nlines\"" } { print }' "$F/seed-build.csv" >"$f"
  run -0 rm-summarize "$f"
  [[ "$output" == *"12 samples"* ]]
}

@test "CR-only line ends (old Mac text) get a message that says so" {
  local f="$BATS_TEST_TMPDIR/mac.csv"
  tr '\n' '\r' <"$F/seed-build.csv" >"$f"
  run -1 --separate-stderr rm-summarize "$f"
  [ "$stderr" = "rm-summarize: '$f': line 1: lines end in a lone CR (old Mac text), not LF or CRLF; convert it with tr '\\r' '\\n'" ]
}

# stepped FILE: 12 rows a second apart on elapsed_s, with the wall clock
# stepped back a day after the 6th (an NTP step, a VM restore).
stepped() {
  awk 'BEGIN {
    print "epoch,iso,elapsed_s,mem_used_mb,mem_avail_mb,stage,pkg_w"
    for (i = 0; i < 12; i++) {
      e = 1700000000 + i - (i >= 6 ? 86400 : 0)
      printf "%d.000,x,%d.000,%d,%d,%s,10\n", e, i, 1000 + i, 9000 - i, i < 6 ? "compile" : "link"
    }
  }' >"$1"
}

@test "a wall-clock step mid-run: durations, rates, stages and energy from elapsed_s, never negative" {
  local f="$BATS_TEST_TMPDIR/jump.csv"
  stepped "$f"
  run -0 --separate-stderr rm-summarize "$f"
  [[ "$output" == *"2023-11-14T22:13:20.000Z to 2023-11-14T22:13:31.000Z (11.0 s), 12 samples, every 1.00 s"* ]]
  run -0 --separate-stderr rm-summarize --json "$f"
  [ "$(jq -c '[.system.duration_s, .system.end.elapsed_s]' <<<"$output")" = "[11,11]" ]
  # The stage table adds up to the run; energy is 10 W over 11 s.
  [ "$(jq '[.system.stages[].duration_s] | add' <<<"$output")" = 11 ]
  [ "$(jq '.system.energy.joules' <<<"$output")" = 110 ]
  # Two runs appended to one file (elapsed_s starts again): each keeps
  # its own origin, the second placed by its own epoch.
  stepped "$f"
  awk -F, -v OFS=, 'NR > 1 { $1 = $1 + 3600 } { print }' "$f" | tail -n +2 >>"$f"
  run -0 --separate-stderr rm-summarize --json "$f"
  [ "$(jq -c '[.system.duration_s, .system.samples]' <<<"$output")" = "[3611,24]" ]
}

@test "CSVs without elapsed_s (the seed's) time by epoch; impossible epochs are skipped, never printed as a year -292275055" {
  local f="$BATS_TEST_TMPDIR/odd.csv"
  head -3 "$F/seed-build.csv" >"$f"
  # Epochs no clock can give, as a hostile or broken file holds them.
  sed -n 4p "$F/seed-build.csv" | sed 's/^[0-9]*/99999999999999999/' >>"$f"
  sed -n 5p "$F/seed-build.csv" | sed 's/^[0-9]*/-99999999999999999/' >>"$f"
  tail -n +6 "$F/seed-build.csv" >>"$f"
  run -0 --separate-stderr rm-summarize "$f"
  [[ "$output" == *"2023-11-14T22:13:20.000Z to 2023-11-14T22:16:05.000Z (2m45s), 10 samples"* ]]
  [[ "$output" == *"note     2 rows without a time (epoch) were skipped"* ]]
  [[ "$output" != *"-292275055"* ]]
  run -0 --separate-stderr rm-summarize --json "$f"
  [ "$(jq -c '[.system.duration_s, .system.skipped_rows]' <<<"$output")" = "[165,2]" ]
}

@test "oom_kills from hostile input: the total saturates instead of overflowing" {
  local f="$BATS_TEST_TMPDIR/oom.csv"
  awk 'BEGIN {
    print "epoch,elapsed_s,mem_avail_mb,oom_kills"
    for (i = 0; i < 400; i++) printf "%d,%d,9000,%s\n", 1700000000 + i, i, i % 2 ? "99999999999999999" : "0"
  }' >"$f"
  run -0 --separate-stderr rm-summarize "$f"
  [[ "$output" == *"OOM kills: 9223372036854775807"* ]]
  [ -z "$stderr" ]
  run -0 --separate-stderr rm-summarize --json "$f"
  # (jq would round it to a double: the text as printed.)
  [[ "$output" == *'"oom_kills":{"count":9223372036854775807,'* ]]
}

# Exact rows of processes no tick met have no peak_at_s (the kernel gives
# the high-water mark at exit, not when): found on a real build, where
# 1,533 of its compilers fell into a "(none)" stage.
@test "an exact row with no peak_at_s is charged to the stage it ended in" {
  local d="$BATS_TEST_TMPDIR"
  "$PY" - "$d" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/sys.csv", "w") as f:
    f.write("epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context\n")
    for i in range(20):
        st = "configure" if i < 10 else "make"
        f.write(f"{1796281768 + i}.000,2026-12-03T07:09:{28 + i:02d}.000Z,{i}.000,1.0,50.0,400,23000,2.0,0,79.00,17,0,{st},\n")
with open(d + "/procs.csv", "w") as f:
    f.write("pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,scope\n")
    for k in range(2):
        f.write(f"{100 + k},1,cc1,2.{k}00,2.{k}50,20480,,0.05,0,conftest.c,0,0,0,,,,,,exact,in\n")
    for k in range(4):
        f.write(f"{200 + k},1,cc1,12.{k}00,13.{k}00,40960,,0.90,0,cc1 -quiet src/x{k}.c -o x{k}.s,0,0,0,,,,,,exact,in\n")
PY
  run -0 rm-summarize "$d/sys.csv" "$d/procs.csv"
  [[ "$output" =~ "configure "\ +2\  ]]
  [[ "$output" =~ "make "\ +4\  ]]
  [[ "$output" != *"(none)"* ]]
  [[ "$output" =~ "40.0  make "\ +"cc1 "\ +"src/x0.c" ]]
}

@test "--kmsg: nothing past 256 MiB is read (a sparse 300 MiB log after a real record), said once, exit 0 (reliability.md's bound)" {
  under_valgrind && skip "reads 256 MiB: minutes under memcheck"
  local F="$FIXTURES/summarize/scope" k="$BATS_TEST_TMPDIR/big.kmsg"
  cp "$F/memcg-build.kmsg" "$k"
  truncate -s 300M "$k"
  run -0 --separate-stderr timeout 120 rm-summarize --kmsg "$k" "$F/memcg-build.csv"
  [ "$stderr" = "rm-summarize: --kmsg '$k': over 256 MiB, not read further" ]
  [[ "$output" == *"(kernel log: over 256 MiB, not read further)"* ]]
}

# Readings that were never recorded.

# sys_csv FILE MEM_AVAIL SWAP DISK_AVAIL: three rm-sample rows with those
# values (empty for no reading).
sys_csv() {
  local i
  {
    echo 'epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,oom_kills'
    for i in 0 1 2; do
      echo "$((1796283588 + i)),x,$i,1,5,400,$2,2,$3,$4,${4:+19},0,,,0"
    done
  } >"$1"
}

@test "rm-summarize: available memory not recorded, swap in use: 'not recorded', never nan, in text, Markdown and JSON" {
  local f="$BATS_TEST_TMPDIR/noavail.csv"
  sys_csv "$f" "" 100 50
  run -0 rm-summarize "$f"
  [[ "$output" != *nan* ]]
  [[ "$output" == *"OOM edge: swap in use up to 100 MiB (available memory not recorded), at +0:00:00."* ]]
  [[ "$output" == *"Near-OOM (available below 4096 MiB): not recorded"* ]]
  run -0 rm-summarize --markdown "$f"
  [[ "$output" != *nan* ]]
  [[ "$output" == *"Near-OOM below 4096 MiB available: not recorded."* ]]
  [[ "$output" == *"(available memory not recorded)"* ]]
  [[ "$output" == *"| (none) | 0:00:02 | 3 | 400 | - | 50.00 | 0 | 0 |"* ]]
  run -0 rm-summarize --json "$f"
  [[ "$output" != *[Nn]a[Nn]* ]]
  jq -e '.system.near_oom.samples == null and .system.low_disk.samples == 0' <<<"$output" >/dev/null
  jq -e '.verdicts[0].text | test("available memory not recorded")' <<<"$output" >/dev/null
}

@test "rm-summarize: no disk readings: 'disk not recorded', never 'disk above N GiB' nor a low-disk count" {
  local f="$BATS_TEST_TMPDIR/nodisk.csv"
  sys_csv "$f" 20000 0 ""
  run -0 rm-summarize "$f"
  [[ "$output" != *"disk above"* && "$output" != *nan* ]]
  [[ "$output" == *"No headroom problem: available memory stayed above 4096 MiB, no swap in use, no OOM kill, disk not recorded."* ]]
  [[ "$output" == *"Low disk (available below 20 GiB): not recorded"* ]]
  run -0 rm-summarize --markdown "$f"
  [[ "$output" != *"disk above"* && "$output" != *nan* ]]
  [[ "$output" == *"Low disk below 20 GiB: not recorded."* ]]
  [[ "$output" == *"| (none) | 0:00:02 | 3 | 400 | 20000 | - | 0 | 0 |"* ]]
  run -0 rm-summarize --json "$f"
  jq -e '.system.low_disk.samples == null and .system.near_oom.samples == 0' <<<"$output" >/dev/null
  jq -e '.verdicts[0].text | test("disk not recorded")' <<<"$output" >/dev/null
  # With readings, the same words as before.
  sys_csv "$f" 20000 0 50
  run -0 rm-summarize "$f"
  [[ "$output" == *"no OOM kill, disk above 20 GiB."* ]]
  [[ "$output" == *"Low disk (available below 20 GiB): 0 samples"* ]]
}

# The disk rate, fitted only over a long enough window.

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

@test "a FIFO with no writer as input reads as empty, and as -o with no reader is refused: neither waits for ever" {
  mkfifo "$BATS_TEST_TMPDIR/fifo"
  run -1 --separate-stderr timeout -s KILL 60 rm-summarize "$BATS_TEST_TMPDIR/fifo"
  [ "$stderr" = "rm-summarize: '$BATS_TEST_TMPDIR/fifo': empty file; not a CSV" ]
  run -1 --separate-stderr timeout -s KILL 60 rm-summarize -o "$BATS_TEST_TMPDIR/fifo" "$FIXTURES/fit/monitor.csv"
  [ "$stderr" = "rm-summarize: cannot write '$BATS_TEST_TMPDIR/fifo': a FIFO with no reader" ]
}

@test "--procs-gap: a process log with a gap is never called every process, in text, Markdown and JSON" {
  local S="$F/scope/two-builds" gap='process log (rm-tree) died at +0:00:02 (signal KILL), restarted at +0:00:03'
  # Without a gap, the same files are exact: every process, events lost counted.
  run -0 rm-summarize --companions "$S.csv"
  [[ "$output" == *$'\nProcess data: exact mode (proc connector, taskstats: every process, the kernel\'s own peaks); 0 events lost\n'* ]]
  run -0 rm-summarize --companions --procs-gap "$gap" "$S.csv"
  [[ "$output" == *$'\nProcess data: exact mode, INCOMPLETE: the process log (rm-tree) has a gap; 0 events lost (the last rm-tree\'s count)\n  '"$gap"$'\n'* ]]
  [[ "$output" == *$'\nGaps in sampling\n  '"$gap"* && "$output" != *"every process"* ]]
  run -0 rm-summarize --markdown --companions --procs-gap "$gap" "$S.csv"
  [[ "$output" == *$'\nProcess data: exact mode, **incomplete**: the process log (rm-tree) has a gap ('"$gap"$'), 0 events lost (the last rm-tree\'s count).'* ]]
  run -0 rm-summarize --json --companions --procs-gap "$gap" "$S.csv"
  jq -e --arg g "$gap" '.collection.complete == false and .collection.gaps == [$g]' <<<"$output"
  run -0 rm-summarize --json --companions "$S.csv"
  jq -e '.collection.complete == true and .collection.gaps == []' <<<"$output"
}
