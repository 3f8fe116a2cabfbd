#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Controller forwarding (the paper's §5.2), end to end: 3 hosts on one
# ToR with the failure controller (onepiped, one agent per host).  Every
# host sends SOCK_RDM scatterings to the two others.  2 s in, the network
# starts losing every reliable DATA packet from h1 to h2 (a tc filter on
# h2's wire: one flow broken, everything else alive, so nobody's links
# fall silent and the controller has no failure to decide).  4 s later
# the filter goes.
#
# Without forwarding, h1 would get no ACK from h2 for 4 s, and its
# commit barrier, which every reliable delivery in the fabric waits for,
# would stall that long.  With it, h1 runs out of retries (a small
# budget here), reports h2 unreachable, and hands its packets for h2 to
# the controller, which carries them to h2's agent; h2's ACKs come back
# both ways.  Checked:
#
# - the module refuses relayed packets it must not take, with an extack
#   message: garbage, best effort, one for another host, one from
#   itself, a beacon (EINVAL), a packet shorter than a header (the
#   attribute policy's ERANGE); an unprivileged caller (EPERM);
# - the filter dropped h1's packets; messages h1 stamped while it held
#   were delivered at h2 before it went (nothing else could carry them);
# - h1 and h2 count relayed packets, and so does the controller;
# - nobody was declared failed; every message is delivered exactly once,
#   in one order (op-check --reliable --expect-all);
# - once the network carries h1's packets again, h1 stops relaying (new
#   data ends it: when a timeout in the traffic's last moments started it
#   again, after 50 more messages from h1 to h2).
# The delivery stall at h3 (a bystander) during the cut is printed.
source "$(dirname "$0")/lib.sh"

GENL=$TOP/selftests/op_genl.py
SCATS=${OP_SCATS:-450}
SEND_INTERVAL_US=20000
CUT_AFTER_MS=2000
CUT_MS=4000
PORT=7101
# A 1Pipe header behind IPv4 (no options) and UDP: its type, flags and
# source host (kernel/core/wire.h).
HDR_OFF=28

tap_plan "fabric up 3 hosts 1 tor with the controller" \
	"relay garbage: EINVAL" "relay shorter than a header: ERANGE" \
	"relay best effort: EINVAL" "relay for another host: EINVAL" \
	"relay from this host: EINVAL" "relay a beacon: EINVAL" \
	"relay unprivileged: EPERM" \
	"h1->h2 reliable data cut during the traffic" "traffic ran" \
	"the cut dropped h1's packets" \
	"h1's messages stamped during the cut reached h2 through the controller" \
	"h1 and h2 counted relayed packets" "the controller relayed" \
	"nobody failed" "op-check --reliable --expect-all" \
	"h1 stopped relaying once the network carried its packets"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
command -v tc >/dev/null || tap_skip_all "no tc (iproute2)"

fabric_up --hosts 3 --tors 1 --controller ||
	tap_abort "fabric up with the controller failed"
tap_pass "fabric up 3 hosts 1 tor with the controller"
# Out of retries soon after the cut: 20 ms floor, 2 retries.
hosts_sysctl net.onepipe.rdm_retries=2 net.onepipe.rdm_rto_min_ms=20 ||
	tap_abort "cannot set the retry budget"

# ----------------------------------------------------- refused packets

# relay_refused NAME ERRNO ARGS...: op_genl.py relay ARGS in h2 answers
# ERRNO with an extack message (EPERM comes from genetlink, without one).
relay_refused()
{
	local name=$1 want=$2 out
	shift 2
	out=$(ip netns exec op-h2 python3 "$GENL" relay "$@" 2>&1)
	if [[ "$out" == "errno $want "?* ]] ||
		{ [ "$want" = 1 ] && [[ "$out" == "errno 1"* ]]; }; then
		tap_pass "$name" "${out#errno "$want" }"
	else
		tap_fail "$name" "got: $out"
	fi
}
relay_refused "relay garbage: EINVAL" 22 \
	--raw "$(head -c 60 /dev/urandom | od -An -tx1 | tr -d ' \n' |
		sed 's/^../ff/')"
