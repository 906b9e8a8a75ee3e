#!/usr/bin/env bash
# Bench section: rm-tree snapshots against ps, python3-psutil and the
# syscall floor with 2,000 extra sleeping processes; CPU per tick and RSS
# of streaming a 500-process tree; rm-tree's RSS over 10,000 processes;
# peak accuracy of rm-tree against GNU time and a psutil sampler.
set -u

PY=/usr/bin/python3
MEMHOG="${RM_BUILD}/tests/memhog"
RUSAGE="${RM_BUILD}/bench/tree_rusage"
work=''
pgids=()

err() { printf 'bench/tree: %s\n' "$*" >&2; }

cleanup() {
  local g
  for g in "${pgids[@]}"; do
    kill -TERM -- "-${g}" 2>/dev/null
  done
  if [[ -n "${work}" ]]; then
    rm -rf -- "${work}"
  fi
}

# job_cols FILE COL...: the named columns of the job CSV's last row,
# space-separated (empty ones as "-"), read by header name: the job row
# gains columns, and its cmd may hold commas.
job_cols() {
  "${PY}" - "$@" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(" ".join((rows[-1].get(c) or "-") if rows else "-" for c in sys.argv[2:]))
PYEOF
}

# timed RUNS CMD...: median wall ms, CPU ms (user+sys) and peak RSS KiB
# of CMD alone over RUNS runs, its output discarded.  CMD is started by a
# small C runner (posix_spawn, wait4): a forked Python would lend CMD its
# own peak RSS, which the kernel keeps across execve.
timed() {
  "${PY}" - "${RUSAGE}" "$@" <<'PYEOF'
import statistics, subprocess, sys, time
runner, runs, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
wall, cpu, rss = [], [], []
for _ in range(runs):
    t0 = time.monotonic()
    out = subprocess.run([runner] + cmd, stdout=subprocess.PIPE, text=True).stdout.split()
    wall.append((time.monotonic() - t0) * 1000)
    cpu.append(float(out[0]) * 1000)
    rss.append(int(out[1]))
print(f"{statistics.median(wall):.1f} {statistics.median(cpu):.1f} {statistics.median(rss):.0f}")
PYEOF
}

# start_sleepers N: N sleeping processes in a group of their own; sets
# leader to the group's leader pid once all are up.
leader=''
start_sleepers() {
  setsid "${MEMHOG}" -N "$1" -j "$1" -t 3600 -r "${work}/up.$1" &
  local pid=$!
  pgids+=("${pid}")
  local i
  for ((i = 0; i < 1200; i++)); do
    [[ -e "${work}/up.$1" ]] && break
    sleep 0.1
  done
  # -r fires when the last one has started; give them a moment to settle.
  sleep 1
  leader=${pid}
}

