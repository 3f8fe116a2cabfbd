#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A silent host must not stall everyone: h4's link goes down, its ToR
# stops hearing from it and, after link_timeout_intervals, removes it from
# the min barrier (the port shows "dead").  Traffic among h1..h3 must then
# be delivered, complete and in order.  When h4's link comes back, the
# new-link rule lets it rejoin and traffic including h4 flows again.
source "$(dirname "$0")/lib.sh"

PORT=1001
SCATS=${OP_SCATS:-60}
INTERVAL_US=$(send_interval_us 10000)

tap_plan "fabric up 4 hosts 2 tors" "h4's port live before" \
	"fabric link-down h4" "tor2 shows h4's port dead" \
	"traffic among h1..h3 ran" "every message among h1..h3 delivered" \
	"op-check --expect-all among h1..h3" \
	"h4's port live again after link-up" \
	"op-check --expect-all with h4 back"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

if wait_port_state tor2 h4 live 10; then
	tap_pass "h4's port live before"
else
	tap_fail "h4's port live before" "not live"
fi

if out=$(timeout $((30 * OP_SLOW)) "$FABRIC" link-down h4 2>&1); then
	tap_pass "fabric link-down h4"
else
	diag "$out"
	tap_abort "fabric link-down h4 failed"
fi

# The port dies after the link timeout (timeout-intervals beacon
# intervals: 200 ms here, 25 s over verbs on the sanitizer kernel).
if wait_port_state tor2 h4 dead $((20 * OP_SLOW_BEACON)); then
	tap_pass "tor2 shows h4's port dead"
else
	tap_fail "tor2 shows h4's port dead" "h4's port never became dead"
fi

# round NAME HOST...: one process per host, each sends to all the others.
round()
{
	local name=$1 h
	shift
	local eps=()
	for h in "$@"; do
		eps+=("$h:$PORT")
	done
	mesh_start "$name" 120 --scatterings "$SCATS" --fanout $(($# - 1)) \
		--size 100 --interval-us "$INTERVAL_US" --linger-ms 5000 \
		--seed 5 --quiet
	traffic_go
	traffic_wait
}

if round silent 1 2 3; then
	tap_pass "traffic among h1..h3 ran"
else
	tap_fail "traffic among h1..h3 ran" "some op-traffic failed"
fi
s=$(sent_msgs "${logs[@]}")
r=$(count_lines R "${logs[@]}")
e=$(count_lines E "${logs[@]}")
if [ "$s" -eq $((SCATS * 3 * 2)) ] && [ "$r" -eq "$s" ] && [ "$e" -eq 0 ]; then
	tap_pass "every message among h1..h3 delivered" "$r messages"
else
	tap_fail "every message among h1..h3 delivered" \
		"$s of $((SCATS * 6)) messages sent, $r delivered, $e failures"
fi
run_check "op-check --expect-all among h1..h3" --expect-all "${logs[@]}"

timeout $((30 * OP_SLOW)) "$FABRIC" link-up h4 >/dev/null 2>&1
if wait_port_state tor2 h4 live 30; then
	tap_pass "h4's port live again after link-up"
else
	tap_fail "h4's port live again after link-up" "still not live"
fi

round back 1 2 3 4
run_check "op-check --expect-all with h4 back" --expect-all "${logs[@]}"
