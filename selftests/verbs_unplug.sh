#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An RDMA device unplugged under traffic (verbs transport, Soft-RoCE):
# 4 hosts behind 2 ToRs, each with a SOCK_DGRAM process (port 1001) and a
# SOCK_RDM process (port 2001) sending scatterings of 2 messages larger
# than the RDMA MTU to the other processes of their service.  1.5 s into
# the round `rdma link delete` removes h4's device.  Then:
#
# - h4's host goes down: the device's removal takes it down as `onepipe
#   host down` would, its messages still waiting for an ACK are notified
#   with ENETDOWN (ONEPIPE_EE_DOWN), and `onepipe dev show` no longer
#   lists the device.  netem delays every packet to h4 by ACK_DELAY_MS
#   so that there are such messages: on a fast machine an ACK otherwise
#   comes back long before h4's next send, and h4 may have none pending;
# - the others see h4 vanish: best-effort messages to it time out and are
#   notified, reliable ones fail with EHOSTUNREACH and the rest of their
#   scatterings is recalled (rdm_rto_min_ms 50, rdm_retries 4);
# - nothing is misordered or lost without a notification: op-check
#   --require-notified on every best-effort log, op-check --reliable on
#   h1-h3's reliable logs (h4's deliveries and h4's own messages are those
#   of a failed host: --unlogged-receivers unknown
#   --ignore-unknown-senders);
# - traffic among h1-h3 goes on: their reliable messages to each other
#   stamped after the unplug are all delivered;
# - the kernel logs no warning (run-in-vm checks that too).
#
# The scenario is about the verbs transport, so it always runs on it; where
# Soft-RoCE is missing every point is a SKIP.
OP_TRANSPORT=verbs
source "$(dirname "$0")/lib.sh"

SCATS=${OP_SCATS:-400}
INTERVAL_US=$(send_interval_us 20000)
SIZE=1500
UNPLUG_AFTER_MS=1500
DG_PORT=1001
RDM_PORT=2001
EE_DOWN=5
# Twice the send interval: h4 always has a few reliable messages in
# flight (at least 1 ms: netem takes whole milliseconds here).
ACK_DELAY_MS=$((2 * INTERVAL_US / 1000))
((ACK_DELAY_MS > 0)) || ACK_DELAY_MS=1
# A sender learns that h4 is gone after rdm_retries resends, each after
# up to the 2 s RTO cap once RTT samples grew under load: ~10 s in which
# its later messages cannot commit.  A process must outlive that.
LINGER_MS=15000
DIAG_KEYS+=" retransmits recalls rx_rdm_msgs"

tap_plan "fabric up 4 hosts 2 tors (verbs)" "SOCK_RDM sysctls set" \
	"netem delays what goes to h4 by $ACK_DELAY_MS ms" \
	"rdma link delete of h4's device during the traffic" \
	"h4's host is down" "h4's device is gone from dev show" \
	"8 op-traffic processes ran" \
	"h4's unfinished messages were notified with ENETDOWN" \
	"dgram: op-check --require-notified (all logs)" \
	"rdm: op-check --reliable (h1-h3)" \
	"rdm: h1-h3 messages among themselves after the unplug delivered" \
	"no kernel warnings"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
mark=$(dmesg_mark)
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors (verbs)"

hosts_sysctl net.onepipe.rdm_rto_min_ms=50 net.onepipe.rdm_retries=4 ||
	tap_abort "cannot set the SOCK_RDM sysctls"
tap_pass "SOCK_RDM sysctls set"

netem_set h4 --dir down delay "${ACK_DELAY_MS}ms" ||
	tap_abort "cannot delay h4's incoming packets"
tap_pass "netem delays what goes to h4 by $ACK_DELAY_MS ms"

# One mesh per service: logs $WORK/dgram-hN-1001.log, $WORK/rdm-hN-2001.log.
declare -A svc_port=([dgram]=$DG_PORT [rdm]=$RDM_PORT)
for type in dgram rdm; do
	mesh_eps 4 "${svc_port[$type]}"
	mesh_start "$type" 180 --type "$type" --scatterings "$SCATS" \
		--fanout 2 --size "$SIZE" --interval-us "$INTERVAL_US" \
		--linger-ms "$LINGER_MS" --seed 11 --until-down --quiet
