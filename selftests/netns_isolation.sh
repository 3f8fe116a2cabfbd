#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Isolation between network namespaces, and between user namespaces, of
# the 1Pipe hosts onepipe.ko keeps per netns (issue 9, item 3).
#
# A fabric of two hosts (h1, h2 behind tor1) runs next to netns A
# ($NSA), a host of its own with the same host id as h1 (1) whose uplink
# is a UDP socket on its loopback ("uplink" of the helper, which prints
# the DATA packets it gets).  A has a veth into h2's netns, so it can
# reach h2's 1Pipe UDP port, 10.77.2.2:5640.  The suite shows that
#
# - netlink dumps (HOST_GET, SOCK_GET, PEER_GET, LINK_GET) in one netns
#   report that netns's host, sockets, peers and link only;
# - ports and host ids are per netns: A may bind a port h2 holds, may not
#   bind h2's host id, and what A sends to host 2 leaves through A's own
#   uplink and is never delivered in h2, while h1's message, which the
#   fabric routes, is;
# - well-formed 1Pipe packets sent from A to h2's port from any address
#   and UDP port but h2's uplink switch's are dropped and counted in
#   rx_bad (the UDP transport's source check), while the very same packet
#   from the uplink's address and port (spoofed: the fabric turns
#   rp_filter off) is delivered, so the check is what stops the others;
# - only CAP_NET_ADMIN in the user namespace owning a netns configures its
#   host: an unprivileged user and root of another user namespace get
#   EPERM for HOST_SET and HOST_DOWN, root of the user namespace owning a
#   fresh netns (unshare -Urn) configures it on the UDP transport, and
#   the verbs transport refuses it by design (RDMA devices are not per
#   netns, so it takes CAP_NET_ADMIN in the initial user namespace);
# - net.onepipe.* sysctls are per netns and writable only by that netns's
#   owner.
#
# UDP transport only: the forged packets target the UDP port.
# shellcheck disable=SC2034 # read by lib.sh
OP_TRANSPORT=udp
source "$(dirname "$0")/lib.sh"

NSA=opiso-a
HELPER_SRC=$TOP/selftests/netns_isolation_helper
# Ports of the sockets the dumps must (not) show.
B_PORT=47011 B_RDM_PORT=47012 A_PORT=47021
NFORGE=5
NOBODY=(setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all)
EPERM_RE='^onepipe: .*Operation not permitted'

