#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Randomized syscall exerciser (syscall_fuzz.c) against AF_ONEPIPE, in h1
# of a one-host fabric (h1 sends to itself through a software switch, so
# the traffic crosses the real transport), in two phases:
#
#  1. FUZZ_SECS (default 60) of fuzzing with FUZZ_THREADS (4) threads while
#     a racer takes the host down and sets it up again (the fabric's own
#     configuration) every few seconds.  Then: no crash, no hang, no API
#     finding; once the fuzzer's sockets are closed the host drains (no
#     reliable scattering waiting or unacked, empty reorder queue, no
#     socket in the netns).
#  2. RMMOD_SECS (default 20) of fuzzing (no HOST_SET from the fuzzer)
#     while `rmmod onepipe` is tried every second or two: refused while
#     sockets are open; if it wins a moment with none open, the module is
#     loaded again and the host set up again, and the fuzzer goes on.
#
# Then kmemleak (where the guest kernel has it) reports nothing from the
# module; with the fabric down, slab usage is back near the baseline taken
# before it came up; rmmod works and insmod again.  One fabric serves both
# phases: bringing it up takes a good part of the suite's time budget.
#
# The kernel log must stay clean throughout.  FUZZ_SEED replays a seed
# (as far as thread interleaving allows).  For a long run:
#   VM_PASSENV="FUZZ_SECS" FUZZ_SECS=14400 \
#	tools/vm/run --smp 2 --timeout 15400 -- selftests/syscall_fuzz.sh
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fuzz_lib.sh"

FUZZ_SECS=${FUZZ_SECS:-60}
RMMOD_SECS=${RMMOD_SECS:-20}
# Slab tolerances, see slab_compare.
SLAB_TOL_SKB=${SLAB_TOL_SKB:-512}
SLAB_TOL_KMALLOC_KB=${SLAB_TOL_KMALLOC_KB:-4096}

tap_plan "fuzzer ran without a crash or hang" "fuzzer ran: no API findings" \
	"traffic flowed: delivered on both services, failures queued" \
	"host state drains once the sockets are closed" \
	"no socket left in the host's netns" \
	"rmmod during traffic is refused or clean" \
	"kmemleak reports nothing from onepipe" \
	"slab usage back near baseline" \
	"rmmod succeeds once the fuzzer exits" \
	"insmod again works" "kernel log clean"

# Whatever happens, leave the module loaded for the harness.
fuzz_cleanup()
{
	[ -n "${racer:-}" ] && kill "$racer" 2>/dev/null
	load_module 2>/dev/null
}
SCENARIO_CLEANUP=fuzz_cleanup

loaded() { grep -q '^onepipe ' /proc/modules; }

family_works()
{
	python3 -c 'import socket; socket.socket(23, socket.SOCK_DGRAM, 0).close()'
}

# host_set: h1's configuration as the fabric made it (read at start).
host_set()
{
	h1 "$ONEPIPE" host set id "$HOST_ID" transport udp local "$LOCAL" \
		uplink "$UPLINK"
}

# slab_snapshot FILE: "NAME ACTIVE_OBJS OBJSIZE" of the caches we watch,
# after flushing the per-CPU slabs (which /proc/slabinfo counts as fully
# in use) so that the numbers are the objects really allocated.
slab_snapshot()
{
	local c
	for c in /sys/kernel/slab/skbuff_head_cache /sys/kernel/slab/ONEPIPE \
		/sys/kernel/slab/kmalloc-*; do
		[ -w "$c/shrink" ] && echo 1 >"$c/shrink" 2>/dev/null
	done
	awk 'NR > 2 && ($1 == "skbuff_head_cache" || $1 == "ONEPIPE" ||
		$1 ~ /^kmalloc-[0-9k]+$/) { print $1, $2, $4 }' \
		/proc/slabinfo >"$1"
}

