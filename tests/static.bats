#!/usr/bin/env bats
# make STATIC=1: static binaries that run in an image with another libc or
# none (a container of a foreign distribution), built here into a private
# object tree (the suite's bin/ is left as it is).
# shellcheck disable=SC2016,SC2154  # sh -c and awk programs are single-quoted on purpose; bats sets output, stderr, lines

setup_file() {
  export STATIC_BUILD="$BATS_FILE_TMPDIR/static"
  # The build's own output: a static link of a name service call (getpwuid,
  # getaddrinfo) or of dlopen warns, and every such warning is a defect.
  make -C "$BATS_TEST_DIRNAME/.." -j2 STATIC=1 BUILD="$STATIC_BUILD" \
    "$STATIC_BUILD"/bin/rm-{sample,tree,summarize,energy,gpu} >"$BATS_FILE_TMPDIR/make.log" 2>&1
}

setup() {
  load test_helper/common
  SB="$STATIC_BUILD/bin"
}

# bats test_tags=slow
@test "make STATIC=1: every C command is static (no program interpreter), built without a warning" {
  run -0 cat "$BATS_FILE_TMPDIR/make.log"
  [[ "$output" != *warning* ]]
  [[ "$output" != *"statically linked applications requires"* ]]
  local p
  for p in rm-sample rm-tree rm-summarize rm-energy rm-gpu; do
    [ -x "$SB/$p" ]
    run -0 readelf -lW "$SB/$p"
    [[ "$output" != *INTERP* && "$output" != *"program interpreter"* ]]
    run -0 readelf -dW "$SB/$p"
    [[ "$output" == *"no dynamic section"* ]]
    run -0 "$SB/$p" --version
    [[ "$output" == "$p "* ]]
  done
  # The same command from the suite's build has one (the test can fail).
  run -0 readelf -lW "$RM_BUILD/bin/rm-sample"
  [[ "$output" == *"program interpreter"* ]]
}

# bats test_tags=slow
@test "make STATIC=1: rm-sample and rm-tree run in a root with no libc and no loader (chroot)" {
  [[ $EUID -eq 0 ]] || skip_needs_root "chroot and a bind mount of /proc need root"
  unshare -m true 2>/dev/null || skip "unshare -m is refused here (no CAP_SYS_ADMIN)"
  local root="$BATS_TEST_TMPDIR/root"
  mkdir -p "$root/proc" "$root/bin"
  cp "$SB/rm-sample" "$SB/rm-tree" "$root/bin/"
  # Nothing else: no /lib, no /lib64, no /etc.
  run -0 find "$root" -mindepth 1 -not -path "$root/proc" -not -path "$root/bin*"
  [ -z "$output" ]
  run -0 --separate-stderr unshare -m sh -c 'mount --bind /proc "$1/proc" && exec chroot "$1" /bin/rm-sample -n 1' sh "$root"
  [ "${#lines[@]}" -eq 2 ]
  [[ "${lines[0]}" == epoch,iso,elapsed_s,load1,* ]]
  # A row of figures: the memory columns are numbers.
  run -0 awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["mem_avail_mb"] }' <<<"$output"
  [[ "$output" =~ ^[0-9]+$ ]]
  run -0 --separate-stderr unshare -m sh -c 'mount --bind /proc "$1/proc" && exec chroot "$1" /bin/rm-tree 1' sh "$root"
  [[ "${lines[0]}" == pid,ppid,comm,* && "${lines[1]}" == 1,0,* ]]
  # The dynamic build cannot run there: the test tells the two apart.
  cp "$RM_BUILD/bin/rm-sample" "$root/bin/rm-sample"
  run -127 unshare -m sh -c 'mount --bind /proc "$1/proc" && exec chroot "$1" /bin/rm-sample -n 1' sh "$root"
}

# bats test_tags=slow
@test "make STATIC=1: rm-gpu reads amdgpu from sysfs and says it has no NVML where an NVIDIA GPU may be" {
  # The stub NVML the dynamic rm-gpu loads is never loaded: said once.
  RM_SYS_ROOT="$FIXTURES/drm/mixed" RM_NVML_LIB="$RM_BUILD/tests/nvml_stub.so" run -0 --separate-stderr "$SB/rm-gpu"
  [ "${lines[1]}" = "card0,amdgpu,42,2048,16368,100,16000,35.00,45.0" ]
  [ "${lines[4]}" = "card3,nvidia,,,,,,," ]
  [ "$stderr" = "rm-gpu: NVML: not in a static build (make STATIC=1): NVIDIA GPUs need the dynamic rm-gpu; NVIDIA GPUs are not read" ]
  # An nvidia drm card alone is reason enough to say so.
  RM_SYS_ROOT="$FIXTURES/drm/mixed" run -0 --separate-stderr "$SB/rm-gpu"
  [[ "$stderr" == *"not in a static build"* ]]
  # No NVIDIA GPU in sight (no card, no nvidia module): no word of NVML.
  mkdir -p "$BATS_TEST_TMPDIR/none/class/drm"
  RM_SYS_ROOT="$BATS_TEST_TMPDIR/none" run -1 --separate-stderr "$SB/rm-gpu"
  [[ "$stderr" == *"no GPUs"* && "$stderr" != *NVML:* ]]
}