P_FAB="fabric up: h1 and h2 behind tor1"
P_A="netns A is a host of its own: id 1 (as h1), loopback uplink"
P_SYS="net.onepipe.* are per netns: A's writes leave h1, h2 and init_net as they were"
P_HOST="host show in A, h1, h2 and init_net reports that netns's host only"
P_SOCK_B="sock show in h2 lists h2's sockets ($B_PORT, $B_RDM_PORT), not A's ($A_PORT)"
P_SOCK_A="sock show in A lists A's socket ($A_PORT), not h2's"
P_SOCK_O="sock show in h1 and init_net lists none of those sockets"
P_PORT="port $B_PORT, held in h2 (EADDRINUSE there), is free in A"
P_BIND="bind in A to h2's host id 2 fails (EADDRNOTAVAIL), to A's own id works"
P_TXA="A's message to host 2 left through A's own uplink"
P_TXH1="h1's message to host 2 is delivered in h2 (the fabric routes it)"
P_NODELIV="A's message to host 2 was not delivered in h2"
P_PEER="peer show: the peer A sent to (host 77) is in A's dump only"
P_LINK="link show: A's uplink never heard in A, h2's uplink heard in h2"
P_F1="forged from A's address, UDP port 5640: not delivered, counted in h2's rx_bad"
P_F2="forged from A's address, another UDP port: not delivered, counted in rx_bad"
P_F3="forged from h2's uplink address, wrong UDP port: not delivered, counted in rx_bad"
P_F4="forged from tor1's address on h1's link: not delivered, counted in rx_bad"
P_FC="control: the same packet from h2's uplink address and port is delivered"
P_NB_SET="unprivileged user in A: HOST_SET gets EPERM"
P_NB_DOWN="unprivileged user in A: HOST_DOWN gets EPERM"
P_NB_READ="unprivileged user in A can read (HOST_GET, SOCK_GET): the EPERMs are the permission check"
P_UR_SET="root of a new user namespace in A's netns (owned by init_user_ns): HOST_SET gets EPERM"
P_UR_DOWN="root of a new user namespace in A's netns: HOST_DOWN gets EPERM"
P_UN_SET="root of a user namespace an unprivileged user made, in A's netns: HOST_SET and HOST_DOWN get EPERM"
P_A_INTACT="A's host unchanged after the refused requests (id 1, up, same uplink)"
P_OWN_SET="root of the user namespace owning a fresh netns (unshare -Urn): HOST_SET (udp) works"
P_OWN_DOWN="root of the owning user namespace: HOST_DOWN works"
P_OWN_VERBS="root of the owning user namespace: the verbs transport is refused with EPERM (needs init_user_ns CAP_NET_ADMIN)"
P_SYS_OWN="root of the owning user namespace writes that netns's net.onepipe.*; init_net's unchanged"
P_NB_OWN="an unprivileged user's own user and network namespace: HOST_SET (udp) works there"
P_SYS_NB="unprivileged user in A: reads net.onepipe.* but cannot write them"
P_SYS_UN="root of a user namespace an unprivileged user made, in A's netns: cannot write net.onepipe.*"
P_KLOG="kernel log clean"

tap_plan "$P_FAB" "$P_A" "$P_SYS" "$P_HOST" "$P_SOCK_B" "$P_SOCK_A" \
	"$P_SOCK_O" "$P_PORT" "$P_BIND" "$P_TXA" "$P_TXH1" "$P_NODELIV" \
	"$P_PEER" "$P_LINK" "$P_F1" "$P_F2" "$P_F3" "$P_F4" "$P_FC" \
	"$P_NB_SET" "$P_NB_DOWN" "$P_NB_READ" "$P_UR_SET" "$P_UR_DOWN" \
	"$P_UN_SET" "$P_A_INTACT" "$P_OWN_SET" "$P_OWN_DOWN" "$P_OWN_VERBS" \
	"$P_SYS_OWN" "$P_NB_OWN" "$P_SYS_NB" "$P_SYS_UN" "$P_KLOG"

iso_cleanup()
{
	ip netns del "$NSA" 2>/dev/null
}
# shellcheck disable=SC2034 # read by lib.sh
SCENARIO_CLEANUP=iso_cleanup

# ---------------------------------------------------------------- helpers

# in_ns NS CMD...: CMD in netns NS ("-": the initial one), at most 30 s.
in_ns()
{
	local ns=$1
	shift
	if [ "$ns" = - ]; then
		timeout 30 "$@"
	else
		ip netns exec "$ns" timeout 30 "$@"
	fi
}

# opj NS ARGS...: onepipe -j ARGS in NS.
opj() { in_ns "$1" "$OP" -j "${@:2}"; }

# ports NS: the ports of NS's sockets (SOCK_GET), one line.
ports()
{
	opj "$1" sock show | jq -r '.[].port' | sort -n | tr '\n' ' '
}

# peers NS: the peer hosts of NS (PEER_GET), one line.
peers()
{
	opj "$1" peer show | jq -r '.[].host' | sort -n | tr '\n' ' '
}

# h2_ctrs: h2's rx_bad and rx_msgs counters, one line.
h2_ctrs()
{
	opj op-h2 host show |
		jq -r '"\(.counters.rx_bad) \(.counters.rx_msgs)"'
}

# has LIST WORD: WORD is one of the words of LIST.
has() { [[ " $1 " == *" $2 "* ]]; }

