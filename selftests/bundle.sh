#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bundles on the UDP transport (kernel/core/wire.h): what one send puts
# on the wire leaves as one datagram, and the switch bundles what it
# forwards to one port in one batch.  Two receivers per host, so that
# every scattering (5 messages: both ports of the other hosts, the other
# port of its own) sends two packets to each host: one bundle goes up,
# and bundles of two come down.  Then again with net.onepipe.bundle=0 on
# the hosts: one datagram per packet from them, the same deliveries.
# Both rounds: every message delivered in order (op-check --expect-all).
# Last, a host takes a bundle's packets as if each came alone, though it
# takes them in together: a message below a barrier heard just before it
# in its bundle is late (garbage.py --late, spoofed from h1's uplink).
# And on a link with a larger MTU, a bundle of a big and a small message
# (garbage.py --split): the host copies the small one out of the
# datagram rather than let it pin the whole buffer, clones the big one
# (kernel/transport_udp.c, OP_UDP_PIN_MAX); both arrive whole.
source "$(dirname "$0")/lib.sh"

HOSTS=3
SCATS=${OP_SCATS:-40}
INTERVAL_US=$(send_interval_us 20000)
H="h1 h2 h3"
GARBAGE=$TOP/selftests/garbage.py

tap_plan "fabric up 3 hosts 1 tor" \
	"bundled: op-check --expect-all" \
	"bundled: every scattering left its host as one bundle (tx_bundles)" \
	"bundled: the switch took the hosts' bundles apart (rx_bundles)" \
	"bundled: the switch bundled what it forwarded (hosts' rx_bundles)" \
	"bundled: nothing counted bad or lost (rx_bad, rx_nobufs, tx_errors)" \
	"bundle=0: op-check --expect-all" \
	"bundle=0: the hosts sent no bundle, one datagram per packet" \
	"a message below a barrier heard before it in its bundle is late" \
	"a big and a small message of one bundle both arrive whole" \
	"kernel log clean"

mark=$(dmesg_mark)
need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE" "$GARBAGE"
fabric_up --hosts "$HOSTS" --tors 1 || tap_abort "fabric up failed"
tap_pass "fabric up 3 hosts 1 tor"

# delta KEY NODE...: KEY's growth over NODEs from before to after.
delta() { snap_delta "$WORK/before" "$WORK/after" "$@"; }

