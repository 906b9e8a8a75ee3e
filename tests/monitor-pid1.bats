#!/usr/bin/env bats
# rm-monitor [options] -- CMD: the monitor runs the build itself (under
# rm-tree --exec), so it can be a container's entrypoint.  Proved where it
# is PID 1 of a PID namespace (unshare --pid --fork --mount-proc): the
# kernel drops signals PID 1 has no handler for, gives it every orphan,
# and kills everything else there when it exits.
# shellcheck disable=SC2016,SC2154  # sh -c programs are single-quoted on purpose; bats sets output, status

setup() {
  load test_helper/common
  D="$BATS_TEST_TMPDIR"
}

teardown() {
  local p
  [[ -f "$D/pids" ]] || return 0
  while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$D/pids"
}


# needs_pidns: root with CAP_SYS_ADMIN, or a skip that says why.
needs_pidns() {
  [[ $EUID -eq 0 ]] || skip_needs_root "unshare --pid needs root" 21
  unshare --pid --fork --mount-proc true 2>/dev/null ||
    skip "unshare --pid --fork --mount-proc is refused here: no PID namespaces"
}

# rows FILE: the number of lines of FILE (0 when it is not there).
rows() { [[ -f "$1" ]] && wc -l <"$1" || echo 0; }
has_rows() { (($(rows "$1") >= $2)); }

@test "-- CMD as PID 1: a TERM to it reaches CMD, the summary is written, CMD's exit status is the monitor's" {
  needs_pidns
  # CMD ends with 9 on TERM, and only then.
  unshare --pid --fork --mount-proc rm-monitor --out-dir "$D/out" --run-id t --interval 1 -- \
    sh -c 'trap "echo term >\"$1/got\"; exit 9" TERM; echo "$$" >"$1/ready"; while :; do sleep 0.2 & wait $!; done' sh "$D" \
    </dev/null >"$D/stdout" 2>"$D/stderr" &
  local ush=$! init
  echo "$ush" >>"$D/pids"
  # Running, and the sampler with it: its first row is written.
  wait_for 60 test -s "$D/ready"
  wait_for 60 has_rows "$D/out/resources-t.csv" 2
  init=$(pgrep -P "$ush")
  # PID 1 there is C (rm-tree --init), not bash.
  [ "$(cat "/proc/$init/comm")" = rm-tree ]
  run -0 awk '$1 == "NSpid:" { print $NF }' "/proc/$init/status"
  [ "$output" = 1 ]
  kill -TERM "$init"
  local st=0
  wait "$ush" || st=$?
  [ "$st" = 9 ]
  [ "$(cat "$D/got")" = term ]
  # The summary, both forms, and CMD's row with its status: CMD's by its
  # PID (in the namespace, as rm-tree there logs it), not by its name: a
  # sampled reading of its child between fork and exec is an "sh" too.
  [ -s "$D/out/resources-t.summary.txt" ]
  run -0 jq -e . "$D/out/resources-t.summary.json"
  run -0 awk -F, -v p="$(cat "$D/ready")" 'NR > 1 && $1 == p { print $3, $9 }' "$D/out/resources-t.procs.csv"
  echo "# CMD's rows: $output"
  [ "$output" = "sh 9" ]
  run -0 cat "$D/out/resources-t.summary.txt"
  [[ "$output" == *"Process data: sampled mode"* ]]
  [ ! -s "$D/stderr" ] || [[ "$(cat "$D/stderr")" != *"rm-monitor:"* ]]
}

@test "-- CMD as PID 1: CMD's exit status 7 is the monitor's; an orphaned grandchild is reaped, followed, no zombie left" {
  needs_pidns
  # The grandchild's parent ends at once; CMD then waits (30 s at most)
  # for its /proc entry to go: a zombie keeps it until someone reaps it.
  run -7 unshare --pid --fork --mount-proc rm-monitor --out-dir "$D/out" --run-id o --interval 1 -- \
    sh -c 'sh -c "sleep 1 & echo \$! >\"$1/gc\""; gc=$(cat "$1/gc"); i=0
      while [ -e "/proc/$gc" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
      [ -e "/proc/$gc" ] && echo "still there: $(cat "/proc/$gc/stat")" >"$1/zombie"
      ps -eo stat= | grep -c "^Z" >"$1/zombies"; exit 7' sh "$D" </dev/null
  [ ! -e "$D/zombie" ]
  [ "$(cat "$D/zombies")" = 0 ]
  # Followed: its row, reparented to rm-tree --exec (a subreaper), exit 0.
  local gc
  gc=$(cat "$D/gc")
  run -0 awk -F, -v gc="$gc" 'NR > 1 && $1 == gc { print $3, $9 }' "$D/out/resources-o.procs.csv"
  [ "$output" = "sleep 0" ]
  [ -s "$D/out/resources-o.summary.json" ]
  # rm-tree --exec's job row beside the files: the summary and the run
  # history say CMD's status.
  run -0 cat "$D/out/resources-o.summary.txt"
  [[ "$output" == *"Job: sh -c "*$'\n'"  exit 7, elapsed "* ]]
  [ -L "$D/out/resources-o.latest.job.csv" ]
  run -0 awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["exit"] }' "$D/out/resources-o.run.csv"
  [ "$output" = 7 ]
}

@test "-- CMD not as PID 1: CMD's status, its stdin and stdout, the umask it was started with; a TERM reaches it" {
  rm -f "$D/fifo" && mkfifo "$D/fifo"
  ( umask 0002 && exec rm-monitor --out-dir "$D/out" --run-id h --interval 1 -- \
    sh -c 'umask >"$1/umask"; ls -l "/proc/$$/fd/" >"$1/fds"; read -r line; echo "got $line"; trap "exit 3" TERM; echo >"$1/ready"; while :; do sleep 0.2 & wait $!; done' sh "$D" \
    <"$D/fifo" >"$D/stdout" 2>"$D/stderr" ) &
  local mon=$!
  echo "$mon" >>"$D/pids"
  echo hello >"$D/fifo"
  wait_for 60 test -e "$D/ready"
  wait_for 60 has_rows "$D/out/resources-h.csv" 2
  kill -TERM "$mon"
  local st=0
  wait "$mon" || st=$?
  [ "$st" = 3 ]
  [ "$(cat "$D/stdout")" = "got hello" ]
  [ "$(cat "$D/umask")" = 0002 ]
  # The exit log's descriptor is rm-tree's, not CMD's.
  run -0 cat "$D/fds"
  [[ "$output" != *procs.csv* ]]
  [ -s "$D/out/resources-h.summary.txt" ]
}

@test "-- CMD: usage errors; RESOURCE_MONITOR=0 runs CMD unmonitored with its status" {
  run -2 rm-monitor --out-dir "$D/out" --
  [[ "$output" == *"-- needs a command after it"* ]]
  run -2 rm-monitor --out-dir "$D/out" --watch-pid $$ -- true
  [[ "$output" == *"no --watch-pid"* ]]
  run -2 rm-monitor --out-dir "$D/out" --scope host -- true
  [[ "$output" == *"--scope is its tree"* ]]
  [ ! -e "$D/out" ]
  RESOURCE_MONITOR=0 run -5 rm-monitor --out-dir "$D/out" --interval 1 -- sh -c 'echo ran; exit 5'
  [ "$output" = ran ]
  [ ! -e "$D/out" ]
}
