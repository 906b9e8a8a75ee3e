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

@test "every man page's SYNOPSIS is what make man-synopsis writes from --help" {
  local page pages=()
  for page in "$RM_TOP"/docs/rm-*.1; do
    [[ -x "$RM_TOP/bin/$(basename "$page" .1)" ]] && pages+=("$page")
  done
  ((${#pages[@]} >= 9))
  run -0 bash "$RM_TOP/docs/synopsis.sh" --check "$RM_TOP/bin" "${pages[@]}"
}

@test "synopsis.sh writes the SYNOPSIS from the usage lines, and --check catches a stale one" {
  local bin="$BATS_TEST_TMPDIR/bin" page="$BATS_TEST_TMPDIR/rm-x.1"
  mkdir -p "$bin"
  cat >"$bin/rm-x" <<'SH'
#!/bin/sh
cat <<'USAGE_END'
usage: rm-x [-H] [-f csv|json] [--watch-pid PID]... [--elsewhere[=KIB]]
            [--prom-label NAME=VALUE] [--match ERE | [--no-children] PID...]
       rm-x -i SEC [--listen ADDR:PORT [--min-age SEC] [--expose-cmdline]] -- CMD [ARG...]
       rm-x summarize [--json | --markdown] CSV...

Help text.
USAGE_END
SH
  chmod +x "$bin/rm-x"
  printf '%s\n' '.Dd December 3, 2026' '.Dt RM-X 1' .Os '.Sh NAME' '.Nm rm-x' '.Nd x' '.Sh SYNOPSIS' .Nm '.Op Fl H' \
    '.Sh DESCRIPTION' text >"$page"
  run -1 bash "$RM_TOP/docs/synopsis.sh" --check "$bin" "$page"
  [[ "$output" == *"SYNOPSIS is not what 'rm-x --help' says (make man-synopsis)"* ]]
  run -0 bash "$RM_TOP/docs/synopsis.sh" "$bin" "$page"
  run -0 awk '/^\.Sh SYNOPSIS/ { on = 1; next } /^\.Sh / { on = 0 } on' "$page"
  [ "$output" = ".Nm
.Op Fl H
.Op Fl f Cm csv Ns | Ns Cm json
.Oo Fl -watch-pid Ar PID Oc Ns ...
.Op Fl -elsewhere Ns Op = Ns Ar KIB
.Op Fl -prom-label Ar NAME Ns = Ns Ar VALUE
.Op Fl -match Ar ERE | Oo Fl -no-children Oc Ar PID Ns ...
.Nm
.Fl i Ar SEC
.Op Fl -listen Ar ADDR:PORT Oo Fl -min-age Ar SEC Oc Op Fl -expose-cmdline
.Fl -
.Ar CMD
.Op Ar ARG Ns ...
.Nm
.Cm summarize
.Op Fl -json | Fl -markdown
.Ar CSV Ns ..." ]
  run -0 tail -n 2 "$page"
  [ "$output" = ".Sh DESCRIPTION
text" ]
  run -0 bash "$RM_TOP/docs/synopsis.sh" --check "$bin" "$page"
  run -0 mandoc -T lint -W warning "$page"
  [ "$(synopsis_words "$page")" = "$(help_words "$bin/rm-x")" ]
}

@test "README and integration.md say rm-tools is Linux only and what each mode needs of the kernel; README opens with its two commands" {
  local f
  # The project's fixed rule: the first lines of the README are the two commands, the title after them.
  [[ "$(sed -n 1p "$RM_TOP/README.md")" == "    make && bin/rm-demo "* ]]
  [[ "$(sed -n 2p "$RM_TOP/README.md")" == "    make check check-long "* ]]
  for f in README.md docs/integration.md; do
    grep -q 'Linux only' "$RM_TOP/$f"
    grep -q 'macOS' "$RM_TOP/$f"
    for feature in CONFIG_PROC_EVENTS CONFIG_TASKSTATS CAP_NET_ADMIN task_delayacct /proc/pressure \
      'cgroup' /dev/kmsg binfmt_misc powercap NVML; do
      grep -q -- "$feature" "$RM_TOP/$f" || { echo "$f does not name $feature"; return 1; }
    done
  done
}
