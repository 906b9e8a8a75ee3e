#!/usr/bin/env bats
# rm-summarize's shape: one model, renderers that only format
# it, no circles among its files, short functions; and err(3)-style
# messages that name the program whatever the binary is called.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize"
  SRC="$RM_TOP/src/rm-summarize"
}

@test "a copy of rm-summarize under another name still says rm-summarize in its errors" {
  cp "$(command -v rm-summarize)" "$BATS_TEST_TMPDIR/summ-copy"
  : >"$BATS_TEST_TMPDIR/empty.csv"
  run -1 --separate-stderr "$BATS_TEST_TMPDIR/summ-copy" "$BATS_TEST_TMPDIR/none.csv"
  [ "$stderr" = "rm-summarize: cannot open '$BATS_TEST_TMPDIR/none.csv': No such file or directory" ]
  run -1 --separate-stderr "$BATS_TEST_TMPDIR/summ-copy" "$BATS_TEST_TMPDIR/empty.csv"
  [ "$stderr" = "rm-summarize: '$BATS_TEST_TMPDIR/empty.csv': empty file; not a CSV" ]
  run -1 --separate-stderr "$BATS_TEST_TMPDIR/summ-copy" --csv "$BATS_TEST_TMPDIR/p.csv" "$F/seed-build.csv"
  [ "$stderr" = "rm-summarize: --csv: no rm-tree exit log among the inputs" ]
  run -0 --separate-stderr "$BATS_TEST_TMPDIR/summ-copy" --kmsg "$BATS_TEST_TMPDIR/none.kmsg" "$F/oom-kills.csv"
  [ "$stderr" = "rm-summarize: --kmsg '$BATS_TEST_TMPDIR/none.kmsg': No such file or directory" ]
}

@test "no file of src/rm-summarize reaches back to a file that uses it (no circles)" {
  # a uses b when a calls a function b defines (whatever header declares it).
  run -0 "$PY" - "$SRC" <<'PY'
import glob, os, re, sys
d = sys.argv[1]
text, defs = {}, {}
for path in sorted(glob.glob(d + "/*.c")):
    f = os.path.basename(path)
    text[f] = open(path).read()
    for m in re.finditer(r"^(?!static)[a-z][^\n;]*?\b(\w+)\([^;]*?\)\n\{", text[f], re.M):
        defs[m.group(1)] = f
uses = {f: set() for f in text}
for f, t in text.items():
    for name, g in defs.items():
        if g != f and re.search(r"\b" + name + r"\(", t):
            uses[f].add(g)
def walk(n, path):
    for m in sorted(uses[n]):
        if m in path:
            sys.exit("circle: " + " -> ".join(path[path.index(m):] + [m]))
        walk(m, path + [m])
for n in sorted(uses):
    walk(n, [n])
PY
}

@test "no function of src/rm-summarize runs past 80 lines without saying why at its top" {
  run -0 "$PY" - "$SRC" <<'PY'
import glob, re, sys
bad = []
for path in sorted(glob.glob(sys.argv[1] + "/*.c")):
    lines = open(path).read().split("\n")
    for i, l in enumerate(lines):
        if l != "{" or i == 0:
            continue
        start = i - 1
        while start > 0 and not re.match(r"^[a-z]", lines[start]):
            start -= 1
        end = lines.index("}", i)
        above = "\n".join(lines[max(0, start - 8):start])
        if end - start + 1 > 80 and "80 lines" not in above:
            bad.append(f"{path}:{start + 1}: {end - start + 1} lines")
if bad:
    sys.exit("\n".join(bad))
PY
}

@test "verdicts are data: no English sentence is built where the report is read" {
  # sys.c and oom.c judge; verdict.c words.  A verdict's text in the model
  # would be a second home for the words the renderers print.
  run -0 grep -l 'No headroom problem\|OOM edge: \|Disk falling: \|RAM-bound: \|the kernel killed %ld' "$SRC"/*.c
  [ "$output" = "$SRC/verdict.c" ]
  run -1 grep -n '"fmt.h"\|"render_\|"verdict.h"\|"scopeout.h"\|"svg.h"\|"trace.h"\|"csvout.h"' \
    "$SRC/sys.c" "$SRC/oom.c" "$SRC/model.c" "$SRC/procs.c" "$SRC/report.c" "$SRC/util.c"
}

@test "rm-summarize's usage text is written once, in its lib/cli option table: no usage or help text by hand" {
  # The table makes --help, the usage error and (make man-synopsis) the
  # man page's SYNOPSIS; a usage line or an option list spelled out in C
  # would be a second home that drifts.
  run -1 grep -rn '"usage: \|"  -h, --help\|rm_usage_error\|rm_opt_' "$SRC" "$RM_TOP"/lib/rmtools.[ch]
  run -0 --separate-stderr rm-summarize --help
  [ "${lines[0]}" = "usage: rm-summarize [--json | --markdown] [--svg FILE] [--csv FILE]" ]
  run -2 --separate-stderr rm-summarize --top 0 "$F/seed-build.csv"
  [ "${stderr_lines[0]}" = "rm-summarize: invalid --top '0': a whole number from 1, or all" ]
  [ "${stderr_lines[1]}" = "usage: rm-summarize [--json | --markdown] [--svg FILE] [--csv FILE]" ]
  [ "${#stderr_lines[@]}" = 13 ]  # the message and the usage lines of the five forms
}

@test "rm-summarize's usage error names it, whatever its binary is called, and its message leaves in one write" {
  cp "$(command -v rm-summarize)" "$BATS_TEST_TMPDIR/summ-copy"
  run -2 --separate-stderr "$BATS_TEST_TMPDIR/summ-copy" --bogus
  [ "${stderr_lines[0]}" = "rm-summarize: unknown option '--bogus'" ]
  # A line whole in one write(2), as rm-monitor's samplers share its stderr.
  under_valgrind && skip "strace of the valgrind stand-in"
  run -2 strace -f -s 512 -e trace=write -o "$BATS_TEST_TMPDIR/trace" "$RM_TOP/bin/rm-summarize" --bogus
  run -0 grep -c '^[0-9 ]*write(2, "rm-summarize: unknown option .--bogus.\\n"' "$BATS_TEST_TMPDIR/trace"
  [ "$output" = 1 ]
}
