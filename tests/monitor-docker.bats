#!/usr/bin/env bats
# rm-monitor as a real container's entrypoint: a private
# dockerd (its own data root, exec root and socket, no iptables, no bridge),
# an image made with `docker import` from a rootfs of busybox-static,
# bash-static and the make STATIC=1 binaries (no libc in it at all), and
#   docker run ... IMAGE rm-monitor --out-dir /out ... -- CMD
# as docs/integration.md says.  Everything is removed afterwards.
# shellcheck disable=SC2016,SC2154  # sh -c programs are single-quoted on purpose; bats sets output

# need CMD PACKAGE: a skip naming the package, a failure under CI.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ "${CI:-}" == true ]]; then
    echo "need: '$1' is missing: apt-get install $2 (.ci/run installs it)" >&2
    return 1
  fi
  skip "'$1' is missing (Debian package $2)"
}

setup_file() {
  local top="$BATS_TEST_DIRNAME/.." k=$BATS_FILE_TMPDIR r
  export DK="$k/dk" IMG=rm-tools-pid1-test:1
  # Each a reason to skip, said by setup (bats cannot skip from here).
  [[ $EUID -eq 0 ]] || return 0
  command -v dockerd && command -v docker && [[ -x /bin/bash-static && -x /bin/busybox ]] || return 0
  make -C "$top" -j2 STATIC=1 BUILD="$k/static" "$k"/static/bin/rm-{sample,tree,summarize,out} >"$k/make.log" 2>&1
  r="$k/rootfs"
  mkdir -p "$r/bin" "$r/usr/bin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/out"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do [[ "$a" == busybox ]] || ln -s busybox "$r/bin/$a"; done
  ln -s /bin/busybox "$r/usr/bin/env"
  cp /bin/bash-static "$r/bin/bash"
  cp "$k"/static/bin/rm-* "$top/scripts/rm-monitor" "$top/scripts/wrapper-lib.sh" "$r/bin/"
  cc -static -O2 -D_GNU_SOURCE -o "$r/bin/memhog" "$top/tests/helpers/memhog.c"
  mkdir -p "$DK"
  setsid dockerd --data-root "$DK/data" --exec-root "$DK/exec" --host "unix://$DK/sock" \
    --pidfile "$DK/pid" --iptables=false --ip-masq=false --bridge=none \
    </dev/null >"$DK/log" 2>&1 &
  export DOCKER_HOST="unix://$DK/sock"
  local i
  for ((i = 0; i < 600; i++)); do docker version >/dev/null 2>&1 && break; sleep 0.1; done
  tar -C "$r" -c . | docker import - "$IMG" >/dev/null
}

