#!/usr/bin/env bats
# rm-gpu on the drm fixture tree and the NVML stub libraries (this machine
# has no GPU); and, where there is one, against nvidia-smi.
# shellcheck disable=SC2016,SC2154  # awk and python programs are single-quoted on purpose; bats sets stderr_lines

setup() {
  load test_helper/common
  DRM="$FIXTURES/drm/mixed"
  STUB="$RM_BUILD/tests/nvml_stub.so"
  NO_NVML=/nonexistent/libnvidia-ml.so.1
  NVLOG="$BATS_TEST_TMPDIR/nvml.log"
  export NVML_STUB_LOG="$NVLOG"
}

HEADER="card,driver,busy_pct,vram_used_mb,vram_total_mb,gtt_used_mb,gtt_total_mb,power_w,temp_c"
CARD0="card0,amdgpu,42,2048,16368,100,16000,35.00,45.0"
CARD1="card1,amdgpu,7,512,512,,8192,12.35,51.5"
CARD2="card2,i915,,,,,,,"

@test "drm cards: amdgpu with every file, amdgpu with power1_input only, i915 without readings; no connector or render node rows" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-gpu
  [ "$output" = "$HEADER
$CARD0
$CARD1
$CARD2
card3,nvidia,,,,,,," ]
  [[ "$output" != *"-DP-"* && "$output" != *"-eDP-"* && "$output" != *renderD* && "$output" != *version* ]]
  # The library was asked for by name: one line says it is not there.
  [ "$stderr" = "rm-gpu: NVML: $NO_NVML: cannot open shared object file: No such file or directory; NVIDIA GPUs are not read" ]
}

@test "a field whose read fails is empty, not 0, and not an error" {
  # card1's mem_info_gtt_used is a directory: read(2) fails with EISDIR.
  [ -d "$DRM/class/drm/card1/device/mem_info_gtt_used" ]
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-gpu -f jsonl
  run -0 jq -c 'select(.card == "card1") | [.gtt_used_mb, .gtt_total_mb, .power_w]' <<<"$output"
  [ "$output" = "[null,8192,12.35]" ]
  # A power1_average that fails falls back to power1_input.
  local root="$BATS_TEST_TMPDIR/drm"
  cp -a "$DRM" "$root"
  local hw="$root/class/drm/card0/device/hwmon/hwmon3"
  printf 'garbage\n' >"$hw/power1_average"
  printf '' >"$hw/temp1_input"
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-gpu -H
  [ "${lines[0]}" = "card0,amdgpu,42,2048,16368,100,16000,36.00," ]
}

@test "NVML stub: every field of the GPUs it lets us open, NO_PERMISSION skipped, the nvidia drm card not listed twice" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 --separate-stderr rm-gpu
  # nvidia0: v2 memory (1000 MiB, not v1's 1512 with the reservation),
  # 123456 mW; nvidia1 answered NO_PERMISSION; nvidia2: utilization not
  # supported and power failing are empty.
  [ "$output" = "$HEADER
$CARD0
$CARD1
$CARD2
nvidia0,nvidia,37,1000,16384,,,123.46,61.0
nvidia2,nvidia,,512,8192,,,,45.0" ]
  [ -z "$stderr" ]
  [ "$(cat "$NVLOG")" = $'init\nshutdown' ]
}

@test "NVML: older names when _v2 are missing, v1 memory when v2 is refused" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$RM_BUILD/tests/nvml_v1.so" run -0 rm-gpu -H
  [ "${lines[3]}" = "nvidia0,nvidia,37,1512,16384,,,123.46,61.0" ]
  [ "${lines[4]}" = "nvidia2,nvidia,,768,8192,,,,45.0" ]
  # A library that refuses our version constant: we fall back to v1.
  NVML_STUB_V2_VERSION=2 RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 rm-gpu -H
  [ "${lines[3]}" = "nvidia0,nvidia,37,1512,16384,,,123.46,61.0" ]
  [ "$(grep -c '^init$' "$NVLOG")" -eq 2 ]
  [ "$(grep -c '^shutdown$' "$NVLOG")" -eq 2 ]
}

