#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reliable flow control when hosts disagree on net.onepipe.rdm_window: h1
# grants 16, h2 256.  A SOCK_RDM reader on h1 stops reading for a few
# seconds while two h2 senders send to it as fast as they may.  h2 sends
# one message until h1's first ACK says what h1 grants, then keeps to
# h1's edges.  That must cost neither side anything but time:
#
#   - h2 never sends past h1's edge (h1 would drop it: rx_overwindow),
#     and h1 never holds more than its own window from h2 (the receiver
#     bounds what it holds whatever the sender does);
#   - h2 does not take the slow reader for a dead one: no send failure,
#     no recall, few resends;
#   - after the pause every message is delivered exactly once, in order.
source "$(dirname "$0")/lib.sh"

RX_WINDOW=16
TX_WINDOW=256
PAUSE_MS=${OP_RDM_PAUSE_MS:-8000}
SCATS=${OP_SCATS:-400}
DIAG_KEYS+=" retransmits rx_overwindow recalls window_probes"

tap_plan "fabric up 2 hosts" "windows set: h1 $RX_WINDOW, h2 $TX_WINDOW" \
	"3 op-traffic processes ran" "every message was sent" \
	"h2 kept to h1's edge" \
	"h1 held at most its window from h2" \
	"h2 resent little into the full window" \
	"no send failures" "no recalls" "op-check --reliable --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts 2 --tors 1 || tap_abort "fabric up failed"
tap_pass "fabric up 2 hosts"

if fx h1 sysctl -qw net.onepipe.rdm_window=$RX_WINDOW &&
   fx h2 sysctl -qw net.onepipe.rdm_window=$TX_WINDOW; then
	tap_pass "windows set: h1 $RX_WINDOW, h2 $TX_WINDOW"
else
	tap_abort "cannot set net.onepipe.rdm_window"
fi

common=(--type rdm --size 200 --linger-ms 15000 --seed 5 --quiet)
snapshot "$WORK/before" hosts
traffic_start h1 1001 "$WORK/sink.log" 120 "${common[@]}" \
	--rcvbuf 4096 --recv-pause-ms "0:$PAUSE_MS"
logs=("$WORK/sink.log")
for p in 1001 1002; do
	traffic_start h2 "$p" "$WORK/h2-$p.log" 120 "${common[@]}" \
		--peers 1:1001 --fanout 1 --scatterings "$SCATS" \
		--interval-us 0
	logs+=("$WORK/h2-$p.log")
done
traffic_go
# Half way through the pause h2's senders are blocked on h1's window.
sleep $((PAUSE_MS / 2000))
held=$(fx h1 "$ONEPIPE" -j peer show |
	grep -o '"rx_held":[0-9]*' | cut -d: -f2 | sort -n | tail -n 1)
check_traffic_ran "3 op-traffic processes ran"
snapshot "$WORK/after" hosts
check_all_sent "every message was sent" $((2 * SCATS)) "${logs[@]}"

over=$(snap_delta "$WORK/before" "$WORK/after" rx_overwindow h1)
if [ "$over" -eq 0 ]; then
	tap_pass "h2 kept to h1's edge" "rx_overwindow 0"
else
	tap_fail "h2 kept to h1's edge" "h1 dropped $over messages past it"
fi
if [ -n "$held" ] && [ "$held" -le $RX_WINDOW ]; then
	tap_pass "h1 held at most its window from h2" "held $held"
else
	tap_fail "h1 held at most its window from h2" "held ${held:-?}"
fi
# A sender that overran and resent into the full window every timeout
# cost thousands of packets in the pause.
retx=$(snap_delta "$WORK/before" "$WORK/after" retransmits h2)
if [ "$retx" -le $((2 * TX_WINDOW)) ]; then
	tap_pass "h2 resent little into the full window" "$retx resends"
else
	tap_fail "h2 resent little into the full window" \
		"$retx resends (at most $((2 * TX_WINDOW)))"
fi
check_no_failures "no send failures" "${logs[@]}"
recalls=$(snap_delta "$WORK/before" "$WORK/after" recalls h2)
if [ "$recalls" -eq 0 ]; then
	tap_pass "no recalls"
else
	tap_fail "no recalls" "$recalls recalls"
fi
run_check "op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"