snapshots() {
  local floor=$1 runs=11 n
  local psutil_ps='import psutil
for p in psutil.process_iter(["pid", "ppid", "memory_info", "name"]):
    i = p.info
    if i["memory_info"] is not None:
        print(i["pid"], i["ppid"], i["memory_info"].rss // 1024, i["name"])'
  local psutil_all='import psutil
for p in psutil.process_iter(["pid", "ppid", "name", "status", "num_threads", "memory_info", "cpu_times", "cmdline"]):
    print(p.info)'
  local a b c d e f g h
  n=$(find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null | wc -l)
  a=$(timed "${runs}" rm-tree -o pid,ppid,rss_kib,comm)
  b=$(timed "${runs}" ps -e -o pid,ppid,rss,comm)
  c=$(timed "${runs}" "${PY}" -c "${psutil_ps}")
  d=$(timed "${runs}" "${floor}" stat)
  e=$(timed "${runs}" rm-tree)
  f=$(timed "${runs}" rm-tree -o pid,ppid,comm,state,threads,rss_kib,hwm_kib,cpu_s,cmd)
  g=$(timed "${runs}" "${floor}" stat status cmdline)
  h=$(timed "${runs}" "${PY}" -c "${psutil_all}")
  echo "## rm-tree: snapshots (${n} processes, median of ${runs} runs)"
  echo
  echo "| command | wall ms | CPU ms | vs floor (wall) | vs floor (CPU) |"
  echo "|---|---:|---:|---:|---:|"
  awk -v a="${a}" -v b="${b}" -v c="${c}" -v d="${d}" -v e="${e}" -v f="${f}" -v g="${g}" -v h="${h}" 'BEGIN {
    split(a, A, " "); split(b, B, " "); split(c, C, " "); split(d, D, " ")
    split(e, E, " "); split(f, F, " "); split(g, G, " "); split(h, H, " ")
    printf "| `rm-tree -o pid,ppid,rss_kib,comm` | %.1f | %.1f | %.2fx | %.2fx |\n", A[1], A[2], A[1] / D[1], A[2] / D[2]
    printf "| `ps -e -o pid,ppid,rss,comm` | %.1f | %.1f | %.2fx | %.2fx |\n", B[1], B[2], B[1] / D[1], B[2] / D[2]
    printf "| python3-psutil `process_iter`, the ps fields | %.1f | %.1f | %.2fx | %.2fx |\n", C[1], C[2], C[1] / D[1], C[2] / D[2]
    printf "| floor: open+read `stat` | %.1f | %.1f | 1.00x | 1.00x |\n", D[1], D[2]
    printf "| `rm-tree` (default columns, cpu_pct over -w 0.1) | %.1f | %.1f | %.2fx | %.2fx |\n", E[1], E[2], E[1] / G[1], E[2] / G[2]
    printf "| `rm-tree` default columns but cpu_pct | %.1f | %.1f | %.2fx | %.2fx |\n", F[1], F[2], F[1] / G[1], F[2] / G[2]
    printf "| python3-psutil `process_iter`, the default columns | %.1f | %.1f | %.2fx | %.2fx |\n", H[1], H[2], H[1] / G[1], H[2] / G[2]
    printf "| floor: open+read `stat`, `status`, `cmdline` | %.1f | %.1f | 1.00x | 1.00x |\n", G[1], G[2]
    printf "\nps columns: rm-tree / floor = %.2f wall, %.2f CPU (target <= 1.3); ps / rm-tree = %.1fx, psutil / rm-tree = %.1fx wall (target >= 3).\n", A[1] / D[1], A[2] / D[2], B[1] / A[1], C[1] / A[1]
    printf "Default columns: rm-tree / floor = %.2f CPU, %.2f wall without the cpu_pct window (target <= 1.3); with cpu_pct the wall time holds the 100 ms window.\n", E[2] / G[2], F[1] / G[1]
  }'
}

streaming() {
  local tree_pid=$1 ticks=50 r
  r=$(timed 3 rm-tree -i 0.1 -n "${ticks}" --log /dev/null "${tree_pid}")
  echo
  echo "## rm-tree: streaming a 501-process tree (-i 0.1, ${ticks} ticks, median of 3 runs)"
  echo
  awk -v r="${r}" -v t="${ticks}" 'BEGIN { split(r, R, " ")
    printf "CPU per tick %.2f ms; peak RSS %.2f MiB (target < 8).\n", R[2] / t, R[3] / 1024 }'
}

churn() {
  local d="${work}/churn" r procs rows
  mkdir -p "${d}"
  r=$(timed 1 rm-tree --exec -i 0.1 --log "${d}/log.csv" --job "${d}/job.csv" -- \
    "${MEMHOG}" -N 10000 -j 500 -t 0.2)
  procs=$(job_cols "${d}/job.csv" procs)
  rows=$(($(wc -l <"${d}/log.csv") - 1))
  echo
  awk -v r="${r}" -v p="${procs}" -v n="${rows}" 'BEGIN { split(r, R, " ")
    printf "10,000 processes in one --exec run (500 at a time, %.0f s): %d followed, %d exit-log rows; peak RSS of rm-tree and its reaped children (memhogs of about 1.5 MiB) %.2f MiB.\n", R[1] / 1000, p, n, R[3] / 1024 }'
}

