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
#
# On the verbs transport (OP_TRANSPORT=verbs) nothing listens on UDP
# 5640: the same malformed 1Pipe payloads travel in valid RoCEv2 UD SEND
# frames (garbage.py --roce), written with AF_PACKET sockets onto the
# fabric's wires.  Into host 1 from its ToR's end of the wire: its rxe
# accepts them and onepipe.ko must count them in rx_bad (those too short
# for a 1Pipe header in the verbs counter rx_drops), while copies with a
# wrong ICRC or a wrong Q_Key must be dropped by rxe and not reach
# onepipe.ko at all.  Into tor1 from host 2's wire and into the spine from
# tor1's uplink: malformed payloads in rx_bad, and frames that are no
# RoCEv2 UD SEND at all in the port's rx_other.
source "$(dirname "$0")/lib.sh"

PORT=1001
PER_KIND=${OP_GARBAGE_PER_KIND:-8}
SCATS=${OP_SCATS:-40}
GARBAGE=$TOP/selftests/garbage.py

# The verbs points (names used twice: declared here, reported below).
V_H1_BAD="h1 counted malformed payloads of valid RoCE frames in rx_bad"
V_H1_SHORT="h1 dropped RoCE payloads shorter than a 1Pipe header (rx_drops)"
V_ARRIVED="frames with a wrong ICRC or Q_Key reached opv1"
V_QKEY="rxe counted the frames with a wrong Q_Key (qkey_viol_cntr)"
V_H1_KEYS="h1 rx_bad did not count frames with a wrong ICRC or Q_Key"
V_T1_BAD="tor1 counted malformed payloads of RoCE frames from h2 in rx_bad"
V_T1_OTHER="tor1 counted frames from h2 that are no RoCE UD SEND (rx_other)"
V_SP_BAD="spine counted malformed payloads of RoCE frames from tor1 (rx_bad)"
V_SP_OTHER="spine counted frames from tor1 that are no RoCE UD SEND (rx_other)"

if [ "$OP_TRANSPORT" = verbs ]; then
	tap_plan "fabric up 4 hosts 2 tors" "garbage sent" \
		"$V_H1_BAD" "$V_H1_SHORT" "$V_ARRIVED" "$V_QKEY" "$V_H1_KEYS" \
		"$V_T1_BAD" "$V_T1_OTHER" "$V_SP_BAD" "$V_SP_OTHER" \
		"switches still running, every port live" \
		"traffic after the garbage delivered (op-check --expect-all)" \
		"kernel log clean"
else
	tap_plan "fabric up 4 hosts 2 tors" "garbage sent" \
		"h1 counted malformed datagrams from its uplink in rx_bad" \
		"tor1 counted malformed datagrams from h2 in rx_bad" \
		"tor1 counted datagrams from unknown sources" \
		"spine counted malformed datagrams from tor1 in rx_bad" \
		"switches still running, every port live" \
		"traffic after the garbage delivered (op-check --expect-all)" \
		"kernel log clean"
fi

mark=$(dmesg_mark)
need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE" "$GARBAGE"
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

# ---------------------------------------------------------------- verbs

# Host 1's wire is opv1 in init_net, MAC 02:77:00:00:01:02, 10.77.1.2;
# its ToR's end is h1 in op-tor1 (MAC ...:01:01), speaking for the
# virtual 10.77.1.1 (tools/fabric/README.md, "Verbs transport").
OPV1_MAC=02:77:00:00:01:02 TOR1_H2_MAC=02:77:00:00:02:01

