#!/usr/bin/env bats
# make install and make uninstall as a packager runs them: the commands,
# man pages, bash completions and guides land under DESTDIR+PREFIX, work
# from there, and uninstall takes away exactly what install put there.

setup() {
  load test_helper/common
  DEST="$BATS_TEST_TMPDIR/dest"
}

# files DIR: every file and link under DIR, sorted.
files() {
  find "$1" -not -type d | sort
}

# mk TARGET VARS...: make in the repository, quietly, as a packager would.
mk() {
  make -s -C "$RM_TOP" --no-print-directory "$@"
}

@test "make install DESTDIR PREFIX=/usr: every command, man page, completion and guide" {
  mk install DESTDIR="$DEST" PREFIX=/usr
  local f n=0
  for f in "$RM_TOP"/bin/rm-*; do
    [[ -x "$f" ]] || continue
    [[ -x "$DEST/usr/bin/${f##*/}" && -f "$DEST/usr/bin/${f##*/}" ]]
    n=$((n + 1))
  done
  ((n >= 2))
  for f in "$RM_TOP"/docs/*.1; do
    cmp "$f" "$DEST/usr/share/man/man1/${f##*/}"
  done
  for f in "$RM_TOP"/scripts/completions/*; do
    cmp "$f" "$DEST/usr/share/bash-completion/completions/${f##*/}"
  done
  for f in "$RM_TOP"/docs/*.md; do
    cmp "$f" "$DEST/usr/share/doc/rm-tools/${f##*/}"
  done
  # Modes a package expects: 755 commands, 644 data.
  run -0 stat -c '%a' "$DEST/usr/bin/rm-sample" "$DEST/usr/share/man/man1/rm-sample.1" \
    "$DEST/usr/share/bash-completion/completions/rm-sample"
  [[ "$output" == $'755\n644\n644' ]]
}

