#!/usr/bin/env bash
# Run the whole suite: C unit tests (TAP), the bats files, shellcheck.
# Prints every TAP line and ends with one line "N passed, N failed".
# Environment: RM_BUILD (object tree, default build/std), VALGRIND=1 to run
# the commands the bats files call under valgrind memcheck.
set -u

log=""

err() { printf 'run.sh: %s\n' "$*" >&2; }

main() {
  local top build passed=0 failed=0 skipped=0 t
  top=$(cd "$(dirname "$0")/.." && pwd)
  build=${RM_BUILD:-build/std}
  cd "$top" || exit 1
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT

  export RM_TOP="$top" RM_BUILD="$top/$build"
  export PATH="$top/bin:$PATH"
  if [[ "${VALGRIND:-}" == 1 ]]; then
    bash tests/valgrind-wrap.sh "$top/$build/valgrind-bin" || exit 1
    export PATH="$top/$build/valgrind-bin:$PATH"
  fi

  {
    for t in "$build"/tests/t_*; do
      [[ -x "$t" ]] || continue
      echo "# unit: ${t##*/}"
      "$t" 2>&1
    done
    if command -v bats >/dev/null 2>&1; then
      bats --tap tests/*.bats 2>&1
    else
      echo "not ok - bats is not installed"
    fi
    if command -v shellcheck >/dev/null 2>&1; then
      local f
      while IFS= read -r f; do
        if out=$(shellcheck -x "$f" 2>&1); then
          echo "ok - shellcheck $f"
        else
          echo "not ok - shellcheck $f"
          printf '%s\n' "$out" | sed 's/^/# /'
        fi
      done < <(grep -rlE '^#!.*(ba)?sh' scripts tests/*.sh tests/test_helper .ci 2>/dev/null | sort)
    else
      echo "not ok - shellcheck is not installed"
    fi
  } </dev/null 2>&1 | tee "$log"

  passed=$(grep -cE '^ok ' "$log")
  failed=$(grep -cE '^not ok' "$log")
  skipped=$(grep -cE '^ok .*# skip' "$log")
  passed=$((passed - skipped))
  if ((skipped > 0)); then
    echo "$passed passed, $failed failed, $skipped skipped"
  else
    echo "$passed passed, $failed failed"
  fi
  ((failed == 0 && passed > 0))
}

main "$@"
