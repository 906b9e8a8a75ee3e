#!/bin/bash
# replay-record.sh: record the event fixture of tests/fixtures/replay/.
# Runs a small build under rm-tree --exec in exact mode (root) with
# RM_EV_RECORD, and writes into DIR (default tests/fixtures/replay):
#   build.rec   the connector's and taskstats' datagrams of the session
#   live.csv    the exit log the live session wrote
#   replay.csv  the exit log its replay writes (RM_EV_REPLAY, no /proc):
#               what tests/rm-tree-replay.bats expects, byte for byte
#   self        the recorded rm-tree's PID (the replay's PID argument)
# The build: a pipe, a child that exits 3, a process killed by SIGKILL,
# memhog children holding 8 and 16 MiB at once, 12 short processes four
# at a time, a double fork, and a process whose last thread has another
# name (mtname).
#
# usage: tests/tools/replay-record.sh [DIR]   (after make check's build)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$top/tests/fixtures/replay}
build=${RM_BUILD:-$top/build/std}
memhog=$build/tests/memhog
mtname=$build/tests/mtname
[[ -x $memhog && -x $mtname ]] || { echo "replay-record.sh: build the helpers first (make check)" >&2; exit 2; }
mkdir -p "$dir"
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT

# shellcheck disable=SC2016  # the build's script, expanded by its sh
RM_EV_RECORD=$dir/build.rec "$top/bin/rm-tree" --exec --job /dev/null --log "$dir/live.csv" -- \
  sh -c 'head -c 3000000 /dev/zero | tail -c 1 >/dev/null
         (sleep 0.1; exit 3) & wait
         sh -c "kill -9 \$\$"
         "$0" -c 8,16 -t 0.2
         "$0" -N 12 -j 4 -m 1 -t 0.02
         "$0" -g -m 4 -t 0.1
         "$1" cc1plus
         true' "$memhog" "$mtname"
# The recorded rm-tree: the parent of the rows' root (a pid no row has).
awk -F, 'NR > 1 { pid[$1] = 1; pp[NR] = $2 } END { for (i in pp) if (!(pp[i] in pid)) { print pp[i]; exit } }' \
  "$dir/live.csv" >"$dir/self"
RM_PROC_ROOT=$empty RM_EV_REPLAY=$dir/build.rec "$top/bin/rm-tree" -i 0.01 \
  --log "$dir/replay.csv" "$(cat "$dir/self")"
wc -c "$dir/build.rec"
wc -l "$dir/live.csv" "$dir/replay.csv"