@test "the installed rm-sample runs, and man -l shows an installed page" {
  mk install DESTDIR="$DEST" PREFIX=/usr
  run -0 env PATH=/usr/bin:/bin "$DEST/usr/bin/rm-sample" --version
  [[ "$output" =~ ^rm-sample\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
  run -0 env PATH=/usr/bin:/bin "$DEST/usr/bin/rm-sample" -f csv
  [[ "${lines[0]}" == epoch,iso,elapsed_s,* ]]
  run -0 --separate-stderr env MANPAGER=cat MANWIDTH=80 man -l "$DEST/usr/share/man/man1/rm-sample.1"
  [[ -z "$stderr" ]]
  [[ "$output" == *"RM-SAMPLE(1)"* && "$output" == *SYNOPSIS*"rm-sample [-H]"* ]]
  # The installed completion registers itself for the installed command.
  run -0 bash -c 'source "$1" && complete -p rm-sample' _ \
    "$DEST/usr/share/bash-completion/completions/rm-sample"
  [[ "$output" == "complete -F "*" rm-sample" ]]
  # The seed's name loads the rm-monitor completion installed beside it.
  if [[ -f "$RM_TOP/scripts/completions/resource-monitor.sh" ]]; then
    run -0 bash -c 'source "$1" && complete -p resource-monitor.sh' _ \
      "$DEST/usr/share/bash-completion/completions/resource-monitor.sh"
    [[ "$output" == "complete -F "*" resource-monitor.sh" ]]
  fi
}

@test "make uninstall leaves nothing behind, and only what install put there goes" {
  mk install DESTDIR="$DEST" PREFIX=/usr
  # Files that belong to others, in the same directories.
  echo keep >"$DEST/usr/bin/other-tool"
  echo keep >"$DEST/usr/share/man/man1/other.1"
  echo keep >"$DEST/usr/share/bash-completion/completions/other"
  mk uninstall DESTDIR="$DEST" PREFIX=/usr
  run -0 files "$DEST"
  [[ "$output" == "$(printf '%s\n' "$DEST/usr/bin/other-tool" \
    "$DEST/usr/share/bash-completion/completions/other" \
    "$DEST/usr/share/man/man1/other.1" | sort)" ]] || {
    echo "$output"
    false
  }
  rm "$DEST/usr/bin/other-tool" "$DEST/usr/share/man/man1/other.1" \
    "$DEST/usr/share/bash-completion/completions/other"
  # rm-tools' own doc directory goes with its files.
  [[ ! -e "$DEST/usr/share/doc/rm-tools" ]]
  # A second uninstall finds nothing to do and does not fail.
  mk uninstall DESTDIR="$DEST" PREFIX=/usr
  run -0 files "$DEST"
  [[ -z "$output" ]]
}

@test "PREFIX, MANDIR and COMPDIR move what they name" {
  mk install DESTDIR="$DEST" PREFIX=/opt/rm MANDIR=/opt/rm/man \
    COMPDIR=/etc/bash_completion.d
  [[ -x "$DEST/opt/rm/bin/rm-sample" ]]
  [[ -f "$DEST/opt/rm/man/man1/rm-sample.1" ]]
  [[ -f "$DEST/etc/bash_completion.d/rm-sample" ]]
  [[ -f "$DEST/opt/rm/share/doc/rm-tools/HACKING.md" ]]
  mk uninstall DESTDIR="$DEST" PREFIX=/opt/rm MANDIR=/opt/rm/man \
    COMPDIR=/etc/bash_completion.d
  run -0 files "$DEST"
  [[ -z "$output" ]]
}

# wrappers DIR: each bash wrapper in DIR run as a user would, with PATH holding none of
# rm-tools (so only what is found beside the wrapper's resolved path counts): --version or
# --help, and a short real run of those that run something.  Output in $BATS_TEST_TMPDIR.
wrappers() {
  local d=$1 w="$BATS_TEST_TMPDIR/work" p=/usr/bin:/bin
  rm -rf "$w" && mkdir -p "$w"
  run -0 env PATH="$p" "$d/rm-run" --version
  [[ "$output" == "rm-run 0.1.0" ]]
  run -0 --separate-stderr env PATH="$p" "$d/rm-run" -o "$w/run.txt" -- touch "$w/ran"
  [[ -f "$w/ran" && "$(head -n 1 "$w/run.txt")" == "Job: touch $w/ran" ]]
  run -0 env PATH="$p" "$d/rm-monitor" --version
  [[ "$output" == "rm-monitor 0.1.0" ]]
  run -0 --separate-stderr env PATH="$p" "$d/rm-monitor" --out-dir "$w" --run-id inst \
    --interval 0.2 -- sh -c 'sleep 0.3'
  [[ -s "$w/resources-inst.csv" && -s "$w/resources-inst.summary.txt" ]]
  run -0 env PATH="$p" "$d/rm-plot" --script "$w/resources-inst.csv"
  [[ "$output" == *"set output '$w/resources-inst.png'"* ]]
  run -0 env PATH="$p" "$d/rm-demo" --help
  [[ "$output" == "usage: rm-demo "* ]]
  run -2 --separate-stderr env PATH="$p" "$d/rm-demo" --bogus
  [[ "$stderr" == "rm-demo: unknown argument '--bogus'"$'\n'"usage: rm-demo "* ]]
  run -0 env PATH="$p" "$d/resource-monitor.sh" --version
  [[ "$output" == "rm-monitor 0.1.0" ]]
}

@test "the installed wrappers find their helpers and their commands, called by path and through a symlink elsewhere" {
  mk install DESTDIR="$DEST" PREFIX=/usr
  wrappers "$DEST/usr/bin"
  # A user's ~/bin of symlinks to the installed commands, a relative one among them.
  local home="$BATS_TEST_TMPDIR/home/bin" w
  mkdir -p "$home"
  for w in rm-run rm-monitor rm-plot rm-demo resource-monitor.sh; do
    ln -s "$DEST/usr/bin/$w" "$home/$w"
  done
  ln -sfn "$(realpath --relative-to="$home" "$DEST/usr/bin/rm-run")" "$home/rm-run"
  wrappers "$home"
  # The helpers are no command: in the package's lib directory, not BINDIR, not executable.
  [[ ! -e "$DEST/usr/bin/wrapper-lib.sh" ]]
  run -0 stat -c '%a' "$DEST/usr/lib/rm-tools/wrapper-lib.sh"
  [[ "$output" == 644 ]]
}

@test "BINDIR and PKGLIBDIR apart: the installed wrappers still find their helpers" {
  mk install DESTDIR="$DEST" PREFIX=/opt/rm BINDIR=/opt/rm/sbin PKGLIBDIR=/usr/share/rm-tools
  [[ -f "$DEST/usr/share/rm-tools/wrapper-lib.sh" && ! -e "$DEST/opt/rm/lib" ]]
  wrappers "$DEST/opt/rm/sbin"
  mk uninstall DESTDIR="$DEST" PREFIX=/opt/rm BINDIR=/opt/rm/sbin PKGLIBDIR=/usr/share/rm-tools
  run -0 files "$DEST"
  [[ -z "$output" ]]
}

@test "a wrapper whose helpers are missing says so and exits 127 before it runs anything" {
  mk install DESTDIR="$DEST" PREFIX=/usr
  rm "$DEST/usr/lib/rm-tools/wrapper-lib.sh"
  local w b="$DEST/usr/bin"
  for w in rm-run rm-monitor rm-plot rm-demo; do
    run -127 --separate-stderr "$b/$w" --help
    [[ -z "$output" ]]
    [[ "$stderr" == "$w: cannot find its helpers, wrapper-lib.sh, in $b or $b/../lib/rm-tools: reinstall rm-tools" ]]
  done
  run -127 --separate-stderr "$b/rm-run" -- touch "$BATS_TEST_TMPDIR/ran"
  [[ ! -e "$BATS_TEST_TMPDIR/ran" ]]
}

@test "every man page passes mandoc -T lint with no warnings" {
  local m n=0
  for m in "$RM_TOP"/docs/*.1; do
    run -0 mandoc -T lint -W warning "$m"
    [[ -z "$output" ]]
    n=$((n + 1))
  done
  ((n >= 2))
}

@test "every command make install puts in place has a man page to go with it" {
  # (tests/manpages.bats checks each page's SYNOPSIS against --help.)
  local f missing=()
  for f in "$RM_TOP"/bin/rm-* "$RM_TOP"/bin/resource-monitor.sh; do
    [[ -x "$f" ]] || continue
    case ${f##*/} in
      # The seed's name for rm-monitor: rm-monitor(1) describes it.
      resource-monitor.sh) [[ -f "$RM_TOP/docs/rm-monitor.1" ]] || missing+=(rm-monitor.1) ;;
      *) [[ -f "$RM_TOP/docs/${f##*/}.1" ]] || missing+=("${f##*/}.1") ;;
    esac
  done
  ((${#missing[@]} == 0)) || {
    echo "no man page: ${missing[*]}"
    return 1
  }
}
