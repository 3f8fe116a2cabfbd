#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# onepipe-switch --roce against Linux's Soft-RoCE (rxe), TAP output.
#
# Two rxe devices on two veths in init_net (rxe works there only), the
# other ends h1 and h2 in a netns where the switch runs, wired as
# tools/fabric wires a verbs fabric: 10.79.N.2 on oswvN, static neighbours,
# one /16 route per device.  Then:
#  1. rxe1 sends UD SENDs (ibv_ud_pingpong) out of oswv1; tests/roce_peer
#     sniffs them on h1 and checks their ICRC with roce.c: the switch's
#     ICRC is the kernel's.
#  2. An ibv_ud_pingpong pair is connected (rxe2 -> rxe1), but its own
#     traffic goes through the switch, which drops it (not 1Pipe).  The
#     switch beacons to the two QPs with the Q_Key ibv_ud_pingpong uses;
#     a fake host beacons into h1 so that the switch has a barrier.  First
#     with a wrong Q_Key: rxe must drop the beacons (control).  Then with
#     the right one: each pingpong must receive its 3 messages (beacons)
#     and finish, and rxe must count them in rcvd_pkts.
#
# Root, rdma_rxe and ibverbs-utils: run it in the test VM,
#   tools/vm/run --no-module -- userspace/switch/tests/roce_rxe.sh
# Exit status: 0 pass, 1 fail, 4 cannot run here (SKIP, not a pass).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
switch=${ONEPIPE_SWITCH:-$here/../onepipe-switch}
peer=$here/roce_peer
sns=opsw-rxe-s.$$
work=$(mktemp -d /tmp/opsw-rxe.XXXXXX)
pp_qkey=0x11111111	# ibv_ud_pingpong's Q_Key
pids=()
saved_sysctls=()	# init_net's, as setup() found them
ntest=0
nfail=0

skip()
{
	echo "1..0 # SKIP $*"
	exit 4
}

ok()
{
	ntest=$((ntest + 1))
	if [ "$1" = 0 ]; then
		echo "ok $ntest - $2"
	else
		nfail=$((nfail + 1))
		echo "not ok $ntest - $2"
	fi
}

