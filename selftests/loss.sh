#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Best effort under loss: h2's link drops 20% of packets (netem).  Lost
# messages are never retransmitted but their senders must be told (error
# queue, E lines), and what is delivered must still be in total order:
# op-check --require-notified (every message delivered or notified,
# never misordered).
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORT=1001
SCATS=${OP_SCATS:-80}
INTERVAL_US=$(send_interval_us 5000)

tap_plan "fabric up 4 hosts 2 tors" "netem loss on h2" \
	"op-traffic processes ran" "every message was sent" \
	"messages were delivered" "senders were notified of losses" \
	"op-check --require-notified"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts "$HOSTS" --tors 2 --ack-timeout-ms 100 ||
	tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

if fabric_out=$(timeout $((30 * OP_SLOW)) "$FABRIC" netem h2 loss 20% 2>&1); then
	tap_pass "netem loss on h2"
else
	diag "$fabric_out"
	tap_abort "fabric netem h2 loss 20% failed"
fi

mesh_eps "$HOSTS" "$PORT"
mesh_start loss 120 --scatterings "$SCATS" --fanout 2 --size 100 \
	--interval-us "$INTERVAL_US" --linger-ms 5000 --seed 7 --quiet
traffic_go
check_traffic_ran "op-traffic processes ran"

want=$((SCATS * HOSTS * 2))
check_all_sent "every message was sent" "$want" "${logs[@]}"

recvd=$(count_lines R "${logs[@]}")
if [ "$recvd" -gt 0 ]; then
	tap_pass "messages were delivered" "$recvd of $sent"
else
	tap_fail "messages were delivered" "none"
fi

errs=$(count_lines E "${logs[@]}")
if [ "$errs" -gt 0 ]; then
	tap_pass "senders were notified of losses" "$errs E lines"
else
	tap_fail "senders were notified of losses" "no E lines with 20% loss"
fi

run_check "op-check --require-notified" --require-notified "${logs[@]}"