# wait_line FILE REGEX SECONDS: until FILE has a line matching REGEX.
wait_line()
{
	local deadline=$((SECONDS + $3))
	until grep -qE -- "$2" "$1" 2>/dev/null; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}

# bg NS LOG ARGS...: the helper with ARGS in NS, in the background (its
# own time limit is in ARGS; timeout is the backstop), output to LOG;
# waits for its "bound" line.
bg()
{
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" timeout 300 "$HELPER" "$@" >"$log" 2>&1 &
	_pids+=("$!")
	wait_line "$log" '^bound' 20 || {
		diag "helper $* in $ns did not bind: $(cat "$log")"
		return 1
	}
}

# nsysctls NS: every net.onepipe.* of NS as NAME=VALUE lines.
nsysctls()
{
	in_ns "$1" grep -r . /proc/sys/net/onepipe/ | sed 's|.*/||' | sort
}

# ------------------------------------------------------------------ setup

mark=$(dmesg_mark)
need_module
need_tools "$FABRIC" "$ONEPIPE" "$HELPER_SRC"
command -v jq >/dev/null || tap_abort "jq not installed"
command -v setpriv >/dev/null || tap_abort "setpriv not installed"

# The unprivileged user must be able to run the tools: copies in a
# directory anyone may enter ($WORK itself is private).
BIN=$WORK/bin
if ! { mkdir -p "$BIN" && cp "$ONEPIPE" "$HELPER_SRC" "$BIN/" &&
	chmod 755 "$WORK" "$BIN" "$BIN"/*; }; then
	tap_abort "cannot copy the tools to $BIN"
fi
OP=$BIN/onepipe
HELPER=$BIN/netns_isolation_helper

fabric_up --hosts 2 --tors 1 || tap_abort "fabric up failed"
tap_pass "$P_FAB"

for ns in - op-h1 op-h2; do
	nsysctls "$ns" >"$WORK/sysctl-before.${ns#op-}"
done

# A: its own host, and a veth into h2's netns to reach h2's UDP port.
# Beacons every 10 ms: nobody listens to them but the helper.
setup_a()
{
	ip netns add "$NSA" || return 1
	ip -n "$NSA" link set lo up &&
	ip link add opiso0 netns "$NSA" type veth peer name iso netns op-h2 &&
	ip -n "$NSA" addr add 10.88.0.2/24 dev opiso0 &&
	ip -n op-h2 addr add 10.88.0.1/24 dev iso &&
	ip -n "$NSA" link set opiso0 up &&
	ip -n op-h2 link set iso up &&
	ip -n "$NSA" route add 10.77.0.0/16 via 10.88.0.1 || return 1
	in_ns "$NSA" sysctl -qw net.onepipe.beacon_interval_us=10000 \
		net.onepipe.rdm_window=77 || return 1
	in_ns "$NSA" "$OP" host set id 1 transport udp local 127.0.0.1 \
		uplink 127.0.0.1:5641
}
if out=$(setup_a 2>&1) &&
   [ "$(opj "$NSA" host show | jq -r '"\(.host) \(.state)"')" = "1 up" ]; then
	tap_pass "$P_A"
else
	tap_abort "netns A setup: $out"
fi

step "netns A up"

# ------------------------------------------------------------- sysctls

sys_ok=1 why=
for ns in - op-h1 op-h2; do
	nsysctls "$ns" >"$WORK/sysctl-after.${ns#op-}"
	if ! cmp -s "$WORK/sysctl-before.${ns#op-}" \
	     "$WORK/sysctl-after.${ns#op-}"; then
		sys_ok=0
		why+=" ${ns#op-} changed"
		diag "$(diff "$WORK/sysctl-before.${ns#op-}" \
			"$WORK/sysctl-after.${ns#op-}")"
	fi
done
a_sys=$(nsysctls "$NSA" | grep -E '^(beacon_interval_us|rdm_window):' |
	tr '\n' ' ')
[ "$a_sys" = "beacon_interval_us:10000 rdm_window:77 " ] || {
	sys_ok=0
	why+=" A has '$a_sys'"
}
if [ ! -s "$WORK/sysctl-before.-" ]; then
	sys_ok=0
	why+=" no net.onepipe.* in init_net"
fi
if [ "$sys_ok" = 1 ]; then
	tap_pass "$P_SYS" "$a_sys in A only"
else
	tap_fail "$P_SYS" "${why# }"
fi

# ----------------------------------------------------- dumps and sockets

LB=$WORK/h2-listen.out LBR=$WORK/h2-rdm.out LA=$WORK/a-listen.out
UPL=$WORK/a-uplink.out
if ! { bg op-h2 "$LB" listen "$B_PORT" 240 &&
	bg op-h2 "$LBR" listen "$B_RDM_PORT" 240 rdm &&
	bg "$NSA" "$LA" listen "$A_PORT" 240 &&
	bg "$NSA" "$UPL" uplink 127.0.0.1 5641 240; }; then
	tap_abort "could not start the listeners"
fi

step "listeners bound"

host_line()
{
	opj "$1" host show | jq -r '"\(.host) \(.local) \(.uplink) \(.state)"'
}
h_a=$(host_line "$NSA") h_1=$(host_line op-h1) h_2=$(host_line op-h2)
h_0=$(host_line -)
if [ "$h_a" = "1 127.0.0.1:5640 127.0.0.1:5641 up" ] &&
   [ "$h_1" = "1 10.77.1.2:5640 10.77.1.1:5640 up" ] &&
   [ "$h_2" = "2 10.77.2.2:5640 10.77.2.1:5640 up" ] &&
   [ "$h_0" = "null null null down" ]; then
	tap_pass "$P_HOST"
else
	tap_fail "$P_HOST" "A '$h_a', h1 '$h_1', h2 '$h_2', init '$h_0'"
fi

p_a=$(ports "$NSA") p_1=$(ports op-h1) p_2=$(ports op-h2) p_0=$(ports -)
if has "$p_2" "$B_PORT" && has "$p_2" "$B_RDM_PORT" && ! has "$p_2" "$A_PORT"
then
	tap_pass "$P_SOCK_B" "h2: $p_2"
else
	tap_fail "$P_SOCK_B" "h2 lists '$p_2'"
fi
if has "$p_a" "$A_PORT" && ! has "$p_a" "$B_PORT" &&
   ! has "$p_a" "$B_RDM_PORT"; then
	tap_pass "$P_SOCK_A" "A: $p_a"
else
	tap_fail "$P_SOCK_A" "A lists '$p_a'"
fi
bad=
for p in "$A_PORT" "$B_PORT" "$B_RDM_PORT"; do
	has "$p_1" "$p" && bad+=" h1:$p"
	has "$p_0" "$p" && bad+=" init:$p"
done
if [ -z "$bad" ]; then
	tap_pass "$P_SOCK_O" "h1: '$p_1', init: '$p_0'"
else
	tap_fail "$P_SOCK_O" "listed:$bad"
fi

r_b=$(in_ns op-h2 "$HELPER" bind 0 "$B_PORT" 2>/dev/null)
r_a=$(in_ns "$NSA" "$HELPER" bind 0 "$B_PORT" 2>/dev/null)
if [ "$r_b" = "error EADDRINUSE" ] && [ "$r_a" = ok ]; then
	tap_pass "$P_PORT"
else
	tap_fail "$P_PORT" "bind in h2: '$r_b', in A: '$r_a'"
fi

r_2=$(in_ns "$NSA" "$HELPER" bind 2 47022 2>/dev/null)
r_1=$(in_ns "$NSA" "$HELPER" bind 1 47022 2>/dev/null)
if [ "$r_2" = "error EADDRNOTAVAIL" ] && [ "$r_1" = ok ]; then
	tap_pass "$P_BIND"
else
	tap_fail "$P_BIND" "host 2: '$r_2', host 1: '$r_1'"
fi

step "dumps read"

# A sends to (2, B_PORT) and to a host that exists nowhere; then h1
# sends to the same address as A, through the fabric.
s_a=$(in_ns "$NSA" "$HELPER" send 2 "$B_PORT" from-A-to-h2 2>&1)
s_77=$(in_ns "$NSA" "$HELPER" send 77 1 from-A-to-77 2>&1)
if [ "$s_a" = ok ] && wait_line "$UPL" "^D 2 $B_PORT from-A-to-h2\$" 20; then
	tap_pass "$P_TXA"
else
	tap_fail "$P_TXA" "send: '$s_a'; A's uplink got: $(grep -c '^D' "$UPL") DATA packets"
fi
s_1=$(in_ns op-h1 "$HELPER" send 2 "$B_PORT" from-h1-to-h2 2>&1)
if [ "$s_1" = ok ] && wait_line "$LB" '^R from-h1-to-h2$' 30; then
	tap_pass "$P_TXH1"
else
	tap_fail "$P_TXH1" "send: '$s_1'; h2 got: $(grep '^R' "$LB" | tr '\n' ' ')"
fi
# h1's message, sent after A's, has arrived: A's would have too by now.
sleep 1
if ! grep -q from-A "$LB" "$LBR"; then
	tap_pass "$P_NODELIV"
else
	tap_fail "$P_NODELIV" "h2 received: $(grep -h from-A "$LB" "$LBR")"
fi

pe_a=$(peers "$NSA") pe_1=$(peers op-h1) pe_2=$(peers op-h2) pe_0=$(peers -)
if [ "$s_77" = ok ] && has "$pe_a" 77 && ! has "$pe_1" 77 && ! has "$pe_2" 77 &&
   ! has "$pe_0" 77; then
	tap_pass "$P_PEER" "A: $pe_a; h1: $pe_1; h2: $pe_2; init: '$pe_0'"
else
	tap_fail "$P_PEER" "send: '$s_77'; A: '$pe_a', h1: '$pe_1', h2: '$pe_2', init: '$pe_0'"
fi

# "INDEX BARRIER" of link 0; a link never heard has no barrier.
link0() { opj "$1" link show | jq -r '"\(.[0].index) \(.[0].barrier // "none")"'; }
l_a=$(link0 "$NSA") l_2=$(link0 op-h2)
if [ "$l_a" = "0 none" ] && [[ "$l_2" =~ ^0\ [0-9]+$ ]]; then
	tap_pass "$P_LINK" "h2's link 0 barrier ${l_2#0 }"
else
	tap_fail "$P_LINK" "A's link '$l_a', h2's '$l_2' (index barrier)"
fi

step "dumps and sockets checked"

# ------------------------------------------------------- forged packets

# forge NAME SADDR SPORT TAG WANT: NFORGE (WANT deliver: 1) forged DATA
# packets for (2, B_PORT) carrying TAG, from SADDR:SPORT, sent from A to
# h2's UDP port.  WANT drop: each is counted in h2's rx_bad, none is
# delivered (rx_msgs unchanged, the socket got nothing).
forge()
{
	local name=$1 saddr=$2 sport=$3 tag=$4 want=$5 n=$NFORGE out
	local bad0 msg0 bad1 msg1 deadline=$((SECONDS + 20)) got
	[ "$want" = deliver ] && n=1
	read -r bad0 msg0 < <(h2_ctrs)
	out=$(in_ns "$NSA" "$HELPER" forge "$saddr" "$sport" 10.77.2.2 5640 \
		2 "$B_PORT" "$tag" "$n" 2>&1)
	if [ "$out" != "sent $n" ]; then
		tap_fail "$name" "forge: $out"
		return
	fi
	[ "$want" = deliver ] && wait_line "$LB" "^R $tag\$" 20
	# Until h2 has handled them all: counted, or delivered.
	while read -r bad1 msg1 < <(h2_ctrs) &&
	      [ $((bad1 - bad0 + msg1 - msg0)) -lt "$n" ] &&
	      [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.2
	done
	got=$(grep -c "^R $tag\$" "$LB")
	local what="rx_bad +$((bad1 - bad0)), rx_msgs +$((msg1 - msg0)), delivered $got of $n"
	local ok=0
	if [ "$want" = deliver ]; then
		[ "$got" = 1 ] && [ $((msg1 - msg0)) = 1 ] &&
			[ "$bad1" = "$bad0" ] && ok=1
	else
		[ "$got" = 0 ] && [ "$msg1" = "$msg0" ] &&
			[ $((bad1 - bad0)) = "$n" ] && ok=1
	fi
	if [ "$ok" = 1 ]; then
		tap_pass "$name" "$what"
	else
		tap_fail "$name" "$what"
	fi
}

forge "$P_F1" 10.88.0.2 5640 forged-a-5640 drop
forge "$P_F2" 10.88.0.2 40404 forged-a-40404 drop
forge "$P_F3" 10.77.2.1 5641 forged-uplink-5641 drop
forge "$P_F4" 10.77.1.1 5640 forged-tor1-h1-5640 drop
forge "$P_FC" 10.77.2.1 5640 forged-uplink-5640 deliver

step "forged packets checked"

# --------------------------------------------------------- configuration

# eperm OUT RC: the onepipe tool failed with EPERM.
eperm() { [ "$2" -ne 0 ] && grep -qE "$EPERM_RE" <<<"$1"; }

SET_ARGS=(host set id 5 transport udp local 127.0.0.1 uplink 127.0.0.1:5642)

out=$(in_ns "$NSA" "${NOBODY[@]}" "$OP" "${SET_ARGS[@]}" 2>&1)
rc=$?
if eperm "$out" "$rc"; then
	tap_pass "$P_NB_SET"
else
	tap_fail "$P_NB_SET" "exit $rc: $out"
fi
out=$(in_ns "$NSA" "${NOBODY[@]}" "$OP" host down 2>&1)
rc=$?
if eperm "$out" "$rc"; then
	tap_pass "$P_NB_DOWN"
else
	tap_fail "$P_NB_DOWN" "exit $rc: $out"
fi
h=$(in_ns "$NSA" "${NOBODY[@]}" "$OP" -j host show 2>&1 |
	jq -r '"\(.host) \(.state)"' 2>&1)
s=$(in_ns "$NSA" "${NOBODY[@]}" "$OP" -j sock show 2>&1 |
	jq -r '.[].port' 2>&1 | tr '\n' ' ')
if [ "$h" = "1 up" ] && has "$s" "$A_PORT"; then
	tap_pass "$P_NB_READ"
else
	tap_fail "$P_NB_READ" "host show: '$h', sock show: '$s'"
fi

# Root (uid 0, every capability) of a new user namespace, in A's netns,
# which the initial user namespace owns.  (The other order, unshare -U
# first, cannot even enter A's netns: setns() needs CAP_SYS_ADMIN over
# the netns's owner.)
# shellcheck disable=SC2016 # expanded by the inner shell
UR=(unshare -U --map-root-user sh -c 'echo "uid=$(id -u)"; exec "$@"' sh)
out=$(in_ns "$NSA" "${UR[@]}" "$OP" "${SET_ARGS[@]}" 2>&1)
rc=$?
if [[ "$out" == uid=0* ]] && eperm "$out" "$rc"; then
	tap_pass "$P_UR_SET"
else
	tap_fail "$P_UR_SET" "exit $rc: $(tr '\n' ' ' <<<"$out")"
fi
out=$(in_ns "$NSA" "${UR[@]}" "$OP" host down 2>&1)
rc=$?
if [[ "$out" == uid=0* ]] && eperm "$out" "$rc"; then
	tap_pass "$P_UR_DOWN"
else
	tap_fail "$P_UR_DOWN" "exit $rc: $(tr '\n' ' ' <<<"$out")"
fi

# Can an unprivileged user make user namespaces here at all?
userns_ok=1
if ! out=$(timeout 30 "${NOBODY[@]}" unshare -U true 2>&1); then
	userns_ok=0
	userns_why="unprivileged user namespaces unavailable: $out"
fi
if [ "$userns_ok" = 0 ]; then
	tap_skip "$P_UN_SET" "$userns_why"
else
	out=$(in_ns "$NSA" "${NOBODY[@]}" "${UR[@]}" "$OP" "${SET_ARGS[@]}" 2>&1)
	rc=$?
	out2=$(in_ns "$NSA" "${NOBODY[@]}" "${UR[@]}" "$OP" host down 2>&1)
	rc2=$?
	if [[ "$out" == uid=0* ]] && eperm "$out" "$rc" &&
	   [[ "$out2" == uid=0* ]] && eperm "$out2" "$rc2"; then
		tap_pass "$P_UN_SET"
	else
		tap_fail "$P_UN_SET" "set: exit $rc: $(tr '\n' ' ' <<<"$out");" \
			"down: exit $rc2: $(tr '\n' ' ' <<<"$out2")"
	fi
fi

h=$(host_line "$NSA")
if [ "$h" = "1 127.0.0.1:5640 127.0.0.1:5641 up" ]; then
	tap_pass "$P_A_INTACT"
else
	tap_fail "$P_A_INTACT" "A's host is now '$h'"
fi

# In a fresh user and network namespace (unshare -Urn): the owner's root
# configures the host, is refused the verbs transport, writes the
# netns's sysctls and takes the host down.  One tagged line per step.
# shellcheck disable=SC2016 # expanded by the inner shell
OWN_SCRIPT='
op=$1
ip link set lo up || echo "LO failed"
out=$("$op" host set id 9 transport udp local 127.0.0.1 \
	uplink 127.0.0.1:5641 2>&1)
echo "SET $? $out"
echo "SHOW $("$op" -j host show 2>&1 | tr -d "\n")"
out=$("$op" host set id 9 transport verbs dev opiso-none \
	peer 0 gid ::ffff:127.0.0.2 qpn 1 2>&1)
echo "VERBS $? $out"
w0=$(cat /proc/sys/net/onepipe/rdm_window)
echo 33 >/proc/sys/net/onepipe/rdm_window 2>/dev/null
echo "SYSCTL $w0 $(cat /proc/sys/net/onepipe/rdm_window)"
out=$("$op" host down 2>&1)
echo "DOWN $? $out"
echo "SHOW2 $("$op" -j host show 2>&1 | tr -d "\n")"
'
# own_run CMD...: OWN_SCRIPT under CMD (an unshare); output in $own.
own_run()
{
	own=$(timeout 60 "$@" sh -c "$OWN_SCRIPT" sh "$OP" 2>&1)
}
# own_field TAG: the rest of the line tagged TAG in $own.
own_field() { sed -n "s/^$1 //p" <<<"$own" | head -n 1; }

init_win=$(cat /proc/sys/net/onepipe/rdm_window)
own_run unshare -Urn
set_l=$(own_field SET) show=$(own_field SHOW)
if [ "${set_l%% *}" = 0 ] &&
   [ "$(jq -r '"\(.host) \(.state)"' <<<"$show" 2>/dev/null)" = "9 up" ]; then
	tap_pass "$P_OWN_SET"
else
	tap_fail "$P_OWN_SET" "set: '$set_l', show: '$show'"
	diag "$own"
fi
# Taking down a host that is not up proves nothing: it must have been.
down_l=$(own_field DOWN) show2=$(own_field SHOW2)
if [ "$(jq -r .state <<<"$show" 2>/dev/null)" = up ] &&
   [ "${down_l%% *}" = 0 ] &&
   [ "$(jq -r .state <<<"$show2" 2>/dev/null)" = down ]; then
	tap_pass "$P_OWN_DOWN"
else
	tap_fail "$P_OWN_DOWN" "state before: $(jq -r .state <<<"$show" 2>&1), down: '$down_l', after: $(jq -r .state <<<"$show2" 2>&1)"
fi
verbs_l=$(own_field VERBS)
if [ "${verbs_l%% *}" != 0 ] &&
   grep -qE 'onepipe: .*verbs transport needs CAP_NET_ADMIN: Operation not permitted' <<<"$verbs_l"; then
	tap_pass "$P_OWN_VERBS"
elif grep -q 'transport not available' <<<"$verbs_l"; then
	tap_skip "$P_OWN_VERBS" "module built without CONFIG_INFINIBAND"
else
	tap_fail "$P_OWN_VERBS" "'$verbs_l'"
fi
sys_l=$(own_field SYSCTL)
now_win=$(cat /proc/sys/net/onepipe/rdm_window)
if [ "$sys_l" = "256 33" ] && [ "$now_win" = "$init_win" ]; then
	tap_pass "$P_SYS_OWN" "fresh netns rdm_window 256 -> 33, init_net's $now_win"
else
	tap_fail "$P_SYS_OWN" "in the fresh netns: '$sys_l' (want '256 33'), init_net's $init_win -> $now_win"
fi

if [ "$userns_ok" = 0 ]; then
	tap_skip "$P_NB_OWN" "$userns_why"
else
	own_run "${NOBODY[@]}" unshare -Urn
	set_l=$(own_field SET) show=$(own_field SHOW)
	if [ "${set_l%% *}" = 0 ] &&
	   [ "$(jq -r '"\(.host) \(.state)"' <<<"$show" 2>/dev/null)" = "9 up" ]; then
		tap_pass "$P_NB_OWN"
	else
		tap_fail "$P_NB_OWN" "set: '$set_l', show: '$show'"
		diag "$own"
	fi
fi

step "configuration permissions checked"

# ------------------------------------------------- sysctl permissions

SYSF=/proc/sys/net/onepipe/rdm_window
# shellcheck disable=SC2016 # expanded by the inner shell
out=$(in_ns "$NSA" "${NOBODY[@]}" sh -c \
	'cat "$1" && echo 5 >"$1"' sh "$SYSF" 2>&1)
rc=$?
w=$(in_ns "$NSA" cat "$SYSF")
if [ "$rc" -ne 0 ] && [[ "$out" == 77* ]] && [ "$w" = 77 ]; then
	tap_pass "$P_SYS_NB" "$(tail -n 1 <<<"$out")"
else
	tap_fail "$P_SYS_NB" "exit $rc: $(tr '\n' ' ' <<<"$out"), value now $w"
fi
if [ "$userns_ok" = 0 ]; then
	tap_skip "$P_SYS_UN" "$userns_why"
else
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(in_ns "$NSA" "${NOBODY[@]}" "${UR[@]}" sh -c \
		'echo 5 >"$1"' sh "$SYSF" 2>&1)
	rc=$?
	w=$(in_ns "$NSA" cat "$SYSF")
	if [[ "$out" == uid=0* ]] && [ "$rc" -ne 0 ] && [ "$w" = 77 ]; then
		tap_pass "$P_SYS_UN" "$(tail -n 1 <<<"$out")"
	else
		tap_fail "$P_SYS_UN" "exit $rc: $(tr '\n' ' ' <<<"$out"), value now $w"
	fi
fi

bad=$(dmesg_bad_since "$mark")
if [ -z "$bad" ]; then
	tap_pass "$P_KLOG"
else
	diag "$bad"
	tap_fail "$P_KLOG" "kernel warnings"
fi
