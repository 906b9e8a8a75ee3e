#!/bin/bash
# summarize-harvest.sh: stands in for bin/rm-summarize while bats files
# run, records each invocation (arguments, input files, standard input)
# under $RM_HARVEST (default /tmp/rm-summarize-harvest/c.*) and runs the
# real binary $RM_HARVEST_BIN.  summarize-golden.sh replays the records.
#
#   cp bin/rm-summarize /tmp/ref && RM_HARVEST_BIN=/tmp/ref ...
#   cp tests/tools/summarize-harvest.sh bin/rm-summarize; bats tests/X.bats
#
# Inputs are copied whole: do not harvest tests that feed /dev/zero-sized
# files you do not want on disk.  Character devices are passed through.
set -u

real=${RM_HARVEST_BIN:?set RM_HARVEST_BIN to the real rm-summarize}
base=${RM_HARVEST:-/tmp/rm-summarize-harvest}
mkdir -p "$base"
dir=$(mktemp -d "$base/c.XXXXXX")
run=()
prev=
k=0
: >"$dir/args"
for a in "$@"; do
  if [[ $prev == --svg || $prev == --csv || $prev == --trace || $prev == -o || $prev == --output ]]; then
    printf 'OUT:%s\0' "$(basename -- "$a")" >>"$dir/args"
    run+=("$a")
  elif [[ $a == - ]]; then
    cat >"$dir/stdin"
    printf 'STDIN\0' >>"$dir/args"
    run+=("$a")
  elif [[ $a != -* && -e $a && ! -d $a && ! -c $a ]]; then
    k=$((k + 1))
    name="in$k.$(basename -- "$a")"
    if [[ -f $a ]]; then
      cp -- "$a" "$dir/$name" 2>/dev/null
      printf 'IN:%s\0' "$name" >>"$dir/args"
      run+=("$a")
    else
      cat -- "$a" >"$dir/$name" 2>/dev/null
      printf 'PIPE:%s\0' "$name" >>"$dir/args"
      run+=("$dir/$name")
    fi
  else
    printf '%s\0' "$a" >>"$dir/args"
    run+=("$a")
  fi
  prev=$a
done
if [[ -f $dir/stdin ]]; then
  exec "$real" "${run[@]}" <"$dir/stdin"
fi
exec "$real" "${run[@]}"
