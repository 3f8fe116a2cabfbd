#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Best-effort deadlines (issue 15): a message is delivered only before its
# deadline, by the receiver's clock: its timestamp plus ack_timeout_ms, or
# more when the delay its sender measured towards the receiver asks for
# it, up to be_deadline_max_ms.  Three hosts; netem delays one uplink by
# one and a half ACK timeouts.
#
#   delayed  h1's uplink delayed, be_deadline_max_ms pinned to the ACK
#            timeout: every message h1 sends reaches h2 past its
#            deadline, so h2 must drop it (rx_expired) and say so, and h1
#            must report it as not delivered (ONEPIPE_EE_TIMEOUT,
#            ETIMEDOUT) -- never deliver it, never leave it unreported,
#            never report its fate unknown: the receiver's answer comes
#            back within the time the sender waits for it
#   adapts   the cap raised: the expiry NAKs of the round before said when
#            h2 refused the messages, which timed the delay, so h1's
#            deadline towards h2 covers it (peer show) and the same
#            traffic is delivered whole, delay and all
#   lag      h1's delay gone, h3's uplink delayed instead, the cap pinned
#            again: h2's messages reach h1 at once but wait there for a
#            barrier that lags by the delay, and h2's queries close them
#            first (nothing delivered, every one notified ETIMEDOUT)
#   lag-adapts  the cap raised: those answers said the messages had been
#            waiting, which timed the lag, so h2's deadline towards h1
#            covers it and the same traffic is delivered whole
#   prompt   no delay: delivered whole, with no notification
source "$(dirname "$0")/lib.sh"

SCATS=${OP_SCATS:-20}
ACK_MS=$((400 * OP_SLOW_NET))
DELAY_MS=$((ACK_MS * 3 / 2))
CAP_MS=$((ACK_MS * 10))
INTERVAL_US=$(send_interval_us 20000)
# The delayed link stays in the barrier through the delay (its silence
# when the delay starts, and its lag after): receivers then wait for it,
# rather than refusing the delayed messages as below their barrier.
BEACON_US=${OP_INTERVAL_US:-$((2000 * OP_SLOW_BEACON))}
LINK_IV=$((DELAY_MS * 3000 / BEACON_US))
[ "$LINK_IV" -le 1000 ] || LINK_IV=1000

tap_plan "fabric up 3 hosts" "netem delay on h1's uplink" \
	"delayed: be_deadline_max_ms pinned" "delayed round ran" \
	"delayed: nothing delivered past the deadline" \
	"delayed: every message notified ETIMEDOUT, code TIMEOUT" \
	"delayed: h2 counted the drops (rx_expired)" \
	"delayed op-check --require-notified" \
	"adapts: be_deadline_max_ms raised" \
	"adapts: h1's deadline towards h2 covers the delay" \
	"adapts round ran" "adapts op-check --expect-all" \
	"netem: h1 off, h3 delayed" \
	"lag: be_deadline_max_ms pinned" "lag round ran" \
	"lag: nothing delivered past the deadline" \
	"lag: every message notified ETIMEDOUT, code TIMEOUT" \
	"lag op-check --require-notified" \
	"lag-adapts: be_deadline_max_ms raised" \
	"lag-adapts: h2's deadline towards h1 covers the lag" \
	"lag-adapts round ran" "lag-adapts op-check --expect-all" \
	"netem off" "prompt round ran" "prompt op-check --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
fabric_up --hosts 3 --tors 1 --ack-timeout-ms "$ACK_MS" \
	--interval-us "$BEACON_US" --timeout-intervals "$LINK_IV" ||
	tap_abort "fabric up failed"
tap_pass "fabric up 3 hosts"

# round NAME SRC DST: hSRC:1001 sends SCATS messages to hDST:1001.
round()
{
	logs=("$WORK/$1-h$2.log" "$WORK/$1-h$3.log")
	traffic_start "h$2" 1001 "${logs[0]}" 120 --peers "$3:1001" \
		--scatterings "$SCATS" --fanout 1 --size 100 \
		--interval-us "$INTERVAL_US" --linger-ms 2000 --drain --quiet
	traffic_start "h$3" 1001 "${logs[1]}" 120 --linger-ms 2000 --quiet
	traffic_go
	check_traffic_ran "$1 round ran"
}

