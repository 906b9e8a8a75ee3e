#!/usr/bin/env python3
"""wrapper-writes.py SCRIPT...: every place a shell wrapper may create, open,
truncate, write, chmod, chown or link a name in a shared directory: each
redirection, and each chmod, chown, ln, cp, tee, truncate, install, touch
and mkfifo, from shfmt's syntax tree (shfmt --to-json), whose target is not
one of the allowed: /dev/null, a descriptor (&N, &-, /dev/fd/N), a file of
/proc (the kernel's, of this process), or a name under one of the script's
private directories: a variable assigned $(mktemp -d ...) (0700, ours).
Prints SCRIPT:LINE: TEXT for each; exit 1 when there is any.
"""
import json
import re
import subprocess
import sys

TOOLS = {"chmod", "chown", "ln", "cp", "tee", "truncate", "install", "touch", "mkfifo"}


def nodes(n):
    if isinstance(n, dict):
        yield n
        for v in n.values():
            yield from nodes(v)
    elif isinstance(n, list):
        for v in n:
            yield from nodes(v)


def text(src, n):
    return src[n["Pos"]["Offset"]:n["End"]["Offset"]]


def private_vars(src, tree):
    out = set()
    for n in nodes(tree):
        if "Name" in n and isinstance(n.get("Name"), dict) and "Value" in n and n.get("Value"):
            if re.search(r"\$\(\s*mktemp\s+-d\b", text(src, n["Value"])):
                out.add(n["Name"]["Value"])
    return out


def allowed(word, priv):
    w = word.strip('"')
    if w == "/dev/null":
        return True
    if re.fullmatch(r"/dev/(fd/[0-9]+|stdout|stderr)", w) or w.startswith("/proc/"):
        return True
    m = re.match(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/", w)
    return bool(m and m.group(1) in priv)


def check(path):
    src = open(path, encoding="utf-8").read()
    raw = src.encode()
    tree = json.loads(subprocess.run(["shfmt", "--to-json"], input=raw, capture_output=True,
                                     check=True).stdout)
    # shfmt's offsets are bytes.
    src = raw.decode("latin-1")
    priv = private_vars(src, tree)
    bad = []
    for n in nodes(tree):
        if "OpPos" in n and isinstance(n.get("Word"), dict):
            op = src[n["OpPos"]["Offset"]:n["Word"]["Pos"]["Offset"]].strip()
            if op.startswith("<<"):
                continue  # a here-document or here-string: no file
            word = text(src, n["Word"])
            if word.startswith(("<(", ">(")):
                continue  # a process substitution: a pipe, no file
            # >&N, <&N, N>&-: descriptors.
            if op.endswith("&") and not op.startswith("&"):
                if re.fullmatch(r"-|[0-9]+-?|\"?\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\"?-?", word):
                    continue
            if not allowed(word, priv):
                bad.append((n["Pos"]["Line"], op + word))
        if "Args" in n and isinstance(n.get("Args"), list) and n["Args"]:
            cmd = text(src, n["Args"][0])
            if cmd in TOOLS:
                for a in n["Args"][1:]:
                    w = text(src, a)
                    if w.startswith("-") or w in ("--",) or re.fullmatch(r"[0-7]{3,4}|[ugoa]*[-+=][rwxXst]*", w):
                        continue
                    if not allowed(w, priv):
                        bad.append((n["Args"][0]["Pos"]["Line"], cmd + " " + w))
    for line, what in sorted(set(bad)):
        print(f"{path}:{line}: {what}")
    return not bad


if __name__ == "__main__":
    ok = all([check(p) for p in sys.argv[1:]])
    sys.exit(0 if ok else 1)