relay_refused "relay shorter than a header: ERANGE" 34 --short
relay_refused "relay best effort: EINVAL" 22 --src 1 --dst 2 --flags 0
relay_refused "relay for another host: EINVAL" 22 --src 1 --dst 3
relay_refused "relay from this host: EINVAL" 22 --src 2 --dst 2
relay_refused "relay a beacon: EINVAL" 22 --src 1 --dst 2 --type 2
out=$(ip netns exec op-h2 setpriv --reuid=65534 --regid=65534 \
	--clear-groups --inh-caps=-all --bounding-set=-all \
	python3 "$GENL" relay --src 1 --dst 2 2>&1)
if [[ "$out" == "errno 1"* ]]; then
	tap_pass "relay unprivileged: EPERM"
else
	tap_fail "relay unprivileged: EPERM" "got: $out"
fi

# ------------------------------------------------------------- traffic

logs=()
for h in 1 2 3; do
	peers=$(for o in 1 2 3; do
		[ "$o" = "$h" ] || printf '%s:%s,' "$o" "$PORT"
	done)
	logs+=("$WORK/h$h.log")
	traffic_start "h$h" "$PORT" "$WORK/h$h.log" 180 --type rdm \
		--size 100 --peers "${peers%,}" --fanout 2 \
		--scatterings "$SCATS" --interval-us "$SEND_INTERVAL_US" \
		--linger-ms 6000 --seed "$PORT" --quiet
done
traffic_go
start=$(round_start_ns)
sleep_until $((start + CUT_AFTER_MS * 1000000))
# Reliable DATA (type 1, flags bit 0x04) from host 1, as h2 receives it.
cut_on=$(now_ns)
if ip netns exec op-h2 tc qdisc add dev up0 ingress &&
	ip netns exec op-h2 tc filter add dev up0 parent ffff: protocol ip \
		u32 match u32 0x00010400 0x00ff0400 at "$HDR_OFF" \
		match u32 1 0xffffffff at $((HDR_OFF + 4)) action drop; then
	tap_pass "h1->h2 reliable data cut during the traffic"
else
	tap_fail "h1->h2 reliable data cut during the traffic"
fi
step "cut"
sleep_until $((cut_on + CUT_MS * 1000000))
dropped=$(ip netns exec op-h2 tc -s filter show dev up0 parent ffff: |
	sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -n 1)
ip netns exec op-h2 tc qdisc del dev up0 ingress
cut_off=$(now_ns)
step "healed"
snapshot "$WORK/heal.snap" hosts
traffic_wait
check_traffic_ran "traffic ran" "${logs[@]}"
if [ "${dropped:-0}" -gt 0 ]; then
	tap_pass "the cut dropped h1's packets" "$dropped packets"
else
	tap_fail "the cut dropped h1's packets" "filter stats: ${dropped:-none}"
fi