@test "NVML whose nvmlInit_v2 fails: one line saying so, the drm rows (card3 included), no shutdown, no late calls" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$RM_BUILD/tests/nvml_initfail.so" run -0 --separate-stderr rm-gpu -H
  [ "$stderr" = "rm-gpu: NVML: nvmlInit: Driver Not Loaded; NVIDIA GPUs are not read" ]
  [ "$output" = "$CARD0
$CARD1
$CARD2
card3,nvidia,,,,,,," ]
  [ "$(cat "$NVLOG")" = "init" ]
}

@test "NVML missing or not NVML: drm rows; silent when the default library is simply not installed" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB=libm.so.6 run -0 --separate-stderr rm-gpu -H
  [ "$stderr" = "rm-gpu: NVML: libm.so.6: no nvmlInit, nvmlShutdown or device calls; NVIDIA GPUs are not read" ]
  [ "${#lines[@]}" -eq 4 ]
  if ! /sbin/ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
    RM_SYS_ROOT="$DRM" run -0 --separate-stderr rm-gpu -H
    [ -z "$stderr" ]
    [ "${#lines[@]}" -eq 4 ]
  fi
}

@test "streaming -i -n: every card each tick with epoch and elapsed_s after the columns; NVML initialised and shut down once" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 rm-gpu -i 0.05 -n 3
  [ "${lines[0]}" = "$HEADER,epoch,elapsed_s" ]
  [ "${#lines[@]}" -eq 16 ]
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/s.csv"
  [ "$(csv_cols "$BATS_TEST_TMPDIR/s.csv")" = "11" ]
  [ "$(csv_get "$BATS_TEST_TMPDIR/s.csv" card 15)" = "nvidia2" ]
  run -0 awk -v e="$(csv_get "$BATS_TEST_TMPDIR/s.csv" elapsed_s 1)" 'BEGIN { exit !(e >= 0 && e < 0.05) }'
  run -0 awk -F, 'NR > 1 && $1 == "card0" { n++; if ($11 < 0.05 * (n - 1) - 0.001) exit 1 } END { exit n != 3 }' \
    "$BATS_TEST_TMPDIR/s.csv"
  [ "$(cat "$NVLOG")" = $'init\nshutdown' ]
}

@test "streaming re-reads each file: a value the driver changes between samples shows in the next one" {
  local root="$BATS_TEST_TMPDIR/drm" out="$BATS_TEST_TMPDIR/s.csv"
  cp -a "$DRM" "$root"
  local dev="$root/class/drm/card0/device"
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" rm-gpu -i 0.5 -n 2 >"$out" 2>/dev/null &
  wait_for 5 grep -q '^card3,' "$out"
  # In place, as sysfs does: the same inode, new contents.
  printf '97\n' >"$dev/gpu_busy_percent"
  printf '3221225472\n' >"$dev/mem_info_vram_used"
  printf '40000000\n' >"$dev/hwmon/hwmon3/power1_average"
  wait
  [ "$(grep '^card0,' "$out" | cut -d, -f3,4,8 | tr '\n' ' ')" = "42,2048,35.00 97,3072,40.00 " ]
}

@test "a reader that goes away (EPIPE) ends rm-gpu quietly, NVML still shut down once" {
  run -0 --separate-stderr bash -c 'RM_SYS_ROOT="$1" RM_NVML_LIB="$2" rm-gpu -i 0.01 | head -2' _ "$DRM" "$STUB"
  [ "${#lines[@]}" -eq 2 ]
  [ -z "$stderr" ]
  wait_for 5 grep -q '^shutdown$' "$NVLOG"
  [ "$(cat "$NVLOG")" = $'init\nshutdown' ]
}

