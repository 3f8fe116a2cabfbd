#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Best-effort deadlines (issue 15): a message is delivered only before its
# timestamp plus ack_timeout_ms, by the receiver's clock.  h1's uplink
# delays everything by one and a half ACK timeouts (netem): every message
# h1 sends reaches h2 past its deadline, so h2 must drop it (rx_expired)
# and say so, and h1 must report it as not delivered (ONEPIPE_EE_TIMEOUT,
# ETIMEDOUT) -- never deliver it, never leave it unreported, never report
# its fate unknown: the receiver's answer comes back within the time the
# sender waits for it.  Then the delay goes and the same traffic is
# delivered whole, with no notification: the drops were the deadline's.
source "$(dirname "$0")/lib.sh"

SCATS=${OP_SCATS:-20}
ACK_MS=$((400 * OP_SLOW_NET))
DELAY_MS=$((ACK_MS * 3 / 2))
INTERVAL_US=$(send_interval_us 20000)

tap_plan "fabric up 2 hosts" "netem delay on h1's uplink" \
	"delayed round ran" "nothing delivered past the deadline" \
	"every message notified ETIMEDOUT, code TIMEOUT" \
	"h2 counted the drops (rx_expired)" \
	"delayed op-check --require-notified" "netem off" \
	"prompt round ran" "prompt op-check --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts 2 --tors 1 --ack-timeout-ms "$ACK_MS" ||
	tap_abort "fabric up failed"
tap_pass "fabric up 2 hosts"

# round NAME: h1:1001 sends SCATS messages to h2:1001, which receives.
round()
{
	logs=("$WORK/$1-h1.log" "$WORK/$1-h2.log")
	traffic_start h1 1001 "${logs[0]}" 120 --peers 2:1001 \
		--scatterings "$SCATS" --fanout 1 --size 100 \
		--interval-us "$INTERVAL_US" --linger-ms 2000 --drain --quiet
	traffic_start h2 1001 "${logs[1]}" 120 --linger-ms 2000 --quiet
	traffic_go
	check_traffic_ran "$1 round ran"
}

if netem_set h1 --dir up delay "${DELAY_MS}ms"; then
	tap_pass "netem delay on h1's uplink" "${DELAY_MS} ms, ack timeout ${ACK_MS} ms"
else
	tap_abort "fabric netem h1 delay failed"
fi
snapshot "$WORK/before" hosts
round delayed
snapshot "$WORK/after" hosts

recvd=$(count_lines R "${logs[@]}")
if [ "$recvd" -eq 0 ]; then
	tap_pass "nothing delivered past the deadline"
else
	tap_fail "nothing delivered past the deadline" "$recvd delivered"
fi

# E lines: E TS DST SCAT IDX ERRNO CODE
bad=$(awk '$1 == "E" && !($6 == 110 && $7 == 1)' "${logs[@]}" | head -n 5)
errs=$(count_lines E "${logs[@]}")
if [ "$errs" -eq "$SCATS" ] && [ -z "$bad" ]; then
	tap_pass "every message notified ETIMEDOUT, code TIMEOUT" "$errs"
else
	diag "other notifications: $bad"
	tap_fail "every message notified ETIMEDOUT, code TIMEOUT" \
		"$errs E lines for $SCATS messages"
fi

expired=$(snap_delta "$WORK/before" "$WORK/after" rx_expired h2)
if [ "$expired" -ge "$SCATS" ]; then
	tap_pass "h2 counted the drops (rx_expired)" "$expired"
else
	tap_fail "h2 counted the drops (rx_expired)" \
		"$expired for $SCATS messages"
fi
run_check "delayed op-check --require-notified" --require-notified \
	"${logs[@]}"

if netem_set h1 off; then
	tap_pass "netem off"
else
	tap_abort "fabric netem h1 off failed"
fi
round prompt
run_check "prompt op-check --expect-all" --expect-all "${logs[@]}"
