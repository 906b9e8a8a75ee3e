#!/usr/bin/env bash
# Bench section: what --energy and --gpu add to rm-sample's CPU per tick on
# the RAPL and drm fixtures, beside one rm-energy and one rm-gpu sample per
# tick on the same trees.  Two measures: rm-sample run with and without
# the flags in back-to-back pairs (the median of the pairs' differences),
# and the added library calls timed alone, which do not move with the
# number of processes rm-sample's /proc scan meets on a shared machine.
set -u

err() { printf 'bench/energy_gpu: %s\n' "$*" >&2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

work=""

# per_tick TICKS CMD...: CPU milliseconds per tick of CMD run alone.
per_tick() {
  local ticks=$1 c
  shift
  read -r c _ < <("$RM_BUILD/bench/rusage" "$@")
  awk -v c="$c" -v n="$ticks" 'BEGIN { print c / n * 1000 }'
}

main() {
  local ticks=300 pairs=7 i a b bn
  local alone=() diff=() diff_nvml=() energy=() gpu=()
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  if [[ ! -x "$RM_BUILD/bench/rusage" ]]; then
    cc -O2 -o "$RM_BUILD/bench/rusage" tests/bench/rusage.c || { err "cannot build rusage"; return 1; }
  fi
  cc -O2 -Ilib -o "$RM_BUILD/bench/energy_gpu_cost" tests/bench/energy_gpu_cost.c \
    "$RM_BUILD/librmtools.a" -ldl || { err "cannot build energy_gpu_cost"; return 1; }
  if [[ ! -f "$RM_BUILD/tests/nvml_stub.so" ]]; then
    err "no $RM_BUILD/tests/nvml_stub.so (make bench builds it)"
    return 1
  fi
  # One sys root with both trees: intel1 (package, core, uncore, dram,
  # psys, an mmio twin) and the drm cards (two amdgpu, i915, nvidia-drm).
  mkdir -p "$work/sys"
  cp -a tests/fixtures/powercap/intel1/. tests/fixtures/drm/mixed/. "$work/sys/"
  export RM_SYS_ROOT="$work/sys" RM_NVML_LIB=/nonexistent/libnvidia-ml.so.1
  local stub="$RM_BUILD/tests/nvml_stub.so"

  for ((i = 0; i < pairs; i++)); do
    a=$(per_tick "$ticks" rm-sample -i 0.001 -n "$ticks")
    b=$(per_tick "$ticks" rm-sample -i 0.001 -n "$ticks" --energy --gpu)
    bn=$(RM_NVML_LIB="$stub" per_tick "$ticks" rm-sample -i 0.001 -n "$ticks" --energy --gpu)
    alone+=("$a")
    diff+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')")
    diff_nvml+=("$(awk -v a="$a" -v b="$bn" 'BEGIN { print b - a }')")
    energy+=("$(per_tick "$ticks" rm-energy -i 0.001 -n "$ticks")")
    gpu+=("$(per_tick "$ticks" rm-gpu -i 0.001 -n "$ticks" 2>/dev/null)")
  done
  local m_alone m_diff m_diff_nvml m_energy m_gpu calls calls_nvml
  m_alone=$(printf '%s\n' "${alone[@]}" | median)
  m_diff=$(printf '%s\n' "${diff[@]}" | median)
  m_diff_nvml=$(printf '%s\n' "${diff_nvml[@]}" | median)
  m_energy=$(printf '%s\n' "${energy[@]}" | median)
  m_gpu=$(printf '%s\n' "${gpu[@]}" | median)
  calls=$("$RM_BUILD/bench/energy_gpu_cost" 20000) || return 1
  calls_nvml=$(RM_NVML_LIB="$stub" "$RM_BUILD/bench/energy_gpu_cost" 20000) || return 1

  echo "## rm-sample --energy --gpu: added CPU per tick (fixtures: 1 package + dram, 4 drm cards)"
  echo
  echo "| measure | CPU per tick | vs rm-sample alone |"
  echo "|---|---:|---:|"
  read -r ce cg cga <<<"$calls"
  read -r _ cgn cgan <<<"$calls_nvml"
  awk -v a="$m_alone" -v d="$m_diff" -v dn="$m_diff_nvml" -v e="$m_energy" -v g="$m_gpu" \
    -v ce="$ce" -v cg="$cg" -v cga="$cga" -v cgn="$cgn" -v cgan="$cgan" -v p="$pairs" -v t="$ticks" 'BEGIN {
      printf "| rm-sample alone (median of %d runs of %d ticks) | %.1f us | 1.00x |\n", p, t, a * 1000
      printf "| added by --energy --gpu, run in pairs (median difference) | %+.1f us | %+.1f %% |\n", d * 1000, d / a * 100
      printf "| added, with 2 more GPUs from the NVML stub | %+.1f us | %+.1f %% |\n", dn * 1000, dn / a * 100
      printf "| added calls alone: RAPL sample (package + dram) | %.1f us | %.1f %% |\n", ce, ce / 10 / a
      printf "| added calls alone: 4 cards, busy + VRAM | %.1f us | %.1f %% |\n", cg, cg / 10 / a
      printf "| added calls alone: 4 cards + 2 NVML stub GPUs | %.1f us | %.1f %% |\n", cgn, cgn / 10 / a
      printf "| rm-energy -i, one sample | %.1f us | %.2fx |\n", e * 1000, e / a
      printf "| rm-gpu -i, one sample of every field (4 cards, one write) | %.1f us | %.2fx |\n", g * 1000, g / a
      printf "\nAdded CPU per tick by --energy --gpu: %.1f us = %.1f %% of rm-sample alone from the calls (target < 10 %%), %+.1f %% end to end in pairs.\n", ce + cg, (ce + cg) / 10 / a, d / a * 100
    }'
}

main "$@"