# slab_compare BEFORE AFTER: passes when the watched caches are back near
# the baseline.  Tolerances: after the shrink the only objects left over
# from traffic are the per-CPU caches the skb allocator keeps (the NAPI
# cache, up to 64 skbs per CPU, and one partial slab of 32): a few
# hundred skbs, hence SLAB_TOL_SKB=512, while the fuzzer sends and
# receives hundreds of thousands of messages and error-queue entries, so
# any per-message leak is far above it.  The kmalloc caches also serve
# the rest of the kernel (namespaces, sysfs, the fabric's processes),
# which moves them by a few hundred KB between two idle moments:
# SLAB_TOL_KMALLOC_KB=4096.  ONEPIPE (the socket cache, when not merged
# into another) must be back exactly: no socket is left.
slab_compare()
{
	local b=$1 a=$2 bs as bk ak bo ao ok=0
	bs=$(awk '$1 == "skbuff_head_cache" { print $2 }' "$b")
	as=$(awk '$1 == "skbuff_head_cache" { print $2 }' "$a")
	bk=$(awk '$1 ~ /^kmalloc/ { s += $2 * $3 } END { print int(s / 1024) }' "$b")
	ak=$(awk '$1 ~ /^kmalloc/ { s += $2 * $3 } END { print int(s / 1024) }' "$a")
	bo=$(awk '$1 == "ONEPIPE" { print $2 }' "$b")
	ao=$(awk '$1 == "ONEPIPE" { print $2 }' "$a")
	slab_text="skbuff_head_cache ${bs:-?} -> ${as:-?},"
	slab_text+=" kmalloc-* ${bk}K -> ${ak}K,"
	slab_text+=" ONEPIPE ${bo:-merged} -> ${ao:-merged}"
	if [ -z "$bs" ] || [ -z "$as" ]; then
		slab_text="no skbuff_head_cache in /proc/slabinfo"
		return 1
	fi
	[ $((as - bs)) -le "$SLAB_TOL_SKB" ] || ok=1
	[ $((ak - bk)) -le "$SLAB_TOL_KMALLOC_KB" ] || ok=1
	if [ -n "$ao" ] && [ -n "$bo" ] && [ "$ao" -gt "$bo" ]; then
		ok=1
	fi
	return $ok
}

# ------------------------------------------------------------ prereqs

mark=$(dmesg_mark)
need_tools "$FUZZ" "$ONEPIPE" "$FABRIC"
[ "$OP_TRANSPORT" = udp ] ||
	tap_skip_all "the fuzzer's HOST_SET speaks the UDP transport only"
need_module
kmemleak_clear

# Slab baseline with no fabric, like the measurement after it.
"$FABRIC" down >/dev/null 2>&1
netns_gone
slab_snapshot "$WORK/slab.before"

fabric_up --hosts 1 --tors 1 || tap_abort "fabric up --hosts 1 failed"
j=$(h1 "$ONEPIPE" -j host show) || tap_abort "onepipe host show failed"
HOST_ID=$(json_get host <<<"$j")
LOCAL=$(json_get local <<<"$j")
UPLINK=$(json_get uplink <<<"$j")
LOCAL=${LOCAL%:*}
UPLINK=${UPLINK%:*}
if [ -z "$HOST_ID" ] || [ -z "$LOCAL" ] || [ -z "$UPLINK" ]; then
	tap_abort "cannot read h1's configuration: $j"
fi
# A small reliable window, so that windows fill and scatterings wait
# (and a sendmmsg of 8 to one host is more than the window).
hosts_sysctl net.onepipe.rdm_window=6 >/dev/null ||
	diag "could not set rdm_window"
sock_base=$(sockets_used)
snapshot "$WORK/counters.before" hosts
step "h1: host $HOST_ID local $LOCAL uplink $UPLINK, sockets in use $sock_base"

# ------------------------------------------------------------ phase 1

