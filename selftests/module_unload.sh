#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module lifetime (run last: it unloads onepipe.ko).  An open socket pins
# the module; once it is closed rmmod works and insmod brings the family
# back.  Network namespaces with a configured host may be deleted while
# the module is loaded, even under a socket that still has traffic in
# flight, without leaks (rmmod still works afterwards) or kernel warnings.
#
# With OP_TRANSPORT=verbs (module_unload@verbs) the hosts are bound to
# Soft-RoCE ports instead, so the namespaces that go away unbind RDMA
# ports, and a last round unloads the module while a host is still bound
# (the RDMA client's removal takes it down) and deletes the device after.
#
# Then the reliable service (issue 9, item 5), on a 3-host fabric with
# net.onepipe.rdm_window = 4: h1:1001 never reads, so the SOCK_RDM senders
# h2:1001 and h3:1001 soon have a scattering waiting for window in their
# non-blocking sockets, while h2:1002 and h3:1002 keep exchanging reliable
# scatterings.  rmmod then fails (the module is in use: delete_module()
# says EWOULDBLOCK, rmmod "in use") and changes nothing: the
# scatterings still wait and the other pair's traffic goes on.  Round 1
# kills the senders (SIGKILL, scatterings waiting, messages in flight)
# and the reader, and rmmod succeeds with the fabric still up (its hosts
# configured); round 2 tears the fabric down under the same traffic
# (hosts down, their namespaces deleted while the processes still hold
# sockets in them): rmmod is refused until the processes exit, then
# succeeds.  After each, insmod works and the kernel log stays clean.
source "$(dirname "$0")/lib.sh"

NS1=op-unload-1
NS2=op-unload-2

tap_plan "module loaded" "rmmod refused while a socket is open" \
	"family still works after the refused rmmod" \
	"rmmod succeeds once the socket is closed" \
	"insmod again works" "configured netns deleted cleanly" \
	"netns deleted under a busy socket" \
	"rmmod works after the netns churn" "insmod after the churn works" \
	"rmmod with a host up (verbs: bound to an RDMA port)" \
	"insmod after that works" \
	"reliable scatterings waiting for window" \
	"rmmod refused (in use) under reliable traffic" \
	"still waiting, and traffic flows, after the refused rmmod" \
	"rmmod succeeds once the senders are killed" \
	"insmod after the reliable round works" \
	"fabric torn down under waiting scatterings: rmmod refused" \
	"rmmod succeeds once those processes exit" \
	"insmod after the teardown works" "kernel log clean"

NS3=op-unload-3

netns_cleanup()
{
	local id
	ip netns del $NS1 2>/dev/null
	ip netns del $NS2 2>/dev/null
	ip netns del $NS3 2>/dev/null
	for id in 7 8 9; do
		rdma link delete "opmr$id" 2>/dev/null
		ip link del "opmv$id" 2>/dev/null
	done
	load_module 2>/dev/null
}
SCENARIO_CLEANUP=netns_cleanup

loaded() { grep -q '^onepipe ' /proc/modules; }

# Creates an AF_ONEPIPE socket and exits: the family is registered.
family_works()
{
	python3 -c 'import socket; socket.socket(23, socket.SOCK_DGRAM, 0).close()'
}

