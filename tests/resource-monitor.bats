#!/usr/bin/env bats
# resource-monitor.sh, the seed monitor's name for rm-monitor, called from
# an orchestrator's tree: copied, symlinked, installed.

setup() {
  load test_helper/common
  OUT="$BATS_TEST_TMPDIR/out"
  ORCH="$BATS_TEST_TMPDIR/orch/linux/scripts/01-core"
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do
    kill -KILL "$p" 2>/dev/null || true
  done
}

# A PATH with the system's commands but not bin/.
bare_path() {
  printf '%s' "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

@test "resource-monitor.sh copied or symlinked into an orchestrator tree finds rm-monitor" {
  mkdir -p "$ORCH"
  # Copied, rm-monitor on PATH: the orchestrator's call works.
  cp "$RM_TOP/bin/resource-monitor.sh" "$ORCH/"
  run -0 bash "$ORCH/resource-monitor.sh" --help
  [[ "$output" == "usage: rm-monitor "* ]]
  # Copied, rm-monitor nowhere: it says where it looked, exit 127.
  run -127 --separate-stderr env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --help
  [ "$stderr" = "resource-monitor.sh: rm-monitor not found: looked for $ORCH/rm-monitor, then on PATH ($(bare_path))" ]
  # Symlinked: the rm-monitor beside the link's target, PATH or not.
  rm "$ORCH/resource-monitor.sh"
  ln -s "$RM_TOP/bin/resource-monitor.sh" "$ORCH/resource-monitor.sh"
  run -0 env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --help
  [[ "$output" == "usage: rm-monitor "* ]]
  # A relative symlink called through a relative path, from the tree's top.
  ln -sfn "$(realpath --relative-to="$ORCH" "$RM_TOP/bin/resource-monitor.sh")" "$ORCH/resource-monitor.sh"
  cd "$BATS_TEST_TMPDIR/orch"
  RESOURCE_MONITOR=0 run -0 env PATH="$(bare_path)" bash linux/scripts/01-core/resource-monitor.sh --out-dir "$OUT"
  [ ! -e "$OUT" ]
  # And it really monitors from there: one run, its summary written.
  run -0 env PATH="$(bare_path)" bash linux/scripts/01-core/resource-monitor.sh \
    --out-dir "$OUT" --run-id rm1 --interval 0.1 --watch-pid "$(watched_until "$OUT/resources-rm1.csv")"
  [ -s "$OUT/resources-rm1.summary.txt" ]
}

@test "after make install PREFIX=DIR, resource-monitor.sh copied or symlinked runs the installed rm-monitor" {
  local inst="$BATS_TEST_TMPDIR/inst"
  make -s -C "$RM_TOP" --no-print-directory install PREFIX="$inst" >/dev/null
  mkdir -p "$ORCH"
  cp "$inst/bin/resource-monitor.sh" "$ORCH/"
  run -0 env PATH="$inst/bin:$(bare_path)" bash "$ORCH/resource-monitor.sh" --version
  [ "$output" = "rm-monitor 0.1.0" ]
  ln -sf "$inst/bin/resource-monitor.sh" "$ORCH/resource-monitor.sh"
  run -0 env PATH="$(bare_path)" bash "$ORCH/resource-monitor.sh" --version
  [ "$output" = "rm-monitor 0.1.0" ]
  # The installed copy itself, called by its path.
  run -0 env PATH="$(bare_path)" bash "$inst/bin/resource-monitor.sh" --version
}
