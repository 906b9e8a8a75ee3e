#!/usr/bin/env bash
# Run the test suite: C unit tests (TAP), the bats files, shellcheck.
# Prints every TAP line and ends with one line
# "N passed, N failed, N skipped".
#
# usage: bash tests/run.sh [--long] [--for NAME]... [FILE.bats...]
#   (none)   `make check`: the unit tests, every bats test not tagged slow,
#            and shellcheck on every shell script.
#   --long   `make check-long`: only the bats tests tagged slow
#            (`# bats test_tags=slow` on the line before @test).
#   --for NAME  `make check T=NAME`: tests/NAME.bats, and the unit tests
#            of the lib modules NAME's command links and those that include
#            a source of the command's own (the command: the longest
#            leading part of NAME that is one, so rm-tree-exact is
#            rm-tree's; none for a subject such as cli or trust).
#   --units NAME  print the unit tests --for NAME runs, one a line, and exit.
#   FILE...  only these bats files (no unit tests, no shellcheck).
#
# Environment:
#   RM_BUILD         object tree (default build/std)
#   VALGRIND=1       the commands the bats files call run under valgrind
#                    memcheck (stand-ins in $RM_BUILD/valgrind-bin, first on
#                    PATH; tests/test_helper/common.bash keeps them first)
#   RM_JOBS          bats files run at once (default: 2 per CPU; 1 = one
#                    after another).  Needs GNU parallel (Debian: parallel);
#                    without it every file runs one after another.
#   RM_TEST_TIMEOUT  seconds one test may run before bats kills it and
#                    reports it failed "# timeout after Ns" (default 300,
#                    900 for --long, three times that under VALGRIND=1)
#   RM_SUITE_TIMEOUT seconds a whole group of files may run before it is
#                    killed, with the processes still running listed
#                    (default 3600)
#   RM_TIMING=1      each bats test's time after its title ("in 1234ms")
#   CI=true          (set by .ci/run) a test that skips for want of root
#                    while running as root fails instead: see
#                    skip_needs_root in tests/test_helper/common.bash
set -u

# Files whose tests share machine-wide state and so never run beside each
# other: memory cgroups and real OOM kills (the kernel's oom_kill counter
# and /dev/kmsg are the machine's; a monitor beside another file's kill
# would report it), the kernel.task_delayacct sysctl, the proc connector
# (trust-churn's thousands of processes a second and events' storms flood
# every listener's socket: rm-tree-exact's short compilers lost their
# command lines beside them), and the kernel's settings under /proc/sys
# (kernel.ns_last_pid, which rm-tree-exact's and rm-tree-sampled's PID-reuse
# tests write, gives the next fork on the machine a chosen PID: another
# file's processes then took PIDs forced for it; tests/suite.bats checks
# that every file writing there is listed).
# They run one after another, in one bats process, beside the others.
SERIAL_FILES=(cgroup rm-monitor rm-run rm-run-memwatch rm-tree rm-tree-exact rm-tree-sampled scope resource-monitor monitor-pid1 emulation oom-answer monitor-docker trust-churn events containers)

# make check VALGRIND=1 runs the bats files below, not all: the files whose
# tests feed a command its input and check its output, where memcheck's
# slowness (10 to 30 times) changes nothing the test looks at.  Elsewhere
# the commands race sleeps, watch PIDs that end before valgrind has
# started, time ticks or read their own /proc entries, which under valgrind
# are valgrind's.  RM_VALGRIND_FILES=all runs every file (RM_VALGRIND_FILES
# may also name files).
VALGRIND_FILES=(cli rm-summarize rm-summarize-trace rm-summarize-containers runinfo series rm-gpu usage-json completion manpages recipes plot browser install)

err() { printf 'run.sh: %s\n' "$*" >&2; }

tmp=""

