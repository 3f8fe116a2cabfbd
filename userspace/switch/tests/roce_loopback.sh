#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loopback test of onepipe-switch --roce (TAP): the switch in a netns
# of its own with three veth ports p1, p2, p3 whose far ends e1, e2, e3
# sit in a second netns, where tests/roce_peer plays the hosts and the
# spine with hand-made RoCEv2 frames.  No RDMA device is needed.
#
# Root and network namespaces: run it in the test VM,
#   tools/vm/run --no-module -- userspace/switch/tests/roce_loopback.sh
# Exit status: 0 pass, 1 fail, 4 cannot run here (SKIP, not a pass).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
switch=${ONEPIPE_SWITCH:-$here/../onepipe-switch}
peer=$here/roce_peer
hns=opsw-rl-h.$$
sns=opsw-rl-s.$$

skip()
{
	echo "1..0 # SKIP $*"
	exit 4
}

cleanup()
{
	ip netns del "$hns" 2>/dev/null
	ip netns del "$sns" 2>/dev/null
}

[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "$switch" ] && [ -x "$peer" ] ||
	skip "build first: make -C $(dirname "$here")"
trap cleanup EXIT
ip netns add "$hns" && ip netns add "$sns" || skip "no network namespaces"
# No IPv6: no router solicitations or MLD reports on the wires, so the
# test can count exactly the frames that are not RoCE.
for ns in "$hns" "$sns"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
done
for n in 1 2 3; do
	ip link add name "e$n" address "02:00:00:00:0$n:02" netns "$hns" \
		type veth peer name "p$n" address "02:00:00:00:0$n:01" \
		netns "$sns" || skip "no veth"
	ip -n "$hns" link set "e$n" up
	ip -n "$sns" link set "p$n" up
done
ip netns exec "$hns" "$peer" test "$switch" "$sns"
