#!/usr/bin/env bats
# docs/recipes.md runs as written: every block marked <!-- recipe --> is
# run with bash in a directory holding a run's files under the names the
# page uses, and what it prints is compared with the <!-- output --> block
# after it (or matched line by line against <!-- output-re -->), or the
# PNG it makes (<!-- makes: FILE WxH -->) is decoded and measured.

setup() {
  load test_helper/common
  RECIPES="$RM_TOP/docs/recipes.md"
}

# run_recipes: runs every recipe; prints "ok N: title" or "FAIL N: title:
# why" for each and a last line "N recipes"; fails when one fails.
run_recipes() {
  RUN_DIR="$BATS_TEST_TMPDIR" FIT="$FIXTURES/fit" "$PY" - "$RECIPES" <<'EOF'
import os, re, shutil, struct, subprocess, sys, zlib

def blocks(path):
    """Yield (title, code, checks) for each recipe in the page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    title, i, cur = "", 0, None
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#"):
            title = ln.lstrip("# ")
        m = re.fullmatch(r"<!-- (recipe|output|output-re|makes: (.*)) -->", ln)
        if m:
            kind = m.group(1)
            body = None
            if not kind.startswith("makes"):
                j = i + 1
                while j < len(lines) and lines[j] == "":
                    j += 1
                if j >= len(lines) or not lines[j].startswith("```"):
                    sys.exit("line %d: a %s marker without a fenced block" % (i + 1, kind))
                k = j + 1
                while lines[k] != "```":
                    k += 1
                body = "\n".join(lines[j + 1:k])
                i = k
            if kind == "recipe":
                if cur:
                    yield cur
                cur = [title, body, []]
            elif cur is None:
                sys.exit("line %d: a check before any recipe" % (i + 1))
            elif kind.startswith("makes"):
                cur[2].append(("makes", m.group(2)))
            else:
                cur[2].append((kind, body))
        i += 1
    if cur:
        yield cur

def png_size(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return "%dx%d" % struct.unpack(">II", data[16:24])

failed = n = 0
for n, (title, code, checks) in enumerate(blocks(sys.argv[1]), 1):
    d = os.path.join(os.environ["RUN_DIR"], "recipe-%d" % n)
    os.makedirs(d)
    fit = os.environ["FIT"]
    shutil.copy(os.path.join(fit, "monitor.csv"), os.path.join(d, "resources-my-run.csv"))
    # As rm-monitor writes it: a scope column, and a heavy process elsewhere
    # on the host (scope=out, killed) that no recipe may count as the build's.
    with open(os.path.join(fit, "resources-demo.procs.csv"), encoding="utf-8") as f:
        rows = f.read().splitlines()
    rows = [rows[0] + ",scope"] + [r + ",in" for r in rows[1:]]
    rows.append("9000,1,firefox,20.000,60.000,5242880,59.000,30.00,137,/usr/lib/firefox/firefox,out")
    with open(os.path.join(d, "resources-my-run.procs.csv"), "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=d,
                       capture_output=True, timeout=120)
    why = []
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        why.append("exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()))
    elif p.stderr:
        why.append("stderr: " + p.stderr.decode("utf-8", "replace").strip())
    if not checks:
        why.append("nothing checks this recipe")
    for kind, want in checks:
        if kind == "output" and out != want + "\n":
            why.append("printed:\n" + out + "expected:\n" + want)
        elif kind == "output-re":
            got, res = out.rstrip("\n").split("\n"), want.split("\n")
            if len(got) != len(res) or not all(re.fullmatch(r, g) for r, g in zip(res, got)):
                why.append("printed:\n" + out + "expected lines matching:\n" + want)
        elif kind == "makes":
            name, size = want.split()
            path = os.path.join(d, name)
            got = png_size(path) if os.path.exists(path) else None
            if got != size:
                why.append("%s: %s, not a %s PNG" % (name, got or "missing or not a PNG", size))
    if why:
        failed += 1
        print("FAIL %d: %s: %s" % (n, title, "\n  ".join(why)))
    else:
        print("ok %d: %s" % (n, title))
print("%d recipes" % n)
sys.exit(1 if failed else 0)
EOF
}

@test "every recipe in docs/recipes.md runs and gives the expected output" {
  run run_recipes
  printf "%s\n" "$output"
  ((status == 0))
  # awk, jq and gnuplot recipes, the three the page promises, all there.
  local last=${lines[${#lines[@]} - 1]}
  ((${last% recipes} >= 10))
  grep -q '^gawk ' "$RECIPES"
  grep -q 'jq -r' "$RECIPES"
  grep -q '^gnuplot ' "$RECIPES"
}

@test "the recipe runner fails on a wrong output, a failing recipe, a missing PNG, an unchecked recipe" {
  local page="$BATS_TEST_TMPDIR/bad.md"
  cat >"$page" <<'EOF'
# Wrong output
<!-- recipe -->
```sh
echo two
```
<!-- output -->
```text
one
```
# Fails
<!-- recipe -->
```sh
false
```
<!-- output -->
```text
```
# No PNG
<!-- recipe -->
```sh
true
```
<!-- makes: none.png 10x10 -->
# Unchecked
<!-- recipe -->
```sh
echo hi
```
EOF
  RECIPES=$page
  run -1 run_recipes
  [[ "${lines[0]}" == "FAIL 1: Wrong output: printed:" ]]
  [[ "$output" == *"FAIL 2: Fails: exit 1"* ]]
  [[ "$output" == *"FAIL 3: No PNG: none.png: missing or not a PNG, not a 10x10 PNG"* ]]
  [[ "$output" == *"FAIL 4: Unchecked: nothing checks this recipe"* ]]
}

@test "the awk peak per stage agrees with rm-summarize's per-stage table" {
  command -v rm-summarize >/dev/null || skip "rm-summarize is not built yet"
  local awk_code
  awk_code=$(awk '/^### Peak memory per stage/ { f = 1 } f && /^```sh$/ { b = 1; next }
    b && /^```$/ { exit } b' "$RECIPES")
  cp "$FIXTURES/fit/monitor.csv" "$BATS_TEST_TMPDIR/resources-my-run.csv"
  cd "$BATS_TEST_TMPDIR"
  run -0 bash -c "$awk_code"
  local from_awk=$output
  run -0 bash -c 'rm-summarize --json resources-my-run.csv |
    jq -r ".system.stages[] | \"\(.peak_mem_used_mb) \(.stage)\"" | sort -rn'
  [[ "$(sed 's/^ *//; s/ MiB  / /' <<<"$from_awk")" == "$output" ]]
}
