#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A failure decision applied by the module (ONEPIPE_CMD_FAIL), driven
# straight over generic netlink (op_genl.py), no controller: 3 hosts on
# one ToR.  h1 sends reliable scatterings to two processes on h2 (port
# 7001 acknowledges process failures at once, port 7002 never does), h3
# sends to h2:7001.  1.5 s in, h2 is told that h3 failed at a timestamp
# 6 s ahead (AHEAD_MS: with a controller the timestamp is in the past,
# and the commit barrier stalls until every host has applied it; here
# nothing stalls, so it must lie ahead of the slow FAIL):
#
# - Callback: both processes get one notification (EHOSTDOWN,
#   ONEPIPE_EE_PROC_FAILED, host 3, the failure timestamp, epoch 1);
#   7001 goes on receiving h1's messages at once, 7002 gets nothing
#   stamped after the failure until net.onepipe.failure_hold_ms (10 s)
#   has passed, then all of it, in order;
# - Discard: h2 delivers none of h3's messages stamped at or after the
#   failure timestamp, all of those before it, and counts the discards;
# - the module says the failure is complete (ONEPIPE_CMD_EV_FAIL_DONE on
#   the "ctl" multicast group) and lists it (FAIL_GET);
# - a reliable send from h2 to h3 is refused with EHOSTDOWN;
# - bad requests are refused with the right errno and an extack message:
#   the same failure at another timestamp (EEXIST), this host's own
#   failure, a timestamp above 48 bits, a missing or a foreign attribute
#   (EINVAL), an unprivileged caller (EPERM); the same failure again is
#   accepted (a controller that took over re-sends);
# - then h3 rejoins as a new incarnation (ONEPIPE_CMD_REJOIN, to h3 itself,
#   which answers its first timestamp, then to h2 with it): its sequence
#   numbers start over on both sides, and more than a window (rdm_window
#   256) of reliable messages from it reaches h2, none taken for a copy
#   of the old incarnation's.
source "$(dirname "$0")/lib.sh"

GENL=$TOP/selftests/op_genl.py
HOLD_MS=10000
FAIL_AFTER_MS=1500
SCATS=600
# The failure timestamp lies this far after the FAIL is sent: a FAIL
# must reach the module before the messages it is about are delivered
# (with a controller, their commit barrier stalls until then; here
# nothing stalls, and python starts slowly in an emulated guest).
AHEAD_MS=6000
INTERVAL_US=20000

tap_plan "fabric up 3 hosts 1 tor" "traffic ran" \
	"FAIL applied at h2" "EV_FAIL_DONE multicast" "FAIL_GET lists it" \
	"both sockets notified" "acknowledging socket not held" \
	"unacknowledging socket held until failure_hold_ms" \
	"held messages delivered in order" \
	"nothing from h3 at or after its failure timestamp" \
	"h3's messages before it delivered" "discards counted" \
	"send to the failed host: EHOSTDOWN" "same FAIL again accepted" \
	"other timestamp: EEXIST" "own host: EINVAL" "ts above 48 bits: EINVAL" \
	"missing attribute: EINVAL" "foreign attribute: EINVAL" \
	"unprivileged: EPERM" "h3 rejoins: first timestamp" \
	"h3 rejoins again: same incarnation" "h2 applies h3's rejoin" \
	"new incarnation: more than a window delivered"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$ONEPIPE"
need_rdm
# No controller: this suite is the controller, over netlink.
fabric_up --hosts 3 --tors 1 ||
	tap_abort "fabric up failed"
tap_pass "fabric up 3 hosts 1 tor"
ip netns exec op-h2 sysctl -qw net.onepipe.failure_hold_ms=$HOLD_MS ||
	tap_abort "cannot set failure_hold_ms"
# h3 is declared failed but lives on, and no controller resumes it out of
# the commit minimum: its reliable messages stamped from the failure on,
# which h2 ignores, would hold everybody's commit barrier until it gives
# up on h2.  A small retry budget makes that quick.
ip netns exec op-h3 sysctl -qw net.onepipe.rdm_retries=2 \
	net.onepipe.rdm_rto_min_ms=20 ||
	tap_abort "cannot set h3's retry budget"

ip netns exec op-h2 python3 "$GENL" listen --count 1 --timeout 120 \
	>"$WORK/events.out" 2>&1 &
_pids+=("$!")
common=(--type rdm --size 64 --linger-ms 6000 --quiet)
traffic_start h2 7001 "$WORK/ack.log" 120 "${common[@]}" --failure-ack-ms 0
# The unacknowledging socket sees no progress while its messages are
# held (up to failure_hold_ms after the FAIL, later still in a slow
# guest): it must not stop lingering before they come.
traffic_start h2 7002 "$WORK/noack.log" 120 "${common[@]}" \
	--failure-ack-ms -1 --linger-ms $((HOLD_MS + 6000))
traffic_start h1 7001 "$WORK/h1.log" 120 "${common[@]}" \
	--peers 2:7001,2:7002 --fanout 2 --scatterings $SCATS \
	--interval-us $INTERVAL_US