@test "-f jsonl: one object per card, unknown readings null; -f prom: card and driver labels, base units, HELP and TYPE" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 rm-gpu -f jsonl
  [ "${#lines[@]}" -eq 5 ]
  run -0 jq -c 'select(.card == "nvidia2")' <<<"$output"
  [ "$output" = '{"card":"nvidia2","driver":"nvidia","busy_pct":null,"vram_used_mb":512,"vram_total_mb":8192,"gtt_used_mb":null,"gtt_total_mb":null,"power_w":null,"temp_c":45}' ]
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 rm-gpu -f prom
  [[ "$output" == *'rm_gpu_busy_ratio{card="card0",driver="amdgpu"} 0.42'* ]]
  [[ "$output" == *'rm_gpu_vram_used_bytes{card="nvidia0",driver="nvidia"} 1048576000'* ]]
  [[ "$output" == *'rm_gpu_power_watts{card="nvidia0",driver="nvidia"} 123.456'* ]]
  [[ "$output" == *'rm_gpu_temperature_celsius{card="card1",driver="amdgpu"} 51.5'* ]]
  [[ "$output" != *'card="card2"'* ]]
  [[ "$output" != *'rm_gpu_busy_ratio{card="nvidia2"'* ]]
  [ "$(grep -c '^# HELP' <<<"$output")" -eq 7 ]
  [ "$(grep -c '^# TYPE .* gauge$' <<<"$output")" -eq 7 ]
}

@test "a hostile driver name stays one CSV field and one JSON string" {
  local root="$BATS_TEST_TMPDIR/drm"
  cp -a "$DRM" "$root"
  local evil=$'ev,il"\e[31mdrv\nx'
  ln -sfn "../../../bus/pci/drivers/$evil" "$root/devices/pci0000:00/0000:00:02.0/driver"
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-gpu
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/h.csv"
  [ "$(csv_cols "$BATS_TEST_TMPDIR/h.csv")" = "9" ]
  # The escape sequence gone, the newline a space (the words stay apart).
  [ "$(csv_get "$BATS_TEST_TMPDIR/h.csv" driver 3)" = 'ev,il"drv x' ]
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-gpu -f jsonl
  run -0 jq -r 'select(.card == "card2") | .driver' <<<"$output"
  [ "$output" = 'ev,il"drv x' ]
}

@test "no GPU at all (this machine): exit 1 saying so" {
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" RM_NVML_LIB="$RM_BUILD/tests/nvml_initfail.so" run -1 --separate-stderr rm-gpu
  [ -z "$output" ]
  [ "${stderr_lines[1]}" = "rm-gpu: no GPUs: no cards under '$BATS_TEST_TMPDIR/class/drm' and none through NVML" ]
}

@test "usage: bad values exit 2 with the usage line; --help and --version exit 0" {
  run -2 --separate-stderr rm-gpu -n 0
  [[ "${stderr_lines[0]}" == "rm-gpu: invalid count '0'"* ]]
  [[ "${stderr_lines[1]}" == "usage: rm-gpu "* ]]
  run -2 --separate-stderr rm-gpu --watch-pid 1
  [ "${stderr_lines[0]}" = "rm-gpu: --watch-pid needs -i SEC" ]
  run -2 --separate-stderr rm-gpu card0
  run -2 --separate-stderr rm-gpu -f yaml
  run -0 rm-gpu --help
  [ "${lines[0]}" = "usage: rm-gpu [-H] [-i SEC] [-n COUNT] [--watch-pid PID] [-f csv|jsonl|prom]" ]
  run -0 rm-gpu --version
  [[ "$output" == "rm-gpu "[0-9]* ]]
}