# kv NAME LINE: the value of NAME=N in a line of garbage.py --roce.
kv()
{
	tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

# run_garbage NODE ARGS...: garbage.py ARGS in fabric node NODE, or in
# init_net for NODE "-" (--roce enters the namespaces its targets name);
# prints what garbage.py prints.  Called in $(...): diagnostics to stderr.
run_garbage()
{
	local node=$1 out
	shift
	local cmd=(python3 "$GARBAGE" --count "$PER_KIND" "$@")
	[ "$node" = - ] || cmd=(fx "$node" "${cmd[@]}")
	if out=$("${cmd[@]}" 2>"$WORK/garbage.err"); then
		echo "$out"
		return 0
	fi
	diag "garbage.py in $node $* failed:" \
		"$(tail -n 3 "$WORK/garbage.err")" >&2
	return 1
}

# qkey_viol DEV: the Q_Key violations rxe counted on DEV's port 1.
qkey_viol()
{
	local v
	v=$(ibv_devinfo -v -d "$1" -i 1 2>/dev/null |
		awk '$1 == "qkey_viol_cntr:" { print $2 }')
	[[ "$v" =~ ^0x[0-9a-fA-F]+$ ]] && echo $((v))
}

# numbers ARG...: every ARG is a decimal number.
numbers()
{
	local v
	for v in "$@"; do
		[[ "$v" =~ ^[0-9]+$ ]] || return 1
	done
}

# grew NAME BEFORE AFTER OP WANT: TAP point, the counter grew by OP
# (-eq, -ge) WANT, and WANT is not 0 (something was sent).
grew()
{
	local name=$1 before=$2 after=$3 op=$4 want=$5 d=
	if numbers "$before" "$after" "$want" && [ "$want" -gt 0 ] &&
	   [ "$((after - before))" "$op" "$want" ]; then
		tap_pass "$name" "+$((after - before)), sent $want"
	else
		numbers "$before" "$after" && d=" (+$((after - before)))"
		tap_fail "$name" "from '$before' to '$after'$d, want $op $want"
	fi
}

verbs_garbage()
{
	local qpn qkey mtu h1 t1 sp qv0 qv1 good bad_i bad_q seen_i seen_q
	local n keys other
	local bad0 bad1 drops0 drops1 out to_h1 to_t1
	local b=$WORK/before a=$WORK/after

	snapshot "$b"
	qpn=$(snap "$b" h1 qpn)
	qkey=$(snap "$b" h1 qkey)
	mtu=$(snap "$b" h1 mtu)
	qv0=$(qkey_viol opr1)
	numbers "$qpn" "$qkey" "$mtu" ||
		tap_abort "h1's QPN, Q_Key or MTU: '$qpn' '$qkey' '$mtu'"
	step "counters read"

	# Into h1: from the ToR's end of its wire, addressed as the ToR's
	# beacons are (to its QP, from the uplink's 10.77.1.1: a beacon from
	# anywhere else would be dropped as foreign before the parser).
	# Into tor1: from host 2's wire (as host 2's beacons to 10.77.2.1).
	# Into the spine: from tor1's uplink (as switches address switches).
	to_h1="h1,netns=op-tor1,watch=opv1,dmac=$OPV1_MAC"
	to_h1+=",src=10.77.1.1,dst=10.77.1.2,qpn=$qpn,qkey=$qkey,max=$mtu"
	to_t1="opv2,dmac=$TOR1_H2_MAC,src=10.77.2.2,dst=10.77.2.1"
	out=$(run_garbage - --seed 1 --roce "$to_h1,bad-keys" \
		--roce "$to_t1,not-roce" \
		--roce "spine,netns=op-tor1,not-roce") ||
		tap_abort "garbage.py failed"
	h1=$(sed -n 's/^h1 //p' <<<"$out")
	t1=$(sed -n 's/^opv2 //p' <<<"$out")
	sp=$(sed -n 's/^spine //p' <<<"$out")
	[ -n "$(kv good "$h1")" ] && [ -n "$(kv good "$t1")" ] &&
		[ -n "$(kv good "$sp")" ] ||
		tap_abort "garbage.py said: $out"
	step "garbage sent"
	diag "h1: $h1" "tor1: $t1" "spine: $sp"
	n=$(($(kv good "$h1") + $(kv good "$t1") + $(kv good "$sp")))
	keys=$(($(kv bad_icrc "$h1") + $(kv bad_qkey "$h1")))
	other=$(($(kv other "$t1") + $(kv other "$sp")))
	tap_pass "garbage sent" "$n RoCE frames with malformed payloads,\
 $keys with bad keys, $other not RoCE UD SENDs"
	sleep 2		# let the last frames and the stats refresh land

	snapshot "$a"
	qv1=$(qkey_viol opr1)
	step "counters read"
	good=$(($(kv good "$h1") - $(kv short "$h1")))
	bad_i=$(kv bad_icrc "$h1") bad_q=$(kv bad_qkey "$h1")
	seen_i=$(kv seen_bad_icrc "$h1") seen_q=$(kv seen_bad_qkey "$h1")
	bad0=$(snap "$b" h1 rx_bad)
	bad1=$(snap "$a" h1 rx_bad)
	drops0=$(snap "$b" h1 rx_drops)
	drops1=$(snap "$a" h1 rx_drops)
	diag "h1 rx_bad $bad0 -> $bad1, rx_drops $drops0 -> $drops1,\
 qkey_viol_cntr $qv0 -> $qv1"

	grew "$V_H1_BAD" "$bad0" "$bad1" -ge "$good"
	grew "$V_H1_SHORT" "$drops0" "$drops1" -ge "$(kv short "$h1")"
	if numbers "$bad_i" "$bad_q" && [ "$bad_i" -gt 0 ] &&
	   [ "$seen_i" = "$bad_i" ] &&
	   [ "$bad_q" -gt 0 ] && [ "$seen_q" = "$bad_q" ]; then
		tap_pass "$V_ARRIVED" "$seen_i of $bad_i, $seen_q of $bad_q"
	else
		tap_fail "$V_ARRIVED" "wrong ICRC $seen_i of $bad_i,\
 wrong Q_Key $seen_q of $bad_q"
	fi
	if command -v ibv_devinfo >/dev/null; then
		grew "$V_QKEY" "$qv0" "$qv1" -ge "$bad_q"
	else
		tap_skip "$V_QKEY" "no ibv_devinfo (ibverbs-utils) to read it"
	fi
	# Every valid frame counted, and not one more: the frames that
	# differ from them only in the ICRC or the Q_Key, sent in between
	# on the same wire, never reached the module.
	if numbers "$bad0" "$bad1" && [ "$good" -gt 0 ] &&
	   [ "$((bad1 - bad0))" -eq "$good" ] &&
	   [ "$seen_i" = "$bad_i" ] && [ "$seen_q" = "$bad_q" ]; then
		tap_pass "$V_H1_KEYS" "+$((bad1 - bad0)) for $good valid frames"
	else
		tap_fail "$V_H1_KEYS" "rx_bad $bad0 -> $bad1 for $good valid\
 frames; $seen_i + $seen_q of $bad_i + $bad_q bad ones arrived"
	fi

	# The switches count every malformed payload in rx_bad and nothing
	# else there (the other frames are rx_other's): exactly.
	grew "$V_T1_BAD" "$(snap "$b" tor1 rx_bad)" "$(snap "$a" tor1 rx_bad)" \
		-eq "$(kv good "$t1")"
	grew "$V_T1_OTHER" "$(snap "$b" tor1:h2 rx_other)" \
		"$(snap "$a" tor1:h2 rx_other)" -ge "$(kv other "$t1")"
	grew "$V_SP_BAD" "$(snap "$b" spine rx_bad)" \
		"$(snap "$a" spine rx_bad)" -eq "$(kv good "$sp")"
	grew "$V_SP_OTHER" "$(snap "$b" spine:tor1 rx_other)" \
		"$(snap "$a" spine:tor1 rx_other)" -ge "$(kv other "$sp")"
}

# ------------------------------------------------------------------ UDP

udp_garbage()
{
	# Addresses (tools/fabric/fabric): host N 10.77.N.2 behind its ToR's
	# 10.77.N.1; ToR T reaches the spine as 10.77.(200+T).2 -> .1.
	H1=10.77.1.2 TOR1_H1=10.77.1.1 H2=10.77.2.2 TOR1_H2=10.77.2.1
	TOR1_UP=10.77.201.2 SPINE_T1=10.77.201.1

	snapshot "$WORK/before"
	h1_bad0=$(snap "$WORK/before" h1 rx_bad)
	t1_bad0=$(snap "$WORK/before" tor1 rx_bad)
	t1_unk0=$(snap "$WORK/before" tor1 rx_unknown_src)
	sp_bad0=$(snap "$WORK/before" spine rx_bad)

	local ok=1
	to_h1=$(run_garbage tor1 --to $H1 --spoof $TOR1_H1:5640 --seed 1) ||
		ok=0
	to_h1_unk=$(run_garbage tor1 --to $H1 --big --seed 2) || ok=0
	to_t1=$(run_garbage h2 --to $TOR1_H2 --spoof $H2:5640 --seed 3) ||
		ok=0
	to_t1_unk=$(run_garbage h2 --to $TOR1_H2 --big --seed 4) || ok=0
	to_sp=$(run_garbage tor1 --to $SPINE_T1 --spoof $TOR1_UP:5640 \
		--seed 5) || ok=0
	if [ "$ok" = 1 ]; then
		tap_pass "garbage sent" \
			"$((to_h1 + to_h1_unk + to_t1 + to_t1_unk + to_sp))\
 datagrams"
	else
		tap_abort "garbage.py failed"
	fi
	sleep 2	# let the last datagrams and the stats refresh land

	snapshot "$WORK/after"
	h1_bad1=$(snap "$WORK/after" h1 rx_bad)
	diag "h1 rx_bad $h1_bad0 -> $h1_bad1 after $to_h1 spoofed and" \
		"$to_h1_unk unknown-source datagrams"
	grew "h1 counted malformed datagrams from its uplink in rx_bad" \
		"$h1_bad0" "$h1_bad1" -ge "$to_h1"
	grew "tor1 counted malformed datagrams from h2 in rx_bad" \
		"$t1_bad0" "$(snap "$WORK/after" tor1 rx_bad)" -ge "$to_t1"
	grew "tor1 counted datagrams from unknown sources" \
		"$t1_unk0" "$(snap "$WORK/after" tor1 rx_unknown_src)" \
		-ge "$to_t1_unk"
	grew "spine counted malformed datagrams from tor1 in rx_bad" \
		"$sp_bad0" "$(snap "$WORK/after" spine rx_bad)" -ge "$to_sp"
}

if [ "$OP_TRANSPORT" = verbs ]; then
	verbs_garbage
else
	udp_garbage
fi

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
timeout $((120 * OP_SLOW)) "$CHECK" --expect-all "${logs[@]}" >"$WORK/op-check.out" 2>&1
rc=$?
if [ "$s" -eq $((SCATS * 4 * 3)) ] && [ "$r" -eq "$s" ] && [ "$rc" -eq 0 ]; then
	tap_pass "traffic after the garbage delivered (op-check --expect-all)" \
		"$r messages"
else
	diag "$(head -n 30 "$WORK/op-check.out")"
	tap_fail "traffic after the garbage delivered (op-check --expect-all)" \
		"$s of $((SCATS * 12)) messages sent, $r delivered, op-check exit $rc"
fi

check_klog "kernel log clean" "$mark"
