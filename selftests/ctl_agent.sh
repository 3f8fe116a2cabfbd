#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# onepipe-agent between the module and a stand-in for onepiped: 3 hosts
# on one ToR, net.onepipe.controlled=1, no real controller.  The
# stand-in (python, below) listens on a socket under .build/, logs every
# message the agent sends and sends what the script tells it to.
#
# - HELLO carries the node name and the host id the module reports;
# - FAIL from the daemon is applied by the module (onepipe fail show) and
#   its DONE comes back; the same FAIL again is harmless and answered
#   again;
# - FAILs the module refuses (its own host, a timestamp above 48 bits,
#   epoch 0, another timestamp for a failed host) are logged with the
#   kernel's extack message and change nothing;
# - reliable messages to a host whose link is down (h3) that run out of
#   retries reach the daemon as UNREACH {host 3};
# - the host's uplink falling silent (tor1 stopped for longer than the
#   commit timeout) reaches the daemon as LINK_DOWN {peer tor1, ts}, its
#   return as LINK_UP;
# - when the daemon goes away the agent reconnects with HELLO, and a
#   LINK_DOWN that happened meanwhile is sent after it;
# - SIGTERM ends the agent cleanly.
source "$(dirname "$0")/lib.sh"

AGENT=${AGENT:-$TOP/userspace/controller/onepipe-agent}
# Not under the repository: in the test VM it is a 9p mount, where a
# socket cannot be bound (ENXIO).
SOCK=$WORK/onepiped.sock
# The fabric's beat (lib.sh defaults): commit timeout = 2 ms * 100 * 10.
COMMIT_TIMEOUT_MS=2000

tap_plan "fabric up 3 hosts 1 tor" "host show: controlled" \
	"HELLO with the host id" "FAIL applied (fail show)" "DONE comes back" \
	"same FAIL again: DONE again" "own host refused" \
	"ts above 48 bits refused" "epoch 0 refused" \
	"other timestamp refused (EEXIST)" "refusals changed nothing" \
	"UNREACH relayed" "silent uplink: LINK_DOWN with ts" "uplink back: LINK_UP" \
	"daemon gone: HELLO again on reconnect" \
	"LINK_DOWN while disconnected sent after HELLO" \
	"SIGTERM: clean exit"

need_module
need_tools "$FABRIC" "$ONEPIPE" "$AGENT" "$TRAFFIC"
command -v python3 >/dev/null || tap_abort "no python3"

fabric_up --hosts 3 --tors 1 ||
	tap_abort "fabric up failed"
tap_pass "fabric up 3 hosts 1 tor"
ip netns exec op-h1 sysctl -qw net.onepipe.controlled=1 ||
	tap_abort "cannot set net.onepipe.controlled"
out=$("$ONEPIPE" -n op-h1 -j host show 2>&1)
tap_check "host show: controlled" "$out" grep -q '"controlled":true' <<<"$out"

# ------------------------------------------------------- the stand-in

cat >"$WORK/fake_onepiped.py" <<'PY'
import os, selectors, socket, struct, sys

FMT = "=IHHIIIIQ32s32s960s"
LEN = struct.calcsize(FMT)
MAGIC, VERSION = 0x4F504331, 1
NAMES = ["?", "hello", "link-down", "link-up", "unreach", "fail", "state",
         "done", "resume", "show", "show-reply"]
FAIL, STATE, F_HAS_TS = 5, 6, 1
path, ctl = sys.argv[1], sys.argv[2]
sel = selectors.DefaultSelector()
srv = conn = None


def log(s):
    print(s, flush=True)


def msg(typ, epoch=0, host=0, ts=0):
    return struct.pack(FMT, MAGIC, VERSION, typ, 0, epoch, host, 0, ts,
                       b"ctl", b"", b"")


def listen():
    global srv
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(4)
    sel.register(srv, selectors.EVENT_READ, "srv")
    log("listening")


def drop():
    global conn
    if conn:
        sel.unregister(conn)
        conn.close()
        conn = None
        log("dropped")


