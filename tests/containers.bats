#!/usr/bin/env bats
# rm-tree --containers: the containers companion CSV.  Fixture trees under
# RM_SYS_ROOT stand in for the kernel's memory cgroups (v1 and v2), with
# stand-in container clients (argv[0] docker) in the watched tree; the
# tests tagged slow run a private dockerd (test_helper/docker.bash).

setup() {
  load test_helper/common
  load test_helper/docker
  ID1=$(printf 'a%.0s' {1..64})
  ID2=$(printf 'b%.0s' {1..64})
  ID3=$(printf 'c%.0s' {1..64})
  T=$BATS_TEST_TMPDIR
}

teardown() {
  touch "$T/go" "$T/stop" "$T/w/stop" 2>/dev/null || true
  [[ -n "${TREE_PID:-}" ]] && kill "${TREE_PID}" 2>/dev/null
  [[ -n "${ORCH:-}" ]] && kill "${ORCH}" 2>/dev/null
  [[ -n "${OTHER:-}" ]] && kill "${OTHER}" 2>/dev/null
  [[ -s "$T/kid" ]] && kill "$(cat "$T/kid")" 2>/dev/null
  # a legacy build's step waiting for /stop in its own root
  local p
  for p in $(pgrep -f '^/bin/sh -c until \[ -e /stop \]'); do
    touch "/proc/$p/root/stop" 2>/dev/null
  done
  # shellcheck disable=SC2086  # each is a PID or empty
  wait ${TREE_PID:-} ${ORCH:-} 2>/dev/null || true  # not a bare wait: dockerd is a child too
  docker_stop
  if [[ -n "${PM:-}" ]]; then
    # shellcheck disable=SC2086  # PM is words
    $PM rm -af -t 0 >/dev/null 2>&1
    awk -v d="$T/pm/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n 1 umount -l
  fi
  if [[ -n "${CGP:-}" ]]; then
    local d
    for d in "/sys/fs/cgroup/memory/${CGP}"/*/; do rmdir "${d}" 2>/dev/null; done
    rmdir "/sys/fs/cgroup/memory/${CGP}" 2>/dev/null
  fi
  return 0
}

# v1_cg DIR LIMIT USAGE PEAK FAILCNT OOM: a v1 memory cgroup's files.
v1_cg() {
  mkdir -p "$1"
  echo "$2" >"$1/memory.limit_in_bytes"
  echo "$3" >"$1/memory.usage_in_bytes"
  echo "$4" >"$1/memory.max_usage_in_bytes"
  echo "$5" >"$1/memory.failcnt"
  printf 'oom_kill_disable 0\nunder_oom 0\noom_kill %s\n' "$6" >"$1/memory.oom_control"
  : >"$1/cgroup.procs"
}

# v2_cg DIR MAX CURRENT PEAK OOM: a v2 cgroup's memory files.
v2_cg() {
  mkdir -p "$1"
  echo "$2" >"$1/memory.max"
  echo "$3" >"$1/memory.current"
  echo "$4" >"$1/memory.peak"
  printf 'low 0\nhigh 0\nmax 3\noom 1\noom_kill %s\noom_group_kill 0\n' "$5" >"$1/memory.events"
  : >"$1/cgroup.procs"
}

UNL=9223372036854771712

# client_line SCRIPT ARGS...: a stand-in container client: a bash whose
# argv is "docker -s ARGS..." (a flag docker does not have; its -c would
# be a context), reading SCRIPT from its stdin, so the tree sees a docker
# client with ARGS; it runs SCRIPT.
client_line() {
  printf '( exec -a docker bash -s %s <<<%q ) &\n' "${*:2}" "$1"
}

# client_line_c SCRIPT ARGS...: the same as "docker -c SCRIPT ARGS...",
# for ARGS that begin with options bash would take (the -c, docker's
# --context, is then overridden by a --context in ARGS).
client_line_c() {
  printf '( exec -a docker bash -c %q %s ) &\n' "$1" "${*:2}"
}

# ct FILE ID COL [STATE]: COL of the last row of container ID (in STATE).
ct() {
  "$PY" - "$@" <<'PY'
import csv, sys
f, cid, col = sys.argv[1:4]
st = sys.argv[4] if len(sys.argv) > 4 else None
v = None
for r in csv.DictReader(open(f, newline="")):
    if r["id"] == cid and (st is None or r["state"] == st):
        v = r[col]
if v is None:
    sys.exit(1)
print(v)
PY
}

has_row() { ct "$1" "$2" state ${3:+"$3"} >/dev/null 2>&1; }
tied_is() { [[ "$(ct "$1" "$2" tied 2>/dev/null)" == "$3" ]]; }

# tie_now FILE ID: the tied column of ID's last row, by awk (cheap on a
# loaded host: these files have no quoted fields where no name is given).
tie_now() { awk -F, -v id="$2" '$3 == id { t = $6 } END { print t }' "$1"; }

# within SEC CMD...: CMD succeeds within SEC seconds of wall time, however
# slow each try is.
within() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
}

start_tree() {
  RM_SYS_ROOT="$T/sys" rm-tree -i 0.2 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
}

@test "--containers: tied by --cidfile and --cgroup-parent; a neighbour untied; limits, peaks, OOM kills; a gone row" {
  M=$T/sys/fs/cgroup/memory
  mkdir -p "$M"
  echo 0 >"$M/memory.usage_in_bytes"
  echo "$UNL" >"$M/memory.limit_in_bytes"
  v1_cg "$M/docker" "$UNL" 0 0 0 0
  v1_cg "$M/ci" $((1 << 30)) 0 0 0 0
  v1_cg "$M/docker/$ID1" $((64 << 20)) $((10 << 20)) $((64 << 20)) 7 1
  v1_cg "$M/ci/$ID2" "$UNL" $((5 << 20)) $((6 << 20)) 0 0
  v1_cg "$M/docker/$ID3" $((32 << 20)) 1024 2048 0 0
  cd "$T"
  {
    client_line "until [ -e go ]; do sleep 0.1; done; echo $ID1 >cid; until [ -e stop ]; do sleep 0.1; done; :" \
      run --rm --cidfile cid --name st1 -m 64m img
    client_line 'until [ -e stop ]; do sleep 0.1; done; :' run --cgroup-parent=/ci img make --cidfile x
    echo wait
  } >orch.sh
  bash orch.sh & ORCH=$!
  start_tree
  wait_for 30 has_row c.csv "$ID3"
  # Before the client writes its cidfile the container is not tied.
  tied_is c.csv "$ID1" ""
  touch go
  wait_for 30 tied_is c.csv "$ID1" cidfile
  wait_for 30 tied_is c.csv "$ID2" cgroup-parent
  rm -rf "${M:?}/docker/$ID3"
  wait_for 30 has_row c.csv "$ID3" gone
  touch stop
  wait "$TREE_PID"
  [ "$(head -n 1 c.csv)" = "epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,failcnt,oom_kills,state" ]
  [ "$(ct c.csv "$ID1" name)" = st1 ]
  [ "$(ct c.csv "$ID1" cgroup)" = "/docker/$ID1" ]
  [ "$(ct c.csv "$ID1" limit_kib)" = 65536 ]
  [ "$(ct c.csv "$ID1" usage_kib)" = 10240 ]
  [ "$(ct c.csv "$ID1" peak_kib)" = 65536 ]
  [ "$(ct c.csv "$ID1" failcnt)" = 7 ]
  [ "$(ct c.csv "$ID1" oom_kills)" = 1 ]
  # the tightest limit up the tree: /ci's 1 GiB
  [ "$(ct c.csv "$ID2" limit_kib)" = 1048576 ]
  [ "$(ct c.csv "$ID2" name)" = "" ]
  # the neighbour: listed, never tied; its gone row repeats the last values
  [ "$(ct c.csv "$ID3" tied)" = "" ]
  [ "$(ct c.csv "$ID3" peak_kib gone)" = 2 ]
  [ "$(ct c.csv "$ID3" limit_kib gone)" = 32768 ]
  [ "$(grep -c "$ID3.*,gone$" c.csv)" -eq 1 ]
  # elapsed_s is the exit log's clock: every row within the run
  "$PY" - c.csv procs.csv <<'PY'
import csv, sys
c = list(csv.DictReader(open(sys.argv[1], newline="")))
p = list(csv.DictReader(open(sys.argv[2], newline="")))
last = max(float(r["end_s"]) for r in p)
assert all(0 <= float(r["elapsed_s"]) <= last + 0.5 for r in c), last
assert all(len(r["epoch"].split(".")[1]) == 3 for r in c)
PY
}

# engine_up SOCKET: wait for a fake engine's socket.
engine_up() { wait_for 30 test -S "$1"; }

# list_engine SOCKET: a fake engine at SOCKET (ES) answering engine_list's
# containers, its requests in req.log, its PID in OTHER.
list_engine() {
  ES=$1
  engine_list "$T/list.json"
  "$PY" "$RM_TOP/tests/helpers/fake-engine.py" "$ES" "$T/req.log" list "$T/list.json" &
  OTHER=$!
  engine_up "$ES"
}

# engine_list FILE: a docker /containers/json answer: ID1 made now with
# the run's label and a name, ID3 with the same label made an hour ago,
# ID2 with another value (the Ids, Names, Labels and Created docker gives,
# among fields the reader skips).
engine_list() {
  cat >"$1" <<EOF
[{"Id":"$ID1","Names":["/st\u0031"],"Image":"img","Command":"make -j4","Created":@NOW@,
  "Ports":[],"Labels":{"rm-tools.run":"r1","x":"y"},"State":"running","Status":"Up 1 second",
  "HostConfig":{"NetworkMode":"none"},"NetworkSettings":{"Networks":{}},"Mounts":[]},
 {"Id":"$ID3","Names":["/old"],"Created":1000000000,"Labels":{"rm-tools.run":"r1"}},
 {"Id":"$ID2","Names":["/other"],"Created":@NOW@,"Labels":{"rm-tools.run":"r2"}}]
EOF
}

# engine_tree: the fixture hierarchy (ID1, ID2, ID3 under /docker) and an
# orchestrator whose one docker client gives FLAGS, with DOCKER_HOST at
# the fake engine's socket $ES (or the shell line ENGINE_ENV in its place).
engine_tree() {
  M=$T/sys/fs/cgroup/memory
  mkdir -p "$M"
  echo 0 >"$M/memory.usage_in_bytes"
  echo "$UNL" >"$M/memory.limit_in_bytes"
  v1_cg "$M/docker" "$UNL" 0 0 0 0
  local id
  for id in "$ID1" "$ID2" "$ID3"; do v1_cg "$M/docker/$id" $((64 << 20)) 1024 2048 0 0; done
  cd "$T"
  {
    echo "${ENGINE_ENV:-export DOCKER_HOST=unix://$ES}"
    "${ENGINE_CLIENT:-client_line}" 'until [ -e stop ]; do sleep 0.1; done; :' "$@"
    echo wait
  } >orch.sh
  bash orch.sh & ORCH=$!
  start_tree
}

# said_then_stop PATTERN: rm-tree's stderr says PATTERN (a grep ERE),
# then the ticks go on (3 more rows of c.csv after it was said); the
# orchestrator is told to stop and rm-tree's end waited for.
said_then_stop() {
  local rows
  wait_for 30 grep -q "$1" "$T/tree.err"
  rows=$(wc -l <c.csv)
  wait_for 30 eval '(($(wc -l <c.csv) > rows + 3))'
  touch stop
  wait "$TREE_PID"
}

@test "--containers: a cidfile written by a client that exits before the next tick (docker create) still ties; one written after its client ended never does" {
  M=$T/sys/fs/cgroup/memory
  mkdir -p "$M"
  echo 0 >"$M/memory.usage_in_bytes"
  echo "$UNL" >"$M/memory.limit_in_bytes"
  v1_cg "$M/docker" "$UNL" 0 0 0 0
  v1_cg "$M/docker/$ID1" $((64 << 20)) $((10 << 20)) $((64 << 20)) 0 0
  v1_cg "$M/docker/$ID2" $((64 << 20)) $((10 << 20)) $((64 << 20)) 0 0
  mkdir -p "$T/sub"
  cd "$T"
  {
    echo 'until [ -e go ]; do sleep 0.1; done'
    # create: writes its cidfile (relative to its own cwd) and exits
    # 50 ms later, as a real docker create does once the engine has
    # answered (a bash that lives about 2 ms can end before rm-tree reads
    # its command line, within the 2 ms settle or a late wake-up: a full
    # make check once failed here with the tie never made); a later
    # client cannot name it.
    echo '(cd sub && exec -a docker bash -s create --cidfile c1.cid img <<<"echo '"$ID1"' >c1.cid; sleep 0.05")'
    # a client that wrote nothing; the same name is written afterwards
    # by someone else.
    echo '(cd sub && exec -a docker bash -s create --cidfile c2.cid img <<<"sleep 0.05")'
    echo 'touch created; until [ -e stop ]; do sleep 0.1; done'
  } >orch.sh
  bash orch.sh & ORCH=$!
  # -i 3: the clients live a few milliseconds, never across a tick.
  RM_SYS_ROOT="$T/sys" rm-tree -i 3 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  within 60 grep -qs "$ID1" c.csv
  touch go
  within 60 test -e created
  within 60 eval '[ "$(tie_now c.csv "$ID1")" = cidfile ]'
  # After the tick that tied ID1 (the clients were gone by then), the
  # second client's name is written by someone else: never read.
  echo "$ID2" >sub/c2.cid
  local n
  n=$(grep -c "^" c.csv)
  within 60 eval '[ "$(grep -c "^" c.csv)" -ge $((n + 4)) ]'
  touch stop
  wait "$TREE_PID"
  [ "$(tie_now c.csv "$ID1")" = cidfile ]
  [ "$(tie_now c.csv "$ID2")" = "" ]
  # the first client is a row of the build, its command line read
  grep -q ',docker -s create --cidfile c1.cid img,' procs.csv
}

@test "--containers: --label K=V and --name are tied by the engine's answer over the client's DOCKER_HOST; a container older than the client, or another value, is not" {
  list_engine "$T/e.sock"
  engine_tree run --rm --label rm-tools.run=r1 img make
  wait_for 30 tied_is c.csv "$ID1" label
  wait_for 30 has_row c.csv "$ID3"
  touch stop
  wait "$TREE_PID"
  [ "$(ct c.csv "$ID3" tied)" = "" ]
  [ "$(ct c.csv "$ID2" tied)" = "" ]
  # What was asked: the label as docker's filter, every container.
  run -0 cat req.log
  [[ "${lines[0]}" == 'GET /containers/json?all=1&filters={"label":["rm-tools.run=r1"]} HTTP/1.1' ]]
  # --name: the name one of "Names" gives (\u0031 is "1"), exactly.
  rm -f stop c.csv req.log
  engine_tree run --rm --name st1 img make
  wait_for 30 tied_is c.csv "$ID1" name
  touch stop
  wait "$TREE_PID"
  [ "$(ct c.csv "$ID1" name)" = st1 ]
  [ "$(ct c.csv "$ID3" tied)" = "" ]
  grep -qF 'filters={"name":["st1"]}' req.log
  run -0 cat "$T/tree.err"
  [[ "$output" != *"cannot ask the engine"* ]]
}

# docker_context DIR NAME SOCKET: a docker config directory with context
# NAME at SOCKET, as `docker context create` writes it.
docker_context() {
  local h
  h=$(printf %s "$2" | sha256sum | cut -d' ' -f1)
  mkdir -p "$1/contexts/meta/$h"
  printf '{"Name":"%s","Metadata":{},"Endpoints":{"docker":{"Host":"unix://%s","SkipTLSVerify":false}}}' \
    "$2" "$3" >"$1/contexts/meta/$h/meta.json"
}

@test "--containers: a docker context (the config's currentContext, DOCKER_CONTEXT, --context) is followed to its engine; one that cannot be read is said once" {
  list_engine "$T/ctx.sock"
  docker_context "$T/home/.docker" ci "$ES"
  echo '{"auths":{},"currentContext":"ci"}' >"$T/home/.docker/config.json"
  local how
  for how in current env flag; do
    rm -f stop c.csv
    case $how in
      current) ENGINE_ENV="unset DOCKER_HOST DOCKER_CONTEXT; export HOME=$T/home"
        engine_tree run --rm --label rm-tools.run=r1 img make ;;
      env) ENGINE_ENV="unset DOCKER_HOST; export HOME=$T/nowhere DOCKER_CONFIG=$T/home/.docker DOCKER_CONTEXT=ci"
        engine_tree run --rm --label rm-tools.run=r1 img make ;;
      flag) ENGINE_ENV="unset DOCKER_HOST DOCKER_CONTEXT; export HOME=$T/nowhere"
        ENGINE_CLIENT=client_line_c engine_tree --config "$T/home/.docker" --context ci run --rm --label rm-tools.run=r1 img make ;;
    esac
    wait_for 30 tied_is c.csv "$ID1" label
    touch stop
    wait "$TREE_PID"
    [ "$(ct c.csv "$ID3" tied)" = "" ]
    echo "$how: tied"
  done
  [ "$(grep -c 'filters={"label":\["rm-tools.run=r1"\]}' "$T/req.log")" -eq 3 ]
  # DOCKER_HOST beats the config's context (an engine at no socket)
  rm -f stop c.csv
  ENGINE_ENV="export HOME=$T/home DOCKER_HOST=unix://$T/none.sock" engine_tree run --rm --label rm-tools.run=r1 img make
  wait_for 30 grep -q "cannot ask the engine at $T/none.sock" "$T/tree.err"
  touch stop
  wait "$TREE_PID"
  # a context with no metadata: said once, nothing tied
  rm -f stop c.csv
  ENGINE_ENV="unset DOCKER_HOST; export HOME=$T/home DOCKER_CONTEXT=gone"
  engine_tree run --rm --label rm-tools.run=r1 --name st1 img make
  said_then_stop "docker context 'gone'"
  [ "$(ct c.csv "$ID1" tied)" = "" ]
  [ "$(grep -c "docker context" "$T/tree.err")" -eq 1 ]
  grep -q "the engine of docker context 'gone' (client [0-9]*) is not followed: No such file or directory (its --name and --label do not tie)" "$T/tree.err"
  kill "$OTHER"
  wait "$OTHER" 2>/dev/null || true
}

@test "--containers: an engine socket of another user, one served by another user, one that never answers, a huge answer and garbage tie nothing, are said once, and never stall a tick" {
  [[ $EUID -eq 0 ]] || skip_needs_root "an engine of another user needs root to set up"
  D=$(mktemp -d /tmp/rmeng.XXXXXX)
  chmod 0755 "$D"
  chown nobody "$D"
  engine_list "$D/list.json"
  chmod 0644 "$D/list.json"
  # the socket and its server are nobody's
  ES=$D/nobody.sock
  setpriv --reuid nobody --regid nogroup --clear-groups "$PY" "$RM_TOP/tests/helpers/fake-engine.py" \
    "$ES" "$D/req.log" list "$D/list.json" &
  OTHER=$!
  engine_up "$ES"
  engine_tree run --rm --label rm-tools.run=r1 img make
  wait_for 30 grep -q 'cannot ask the engine' "$T/tree.err"
  touch stop
  wait "$TREE_PID"
  grep -q "cannot ask the engine at $ES which containers carry the label rm-tools.run=r1: the socket is owned by another user" "$T/tree.err"
  [ "$(ct c.csv "$ID1" tied)" = "" ]
  [ ! -e "$D/req.log" ]
  # a root-owned socket file, served by nobody (its listener's credentials)
  chown root "$ES"
  rm -f stop c.csv
  engine_tree run --rm --label rm-tools.run=r1 img make
  wait_for 30 grep -q "answering is not root's" "$T/tree.err"
  touch stop
  wait "$TREE_PID"
  [ "$(ct c.csv "$ID1" tied)" = "" ]
  # hung up on before a word was sent
  [ ! -e "$D/req.log" ]
  kill "$OTHER"
  wait "$OTHER" 2>/dev/null || true
  # engines of root that misbehave
  declare -A said=([silent]="no whole answer in 500 ms" [huge]="an answer longer than 1048575 bytes"
    [garbage]="a malformed HTTP answer")
  for mode in silent huge garbage; do
    ES=$T/$mode.sock
    "$PY" "$RM_TOP/tests/helpers/fake-engine.py" "$ES" "$T/req-$mode.log" "$mode" &
    OTHER=$!
    engine_up "$ES"
    rm -f stop c.csv
    engine_tree run --rm --label rm-tools.run=r1 --label a=1 --label b=2 --name st1 img make
    # the ticks go on: more rows after it was said
    said_then_stop "cannot ask the engine at $ES"
    [ "$(ct c.csv "$ID1" tied)" = "" ]
    [ "$(grep -c "cannot ask the engine at $ES" "$T/tree.err")" -eq 1 ]
    grep -q "cannot ask the engine at $ES which .*: ${said[$mode]} (" "$T/tree.err"
    # asked once: its failure holds back the client's other three ties
    # too (four questions would stall a tick 2 s on a silent engine)
    [ "$(wc -l <"$T/req-$mode.log")" -eq 1 ]
    kill "$OTHER"
    wait "$OTHER" 2>/dev/null || true
  done
  rm -rf "$D"
}

@test "--containers on cgroup v2: memory.max up the tree, memory.current, memory.peak, memory.events; no failcnt" {
  R=$T/sys/fs/cgroup
  mkdir -p "$R"
  echo "cpuset cpu io memory pids" >"$R/cgroup.controllers"
  v2_cg "$R/system.slice" max 0 0 0
  v2_cg "$R/system.slice/docker-$ID1.scope" $((128 << 20)) $((100 << 20)) $((127 << 20)) 2
  v2_cg "$R/machine.slice" $((64 << 20)) 0 0 0
  v2_cg "$R/machine.slice/libpod-$ID2.scope" max $((1 << 20)) $((2 << 20)) 0
  v2_cg "$R/machine.slice/libpod-$ID2.scope/container" max $((1 << 20)) $((2 << 20)) 0
  cd "$T"
  echo 'until [ -e stop ]; do sleep 0.1; done' >orch.sh
  bash orch.sh & ORCH=$!
  start_tree
  wait_for 30 has_row c.csv "$ID2"
  touch stop
  wait "$TREE_PID"
  if [[ -e /sys/fs/cgroup/memory/memory.usage_in_bytes ]]; then
    : # this host's mountinfo names a v1 memory hierarchy; the fixture's is read all the same
  fi
  [ "$(ct c.csv "$ID1" cgroup)" = "/system.slice/docker-$ID1.scope" ]
  [ "$(ct c.csv "$ID1" limit_kib)" = 131072 ]
  [ "$(ct c.csv "$ID1" usage_kib)" = 102400 ]
  [ "$(ct c.csv "$ID1" peak_kib)" = 130048 ]
  [ "$(ct c.csv "$ID1" failcnt)" = "" ]
  [ "$(ct c.csv "$ID1" oom_kills)" = 2 ]
  [ "$(ct c.csv "$ID1" tied)" = "" ]
  # podman's container cgroup, not its "container" child; its slice's limit
  [ "$(ct c.csv "$ID2" cgroup)" = "/machine.slice/libpod-$ID2.scope" ]
  [ "$(ct c.csv "$ID2" limit_kib)" = 65536 ]
  [ "$(grep -c "libpod-$ID2.scope/container" c.csv)" -eq 0 ]
}

@test "--containers: a member process inside a container's cgroup ties it (fork), as podman's conmon lineage does" {
  M=$T/sys/fs/cgroup/memory
  mkdir -p "$M"
  echo 0 >"$M/memory.usage_in_bytes"
  v1_cg "$M/libpod_parent" "$UNL" 0 0 0 0
  v1_cg "$M/libpod_parent/libpod-$ID1" $((64 << 20)) 1024 2048 0 0
  v1_cg "$M/libpod_parent/libpod-$ID2" $((64 << 20)) 1024 2048 0 0
  cd "$T"
  echo 'sleep 600 & k=$!; echo $k >kid; until [ -e stop ]; do sleep 0.1; done; kill $k' >orch.sh
  bash orch.sh & ORCH=$!
  sleep 600 & OTHER=$!
  echo "$OTHER" >"$M/libpod_parent/libpod-$ID2/cgroup.procs"
  start_tree
  wait_for 30 test -s kid
  cat kid >"$M/libpod_parent/libpod-$ID1/cgroup.procs"
  wait_for 30 tied_is c.csv "$ID1" fork
  touch stop
  wait "$TREE_PID"
  kill "$OTHER"
  [ "$(ct c.csv "$ID1" tied)" = fork ]
  [ "$(ct c.csv "$ID2" tied)" = "" ]
}

# The kernel's own hierarchy (v1 memory, where this machine has one): a
# tick read each container's files by path (an open, two reads and a
# close each, its parents' limits again for each container) and listed
# every directory of the hierarchy, leaves too.  Now a container's files
# are kept open and read by one pread a tick, each parent's limit once a
# tick, and a directory whose link count says it has no subdirectory is
# stat'ed, not listed.  The values stay the kernel's, and a removed
# container's kept files do not keep its cgroup from going: it gets its
# gone row.
@test "--containers on the kernel's hierarchy: a container's files opened once and read by pread each tick, a leaf cgroup not listed, the limit up the tree and the usage the kernel's, a removed container gone" {
  local m=/sys/fs/cgroup/memory st
  [[ -e "$m/memory.usage_in_bytes" && -w "$m" ]] || skip "no writable v1 memory hierarchy here"
  CGP="rmt-ct-$$"
  local p="$m/$CGP" c="$m/$CGP/$ID3"
  mkdir "$p" "$p/leaf" "$c"
  echo $((200 << 20)) >"$p/memory.limit_in_bytes"
  echo $((256 << 20)) >"$c/memory.limit_in_bytes"
  cd "$T"
  echo 'until [ -e stop ]; do sleep 0.1; done' >orch.sh
  bash orch.sh & ORCH=$!
  # memhog in the container's cgroup, holding 20 MiB
  sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -m 20 -t 600 -r "$3"' - "$c" "$RM_BUILD/tests/memhog" "$T/hog-up" &
  OTHER=$!
  wait_for 30 test -e "$T/hog-up"
  strace -y -o "$T/st" -e trace=openat,pread64,newfstatat rm-tree -i 0.2 --watch-pid "$ORCH" \
    --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  wait_for 30 has_row c.csv "$ID3"
  more_rows() { [[ "$(grep -c "$ID3" c.csv)" -ge "$1" ]]; }
  wait_for 30 more_rows 6
  kill "$OTHER"
  wait "$OTHER" || true
  OTHER=''
  rmdir "$c"
  wait_for 30 has_row c.csv "$ID3" gone
  touch stop
  wait "$TREE_PID"
  [ "$(ct c.csv "$ID3" cgroup run)" = "/$CGP/$ID3" ]
  [ "$(ct c.csv "$ID3" limit_kib run)" = 204800 ]
  (($(ct c.csv "$ID3" usage_kib run) >= 20480))
  (($(ct c.csv "$ID3" peak_kib run) >= 20480))
  # opened once, read at every tick
  st=$(grep -c "^openat(.*$ID3/memory.usage_in_bytes\"" st || true)
  echo "# usage file opened $st times, read $(grep -c "^pread64([0-9]*<$c/memory.usage_in_bytes>" st) times" >&3
  [ "$st" -eq 1 ]
  (($(grep -c "^pread64([0-9]*<$c/memory.usage_in_bytes>" st) >= 5))
  # the leaf stat'ed, never opened
  (($(grep -c "^newfstatat(.*\"leaf\"" st) >= 5))
  [ "$(grep -c "^openat(.*$CGP/leaf\"" st || true)" -eq 0 ]
}

# orch_with_monitors: an orchestrator that starts a build step and two
# rm-tools monitors of its own (a real rm-tree, and an rm-monitor whose
# helper child runs as monkid).  With a go file named, the monitors start
# first and the build step and monkid wait for it.
orch_with_monitors() {
  cp /bin/sleep "$T/mybuild"
  cp /bin/sleep "$T/monkid"
  cat >"$T/orch.sh" <<EOF
go=\${1:-}
wait_go() { if [ -n "\$go" ]; then until [ -e "\$go" ]; do sleep 0.05; done; fi; }
rm-tree -i 0.2 -n 20 \$\$ >/dev/null &
( exec -a rm-monitor bash -c "\$(declare -f wait_go); go=\$go; wait_go; \"$T/monkid\" 1.5; :" ) &
wait_go
"$T/mybuild" 1.5 &
wait
EOF
}

@test "rm-tools monitors the orchestrator started are never the build's (exact and sampled)" {
  orch_with_monitors
  for mode in exact sampled; do
    rm -f "$T/go"
    if [[ "$mode" == sampled ]]; then
      # Sampled mode sees no exec: a scan that met the monitor's shell in
      # the instant between its fork and its exec took it for the
      # build's (rm-tree(1) says so).  Here the monitors run before the
      # watcher's first scan, as an orchestrator's usually do.
      export RM_NO_EVENTS=1
      bash "$T/orch.sh" "$T/go" & ORCH=$!
      wait_for 30 pgrep -f "^rm-monitor -c"
      wait_for 30 pgrep -f "^rm-tree -i 0.2 -n 20 $ORCH"
      touch "$T/go"
    else
      bash "$T/orch.sh" & ORCH=$!
    fi
    rm-tree -i 0.2 --watch-pid "$ORCH" "$ORCH" >"$T/procs-$mode.csv" 2>/dev/null
    run -0 "$PY" -c 'import csv,sys
print(" ".join(sorted(set(r["comm"] for r in csv.DictReader(open(sys.argv[1], newline=""))))))' "$T/procs-$mode.csv"
    echo "$mode: $output"
    [[ " $output " == *" mybuild "* ]]
    [[ " $output " != *" rm-tree "* ]]
    [[ " $output " != *" monkid "* ]]
    [[ " $output " != *" rm-monitor "* ]]
  done
}

@test "--containers needs a stream; a symlink at FILE is refused" {
  run -2 --separate-stderr rm-tree --containers "$T/c.csv"
  [[ "$stderr" == *"--containers needs -i SEC or --exec"* ]]
  ln -s /etc/hostname "$T/c.csv"
  run -1 --separate-stderr rm-tree -i 0.2 -n 1 --containers "$T/c.csv" $$
  [[ "$stderr" == *"cannot write the containers file '$T/c.csv': a symbolic link, not followed"* ]]
}

# ---- a real engine (test_helper/docker.bash) ----

# dk_ids: the full IDs of the private engine's containers.
dk_ids() { docker ps -aq --no-trunc; }

# oom_is FILE ID N: the last row of ID has oom_kills N.
oom_is() { [[ "$(ct "$1" "$2" oom_kills 2>/dev/null)" == "$3" ]]; }

# bats test_tags=slow
@test "docker: a container OOM-killed at its --memory limit is tied by --cidfile, its limit and kill read; a neighbour outside the tree is never tied" {
  docker_start
  mkdir -p "$T/w"
  # The neighbour: started by the test, not by the watched orchestrator.
  docker run -d -v "$T/w:/w" rmtest:1 sh -c 'until [ -e /w/stop ]; do sleep 0.1; done' >"$T/nb"
  cat >"$T/orch.sh" <<EOF
docker run --rm --cidfile "$T/cid" -m 64m --memory-swap 64m -v "$T/w:/w" rmtest:1 \
  sh -c '/bin/memhog -m 200 -t 1; until [ -e /w/stop ]; do sleep 0.1; done'
EOF
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  rm-tree -i 0.2 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  wait_for 120 test -s "$T/cid"
  ID=$(cat "$T/cid")
  wait_for 120 oom_is "$T/c.csv" "$ID" 1
  # The kernel's own figures, read by hand while the cgroup lives.
  D=/sys/fs/cgroup/memory/docker/$ID
  hand_peak=$(( $(cat "$D/memory.max_usage_in_bytes") / 1024 ))
  hand_limit=$(( $(cat "$D/memory.limit_in_bytes") / 1024 ))
  touch "$T/w/stop"
  wait "$TREE_PID"
  echo "peak: csv $(ct "$T/c.csv" "$ID" peak_kib) by hand $hand_peak" >&3
  [ "$(ct "$T/c.csv" "$ID" tied)" = cidfile ]
  [ "$(ct "$T/c.csv" "$ID" cgroup)" = "/docker/$ID" ]
  [ "$(ct "$T/c.csv" "$ID" limit_kib)" = 65536 ]
  [ "$hand_limit" -eq 65536 ]
  [ "$(ct "$T/c.csv" "$ID" oom_kills)" = 1 ]
  [ "$(ct "$T/c.csv" "$ID" peak_kib)" -eq "$hand_peak" ]
  echo "failcnt: $(ct "$T/c.csv" "$ID" failcnt)" >&3
  # The neighbour ran all along, listed and never tied.
  NB=$(cat "$T/nb")
  has_row "$T/c.csv" "$NB"
  run -0 "$PY" -c 'import csv,sys
print(sorted(set(r["tied"] for r in csv.DictReader(open(sys.argv[1], newline="")) if r["id"] == sys.argv[2])))' "$T/c.csv" "$NB"
  [ "$output" = "['']" ]
}

# bats test_tags=slow
@test "docker: --cgroup-parent ties the containers under it; a plain docker run's container is listed untied" {
  docker_start
  mkdir -p "$T/w"
  CGP=rmct-ctree-$$
  cat >"$T/orch.sh" <<EOF
docker run --rm --cgroup-parent "/$CGP" -v "$T/w:/w" rmtest:1 sh -c 'until [ -e /w/stop ]; do sleep 0.1; done' &
docker run --rm -v "$T/w:/w" rmtest:1 sh -c 'until [ -e /w/stop ]; do sleep 0.1; done' &
wait
EOF
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  rm-tree -i 0.2 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  wait_for 120 eval '[ "$(dk_ids | wc -l)" -eq 2 ]'
  for id in $(dk_ids); do wait_for 60 has_row "$T/c.csv" "$id"; done
  touch "$T/w/stop"
  wait "$TREE_PID"
  run -0 "$PY" -c 'import csv,sys
rows = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["cgroup"].startswith("/" + sys.argv[2] + "/") or r["cgroup"].startswith("/docker/"):
        rows.setdefault(r["cgroup"].split("/")[1], set()).add(r["tied"])
print(sorted((k.startswith("rmct"), sorted(v)) for k, v in rows.items()))' "$T/c.csv" "$CGP"
  echo "$output"
  [[ "$output" == *"(True, ['cgroup-parent'])"* ]]
  [[ "$output" == *"(False, [''])"* ]]
}

# bats test_tags=slow
@test "docker: --label K=V and --name tie through the engine's API, also through a docker context, also a container created 2 s before its start (named as docker named it); the same label on a container created before the client, or another value, never ties" {
  docker_start
  mkdir -p "$T/w"
  local wait_stop='until [ -e /w/stop ]; do sleep 0.1; done' nb
  # Neighbours started by the test, not by the watched orchestrator: one
  # with the run's own label created before the orchestrator's client,
  # one with another value of it.
  docker run -d --label rm-tools.run=r1 -v "$T/w:/w" rmtest:1 sh -c "$wait_stop" >"$T/nb-early"
  sleep 2.5  # Created counts whole seconds, and a second's grace is given
  # A client that finds its engine through a context (DOCKER_HOST unset).
  HOME=$T/dhome docker context create "rmctx-$$" --docker "host=$DOCKER_HOST" >/dev/null
  cat >"$T/orch.sh" <<EOF
docker run --rm --label rm-tools.run=r1 -v "$T/w:/w" rmtest:1 sh -c '$wait_stop' &
docker run --rm --name "stage-$$" -v "$T/w:/w" rmtest:1 sh -c '$wait_stop' &
(unset DOCKER_HOST; HOME=$T/dhome exec docker --context "rmctx-$$" run --rm --label rm-tools.run=ctx \
  -v "$T/w:/w" rmtest:1 sh -c '$wait_stop') &
(id=\$(docker create --label rm-tools.run=cr -v "$T/w:/w" rmtest:1 sh -c '$wait_stop') &&
  sleep 2 && exec docker start -a "\$id") &
wait
EOF
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  rm-tree -i 0.2 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  wait_for 120 eval '[ "$(dk_ids | wc -l)" -eq 5 ]'
  docker run -d --label rm-tools.run=r2 -v "$T/w:/w" rmtest:1 sh -c "$wait_stop" >"$T/nb-other"
  # -a: the five are counted once created, and one may not run yet.
  LB=$(docker ps -aq --no-trunc --filter label=rm-tools.run=r1 | grep -vx "$(cat "$T/nb-early")")
  NM=$(docker ps -aq --no-trunc --filter "name=^stage-$$\$")
  CX=$(docker ps -aq --no-trunc --filter label=rm-tools.run=ctx)
  CR=$(docker ps -aq --no-trunc --filter label=rm-tools.run=cr)
  [ -n "$LB" ]
  [ -n "$NM" ]
  [ -n "$CX" ]
  [ -n "$CR" ]
  LBNAME=$(docker inspect -f '{{.Name}}' "$LB" | sed 's,^/,,')
  CRNAME=$(docker inspect -f '{{.Name}}' "$CR" | sed 's,^/,,')
  wait_for 60 tied_is "$T/c.csv" "$LB" label
  wait_for 60 tied_is "$T/c.csv" "$CX" label
  wait_for 60 tied_is "$T/c.csv" "$NM" name
  wait_for 60 tied_is "$T/c.csv" "$CR" label
  wait_for 60 has_row "$T/c.csv" "$(cat "$T/nb-other")"
  touch "$T/w/stop"
  wait "$TREE_PID"
  [ "$(ct "$T/c.csv" "$NM" name)" = "stage-$$" ]
  # a container tied by its label has the name docker gave it
  [ "$(ct "$T/c.csv" "$LB" name)" = "$LBNAME" ]
  # so has one the engine listed before its cgroup was made (created, not
  # started yet, when its client's label was asked about)
  [ "$(ct "$T/c.csv" "$CR" name)" = "$CRNAME" ]
  for nb in "$(cat "$T/nb-early")" "$(cat "$T/nb-other")"; do
    run -0 "$PY" -c 'import csv,sys
print(sorted(set(r["tied"] for r in csv.DictReader(open(sys.argv[1], newline="")) if r["id"] == sys.argv[2])))' "$T/c.csv" "$nb"
    [ "$output" = "['']" ]
  done
  # Nothing was said about the engine: it answered.
  run -0 cat "$T/tree.err"
  [[ "$output" != *"cannot ask the engine"* ]]
}

# untied_only FILE ID: every row of container ID in FILE has tied empty.
untied_only() {
  run -0 "$PY" -c 'import csv,sys
print(sorted(set(r["tied"] for r in csv.DictReader(open(sys.argv[1], newline="")) if r["id"] == sys.argv[2])))' "$1" "$2"
  [ "$output" = "['']" ]
}

# bats test_tags=slow
@test "docker: create --cidfile then start is tied by the cidfile (its client gone before a tick reads it); exec into a neighbour leaves it untied; the legacy builder's steps are tied by build --cgroup-parent" {
  docker_start
  mkdir -p "$T/w" "$T/ctx"
  CGP=rmct-build-$$
  local wait_stop='until [ -e /w/stop ]; do sleep 0.1; done' pid cg
  # The neighbour: started by the test, not by the watched orchestrator.
  docker run -d -v "$T/w:/w" rmtest:1 sh -c "$wait_stop" >"$T/nb"
  # A legacy build whose one step waits for /stop in its own root (the
  # test writes it through the step's /proc/PID/root: a build step has
  # no volume).
  printf 'FROM rmtest:1\nRUN until [ -e /stop ]; do sleep 0.1; done\n' >"$T/ctx/Dockerfile"
  cat >"$T/orch.sh" <<ORCH
cd "$T/w"
until [ -e "$T/w/go" ]; do sleep 0.1; done
docker create --cidfile created.cid -v "$T/w:/w" rmtest:1 sh -c '$wait_stop' >/dev/null
docker start "\$(cat created.cid)" >/dev/null
docker exec "$(cat "$T/nb")" /bin/memhog -m 8 -t 1
touch "$T/w/exec-done"
DOCKER_BUILDKIT=0 docker build --network none --cgroup-parent "/$CGP" -q -t rmbuilt:1 "$T/ctx" >"$T/build.out" 2>&1
touch "$T/w/build-done"
until [ -e "$T/w/stop" ]; do sleep 0.1; done
ORCH
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  # -i 5, and the client starts just after a tick: docker create writes
  # its cidfile and exits long before the next one.
  rm-tree -i 5 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  within 120 grep -q "$(cat "$T/nb")" "$T/c.csv"
  touch "$T/w/go"
  within 120 test -s "$T/w/created.cid"
  CR=$(cat "$T/w/created.cid")
  within 120 test -e "$T/w/exec-done"
  # The legacy builder's step: the one container under the build's parent.
  within 120 pgrep -f '^/bin/sh -c until \[ -e /stop \]'
  pid=$(pgrep -f '^/bin/sh -c until \[ -e /stop \]' | head -n 1)
  cg=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$pid/cgroup")
  echo "the step's cgroup: $cg" >&3
  [[ "$cg" == "/$CGP/"* ]]
  ST=${cg##*/}
  within 120 eval '[ "$(tie_now "$T/c.csv" "$ST")" = cgroup-parent ]'
  touch "/proc/$pid/root/stop"
  within 120 test -e "$T/w/build-done"
  cat "$T/build.out" "$T/orch.err" >&3
  within 120 eval '[ "$(tie_now "$T/c.csv" "$CR")" = cidfile ]'
  within 120 grep -q "$ST.*,gone$" "$T/c.csv"
  touch "$T/w/stop"
  wait "$TREE_PID"
  docker image inspect rmbuilt:1 >/dev/null
  [ "$(tie_now "$T/c.csv" "$CR")" = cidfile ]
  [ "$(ct "$T/c.csv" "$ST" cgroup)" = "/$CGP/$ST" ]
  # exec'd into by the build, the neighbour was never created by it.
  untied_only "$T/c.csv" "$(cat "$T/nb")"
  # The exec'd memhog is the neighbour's (the shim's child), not a row of
  # the build's.
  run -0 "$PY" -c 'import csv,sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1], newline="")) if r["comm"] == "memhog"),
      sum(1 for r in csv.DictReader(open(sys.argv[1], newline="")) if r["comm"] == "docker"))' "$T/procs.csv"
  # (its docker clients are the build's rows: the file has them)
  [[ "$output" =~ ^0\ [1-9] ]]
}

