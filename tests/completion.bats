#!/usr/bin/env bats
# The bash completions in scripts/completions: one per command, each
# registered by sourcing it, offering exactly the flags the command's
# --help lists, and the right words after the flags that take an argument.

setup() {
  load test_helper/common
  COMPS="$RM_TOP/scripts/completions"
}

# complete_words CMD WORD...: what bash would offer for the last WORD of
# the command line "CMD WORD...", one a line, sorted, after sourcing CMD's
# completion in a fresh bash and calling the function it registered.
complete_words() {
  bash -c '
    source "$1" || exit 1
    shift
    spec=$(complete -p "$1") || exit 1
    fn=${spec#*-F }
    fn=${fn%% *}
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sort -u' _ "$COMPS/$1" "$@"
}

# help_flags CMD: every flag CMD --help lists, in its usage lines and its
# option table, one a line, sorted.
help_flags() {
  "$1" --help | "$PY" -c '
import re, sys
flags, usage = set(), True
for line in sys.stdin:
    if not line.strip():
        usage = False
    if usage:
        flags.update(re.findall(r"(?:^|[\[| ])(--?[a-zA-Z][-a-zA-Z0-9]*)", line))
    m = re.match(r"^\s+(-[a-zA-Z0-9])?,?\s*(--[a-z][-a-z0-9]*)?", line)
    if m:
        flags.update(f for f in m.groups() if f)
print("\n".join(sorted(flags)))'
}

# help_subcommands CMD: the subcommands CMD's usage lines name ("CMD word").
help_subcommands() {
  "$1" --help | sed -n '/^$/q; s/^\(usage:\)\{0,1\} *'"$1"' \([a-z][-a-z]*\).*/\2/p'
}

@test "complete -p rm-sample after sourcing its completion" {
  run -0 bash -c 'source "$1" && complete -p rm-sample' _ "$COMPS/rm-sample"
  [[ "$output" == "complete -F _rm_sample rm-sample" ]]
}

@test "compgen offers rm-sample's flags: all of them for -, the matching ones for a prefix" {
  run -0 complete_words rm-sample -
  local want
  want=$(help_flags rm-sample)
  [[ "$output" == "$want" ]]
  [[ "$output" == *--stage-log-dir* && "$output" == *--watch-pid* ]]
  run -0 complete_words rm-sample --st
  [[ "$output" == $'--stage-file\n--stage-log-dir\n--status' ]]
  run -0 complete_words rm-sample -i 1 --for
  [[ "$output" == --format ]]
}

@test "every command has a completion file that registers it" {
  local f n=0
  for f in "$RM_TOP"/bin/rm-* "$RM_TOP"/bin/resource-monitor.sh; do
    [[ -x "$f" ]] || continue
    [[ -f "$COMPS/${f##*/}" ]] || {
      echo "no completion for ${f##*/}"
      return 1
    }
    run -0 bash -c 'source "$1" && complete -p "$2"' _ "$COMPS/${f##*/}" "${f##*/}"
    [[ "$output" == "complete -F "*" ${f##*/}" ]]
    n=$((n + 1))
  done
  ((n >= 2))
}

@test "every completion offers exactly the flags its command's --help lists" {
  local f c want got sub
  for f in "$COMPS"/rm-*; do
    c=${f##*/}
    [[ -x "$RM_TOP/bin/$c" ]] || continue
    want=$(help_flags "$c")
    [[ -n "$want" ]]
    # The command's flags and each subcommand's, together; "--" before a
    # command to run is a word, not a flag of --help's table.
    got=$(complete_words "$c" -)
    for sub in $(help_subcommands "$c"); do
      got+=$'\n'$(complete_words "$c" "$sub" -)
    done
    got=$(sort -u <<<"$got" | grep -vx -- --)
    [[ "$got" == "$want" ]] || {
      echo "$c: completion and --help differ:"
      diff <(echo "$want") <(echo "$got")
      return 1
    }
  done
}

@test "rm-sample: formats after -f and --format=, PIDs, directories, files" {
  run -0 complete_words rm-sample -f ''
  [[ "$output" == $'csv\njsonl\nprom' ]]
  run -0 complete_words rm-sample --format = j
  [[ "$output" == jsonl ]]
  run -0 complete_words rm-sample --watch-pid "$$"
  [[ "$output" == *"$$"* ]]
  mkdir -p "$BATS_TEST_TMPDIR/logs.d"
  : >"$BATS_TEST_TMPDIR/logs.file"
  run -0 complete_words rm-sample --stage-log-dir "$BATS_TEST_TMPDIR/logs"
  [[ "$output" == "$BATS_TEST_TMPDIR/logs.d" ]]
  run -0 complete_words rm-sample --stage-file "$BATS_TEST_TMPDIR/logs"
  [[ "$output" == "$BATS_TEST_TMPDIR/logs.d"$'\n'"$BATS_TEST_TMPDIR/logs.file" ]]
  # An argument that is a number or a pattern gets no guesses.
  run -0 complete_words rm-sample -i ''
  [[ -z "$output" ]]
}

@test "rm-plot: CSV files to plot, PNG names after -o" {
  mkdir "$BATS_TEST_TMPDIR/d"
  : >"$BATS_TEST_TMPDIR/d/run.csv"
  : >"$BATS_TEST_TMPDIR/d/run.png"
  : >"$BATS_TEST_TMPDIR/d/run.txt"
  run -0 complete_words rm-plot "$BATS_TEST_TMPDIR/d/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d/run.csv" ]]
  run -0 complete_words rm-plot -o "$BATS_TEST_TMPDIR/d/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d/run.png" ]]
}