@test "NVIDIA: rm-gpu agrees with nvidia-smi on the same card at the same moment" {
  command -v nvidia-smi >/dev/null ||
    skip "no nvidia-smi on this machine (no NVIDIA GPU or driver): the comparison runs only where one is"
  nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi finds no GPU here"
  local q=index,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu
  local before after ours
  before=$(nvidia-smi --query-gpu="$q" --format=csv,noheader,nounits)
  ours=$(rm-gpu -H)
  after=$(nvidia-smi --query-gpu="$q" --format=csv,noheader,nounits)
  # Per card: within 10 points of busy, 1 % of memory, 10 % of power and
  # 2 C of either nvidia-smi reading around ours; "[N/A]" must be empty.
  run -0 "$PY" - "$before" "$after" "$ours" <<'EOF'
import csv, io, sys
def smi(text):
    out = {}
    for r in csv.reader(io.StringIO(text)):
        r = [x.strip() for x in r]
        out["nvidia" + r[0]] = r[1:]
    return out
before, after = smi(sys.argv[1]), smi(sys.argv[2])
ours = {r[0]: r for r in csv.reader(io.StringIO(sys.argv[3])) if r and r[0].startswith("nvidia")}
bad = []
if set(ours) != set(before):
    bad.append("cards differ: rm-gpu %s, nvidia-smi %s" % (sorted(ours), sorted(before)))
# field: (rm-gpu column, nvidia-smi column, tolerance(smi value))
checks = [("busy", 2, 0, lambda v: 10), ("vram_used", 3, 1, lambda v: max(0.01 * v, 2)),
          ("vram_total", 4, 2, lambda v: max(0.01 * v, 2)), ("power", 7, 3, lambda v: 0.1 * v),
          ("temp", 8, 4, lambda v: 2)]
for card in sorted(set(ours) & set(before)):
    for name, oc, sc, tol in checks:
        o = ours[card][oc]
        s = [before[card][sc], after.get(card, before[card])[sc]]
        if any(x.startswith("[") for x in s):
            if o != "":
                bad.append("%s %s: nvidia-smi says %s, rm-gpu %r" % (card, name, s[0], o))
            continue
        s = [float(x) for x in s]
        if o == "":
            bad.append("%s %s: rm-gpu empty, nvidia-smi %s" % (card, name, s))
            continue
        o = float(o)
        if not (min(s) - tol(min(s)) <= o <= max(s) + tol(max(s))):
            bad.append("%s %s: rm-gpu %s, nvidia-smi %s" % (card, name, o, s))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
}

@test "rm-sample --gpu on the drm fixture: the highest busy, VRAM used and total summed over the cards" {
  RM_SYS_ROOT="$DRM" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-sample --gpu
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  [ -z "$stderr" ]
  [ "$(head -1 "$BATS_TEST_TMPDIR/o.csv" | cut -d, -f19-)" = "psi_cpu_some,gpu_busy_pct,gpu_vram_used_mb,gpu_vram_total_mb" ]
  # card0 42 % and 2048 of 16368 MiB, card1 7 % and 512 of 512; i915 and
  # the nvidia drm card without readings add nothing.
  [ "$(cut -d, -f20- "$BATS_TEST_TMPDIR/o.csv" | tail -1)" = "42,2560,16880" ]
}

@test "rm-sample --gpu with NVML: its GPUs in the max and the sums; initialised and shut down once for the stream" {
  NVML_STUB_BUSY0=90 RM_SYS_ROOT="$DRM" RM_NVML_LIB="$STUB" run -0 rm-sample --gpu -i 0.05 -n 3
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  # + nvidia0 (90 %, 1000 of 16384 MiB) and nvidia2 (512 of 8192 MiB).
  [ "$(cut -d, -f20- "$BATS_TEST_TMPDIR/o.csv" | tail -n +2 | sort -u)" = "90,4072,41456" ]
  [ "$(cat "$NVLOG")" = $'init\nshutdown' ]
}

@test "rm-sample --energy --gpu on both fixtures: the four columns after the defaults, in order, filled; -f prom names them" {
  local root="$BATS_TEST_TMPDIR/sys"
  mkdir -p "$root"
  cp -a "$FIXTURES/powercap/intel1/." "$root/"
  cp -a "$DRM/." "$root/"
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-sample --gpu --energy
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  [ "$(head -1 "$BATS_TEST_TMPDIR/o.csv" | cut -d, -f20-)" = "pkg_w,gpu_busy_pct,gpu_vram_used_mb,gpu_vram_total_mb" ]
  [ "$(cut -d, -f20- "$BATS_TEST_TMPDIR/o.csv" | tail -1)" = "0.00,42,2560,16880" ]
  RM_SYS_ROOT="$root" RM_NVML_LIB="$NO_NVML" run -0 rm-sample --gpu --energy -f prom
  [[ "$output" == *'rm_package_power_watts{stage=""} 0'* ]]
  [[ "$output" == *'rm_gpus_busy_max_ratio{stage=""} 0.42'* ]]
  [[ "$output" == *'rm_gpus_vram_used_bytes{stage=""} 2684354560'* ]]
  [[ "$output" == *'rm_gpus_vram_total_bytes{stage=""} 17699962880'* ]]
}