# psutil_sampler: memwatch's way, every 0.5 s: the tree's RSS sum and the
# largest process, from psutil's children(recursive=True).
psutil_sampler() {
  "${PY}" - "$@" <<'PYEOF'
import psutil, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:])
root = psutil.Process(p.pid)
tot = big = 0
while p.poll() is None:
    try:
        procs = [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        break
    rs = []
    for q in procs:
        try:
            rs.append(q.memory_info().rss // 1024)
        except psutil.Error:
            pass
    tot, big = max(tot, sum(rs)), max([big] + rs)
    time.sleep(0.5)
print(big, tot)
PYEOF
}

accuracy_row() {
  local name=$1 expect_big=$2 expect_tot=$3 iv=$4
  shift 4
  local d="${work}/acc" ours gnu ps
  mkdir -p "${d}"
  rm-tree --exec --cgroup -i "${iv}" --log /dev/null --job "${d}/job.csv" -- "$@" 2>/dev/null
  ours=$(job_cols "${d}/job.csv" max_proc_rss_kib peak_rss_kib cgroup_peak_kib)
  gnu=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)
  ps=$(psutil_sampler "$@")
  awk -v n="${name}" -v eb="${expect_big}" -v et="${expect_tot}" -v o="${ours}" -v g="${gnu}" -v p="${ps}" 'BEGIN {
    split(o, O, " "); split(p, P, " ")
    printf "| %s | %d | %d (%.0f%%) | %d (%.0f%%) | %d (%.0f%%) | %d | %s | %d (%.0f%%) |\n", n, eb,
      O[1], 100 * O[1] / eb, g, 100 * g / eb, P[1], 100 * P[1] / eb,
      et, O[3] == "-" ? "n/a" : sprintf("%d (%.0f%%) / sampled %d", O[3], 100 * O[3] / et, O[2]),
      P[2], 100 * P[2] / et }'
}

accuracy() {
  "${MEMHOG}" -m 300 # warm the huge pages
  echo
  echo "## rm-tree: peak accuracy (KiB; percent of the expected peak)"
  echo
  echo "| workload | largest process, expected | rm-tree (wait4) | GNU time %M | psutil every 0.5 s | tree total, expected | rm-tree --cgroup / sampled | psutil every 0.5 s |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  accuracy_row "256 MiB held 2 s" 262144 262144 0.5 "${MEMHOG}" -m 256 -t 2
  accuracy_row "300 MiB spike, 50 ms (-i 1)" 307200 307200 1 sh -c "sleep 0.1; '${MEMHOG}' -s 300 -S 0.05; sleep 1.2"
  accuracy_row "64+128+192 MiB children, 2 s" 196608 393216 0.5 "${MEMHOG}" -c 64,128,192 -t 2
  accuracy_row "double-forked 100 MiB, 1 s" 102400 102400 0.5 "${MEMHOG}" -g -m 100 -t 1
  echo
  echo "Expected values leave out each process's own baseline (about 1.2 MiB)."
}

main() {
  local floor
  trap cleanup EXIT
  work=$(mktemp -d)
  floor="${RM_BUILD}/bench/tree_floor"
  if ! cc -O2 -o "${floor}" tests/bench/tree_floor.c; then
    err "cannot build the floor"
    return 1
  fi
  # The runner of the sample section, built under a name of our own.
  if ! cc -O2 -o "${RUSAGE}" tests/bench/rusage.c; then
    err "cannot build the runner"
    return 1
  fi
  if [[ ! -x /usr/bin/time ]]; then
    err "GNU time is missing (apt-get install time)"
    return 1
  fi
  start_sleepers 2000
  snapshots "${floor}"
  kill -TERM -- "-${leader}" 2>/dev/null
  start_sleepers 500
  streaming "${leader}"
  kill -TERM -- "-${leader}" 2>/dev/null
  churn
  accuracy
}

main "$@"