traffic_start h3 7001 "$WORK/h3.log" 120 "${common[@]}" \
	--peers 2:7001 --scatterings $SCATS --interval-us $INTERVAL_US
for _ in $(seq 50); do
	grep -q ready "$WORK/events.out" && break
	sleep 0.2
done
# The FAIL goes out FAIL_AFTER_MS into the round, stamped AHEAD_MS after
# that; python starts before the round (it took over 6 s once in CI).
timeout $((60 * OP_SLOW)) ip netns exec op-h2 python3 "$GENL" fail \
	--epoch 1 --host 3 --start-file "$WORK/start.$_round" \
	--after-ms $FAIL_AFTER_MS --ahead-ms $AHEAD_MS >"$WORK/fail.out" 2>&1 &
fail_pid=$!
_pids+=("$fail_pid")
traffic_go
wait "$fail_pid"
out=$(head -n 1 "$WORK/fail.out")
fail_ts=0 t_before=0 t_after=0
if [[ $(sed -n 2p "$WORK/fail.out") =~ \
      ^fail_ts\ ([0-9]+)\ sent\ ([0-9]+)\ acked\ ([0-9]+)$ ]]; then
	fail_ts=${BASH_REMATCH[1]}
	t_before=${BASH_REMATCH[2]}
	t_after=${BASH_REMATCH[3]}
	step "FAIL sent in $(((t_after - t_before) / 1000000)) ms," \
		"$(((t_before - $(round_start_ns)) / 1000000)) ms into the round"
	[ $((t_after - t_before)) -lt $((AHEAD_MS * 1000000)) ] ||
		out="applied too late for this test: $out"
else
	out="no timed FAIL: $(cat "$WORK/fail.out")"
fi
check_traffic_ran "traffic ran"
tap_check "FAIL applied at h2" "$out" [ "$out" = "errno 0 " ]

for _ in $(seq 50); do
	grep -q EV_FAIL_DONE "$WORK/events.out" && break
	sleep 0.2
done
tap_check "EV_FAIL_DONE multicast" "no event" grep -q \
	'"cmd": "EV_FAIL_DONE".*"epoch": 1.*"fail_host": 3' "$WORK/events.out"
ip netns exec op-h2 python3 "$GENL" fail-get >"$WORK/fail-get.out" 2>&1
tap_check "FAIL_GET lists it" "not listed" grep -q \
	"\"fail_host\": 3, \"fail_ts\": $fail_ts, \"fail_pending\": 0" \
	"$WORK/fail-get.out"

# The logs: F lines, and R lines whose delivery time is ts + latency.
python3 - "$WORK" "$fail_ts" "$HOLD_MS" "$t_before" "$t_after" \
	>"$WORK/check.out" 2>&1 <<'PY'
import os, sys
work, fts, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 10**6
M = 1 << 48
t_before, t_after = int(sys.argv[4]) % M, int(sys.argv[5]) % M
M = 1 << 48
def after(a, b):          # a at or after b, 48-bit wrap-around
    return (a - b) % M < M // 2
def lines(name):
    return [ln.split() for ln in open(os.path.join(work, name))]
res = {}
for name in ("ack", "noack"):
    ls = lines(name + ".log")
    fl = [f for f in ls if f[0] == "F"]
    res[name + "_notified"] = (len(fl) == 1 and int(fl[0][1]) == fts and
                               fl[0][2] == "3" and fl[0][3] == "1")
    late = [f for f in ls if f[0] == "R" and f[2].startswith("1:") and
            after(int(f[1]), fts)]
    # delivery times (ts + latency), relative to when the FAIL was sent
    res[name + "_late"] = [((int(f[1]) + int(f[6])) - t_before) % M
                           for f in late]
    ts = [int(f[1]) for f in ls if f[0] == "R"]
    res[name + "_ordered"] = all((b - a) % M < M // 2
                                 for a, b in zip(ts, ts[1:]))
a = res["ack_late"]
n = res["noack_late"]
print("ack: %d late, first after %.0f ms" % (len(a), min(a) / 1e6 if a else -1))
print("noack: %d late, first after %.0f ms" % (len(n), min(n) / 1e6 if n else -1))
ok = {
    "notified": res["ack_notified"] and res["noack_notified"],
    # the hold starts once the FAIL is applied, after t_before
    # once the later of the failure ts and the FAIL's return
    "ack_free": bool(a) and min(a) < max((fts - t_before) % M,
                                         (t_after - t_before) % M) + 2 * 10**9,
    "noack_held": bool(n) and min(n) >= hold,
    "ordered": res["ack_ordered"] and res["noack_ordered"],
}
h3 = [f for f in lines("ack.log") if f[0] == "R" and f[2].startswith("3:")]
ok["h3_none_after"] = not [f for f in h3 if after(int(f[1]), fts)]
ok["h3_before"] = len([f for f in h3 if not after(int(f[1]), fts)]) > 0
sent_h3 = [f for f in lines("h3.log") if f[0] == "S" and f[1] != "0" and
           not after(int(f[1]), fts)]
