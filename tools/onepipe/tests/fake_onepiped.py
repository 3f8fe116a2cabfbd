#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for onepiped's CTL_SHOW answer, for tests/test_cli.sh.

Usage: fake_onepiped.py SOCKET MODE

Listens on SOCKET (AF_UNIX, SOCK_SEQPACKET, see
userspace/controller/ctl_proto.h), prints "ready" once it does, answers
one client and exits.  MODE:
  ok       the document below, in three SHOW_REPLY chunks
  close    one chunk, then the connection is closed
  badjson  a truncated document, flagged last
  garbage  a packet of the wrong length
"""
import os
import socket
import struct
import sys

FMT = "=IHHIIIIQ32s32s960s"
MAGIC, VERSION = 0x4F504331, 1
SHOW, SHOW_REPLY = 9, 10
F_LAST = 0x2

DOC = (b'{"epoch":1,"phase":"idle","nodes":[{"name":"h1","state":"correct"},'
       b'{"name":"h2","state":"failed"}],"failures":[{"epoch":1,"host":2,'
       b'"ts":42}]}')


def reply(text, last):
    return struct.pack(FMT, MAGIC, VERSION, SHOW_REPLY, F_LAST if last else 0,
                       0, len(text), 0, 0, b"", b"", text)


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)
    print("ready", flush=True)
    conn, _ = srv.accept()
    req = conn.recv(2048)
    if len(req) != struct.calcsize(FMT):
        sys.exit("bad request length %d" % len(req))
    magic, version, typ = struct.unpack(FMT, req)[:3]
    if (magic, version, typ) != (MAGIC, VERSION, SHOW):
        sys.exit("not a SHOW")
    if mode == "ok":
        third = len(DOC) // 3
        parts = [DOC[:third], DOC[third:2 * third], DOC[2 * third:]]
        for i, part in enumerate(parts):
            conn.send(reply(part, i == len(parts) - 1))
    elif mode == "close":
        conn.send(reply(DOC[:10], False))
    elif mode == "badjson":
        conn.send(reply(DOC[:-1], True))
    elif mode == "garbage":
        conn.send(b"x" * 10)
    conn.close()
    srv.close()
    os.unlink(path)


if __name__ == "__main__":
    main()
