#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Flow control of the reliable service (SOCK_RDM): a receiver that stops
# reading.  net.onepipe.rdm_window = 8 on every host; 4 hosts behind 2
# ToRs, all processes SOCK_RDM:
#
#   h4:1001  the slow receiver: a small receive buffer, stops reading 1 s
#            after the start for 5 s (op-traffic --recv-pause-ms), and
#            keeps sending small scatterings to h1-h3 meanwhile
#   hN:1001  (N = 1..3) "blockers": scatterings of 2 to any process,
#            the slow receiver's host included
#   hN:1002  (N = 1..4) "flows": scatterings of 2 to processes on h1-h3
#   h1:1003  two huge scatterings, sent 1 s and 1.5 s into the pause: 8
#            messages each (rdm_window, the most a scattering may hold),
#            one to every process on 1001/1002, the slow one included;
#            at least one of them must wait for window
#
# Once the slow receiver's buffer and its hosts' windows are full, the
# blockers' sockets stop being writable (EAGAIN / no POLLOUT) and the
# sending hosts count window stalls, while the flows go on being
# delivered; the paused process's own scatterings are delivered too.
# After the resume everything, the huge scatterings included, is
# delivered exactly once and in order (op-check --reliable --expect-all).
source "$(dirname "$0")/lib.sh"

WINDOW=8			# = the huge scatterings' size
PAUSE_AT_MS=1000
PAUSE_MS=${OP_RDM_PAUSE_MS:-5000}
# Not scaled by OP_SLOW_NET: the pause and the window must see a steady
# stream of messages to the paused receiver (about 57 per host).
INTERVAL_US=${OP_SEND_INTERVAL_US:-25000}
SEND_MS=8000
SCATS=${OP_SCATS:-$((SEND_MS * 1000 / INTERVAL_US))}
BIG_DELAY_MS=$((PAUSE_AT_MS + 1000))
BIG_SCATS=2
DIAG_KEYS+=" window_stalls window_probes retransmits rx_rdm_msgs recalls"

tap_plan "fabric up 4 hosts 2 tors" "SOCK_RDM sysctls set" \
	"9 op-traffic processes ran" "every message was sent" \
	"h4:1001 stopped reading for the pause" \
	"senders to it were blocked" "window stalls on the sending hosts" \
	"small scatterings flowed while senders were blocked" \
	"the paused receiver kept sending" \
	"a huge scattering waited for window" \
	"the huge scatterings reached all 8 receivers" \
	"no send failures" "op-check --reliable --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

# A generous retry budget: a full window is not a dead receiver.
hosts_sysctl net.onepipe.rdm_window=$WINDOW net.onepipe.rdm_retries=15 ||
	tap_abort "cannot set the SOCK_RDM sysctls"
tap_pass "SOCK_RDM sysctls set" "rdm_window $WINDOW"

all=()		# every process on ports 1001/1002
flow_dst=()	# the processes on h1..h3
for h in 1 2 3 4; do
	for p in 1001 1002; do
		all+=("$h:$p")
		[ "$h" = 4 ] || flow_dst+=("$h:$p")
	done
done

common=(--type rdm --size 100 --interval-us "$INTERVAL_US"
	--linger-ms 6000 --seed 11 --quiet)
