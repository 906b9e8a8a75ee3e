"""The same readings as one rm-sample tick, with python3-psutil.

usage: sample_psutil.py TICKS LOGDIR; prints CPU seconds per tick of the
loop alone (interpreter start-up excluded) and the peak RSS in KiB.
"""
import glob
import os
import resource
import sys

import psutil

NAMES = {"cc1plus", "cc1", "cc1obj", "clang", "clang++", "rustc", "lto1", "ld",
         "ld.lld", "ld.gold", "mold", "lld"}


def tick(logdir):
    psutil.getloadavg()
    psutil.cpu_percent()
    psutil.virtual_memory()
    psutil.swap_memory()
    psutil.disk_usage("/")
    n = 0
    for p in psutil.process_iter(["name"]):
        if p.info["name"] in NAMES:
            n += 1
    logs = glob.glob(os.path.join(logdir, "*.log"))
    newest = max(logs, key=os.path.getmtime)
    with open(newest, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 65536))
        lines = [l for l in f.read().split(b"\n") if l.strip()]
    for res in ("memory", "io", "cpu"):
        with open("/proc/pressure/" + res) as f:
            f.read()
    with open("/proc/vmstat") as f:
        f.read()
    return n, lines[-1] if lines else b""


def main():
    ticks, logdir = int(sys.argv[1]), sys.argv[2]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(ticks):
        tick(logdir)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(cpu / ticks, r1.ru_maxrss)


main()