done
traffic_go
sleep_until $(($(round_start_ns) + UNPLUG_AFTER_MS * 1000000))
down_at=$(now_ns)
if out=$(timeout $((60 * OP_SLOW)) "$FABRIC" rdma-delete h4 2>&1); then
	tap_pass "rdma link delete of h4's device during the traffic" \
		"it took $((($(now_ns) - down_at) / 1000000)) ms"
else
	diag "$out"
	tap_fail "rdma link delete of h4's device during the traffic" \
		"fabric rdma-delete h4 failed"
fi
step "h4's device deleted"

state=$(fx h4 "$ONEPIPE" -j host show 2>/dev/null | json_get state)
if [ "$state" = down ]; then
	tap_pass "h4's host is down"
else
	tap_fail "h4's host is down" "host show says state '${state:-?}'"
fi
if "$ONEPIPE" -j dev show | grep -q '"dev":"oprh\?4"'; then
	tap_fail "h4's device is gone from dev show" "$("$ONEPIPE" dev show)"
else
	tap_pass "h4's device is gone from dev show"
fi

check_traffic_ran "8 op-traffic processes ran"

# h4's messages: those not ACKed when the device went were notified DOWN.
down_notes=$(awk -v c="$EE_DOWN" '$1 == "E" && $7 == c' \
	"$WORK/dgram-h4-$DG_PORT.log" "$WORK/rdm-h4-$RDM_PORT.log" | wc -l)
other_codes=$(awk -v c="$EE_DOWN" '$1 == "E" && $7 != c' \
	"$WORK/dgram-h4-$DG_PORT.log" "$WORK/rdm-h4-$RDM_PORT.log" | wc -l)
# (Messages that failed earlier, a late ACK say, have other codes; that
# none is lost unnoticed is op-check --require-notified's to say.)
if [ "$down_notes" -gt 0 ]; then
	tap_pass "h4's unfinished messages were notified with ENETDOWN" \
		"$down_notes notifications, $other_codes with other codes"
else
	tap_fail "h4's unfinished messages were notified with ENETDOWN" \
		"no DOWN notification, $other_codes with other codes"
fi

run_check "dgram: op-check --require-notified (all logs)" \
	--require-notified "$WORK"/dgram-h*.log
run_check "rdm: op-check --reliable (h1-h3)" --reliable \
	--unlogged-receivers unknown --ignore-unknown-senders \
	"$WORK"/rdm-h[123]-"$RDM_PORT".log

# Reliable messages among h1-h3 stamped after the unplug, in scatterings
# without h4: every one delivered once.
python3 - "$down_at" "$WORK" "$RDM_PORT" >"$WORK/after.out" 2>&1 <<'PY'
import collections, sys

down_at, work, port = int(sys.argv[1]), sys.argv[2], sys.argv[3]
M = 1 << 48
sent, got = [], collections.Counter()
for h in (1, 2, 3):
    lines = [ln.split() for ln in open("%s/rdm-h%d-%s.log" % (work, h, port))]
    me = "%s:%s" % tuple(lines[0][1:3])
    for f in lines:
        if f[0] == "S":
            dests = f[3].split(",")
            late = (int(f[1]) - down_at) % M < M // 2
            if late and not any(d.startswith("4:") for d in dests):
                sent += [(me, f[2], i) for i in range(len(dests))]
        elif f[0] == "R":
            got[(f[2], f[3], int(f[4]))] += 1
missing = [m for m in sent if got[m] != 1]
print("after %d missing %d %s" % (len(sent), len(missing), missing[:5]))
PY
read -r _ n_after _ n_missing _ <"$WORK/after.out" || n_after=
if [ -n "$n_after" ] && [ "$n_after" -gt 0 ] && [ "$n_missing" -eq 0 ]; then
	tap_pass "rdm: h1-h3 messages among themselves after the unplug delivered" \
		"$n_after messages"
else
	diag "$(cat "$WORK/after.out")"
	tap_fail "rdm: h1-h3 messages among themselves after the unplug delivered" \
		"see above"
fi

bad=$(dmesg_bad_since "$mark")
if [ -z "$bad" ]; then
	tap_pass "no kernel warnings"
else
	diag "$bad"
	tap_fail "no kernel warnings" "the kernel logged warnings"
fi
