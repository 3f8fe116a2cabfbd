#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The reliable service (SOCK_RDM) under ECN marking: 4 hosts behind 2
# ToRs, 6 sender processes on h1-h3 (two per host) all sending to one
# receiver process on h4, while netem marks 5% of the packets CE instead
# of dropping them (netem "loss 5% ecn" marks ECT packets and drops only
# the others) on two links towards the receiver:
#
#   tor2 -> h4     marks what tor2 sends: tor2 must send ECT(0);
#   spine -> tor2  marks what the spine sends (h1's and h2's traffic):
#                  the spine must send ECT(0), and tor2 must carry the
#                  CE mark on to h4.
#
# Marks are not losses: everything is delivered exactly once and in
# order (op-check --reliable --expect-all) with no retransmission at all,
# h4 counts the marks (ecn_marks, at about the rate netem gives them),
# tor2 forwards the spine's marks (its stats: rx_ce on port spine, ce_fwd
# on port h4), and the senders echo-driven congestion windows are cut
# (cwnd_cuts).  A switch that lost the ECN field would turn the marks
# into drops (netem drops non-ECT packets): retransmissions and no marks.
source "$(dirname "$0")/lib.sh"

HOSTS=4
RECEIVER=h4
RX_EP=4:1001
SENDERS=(1 2 3)
PORTS=(1001 1002)
SCATS=${OP_SCATS:-150}
INTERVAL_US=$(send_interval_us 5000)
MARK=${OP_ECN_MARK:-5%}
# A generous minimum RTO: an emulated guest can hold an ACK back for
# tens of ms, and a spurious retransmission would look like a loss here.
# A real loss is still retransmitted well within the linger time.
RTO_MIN_MS=${OP_RDM_RTO_MIN_MS:-500}
# Links are removed after 1 s of silence, not lib.sh's 200 ms: a guest
# stalled by a busy machine removes every link of the fabric at once, and
# reliable messages in flight then arrive below the commit barrier and
# are refused as late.  That is not what this scenario is about.
TIMEOUT_IVS=${OP_TIMEOUT_INTERVALS:-500}
DIAG_KEYS+=" retransmits rx_dup rx_rdm_msgs ecn_marks cwnd_cuts"
DIAG_KEYS+=" window_stalls recalls"

tap_plan "fabric up 4 hosts 2 tors" "SOCK_RDM sysctls set" \
	"netem marks $MARK CE on tor2->h4 and spine->tor2" \
	"7 op-traffic processes ran" "every message was sent" \
	"every message was delivered" "no send failures" \
	"op-check --reliable --expect-all" \
	"$RECEIVER counted CE marks" \
	"marks at about the rate netem gives them" \
	"tor2 carried the spine's CE marks to $RECEIVER" \
	"senders cut their congestion windows" \
	"marks are not losses: no retransmission"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts "$HOSTS" --tors 2 --timeout-intervals "$TIMEOUT_IVS" ||
	tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

hosts_sysctl net.onepipe.rdm_rto_min_ms="$RTO_MIN_MS" ||
	tap_abort "cannot set the SOCK_RDM sysctls"
tap_pass "SOCK_RDM sysctls set" "rdm_rto_min_ms $RTO_MIN_MS"

# --dir down: the upper end of each link, i.e. tor2's dev h4 and the
# spine's dev tor2.
if netem_set "$RECEIVER" --dir down loss "$MARK" ecn &&
	netem_set tor2 --dir down loss "$MARK" ecn; then
	tap_pass "netem marks $MARK CE on tor2->h4 and spine->tor2"
else
	tap_abort "fabric netem failed"
fi

mapfile -t hosts < <(fabric_hosts)
senders=()
for h in "${SENDERS[@]}"; do
	senders+=("h$h")
