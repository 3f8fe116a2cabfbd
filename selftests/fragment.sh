#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Large messages across hosts: 20000-byte messages are cut into MTU-sized
# fragments, cross two switch hops and must be reassembled intact and
# delivered in order (op-check --expect-all; op-traffic checks payloads).
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORT=1001
SIZE=20000
SCATS=${OP_SCATS:-20}
INTERVAL_US=$(send_interval_us 50000)

tap_plan "fabric up 4 hosts 2 tors" "op-traffic processes ran" \
	"every message was sent" \
	"every message delivered whole" "no reassembly drops" \
	"op-check --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
fabric_up --hosts "$HOSTS" --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

mesh_eps "$HOSTS" "$PORT"
mesh_start fragment 120 --scatterings "$SCATS" --fanout 2 --size "$SIZE" \
	--interval-us "$INTERVAL_US" --linger-ms 5000 --rcvbuf 4194304 \
	--seed 3 --quiet
traffic_go
check_traffic_ran "op-traffic processes ran"

want=$((SCATS * HOSTS * 2))
check_all_sent "every message was sent" "$want" "${logs[@]}"

recvd=$(count_lines R "${logs[@]}")
wrong=$(cat "${logs[@]}" |
	awk -v s=$SIZE '$1 == "R" && $6 != s { n++ } END { print n + 0 }')
if [ "$recvd" -eq "$want" ] && [ "$wrong" -eq 0 ]; then
	tap_pass "every message delivered whole" "$recvd x $SIZE bytes"
else
	tap_fail "every message delivered whole" \
		"$recvd of $want delivered, $wrong with a length other than $SIZE"
fi

drops=
snapshot "$WORK/after" hosts
for h in $(seq 1 $HOSTS); do
	n=$(snap "$WORK/after" "h$h" rx_reasm_drop)
	[ "$n" = 0 ] || drops+=" h$h:${n:-?}"
done
if [ -z "$drops" ]; then
	tap_pass "no reassembly drops"
else
	tap_fail "no reassembly drops" "rx_reasm_drop$drops"
fi

run_check "op-check --expect-all" --expect-all "${logs[@]}"
