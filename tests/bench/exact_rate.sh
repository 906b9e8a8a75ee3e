#!/usr/bin/env bash
# Bench section: rm-tree's exact mode against the build's fork rate.
#
# A build of short processes: two paced posix_spawn generators
# (spawner.c) of a static no-op (spawn_tiny.c) under one launcher, which
# rm-tree follows as rm-monitor runs it (-i 1 --elsewhere --exclude-tree,
# a PID selection).  Beside it, outside the build, a third generator at
# XR_FOREIGN per second (default 200) makes PIDs come round to other
# processes while the build's are logged (pid_max is often 32768).
#
# Every process of the build is logged by the generators with its PID and
# /proc/PID/stat starttime; every row of rm-tree's exit log is checked
# against that log by (pid, start): a row is the build's only if a
# process of that PID started at that start (the row's start_s is
# starttime / CLK_TCK less one offset, the stream's boot time at its t0,
# the same for every row).  Reported per rate: achieved processes per
# second (both generators), rm-tree's CPU from /proc/PID/schedstat
# (nanoseconds) from the generators' start until every row is in, per
# process, and net of rm-tree's idle cost over the same time; its core
# share; rows missing, rows foreign, events lost.
#
# XR_RATES (total asked per second, both generators; default
# "500 2000 8000"), XR_SECONDS (default 20), XR_REPS (default 3, the
# median), XR_RMTREE (an rm-tree binary; default the build's).
# A quick look: XR_SECONDS=5 XR_REPS=1 bash tests/bench/exact_rate.sh
set -u

RATES=${XR_RATES:-500 2000 8000}
SECS=${XR_SECONDS:-20}
REPS=${XR_REPS:-3}
FOREIGN=${XR_FOREIGN:-200}
RMTREE=${XR_RMTREE:-${RM_BUILD}/bin/rm-tree}
work=''
pids=()

err() { printf 'bench/exact_rate: %s\n' "$*" >&2; }

cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null
  done
  if [[ -n "${work}" && -z "${XR_KEEP:-}" ]]; then
    rm -rf -- "${work}"
  fi
}