done
snapshot "$WORK/before" all
logs=("$WORK/rx-$RECEIVER.log")
want=$((SCATS * ${#SENDERS[@]} * ${#PORTS[@]}))
traffic_start "$RECEIVER" "${RX_EP#*:}" "${logs[0]}" 240 --type rdm \
	--expect "$want" --linger-ms 10000 --quiet
for h in "${SENDERS[@]}"; do
	for p in "${PORTS[@]}"; do
		log=$WORK/tx-h$h-$p.log
		logs+=("$log")
		traffic_start "h$h" "$p" "$log" 240 --type rdm \
			--peers "$RX_EP" --scatterings "$SCATS" --fanout 1 \
			--size 100 --interval-us "$INTERVAL_US" \
			--linger-ms 5000 --seed 11 --quiet
	done
done
traffic_go
check_traffic_ran "7 op-traffic processes ran"
snapshot "$WORK/after" all

check_all_sent "every message was sent" "$want" "${logs[@]}"

check_all_delivered "every message was delivered" "$want" "${logs[@]}"
check_no_failures "no send failures" "${logs[@]}"

run_check "op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"

b=$WORK/before
a=$WORK/after
delta() { snap_delta "$b" "$a" "$@"; }

marks=$(delta ecn_marks "$RECEIVER")
rxmsgs=$(delta rx_rdm_msgs "$RECEIVER")
cuts=$(delta cwnd_cuts "${senders[@]}")
retx=$(delta retransmits "${hosts[@]}")
sp_rx_ce=$(delta rx_ce tor2:spine)
h4_ce_fwd=$(delta ce_fwd "tor2:$RECEIVER")
diag "$RECEIVER: ecn_marks $marks, rx_rdm_msgs $rxmsgs, rx_dup $(delta rx_dup "$RECEIVER")" \
	"senders: cwnd_cuts $cuts, retransmits $retx, window_stalls $(delta window_stalls "${senders[@]}")" \
	"tor2: rx_ce from spine $sp_rx_ce, ce_fwd to $RECEIVER $h4_ce_fwd (the rest: the spine's beacons)"

if ! snap_has "$a" ecn_marks; then
	tap_fail "$RECEIVER counted CE marks" "no ecn_marks counter"
elif [ "$marks" -gt 0 ]; then
	tap_pass "$RECEIVER counted CE marks" "$marks"
else
	tap_fail "$RECEIVER counted CE marks" "ecn_marks did not grow"
fi

# h3's messages cross one marking link, h1's and h2's two: about 5% and
# 9.75% of them, 8% overall.  Between 2% and 20% tells "marked by netem"
# from "never" and from "always" (a switch that marked everything).
if [ "$rxmsgs" -gt 0 ] && [ $((marks * 100)) -ge $((rxmsgs * 2)) ] &&
	[ $((marks * 100)) -le $((rxmsgs * 20)) ]; then
	tap_pass "marks at about the rate netem gives them" \
		"$marks marks for $rxmsgs messages"
else
	tap_fail "marks at about the rate netem gives them" \
		"$marks marks for $rxmsgs messages, want 2%..20%"
fi

# Every CE datagram tor2 forwards to h4 came in CE: from the spine.
if ! snap_has "$a" ce_fwd; then
	tap_fail "tor2 carried the spine's CE marks to $RECEIVER" \
		"the switch stats have no ce_fwd"
elif [ "$h4_ce_fwd" -gt 0 ] && [ "$h4_ce_fwd" -le "$sp_rx_ce" ]; then
	tap_pass "tor2 carried the spine's CE marks to $RECEIVER" \
		"$h4_ce_fwd of $sp_rx_ce"
else
	tap_fail "tor2 carried the spine's CE marks to $RECEIVER" \
		"ce_fwd $h4_ce_fwd, rx_ce $sp_rx_ce"
fi

if ! snap_has "$a" cwnd_cuts; then
	tap_fail "senders cut their congestion windows" "no cwnd_cuts counter"
elif [ "$cuts" -gt 0 ]; then
	tap_pass "senders cut their congestion windows" "$cuts cuts"
else
	tap_fail "senders cut their congestion windows" \
		"cwnd_cuts did not grow with $marks marks"
fi

if ! snap_has "$a" retransmits; then
	tap_fail "marks are not losses: no retransmission" \
		"no retransmits counter"
elif [ "$retx" -eq 0 ]; then
	tap_pass "marks are not losses: no retransmission"
else
	tap_fail "marks are not losses: no retransmission" \
		"$retx retransmits"
fi