listen()
fifo = os.open(ctl, os.O_RDWR)
sel.register(fifo, selectors.EVENT_READ, "ctl")
buf = b""
while True:
    for key, _ in sel.select():
        if key.data == "srv":
            c, _ = srv.accept()
            drop()
            conn = c
            sel.register(conn, selectors.EVENT_READ, "conn")
            log("connected")
        elif key.data == "conn":
            m = conn.recv(4096)
            if not m:
                log("closed")
                drop()
                continue
            if len(m) != LEN:
                log("bad length %d" % len(m))
                continue
            f = struct.unpack(FMT, m)
            typ = f[2]
            node = f[8].rstrip(b"\0").decode()
            peer = f[9].rstrip(b"\0").decode()
            log("rx %s node=%s peer=%s epoch=%d host=%d has_ts=%d ts=%d" %
                (NAMES[typ] if typ < len(NAMES) else typ, node, peer,
                 f[4], f[5], f[3] & F_HAS_TS, f[7]))
            if typ == 1:
                conn.send(msg(STATE, epoch=0))
        else:
            buf += os.read(fifo, 4096)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                w = line.decode().split()
                if not w:
                    continue
                if w[0] == "fail" and conn:
                    conn.send(msg(FAIL, epoch=int(w[1]), host=int(w[2]),
                                  ts=int(w[3])))
                    log("sent fail %s %s %s" % (w[1], w[2], w[3]))
                elif w[0] == "drop":
                    drop()
                elif w[0] == "down":
                    drop()
                    sel.unregister(srv)
                    srv.close()
                    os.unlink(path)
                    log("down")
                elif w[0] == "up":
                    listen()
                elif w[0] == "quit":
                    sys.exit(0)
PY

mkfifo "$WORK/ctl"
# The logs are kept under the repository (a 9p mount in the VM), which
# takes no FIFO or socket.
ctl_agent_cleanup() { rm -f "$WORK/ctl" "$SOCK"; }
SCENARIO_CLEANUP=ctl_agent_cleanup
python3 "$WORK/fake_onepiped.py" "$SOCK" "$WORK/ctl" >"$WORK/daemon.log" \
	2>&1 &
_pids+=("$!")
exec 7<>"$WORK/ctl"
say() { echo "$*" >&7; }

# wait_for SEC FILE PATTERN [N]: until FILE has N (default 1) lines
# matching the extended regex PATTERN.
wait_for()
{
	local end=$((SECONDS + $1)) n=${4:-1}
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(grep -cE -- "$3" "$2" 2>/dev/null)" -ge "$n" ] && return 0
		sleep 0.2
	done
	diag "no \"$3\" (x$n) in $(basename "$2") after $1 s:" \
		"$(tail -n 8 "$2")"
	return 1
}
wait_for 30 "$WORK/daemon.log" '^listening' || tap_abort "stand-in down"

ip netns exec op-h1 "$AGENT" --node h1 --uplink tor1 --socket "$SOCK" -v \
	>"$WORK/agent.log" 2>&1 &
agent_pid=$!
_pids+=("$agent_pid")

tap_check "HELLO with the host id" "see above" wait_for 30 \
	"$WORK/daemon.log" '^rx hello node=h1 peer= epoch=0 host=1 '

# ------------------------------------------------------------ FAIL/DONE

fail_ts=$(( ($(date +%s%N) - 1000000000) & ((1 << 48) - 1) ))
say "fail 1 2 $fail_ts"
listed()
{
	local out
	out=$("$ONEPIPE" -n op-h1 fail show -j 2>&1)
	grep -q "{\"host\":2,\"epoch\":1,\"ts\":$fail_ts,\"pending\":" \
		<<<"$out" && return 0
	diag "fail show: $out"
	return 1
}
wait_for 30 "$WORK/agent.log" 'FAIL epoch 1 host 2' >/dev/null
tap_check "FAIL applied (fail show)" "not listed" listed
tap_check "DONE comes back" "no DONE" wait_for 30 "$WORK/daemon.log" \
	'^rx done node=h1 peer= epoch=1 host=2 '
say "fail 1 2 $fail_ts"
tap_check "same FAIL again: DONE again" "no second DONE" wait_for 30 \
	"$WORK/daemon.log" '^rx done node=h1 peer= epoch=1 host=2 ' 2

# refused FAIL EPOCH HOST TS: the agent logs the refusal with the
# module's extack message (every refusal below has one)
refused()
{
	local n
	n=$(grep -c "refused: .*: " "$WORK/agent.log")
	say "fail $1 $2 $3"
	wait_for 30 "$WORK/agent.log" \
		"FAIL epoch $1 host $2 ts $3 refused: .+: " >/dev/null ||
		return 1
	[ "$(grep -c "refused: .*: " "$WORK/agent.log")" -gt "$n" ]
}
tap_check "own host refused" "not refused" refused 2 1 5
tap_check "ts above 48 bits refused" "not refused" refused 2 2 $((1 << 50))
tap_check "epoch 0 refused" "not refused" refused 0 2 5
tap_check "other timestamp refused (EEXIST)" "not refused" \
	refused 2 2 $((fail_ts + 1))
