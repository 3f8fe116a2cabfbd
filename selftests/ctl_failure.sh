#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Failures decided by the controller (onepiped, the paper's §5.2), end to
# end: 4 hosts behind 2 ToRs, the fabric's controller on (onepiped, one
# agent per host, switches with --controller, net.onepipe.controlled=1).
# One SOCK_RDM op-traffic per host sends scatterings to every other host
# (fanout 3) every 20 ms, for 14 s; each case then checks the logs with
# op-check --reliable --failures (the controller's decisions), and prints
# the delivery stall at the correct receivers: the longest gap between
# two deliveries (estimated receive time: ts + latency, exact unless a
# scattering waited for window before it was stamped) from 1 s before
# the fault on, in us and in beacon intervals, next to the longest gap
# before the fault; and when the controller decided and completed, after
# the failure timestamp (the last commit barrier heard from the failed
# side, i.e. about when it went silent), from onepiped's log.
#
# 1. flap: tor1's spine link down for FLAP_MS (fabric flap), shorter than
#    the commit timeout: nobody reports it, nobody fails, and every
#    message is delivered exactly once (op-check --reliable --expect-all).
# 2. kill h4 (fabric kill h4: its agent killed, its uplink cut for good),
#    2 s into the traffic: the controller declares h4 failed (one
#    failure, procedure back to idle); every correct host applied it (fail
#    show) and every process on h1-h3 was notified (F line, with the
#    decision's ts and epoch); traffic among h1-h3 goes on and is
#    delivered; failure atomicity holds (op-check --failures).
#    Then h4 comes back: fabric revive h4 (link and agent back), then
#    configured again (its transport was taken down, see below); its ToR
#    hears it again and reports the link up, and the controller makes it
#    rejoin as a new incarnation (REJOIN to h4, its first timestamp to
#    h1-h3); then
#    every message among all four hosts is delivered exactly once
#    (op-check --reliable --expect-all: nothing taken for a copy of the
#    old incarnation's messages).
# 3. on a fresh fabric, kill tor2 (its switch process): h3 and h4 fail
#    with it; the same checks with h1-h2 as the correct hosts.
#
# The helpers (traffic rounds, controller polling, the analysis, the kill
# case) are in ctl_lib.sh, with ctl_host_down_recall.sh's.
source "$(dirname "$0")/ctl_lib.sh"

FLAP_MS=${OP_FLAP_MS:-50}

tap_plan "fabric up 4 hosts 2 tors with the controller" \
	"flap: tor1's spine link flapped, shorter than the commit timeout" \
	"flap: traffic ran" "flap: nobody reported or failed" \
	"flap: op-check --reliable --expect-all" "flap: delivery stall" \
	"kill h4: fabric kill h4 during the traffic" \
	"kill h4: the controller failed h4 and went idle" \
	"kill h4: h1-h3 applied the decision (fail show)" \
	"kill h4: h1-h3 traffic ran" \
	"kill h4: h1-h3 processes notified (F lines)" \
	"kill h4: delivery among h1-h3 resumed" \
	"kill h4: op-check --reliable --failures" \
	"kill h4: delivery stall at h1-h3" \
	"revive h4: configured again, link and agent back" \
	"revive h4: h4 rejoined, the controller went idle" \
	"revive h4: traffic among all four ran" \
	"revive h4: op-check --reliable --expect-all" \
	"fabric up again" \
	"kill tor2: fabric kill tor2 during the traffic" \
	"kill tor2: the controller failed h3 h4 and went idle" \
	"kill tor2: h1-h2 applied the decision (fail show)" \
	"kill tor2: h1-h2 traffic ran" \
	"kill tor2: h1-h2 processes notified (F lines)" \
	"kill tor2: delivery among h1-h2 resumed" \
	"kill tor2: op-check --reliable --failures" \
	"kill tor2: delivery stall at h1-h2"

ctl_prereqs

# ---------------------------------------------------------------- setup

up_with_controller || tap_abort "fabric up with the controller failed"
tap_pass "fabric up 4 hosts 2 tors with the controller"

# ------------------------------------------------------------- 1. flap

round flap 7001
traffic_go
sleep_until $(($(round_start_ns) + FAULT_AFTER_MS * 1000000))
fault=$(now_ns)
out=$(timeout $((30 * OP_SLOW)) "$FABRIC" flap tor1 "$FLAP_MS" 2>&1)
us=$(echo "$out" | sed -n 's/.* down for at most \([0-9]*\) us.*/\1/p')
if [ -n "$us" ] && [ "$us" -lt "$COMMIT_TIMEOUT_US" ]; then
	tap_pass "flap: tor1's spine link flapped, shorter than the commit timeout" \
		"${out#fabric: }, commit timeout $COMMIT_TIMEOUT_US us"
else
	diag "$out"
	tap_fail "flap: tor1's spine link flapped, shorter than the commit timeout" \
		"down ${us:-?} us, commit timeout $COMMIT_TIMEOUT_US us"
fi
round_end
ran_ok "flap: traffic ran" "${logs[@]}"
timeout $((30 * OP_SLOW)) "$FABRIC" ctl show -j >"$WORK/flap-ctl.json" 2>&1
read -r nfail ndec nrep < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["controller"]
print(len(c["failures"]), c["counters"]["decisions"], c["counters"]["reports"])
' "$WORK/flap-ctl.json" 2>/dev/null || echo "? ? ?")
# Reports: switches report every port up once when they first hear it.
if [ "$nfail" = 0 ] && [ "$ndec" = 0 ]; then
	tap_pass "flap: nobody reported or failed" "$nrep link reports"
else
	timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/flap-ctl.out" 2>&1
	diag "$(head -n 40 "$WORK/flap-ctl.out")"
	tap_fail "flap: nobody reported or failed" \
		"failures $nfail, decisions $ndec, reports $nrep"
fi
run_check "flap: op-check --reliable --expect-all" --reliable --expect-all \
	"${logs[@]}"
analyse flap "$fault" 1,2,3,4
stall_point "flap: delivery stall" flap

# ----------------------------------------------------------- 2. kill h4

kill_case kill-h4 7002 4 1,2,3 h1-h3 "kill h4" \
	"fabric kill h4 during the traffic" fabric_kill h4

# ----------------------------------------------------------- 2b. rejoin

# revive_h4: link and agent back (fabric revive), then the transport
# (fabric kill leaves it up, but round_end took it down).  Link first:
# host set needs a route to the uplink.
revive_h4()
{
	timeout $((60 * OP_SLOW)) "$FABRIC" revive h4 && host_configure 4
}
rejoin_case "revive h4" "configured again, link and agent back" 4 7004 \
	revive_h4
keep_ctl_logs fabric-1

# --------------------------------------------------------- 3. kill tor2

if up_with_controller; then
	tap_pass "fabric up again"
else
	tap_abort "fabric up (second time) failed"
fi
kill_case kill-tor2 7003 3,4 1,2 h1-h2 "kill tor2" \
	"fabric kill tor2 during the traffic" fabric_kill tor2
keep_ctl_logs fabric-2