logs=()
# start_proc EP ARGS...
start_proc()
{
	local h=${1%:*} p=${1#*:} log
	shift
	log=$WORK/h$h-$p.log
	logs+=("$log")
	traffic_start "h$h" "$p" "$log" 180 "${common[@]}" "$@"
}

snapshot "$WORK/before" hosts
start_proc 4:1001 --peers "$(peers_except 4:1001 "${flow_dst[@]}")" \
	--scatterings "$SCATS" --fanout 2 --rcvbuf 4096 \
	--recv-pause-ms "$PAUSE_AT_MS:$PAUSE_MS"
start_proc 4:1002 --peers "$(peers_except 4:1002 "${flow_dst[@]}")" \
	--scatterings "$SCATS" --fanout 2
blockers=()
flows=("$WORK/h4-1001.log" "$WORK/h4-1002.log")
for h in 1 2 3; do
	start_proc "$h:1001" --peers "$(peers_except "$h:1001" "${all[@]}")" \
		--scatterings "$SCATS" --fanout 2
	blockers+=("$WORK/h$h-1001.log")
	start_proc "$h:1002" \
		--peers "$(peers_except "$h:1002" "${flow_dst[@]}")" \
		--scatterings "$SCATS" --fanout 2
	flows+=("$WORK/h$h-1002.log")
done
big_peers=$(peers_except none "${all[@]}")
start_proc 1:1003 --peers "$big_peers" --scatterings "$BIG_SCATS" \
	--fanout "$WINDOW" --delay-ms "$BIG_DELAY_MS" --interval-us 500000
traffic_go
start_ns=$(round_start_ns)
check_traffic_ran "9 op-traffic processes ran"
snapshot "$WORK/after" hosts

want=$(((5 + 3) * SCATS * 2 + BIG_SCATS * WINDOW))
check_all_sent "every message was sent" "$want" "${logs[@]}"

slow=$WORK/h4-1001.log
t0=$(summary_field "$slow.json" recv_pause_start_ns)
t1=$(summary_field "$slow.json" recv_pause_end_ns)
if [ "${t0:-0}" -gt 0 ] && [ "${t1:-0}" -gt "$t0" ] &&
   [ $(((t1 - t0) / 1000000)) -ge $((PAUSE_MS - 10)) ]; then
	tap_pass "h4:1001 stopped reading for the pause" \
		"$(((t1 - t0) / 1000000)) ms"
else
	tap_fail "h4:1001 stopped reading for the pause" \
		"summary says ${t0:-?} .. ${t1:-?}"
	t0=0 t1=0
fi

blocked=$(summary_sum send_blocked "${blockers[@]}")
eagain=$(summary_sum eagain "${blockers[@]}")
line=
for l in "${blockers[@]}"; do
	line+=" $(basename "$l" .log): blocked $(summary_field "$l.json" \
		send_blocked) eagain $(summary_field "$l.json" eagain);"
done
diag "blockers:$line"
if [ "$blocked" -gt 0 ]; then
	tap_pass "senders to it were blocked" \
		"$blocked waits for POLLOUT, $eagain EAGAIN"
else
	tap_fail "senders to it were blocked" \
		"the blockers' sockets never stopped being writable"
fi

stalls=$(snap_delta "$WORK/before" "$WORK/after" window_stalls h1 h2 h3)
if [ "$stalls" -gt 0 ]; then
	tap_pass "window stalls on the sending hosts" "$stalls"
else
	tap_fail "window stalls on the sending hosts" \
		"window_stalls did not grow on h1-h3"
fi

# The timing checks, on 48-bit timestamps: a message's ts is when it was
# stamped, ts + latency no earlier than when it was delivered.
python3 - "$t0" "$t1" "$WORK" "$start_ns" "$BIG_DELAY_MS" \
	>"$WORK/timing.out" 2>&1 <<'PY'
import glob, os, sys

t0, t1, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start, big_delay_ms = int(sys.argv[4]), int(sys.argv[5])
M = 1 << 48


def rel(ts, ref):
    """ts - ref in ns, 48-bit wrap-around."""
    d = (ts - ref) % M
    return d - M if d >= M // 2 else d


logs = {}
for path in glob.glob(os.path.join(work, "h*.log")):
    lines = [ln.split() for ln in open(path)]
    me = "%s:%s" % tuple(lines[0][1:3])
    logs[me] = lines
ref = t0 % M
blockers = ["%d:1001" % h for h in (1, 2, 3)]
flows = ["%d:1002" % h for h in (1, 2, 3, 4)] + ["4:1001"]

# The longest time a blocker went without stamping a scattering.
gap = (0, 0, None)
for b in blockers:
    ts = [rel(int(f[1]), ref) for f in logs[b] if f[0] == "S"]
    for a, c in zip(ts, ts[1:]):
        if c - a > gap[1] - gap[0]:
            gap = (a, c, b)
print("gap %s %d %d" % (gap[2], gap[0] // 10**6, gap[1] // 10**6))
# Flow messages stamped and delivered inside that gap, per receiver.
for r in sorted(logs):
    if r.startswith("4:") or r.endswith(":1003"):
        continue
    n = 0
    for f in logs[r]:
        if f[0] == "R" and f[2] in flows:
            s = rel(int(f[1]), ref)
            if s > gap[0] and s + int(f[6]) < gap[1]:
                n += 1
    print("flow %s %d" % (r, n))
# The paused receiver's own scatterings during its pause.
end = rel(t1 % M, ref)
sent = sum(1 for f in logs["4:1001"] if f[0] == "S" and
           0 < rel(int(f[1]), ref) < end)
got = sum(1 for r in logs.values() for f in r if f[0] == "R" and
          f[2] == "4:1001" and 0 < rel(int(f[1]), ref) and
          rel(int(f[1]), ref) + int(f[6]) < end)
print("selfsend %d %d" % (sent, got))
# The huge scatterings: where each message went, if it arrived, when it
# was stamped (ms after the pause began) and how long after it was sent
# (planned: --delay-ms, then every 500 ms).
for i, f in enumerate(f for f in logs["1:1003"] if f[0] == "S"):
    dests, scat = f[3].split(","), f[2]
    got = [d for d in dests for g in logs.get(d, []) if g[0] == "R" and
           g[2] == "1:1003" and g[3] == scat]
    stamp = rel(int(f[1]), ref) // 10**6
    sent = (start + (big_delay_ms + 500 * i) * 10**6) % M
    print("big %s %d %d %d %d" % (scat, len(got), len(dests), stamp,
                                  rel(int(f[1]), sent) // 10**6))
PY
diag "$(cat "$WORK/timing.out")"

read -r _ gb g0 g1 < <(grep '^gap ' "$WORK/timing.out")
if [ "$t1" = 0 ] || [ -z "${g1:-}" ]; then
	tap_fail "small scatterings flowed while senders were blocked" \
		"no pause or no timing analysis"
elif [ $((g1 - g0)) -lt $((PAUSE_MS / 2)) ]; then
	tap_fail "small scatterings flowed while senders were blocked" \
		"no blocker was held back for half the pause (${g0}..${g1} ms)"
else
	starved=$(awk '$1 == "flow" && $3 == 0 { print $2 }' "$WORK/timing.out")
	n=$(awk '$1 == "flow" { s += $3 } END { print s + 0 }' \
		"$WORK/timing.out")
	if [ -z "$starved" ] && [ "$n" -gt 0 ]; then
		tap_pass "small scatterings flowed while senders were blocked" \
			"$n delivered while $gb was held ${g0}..${g1} ms"
	else
		why="nothing delivered to ${starved//$'\n'/ }"
		tap_fail "small scatterings flowed while senders were blocked" \
			"$why in ${g0}..${g1} ms"
	fi
fi

read -r _ ss sg < <(grep '^selfsend ' "$WORK/timing.out")
if [ "${ss:-0}" -gt 0 ] && [ "${sg:-0}" -gt 0 ]; then
	tap_pass "the paused receiver kept sending" \
		"$ss scatterings, $sg messages delivered during its pause"
else
	why="${ss:-0} scatterings sent, ${sg:-0} messages delivered"
	tap_fail "the paused receiver kept sending" "$why in the pause"
fi

waited=$(awk '$1 == "big" && $6 > w { w = $6 } END { print w + 0 }' \
	"$WORK/timing.out")
if [ "$waited" -ge 1000 ]; then
	tap_pass "a huge scattering waited for window" \
		"stamped $waited ms after it was sent"
else
	tap_fail "a huge scattering waited for window" \
		"the longest wait was $waited ms: the windows never closed"
fi

bad=$(awk '$1 == "big" && $3 != $4' "$WORK/timing.out")
nbig=$(awk '$1 == "big" { n += $4 } END { print n + 0 }' "$WORK/timing.out")
if [ -z "$bad" ] && [ "$nbig" -eq $((BIG_SCATS * WINDOW)) ]; then
	tap_pass "the huge scatterings reached all 8 receivers" \
		"$nbig messages"
else
	tap_fail "the huge scatterings reached all 8 receivers" \
		"$nbig messages logged sent; short: ${bad:-none}"
fi

check_no_failures "no send failures" "${logs[@]}"

run_check "op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"