@test "rm-energy: a command to measure after --" {
  command -v rm-energy >/dev/null || skip "rm-energy is not built yet"
  run -0 complete_words rm-energy -i 1 -- mak
  [[ $'\n'"$output"$'\n' == *$'\nmake\n'* ]]
  run -0 complete_words rm-energy -f ''
  [[ "$output" == $'csv\njsonl\nprom' ]]
}

@test "rm-tree: -o columns item by item, formats, PIDs as operands, a command after --" {
  command -v rm-tree >/dev/null || skip "rm-tree is not built yet"
  run -0 complete_words rm-tree -o pid,rs
  [[ "$output" == pid,rss_kib ]]
  run -0 complete_words rm-tree --columns ''
  [[ "$output" == *cmd*pss_kib*rss_kib* ]]
  run -0 complete_words rm-tree -f ''
  [[ "$output" == $'csv\njson' ]]
  run -0 complete_words rm-tree --no-children "$$"
  [[ "$output" == *"$$"* ]]
  run -0 complete_words rm-tree --exec -- mak
  [[ $'\n'"$output"$'\n' == *$'\nmake\n'* ]]
}

@test "rm-summarize: CSVs to read, SVG names after --svg" {
  command -v rm-summarize >/dev/null || skip "rm-summarize is not built yet"
  mkdir "$BATS_TEST_TMPDIR/d"
  : >"$BATS_TEST_TMPDIR/d/resources-1.csv"
  : >"$BATS_TEST_TMPDIR/d/resources-1.svg"
  run -0 complete_words rm-summarize --json "$BATS_TEST_TMPDIR/d/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d/resources-1.csv" ]]
  run -0 complete_words rm-summarize --svg "$BATS_TEST_TMPDIR/d/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d/resources-1.svg" ]]
  run -0 complete_words rm-summarize --near-oom-mb ''
  [[ -z "$output" ]]
}

@test "rm-monitor and resource-monitor.sh: the monitor's flags, then summarize's and its CSVs" {
  command -v rm-monitor >/dev/null || skip "rm-monitor is not built yet"
  run -0 complete_words rm-monitor su
  [[ "$output" == summarize ]]
  run -0 complete_words rm-monitor --st
  [[ "$output" == $'--stage-file\n--stage-log-dir' ]]
  run -0 complete_words rm-monitor summarize --
  [[ "$output" == $'--json\n--low-disk-gb\n--markdown\n--near-oom-mb\n--svg' ]]
  mkdir "$BATS_TEST_TMPDIR/d"
  : >"$BATS_TEST_TMPDIR/d/resources-1.csv"
  : >"$BATS_TEST_TMPDIR/d/resources-1.txt"
  run -0 complete_words rm-monitor summarize --json "$BATS_TEST_TMPDIR/d/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d/resources-1.csv" ]]
  run -0 complete_words rm-monitor --out-dir "$BATS_TEST_TMPDIR/"
  [[ "$output" == "$BATS_TEST_TMPDIR/d" ]]
  # The seed's name completes the same, from its own file.
  run -0 complete_words resource-monitor.sh --watch
  [[ "$output" == --watch-pid ]]
}

@test "rm-run: a command to profile after --, its arguments as files" {
  command -v rm-run >/dev/null || skip "rm-run is not built yet"
  run -0 complete_words rm-run --json -- mak
  [[ $'\n'"$output"$'\n' == *$'\nmake\n'* ]]
  run -0 complete_words rm-run --si
  [[ "$output" == --silent ]]
  : >"$BATS_TEST_TMPDIR/peaks.csv"
  run -0 complete_words rm-run --csv "$BATS_TEST_TMPDIR/pea"
  [[ "$output" == "$BATS_TEST_TMPDIR/peaks.csv" ]]
}

@test "the completion files are shellcheck-clean, -o all included" {
  local f
  for f in "$COMPS"/*; do
    shellcheck -x -o all "$f"
  done
}
