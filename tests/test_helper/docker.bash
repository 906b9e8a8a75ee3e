# docker.bash: a private Docker engine for tests/containers.bats.
#
# docker_start starts dockerd with its own data root, exec root (short:
# containerd's sockets live under it and a Unix socket path is at most 107
# bytes), socket, pidfile and containerd state (dockerd starts its own
# containerd under the exec root), no iptables, no bridge; then imports an
# image, rmtest:1, from a small rootfs of static binaries (busybox-static
# and memhog built with gcc -static): no registry.  docker_stop removes the
# containers, stops dockerd (and so its containerd), unmounts what it left
# and removes every directory.  DOCKER_HOST points at the socket between.
#
# Under CI=true a missing dockerd or busybox is a failure, not a skip.

# docker_missing WHAT: skip, or fail under CI.
docker_missing() {
  if [[ "${CI:-}" == true ]]; then
    echo "docker.bash: $1 is missing under CI (.ci/run installs it)" >&2
    return 1
  fi
  skip "$1 is missing"
}

docker_start() {
  local i
  command -v dockerd >/dev/null || { docker_missing "dockerd (docker.io)"; return; }
  command -v docker >/dev/null || { docker_missing "docker (docker.io)"; return; }
  [[ -x /bin/busybox ]] || { docker_missing "/bin/busybox (busybox-static)"; return; }
  if [[ $EUID -ne 0 ]]; then
    skip_needs_root "a private dockerd needs root"
    return
  fi
  DK=$(mktemp -d /tmp/rmdk.XXXXXX)
  mkdir -p "$DK/d" "$DK/e" "$DK/root/bin" "$DK/root/w" "$DK/root/tmp"
  export DOCKER_HOST="unix://$DK/s"
  dockerd --data-root "$DK/d" --exec-root "$DK/e" --host "$DOCKER_HOST" --pidfile "$DK/pid" \
    --iptables=false --ip-masq=false --ip-forward=false --bridge=none --userland-proxy=false \
    --log-level=warn </dev/null >"$DK/dockerd.log" 2>&1 3>&- &
  DK_PID=$!
  echo "$DK_PID" >"$DK/dockerd.pid"
  for ((i = 0; i < 600; i++)); do
    docker version >/dev/null 2>&1 && break
    kill -0 "$DK_PID" 2>/dev/null || { cat "$DK/dockerd.log" >&2; return 1; }
    sleep 0.1
  done
  docker version >/dev/null 2>&1 || { echo "dockerd did not answer in 60 s" >&2; cat "$DK/dockerd.log" >&2; return 1; }
  cp /bin/busybox "$DK/root/bin/busybox"
  for i in sh sleep cat echo test '[' true; do ln -s busybox "$DK/root/bin/$i"; done
  gcc -static -O2 -o "$DK/root/bin/memhog" "$RM_TOP/tests/helpers/memhog.c" ||
    { echo "cannot build a static memhog" >&2; return 1; }
  # a compiler stand-in, named as one (FAKECC_DIR, FAKECC_MIB: fakecc.c)
  gcc -static -O2 -o "$DK/root/bin/cc1plus" "$RM_TOP/tests/helpers/fakecc.c" ||
    { echo "cannot build a static fakecc" >&2; return 1; }
  tar -C "$DK/root" -c . | docker import - rmtest:1 >/dev/null
}

docker_stop() {
  [[ -n "${DK:-}" && -d "${DK}" ]] || return 0
  local -a ids
  local m i
  if [[ -n "${DK_PID:-}" ]] && kill -0 "$DK_PID" 2>/dev/null; then
    mapfile -t ids < <(docker ps -aq 2>/dev/null)
    ((${#ids[@]} == 0)) || docker rm -f "${ids[@]}" >/dev/null 2>&1
    kill -TERM "$DK_PID"
    for ((i = 0; i < 300; i++)); do
      kill -0 "$DK_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$DK_PID" 2>/dev/null
    wait "$DK_PID" 2>/dev/null
  fi
  # What dockerd left mounted under its roots, deepest first.
  while read -r m; do
    umount -l "$m" 2>/dev/null
  done < <(awk -v d="$DK/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
  rm -rf "${DK:?}"
  DK=
}
