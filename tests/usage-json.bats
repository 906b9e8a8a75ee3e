#!/usr/bin/env bats
# The usage JSON's package_watts and gpus (the seed's 0.3.7 keys), as
# `rm-tree -f json` prints them, on the powercap and drm fixture trees and
# on this machine; and a dead PID among live ones.
# shellcheck disable=SC2154  # bats' run --separate-stderr sets stderr and stderr_lines

setup() {
  load test_helper/common
  BG_PID=
  # No NVML unless a test asks for the stub (a real one would add GPUs).
  NO_NVML=/nonexistent/libnvidia-ml.so.1
  export RM_NVML_LIB="$NO_NVML"
  export NVML_STUB_LOG="$BATS_TEST_TMPDIR/nvml.log"
}

# seed_gpus: rm-gpu -f jsonl's rows as the seed's gpu_json objects, by the
# jq line of rm-gpu(1)'s COMPATIBILITY section.
seed_gpus() {
  rm-gpu -f jsonl | jq -c 'def b: if . == null then null else . * 1048576 end;
    {card, driver, busy_percent: .busy_pct, vram_used: (.vram_used_mb | b),
     vram_total: (.vram_total_mb | b), gtt_used: (.gtt_used_mb | b),
     gtt_total: (.gtt_total_mb | b)}'
}

teardown() {
  if [[ -n "${BG_PID}" ]]; then kill "${BG_PID}" 2>/dev/null; fi
  return 0
}

# fixture NAME: a writable copy of a powercap fixture; prints its root.
fixture() {
  cp -a "$FIXTURES/powercap/$1" "$BATS_TEST_TMPDIR/$1"
  printf '%s\n' "$BATS_TEST_TMPDIR/$1"
}

# set_uj ZONE_DIR UJ: move a zone's counter as the kernel would, atomically.
set_uj() {
  printf '%s\n' "$2" >"$1/energy_uj.new"
  mv "$1/energy_uj.new" "$1/energy_uj"
}

@test "usage JSON: package_watts is null and gpus [] where there is no RAPL and no GPU" {
  mkdir -p "$BATS_TEST_TMPDIR/sys/class"
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/sys" run -0 --separate-stderr rm-tree -f json "$$"
  echo "$output" | jq -e 'has("package_watts") and .package_watts == null and .gpus == []'
  [ -z "$stderr" ]
  # This machine: the keys are there; a number or null, a list of cards.
  run -0 rm-tree -f json "$$"
  echo "$output" | jq -e 'has("package_watts") and (.package_watts | type == "number" or type == "null") and
    (.gpus | type == "array") and ([.gpus[] | .card | type == "string"] | all)'
  if [[ ! -e /sys/class/powercap ]]; then
    echo "$output" | jq -e '.package_watts == null'
  fi
  if [[ ! -e /sys/class/drm && ! -e /dev/nvidiactl ]]; then
    echo "$output" | jq -e '.gpus == []'
  fi
}

@test "usage JSON: package_watts is the package energy over the CPU window, a still counter 0, a wrap corrected" {
  local root z max
  root=$(fixture intel1)
  # A counter that does not move: 0 W, measured, not null.
  RM_SYS_ROOT="$root" run -0 rm-tree -f json "$$"
  echo "$output" | jq -e '.package_watts == 0'
  # package-0 sits 0.5 J below its wrap; during the 4 s window it passes
  # the wrap and reads 0.5 J: 1 J over the window, so at most 1 J / 4 s.
  # (A window of 4 s, so that the wrap written at the first reading is
  # in it on a loaded machine too.)
  # (psys, intel-rapl:1, is never added; the mmio copy of package-0 is
  # the same counter and is dropped.)
  z="$root/class/powercap/intel-rapl:0"
  max=$(cat "$z/max_energy_range_uj")
  set_uj "$z" $((max - 500000))
  # The wrap comes as soon as the window's first reading has read the
  # counter (inotify IN_ACCESS), not after a guess at when that was.
  "$PY" -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x1) < 0:
    sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
print("watching", flush=True)
os.read(fd, 4096)
with open(sys.argv[1] + ".new", "w") as f:
    f.write(sys.argv[2] + "\n")
