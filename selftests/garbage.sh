#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed datagrams on UDP port 5640 (garbage.py: short, bad version,
# bad type and flags, impossible lengths and fragment counts, random
# bytes, datagrams far above the MTU) sent to a host's module and to the
# switches, both from the peer address they expect (spoofed through a raw
# socket, so the datagrams reach the parser) and from unknown sources.
# Each receiver must count them (rx_bad, rx_unknown_src) and drop them;
# nothing may crash or warn, and normal traffic must work afterwards.
source "$(dirname "$0")/lib.sh"

PORT=1001
PER_KIND=${OP_GARBAGE_PER_KIND:-8}
SCATS=${OP_SCATS:-40}
GARBAGE=$TOP/selftests/garbage.py

tap_plan "fabric up 4 hosts 2 tors" "garbage sent" \
	"h1 counted malformed datagrams from its uplink in rx_bad" \
	"tor1 counted malformed datagrams from h2 in rx_bad" \
	"tor1 counted datagrams from unknown sources" \
	"spine counted malformed datagrams from tor1 in rx_bad" \
	"switches still running, every port live" \
	"traffic after the garbage delivered (op-check --expect-all)" \
	"kernel log clean"

mark=$(dmesg_mark)
need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE" "$GARBAGE"
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

# Addresses (tools/fabric/fabric): host N 10.77.N.2 behind its ToR's
# 10.77.N.1; ToR T reaches the spine as 10.77.(200+T).2 -> .1.
H1=10.77.1.2 TOR1_H1=10.77.1.1 H2=10.77.2.2 TOR1_H2=10.77.2.1
TOR1_UP=10.77.201.2 SPINE_T1=10.77.201.1

snapshot "$WORK/before"
h1_bad0=$(snap "$WORK/before" h1 rx_bad)
t1_bad0=$(snap "$WORK/before" tor1 rx_bad)
t1_unk0=$(snap "$WORK/before" tor1 rx_unknown_src)
sp_bad0=$(snap "$WORK/before" spine rx_bad)

# garbage NODE ARGS...: run garbage.py in NODE, add what it sent to $sent.
garbage()
{
	local node=$1 n
	shift
	n=$(fx "$node" python3 "$GARBAGE" --count "$PER_KIND" "$@" \
		2>"$WORK/garbage.err") || {
		diag "garbage.py in $node $* failed: $(tail -n 3 "$WORK/garbage.err")"
		return 1
	}
	echo "$n"
}

ok=1
to_h1=$(garbage tor1 --to $H1 --spoof $TOR1_H1:5640 --seed 1) || ok=0
to_h1_unk=$(garbage tor1 --to $H1 --big --seed 2) || ok=0
to_t1=$(garbage h2 --to $TOR1_H2 --spoof $H2:5640 --seed 3) || ok=0
to_t1_unk=$(garbage h2 --to $TOR1_H2 --big --seed 4) || ok=0
to_sp=$(garbage tor1 --to $SPINE_T1 --spoof $TOR1_UP:5640 --seed 5) || ok=0
if [ "$ok" = 1 ]; then
	tap_pass "garbage sent" \
		"$((to_h1 + to_h1_unk + to_t1 + to_t1_unk + to_sp)) datagrams"
else
	tap_abort "garbage.py failed"
fi
sleep 2		# let the last datagrams and the stats refresh land

# delta_at_least NAME BEFORE AFTER MIN: TAP point, counter grew by >= MIN.
delta_at_least()
{
	local name=$1 before=$2 after=$3 min=$4
	if [[ "$before$after" =~ ^[0-9]+$ ]] &&
	   [ "$((after - before))" -ge "$min" ]; then
		tap_pass "$name" "+$((after - before)), sent $min"
	else
		tap_fail "$name" "from '${before}' to '${after}', sent $min"
	fi
}

snapshot "$WORK/after"
h1_bad1=$(snap "$WORK/after" h1 rx_bad)
diag "h1 rx_bad $h1_bad0 -> $h1_bad1 after $to_h1 spoofed and" \
	"$to_h1_unk unknown-source datagrams"
delta_at_least "h1 counted malformed datagrams from its uplink in rx_bad" \
	"$h1_bad0" "$h1_bad1" "$to_h1"
delta_at_least "tor1 counted malformed datagrams from h2 in rx_bad" \
	"$t1_bad0" "$(snap "$WORK/after" tor1 rx_bad)" "$to_t1"
delta_at_least "tor1 counted datagrams from unknown sources" \
	"$t1_unk0" "$(snap "$WORK/after" tor1 rx_unknown_src)" "$to_t1_unk"
delta_at_least "spine counted malformed datagrams from tor1 in rx_bad" \
	"$sp_bad0" "$(snap "$WORK/after" spine rx_bad)" "$to_sp"

bad=
for sw in tor1 tor2 spine; do
	pid=$(snap "$WORK/after" $sw pid)
	kill -0 "${pid:-0}" 2>/dev/null || bad+=" $sw:not-running"
done
for p in tor1:h1 tor1:h2 tor2:h3 tor2:h4 tor1:spine tor2:spine \
	 spine:tor1 spine:tor2; do
	st=$(snap "$WORK/after" "$p" state)
	[ "$st" = live ] || bad+=" $p:${st:-?}"
done
if [ -z "$bad" ]; then
	tap_pass "switches still running, every port live"
else
	tap_fail "switches still running, every port live" "$bad"
fi

eps=("1:$PORT" "2:$PORT" "3:$PORT" "4:$PORT")
mesh_start after 120 --scatterings "$SCATS" --fanout 3 --size 200 \
	--interval-us 10000 --linger-ms 5000 --seed 9 --quiet
traffic_go
traffic_wait
s=$(sent_msgs "${logs[@]}")
r=$(count_lines R "${logs[@]}")
timeout 120 "$CHECK" --expect-all "${logs[@]}" >"$WORK/op-check.out" 2>&1
rc=$?
if [ "$s" -eq $((SCATS * 4 * 3)) ] && [ "$r" -eq "$s" ] && [ "$rc" -eq 0 ]; then
	tap_pass "traffic after the garbage delivered (op-check --expect-all)" \
		"$r messages"
else
	diag "$(head -n 30 "$WORK/op-check.out")"
	tap_fail "traffic after the garbage delivered (op-check --expect-all)" \
		"$s of $((SCATS * 12)) messages sent, $r delivered, op-check exit $rc"
fi

bad=$(dmesg_bad_since "$mark")
if [ -z "$bad" ]; then
	tap_pass "kernel log clean"
else
	diag "$bad"
	tap_fail "kernel log clean" "$(echo "$bad" | head -n 1)"
fi
