#!/usr/bin/env bats
# rm-summarize --series (gnuplot-ready columns, stage spans and OOM marks
# as index blocks) and the SVG it shares its rows with: a monitor CSV and
# an rm-tree timeline, as gnuplot and a browser would read them.

setup() {
  load test_helper/common
  BUILD="$FIXTURES/plot/build.csv"   # 23m20s, 6 stages (3 narrow), an OOM kill at 700 s
  TL="$FIXTURES/summarize/timeline.csv"
}

# block N FILE: the lines of gnuplot data block N (0-based) of a series.
block() {
  "$PY" -c 'import sys
print(open(sys.argv[2]).read().split("\n\n\n")[int(sys.argv[1])].rstrip("\n"))' "$1" "$2"
}

@test "--series: one header comment, the documented columns, a row per CSV row, x from the run's start" {
  run -0 --separate-stderr rm-summarize --series "$BUILD"
  [[ -z "$stderr" ]]
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/s.dat"
  run -0 block 0 "$BATS_TEST_TMPDIR/s.dat"
  [[ "${lines[0]}" == "# elapsed_s mem_used_mib mem_avail_mib swap_used_mib disk_avail_gib cpu_pct load1 compilers disk_size_gib" ]]
  ((${#lines[@]} == $(wc -l <"$BUILD")))   # the header, then one line per row
  # The CSV's own values by name, in the documented order.
  local want
  want=$("$PY" -c 'import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[70]
print(" ".join("%g" % float(r[k]) for k in ("elapsed_s", "mem_used_mb", "mem_avail_mb", "swap_used_mb",
      "disk_avail_gb", "cpu_pct", "load1", "compilers")))' "$BUILD")
  [[ "${lines[71]}" == "$want "* ]] || { echo "want '$want', got '${lines[71]}'"; return 1; }
  # Whitespace-separated, the same number of fields on every line.
  block 0 "$BATS_TEST_TMPDIR/s.dat" >"$BATS_TEST_TMPDIR/b0.dat"
  run -0 awk '!/^#/ { print NF }' "$BATS_TEST_TMPDIR/b0.dat"
  [[ "$(sort -u <<<"$output")" == 9 ]]
}

@test "--series: stage spans and OOM marks are gnuplot index blocks 1 and 2" {
  rm-summarize --series "$BUILD" >"$BATS_TEST_TMPDIR/s.dat"
  run -0 block 1 "$BATS_TEST_TMPDIR/s.dat"
  [[ "$output" == '# stage start_s end_s name
0 10 "extract"
10 40 "configure"
40 1200 "make"
1200 1300 "check"
1300 1390 "install"
1390 1400 "done"' ]]
  run -0 block 2 "$BATS_TEST_TMPDIR/s.dat"
  [[ "$output" == $'# oom elapsed_s kills\n700 1' ]]
  # gnuplot reads each block by its index.
  run -0 gnuplot -e "stats '$BATS_TEST_TMPDIR/s.dat' index 2 using 1 nooutput; print STATS_records, STATS_max;
    stats '$BATS_TEST_TMPDIR/s.dat' index 1 using 2 nooutput; print STATS_records, STATS_max;
    stats '$BATS_TEST_TMPDIR/s.dat' index 0 using 2 nooutput; print STATS_records"
  [[ "$output" == $'1 700.0\n6 1400.0\n141' ]]
}

@test "--series: the disk's size from disk_avail_gb and disk_pct; gaps as NaN" {
  run -0 rm-summarize --series "$FIXTURES/summarize/seed-build.csv"
  # 49.50 GiB available at 1 % used: 50 GiB.
  [[ "${lines[2]}" == "15 3000 13000 0 49.5 80 3 4 50" ]]
  printf 'epoch,mem_used_mb,cpu_pct\n1000,100,\n1002.5,,7\n' >"$BATS_TEST_TMPDIR/gaps.csv"
  run -0 rm-summarize --series "$BATS_TEST_TMPDIR/gaps.csv"
  [[ "${lines[1]}" == "0 100 NaN NaN NaN NaN NaN NaN NaN" ]]
  [[ "${lines[2]}" == "2.5 NaN NaN NaN NaN 7 NaN NaN NaN" ]]
}

@test "--series on an rm-tree timeline: the job's memory in MiB, processes and CPU over time" {
  run -0 --separate-stderr rm-summarize --series "$TL"
  [[ "$output" == '# elapsed_s job_rss_mib procs cpu_pct
0 4 1 5
4 616 3 190
11 683.59375 2 100
19 4 1 1


# stage start_s end_s name


# oom elapsed_s kills' ]]
}

@test "--series: a stage name gnuplot can read, cut at 40 bytes on a character boundary" {
  {
    echo 'epoch,mem_used_mb,stage'
    printf '0,100,%s\n' 'say "hi"'
    printf '1,200,%s\n' "$(printf 'é%.0s' {1..30})"
  } >"$BATS_TEST_TMPDIR/names.csv"
  run -0 rm-summarize --series "$BATS_TEST_TMPDIR/names.csv"
  [[ "$output" == *$'\n0 1 "say \'hi\'"\n1 1 "'"$(printf 'é%.0s' {1..20})"$'~"\n'* ]]
}

@test "--series with no system CSV or timeline: exit 1, the reason; it is in --help" {
  run -1 --separate-stderr rm-summarize --series "$FIXTURES/summarize/exitlog.csv"
  [[ "$stderr" == "rm-summarize: --series: no system CSV or rm-tree timeline among the inputs" && -z "$output" ]]
  run -0 rm-summarize --help
  [[ "$output" == *"--series"* ]]
}

@test "--svg draws an rm-tree timeline: the job's memory and process count over time" {
  local svg="$BATS_TEST_TMPDIR/tl.svg"
  run -0 rm-summarize --svg "$svg" "$TL"
  "$PY" - "$svg" <<'EOF'
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
lines = {p.find(ns + "title").text: p.get("points").split() for p in E.parse(sys.argv[1]).iter(ns + "polyline")}
for name in ("job memory (RSS, MiB)", "processes"):
    assert len(lines.get(name, [])) == 4, (name, lines)
# The memory peak (683.6 MiB at 11 s) is the highest point of its line.
mem = [tuple(map(float, p.split(","))) for p in lines["job memory (RSS, MiB)"]]
assert min(mem, key=lambda p: p[1]) == mem[2], mem
EOF
  rsvg-convert -o "$BATS_TEST_TMPDIR/tl.png" "$svg"
}

# svg_text FILE CLASS: "x anchor text" of each <text class=CLASS>.
svg_text() {
  "$PY" - "$1" "$2" <<'EOF'
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
for t in E.parse(sys.argv[1]).iter(ns + "text"):
    if t.get("class") == sys.argv[2]:
        print(t.get("x"), t.get("text-anchor", "start"), t.text)
EOF
}

@test "--svg: y axes carry round ticks between 0 and the top; the last time label is inside the picture" {
  local svg f
  for f in "$BUILD" "$TL"; do
    svg="$BATS_TEST_TMPDIR/${f##*/}.svg"
    rm-summarize --svg "$svg" "$f" >/dev/null
    # Every panel: 0, at least one tick between, each a 1, 2 or 5 x 10^n step.
    run -0 "$PY" - "$svg" <<'EOF'
import re, sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
texts = [t for t in E.parse(sys.argv[1]).iter(ns + "text")]
panels, cur = [], None
for t in texts:
    if t.get("text-anchor") == "end" and re.fullmatch(r"[0-9.]+( \S+)?", t.text or "") and float(t.get("x")) < 70:
        v = float(t.text.split()[0])
        if v == 0:
            cur = []
            panels.append(cur)
        cur.append(v)
assert len(panels) == 3, panels
for p in panels:
    assert len(p) >= 3, p
    step = p[1] - p[0]
    m = step / 10 ** __import__("math").floor(__import__("math").log10(step))
    assert round(m, 6) in (1, 2, 5), p
    assert all(abs((b - a) - step) < 1e-9 * step for a, b in zip(p, p[1:])), p
print("ok")
EOF
    # The right end of the last time label (6 px a character at 10 px).
    run -0 svg_text "$svg" xtick
    read -r x anchor label <<<"${lines[-1]}"
    ((${#lines[@]} >= 3))
    "$PY" -c 'import sys
x, a, n = float(sys.argv[1]), sys.argv[2], len(sys.argv[3])
right = x + (0 if a == "end" else n * 3 if a == "middle" else n * 6)
assert right <= 1000, (x, a, sys.argv[3], right)' "$x" "$anchor" "$label"
  done
}

@test "--svg: narrow stages are named where their names fit, without overlapping" {
  local svg="$BATS_TEST_TMPDIR/b.svg"
  rm-summarize --svg "$svg" "$BUILD" >/dev/null
  run -0 "$PY" - "$svg" <<'EOF'
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
named = [(float(t.get("x")), float(t.get("y")), t.text) for t in E.parse(sys.argv[1]).iter(ns + "text")
         if t.get("class") == "stage"]
names = [n for _, _, n in named]
# extract (10 s of 1400, 6 px wide) and configure (30 s) are narrow.
assert names[:5] == ["extract", "configure", "make", "check", "install"], names
for i, (x, y, n) in enumerate(named):
    for x2, y2, n2 in named[i + 1:]:
        if y == y2:
            assert x + 6 * len(n) <= x2 or x2 + 6 * len(n2) <= x, (n, n2)
# A stage with no room still has its name in the band's tooltip.
titles = [t.text for t in E.parse(sys.argv[1]).iter(ns + "title")]
assert "stage done" in titles, titles
print("ok")
EOF
}