# Messages from h1 stamped at least 50 ms into the cut (their every copy
# went out after the filter was in) and received at h2 before it went.
# Receive time: ts + latency, both on the wall clock (48-bit ts).  And
# the longest gap between deliveries at h3 during the cut, with the
# longest before it.
read -r via ngap_us base_us < <(python3 - "$WORK" "$cut_on" "$cut_off" \
	"$start" <<'PY'
import sys
work, cut_on, cut_off, start = sys.argv[1], *map(int, sys.argv[2:5])
M = 1 << 48


def wall(ts, ref):
    d = (ts - ref) % M
    return ref + (d - M if d >= M // 2 else d)


def recv(host):
    out = []
    for ln in open("%s/h%d.log" % (work, host)):
        f = ln.split()
        if f and f[0] == "R":
            ts = wall(int(f[1]), cut_on)
            out.append((ts, ts + int(f[6]), int(f[2].split(":")[0])))
    return out


via = sum(1 for ts, rx, src in recv(2)
          if src == 1 and ts >= cut_on + 50_000_000 and rx < cut_off)
times = sorted(rx for ts, rx, src in recv(3))


def gap(lo, hi):
    t = [x for x in times if lo <= x <= hi]
    return max((b - a for a, b in zip(t, t[1:])), default=0) // 1000


print(via, gap(cut_on, cut_off), gap(start + 500_000_000, cut_on))
PY
)
step "relayed deliveries $via, stall at h3 ${ngap_us} us (before: ${base_us} us)"
if [ "${via:-0}" -gt 0 ]; then
	tap_pass "h1's messages stamped during the cut reached h2 through the controller" \
		"$via messages; longest delivery gap at h3 during the cut ${ngap_us} us, before it ${base_us} us"
else
	tap_fail "h1's messages stamped during the cut reached h2 through the controller" \
		"none (longest delivery gap at h3 during the cut ${ngap_us:-?} us)"
fi

out=$(snap "$WORK/heal.snap" h1 relay_out)
in=$(snap "$WORK/heal.snap" h2 relay_in)
if [ "${out:-0}" -gt 0 ] && [ "${in:-0}" -gt 0 ]; then
	tap_pass "h1 and h2 counted relayed packets" \
		"h1 relay_out $out, h2 relay_in $in"
else
	host_diag
	tap_fail "h1 and h2 counted relayed packets" \
		"h1 relay_out ${out:-?}, h2 relay_in ${in:-?}"
fi

timeout $((30 * OP_SLOW)) "$FABRIC" ctl show -j >"$WORK/ctl.json" 2>&1
read -r nrel nfail ndec < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["controller"]
k = c["counters"]
print(k.get("relayed", 0), len(c["failures"]), k["decisions"])
' "$WORK/ctl.json" 2>/dev/null || echo "? ? ?")
if [ "$nrel" != "?" ] && [ "$nrel" -gt 0 ]; then
	tap_pass "the controller relayed" "$nrel packets"
else
	diag "$(head -c 800 "$WORK/ctl.json")"
	tap_fail "the controller relayed" "relayed: $nrel"
fi
if [ "$nfail" = 0 ] && [ "$ndec" = 0 ]; then
	tap_pass "nobody failed"
else
	tap_fail "nobody failed" "failures $nfail, decisions $ndec"
fi
run_check "op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"

# h1's relay flag towards h2 (0 or 1).
relay_to_h2()
{
	ip netns exec op-h1 "$ONEPIPE" -j peer show 2>/dev/null |
		python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("host") == 2:
        print(p.get("relay", "?"))
' 2>/dev/null
}
relay=$(relay_to_h2)
if [ "$relay" = 1 ]; then
	# Only new data whose ACK the network carries ends relaying, and a
	# guest stall in the traffic's last moments (2 retries of 20 ms)
	# can start it again after h1's last message.  Some new data, then.
	step "h1 still relays to h2 after the traffic: 50 more messages"
	traffic_start h2 $((PORT + 1)) "$WORK/more-h2.log" 60 --type rdm \
		--size 100 --linger-ms 3000 --quiet
	traffic_start h1 $((PORT + 1)) "$WORK/more-h1.log" 60 --type rdm \
		--size 100 --peers "2:$((PORT + 1))" --scatterings 50 \
		--interval-us "$SEND_INTERVAL_US" --linger-ms 3000 --quiet
	traffic_go
	traffic_wait
	relay=$(relay_to_h2)
fi
if [ "$relay" = 0 ]; then
	tap_pass "h1 stopped relaying once the network carried its packets"
else
	diag "$(ip netns exec op-h1 "$ONEPIPE" peer show 2>&1)"
	tap_fail "h1 stopped relaying once the network carried its packets" \
		"relay towards h2: ${relay:-?}"
fi
