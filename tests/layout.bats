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