os.rename(sys.argv[1] + ".new", sys.argv[1])' "$z/energy_uj" 500000 >"$BATS_TEST_TMPDIR/watch" &
  local watcher=$!
  wait_for 30 grep -q watching "$BATS_TEST_TMPDIR/watch"
  RM_SYS_ROOT="$root" rm-tree -f json -w 4 "$$" >"$BATS_TEST_TMPDIR/out.json" &
  BG_PID=$!
  wait "$watcher"
  wait "$BG_PID"
  BG_PID=
  run -0 jq -e '.interval_ms == 4000 and (.package_watts | type == "number") and
    .package_watts > 0 and .package_watts <= 0.25' "$BATS_TEST_TMPDIR/out.json"
}

@test "usage JSON: package_watts is null when the counters are root-only" {
  command -v setpriv >/dev/null || skip "no setpriv"
  id nobody >/dev/null 2>&1 || skip "no user nobody"
  [[ $EUID -eq 0 ]] || skip_needs_root "needs root to switch to nobody"
  local d
  d=$(mktemp -d /tmp/rm-usage-eacces.XXXXXX)
  chmod 755 "$d"
  cp -a "$FIXTURES/powercap/intel1" "$d/root"
  cp "$RM_TOP/bin/rm-tree" "$d/rm-tree"
  chmod -R a+rX "$d"
  chmod 0400 "$d"/root/devices/virtual/powercap/*/*/energy_uj \
    "$d"/root/devices/virtual/powercap/*/*/*/energy_uj
  run -0 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env RM_SYS_ROOT="$d/root" "$d/rm-tree" -f json "$$"
  rm -rf "$d"
  echo "$output" | jq -e 'has("package_watts") and .package_watts == null and .gpus == []'
  [ -z "$stderr" ]
}

@test "usage JSON: gpus are rm-gpu's cards with the seed's gpu_json keys, sizes in bytes" {
  local drm="$FIXTURES/drm/mixed"
  RM_SYS_ROOT="$drm" run -0 rm-tree -f json "$$"
  echo "$output" | jq -e '(.gpus | length == 4) and
    ([.gpus[] | keys] | all(. == ["busy_percent", "card", "driver", "gtt_total", "gtt_used", "vram_total", "vram_used"])) and
    ([.gpus[] | select(.vram_used != null) | .vram_used <= .vram_total] | all)'
  # The same readings as rm-gpu, through rm-gpu(1)'s COMPATIBILITY line
  # (this fixture's sizes are whole MiB, so they compare exactly).
  diff <(echo "$output" | jq -c '.gpus[]') <(RM_SYS_ROOT="$drm" seed_gpus 2>/dev/null)
  # With NVML (the stub): its GPUs as nvidiaN, the nvidia drm card not
  # listed again, NVML brought up and shut down once; nothing on stderr.
  RM_SYS_ROOT="$drm" RM_NVML_LIB="$RM_BUILD/tests/nvml_stub.so" run -0 --separate-stderr rm-tree -f json "$$"
  [ -z "$stderr" ]
  [ "$(cat "$NVML_STUB_LOG")" = $'init\nshutdown' ]
  echo "$output" | jq -e '[.gpus[] | .card] == ["card0", "card1", "card2", "nvidia0", "nvidia2"]'
  diff <(echo "$output" | jq -c '.gpus[]') \
       <(RM_SYS_ROOT="$drm" RM_NVML_LIB="$RM_BUILD/tests/nvml_stub.so" seed_gpus)
}

@test "usage JSON: a dead PID among live ones is named on stderr, the live ones printed, exit 1" {
  local dead
  dead=$(cat /proc/sys/kernel/pid_max)   # PIDs stay below pid_max
  run -1 --separate-stderr rm-tree -f json "$dead" "$$"
  [ "$stderr" = "rm-tree: no process $dead" ]
  echo "$output" | jq -e --argjson me "$$" '([.processes[] | .pid] | index($me) != null) and
    has("package_watts") and has("gpus")'
  # Every PID dead: the object all the same, with no processes.
  run -1 --separate-stderr rm-tree -f json "$dead"
  [ "$stderr" = "rm-tree: no process $dead" ]
  echo "$output" | jq -e '.processes == [] and .rss_bytes == 0 and has("package_watts")'
}