# mkhost NS ID: a configured host in a new netns NS whose uplink does
# not exist, so packets just go nowhere.  UDP: a dummy device 10.99.ID.1,
# uplink 10.99.ID.2.  Verbs: a veth opmvID in the initial netns (rxe only
# works there) with the rxe device opmrID, the uplink a static neighbour
# on the veth's dead end.
# rxe_ready DEV IPV4: wait up to 30 s for DEV's port 1 to be ACTIVE with
# IPV4's RoCE GID; rxe fills its GID table after `rdma link add` returns.
rxe_ready()
{
	local d=/sys/class/infiniband/$1/ports/1 gid deadline=$((SECONDS + 30))
	# shellcheck disable=SC2086 # the address's four bytes, split
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		${2//./ })
	until [[ $(cat "$d/state" 2>/dev/null) == *ACTIVE* ]] &&
		grep -qx "$gid" "$d"/gids/* 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			diag "$1: not ACTIVE with GID $gid after 30 s"
			return 1
		fi
		sleep 0.2
	done
}

mkhost()
{
	local ns=$1 id=$2 out
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
	if [ "$OP_TRANSPORT" = verbs ]; then
		ip link add "opmv$id" type veth peer name "opmp$id" || return 1
		ip addr add "10.99.$id.1/24" dev "opmv$id"
		ip link set "opmp$id" up
		ip link set "opmv$id" up
		ip neigh replace "10.99.$id.2" lladdr 02:99:00:00:00:02 \
			dev "opmv$id" nud permanent
		rdma link add "opmr$id" type rxe netdev "opmv$id" || return 1
		rxe_ready "opmr$id" "10.99.$id.1" || return 1
		set -- host set id "$id" transport verbs dev "opmr$id" \
			peer 0 gid "::ffff:10.99.$id.2" qpn 1
	else
		ip -n "$ns" link add d0 type dummy || return 1
		ip -n "$ns" addr add "10.99.$id.1/24" dev d0
		ip -n "$ns" link set d0 up
		set -- host set id "$id" transport udp local "10.99.$id.1" \
			uplink "10.99.$id.2"
	fi
	if ! out=$(ip netns exec "$ns" "$ONEPIPE" "$@" 2>&1); then
		diag "onepipe $* in $ns: $out"
		return 1
	fi
	ip netns exec "$ns" "$ONEPIPE" -j host show >"$WORK/$ns.json" 2>&1
	[ "$(json_get state <"$WORK/$ns.json" 2>/dev/null)" = up ] || {
		diag "host in $ns not up: $(cat "$WORK/$ns.json")"
		return 1
	}
}

mark=$(dmesg_mark)
need_tools "$ONEPIPE" "$TRAFFIC" "$FABRIC"
if [ "$OP_TRANSPORT" = verbs ] && ! modprobe -q rdma_rxe; then
	tap_skip_all "verbs transport unavailable: no rdma_rxe (Soft-RoCE)"
fi
[ -f "$ONEPIPE_KO" ] || tap_abort "no $ONEPIPE_KO"
"$FABRIC" down >/dev/null 2>&1	# nothing of the fabric may pin the module

if loaded && family_works; then
	tap_pass "module loaded"
else
	tap_abort "onepipe.ko not loaded or AF_ONEPIPE unusable"
fi

# 1. An open socket pins the module.
ready=$WORK/holder.ready
python3 -c '
import socket, sys, time
s = socket.socket(23, socket.SOCK_DGRAM, 0)
open(sys.argv[1], "w").close()
time.sleep(300)
' "$ready" &
holder=$!
_pids+=("$holder")
for _ in $(seq 100); do
	[ -e "$ready" ] && break
	sleep 0.1
done
[ -e "$ready" ] || tap_abort "could not open an AF_ONEPIPE socket"
if out=$(rmmod onepipe 2>&1); then
	tap_fail "rmmod refused while a socket is open" "rmmod succeeded"
	load_module
else
	refs=$(awk '$1 == "onepipe" { print $3 }' /proc/modules)
	tap_pass "rmmod refused while a socket is open" "${out##*: }, refcnt $refs"
fi
if loaded && family_works; then
	tap_pass "family still works after the refused rmmod"
else
	tap_fail "family still works after the refused rmmod" \
		"module gone or socket() fails"
fi

# 2. Closing the socket releases it.
kill "$holder"
wait "$holder" 2>/dev/null
if out=$(rmmod onepipe 2>&1) && ! loaded; then
	tap_pass "rmmod succeeds once the socket is closed"
else
	tap_abort "rmmod after close failed: $out"
fi
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod again works"
else
	tap_abort "insmod failed: $out"
fi

# 3. A configured netns goes away (no sockets).
if mkhost $NS1 7; then
	ip netns del $NS1
	sleep 2		# netns cleanup runs from a workqueue
	bad=$(dmesg_bad_since "$mark")
	if [ -z "$bad" ]; then
		tap_pass "configured netns deleted cleanly"
	else
		diag "$bad"
		tap_fail "configured netns deleted cleanly" "kernel warnings"
	fi
else
	tap_fail "configured netns deleted cleanly" "could not configure $NS1"
fi

# 4. The netns loses its name while a socket is still sending; it is
# destroyed when that process exits, with ACK timers and queues pending.
if mkhost $NS2 8; then
	ip netns exec $NS2 timeout $((60 * OP_SLOW)) "$TRAFFIC" --port 1001 \
		--peers 8:1002,8:1003 --scatterings 200 --fanout 2 \
		--interval-us 1000 --linger-ms 500 --quiet \
		>"$WORK/busy.out" 2>&1 &
	busy=$!
	_pids+=("$busy")
	sleep 0.5
	ip netns del $NS2
	wait "$busy"
	rc=$?
	sleep 2
	bad=$(dmesg_bad_since "$mark")
	if [ -z "$bad" ] && [ "$rc" -ne 124 ]; then
		tap_pass "netns deleted under a busy socket" "op-traffic exit $rc"
	else
		diag "$bad" "op-traffic exit $rc: $(tail -n 3 "$WORK/busy.out")"
		tap_fail "netns deleted under a busy socket" \
			"kernel warnings or hang"
	fi
else
	tap_fail "netns deleted under a busy socket" "could not configure $NS2"
fi

# 5. Nothing leaked a reference: the module unloads and reloads.
sleep 1
if out=$(rmmod onepipe 2>&1) && ! loaded; then
	tap_pass "rmmod works after the netns churn"
else
	refs=$(awk '$1 == "onepipe" { print $3 }' /proc/modules)
	tap_fail "rmmod works after the netns churn" "$out (refcnt ${refs:-?})"
fi
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod after the churn works"
else
	tap_fail "insmod after the churn works" "$out"
fi

# 6. Unload with a host up and no socket: on verbs the module's RDMA
# client goes away with the host bound to its port.
if mkhost $NS3 9; then
	if out=$(rmmod onepipe 2>&1) && ! loaded; then
		tap_pass "rmmod with a host up (verbs: bound to an RDMA port)"
	else
		tap_fail "rmmod with a host up (verbs: bound to an RDMA port)" \
			"$out"
	fi
else
	tap_fail "rmmod with a host up (verbs: bound to an RDMA port)" \
		"could not configure $NS3"
fi
ip netns del $NS3 2>/dev/null
rdma link delete opmr9 2>/dev/null
ip link del opmv9 2>/dev/null
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod after that works"
else
	tap_fail "insmod after that works" "$out"
fi

# 7. The reliable service: rmmod under traffic, scatterings waiting for
# window.

# rmmod_errno: delete_module("onepipe", O_NONBLOCK), as rmmod does, but
# straight to the kernel (kmod's rmmod refuses by itself when it sees a
# reference count, so its message would not show the kernel's answer):
# prints 0 or the errno's name.  A module in use is EWOULDBLOCK (EAGAIN);
# EBUSY would mean it is still coming or already going.
rmmod_errno()
{
	python3 -c '
import ctypes, errno, os, platform
nr = {"x86_64": 176, "aarch64": 106}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(nr, b"onepipe", os.O_NONBLOCK)
print("0" if r == 0 else errno.errorcode.get(ctypes.get_errno(), "?"))'
}

# rmmod_within SEC: retries rmmod until it works; prints the seconds it
# took, or the last errno after SEC seconds (and fails).
rmmod_within()
{
	local t0=$SECONDS e
	while :; do
		e=$(rmmod_errno)
		if [ "$e" = 0 ] && ! loaded; then
			echo "$((SECONDS - t0))"
			return 0
		fi
		if [ $((SECONDS - t0)) -ge "$1" ]; then
			echo "${e:-?}"
			return 1
		fi
		sleep 0.5
	done
}

# host_val HOST KEY: a number of `onepipe -j host show` in fabric host HOST.
host_val()
{
	ip netns exec "op-$1" "$ONEPIPE" -j host show 2>/dev/null |
		grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2
}

# waiting: scatterings waiting for window on h2 and h3 ("h2 N h3 N"),
# true if any.
waiting()
{
	local h n any=1 out=
	for h in h2 h3; do
		n=$(host_val "$h" rdm_waiting)
		out+=" $h ${n:-?}"
		[ "${n:-0}" -gt 0 ] && any=0
	done
	echo "${out# }"
	return "$any"
}

# rdm_round N: a 3-host fabric, rdm_window 4, and the traffic described
# at the top (non-blocking senders; ENETDOWN does not end them, so that
# they keep their sockets when the fabric goes).  True once a scattering
# waits for window (up to 30 s); $wait_state says where.
rdm_round()
{
	local n=$1 h rdm deadline
	fabric_up --hosts 3 --tors 1 || return 1
	hosts_sysctl net.onepipe.rdm_window=4 net.onepipe.rdm_retries=15 ||
		return 1
	rdm=(--type rdm --quiet --until-down --linger-ms 1000)
	traffic_start h1 1001 "$WORK/r$n-h1-1001.log" 150 "${rdm[@]}" \
		--rcvbuf 2048 --recv-pause-ms 0:600000
	for h in 2 3; do
		traffic_start "h$h" 1001 "$WORK/r$n-h$h-1001.log" 150 \
			"${rdm[@]}" --peers 1:1001 --fanout 1 --size 1000 \
			--scatterings 1000000 --interval-us 2000
		traffic_start "h$h" 1002 "$WORK/r$n-h$h-1002.log" 150 \
			"${rdm[@]}" --peers "$((5 - h)):1002" --fanout 1 \
			--size 200 --scatterings 1000000 --interval-us 20000
	done
	traffic_go || return 1
	sleep_until "$(round_start_ns)"
	deadline=$((SECONDS + 30))
	until wait_state=$(waiting); do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.5
	done
}

# end_traffic SIG: sends SIG to every op-traffic of the round (the
# children of the timeout processes traffic_start left) and reaps them.
end_traffic()
{
	local e pid c
	for e in "${_traffic[@]}"; do
		pid=${e%%:*}
		for c in $(pgrep -P "$pid"); do
			kill "-$1" "$c" 2>/dev/null
		done
	done
	for e in "${_traffic[@]}"; do
		wait "${e%%:*}" 2>/dev/null
	done
	_traffic=()
	_round=$((_round + 1))
}

# The reliable points of one round after its setup failed.
round_failed()
{
	local p
	for p in "$@"; do
		tap_fail "$p" "not run: the reliable traffic did not start"
	done
}

step "round 1: reliable traffic, then its senders killed"
if rdm_round 1; then
	tap_pass "reliable scatterings waiting for window" "$wait_state"
	e=$(rmmod_errno)
	if [ "$e" = EAGAIN ] && loaded; then
		tap_pass "rmmod refused (in use) under reliable traffic"
	else
		tap_fail "rmmod refused (in use) under reliable traffic" \
			"delete_module: ${e:-?}, module $(loaded && echo loaded ||
				echo gone)"
		loaded || load_module
	fi
	d0=$(($(host_val h2 rx_rdm_msgs) + $(host_val h3 rx_rdm_msgs)))
	sleep 3
	d1=$(($(host_val h2 rx_rdm_msgs) + $(host_val h3 rx_rdm_msgs)))
	if w=$(waiting) && [ "$d1" -gt "$d0" ] && family_works; then
		tap_pass "still waiting, and traffic flows, after the refused rmmod" \
			"$w; h2+h3 delivered $((d1 - d0)) in 3 s"
	else
		tap_fail "still waiting, and traffic flows, after the refused rmmod" \
			"waiting: $w; h2+h3 delivered $((d1 - d0)) in 3 s"
	fi
	{ end_traffic KILL; } 2>/dev/null
	if t=$(rmmod_within 30); then
		tap_pass "rmmod succeeds once the senders are killed" \
			"after $t s, fabric still up"
	else
		tap_fail "rmmod succeeds once the senders are killed" \
			"delete_module: $t after 30 s (refcnt $(awk \
				'$1 == "onepipe" { print $3 }' /proc/modules))"
	fi
else
	round_failed "reliable scatterings waiting for window" \
		"rmmod refused (in use) under reliable traffic" \
		"still waiting, and traffic flows, after the refused rmmod" \
		"rmmod succeeds once the senders are killed"
	diag "waiting: ${wait_state:-?}"
	{ end_traffic KILL; } 2>/dev/null
	rmmod_within 30 >/dev/null
fi
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod after the reliable round works"
else
	tap_fail "insmod after the reliable round works" "$out"
fi

step "round 2: reliable traffic, then the fabric torn down under it"
if rdm_round 2; then
	timeout $((60 * OP_SLOW)) "$FABRIC" down >"$WORK/fabric-down-2.out" 2>&1 ||
		diag "fabric down: $(tail -n 3 "$WORK/fabric-down-2.out")"
	e=$(rmmod_errno)
	if [ "$e" = EAGAIN ] && loaded && family_works; then
		tap_pass "fabric torn down under waiting scatterings: rmmod refused" \
			"$wait_state before the teardown"
	else
		tap_fail "fabric torn down under waiting scatterings: rmmod refused" \
			"delete_module: ${e:-?}"
		loaded || load_module
	fi
	{ end_traffic TERM; } 2>/dev/null
	if t=$(rmmod_within 30); then
		tap_pass "rmmod succeeds once those processes exit" "after $t s"
	else
		tap_fail "rmmod succeeds once those processes exit" \
			"delete_module: $t after 30 s"
	fi
else
	round_failed "fabric torn down under waiting scatterings: rmmod refused" \
		"rmmod succeeds once those processes exit"
	{ end_traffic KILL; } 2>/dev/null
	rmmod_within 30 >/dev/null
fi
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod after the teardown works"
else
	tap_fail "insmod after the teardown works" "$out"
fi

check_klog "kernel log clean" "$mark"