# schedstat_ns PID: the CPU time of PID's threads so far, in ns.
schedstat_ns() {
  local t s=0 v
  for t in /proc/"$1"/task/*/schedstat; do
    read -r v _ <"$t" 2>/dev/null || continue
    s=$((s + v))
  done
  printf '%s' "$s"
}

# one_run RATE N: prints "spawned wall_s cpu_ns idle_ns_per_s missing
# foreign lost rows load".
one_run() {
  local rate=$1 k=$2 d="${work}/r${1}.${2}" tp lp fp c0 c1 ci0 ci1 t0 t1 w0 w1 rows prev spawned wall stats lost i
  mkdir -p "$d"
  "${work}/spawner" "$d/go" "$((rate / 2))" "${SECS}" "$d/gen.log" "${work}/tiny" &
  lp=$!
  pids+=("$lp")
  "${work}/spawner" "$d/fgo" "$((FOREIGN / 2))" "${SECS}" "$d/foreign.log" "${work}/tiny" &
  fp=$!
  pids+=("$fp")
  # As rm-monitor starts it: --exclude-tree its own PID (here rm-tree's).
  sh -c 'exec "$1" -i 1 --elsewhere --exclude-tree $$ --stats "$2" --log "$3" "$4"' \
    sh "${RMTREE}" "$d/stats.csv" "$d/log.csv" "$lp" 2>"$d/err" &
  tp=$!
  pids+=("$tp")
  # Its start-up scan done (the stats file is written on the first tick),
  # then 3 s idle: its idle cost per second.
  until [[ -s "$d/stats.csv" ]]; do sleep 0.1; done
  sleep 1
  ci0=$(schedstat_ns "$tp"); w0=$(date +%s%N)
  sleep 3
  ci1=$(schedstat_ns "$tp"); w1=$(date +%s%N)
  c0=$(schedstat_ns "$tp"); t0=$(date +%s%N)
  : >"$d/fgo.end"
  : >"$d/fgo"
  : >"$d/go"
  wait "$fp"
  # The launcher holds on until go.end: its generators' end.
  until [[ -s "$d/gen.log.0" && -s "$d/gen.log.1" ]] && grep -q '^done' "$d/gen.log.0" &&
    grep -q '^done' "$d/gen.log.1"; do
    sleep 0.2
  done
  # Every row in: the log stops growing for 2 ticks.
  prev=-1
  while rows=$(wc -l <"$d/log.csv") && ((rows != prev)); do
    prev=$rows
    sleep 2.2
  done
  c1=$(schedstat_ns "$tp"); t1=$(date +%s%N)
  [[ -z "${XR_KEEP:-}" ]] || err "schedstat idle ${ci0} ${ci1} run ${c0} ${c1}"
  : >"$d/go.end"
  wait "$lp"
  # The launcher's own row: rm-tree ends by itself once it is gone (a
  # TERM at once could come before its record was read).
  for ((i = 0; i < 100; i++)); do
    kill -0 "$tp" 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM "$tp" 2>/dev/null
  wait "$tp" 2>/dev/null
  cat "$d"/gen.log.* >>"$d/gen.log"
  spawned=$(awk '$1 == "done" { n += $2; if ($3 > w) w = $3 } END { print n + 0 }' "$d/gen.log")
  wall=$(awk '$1 == "done" { if ($3 > w) w = $3 } END { printf "%.3f", w / 1e9 }' "$d/gen.log")
  stats=$(tail -n 1 "$d/stats.csv")
  lost=$(cut -d, -f2 <<<"$stats")
  # missing: build processes without a row; foreign: build rows that
  # are no build process (by pid and start), or a build process twice.
  awk -v hz="$(getconf CLK_TCK)" '
    FNR == NR { if ($1 != "done") { key[$2 " " $3] = 1; n++; bypid[$2] = bypid[$2] " " $3 } next }
    FNR == 1 { FS = ","; $0 = $0; for (i = 1; i <= NF; i++) col[$i] = i; next }
    # --elsewhere rows (scope out) are the heavy processes of the host,
    # never the build: only the build rows (scope in) are checked.
    $col["scope"] != "in" { next }
    {
      pid = $col["pid"]; st = $col["start_s"]
      # The offset (the boot time of the stream at its t0) is the same for
      # every row: the most common one over the starts logged for the pid of each row.
      rows[++nr] = pid " " st
      line[nr] = $0
    }
    END {
      # The offset: the one that matches the most rows.  A start read from
      # stat gives it exactly, one from the fork event up to a tick above
      # it; where most starts are fork events (a process gone before the
      # pump that read its fork) the most common value alone may fall
      # anywhere in the tick, so each candidate (to the ms) counts the
      # rows it would match, within the window below.
      for (i = 1; i <= nr; i++) {
        split(rows[i], a, " ")
        m = split(bypid[a[1]], s, " ")
        for (j = 1; j <= m; j++) cand[sprintf("%.3f", a[2] - s[j] / hz)]++
      }
      for (o in cand) {
        c = 0
        # keys are strings to the ms: a number would print with 6 digits
        for (q = -(1000 / hz + 5); q <= 2; q++) { k = sprintf("%.3f", o - q / 1000); if (k in cand) c += cand[k] }
        if (c > best || (c == best && o + 0 < off)) { best = c; off = o + 0 }
      }
      for (i = 1; i <= nr; i++) {
        split(rows[i], a, " ")
        m = split(bypid[a[1]], s, " ")
        hit = 0
        for (j = 1; j <= m && !hit; j++) {
          # A start read from stat is the tick itself; one taken from the
          # fork event (the process was gone before its stat was read)
          # lies within the tick that starttime truncates.
          d = a[2] - off - s[j] / hz
          k = a[1] " " s[j]
          if (d > -0.002 && d < 1 / hz + 0.005 && !(k in seen)) { seen[k] = 1; hit = 1 }
        }
        if (hit) got++; else { foreign++; print "foreign row: " line[i] > "/dev/stderr" }
      }
      for (k in key) if (!(k in seen) && ++shown <= 5) print "missing: " k > "/dev/stderr"
      printf "%d %d %d\n", n - got, foreign + 0, nr
    }' "$d/gen.log" "$d/log.csv" >"$d/check"
  read -r missing foreign rows <"$d/check"
  printf '%s %s %s %s %s %s %s %s %s\n' "$spawned" "$wall" "$((c1 - c0))" \
    "$(((ci1 - ci0) * 1000000000 / (w1 - w0)))" "$missing" "$foreign" "${lost:-?}" "$rows" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  : "$t0" "$t1"
  [[ -n "${XR_KEEP:-}" ]] || rm -rf -- "$d"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

main() {
  local rate k r spawned wall cpu idle missing foreign lost rows load us net share out=()
  work=$(mktemp -d)
  trap cleanup EXIT
  cc -O2 -o "${work}/spawner" "${RM_TOP}/tests/bench/spawner.c" || return 1
  cc -O2 -static -nostdlib -o "${work}/tiny" "${RM_TOP}/tests/bench/spawn_tiny.c" || return 1
  if [[ "$("${RMTREE}" --exec --log /dev/null -- true 2>&1)" != *"exact mode"* ]]; then
    echo "## rm-tree: exact mode against the fork rate"
    echo
    echo "Not run: rm-tree is not in exact mode here (root, or CAP_NET_ADMIN)."
    return 0
  fi
  echo "## rm-tree: exact mode against the fork rate (two paced posix_spawn generators)"
  echo
  echo "rm-tree -i 1 --elsewhere --exclude-tree following a launcher of two generators of a"
  echo "static no-op, ${SECS} s a run, median of ${REPS}; ${FOREIGN}/s more outside the build"
  echo "(PIDs come round: pid_max $(cat /proc/sys/kernel/pid_max)).  CPU from /proc/PID/schedstat, from the"
  echo "generators' start until every row is in; net: less rm-tree's idle cost over the same time."
  echo "Every exit-log row is checked against the generators' log by (pid, starttime)."
  echo
  echo "| asked/s | achieved/s | processes | rm-tree µs/process | net of idle | core share | rows missing | foreign rows | events lost | load (1 min) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for rate in ${RATES}; do
    : >"${work}/runs"
    for ((k = 0; k < REPS; k++)); do
      one_run "$rate" "$k" >>"${work}/runs" || return 1
    done
    # The run of median CPU per process, whole.
    r=$(awk '{ printf "%.3f %s\n", $3 / 1000 / ($1 ? $1 : 1), $0 }' "${work}/runs" | sort -n |
      awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }')
    read -r us spawned wall cpu idle missing foreign lost rows load <<<"$r"
    net=$(awk -v c="$cpu" -v i="$idle" -v w="$wall" -v n="$spawned" 'BEGIN { printf "%.1f", (c - i * (w + 4.4)) / 1000 / (n ? n : 1) }')
    share=$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.2f", c / 1e9 / w }')
    printf '| %s | %.0f | %s | %.1f | %s | %s | %s | %s | %s | %s |\n' "$rate" \
      "$(awk -v n="$spawned" -v w="$wall" 'BEGIN { print n / w }')" "$spawned" "$us" "$net" "$share" \
      "$(awk '{ s += $5 } END { print s }' "${work}/runs")" \
      "$(awk '{ s += $6 } END { print s }' "${work}/runs")" \
      "$(awk '{ s += $7 } END { print s }' "${work}/runs")" "$load"
    out+=("$rate")
  done
  echo
  echo "Rows missing, foreign rows and events lost are summed over the ${REPS} runs of a rate."
  echo "Target: at most 40 µs of rm-tree CPU per short process at 500/s and at the highest rate reached,"
  echo "with no row missing or foreign and no event lost."
  : "${out[@]}"
}

main "$@"