# The racer: host down, then up again with the fabric's configuration,
# every 2-6 s, until the fuzzer is done.
(
	n=0
	while [ ! -e "$WORK/racer.stop" ]; do
		sleep "$((2 + RANDOM % 5)).$((RANDOM % 10))"
		[ -e "$WORK/racer.stop" ] && break
		h1 "$ONEPIPE" host down ||
			echo "host down failed" >>"$WORK/racer.err"
		sleep "0.$((RANDOM % 10))"
		host_set 2>>"$WORK/racer.err" ||
			echo "host set failed" >>"$WORK/racer.err"
		n=$((n + 1))
		echo "$n" >"$WORK/racer.count"
	done
) &
racer=$!
_pids+=("$racer")

step "fuzzing for $FUZZ_SECS s: seed $FUZZ_SEED, $FUZZ_THREADS threads"
rc=0
fuzz_run "$WORK/fuzz.out" "$FUZZ_SECS" \
	--host-cfg "$HOST_ID,$LOCAL,$UPLINK" || rc=$?
touch "$WORK/racer.stop"
wait "$racer"
racer=
cycles=$(cat "$WORK/racer.count" 2>/dev/null || echo 0)
step "fuzzer exited $rc; racer cycled the host $cycles times"
[ -s "$WORK/racer.err" ] && diag "racer: $(sort "$WORK/racer.err" | uniq -c | head -n 5)"
# The host as the fabric made it, whatever the fuzzer and racer left.
host_set >/dev/null 2>&1 || diag "could not set h1's host up again"

# The calls' errno histograms, for the record.
diag "$(sed -n '/^calls and their results/,$p' "$WORK/fuzz.out")"
fuzz_points "fuzzer ran" "$WORK/fuzz.out" "$rc"
echo "# execs/s: ${rate:-unknown}"

# The fuzz meant something only if its messages crossed the transport:
# best-effort and reliable deliveries, and send failures reported back.
snapshot "$WORK/counters.after" hosts
traffic=
for k in tx_msgs rx_msgs rx_rdm_msgs send_failures window_stalls recalls; do
	traffic+=" $k $(snap_delta "$WORK/counters.before" \
		"$WORK/counters.after" "$k" h1)"
done
got=$(sed -n 's/^received: //p' "$WORK/fuzz.out")
read -r _ _ _ rx _ rdm _ fails _ <<<"$traffic"
if [ "${rx:-0}" -gt 0 ] && [ "${rdm:-0}" -gt 0 ] && [ "${fails:-0}" -gt 0 ] &&
	[[ $got == [1-9]*" messages, "[1-9]* ]]; then
	tap_pass "traffic flowed: delivered on both services, failures queued" \
		"h1:$traffic; fuzzer received $got"
else
	tap_fail "traffic flowed: delivered on both services, failures queued" \
		"h1:$traffic; fuzzer received ${got:-nothing}"
fi

# Closed sockets' reliable messages are committed or given up within the
# retry budget (a few s); allow 30 s on a loaded emulator.
deadline=$((SECONDS + 30))
until host_drained h1 || [ "$SECONDS" -ge "$deadline" ]; do
	sleep 1
done
if host_drained h1; then
	tap_pass "host state drains once the sockets are closed" "$drain_text"
else
	tap_fail "host state drains once the sockets are closed" \
		"after 30 s: $drain_text"
fi
sock_now=$(sockets_used)
if [ -n "$sock_now" ] && [ "$sock_now" = "$sock_base" ]; then
	tap_pass "no socket left in the host's netns" "sockstat used $sock_now"
else
	tap_fail "no socket left in the host's netns" \
		"sockstat used ${sock_now:-?}, was $sock_base"
fi

# ------------------------------------------------------------ phase 2

# The rmmod racer: a refusal must say the module is in use; a success
# (no socket open at that instant) is followed by insmod and host set.
# Its first attempt is made while a socket of our own is surely open (the
# fuzzer's sockets come and go), so that one must be refused.
python3 -c '
import socket, sys, time
s = socket.socket(23, socket.SOCK_DGRAM, 0)
open(sys.argv[1], "w").close()
time.sleep(600)
' "$WORK/holder.ready" &
holder=$!
_pids+=("$holder")
for _ in $(seq 100); do
	[ -e "$WORK/holder.ready" ] && break
	sleep 0.1
