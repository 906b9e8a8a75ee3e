#!/usr/bin/env bash
# synopsis.sh: each man page's SYNOPSIS, written from its command's --help
# usage lines (docs/synopsis.awk), so that a page says what the option table
# (lib/cli.h) or a wrapper's USAGE says.  `make man-synopsis` runs it;
# tests/manpages.bats runs it with --check.
#
# usage: docs/synopsis.sh [--check] BINDIR PAGE...
#
# PAGE is docs/NAME.1, its command BINDIR/NAME.  A page whose SYNOPSIS
# differs is rewritten (--check: left alone, the difference shown, exit 1).

set -euo pipefail

readonly PROG=synopsis.sh
readonly HERE="${BASH_SOURCE[0]%/*}"

TMP=

err() { printf '%s: %s\n' "${PROG}" "$*" >&2; }

# synopsis CMD: the mdoc lines of CMD's SYNOPSIS.
synopsis() {
  "$1" --help | awk -f "${HERE}/synopsis.awk"
}

# splice PAGE BODY: PAGE with the lines of file BODY as its SYNOPSIS.
splice() {
  awk -v body="$2" '
    /^\.Sh / { skip = 0 }
    /^\.Sh SYNOPSIS$/ {
      print
      while ((getline l < body) > 0)
        print l
      skip = 1
      found = 1
      next
    }
    !skip { print }
    END { if (!found) exit 1 }' "$1"
}

main() {
  local check=0 bindir page name rc=0
  if [[ "${1:-}" == --check ]]; then
    check=1
    shift
  fi
  (($# >= 2)) || { err "usage: docs/synopsis.sh [--check] BINDIR PAGE..."; exit 2; }
  bindir=$1
  shift
  TMP=$(mktemp -d)
  trap 'rm -rf -- "${TMP}"' EXIT
  for page in "$@"; do
    name=${page##*/}
    name=${name%.1}
    if ! synopsis "${bindir}/${name}" >"${TMP}/body"; then
      err "${name}: no usage lines from '${bindir}/${name} --help'"
      rc=1
      continue
    fi
    if ! splice "${page}" "${TMP}/body" >"${TMP}/page"; then
      err "${page}: no .Sh SYNOPSIS"
      rc=1
      continue
    fi
    cmp -s "${page}" "${TMP}/page" && continue
    if ((check)); then
      diff -u "${page}" "${TMP}/page" || true
      err "${page}: SYNOPSIS is not what '${name} --help' says (make man-synopsis)"
      rc=1
    else
      cat "${TMP}/page" >"${page}"
      echo "${PROG}: rewrote the SYNOPSIS of ${page}"
    fi
  done
  return "${rc}"
}

main "$@"