grep -E 'refused' "$WORK/agent.log" | sed 's/^/# agent: /'
unchanged()
{
	local out
	out=$("$ONEPIPE" -n op-h1 fail show -j 2>&1)
	[ "$(grep -o '"host":' <<<"$out" | wc -l)" -eq 1 ] &&
		grep -q "\"ts\":$fail_ts," <<<"$out" && return 0
	diag "fail show: $out"
	return 1
}
tap_check "refusals changed nothing" "see above" unchanged

# ------------------------------------------------------------- UNREACH

# A small retry budget, so that h1 gives up on h3 within a second.
ip netns exec op-h1 sysctl -qw net.onepipe.rdm_rto_min_ms=50 \
	net.onepipe.rdm_retries=4 || diag "cannot shrink the retry budget"
out=$(timeout $((60 * OP_SLOW)) "$FABRIC" link-down h3 2>&1) || diag "link-down h3: $out"
traffic_start h1 7001 "$WORK/unreach.log" 20 --type rdm --peers 3:7001 \
	--scatterings 5 --linger-ms 5000 --quiet
traffic_go
tap_check "UNREACH relayed" "no UNREACH" wait_for 60 "$WORK/daemon.log" \
	'^rx unreach node=h1 peer= epoch=0 host=3 '
traffic_wait >/dev/null
out=$(timeout $((60 * OP_SLOW)) "$FABRIC" link-up h3 2>&1) || diag "link-up h3: $out"

# ------------------------------------------------------------ the link

tor_pid=$(cat "${ONEPIPE_FABRIC_RUN:-/run/onepipe-fabric}/tor1.pid" \
	2>/dev/null)
[[ $tor_pid =~ ^[0-9]+$ ]] || tap_abort "no pid for tor1"
# silence SEC: stop tor1 (every link of it falls silent) for SEC seconds
silence()
{
	kill -STOP "$tor_pid"
	sleep "$1"
	kill -CONT "$tor_pid"
}
silence $((COMMIT_TIMEOUT_MS * 3 / 1000))
tap_check "silent uplink: LINK_DOWN with ts" "no LINK_DOWN" wait_for 30 \
	"$WORK/daemon.log" \
	'^rx link-down node=h1 peer=tor1 epoch=0 host=0 has_ts=1 ts=[1-9]'
tap_check "uplink back: LINK_UP" "no LINK_UP" wait_for 30 \
	"$WORK/daemon.log" '^rx link-up node=h1 peer=tor1 '

# The daemon goes away; the link falls silent meanwhile and comes back
# only after the daemon (the last state the agent saw is sent: down, as
# long as tor1 is stopped).
say down
wait_for 30 "$WORK/daemon.log" '^down' >/dev/null
kill -STOP "$tor_pid"
wait_for 30 "$WORK/agent.log" 'uplink tor1 silent, last commit' 2 >/dev/null
say up
ok1=0
wait_for 30 "$WORK/daemon.log" '^rx hello node=h1 peer= epoch=0 host=1 ' 2 ||
	ok1=1
ok2=1
if wait_for 30 "$WORK/daemon.log" '^rx link-down node=h1 peer=tor1 ' 2; then
	# HELLO, then the link's state, in that order
	tail -n +"$(grep -n '^listening' "$WORK/daemon.log" | tail -n 1 |
		cut -d: -f1)" "$WORK/daemon.log" | grep '^rx' | head -n 2 |
		tr '\n' ' ' | grep -qE '^rx hello .*rx link-down .*has_ts=1' &&
		ok2=0
fi
kill -CONT "$tor_pid"
tap_check "daemon gone: HELLO again on reconnect" "no second HELLO" \
	[ $ok1 -eq 0 ]
tap_check "LINK_DOWN while disconnected sent after HELLO" "see daemon log" \
	[ $ok2 -eq 0 ]
wait_for 30 "$WORK/daemon.log" '^rx link-up node=h1 peer=tor1 ' 2 >/dev/null

kill -TERM "$agent_pid"
rc=0
for _ in $(seq 50); do
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$agent_pid" 2>/dev/null; then
	rc=timeout
else
	wait "$agent_pid"
	rc=$?
fi
tap_check "SIGTERM: clean exit" "exit status $rc" [ "$rc" = 0 ]
say quit
diag "daemon log:" "$(cat "$WORK/daemon.log")"
