#!/usr/bin/env bats
# The shell wrappers themselves: no wrapper creates,
# opens, truncates, writes, or changes the mode or owner of a name in a
# directory another user may write, nor links one there.  Read from the
# scripts' syntax trees (shfmt), not their text, so a > inside an awk
# program or a (( )) is no redirection.  docs/reliability.md lists it.

setup() {
  load test_helper/common
}

# The wrappers a root user runs into a directory another user owns: the
# build monitor, the job profiler, the plotter and the seed's name for the
# monitor.  (rm-demo builds its own generated project in a directory it
# has just made, and is not run into another user's directory.)  And the helpers they source.
WRAPPERS=(rm-monitor rm-run rm-plot resource-monitor.sh wrapper-lib.sh)

@test "every file a wrapper writes, chmods or links is /dev/null, a descriptor, /proc's or in its own mktemp -d directory" {
  if ! command -v shfmt >/dev/null; then
    [[ "${CI:-}" != true ]] || { echo "shfmt is missing under CI" >&2; return 1; }
    skip "no shfmt (Debian: apt install shfmt)"
  fi
  local w paths=()
  for w in "${WRAPPERS[@]}"; do paths+=("$RM_TOP/scripts/$w"); done
  run "$PY" "$RM_TOP/tests/tools/wrapper-writes.py" "${paths[@]}"
  echo "$output"
  [ "$status" = 0 ]
  [ -z "$output" ]
}

@test "the check itself finds a redirection, a chmod and an ln onto a shared name, and passes the allowed ones" {
  command -v shfmt >/dev/null || skip "no shfmt"
  local f="$BATS_TEST_TMPDIR/w"
  cat >"$f" <<'SH'
#!/usr/bin/env bash
priv=$(mktemp -d)
echo x >"${out_dir}/a.csv"
printf y >>"$1"
chmod 644 "${out_dir}/b"
ln -sfn target "${out_dir}/.latest"
echo ok >/dev/null 2>&1 >&2 {fd}>&- 3>&"${fd}"
echo ok >"${priv}/mine" <"${priv}/in"
awk '{ if ($1 > 2) print > "/dev/stderr" }' </dev/null
((x > 1))
SH
  run "$PY" "$RM_TOP/tests/tools/wrapper-writes.py" "$f"
  echo "$output"
  [ "$status" = 1 ]
  [ "$output" = "$f:3: >\"\${out_dir}/a.csv\"
$f:4: >>\"\$1\"
$f:5: chmod \"\${out_dir}/b\"
$f:6: ln \"\${out_dir}/.latest\"
$f:6: ln target" ]
}