@test "rm-sample --energy --gpu without RAPL or GPU (this machine): four empty columns, exit 0, nothing on stderr" {
  RM_SYS_ROOT="$BATS_TEST_TMPDIR" RM_NVML_LIB="$NO_NVML" run -0 --separate-stderr rm-sample --energy --gpu -i 0.05 -n 2
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.csv"
  [ -z "$stderr" ]
  [ "$(csv_cols "$BATS_TEST_TMPDIR/o.csv")" = "23" ]
  [ "$(cut -d, -f20- "$BATS_TEST_TMPDIR/o.csv" | tail -n +2 | sort -u)" = ",,," ]
  # And on the real /sys here, when it has neither.
  if ! compgen -G '/sys/class/powercap/intel-rapl:*' >/dev/null &&
    ! compgen -G '/sys/class/drm/card[0-9]*' >/dev/null &&
    ! /sbin/ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
    run -0 --separate-stderr rm-sample --energy --gpu -f jsonl
    [ -z "$stderr" ]
    run -0 jq -c '[.pkg_w, .gpu_busy_pct, .gpu_vram_used_mb, .gpu_vram_total_mb]' <<<"$output"
    [ "$output" = "[null,null,null,null]" ]
  fi
}

@test "rm-gpu(1)'s jq line turns our rows into the seed's gpu_json objects (keys, bytes, nulls)" {
  local line
  # The pipeline exactly as the man page prints it.
  line=$(mandoc -Tascii "$RM_TOP/docs/rm-gpu.1" | col -b | sed -n '/^[[:space:]]*rm-gpu -f jsonl | jq/,/}'"'"'$/p' | sed 's/^[[:space:]]*//')
  [[ "$line" == "rm-gpu -f jsonl | jq -c "* ]]
  RM_SYS_ROOT="$FIXTURES/drm/mixed" run -0 bash -c "$line"
  [ "${lines[0]}" = '{"card":"card0","driver":"amdgpu","busy_percent":42,"vram_used":2147483648,"vram_total":17163091968,"gtt_used":104857600,"gtt_total":16777216000}' ]
  [ "${lines[2]}" = '{"card":"card2","driver":"i915","busy_percent":null,"vram_used":null,"vram_total":null,"gtt_used":null,"gtt_total":null}' ]
}

@test "rm-gpu --watch-pid: one last row when the PID ends inside an interval, as rm-sample and rm-energy write" {
  under_valgrind && skip "a 1 s PID ends before memcheck has started the watcher"
  sleep 1 &
  local pid=$!
  RM_SYS_ROOT="$FIXTURES/drm/mixed" RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
    run -0 --separate-stderr timeout 60 rm-gpu -i 30 --watch-pid "$pid"
  # The header, every card at the start, every card again at the end.
  local first
  first=$(printf '%s\n' "${lines[@]}" | grep -c ',0\.000$')
  ((first >= 3))
  [ "${#lines[@]}" -eq $((1 + 2 * first)) ]
  [ "$(printf '%s\n' "${lines[@]}" | grep -c '^card0,')" -eq 2 ]
  # The last row is the PID's end, not a tick 30 s later.
  awk -F, 'NR > 1 && $NF > 5 { exit 1 }' <<<"$output"
}

@test "rm-gpu --watch-pid of a PID that does not exist: exit 1, nothing lost to valgrind (the analyzer's leak)" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  under_san && skip "valgrind cannot run an AddressSanitizer build (make check SAN=1)"
  RM_SYS_ROOT="$FIXTURES/drm/mixed" RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
    run -1 --separate-stderr valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite "$RM_BUILD/bin/rm-gpu" -i 1 --watch-pid 4000000
  [[ "$stderr" == *"rm-gpu: cannot watch PID 4000000: No such process"* ]]
  [[ "$stderr" != *"definitely lost"* ]]
}