cleanup()
{
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rdma link del oprsw1 2>/dev/null
	rdma link del oprsw2 2>/dev/null
	ip link del oswv1 2>/dev/null
	ip link del oswv2 2>/dev/null
	ip netns del "$sns" 2>/dev/null
	# Leave init_net as it was for the suites that run after this one.
	[ ${#saved_sysctls[@]} -eq 0 ] || sysctl -qw "${saved_sysctls[@]}"
	rm -rf "$work"
}

mac() { cat "/sys/class/net/$1/address"; }
nsmac() { ip netns exec "$sns" cat "/sys/class/net/$1/address"; }

# gid_index DEV IP: index of DEV's RoCE v2 GID ::ffff:IP
gid_index()
{
	local d=/sys/class/infiniband/$1/ports/1 i want
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		${2//./ })
	for i in $(seq 0 31); do
		[ "$(cat "$d/gids/$i" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			echo "$i" && return 0
	done
	return 1
}

rcvd() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/rcvd_pkts"; }

setup()
{
	local n
	modprobe rdma_rxe 2>/dev/null || skip "no rdma_rxe"
	command -v ibv_ud_pingpong >/dev/null || skip "no ibverbs-utils"
	ip netns add "$sns" || skip "no network namespaces"
	ip netns exec "$sns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	mapfile -t saved_sysctls < <(sysctl net.ipv4.conf.all.accept_local \
		net.ipv4.conf.all.rp_filter | tr -d ' ')
	sysctl -qw net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0
	for n in 1 2; do
		ip link add oswv$n type veth peer name h$n netns "$sns" ||
			skip "no veth"
		sysctl -qw net.ipv6.conf.oswv$n.disable_ipv6=1 \
			net.ipv4.conf.oswv$n.accept_local=1 \
			net.ipv4.conf.oswv$n.rp_filter=0
		ip addr add 10.79.$n.2/24 dev oswv$n
		ip link set oswv$n up
		ip -n "$sns" link set h$n up
		ip route add 10.79.0.0/16 dev oswv$n metric $n
		ip neigh replace 10.79.$n.1 lladdr "$(nsmac h$n)" dev oswv$n \
			nud permanent
	done
	ip neigh replace 10.79.2.2 lladdr "$(mac oswv2)" dev oswv1 nud permanent
	ip neigh replace 10.79.1.2 lladdr "$(mac oswv1)" dev oswv2 nud permanent
	rdma link add oprsw1 type rxe netdev oswv1 &&
		rdma link add oprsw2 type rxe netdev oswv2 ||
		skip "cannot add rxe devices"
	for n in 1 2; do
		for _ in $(seq 50); do
			gid_index oprsw$n 10.79.$n.2 >/dev/null && break
			sleep 0.1
		done
	done
	g1=$(gid_index oprsw1 10.79.1.2) && g2=$(gid_index oprsw2 10.79.2.2) ||
		skip "no RoCE v2 GIDs"
}

# 1. rxe's own frames, sniffed on the wire, checked with roce.c.
test_icrc()
{
	ip netns exec "$sns" "$peer" sniff h1 4 >"$work/sniff" 2>&1 &
	local sniffer=$!
	sleep 0.5
	timeout 3 ibv_ud_pingpong -d oprsw2 -g "$g2" -s 53 -n 1 -p 18601 \
		>/dev/null 2>&1 &
	sleep 0.3
	timeout 3 ibv_ud_pingpong -d oprsw1 -g "$g1" -s 53 -n 1 -p 18601 \
		127.0.0.1 >/dev/null 2>&1
	wait "$sniffer"
	ok $? "rxe's UD SENDs sniffed on the wire have the ICRC roce.c computes"
	sed 's/^/# /' "$work/sniff" | head -5
	wait
}

# pp_qpn FILE: the local QPN an ibv_ud_pingpong printed, in decimal
pp_qpn()
{
	local q
	for _ in $(seq 50); do
		q=$(sed -n 's/.*local address:.*QPN \(0x[0-9a-f]*\).*/\1/p' "$1")
		[ -n "$q" ] && echo $((q)) && return 0
		sleep 0.1
	done
	return 1
}

# start_switch QKEY: the switch, beaconing to both pingpong QPs; returns
# once it runs (its first stats file: its signals are handled by then)
start_switch()
{
	rm -f "$work/stats.json"
	ip netns exec "$sns" "$switch" --roce --name rxe-test \
		--interval-us 10000 --stats "$work/stats.json" \
		--port "h1,down,h1,hosts=1,mac=$(mac oswv1),ip=10.79.1.2,src=10.79.1.1,qpn=$q1,qkey=$1" \
		--port "h2,down,h2,hosts=2,mac=$(mac oswv2),ip=10.79.2.2,src=10.79.2.1,qpn=$q2,qkey=$1" \
		2>>"$work/switch.log" &
	swpid=$!
	pids+=("$swpid")
	for _ in $(seq 100); do
		[ -e "$work/stats.json" ] && return 0
		sleep 0.1
	done
	return 1
}

# stop_switch: SIGTERM, which writes the final stats file
stop_switch()
{
	kill "$swpid"
	wait "$swpid"
}

# stat PORT KEY: a number from the switch's stats file
stat()
{
	grep "{\"name\":\"$1\"," "$work/stats.json" |
		sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

# 2. beacons crafted by the switch, received by rxe's QPs.
test_accept()
{
	local r1 r2 s1 s2 alive=0
	stdbuf -oL ibv_ud_pingpong -d oprsw1 -g "$g1" -s 64 -n 3 -p 18602 \
		>"$work/pp1" 2>&1 &
	pp1=$!
	pids+=("$pp1")
	sleep 0.3
	stdbuf -oL ibv_ud_pingpong -d oprsw2 -g "$g2" -s 64 -n 3 -p 18602 \
		127.0.0.1 >"$work/pp2" 2>&1 &
	pp2=$!
	pids+=("$pp2")
	q1=$(pp_qpn "$work/pp1") && q2=$(pp_qpn "$work/pp2") || {
		ok 1 "ibv_ud_pingpong pair connected"
		return
	}
	sleep 0.5
	ok 0 "ibv_ud_pingpong pair connected (QPNs $q1, $q2)"
	# A host beaconing into h1 gives the switch a barrier to send.
	"$peer" beacons oswv1 "$(nsmac h1)" 10.79.1.2 10.79.1.1 1000 500 20 &
	pids+=("$!")

	r1=$(rcvd oprsw1)
	r2=$(rcvd oprsw2)
	start_switch 0x22222222
	sleep 1
	stop_switch
	s1=$(stat h1 tx_beacons)
	s2=$(stat h2 tx_beacons)
	kill -0 "$pp1" 2>/dev/null && kill -0 "$pp2" 2>/dev/null && alive=1
	[ "$alive" = 1 ] && [ "$(rcvd oprsw1)" = "$r1" ] &&
		[ "$(rcvd oprsw2)" = "$r2" ] && [ "${s1:-0}" -gt 10 ] &&
		[ "${s2:-0}" -gt 10 ]
	ok $? "control: $s1 + $s2 beacons with a wrong Q_Key are dropped by rxe"

	r1=$(rcvd oprsw1)
	r2=$(rcvd oprsw2)
	start_switch "$pp_qkey"
	timeout 10 tail --pid="$pp1" -f /dev/null
	timeout 10 tail --pid="$pp2" -f /dev/null
	stop_switch
	wait "$pp1"
	ok $? "rxe1's QP received 3 beacons from the switch (pingpong done)"
	wait "$pp2"
	ok $? "rxe2's QP received 3 beacons from the switch (pingpong done)"
	s1=$(( $(rcvd oprsw1) - r1 ))
	s2=$(( $(rcvd oprsw2) - r2 ))
	[ "$s1" -ge 3 ] && [ "$s2" -ge 3 ]
	ok $? "rxe counts them in rcvd_pkts (+$s1, +$s2)"
	[ "$(stat h2 rx_pkts)" -ge 1 ] && [ "$(stat h2 drops)" -ge 1 ] &&
		[ "$(sed -n 's/.*"rx_bad":\([0-9]*\).*/\1/p' \
			"$work/stats.json")" -ge 1 ]
	ok $? "the pingpong's own UD SENDs reach the switch and are dropped"
	sed 's/^/# /' "$work/pp1" "$work/pp2" "$work/switch.log"
}

[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "$switch" ] && [ -x "$peer" ] ||
	skip "build first: make -C $(dirname "$here")"
trap cleanup EXIT
echo "TAP version 13"
setup
test_icrc
test_accept
echo "1..$ntest"
[ "$nfail" = 0 ]