# round NAME: the mesh above, then op-check --expect-all.
round()
{
	snapshot "$WORK/before"
	mesh_eps "$HOSTS" 1001 1002
	mesh_start "$1" 120 --scatterings "$SCATS" --fanout 5 --size 100 \
		--interval-us "$INTERVAL_US" --linger-ms 3000 --seed 5 --quiet
	traffic_go
	traffic_wait
	sleep 1		# the stats file refreshes
	snapshot "$WORK/after"
	run_check "$1: op-check --expect-all" --expect-all "${logs[@]}"
	scats=$((${#eps[@]} * SCATS))
}

round bundled
txb=$(delta tx_bundles $H)
diag "scatterings $scats; hosts tx_bundles +$txb, tx_pkts +$(delta tx_pkts $H)"
if [ "$txb" -ge "$scats" ]; then
	tap_pass "bundled: every scattering left its host as one bundle (tx_bundles)" \
		"+$txb for $scats scatterings"
else
	tap_fail "bundled: every scattering left its host as one bundle (tx_bundles)" \
		"+$txb for $scats scatterings"
fi
swb=$(delta rx_bundles tor1)
if [ "$swb" -ge "$scats" ]; then
	tap_pass "bundled: the switch took the hosts' bundles apart (rx_bundles)" \
		"+$swb"
else
	tap_fail "bundled: the switch took the hosts' bundles apart (rx_bundles)" \
		"+$swb for $scats scatterings"
fi
rxb=$(delta rx_bundles $H)
if [ "$rxb" -gt 0 ] && [ "$(delta tx_bundles tor1)" -gt 0 ]; then
	tap_pass "bundled: the switch bundled what it forwarded (hosts' rx_bundles)" \
		"hosts +$rxb, switch tx_bundles +$(delta tx_bundles tor1)"
else
	tap_fail "bundled: the switch bundled what it forwarded (hosts' rx_bundles)" \
		"hosts +$rxb, switch tx_bundles +$(delta tx_bundles tor1)"
fi
bad="rx_bad +$(delta rx_bad $H) rx_nobufs +$(delta rx_nobufs $H)"
bad+=" tx_errors +$(delta tx_errors $H) switch rx_bad +$(delta rx_bad tor1)"
if [ "$bad" = "rx_bad +0 rx_nobufs +0 tx_errors +0 switch rx_bad +0" ]; then
	tap_pass "bundled: nothing counted bad or lost (rx_bad, rx_nobufs, tx_errors)"
else
	tap_fail "bundled: nothing counted bad or lost (rx_bad, rx_nobufs, tx_errors)" \
		"$bad"
fi

for h in $H; do
	"$FABRIC" exec "$h" sysctl -qw net.onepipe.bundle=0 ||
		tap_abort "sysctl net.onepipe.bundle=0 failed on $h"
done
round bare
txb=$(delta tx_bundles $H)
pkts=$(delta tx_pkts $H)
if [ "$txb" -eq 0 ] && [ "$pkts" -ge $((scats * 5)) ]; then
	tap_pass "bundle=0: the hosts sent no bundle, one datagram per packet" \
		"tx_pkts +$pkts"
else
	tap_fail "bundle=0: the hosts sent no bundle, one datagram per packet" \
		"tx_bundles +$txb, tx_pkts +$pkts for $((scats * 5)) messages"
fi

# Two messages to h1 (host 1) port 1001 in one bundle from h1's uplink
# (tor1, 10.77.1.1), the second below the barrier the first carries
# (garbage.py).  The port has no socket any more: the first, delivered
# once the fabric's barrier passes it (well within the second waited
# here), shows in rx_noport; the second must be late, not delivered too.
snapshot "$WORK/before" hosts
fx tor1 python3 "$GARBAGE" --to 10.77.1.2 --spoof 10.77.1.1:5640 \
	--late 1:1001 >/dev/null || tap_abort "garbage.py --late failed"
sleep 1
snapshot "$WORK/after" hosts
late="rx_late +$(delta rx_late h1) rx_noport +$(delta rx_noport h1)"
late+=" rx_msgs +$(delta rx_msgs h1) rx_bad +$(delta rx_bad h1)"
if [ "$late" = "rx_late +1 rx_noport +1 rx_msgs +0 rx_bad +0" ]; then
	tap_pass "a message below a barrier heard before it in its bundle is late" \
		"$late"
else
	tap_fail "a message below a barrier heard before it in its bundle is late" \
		"$late"
fi

# h1's uplink, both ends, at 4000 bytes for the 2,148-byte datagram
# (the host's transport keeps the MTU it came up with).
tdev=$(fx tor1 ip -o route get 10.77.1.2 | sed -n 's/.* dev \([^ ]*\).*/\1/p')
hdev=$(fx h1 ip -o route get 10.77.1.1 | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$tdev" ] && [ -n "$hdev" ] || tap_abort "h1's uplink devices not found"
mtu_of() { fx "$1" ip -o link show dev "$2" | sed -n 's/.* mtu \([0-9]*\).*/\1/p'; }
tmtu=$(mtu_of tor1 "$tdev")
hmtu=$(mtu_of h1 "$hdev")
fx tor1 ip link set dev "$tdev" mtu 4000 &&
	fx h1 ip link set dev "$hdev" mtu 4000 ||
	tap_abort "cannot raise h1's uplink MTU"
snapshot "$WORK/before" hosts
fx tor1 python3 "$GARBAGE" --to 10.77.1.2 --spoof 10.77.1.1:5640 \
	--split 1:1001 >/dev/null || tap_abort "garbage.py --split failed"
sleep 1
snapshot "$WORK/after" hosts
fx tor1 ip link set dev "$tdev" mtu "$tmtu"
fx h1 ip link set dev "$hdev" mtu "$hmtu"
# No socket on the port: delivered messages show in rx_noport.
split="rx_noport +$(delta rx_noport h1) rx_bad +$(delta rx_bad h1)"
split+=" rx_nobufs +$(delta rx_nobufs h1) rx_late +$(delta rx_late h1)"
if [ "$split" = "rx_noport +2 rx_bad +0 rx_nobufs +0 rx_late +0" ]; then
	tap_pass "a big and a small message of one bundle both arrive whole" \
		"$split"
else
	tap_fail "a big and a small message of one bundle both arrive whole" \
		"$split"
fi

check_klog "kernel log clean" "$mark"
