#!/usr/bin/env bats
# rm-plot as a user runs it: a PNG of a monitor CSV or an rm-tree timeline
# through Debian's gnuplot, checked by decoding the file (signature, IHDR
# size, pixels), the script it prints (legend, disk axis, stage labels),
# columns found by name, hostile CSVs, and its errors.

# The built-in demo run (rm-demo: a real C++ build under rm-monitor), made
# once for the file: it takes a minute on a busy machine.
setup_file() {
  load test_helper/common
  export DEMO_DIR="$BATS_FILE_TMPDIR/demo"
  if [[ -x "$RM_TOP/bin/rm-demo" ]]; then
    rm-demo --out-dir "$DEMO_DIR" >"$BATS_FILE_TMPDIR/demo.log" 2>&1
    echo "$?" >"$BATS_FILE_TMPDIR/demo.status"
  fi
}

setup() {
  load test_helper/common
  MON="$FIXTURES/fit/monitor.csv"
  HOSTILE="$FIXTURES/plot/hostile.csv"   # fit/hostile.csv with an epoch column
  BUILD="$FIXTURES/plot/build.csv"       # 23m20s, 6 stages (3 narrow), disk 78-79.4 of 95 GiB
  TL="$FIXTURES/summarize/timeline.csv"
}

# png_info FILE: "WIDTH HEIGHT COLOURS" from the PNG's own bytes (the
# signature checked, IHDR read, IDAT inflated and unfiltered), or exit 1.
png_info() {
  "$PY" - "$1" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG: bad signature")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
        sys.exit("bad CRC in " + kind.decode())
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
if depth != 8 or interlace:
    sys.exit("unexpected depth %d / interlace %d" % (depth, interlace))
bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, i = bytearray(stride), set(), 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    colours.update(bytes(line[x:x + bpp]) for x in range(0, stride, bpp))
    prev = line
print(w, h, len(colours))
EOF
}

