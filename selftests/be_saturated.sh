#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Best effort at saturation (issue 15): 4 hosts on one switch, every host
# one non-blocking socket broadcasting to all 4 (itself included) as fast
# as the socket takes it (EAGAIN, then POLLOUT).
#
#   clean   no loss: at least 99 % of the accepted messages are delivered
#           (the window keeps what is in flight within the deadline), and
#           every one that is not was notified
#   loaded  the same with ack_timeout_ms at its default (100 ms) and a
#           process spinning on the guest's CPUs: the delay grows past
#           100 ms, and the deadlines must follow it (core/deadline.h)
#           rather than drop what the window let through; before they
#           did, 18-43 % of the messages expired here
#   lossy   1 % netem loss both ways on h1's and h2's links: every message
#           is delivered or notified, and no notification names a message
#           that was delivered (op-check's accounting: a notification is
#           true, but ONEPIPE_EE_UNKNOWN, which says it does not know)
source "$(dirname "$0")/lib.sh"

HOSTS=4
PORT=7
SECS=${OP_SAT_SECS:-5}
MIN_RATIO=${OP_SAT_MIN_RATIO:-0.99}

tap_plan "fabric up 4 hosts 1 tor" "clean round ran" \
	"clean: senders were held back (no POLLOUT, EAGAIN)" \
	"clean op-check --require-notified --min-delivered-ratio" \
	"ack_timeout_ms 100" "loaded round ran" \
	"loaded op-check --require-notified --min-delivered-ratio" \
	"ack_timeout_ms restored" \
	"netem loss on h1 and h2" "lossy round ran" \
	"lossy op-check --require-notified"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK"
fabric_up --hosts "$HOSTS" --tors 1 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 1 tor"

peers=$(seq -s, -f "%g:$PORT" 1 "$HOSTS")

# round NAME: every host broadcasts for SECS; sets $logs.
round()
{
	local h log
	logs=()
	for h in $(seq 1 "$HOSTS"); do
		log=$WORK/$1-h$h.log
		logs+=("$log")
		traffic_start "h$h" "$PORT" "$log" 180 --peers "$peers" \
			--fanout "$HOSTS" --size 64 --scatterings 100000000 \
			--duration-ms "$((SECS * 1000))" --interval-us 0 \
			--rcvbuf 4194304 --linger-ms 3000 --drain --quiet
	done
	traffic_go
	check_traffic_ran "$1 round ran"
}

round clean
# op-traffic's send_blocked: a send was due while the socket was not
# writable (a scattering waiting for credits), or it got EAGAIN.
held=$(summary_sum send_blocked "${logs[@]}")
if [ "$held" -gt 0 ]; then
	tap_pass "clean: senders were held back (no POLLOUT, EAGAIN)" "$held"
else
	tap_fail "clean: senders were held back (no POLLOUT, EAGAIN)" "never"
fi
run_check "clean op-check --require-notified --min-delivered-ratio" \
	--require-notified --min-delivered-ratio "$MIN_RATIO" "${logs[@]}"

ack_saved=$(ip netns exec op-h1 sysctl -n net.onepipe.ack_timeout_ms)
if hosts_sysctl net.onepipe.ack_timeout_ms=100; then
	tap_pass "ack_timeout_ms 100" "was $ack_saved"
else
	tap_abort "sysctl ack_timeout_ms failed"
fi
# One spinning process for the round (and its start and linger).
timeout "$(((SECS + 10) * OP_SLOW))" sh -c 'while :; do :; done' &
hog=$!
round loaded
kill "$hog" 2>/dev/null
wait "$hog" 2>/dev/null
run_check "loaded op-check --require-notified --min-delivered-ratio" \
	--require-notified --min-delivered-ratio "$MIN_RATIO" "${logs[@]}"
if hosts_sysctl net.onepipe.ack_timeout_ms="$ack_saved"; then
	tap_pass "ack_timeout_ms restored" "$ack_saved"
else
	tap_abort "sysctl ack_timeout_ms failed"
fi

if netem_set h1 loss 1% && netem_set h2 loss 1%; then
	tap_pass "netem loss on h1 and h2"
else
	tap_abort "fabric netem loss failed"
fi
round lossy
run_check "lossy op-check --require-notified" --require-notified \
	"${logs[@]}"
