#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Barrier news leaves a host when it happens, not at the next tick.  With
# a 1 s beacon interval (the sysctl's largest), so that a push stands out
# from the ticks even in an emulated guest:
#
#  - an idle host's tick beacon promises exactly the tick's instant, so
#    that all idle hosts give a switch the same value and its minimum
#    moves once per tick (each move costs pushed beacons downstream);
#  - the ACK of a reliable message makes its sender push a beacon with
#    its new commit barrier (once the busy window its own data packet
#    opened has passed) instead of leaving it to the next tick: h1 sends
#    more beacons than there were ticks.
source "$(dirname "$0")/lib.sh"

IV_US=1000000
MSGS=5
IV_NS=$((IV_US * 1000))
PORT=1001

tap_plan "fabric up 2 hosts 1 tor" "idle hosts' barriers are tick instants" \
	"the ACKs pushed beacons between ticks" \
	"the reliable messages were delivered" \
	"op-check --reliable --expect-all"

need_module
need_rdm
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
fabric_up --hosts 2 --tors 1 --interval-us "$IV_US" \
	--timeout-intervals 20 || tap_abort "fabric up failed"
tap_pass "fabric up 2 hosts 1 tor"

# One host's number KEY, now: "onepipe -j host show" and grep, much
# faster in the guest than a snapshot of the fabric, which matters here.
host_now()
{
	ip netns exec "op-$1" "$ONEPIPE" -j host show |
		grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

# A 48-bit timestamp as the full wall-clock time nearest to now.
unwrap_ts()
{
	local mask=$(((1 << 48) - 1)) now t
	now=$(now_ns)
	t=$(((now & ~mask) + $1))
	((t > now + (1 << 47))) && t=$((t - (1 << 48)))
	((t < now - (1 << 47))) && t=$((t + (1 << 48)))
	echo "$t"
}

# Idle hosts: three looks, a second apart, at each host's last barrier.
odd=
for i in 1 2 3; do
	for h in 1 2; do
		b=$(host_now "h$h" tx_barrier)
		if ! [[ $b =~ ^[0-9]+$ ]] || (($(unwrap_ts "$b") % IV_NS)); then
			odd+=" h$h:$b"
		fi
	done
	sleep 1
done
if [ -z "$odd" ]; then
	tap_pass "idle hosts' barriers are tick instants"
else
	tap_fail "idle hosts' barriers are tick instants" \
		"not multiples of $IV_NS ns:$odd"
fi

# tor1's stats file, read when it was written half-way between two ticks
# (it is rewritten every 100 ms): "TIME BEACONS", its wall-clock time and
# the beacons tor1 has received from h1 by then.  Every tick's beacon has
# arrived by half-way, and none of the next: the ticks between two looks
# are exactly the interval boundaries between their times.
mid_look()
{
	local f=${ONEPIPE_FABRIC_RUN:-/run/onepipe-fabric}/tor1.json s t
	for _ in $(seq 300); do
		s=$(cat "$f")
		t=$(grep -o '"time_ns":[0-9]*' <<<"$s" | cut -d: -f2)
		if [ -n "$t" ] && ((t % IV_NS > IV_NS * 3 / 10 &&
				    t % IV_NS < IV_NS * 7 / 10)); then
			echo "$t $(grep '"name":"h1"' <<<"$s" |
				grep -o '"rx_beacons":[0-9]*' | cut -d: -f2)"
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# $MSGS reliable messages h1 -> h2, 2.5 intervals apart, the first 0.3
# s after a tick.  tor1 counts h1's beacons: one per tick, plus one
# pushed per ACK (that is, once the busy window h1's own data packet
# opened has passed).  An ACK that comes back after the next tick (a
# very slow guest) has its news carried by that tick instead: at least
# $((MSGS - 2)) of $MSGS must be pushed.
logs=("$WORK/h1.log" "$WORK/h2.log")
traffic_start h2 $PORT "$WORK/h2.log" 90 --type rdm --expect "$MSGS" \
	--linger-ms 8000 --quiet
traffic_start h1 $PORT "$WORK/h1.log" 90 --type rdm --peers "2:$PORT" \
	--scatterings "$MSGS" --interval-us $((IV_US * 5 / 2)) --size 64 \
	--linger-ms 8000 --quiet
read -r t0 b0 < <(mid_look)
traffic_go "$IV_NS" 300000000 || true
traffic_wait || true
read -r t1 b1 < <(mid_look)
if [ -z "${b0:-}" ] || [ -z "${b1:-}" ]; then
	tap_fail "the ACKs pushed beacons between ticks" \
		"tor1's stats file never read half-way between ticks"
else
	ticks=$((t1 / IV_NS - t0 / IV_NS))
	pushes=$((b1 - b0 - ticks))
	step "tor1 heard $((b1 - b0)) beacons from h1 over $ticks ticks"
	if ((pushes >= MSGS - 2)); then
		tap_pass "the ACKs pushed beacons between ticks"
	else
		tap_fail "the ACKs pushed beacons between ticks" \
			"$((b1 - b0)) beacons over $ticks ticks: $pushes pushed"
	fi
fi
n=$(count_lines R "$WORK/h2.log")
if [ "$n" -eq "$MSGS" ]; then
	tap_pass "the reliable messages were delivered"
else
	tap_fail "the reliable messages were delivered" "h2 got $n of $MSGS"
fi
run_check "op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"