print("h3: %d delivered before, %d sent before" %
      (len([f for f in h3 if not after(int(f[1]), fts)]), len(sent_h3)))
for k, v in ok.items():
    print("%s %s" % (k, "yes" if v else "no"))
PY
cat "$WORK/check.out" | sed 's/^/# /'
ck() { grep -q "^$1 yes" "$WORK/check.out"; }
tap_check "both sockets notified" "see above" ck notified
tap_check "acknowledging socket not held" "see above" ck ack_free
tap_check "unacknowledging socket held until failure_hold_ms" "see above" \
	ck noack_held
tap_check "held messages delivered in order" "out of order" ck ordered
tap_check "nothing from h3 at or after its failure timestamp" "delivered" \
	ck h3_none_after
tap_check "h3's messages before it delivered" "none" ck h3_before
d=$(host_counter h2 fail_discards)
tap_check "discards counted" "fail_discards ${d:-none}" [ "${d:-0}" -gt 0 ]

# A reliable sender on h2 whose only peer is h3: refused, nothing sent.
_round=$((_round + 1))
traffic_start h2 7003 "$WORK/tofailed.log" 60 --type rdm --peers 3:7001 \
	--scatterings 5 --linger-ms 500 --json
traffic_go
traffic_wait >/dev/null
tap_check "send to the failed host: EHOSTDOWN" "something was sent" \
	grep -q '"sent":0,' "$WORK/tofailed.log.json"

g() { ip netns exec op-h2 python3 "$GENL" fail "$@" 2>&1; }
# errno_is ERRNO ARGS...: FAIL ARGS answers ERRNO, with an extack message
# unless it is 0.
errno_is()
{
	local want=$1 out
	shift
	out=$(g "$@")
	if [ "$want" = 0 ]; then
		[[ "$out" == "errno 0 "* ]] && return 0
	else
		[[ "$out" == "errno $want "?* ]] && return 0
	fi
	diag "fail $*: $out"
	return 1
}
tap_check "same FAIL again accepted" "wrong errno" errno_is 0 --epoch 1 --host 3 \
	--ts "$fail_ts"
tap_check "other timestamp: EEXIST" "wrong errno" errno_is 17 --epoch 2 --host 3 \
	--ts $((fail_ts + 1))
tap_check "own host: EINVAL" "wrong errno" errno_is 22 --epoch 2 --host 2 --ts 5
tap_check "ts above 48 bits: EINVAL" "wrong errno" errno_is 22 --epoch 2 --host 1 \
	--ts $((1 << 50))
tap_check "missing attribute: EINVAL" "wrong errno" errno_is 22 --epoch 2 --host 1 \
	--ts 5 --omit ts
tap_check "foreign attribute: EINVAL" "wrong errno" errno_is 22 --epoch 2 --host 1 \
	--ts 5 --junk
unpriv()
{
	local out
	out=$(ip netns exec op-h2 setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all --bounding-set=-all \
		python3 "$GENL" fail --epoch 2 --host 1 --ts 5 2>&1)
	[[ "$out" == "errno 1 "* ]] && return 0
	diag "unprivileged: $out"
	return 1
}
tap_check "unprivileged: EPERM" "not refused" unpriv

# Rejoin.  h3's own rejoin answers the new incarnation's first stamp.
out=$(ip netns exec op-h3 python3 "$GENL" rejoin --host 3 --epoch 2 2>&1)
first=$(sed -n 's/^first //p' <<<"$out")
# (first is on h3's clock, which is h2's: the guest's)
after_fail() { [ -n "$first" ] && [ "$first" -gt "$fail_ts" ]; }
tap_check "h3 rejoins: first timestamp" "$out" after_fail
out2=$(ip netns exec op-h3 python3 "$GENL" rejoin --host 3 --epoch 2 2>&1)
tap_check "h3 rejoins again: same incarnation" "$out2" \
	[ "$(sed -n 's/^first //p' <<<"$out2")" = "$first" ]
out=$(ip netns exec op-h2 python3 "$GENL" rejoin --host 3 --epoch 2 \
	--ts "${first:-0}" 2>&1)
tap_check "h2 applies h3's rejoin" "$out" [ "$out" = "errno 0 " ]
_round=$((_round + 1))
traffic_start h2 7005 "$WORK/rejoin-rx.log" 120 --type rdm --expect 300 \
	--linger-ms 20000 --quiet
traffic_start h3 7005 "$WORK/rejoin-tx.log" 120 --type rdm --peers 2:7005 \
	--scatterings 300 --interval-us 2000 --linger-ms 3000 --quiet
traffic_go
traffic_wait >/dev/null
got=$(grep -c '^R ' "$WORK/rejoin-rx.log")
tap_check "new incarnation: more than a window delivered" \
	"$got of 300 delivered" [ "$got" -eq 300 ]