# is_serial FILE: FILE is one of SERIAL_FILES.
is_serial() {
  local base=${1##*/} s
  base=${base%.bats}
  for s in "${SERIAL_FILES[@]}"; do
    [[ "${base}" == "${s}" ]] && return 0
  done
  return 1
}

# run_group NAME JOBS FILTER FILE...: bats over FILEs into $tmp/NAME.tap,
# JOBS files at a time; under the suite timeout.  A bats that exits non-zero
# with no failed test of its own (a syntax error, a killed test) gets one.
run_group() {
  local name=$1 jobs=$2 filter=$3 rc=0 out
  shift 3
  out="${tmp}/${name}.tap"
  local args=(--tap --filter-tags "${filter}")
  [[ "${RM_TIMING:-}" == 1 ]] && args+=(--timing)
  if ((jobs > 1)); then
    args+=(--jobs "${jobs}" --no-parallelize-within-files)
  fi
  timeout --kill-after=30 "${RM_SUITE_TIMEOUT}" bats "${args[@]}" "$@" >"${out}" 2>&1 </dev/null &
  local bats_pid=$!
  watch_group "${name}" "${bats_pid}" >/dev/null 2>&1 &
  wait "${bats_pid}" || rc=$?
  if ((rc == 124 || rc == 137)); then
    {
      echo "not ok - watchdog: the ${name} bats files ran past ${RM_SUITE_TIMEOUT} s and were killed; still running then:"
      sed 's/^/# /' "${tmp}/${name}.ps" 2>/dev/null
    } >>"${out}"
  elif ((rc != 0)) && ! grep -qE '^not ok' "${out}"; then
    echo "not ok - bats exited ${rc} on the ${name} files ($*) with no failed test" >>"${out}"
  fi
}

# units_for NAME: the unit tests (t_M binaries in the build) of the lib
# modules the command of NAME links, one a line.  The modules are read
# from the objects' symbols: the command's own undefined symbols, then
# those of every lib object they pull in, as the linker does.  t_M tests
# lib/M.c; a unit test named after no module (t_parsers, t_regress) tests
# the modules whose functions its source (and what it includes: the fuzz
# targets in t_regress) calls.
units_for() {
  local name=$1 cmd='' p o t
  local -a objs
  p=${name}
  while [[ -n "${p}" ]]; do
    if [[ -f "src/${p}.c" || -d "src/${p}" ]]; then
      cmd=${p}
      break
    fi
    [[ "${p}" == *-* ]] || break
    p=${p%-*}
  done
  [[ -n "${cmd}" ]] || return 0
  if [[ -d "src/${cmd}" ]]; then
    objs=("${build}/src/${cmd}"/*.o)
  else
    objs=("${build}/src/${cmd}.o")
  fi
  {
    for o in "${build}"/lib/*.o; do
      p=${o##*/}
      nm --defined-only "${o}" | awk -v m="${p%.o}" '$2 ~ /^[TDRB]$/ { print "D", m, $3 }'
      nm -u "${o}" | awk -v m="${p%.o}" '$1 == "U" { print "U", m, $2 }'
    done
    nm -u "${objs[@]}" | awk '$1 == "U" { print "U @cmd", $2 }'
    for t in "${build}"/tests/t_*; do
      [[ -x "${t}" ]] || continue
      p=${t##*/t_}
      if [[ -f "lib/${p}.c" ]]; then
        echo "M t_${p} ${p}"
      elif [[ -f "tests/unit/t_${p}.c" ]]; then
        # One that includes a source of the command's own (t_comps) is its.
        grep -q "^#include \"\.\./\.\./src/${cmd}/" "tests/unit/t_${p}.c" && echo "M t_${p} @cmd"
        # Its source and the sources it includes (t_regress: the fuzz targets').
        local -a srcs=("tests/unit/t_${p}.c")
        while IFS= read -r o; do
          srcs+=("tests/unit/${o}")
        done < <(sed -n 's/^#include "\(\.\.\/[^"]*\)"/\1/p' "tests/unit/t_${p}.c")
        grep -oh 'rm_[A-Za-z0-9_]*' "${srcs[@]}" | sort -u | sed "s/^/S t_${p} /"
      fi
    done
  } | awk '
    $1 == "D" { def[$3] = $2 }
    $1 == "U" { need[$2] = need[$2] " " $3 }
    $1 == "M" { unit[$2] = unit[$2] " " $3 }
    $1 == "S" { sym[$2] = sym[$2] " " $3 }
    END {
      linked["@cmd"] = 1
      do {
        more = 0
        for (m in linked) {
          n = split(need[m], s, " ")
          for (i = 1; i <= n; i++)
            if ((s[i] in def) && !(def[s[i]] in linked)) { linked[def[s[i]]] = 1; more = 1 }
        }
      } while (more)
      for (u in sym) {
        n = split(sym[u], s, " ")
        for (i = 1; i <= n; i++)
          if (s[i] in def) unit[u] = unit[u] " " def[s[i]]
      }
      for (u in unit) {
        n = split(unit[u], s, " ")
        for (i = 1; i <= n; i++)
          if (s[i] in linked) { print u; break }
      }
    }' | sort
}

# watch_group NAME PID: while bats PID runs, keep a list of its processes,
# for the diagnostic when the suite timeout kills it.
watch_group() {
  local name=$1 pid=$2
  while kill -0 "${pid}" 2>/dev/null; do
    ps -eo pid=,ppid=,etimes=,args= 2>/dev/null | awk -v root="${pid}" '
      { ppid[$1] = $2; line[$1] = $0; order[NR] = $1 }
      END {
        print "  PID  PPID  SECS COMMAND"
        for (i = 1; i <= NR; i++) {
          p = order[i]
          for (q = p; q in ppid && q != root && q > 1; q = ppid[q]) {}
          if (q == root) print line[p]
        }
      }' >"${tmp}/${name}.ps.new" &&
      mv -f "${tmp}/${name}.ps.new" "${tmp}/${name}.ps"
    sleep 5
  done
}

# bats_files FILTER FILE...: runs the bats files, serial ones beside the
# parallel ones, and prints their TAP output, the serial group's first.
bats_files() {
  local filter=$1 jobs=${RM_JOBS} f pids=()
  shift
  local serial=() par=()
  for f in "$@"; do
    if is_serial "${f}"; then serial+=("${f}"); else par+=("${f}"); fi
  done
  if ((jobs > 1)) && ! command -v parallel >/dev/null 2>&1; then
    echo "# GNU parallel is not installed (Debian: parallel): the bats files run one after another"
    jobs=1
  fi
  if ((jobs <= 1)); then
    run_group all 1 "${filter}" "$@"
    cat "${tmp}/all.tap"
    return
  fi
  if ((${#serial[@]} > 0)); then
    run_group serial 1 "${filter}" "${serial[@]}" &
    pids+=("$!")
  fi
  if ((${#par[@]} > 0)); then
    run_group parallel "$((jobs > 1 && ${#serial[@]} > 0 ? jobs - 1 : jobs))" "${filter}" "${par[@]}" &
    pids+=("$!")
  fi
  wait "${pids[@]}"
  [[ -f "${tmp}/serial.tap" ]] && cat "${tmp}/serial.tap"
  [[ -f "${tmp}/parallel.tap" ]] && cat "${tmp}/parallel.tap"
}

# vg_reports DIR: the valgrind reports the stand-ins left in DIR, each
# as comment lines (its first 60), at most 5 of them, for the end of the
# log: a memcheck error fails its test with exit 99 and nothing else.
vg_reports() {
  local f n=0
  for f in "$1"/vg.*.log; do
    [[ -s "${f}" ]] || continue
    n=$((n + 1))
    ((n <= 5)) || continue
    echo "# valgrind report ${n} (${f##*/}):"
    head -n 60 -- "${f}" | sed 's/^/#   /'
  done
  ((n == 0)) || echo "# ${n} valgrind report(s) in all"
}

main() {
  local top build passed=0 failed=0 skipped=0 t urc long=0 filter='!slow' files=() whole=1
  local fors=() units=()
  top=$(cd "$(dirname "$0")/.." && pwd)
  build=${RM_BUILD:-build/std}
  build=${build#"${top}"/}
  cd "${top}" || exit 1
  while (($# > 0)); do
    case $1 in
      --long) long=1 filter=slow ;;
      --for)
        if [[ -z "${2:-}" || ! -f "${top}/tests/${2%.bats}.bats" ]]; then
          err "--for '${2:-}': no tests/${2:-NAME}.bats (the names: $(cd "${top}/tests" && printf '%s ' *.bats | sed 's/\.bats//g; s/ $//'))"
          exit 2
        fi
        fors+=("${2%.bats}") files+=("tests/${2%.bats}.bats") whole=0
        shift
        ;;
      --units)
        units_for "${2:-}"
        exit 0
        ;;
      -*) err "unknown option '$1' (usage: bash tests/run.sh [--long] [--for NAME]... [--units NAME] [FILE.bats...])"; exit 2 ;;
      *) files+=("$1") whole=0 ;;
    esac
    shift
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "${tmp}"' EXIT

  local ncpu
  ncpu=$(nproc 2>/dev/null || echo 1)
  : "${RM_JOBS:=$((2 * ncpu))}"
  : "${RM_SUITE_TIMEOUT:=3600}"
  if [[ -z "${RM_TEST_TIMEOUT:-}" ]]; then
    RM_TEST_TIMEOUT=$((long ? 900 : 300))
    [[ "${VALGRIND:-}" == 1 ]] && RM_TEST_TIMEOUT=$((RM_TEST_TIMEOUT * 3))
  fi
  # The watchdog in tests/test_helper/common.bash kills a test that runs
  # longer (not bats' BATS_TEST_TIMEOUT, which a test's bare `wait` waits
  # for); a test it had to kill itself is listed in RM_WATCHDOG_LOG.
  export RM_TEST_TIMEOUT RM_WATCHDOG_LOG="${tmp}/watchdog.log"
  export RM_TOP="${top}" RM_BUILD="${top}/${build}"
  export PATH="${top}/bin:${PATH}"
  if [[ "${VALGRIND:-}" == 1 ]]; then
    bash tests/valgrind-wrap.sh "${top}/${build}/valgrind-bin" || exit 1
    export PATH="${top}/${build}/valgrind-bin:${PATH}"
    # Each command's report, if any, printed after the tests (the stand-ins
    # write it there, not to the test's stderr).
    mkdir -p "${tmp}/vg" && export RM_VG_LOGDIR="${tmp}/vg"
  fi
  if ((${#files[@]} == 0)); then
    files=(tests/*.bats)
    if [[ "${VALGRIND:-}" == 1 && "${RM_VALGRIND_FILES:-}" != all ]]; then
      local v
      files=()
      for v in ${RM_VALGRIND_FILES:-${VALGRIND_FILES[*]}}; do
        v=${v##*/}
        [[ -f "tests/${v%.bats}.bats" ]] && files+=("tests/${v%.bats}.bats")
      done
      echo "# VALGRIND=1: ${#files[@]} of the bats files (tests/run.sh VALGRIND_FILES; RM_VALGRIND_FILES=all for every one)"
    fi
  fi

  if ((long == 0 && whole)); then
    for t in "${build}"/tests/t_*; do
      [[ -x "${t}" ]] && units+=("${t}")
    done
  elif ((long == 0)); then
    local f u
    for f in "${fors[@]}"; do
      while IFS= read -r u; do
        units+=("${build}/tests/${u}")
      done < <(units_for "${f}")
    done
    mapfile -t units < <(printf '%s\n' "${units[@]}" | sort -u | sed '/^$/d')
  fi

  {
    if ((${#units[@]} > 0)); then
      for t in "${units[@]}"; do
        echo "# unit: ${t##*/}"
        urc=0
        timeout --kill-after=10 "${RM_TEST_TIMEOUT}" "${t}" 2>&1 || urc=$?
        ((urc != 124 && urc != 137)) ||
          echo "not ok - watchdog: unit test ${t##*/} ran past ${RM_TEST_TIMEOUT} s and was killed"
      done
    fi
    if command -v bats >/dev/null 2>&1; then
      bats_files "${filter}" "${files[@]}"
      [[ -f "${RM_WATCHDOG_LOG}" ]] && sed -n 's/^KILLED /not ok - watchdog killed /p' "${RM_WATCHDOG_LOG}"
    else
      echo "not ok - bats is not installed"
    fi
    if ((long == 0 && whole)); then
      if command -v shellcheck >/dev/null 2>&1; then
        local f out
        while IFS= read -r f; do
          if out=$(shellcheck -x "${f}" 2>&1); then
            echo "ok - shellcheck ${f}"
          else
            echo "not ok - shellcheck ${f}"
            printf '%s\n' "${out}" | sed 's/^/# /'
          fi
        done < <(grep -rlE '^#!.*(ba)?sh|^# shellcheck shell=' scripts docs/*.sh tests/*.sh tests/tools tests/test_helper .ci 2>/dev/null | sort)
      else
        echo "not ok - shellcheck is not installed"
      fi
    fi
  } </dev/null 2>&1 | tee "${tmp}/log"

  [[ -n "${RM_VG_LOGDIR:-}" ]] && vg_reports "${RM_VG_LOGDIR}"
  passed=$(grep -cE '^ok ' "${tmp}/log")
  failed=$(grep -cE '^not ok' "${tmp}/log")
  skipped=$(grep -cE '^ok .*# skip' "${tmp}/log")
  passed=$((passed - skipped))
  # The failures again, each with the first lines of its diagnostics, just
  # above the count: a log cut to its tail (CI's) still names them.
  if ((failed > 0)); then
    echo "# the failed tests again:"
    awk '/^not ok/ { n = 0; keep = 1; print; next }
         /^(ok|not ok) / { keep = 0 }
         keep && /^#/ && n < 8 { print; n++; next }
         !/^#/ { keep = 0 }' "${tmp}/log"
  fi
  echo "${passed} passed, ${failed} failed, ${skipped} skipped"
  ((failed == 0 && passed > 0))
}

main "$@"
