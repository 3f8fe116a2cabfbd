#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The reliable service (SOCK_RDM) under loss, reordering and duplication:
# 4 hosts behind 2 ToRs, 2 processes per host, all sending scatterings of
# 3 messages to random peers at once, in three rounds with netem loss of
# 0.1%, 1% and 5% on every host link, duplication on h2's link and
# tor1's spine link, and reordering on h3's link and tor2's spine link,
# all at the same time.  With a retry budget that loss alone cannot
# exhaust, nothing may be lost, duplicated, failed or misordered:
# op-check --reliable --expect-all (exactly-once, all-or-nothing
# scatterings, total order, agreement); and the hosts retransmitted.
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORTS="1001 1002"
FANOUT=3
SCATS=${OP_SCATS:-100}
INTERVAL_US=$(send_interval_us 10000)
LOSSES=${OP_RDM_LOSSES:-"0.1% 1% 5%"}
# 15 retransmissions: a message whose data or ACK crosses four lossy
# links at 5% (~19% per attempt) is given up with probability ~1e-11.
RETRIES=${OP_RDM_RETRIES:-15}
RTO_MIN_MS=${OP_RDM_RTO_MIN_MS:-20}
DIAG_KEYS+=" retransmits rx_dup rx_rdm_msgs window_stalls recalls"

points=("fabric up 4 hosts 2 tors" "SOCK_RDM sysctls set")
for loss in $LOSSES; do
	points+=("loss $loss: netem on h1-h4, tor1, tor2"
		"loss $loss: 8 op-traffic processes ran"
		"loss $loss: every message was sent"
		"loss $loss: every message was delivered"
		"loss $loss: no send failures"
		"loss $loss: op-check --reliable --expect-all"
		"loss $loss: hosts retransmitted")
done
tap_plan "${points[@]}"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts "$HOSTS" --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

hosts_sysctl net.onepipe.rdm_retries="$RETRIES" \
	net.onepipe.rdm_rto_min_ms="$RTO_MIN_MS" ||
	tap_abort "cannot set the SOCK_RDM sysctls"
tap_pass "SOCK_RDM sysctls set" \
	"rdm_retries $RETRIES, rdm_rto_min_ms $RTO_MIN_MS"

# netem_round LOSS: loss on every host link (both directions), with
# duplication and reordering (a 1 ms delay that a quarter of the packets
# skip) on some host and spine links as well.
netem_round()
{
	local l=$1
	netem_set h1 loss "$l" &&
		netem_set h2 loss "$l" duplicate 2% &&
		netem_set h3 delay 1ms reorder 25% 50% loss "$l" &&
		netem_set h4 loss "$l" &&
		netem_set tor1 duplicate 2% &&
		netem_set tor2 delay 1ms reorder 25% 50%
}

# shellcheck disable=SC2086 # PORTS is a list
mesh_eps "$HOSTS" $PORTS
mapfile -t hosts < <(fabric_hosts)
want=$((SCATS * ${#eps[@]} * FANOUT))

for loss in $LOSSES; do
	tag="loss $loss"
	if netem_round "$loss"; then
		tap_pass "$tag: netem on h1-h4, tor1, tor2"
	else
		tap_abort "fabric netem failed"
	fi
	snapshot "$WORK/before.$_round" hosts
	mesh_start "r$_round" 240 --type rdm --scatterings "$SCATS" \
		--fanout "$FANOUT" --size 100 --interval-us "$INTERVAL_US" \
		--linger-ms 5000 --drain --seed "$((42 + _round))" --quiet
	round=$_round
	traffic_go
	check_traffic_ran "$tag: 8 op-traffic processes ran"
	snapshot "$WORK/after.$round" hosts

	check_all_sent "$tag: every message was sent" "$want" "${logs[@]}"

	check_all_delivered "$tag: every message was delivered" "$want" \
		"${logs[@]}"
	check_no_failures "$tag: no send failures" "${logs[@]}"

	run_check "$tag: op-check --reliable --expect-all" \
		--reliable --expect-all "${logs[@]}"

	b=$WORK/before.$round
	a=$WORK/after.$round
	retx=$(snap_delta "$b" "$a" retransmits "${hosts[@]}")
	line="retransmits $retx"
	line+=", rx_dup $(snap_delta "$b" "$a" rx_dup "${hosts[@]}")"
	line+=", recalls $(snap_delta "$b" "$a" recalls "${hosts[@]}")"
	line+=", rx_rdm_msgs $(snap_delta "$b" "$a" rx_rdm_msgs "${hosts[@]}")"
	diag "$tag: $line"
	if ! snap_has "$a" retransmits; then
		tap_fail "$tag: hosts retransmitted" \
			"no host reports a retransmits counter"
	elif [ "$retx" -gt 0 ]; then
		tap_pass "$tag: hosts retransmitted" "$retx"
	else
		tap_fail "$tag: hosts retransmitted" \
			"retransmits did not grow with $loss loss"
	fi
done
