#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Total order under concurrency: 4 hosts behind 2 ToRs, 2 processes per
# host, every process sends scatterings of 3 messages to random peers at
# the same time.  op-check --expect-all: every receiver delivered in one
# consistent (ts, sender) order, causality held, nothing was lost.
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORTS="1001 1002"
SCATS=${OP_SCATS:-60}
INTERVAL_US=$(send_interval_us 10000)

tap_plan "fabric up 4 hosts 2 tors" "8 op-traffic processes ran" \
	"every message was sent" "messages were delivered" \
	"no send failures" "op-check --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts "$HOSTS" --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

# shellcheck disable=SC2086 # PORTS is a list
mesh_eps "$HOSTS" $PORTS
mesh_start order 120 --scatterings "$SCATS" --fanout 3 --size 100 \
	--interval-us "$INTERVAL_US" --linger-ms 5000 --seed 42 --quiet
traffic_go
check_traffic_ran "8 op-traffic processes ran"

want=$((SCATS * ${#eps[@]} * 3))
check_all_sent "every message was sent" "$want" "${logs[@]}"

check_all_delivered "messages were delivered" "$want" "${logs[@]}"
check_no_failures "no send failures" "${logs[@]}"

run_check "op-check --expect-all" --expect-all "${logs[@]}"
