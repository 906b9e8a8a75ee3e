#!/usr/bin/env bats
# rm-summarize --svg in a real browser: headless Chromium (Debian's
# chromium) renders the chart, and what it shows is checked, not only the
# file's XML.

setup() {
  load test_helper/common
  F="$FIXTURES/summarize"
  CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
}

# chrome ARGS...: headless Chromium with a profile of its own in the test's
# directory (tests run side by side), no sandbox (root), no GPU.
chrome() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$BATS_TEST_TMPDIR/profile" "$@"
}

@test "Chromium renders rm-summarize --svg: a screenshot that is not blank, and the peak markers' titles in its DOM" {
  [[ -n "$CHROMIUM" ]] || skip "chromium is not installed (Debian: apt install chromium)"
  local svg="$BATS_TEST_TMPDIR/t.svg" png="$BATS_TEST_TMPDIR/shot.png"
  run -0 rm-summarize --svg "$svg" "$F/oom-kills.csv"
  chrome --window-size=1000,700 --screenshot="$png" "file://$svg" 2>"$BATS_TEST_TMPDIR/shot.err" ||
    { cat "$BATS_TEST_TMPDIR/shot.err"; false; }
  # The screenshot: a PNG the window's size whose pixels are many colours
  # (a blank page decodes to one or two byte values).
  run -0 png_bytes "$png"
  read -r w h distinct <<<"$output"
  echo "# screenshot ${w}x${h}, ${distinct} distinct byte values"
  [ "$w" -eq 1000 ] && [ "$h" -eq 700 ] && [ "$distinct" -gt 20 ]
  # The DOM as the browser parsed it: one circle per peak, each titled with
  # what peaked, when and in which stage, as rm-summarize wrote them.
  chrome --dump-dom "file://$svg" >"$BATS_TEST_TMPDIR/dom.html" 2>"$BATS_TEST_TMPDIR/dom.err" ||
    { cat "$BATS_TEST_TMPDIR/dom.err"; false; }
  run -0 "$PY" - "$BATS_TEST_TMPDIR/dom.html" "$svg" <<'EOF'
import re, sys
dom, svg = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
pat = re.compile(r'<circle[^>]*>\s*<title>([^<]*)</title>')
seen, wrote = pat.findall(dom), pat.findall(svg)
for t in seen:
    print(t)
assert seen == wrote, (seen, wrote)
EOF
  [[ "${lines[0]}" == "max memory used 3700.00 at +0:00:14, stage link: done" ]]
  [[ "${lines[1]}" == "min memory available 4300.00 at +0:00:14, stage link: done" ]]
  [[ "$output" == *"max CPU busy 50.00 at +0:00:00, stage compile: "* ]]
}