@test "--help prints the usage to stdout; --version; usage errors exit 2" {
  run -0 --separate-stderr rm-plot --help
  [[ "${lines[0]}" == "usage: rm-plot [--script] [--size WxH] [-o FILE.png] CSV" ]]
  [[ "$output" == *"--size WxH"* && -z "$stderr" ]]
  run -0 rm-plot --version
  [[ "$output" =~ ^rm-plot\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
  run -2 --separate-stderr rm-plot
  [[ "$stderr" == *"missing CSV"*$'\n'"usage: rm-plot "* && -z "$output" ]]
  run -2 --separate-stderr rm-plot --bogus "$MON"
  [[ "$stderr" == "rm-plot: unknown option '--bogus'"$'\n'"usage: rm-plot "* ]]
  run -2 --separate-stderr rm-plot --size 12 "$MON"
  [[ "$stderr" == *"invalid size '12'"* ]]
  run -2 --separate-stderr rm-plot --size 640x48 "$MON"
  [[ "$stderr" == *"invalid size '640x48'"* ]]
  run -2 --separate-stderr rm-plot "$MON" "$MON"
  [[ "$stderr" == *"unexpected argument"* ]]
  run -2 --separate-stderr rm-plot -o
  [[ "$stderr" == *"option '-o' needs an argument"* ]]
}

@test "rm-plot makes a PNG of a monitor CSV: signature, the size asked, many colours" {
  local d="$BATS_TEST_TMPDIR/out"
  mkdir "$d"
  run -0 --separate-stderr rm-plot --size 640x480 -o "$d/a.png" "$MON"
  [[ -z "$output" && -z "$stderr" ]]
  run -0 png_info "$d/a.png"
  read -r w h n <<<"$output"
  ((w == 640 && h == 480 && n > 1))
  # Another size is another image; no temporary file is left beside it.
  run -0 rm-plot --size=1000x700 --output="$d/b.png" "$MON"
  run -0 png_info "$d/b.png"
  [[ "$output" == "1000 700 "* ]]
  run -0 ls -A "$d"
  [[ "$output" == $'a.png\nb.png' ]]
}

@test "rm-plot makes a PNG of the built-in demo run" {
  [[ -f "$BATS_FILE_TMPDIR/demo.status" ]] || skip "rm-demo is not built yet"
  [[ "$(cat "$BATS_FILE_TMPDIR/demo.status")" == 0 ]] || {
    cat "$BATS_FILE_TMPDIR/demo.log"
    return 1
  }
  local csv="$DEMO_DIR/resources-demo.csv"
  run -0 --separate-stderr rm-plot --size 1000x750 -o "$BATS_TEST_TMPDIR/demo.png" "$csv"
  [[ -z "$stderr" ]]
  run -0 png_info "$BATS_TEST_TMPDIR/demo.png"
  read -r w h n <<<"$output"
  ((w == 1000 && h == 750 && n > 1))
  # Every stage change the demo went through is a dashed line, stages are
  # named, every name is one of its stages, and the compilers it ran are
  # drawn.
  run -0 rm-plot --script "$csv"
  local stages labels l
  [[ "$output" == *'title "compilers"'* ]]
  stages=$("$PY" -c 'import csv, sys
s = [r["stage"] for r in csv.DictReader(open(sys.argv[1])) if r["epoch"]]
print(len([1 for a, b in zip([""] + s, s) if a != b and b]))' "$csv")
  [[ "$(grep -c '^set arrow .*dashtype 2' <<<"$output")" == "$stages" ]]
  labels=$(sed -n "s/^set label '\([^']*\)' at .*/\1/p" <<<"$output")
  [[ -n "$labels" ]]
  while IFS= read -r l; do
    "$PY" -c 'import csv, sys
sys.exit(sys.argv[2] not in {r["stage"] for r in csv.DictReader(open(sys.argv[1]))})' "$csv" "$l" ||
      { echo "label '$l' is no stage"; return 1; }
  done <<<"$labels"
}

@test "the default PNG is the CSV's name with .png, 1200x900" {
  cp "$MON" "$BATS_TEST_TMPDIR/resources-r1.csv"
  run -0 rm-plot "$BATS_TEST_TMPDIR/resources-r1.csv"
  run -0 png_info "$BATS_TEST_TMPDIR/resources-r1.png"
  [[ "$output" == "1200 900 "* ]]
}

@test "--script prints a gnuplot script alone that gnuplot turns into the PNG" {
  run -0 --separate-stderr rm-plot --script --size 800x600 -o "$BATS_TEST_TMPDIR/s.png" "$MON"
  [[ "${lines[0]}" == "# rm-plot: gnuplot script for monitor.csv" && -z "$stderr" ]]
  [[ "$output" == *"set output '$BATS_TEST_TMPDIR/s.png'"* ]]
  [[ "$output" == *"size 800,600"* ]]
  # Nothing was drawn yet; the script alone makes the picture.
  [[ ! -e "$BATS_TEST_TMPDIR/s.png" ]]
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/s.gp"
  (cd / && gnuplot "$BATS_TEST_TMPDIR/s.gp")
  run -0 png_info "$BATS_TEST_TMPDIR/s.png"
  [[ "$output" == "800 600 "* ]]
}

@test "the script plots memory, swap, disk and CPU with the stages along the time axis" {
  run -0 rm-plot --script "$MON"
  [[ "$output" == *'layout 3,1'* ]]
  [[ "$output" == *'title "used"'* && "$output" == *'title "available"'* ]]
  [[ "$output" == *'title "swap used"'* && "$output" == *'title "disk available"'* ]]
  [[ "$output" == *'title "CPU"'* ]]
  [[ "$output" == *$'\nset label \'configure\' at 0, graph 1 '* ]]
  [[ "$output" == *$'\nset label \'compile \'\'aten\'\', part 1\' at 1.252, graph 1 '* ]]
  [[ "$output" == *$'\nset label \'link\' at 6.5, '*$'\nset label \'install\' at 9.5, '* ]]
  # One dashed line per stage change, at the row where it changed.
  run -0 grep -c '^set arrow from .*dashtype 2' <<<"$output"
  [[ "$output" == 4 ]]
  # One data line per CSV row (the stage held quoted commas).
  run -0 rm-plot --script "$MON"
  local rows
  rows=$(($(wc -l <"$MON") - 1))
  run -0 awk '/^\$data << EOD/{d=1;next} /^EOD/{d=0} d && !/^#/{n++} END{print n}' <<<"$output"
  [[ "$output" == "$rows" ]]
}

@test "columns are found by header name in any order, quoted line breaks and CRLF read" {
  # hostile.csv: columns reordered, an extra quoted column, contexts with
  # quoted commas and line breaks, CRLF, and a last row cut by a crash
  # (outside a quote: a quote still open at the end is an error).
  run -0 rm-plot --script "$HOSTILE"
  run -0 awk '/^\$data << EOD/{d=1;next} /^EOD/{d=0} d && !/^#/' <<<"$output"
  ((${#lines[@]} == 41))   # 40 rows and the one cut short, read as far as it goes
  # elapsed 0 s; used 1000 MiB, available 20000 MiB, no swap reading yet,
  # disk 50 GiB, CPU 10 %; the x axis in minutes for a 20-minute run.
  [[ "${lines[0]}" == "0 1000 20000 NaN 50 10 NaN NaN NaN" ]]
  [[ "${lines[39]}" == "1170 6850 12200 190 30.5 49 NaN NaN NaN" ]]
  [[ "${lines[40]}" == "1200 NaN NaN NaN NaN 1 NaN NaN NaN" ]]
  run -0 rm-plot --script "$HOSTILE"
  [[ "$output" == *'set xlabel "elapsed (minutes)"'* ]]
}

@test "hostile stage names reach gnuplot as safe strings" {
  run -0 rm-plot --script "$HOSTILE"
  local tics
  tics=$(grep '^set label' <<<"$output")
  # The escape sequence is gone, quotes doubled (a double quote is a
  # single one), invalid UTF-8 U+FFFD.
  [[ "$tics" == *"'build ''core'', ''x''' at 5, "* ]]
  [[ "$tics" == *"'link"$'\xc3\xa9\xef\xbf\xbd'"' at 10, "* ]]
  [[ "$output" != *$'\e'* ]]
  run -0 rm-plot -o "$BATS_TEST_TMPDIR/h.png" "$HOSTILE"
  run -0 png_info "$BATS_TEST_TMPDIR/h.png"
  read -r _ _ n <<<"$output"
  ((n > 1))
}

@test "a long stage name is cut without splitting a UTF-8 character" {
  {
    echo 'epoch,mem_used_mb,stage'
    printf '0,100,%s\n' "$(printf 'a%.0s' {1..38})ééé"
    printf '1,200,%s\n' "$(printf 'é%.0s' {1..30})"
  } >"$BATS_TEST_TMPDIR/long.csv"
  run -0 rm-plot --script "$BATS_TEST_TMPDIR/long.csv"
  local tics
  tics=$(grep '^set label' <<<"$output")
  # At most 40 bytes, then "~".
  [[ "$tics" == *"'$(printf 'a%.0s' {1..38})é~' at 0, "* ]]
  [[ "$tics" == *"'$(printf 'é%.0s' {1..20})~' at 1, "* ]]
  LC_ALL=C.UTF-8 iconv -f UTF-8 -t UTF-8 <<<"$tics" >/dev/null
}

@test "a CSV with only some columns plots the panels it can" {
  printf 'epoch,cpu_pct\n1000.0,10\n1001.0,20\n1002.5,\n' >"$BATS_TEST_TMPDIR/cpu.csv"
  run -0 rm-plot --script "$BATS_TEST_TMPDIR/cpu.csv"
  [[ "$output" == *'layout 1,1'* && "$output" == *'title "CPU"'* ]]
  [[ "$output" != *'title "used"'* && "$output" != *$'\nset label'* ]]
  # Time from epoch when there is no elapsed_s; an empty field is a gap.
  [[ "$output" == *$'\n0 NaN NaN NaN NaN 10 NaN NaN NaN\n1 NaN NaN NaN NaN 20 NaN NaN NaN\n2.5 NaN NaN NaN NaN NaN NaN NaN NaN\n'* ]]
  run -0 rm-plot -o "$BATS_TEST_TMPDIR/cpu.png" "$BATS_TEST_TMPDIR/cpu.csv"
  run -0 png_info "$BATS_TEST_TMPDIR/cpu.png"
}

@test "a column with no reading at all is left out; no reading anywhere is an error" {
  # gnuplot refuses a line that is all gaps: swap and compilers empty here.
  printf 'epoch,mem_used_mb,swap_used_mb,cpu_pct,compilers\n0,100,,5,\n1,200,,6,\n' \
    >"$BATS_TEST_TMPDIR/gaps.csv"
  run -0 rm-plot --script "$BATS_TEST_TMPDIR/gaps.csv"
  [[ "$output" == *'title "used"'* && "$output" != *'title "swap used"'* ]]
  [[ "$output" != *'title "compilers"'* && "$output" == *'layout 2,1'* ]]
  run -0 rm-plot -o "$BATS_TEST_TMPDIR/gaps.png" "$BATS_TEST_TMPDIR/gaps.csv"
  run -0 png_info "$BATS_TEST_TMPDIR/gaps.png"
  printf 'epoch,mem_used_mb,cpu_pct\n0,,\n1,,\n' >"$BATS_TEST_TMPDIR/none.csv"
  run -1 --separate-stderr rm-plot -o "$BATS_TEST_TMPDIR/none.png" "$BATS_TEST_TMPDIR/none.csv"
  [[ "$stderr" == "rm-plot: cannot plot '$BATS_TEST_TMPDIR/none.csv': no readings to plot: every memory, disk and CPU field is empty" ]]
  [[ ! -e "$BATS_TEST_TMPDIR/none.png" ]]
}

@test "standard input is read with CSV -, which needs -o" {
  run -0 rm-plot --script -o "$BATS_TEST_TMPDIR/in.png" - <"$MON"
  [[ "${lines[0]}" == "# rm-plot: gnuplot script for standard input" ]]
  run -2 --separate-stderr rm-plot - <"$MON"
  [[ "$stderr" == *"give -o FILE.png"* ]]
}

@test "mawk and gawk give the same script" {
  local a
  for a in mawk gawk; do
    mkdir -p "$BATS_TEST_TMPDIR/$a"
    ln -s "$(command -v "$a")" "$BATS_TEST_TMPDIR/$a/awk"
    PATH="$BATS_TEST_TMPDIR/$a:$PATH" rm-plot --script "$HOSTILE" >"$BATS_TEST_TMPDIR/$a.gp"
  done
  cmp "$BATS_TEST_TMPDIR/mawk.gp" "$BATS_TEST_TMPDIR/gawk.gp"
}

@test "what is not a monitor CSV or timeline is refused with a clear error and exit 1" {
  printf 'pid,ppid,comm,start_s,end_s,peak_rss_kib\n1,0,init,0,1,100\n' >"$BATS_TEST_TMPDIR/exitlog.csv"
  run -1 --separate-stderr rm-plot --script "$BATS_TEST_TMPDIR/exitlog.csv"
  [[ "$stderr" == "rm-plot: cannot plot '$BATS_TEST_TMPDIR/exitlog.csv': --series: no system CSV or rm-tree timeline among the inputs" ]]
  [[ -z "$output" ]]
  printf 'elapsed_s,cpu_pct\n1,2\n' >"$BATS_TEST_TMPDIR/noepoch.csv"
  run -1 --separate-stderr rm-plot --script "$BATS_TEST_TMPDIR/noepoch.csv"
  [[ "$stderr" == "rm-plot: cannot plot '$BATS_TEST_TMPDIR/noepoch.csv': not a CSV rm-summarize reads (header 'elapsed_s,cpu_pct')"* ]]
  printf 'epoch,load1\n1,2\n' >"$BATS_TEST_TMPDIR/load.csv"
  run -1 --separate-stderr rm-plot --script "$BATS_TEST_TMPDIR/load.csv"
  [[ "$stderr" == *"no readings to plot"* ]]
  head -1 "$MON" >"$BATS_TEST_TMPDIR/header.csv"
  run -1 --separate-stderr rm-plot -o "$BATS_TEST_TMPDIR/x.png" "$BATS_TEST_TMPDIR/header.csv"
  [[ "$stderr" == *"no rows after the header"* ]]
  : >"$BATS_TEST_TMPDIR/empty.csv"
  run -1 --separate-stderr rm-plot "$BATS_TEST_TMPDIR/empty.csv"
  [[ "$stderr" == *"empty file"* ]]
  [[ ! -e "$BATS_TEST_TMPDIR/x.png" && ! -e "$BATS_TEST_TMPDIR/empty.png" ]]
  run -1 --separate-stderr rm-plot "$BATS_TEST_TMPDIR/nope.csv"
  [[ "$stderr" == "rm-plot: cannot open '$BATS_TEST_TMPDIR/nope.csv': No such file or directory" ]]
  run -1 --separate-stderr rm-plot "$BATS_TEST_TMPDIR"
  [[ "$stderr" == "rm-plot: cannot plot '$BATS_TEST_TMPDIR': a directory; not a CSV" ]]
  run -1 --separate-stderr rm-plot -o "$BATS_TEST_TMPDIR/no/such/dir.png" "$MON"
  [[ "$stderr" == "rm-plot: cannot write '$BATS_TEST_TMPDIR/no/such/dir.png': No such directory" ]]
}

@test "without gnuplot: a clear error naming the package, and --script still works" {
  local t d
  d="$BATS_TEST_TMPDIR/path"
  mkdir "$d"
  for t in bash env awk mawk mktemp dirname sed chmod mv rm cat; do
    ln -s "$(command -v "$t")" "$d/$t"
  done
  run -1 --separate-stderr env PATH="$d" "$RM_TOP/bin/rm-plot" -o "$BATS_TEST_TMPDIR/x.png" "$MON"
  [[ "$stderr" == "rm-plot: gnuplot is not installed (Debian: apt install gnuplot-nox); --script prints the script alone" ]]
  [[ ! -e "$BATS_TEST_TMPDIR/x.png" ]]
  run -0 env PATH="$d" "$RM_TOP/bin/rm-plot" --script "$MON"
  [[ "${lines[0]}" == "# rm-plot: gnuplot script for monitor.csv" ]]
}

@test "rm-plot draws an rm-tree timeline: the job's memory and process count over time" {
  run -0 --separate-stderr rm-plot --script -o "$BATS_TEST_TMPDIR/tl.png" "$TL"
  [[ -z "$stderr" && "$output" == *'layout 2,1'* ]]
  [[ "$output" == *'set ylabel "job memory (MiB)"'*'title "job RSS"'* ]]
  [[ "$output" == *'title "CPU"'*'axes x1y2 title "processes"'* ]]
  # The rows: seconds, the job's RSS in MiB, processes, CPU.
  [[ "$output" == *$'\n4 616 3 190\n11 683.59375 2 100\n'* ]]
  run -0 rm-plot --size 800x600 -o "$BATS_TEST_TMPDIR/tl.png" "$TL"
  run -0 png_info "$BATS_TEST_TMPDIR/tl.png"
  read -r w h n <<<"$output"
  ((w == 800 && h == 600 && n > 1))
}

@test "the legend stands outside the plot area, where it hides no curve" {
  local f
  for f in "$MON" "$TL"; do
    run -0 rm-plot --script "$f"
    [[ "$output" == *$'\nset key outside right '* && "$output" != *'set key top right opaque'* ]]
    # The panels end 200 px before the right edge: the key has the rest.
    [[ "$output" == *' margins 0.08,0.833,'* ]]
  done
  run -0 rm-plot -o "$BATS_TEST_TMPDIR/k.png" "$MON"
}

@test "the disk axis spans at least 10 % of the disk's size, whatever the wobble" {
  # build.csv: 79.4 down to 78.2 GiB available at 16-18 % used, a ~95 GiB disk.
  local lo hi
  read -r lo hi < <(rm-plot --script "$BUILD" |
    sed -n '/^set ylabel "disk available (GiB)"/{n;s/^set yrange \[\(.*\):\(.*\)\]$/\1 \2/p}')
  [[ -n "$lo" && -n "$hi" ]]
  "$PY" -c 'import csv, sys
lo, hi = float(sys.argv[2]), float(sys.argv[3])
rows = list(csv.DictReader(open(sys.argv[1])))
disk = [float(r["disk_avail_gb"]) for r in rows]
size = max(float(r["disk_avail_gb"]) / (1 - float(r["disk_pct"]) / 100) for r in rows)
assert 90 < size < 100, size
assert hi - lo >= 0.1 * size * 0.999, (lo, hi, size)
assert lo <= min(disk) and hi >= max(disk), (lo, hi, min(disk), max(disk))' "$BUILD" "$lo" "$hi"
}

@test "stage labels do not overlap; narrow stages get one where it fits" {
  run -0 rm-plot --script --size 1200x900 "$BUILD"
  # Each label's left end from its time, right end at 7 px a character of
  # font ",10", over the width the panels take (8 % of 1200 px on the
  # left, 200 px on the right); labels on the same row must not meet.
  run -0 "$PY" -c 'import re, sys
s = sys.argv[1]
xmax = float(re.search(r"^set xrange \[0:([0-9.e+-]+)\]$", s, re.M).group(1))
labels = [(m.group(1).replace("\x27\x27", "\x27"), float(m.group(2)), float(m.group(3)))
          for m in re.finditer(r"^set label \x27((?:[^\x27]|\x27\x27)*)\x27 at ([0-9.e+-]+), graph 1 left offset 0, ([0-9.]+)", s, re.M)]
names = [l[0] for l in labels]
assert names[:3] == ["extract", "configure", "make"], names
assert {"check", "install"} <= set(names), names
w = 1200 - 200 - 96
px = [(n, x / xmax * w, x / xmax * w + 7 * len(n), row) for n, x, row in labels]
for i, a in enumerate(px):
    for b in px[i + 1:]:
        assert a[3] != b[3] or a[2] <= b[1] or b[2] <= a[1], (a, b)
print(len(set(r for _, _, _, r in px)))' "$output"
  ((output >= 2))   # the narrow ones went to another row
  run -0 rm-plot -o "$BATS_TEST_TMPDIR/b.png" "$BUILD"
}

# plot_attacked RUNS: rm-plot, as root, RUNS times on run.csv in RACE (a
# directory nobody owns: the build user's log directory) beside the
# findings' poller (race.bash), which swaps every new name there for a
# symlink to VICTIM and plants NAME.gp and NAME.log.
plot_attacked() {
  local runs=$1 i
  poller_start "${RACE}" run.csv run.png
  for ((i = 0; i < runs; i++)); do
    rm -f "${RACE}/run.png" # a symlink the last run's plant left: its temporary file swapped, renamed into place
    run timeout -s KILL 120 rm-plot "${RACE}/run.csv"
    echo "run ${i}: rc ${status}: ${output}"
    ((status <= 1)) || break
    victim_untouched || break
  done
  poller_stop
  ((status <= 1)) && victim_untouched
}

@test "rm-plot renders in a private directory: names planted beside the CSV by another user never redirect a root write or chmod" {
  command -v gnuplot >/dev/null || skip "no gnuplot"
  load test_helper/race
  race_setup
  # A CSV long enough that drawing it takes a while (3,000 rows).
  "$PY" -c '
import sys
rows = open(sys.argv[1]).read().splitlines()
head, body = rows[0], rows[1:]
with open(sys.argv[2], "w") as f:
    print(head, file=f)
    for k in range(3000):
        c = body[k % len(body)].split(",")
        c[0] = "%.3f" % (float(body[0].split(",")[0]) + k * 0.25)
        c[2] = "%.3f" % (k * 0.25)
        print(",".join(c), file=f)
' "$MON" "${RACE}/run.csv"
  chown nobody: "${RACE}/run.csv"
  plot_attacked 3
  # Without a plant the PNG is whole, mode 644 (world-readable on purpose,
  # the one file rm-plot makes there), and nothing else of its is left.
  rm -rf "${RACE:?}"/run.png "${RACE:?}"/.[!.]*
  run -0 rm-plot "${RACE}/run.csv"
  run -0 png_info "${RACE}/run.png"
  [ "$(stat -c '%a %U' "${RACE}/run.png")" = "644 root" ]
  run -0 ls -A "${RACE}"
  [ "$output" = $'run.csv\nrun.png' ]
  # A symlink or a FIFO planted at the PNG's own name: refused, nothing waits.
  local kind
  for kind in symlink fifo; do
    plant "$kind" "${RACE}/run.png"
    run -1 --separate-stderr timeout -s KILL 60 rm-plot "${RACE}/run.csv"
    [[ "$stderr" == "rm-plot: cannot write '${RACE}/run.png': "* ]]
    victim_untouched
  done
  race_teardown
}