# cap NAME MS: be_deadline_max_ms on every host.
cap()
{
	if hosts_sysctl net.onepipe.be_deadline_max_ms="$2"; then
		tap_pass "$1" "$2 ms (ack timeout $ACK_MS ms)"
	else
		tap_abort "sysctl be_deadline_max_ms failed"
	fi
}

# expired NAME: the round's messages were all refused, never delivered,
# and each notified as truly not delivered.
expired()
{
	local recvd bad errs

	recvd=$(count_lines R "${logs[@]}")
	if [ "$recvd" -eq 0 ]; then
		tap_pass "$1: nothing delivered past the deadline"
	else
		tap_fail "$1: nothing delivered past the deadline" \
			"$recvd delivered"
	fi
	# E lines: E TS DST SCAT IDX ERRNO CODE
	bad=$(awk '$1 == "E" && !($6 == 110 && $7 == 1)' "${logs[@]}" |
		head -n 5)
	errs=$(count_lines E "${logs[@]}")
	if [ "$errs" -eq "$SCATS" ] && [ -z "$bad" ]; then
		tap_pass "$1: every message notified ETIMEDOUT, code TIMEOUT" \
			"$errs"
	else
		diag "other notifications: $bad"
		tap_fail "$1: every message notified ETIMEDOUT, code TIMEOUT" \
			"$errs E lines for $SCATS messages"
	fi
}

# covers NAME SRC DST: SRC's deadline towards DST (peer show -j, what a
# message stamped now gets) is longer than the delay.
covers()
{
	local out dl_us

	out=$(ip netns exec "op-h$2" timeout $((30 * OP_SLOW)) \
		"$ONEPIPE" -j peer show 2>&1)
	dl_us=$(python3 -c 'import json, sys
print(next((p.get("be_deadline_us", 0) for p in json.loads(sys.argv[1])
            if p.get("host") == int(sys.argv[2])), 0))' "$out" "$3" \
		2>/dev/null || echo 0)
	if [ "$dl_us" -gt "$((DELAY_MS * 1000))" ]; then
		tap_pass "$1" "$((dl_us / 1000)) ms for a ${DELAY_MS} ms delay"
	else
		diag "peer show: $out"
		tap_fail "$1" "$dl_us us for a ${DELAY_MS} ms delay"
	fi
}

if netem_set h1 --dir up delay "${DELAY_MS}ms"; then
	tap_pass "netem delay on h1's uplink" "${DELAY_MS} ms"
else
	tap_abort "fabric netem h1 delay failed"
fi
cap "delayed: be_deadline_max_ms pinned" "$ACK_MS"
snapshot "$WORK/before" hosts
round delayed 1 2
snapshot "$WORK/after" hosts
expired delayed
expired_n=$(snap_delta "$WORK/before" "$WORK/after" rx_expired h2)
if [ "$expired_n" -ge "$SCATS" ]; then
	tap_pass "delayed: h2 counted the drops (rx_expired)" "$expired_n"
else
	tap_fail "delayed: h2 counted the drops (rx_expired)" \
		"$expired_n for $SCATS messages"
fi
run_check "delayed op-check --require-notified" --require-notified \
	"${logs[@]}"

cap "adapts: be_deadline_max_ms raised" "$CAP_MS"
covers "adapts: h1's deadline towards h2 covers the delay" 1 2
round adapts 1 2
run_check "adapts op-check --expect-all" --expect-all "${logs[@]}"

if netem_set h1 off && netem_set h3 --dir up delay "${DELAY_MS}ms"; then
	tap_pass "netem: h1 off, h3 delayed" "${DELAY_MS} ms"
else
	tap_abort "fabric netem failed"
fi
cap "lag: be_deadline_max_ms pinned" "$ACK_MS"
round lag 2 1
expired lag
run_check "lag op-check --require-notified" --require-notified "${logs[@]}"

cap "lag-adapts: be_deadline_max_ms raised" "$CAP_MS"
covers "lag-adapts: h2's deadline towards h1 covers the lag" 2 1
round lag-adapts 2 1
run_check "lag-adapts op-check --expect-all" --expect-all "${logs[@]}"

if netem_set h3 off; then
	tap_pass "netem off"
else
	tap_abort "fabric netem h3 off failed"
fi
round prompt 1 2
run_check "prompt op-check --expect-all" --expect-all "${logs[@]}"