done
(
	first=1
	while [ ! -e "$WORK/rmmod.stop" ]; do
		sleep "1.$((RANDOM % 10))"
		if [ "$first" = 1 ]; then
			first=0
			if out=$(rmmod onepipe 2>&1); then
				echo "BAD rmmod succeeded under an open socket" \
					>>"$WORK/rmmod.log"
				load_module
				host_set >/dev/null 2>&1
			elif [[ $out == *"in use"* ]]; then
				echo refused >>"$WORK/rmmod.log"
			else
				echo "BAD rmmod: $out" >>"$WORK/rmmod.log"
			fi
			kill "$holder"
			continue
		fi
		if out=$(rmmod onepipe 2>&1); then
			echo unloaded >>"$WORK/rmmod.log"
			if ! out=$(load_module 2>&1) || ! host_set >/dev/null 2>&1
			then
				echo "BAD reload: $out" >>"$WORK/rmmod.log"
			fi
			h1 sysctl -qw net.onepipe.rdm_window=6
		elif [[ $out == *"in use"* ]]; then
			echo refused >>"$WORK/rmmod.log"
		else
			echo "BAD rmmod: $out" >>"$WORK/rmmod.log"
		fi
	done
) &
racer=$!
_pids+=("$racer")
step "fuzzing for $RMMOD_SECS s with rmmod attempts"
rc2=0
fuzz_run "$WORK/fuzz2.out" "$RMMOD_SECS" --no-host-set || rc2=$?
touch "$WORK/rmmod.stop"
wait "$racer"
racer=
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
fuzz_verdict "$WORK/fuzz2.out" "$rc2"
refused=$(grep -c '^refused' "$WORK/rmmod.log" 2>/dev/null)
unloaded=$(grep -c '^unloaded' "$WORK/rmmod.log" 2>/dev/null)
badr=$(grep '^BAD' "$WORK/rmmod.log" 2>/dev/null | head -n 3)
grep -q '^FINDING' "$WORK/fuzz2.out" &&
	diag "findings while rmmod raced:" \
		"$(grep '^FINDING' "$WORK/fuzz2.out" | head -n 10)"
if [ -z "$verdict" ] && [ -z "$badr" ] && [ "${refused:-0}" -gt 0 ]; then
	tap_pass "rmmod during traffic is refused or clean" \
		"$refused refused, $unloaded unloaded and reloaded; fuzzer $rate"
else
	diag "$(tail -n 5 "$WORK/fuzz2.out")"
	tap_fail "rmmod during traffic is refused or clean" \
		"${verdict:-fuzzer ok}; ${badr:-rmmod ok}; ${refused:-0} refused"
fi

check_kmemleak "kmemleak reports nothing from onepipe"

# Slab usage with the fabric gone again.
fabric_down "$WORK/fabric-down1.out"
netns_gone || diag "fabric namespaces still there after 60 s"
slab_snapshot "$WORK/slab.after"
if slab_compare "$WORK/slab.before" "$WORK/slab.after"; then
	tap_pass "slab usage back near baseline" "$slab_text"
else
	tap_fail "slab usage back near baseline" \
		"$slab_text (tolerance skb $SLAB_TOL_SKB, kmalloc ${SLAB_TOL_KMALLOC_KB}K)"
fi

# Once the fuzzer is gone nothing may pin the module.  Reliable messages
# of closed sockets hold it until committed or given up: allow 30 s.
deadline=$((SECONDS + 30))
until out=$(rmmod onepipe 2>&1) || [ "$SECONDS" -ge "$deadline" ]; do
	sleep 1
done
if ! loaded; then
	tap_pass "rmmod succeeds once the fuzzer exits"
else
	refs=$(awk '$1 == "onepipe" { print $3 }' /proc/modules)
	tap_fail "rmmod succeeds once the fuzzer exits" "$out (refcnt ${refs:-?})"
fi
if out=$(load_module 2>&1) && loaded && family_works; then
	tap_pass "insmod again works"
else
	tap_fail "insmod again works" "$out"
fi

check_klog "kernel log clean" "$mark"
