#!/usr/bin/python3
"""fake-engine SOCKET LOG MODE [ANSWER]: a stand-in container engine for
tests/containers.bats, on a Unix socket, one connection at a time.

Each request line is appended to LOG (URL-decoded).  MODE says how it
answers:
  list     200, chunked, the body read from the file ANSWER (a docker
           /containers/json list), with "@NOW@" replaced by the time now
  silent   reads the request, never answers (the socket stays open)
  huge     200 with a 2 MiB body
  garbage  bytes that are no HTTP answer
"""
import os
import signal
import socket
import sys
import time
import urllib.parse

sock_path, log, mode = sys.argv[1:4]
answer = sys.argv[4] if len(sys.argv) > 4 else None
try:
    os.unlink(sock_path)
except FileNotFoundError:
    pass
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
srv.listen(16)
held = []


def answer_one(c):
    if mode == "garbage":
        c.sendall(b"SSH-2.0-not-an-engine\r\n\r\n")
    elif mode == "huge":
        body = b"[" + b" " * (2 << 20) + b"]"
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    else:
        body = open(answer, "rb").read().replace(b"@NOW@", str(int(time.time())).encode())
        out = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        for i in range(0, len(body), 100):
            part = body[i:i + 100]
            out += b"%x\r\n" % len(part) + part + b"\r\n"
        c.sendall(out + b"0\r\n\r\n")


while True:
    c, _ = srv.accept()
    req = b""
    while b"\r\n\r\n" not in req:
        got = c.recv(65536)
        if not got:
            break
        req += got
    if b"\r\n\r\n" not in req:
        c.close()  # hung up before a whole request (a client that refused us)
        continue
    first = req.split(b"\r\n", 1)[0].decode("latin-1")
    with open(log, "a") as f:
        f.write(urllib.parse.unquote(first) + "\n")
    if mode == "silent":
        held.append(c)
        continue
    try:
        answer_one(c)
    except OSError:
        pass  # the client hung up: it read what it wanted, or refused it
    try:
        c.close()
    except OSError:
        pass