# xl_rows FILE: "comm scope unit-source" of each exit-log row whose cmd
# names a .cpp, sorted.
xl_rows() {
  "$PY" - "$1" <<'PY'
import csv, re, sys
out = []
for r in csv.DictReader(open(sys.argv[1], newline="")):
    m = re.search(r"(\S+\.cpp)", r["cmd"])
    if m and r["comm"] == "cc1plus":
        out.append("%s %s %s %s" % (r["comm"], r["scope"], m.group(1), r["source"]))
print("\n".join(sorted(out)))
PY
}

# tied_processes_test: a tied and an untied container, each running a
# compiler stand-in; SAMPLED=1 without the kernel's records.
tied_processes_test() {
  docker_start
  mkdir -p "$T/w" "$T/u"
  local cc='/bin/cc1plus -quiet'
  cat >"$T/orch.sh" <<ORCH
docker run --rm --cidfile "$T/cid" -e FAKECC_DIR=/w -e FAKECC_MIB=24 -v "$T/w:/w" rmtest:1 \
  sh -c '$cc src/tied_a.cpp -o a.s && $cc src/tied_b.cpp -o b.s && until [ -e /w/stop ]; do sleep 0.1; done' &
docker run --rm -e FAKECC_DIR=/w -e FAKECC_MIB=24 -v "$T/u:/w" rmtest:1 $cc src/untied_c.cpp -o c.s &
wait
ORCH
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  # exact: the kernel's records; sampled: /proc read each tick
  # (RM_NO_EVENTS=1, as inside a container)
  RM_NO_EVENTS=${SAMPLED:-0} rm-tree -i 0.5 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  within 120 test -e "$T/w/started"
  within 120 test -e "$T/u/started"
  within 120 test -s "$T/cid"
  within 120 eval '[ "$(tie_now "$T/c.csv" "$(cat "$T/cid")")" = cidfile ]'
  # the tick after the tie has adopted the container's processes
  local n
  n=$(grep -c "^" "$T/c.csv")
  within 60 eval '[ "$(grep -c "^" "$T/c.csv")" -ge $((n + 6)) ]'
  touch "$T/w/done" "$T/u/done"
  if [[ "${SAMPLED:-0}" == 1 ]]; then
    # tied_b lives a moment (done is there): a poller may miss it
    within 60 grep -q ',cc1plus,.*tied_a\.cpp' "$T/procs.csv"
    touch "$T/w/stop"
    wait "$TREE_PID"
    run -0 xl_rows "$T/procs.csv"
    echo "$output"
    [[ "$output" == "cc1plus in src/tied_a.cpp sampled"* ]]
    [[ "$output" != *untied* ]]
    return
  fi
  within 60 grep -q ',cc1plus,.*tied_b\.cpp' "$T/procs.csv"
  touch "$T/w/stop"
  wait "$TREE_PID"
  run -0 xl_rows "$T/procs.csv"
  echo "$output"
  [ "$output" = "cc1plus in src/tied_a.cpp exact
cc1plus in src/tied_b.cpp exact" ]
}

# bats test_tags=slow
@test "docker: the processes of a tied container are the build's rows (exact, named by unit), those forked inside later too; an untied container's are not" {
  tied_processes_test
}

# bats test_tags=slow
@test "docker, sampled (no kernel records): a tied container's processes are the build's rows; an untied container's are not" {
  SAMPLED=1 tied_processes_test
}

# podman_private: $PM, a podman command line with a private root, run
# root, tmpdir and events file under $T (cgroupfs, vfs storage, runc: crun
# refuses this machine's hybrid cgroups), and an image pmtest:1 of
# busybox-static and a static memhog imported into it.
podman_private() {
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    [[ "${CI:-}" == true ]] && { echo "podman or runc is missing under CI (.ci/run installs them)" >&2; return 1; }
    skip "podman is missing"
  fi
  [[ $EUID -eq 0 ]] || skip_needs_root "a private podman needs root"
  local r=$T/pmroot
  mkdir -p "$r/bin" "$r/w" "$T/pm"
  cp /bin/busybox "$r/bin/busybox"
  for i in sh sleep cat; do ln -s busybox "$r/bin/$i"; done
  gcc -static -O2 -o "$r/bin/memhog" "$RM_TOP/tests/helpers/memhog.c"
  PM="podman --root $T/pm/root --runroot $T/pm/run --tmpdir $T/pm/tmp --cgroup-manager cgroupfs"
  PM+=" --storage-driver vfs --events-backend file --runtime runc --network-backend cni"
  # shellcheck disable=SC2086  # PM is words
  tar -C "$r" -c . | $PM import - pmtest:1 >/dev/null
}

# bats test_tags=slow
@test "podman: podman run's containers are tied by fork lineage (podman, conmon, runc, the container's init), the limit and OOM kill read; a podman container started outside the tree is never tied" {
  podman_private
  mkdir -p "$T/w"
  local run="run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 -v $T/w:/w"
  # shellcheck disable=SC2086  # PM and run are words
  $PM $run -d --name "nb-$$" pmtest:1 sh -c 'until [ -e /w/stop ]; do sleep 0.1; done' >"$T/nb"
  cat >"$T/orch.sh" <<ORCH
$PM $run -m 64m --memory-swap 64m pmtest:1 sh -c '/bin/memhog -m 200 -t 1; until [ -e /w/stop ]; do sleep 0.1; done'
ORCH
  bash "$T/orch.sh" 2>"$T/orch.err" & ORCH=$!
  rm-tree -i 0.5 --watch-pid "$ORCH" --containers "$T/c.csv" "$ORCH" >"$T/procs.csv" 2>"$T/tree.err" &
  TREE_PID=$!
  local id nb
  nb=$(cat "$T/nb")
  within 120 eval 'grep -q "/libpod_parent/libpod-[0-9a-f]*,fork," "$T/c.csv"'
  id=$(grep -o "/libpod_parent/libpod-[0-9a-f]*,fork," "$T/c.csv" | head -n 1 | sed 's/.*libpod-//; s/,.*//')
  within 120 eval '[ "$(awk -F, -v id="$id" '"'"'$3 == id { o = $11 } END { print o }'"'"' "$T/c.csv")" = 1 ]'
  touch "$T/w/stop"
  wait "$TREE_PID"
  [ "$(tie_now "$T/c.csv" "$id")" = fork ]
  [ "$(awk -F, -v id="$id" '$3 == id { l = $7 } END { print l }' "$T/c.csv")" = 65536 ]
  [ "$(awk -F, -v id="$id" '$3 == id { c = $5 } END { print c }' "$T/c.csv")" = "/libpod_parent/libpod-$id" ]
  [ "$id" != "$nb" ]
  grep -q "$nb" "$T/c.csv"
  untied_only "$T/c.csv" "$nb"
  # conmon and runc were the tree's: the lineage the tie follows
  grep -q ',conmon,' "$T/procs.csv"
}

# dk_monitored RUN FLAGS...: an orchestrator that starts rm-monitor as
# integration.md says, then one stage: a docker run (with FLAGS) whose
# memhog is OOM-killed at --memory 64m, the container then waiting for
# $T/w/stop; the summary of run RUN is in $T/out.
dk_monitored() {
  local run=$1
  shift
  rm -f "$T/w/stop" "$T/cid"
  cat >"$T/orch-$run.sh" <<EOF
rm-monitor --out-dir "$T/out" --run-id $run --interval 1 --watch-pid \$\$ </dev/null >/dev/null 2>"$T/mon-$run.err" &
docker run --rm $* -m 64m --memory-swap 64m -v "$T/w:/w" rmtest:1 \
  sh -c '/bin/memhog -m 200 -t 1; until [ -e /w/stop ]; do sleep 0.1; done'
EOF
  bash "$T/orch-$run.sh" 2>"$T/orch-$run.err" & ORCH=$!
  wait_for 120 test -s "$T/out/resources-$run.containers.csv"
  wait_for 120 grep -q ',1,run$' "$T/out/resources-$run.containers.csv"
  touch "$T/w/stop"
  wait "$ORCH"
  wait_for 120 test -s "$T/out/resources-$run.summary.txt"
}

# bats test_tags=slow
@test "docker, summarized: a tied container's OOM kill is the build's at the container's limit; untied, the summary says so and never 'No headroom problem'" {
  docker_start
  mkdir -p "$T/w" "$T/out"
  dk_monitored tied --cidfile "$T/cid"
  run -0 cat "$T/out/resources-tied.summary.txt"
  echo "$output" | grep -iE 'oom|container|headroom' >&3 || true
  [[ "$output" == *"tied by cidfile"* ]]
  [[ "$output" == *"killed by the container's memory limit, 64 MiB"* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  # tied by the label the summary's own advice gives, through the engine
  dk_monitored labelled --label rm-tools.run=labelled
  run -0 cat "$T/out/resources-labelled.summary.txt"
  echo "$output" | grep -iE 'oom|container|tied' >&3 || true
  [[ "$output" == *"tied by label"* ]]
  [[ "$output" == *"killed by the container's memory limit, 64 MiB"* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  [[ "$output" != *"Containers not tied"* ]]
  dk_monitored plain
  run -0 cat "$T/out/resources-plain.summary.txt"
  echo "$output" | grep -iE 'oom|container|headroom|tie' >&3 || true
  [[ "$output" == *"Containers during the build (not tied to it)"* ]]
  [[ "$output" != *"No headroom problem"* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
}
