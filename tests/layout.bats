#!/usr/bin/env bats
# The layout a newcomer reads: files short enough to read, or saying why
# not; comments and test names that say what they protect in words, not
# by an ID from a tracker or a review that is not in the repository.

setup() {
  load test_helper/common
  cd "$RM_TOP"
}

# An ID of the issue tracker or of a review's findings (letters and a
# number, or two joined by a slash: the strings of the last test below),
# or an issue's number.
TRACKER_ID='(^|[^A-Za-z0-9_./-])((MW|RM|SR)[0-9]+|[FBRGA][0-9]{1,2}|[Ii]ssues? [0-9]+)([^A-Za-z0-9_]|$)'

# comments FILE...: "FILE:LINE: text" for the comment text of each file:
# C's /* */ and //, a shell's # (not #!, $#, ${#), and bats test names.
comments() {
  awk '
    FNR == 1 { inc = 0; c = FILENAME ~ /\.[ch]$/ }
    c {
      s = $0
      while (s != "") {
        if (inc) {
          e = index(s, "*/")
          if (e) { print FILENAME ":" FNR ": " substr(s, 1, e - 1); s = substr(s, e + 2); inc = 0 }
          else { print FILENAME ":" FNR ": " s; s = "" }
        } else {
          b = index(s, "/*"); l = index(s, "//")
          if (l && (!b || l < b)) { print FILENAME ":" FNR ": " substr(s, l + 2); s = "" }
          else if (b) { s = substr(s, b + 2); inc = 1 }
          else s = ""
        }
      }
      next
    }
    /^@test "/ { t = $0; sub(/^@test "/, "", t); sub(/" \{$/, "", t); print FILENAME ":" FNR ": " t; next }
    {
      s = $0
      if (s ~ /^#!/) next
      if (match(s, /(^|[ \t;])#/)) {
        s = substr(s, RSTART + RLENGTH)
        print FILENAME ":" FNR ": " s
      }
    }' "$@"
}

# The files whose comments are read: sources, headers, scripts, tests
# (the fixtures are data, not comments).
commented_files() {
  {
    find src lib tests -type f \( -name '*.c' -o -name '*.h' -o -name '*.bats' -o -name '*.bash' -o -name '*.sh' \) \
      -not -path 'tests/fixtures/*' -not -path 'tests/fuzz/corpus/*'
    find scripts -type f
    echo .ci/run
  } | sort
}

@test "no file of src/ or lib/ runs past 700 lines without a sentence at its top saying why it is long" {
  local f n bad=''
  for f in src/*.[ch] src/*/*.[ch] lib/*.[ch]; do
    n=$(wc -l <"$f")
    ((n > 700)) || continue
    # The sentence: "This file is long because ..." in its top comment.
    sed -n '1,60p' "$f" | awk '/\*\// { print; exit } { print }' | grep -q 'is long because' ||
      bad+="$f ($n lines)"$'\n'
  done
  echo "over 700 lines with no word why:"$'\n'"$bad"
  [ -z "$bad" ]
}

@test "comments in src/ lib/ scripts/ tests/ carry no tracker ID: they say in words what they protect" {
  local -a files
  mapfile -t files < <(commented_files)
  ((${#files[@]} > 100))
  # The extractor finds a comment of each kind (C, shell, bats) and a test name.
  comments src/rm-tree/stream.c | grep -q 'the loop; the parts are in stream.h'
  comments scripts/rm-run | grep -q .
  comments tests/layout.bats | grep -q 'The layout a newcomer reads'
  run comments "${files[@]}"
  run grep -E "$TRACKER_ID" <<<"$output"
  echo "$output"
  [ "$status" -eq 1 ]
}

@test "the ID pattern finds the IDs a comment used to carry, and not what merely looks alike" {
  local s
  for s in "(MW31: rows lost)" "said above, MW42" "F10/B5" "RM44/RM6:" "issue 12 B6" "Issue 14: the parts" "R8" "(F12/B2)"; do
    grep -Eq "$TRACKER_ID" <<<"$s" || { echo "missed: $s"; return 1; }
  done
  for s in "-O2 -g" "cut -d, -f10,11" "grep -A1" "\$V2/proc" "x86_64" "UTF-8" "SIGRTMIN+2" "at 100 Hz"; do
    ! grep -Eq "$TRACKER_ID" <<<"$s" || { echo "false hit: $s"; return 1; }
  done
}

# doc_tests DOC: each test a doc names, one per line as FILE: NAME, or FILE
# alone: every `tests/FILE.bats` or `tests/.../FILE.c` in DOC, and the
# names that follow it after a colon ("quoted" test names, ... standing
# for words left out; `test_function` names of a C file), up to an aside
# in parentheses, a ';', the next file or the table cell's end.
doc_tests() {
  "$PY" - "$1" <<'EOF'
import re, sys
for line in open(sys.argv[1]):
    for m in re.finditer(r"`(tests/[^`\s]+\.(?:bats|c))`((?:(?!`tests/)[^|;])*)", line):
        path, rest = m.group(1), m.group(2).lstrip()
        names = []
        if rest.startswith(":"):
            for q in re.finditer(r'\(|"([^"]+)"|`([A-Za-z_][A-Za-z0-9_]*)`', rest[1:]):
                if q.group(0) == "(":
                    break
                names.append(q.group(1) or q.group(2))
        print(path if not names else "\n".join(path + ": " + n for n in names))
EOF
}

# test_named FILE NAME: FILE has a @test whose name holds NAME (a C file:
# holds NAME anywhere), each "..." in NAME standing for any words.
test_named() {
  "$PY" - "$1" "$2" <<'EOF'
import re, sys
path, name = sys.argv[1], sys.argv[2]
text = open(path).read()
titles = re.findall(r'^@test "(.*)" \{$', text, re.M) if path.endswith(".bats") else [text]
pat = ".*".join(re.escape(p.strip()) for p in name.split("..."))
sys.exit(0 if any(re.search(pat, t) for t in titles) else 1)
EOF
}

@test "every test docs/reliability.md names for a promise exists: its file, and a test of that name in it" {
  local line file name bad='' n=0
  while IFS= read -r line; do
    file=${line%%: *} name=''
    [[ "$line" == *': '* ]] && name=${line#*: }
    n=$((n + 1))
    if [[ ! -f "$file" ]]; then
      bad+="no file: $line"$'\n'
    elif [[ -n "$name" ]] && ! test_named "$file" "$name"; then
      bad+="no such test: $line"$'\n'
    fi
  done < <(doc_tests docs/reliability.md)
  echo "$n tests named; missing:"$'\n'"$bad"
  ((n > 60))
  [ -z "$bad" ]
  # The check itself: a name that is not there, and a file that is not, are found.
  printf '| x | `tests/layout.bats`: "no such ... test" |\n| y | `tests/none.bats` |\n' >"$BATS_TEST_TMPDIR/doc.md"
  run doc_tests "$BATS_TEST_TMPDIR/doc.md"
  [ "$output" = $'tests/layout.bats: no such ... test\ntests/none.bats' ]
  run test_named tests/layout.bats "no such ... test"
  [ "$status" -eq 1 ]
  run test_named tests/layout.bats "every test ... names for a promise exists"
  [ "$status" -eq 0 ]
}