teardown_file() {
  [[ -n "${DK:-}" && -d "$DK" ]] || return 0
  export DOCKER_HOST="unix://$DK/sock"
  local ids p i=0
  mapfile -t ids < <(docker ps -aq 2>/dev/null)
  ((${#ids[@]} == 0)) || docker rm -f "${ids[@]}" >/dev/null 2>&1
  p=$(cat "$DK/pid" 2>/dev/null)
  if [[ -n "$p" ]]; then
    kill -TERM "$p" 2>/dev/null
    while kill -0 "$p" 2>/dev/null && ((i++ < 300)); do sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  fi
  # What dockerd mounted under its roots, deepest first.
  awk -v d="$DK" '$2 ~ "^" d { print $2 }' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$DK"
}

setup() {
  load test_helper/common
  [[ $EUID -eq 0 ]] || skip_needs_root "a private dockerd needs root"
  need dockerd docker.io
  need docker docker.io
  need bash-static bash-static
  need busybox busybox-static
  export DOCKER_HOST="unix://$DK/sock"
  docker version >/dev/null 2>&1 || skip "the private dockerd did not start: $(tail -3 "$DK/log" 2>/dev/null)"
  O="$BATS_TEST_TMPDIR/out"
  mkdir -p "$O"
}

# bats test_tags=slow
@test "docker: rm-monitor -- CMD as the entrypoint: PID 1 is rm-tree --init, CMD's exit status 7 is the container's, the summary is written, the run's cgroup recorded" {
  run -7 docker run --rm --network none --cidfile "$BATS_TEST_TMPDIR/cid" -v "$O:/out" "$IMG" \
    rm-monitor --out-dir /out --run-id e --interval 1 -- sh -c 'cat /proc/1/comm >/out/pid1; echo "$$" >/out/cmdpid; exit 7'
  [ "$(cat "$O/pid1")" = rm-tree ]
  [ -s "$O/resources-e.summary.txt" ]
  jq -e . "$O/resources-e.summary.json" >/dev/null
  run -0 cat "$O/resources-e.summary.txt"
  [[ "$output" == *"Process data: sampled mode (taskstats needs CAP_NET_ADMIN)"* ]]
  # The run's cgroup is the container's, as the kernel log names it.
  run -0 awk -F, 'NR == 2 { print $NF }' "$O/resources-e.stats.csv"
  [ "$output" = "/docker/$(cat "$BATS_TEST_TMPDIR/cid")" ]
  run -0 awk -F, 'NR > 1 && $3 == "sh" { print $9 }' "$O/resources-e.procs.csv"
  [ "$output" = 7 ]
}

# bats test_tags=slow
@test "docker stop: the TERM to PID 1 reaches CMD, the container's status is CMD's (9), the summary is written" {
  docker run -d --network none --name "pid1-stop-$$" -v "$O:/out" "$IMG" \
    rm-monitor --out-dir /out --run-id s --interval 1 -- \
    sh -c 'trap "echo term >/out/got; exit 9" TERM; echo >/out/ready; while :; do sleep 0.2 & wait $!; done' >/dev/null
  wait_for 60 test -e "$O/ready"
  wait_for 60 test -s "$O/resources-s.csv"
  docker stop -t 60 "pid1-stop-$$" >/dev/null
  run -0 docker wait "pid1-stop-$$"
  [ "$output" = 9 ]
  docker rm "pid1-stop-$$" >/dev/null
  [ "$(cat "$O/got")" = term ]
  [ -s "$O/resources-s.summary.txt" ]
  [ -s "$O/resources-s.summary.json" ]
}

# bats test_tags=slow
@test "docker --memory 64m: the OOM kill inside is the build's, from its cgroup's own counter (no kernel log there), sampled; summarized on the host, tied by the container's cgroup" {
  run docker run --rm --network none --memory 64m --memory-swap 64m -v "$O:/out" "$IMG" \
    rm-monitor --out-dir /out --run-id o --interval 1 -- sh -c 'sleep 2; memhog -m 200 -t 1; echo "memhog $?" >/out/rc; sleep 2'
  [ "$(cat "$O/rc")" = "memhog 137" ]
  run -0 cat "$O/resources-o.summary.txt"
  [[ "$output" == *"OOM kills: 1"* ]]
  [[ "$output" == *"counted by the build's cgroup's own oom_kill"* ]]
  [[ "$output" == *"The build's own cgroup counted it (no kernel log here to say more), whose limit is 64 MiB"* ]]
  [[ "$output" == *"Process data: sampled mode"* ]]
  [[ "$output" != *"No OOM kill in the build"* ]]
  run -0 jq -c '[.system.oom_kills.count, .system.oom_kills.kernel_log]' "$O/resources-o.summary.json"
  [ "$output" = '[1,"No such file or directory"]' ]
  # On the host, where the kernel log is: the victim by the container's cgroup.
  [[ -r /dev/kmsg ]] || skip "no /dev/kmsg on this host to summarize with"
  run -0 rm-summarize --companions "$O/resources-o.csv"
  [[ "$output" == *"victim memhog (PID "*") killed by the limit of cgroup /docker/"*"; the build's: its cgroup is the run's"* ]]
}
