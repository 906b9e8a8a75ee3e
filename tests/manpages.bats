#!/usr/bin/env bats
# Every command's man page: its SYNOPSIS says what --help says.

setup() {
  load test_helper/common
}

# words PROGRAM: the usage of PROGRAM from --help, as one line of words.
help_words() {
  "$1" --help | awk '/^usage: / { on = 1; sub(/^usage: /, "") } on && /^$/ { exit } on' | tr -s ' \n' '  ' | sed 's/ $//'
}

# synopsis_words PAGE: the SYNOPSIS section of a rendered page, one line.
synopsis_words() {
  mandoc -T ascii -O width=300 "$1" | sed 's/.\x08//g' |
    awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'
}

@test "every command with a man page has a SYNOPSIS that matches its --help usage" {
  local page name checked=0
  for page in "$RM_TOP"/docs/rm-*.1; do
    name=$(basename "$page" .1)
    [[ -x "$RM_TOP/bin/$name" ]] || continue
    if [[ "$(help_words "$RM_TOP/bin/$name")" != "$(synopsis_words "$page")" ]]; then
      echo "$name --help:   $(help_words "$RM_TOP/bin/$name")"
      echo "$name SYNOPSIS: $(synopsis_words "$page")"
      return 1
    fi
    checked=$((checked + 1))
  done
  ((checked >= 1))
}
