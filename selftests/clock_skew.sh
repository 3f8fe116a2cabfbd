#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A host whose clock lags (net.onepipe.clock_offset_ns = -20 ms on h2,
# set after the fabric is up) holds every barrier back: delivery must stay
# ordered and complete, and only get slower.  The same traffic runs before
# and after the skew; the median latency must go up.  That is a functional
# property of barrier-based ordering, not a performance target.
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORT=1001
SKEW_NS=${OP_SKEW_NS:--20000000}
SCATS=${OP_SCATS:-60}
INTERVAL_US=$(send_interval_us 10000)

tap_plan "fabric up 4 hosts 2 tors" "baseline traffic ran" \
	"baseline op-check --expect-all" "clock_offset_ns set on h2" \
	"skewed traffic ran" "skewed op-check --expect-all" \
	"median latency went up with the skew"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts "$HOSTS" --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

mesh_eps "$HOSTS" "$PORT"

# phase NAME: one round of traffic; sets $logs.
phase()
{
	mesh_start "$1" 120 --scatterings "$SCATS" --fanout 2 --size 100 \
		--interval-us "$INTERVAL_US" --linger-ms 5000 --seed 11 --quiet
	traffic_go
	traffic_wait
}

# complete LOGS...: every message sent was delivered.
complete()
{
	local s r
	s=$(sent_msgs "$@")
	r=$(count_lines R "$@")
	[ "$s" -eq $((SCATS * HOSTS * 2)) ] && [ "$r" -eq "$s" ] && return 0
	diag "sent $s of $((SCATS * HOSTS * 2)) messages, delivered $r"
	return 1
}

if phase base && complete "${logs[@]}"; then
	tap_pass "baseline traffic ran"
else
	tap_fail "baseline traffic ran" "op-traffic failed or messages missing"
fi
run_check "baseline op-check --expect-all" --expect-all "${logs[@]}"
p50_base=$(lat_p50 "${logs[@]}")

fx h2 sysctl -qw "net.onepipe.clock_offset_ns=$SKEW_NS"
got=$(fx h2 sysctl -n net.onepipe.clock_offset_ns 2>&1)
if [ "$got" = "$SKEW_NS" ]; then
	tap_pass "clock_offset_ns set on h2" "$SKEW_NS"
else
	tap_abort "could not set net.onepipe.clock_offset_ns on h2: $got"
fi

if phase skew && complete "${logs[@]}"; then
	tap_pass "skewed traffic ran"
else
	tap_fail "skewed traffic ran" "op-traffic failed or messages missing"
fi
run_check "skewed op-check --expect-all" --expect-all "${logs[@]}"
p50_skew=$(lat_p50 "${logs[@]}")

detail="p50 $((p50_base / 1000)) us -> $((p50_skew / 1000)) us"
if [ "$p50_base" -gt 0 ] && [ "$p50_skew" -gt "$p50_base" ]; then
	tap_pass "median latency went up with the skew" "$detail"
else
	tap_fail "median latency went up with the skew" "$detail"
fi
