#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Best-effort (SOCK_DGRAM) and reliable (SOCK_RDM) sockets side by side:
# on each of 4 hosts one SOCK_DGRAM process (port 1001) and one SOCK_RDM
# process (port 2001), all sending scatterings of 2 messages to the other
# processes of their own service at the same time.  Neither disturbs the
# other: each set is delivered completely, without send failures, and in
# order (op-check --expect-all for the datagram set, op-check --reliable
# --expect-all for the reliable one); the hosts count as reliable
# deliveries exactly the reliable set's messages.
source "$(dirname "$0")/lib.sh"

SCATS=${OP_SCATS:-100}
INTERVAL_US=$(send_interval_us 10000)
DG_PORT=1001
RDM_PORT=2001
DIAG_KEYS+=" retransmits rx_rdm_msgs window_stalls recalls"

tap_plan "fabric up 4 hosts 2 tors" "8 op-traffic processes ran" \
	"dgram: every message was sent" "rdm: every message was sent" \
	"dgram: every message was delivered" \
	"rdm: every message was delivered" \
	"dgram: no send failures" "rdm: no send failures" \
	"dgram: op-check --expect-all" \
	"rdm: op-check --reliable --expect-all" \
	"rx_rdm_msgs counts the reliable deliveries"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

snapshot "$WORK/before" hosts
common=(--scatterings "$SCATS" --fanout 2 --size 100
	--interval-us "$INTERVAL_US" --linger-ms 5000 --seed 3 --quiet)
mesh_eps 4 "$DG_PORT"
mesh_start dgram 180 --type dgram "${common[@]}"
mesh_eps 4 "$RDM_PORT"
mesh_start rdm 180 --type rdm "${common[@]}"
traffic_go
check_traffic_ran "8 op-traffic processes ran"
snapshot "$WORK/after" hosts

want=$((SCATS * 4 * 2))
for set in dgram rdm; do
	logs=("$WORK/$set"-h*.log)
	check_all_sent "$set: every message was sent" "$want" "${logs[@]}"
done
for set in dgram rdm; do
	logs=("$WORK/$set"-h*.log)
	check_all_delivered "$set: every message was delivered" "$want" \
		"${logs[@]}"
done
for set in dgram rdm; do
	check_no_failures "$set: no send failures" "$WORK/$set"-h*.log
done

run_check "dgram: op-check --expect-all" --expect-all "$WORK"/dgram-h*.log
run_check "rdm: op-check --reliable --expect-all" --reliable --expect-all \
	"$WORK"/rdm-h*.log

rdm_got=$(count_lines R "$WORK"/rdm-h*.log)
rx_rdm=$(snap_delta "$WORK/before" "$WORK/after" rx_rdm_msgs h1 h2 h3 h4)
if ! snap_has "$WORK/after" rx_rdm_msgs; then
	tap_fail "rx_rdm_msgs counts the reliable deliveries" \
		"no host reports rx_rdm_msgs"
elif [ "$rx_rdm" -eq "$rdm_got" ]; then
	tap_pass "rx_rdm_msgs counts the reliable deliveries" "$rx_rdm"
else
	tap_fail "rx_rdm_msgs counts the reliable deliveries" \
		"rx_rdm_msgs grew by $rx_rdm, the reliable set got $rdm_got"
fi
