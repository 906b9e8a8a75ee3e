# shellcheck shell=bash
# shellcheck disable=SC2154  # PROG, USAGE and RM_DIR are set by the wrapper that sources this
# wrapper-lib.sh: what the bash wrappers (rm-monitor, rm-run, rm-plot, rm-demo) share, sourced
# by each, never run: it is no command (no rm- name, no shebang, mode 644), and `make install`
# puts it in PKGLIBDIR, not BINDIR.  Each wrapper finds it beside its own resolved path
# (scripts/, bin/) or at RM_LIB_REL from there (the install), and sets PROG, USAGE (a
# usage_error's second line) and RM_DIR (its resolved directory) before it sources this.
# resource-monitor.sh does not use it: it is meant to work when copied on its own.

# err MSG...: "PROG: MSG" on stderr.
err() { printf '%s: %s\n' "${PROG}" "$*" >&2; }
# die MSG: err MSG, exit 1 (a runtime failure).
die() { err "$1"; exit 1; }
# usage_error MSG: err MSG and the usage, exit 2 (a bad command line).
usage_error() { err "$1"; printf '%s\n' "${USAGE}" >&2; exit 2; }
# find_tool NAME: the command NAME beside the wrapper's resolved path (bin/ or the install
# directory, also when the wrapper was called through a symlink elsewhere), else on PATH,
# in REPLY; '' when there is none.
find_tool() {
  REPLY="${RM_DIR}/$1" && [[ -f "${REPLY}" && -x "${REPLY}" ]] || REPLY=$(command -v "$1" 2>/dev/null) || REPLY=''
}
# print_version TOOL: "PROG VERSION" on stdout and exit 0, VERSION the one the C command TOOL
# found by find_tool gives: a wrapper carries no number of its own, so it cannot say another
# version than the commands it runs.
print_version() {
  local v
  find_tool "$1"
  [[ -n "${REPLY}" ]] || die "$1 not found: the version is that of rm-tools' C commands"
  v=$("${REPLY}" --version) || exit 1
  printf '%s %s\n' "${PROG}" "${v#"$1" }"
  exit 0
}
