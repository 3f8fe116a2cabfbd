#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Send failure and recall in the reliable service (SOCK_RDM): 4 hosts
# behind 2 ToRs, 2 processes per host; the processes on h1-h3 send
# scatterings of 2 messages to random other processes (h4's included),
# h4's only receive. 1.5 s into the round (OP_SLOW_NET times later in a
# slow guest) h4's link goes down (fabric link-down h4) for good. With a
# small retry budget (rdm_rto_min_ms 50, rdm_retries 4) the senders give
# up on h4 within seconds:
#
# - every message to h4 that was not delivered is notified on its
#   sender's error queue with EHOSTUNREACH (ONEPIPE_EE_UNREACH);
# - the other messages of the same scatterings are recalled: notified
#   with ECANCELED (ONEPIPE_EE_RECALLED) and never delivered, though they
#   had reached their (live) receivers, which count the discards;
# - what h4 had ACKed before it went away stays (it holds those messages;
#   the rest of their scatterings is delivered): h4 is a receiver that
#   failed permanently, the one case where all-or-nothing cannot be seen
#   at the failed receiver itself.  Everything else is delivered exactly
#   once and in order, and traffic among h1-h3 goes on after the
#   failure: op-check --reliable on h1-h3's logs, with h4's deliveries
#   unknown (--unlogged-receivers unknown); plain op-check (order,
#   integrity, agreement...) on all logs, h4's included; every message
#   to h4 stamped after its link went down was notified, and every one
#   stamped a second before was delivered there.
#
# Then h4 comes back (fabric link-up h4).  h1 had messages to h4 that it
# abandoned; unless its probes tell h4 to skip them, they stay a hole in
# h4's sequence space that holds h1's window to h4 shut after one
# window's worth of messages.  So h1 sends more than a window (rdm_window
# 256) to h4, and all of it must arrive: op-check --reliable --expect-all.
source "$(dirname "$0")/lib.sh"

# The senders go on for 12 s (600 scatterings, one per 20 ms, OP_SLOW_NET
# times longer in a slow guest) and the
# link goes down at 1.5 s (DOWN_AFTER_MS; later in a busy guest: fabric
# may not be ready),
# so that many messages are stamped after it; they linger until every
# message they sent is ACKed or notified (--drain): in a slow guest the
# round trip, and so the give-up, takes far longer.  Until h4 is given up
# its unACKed messages hold the commit barrier, and with it every
# reliable delivery: a receiver must not take that silence (up to about
# 10 s in a loaded guest) for the end and close its socket, or later
# messages to it are refused (ECONNREFUSED), hence a 12 s linger.
SCATS=${OP_SCATS:-600}
INTERVAL_US=$(send_interval_us 20000)
# OP_SLOW_NET times later in a slow guest: unscaled, on the sanitizer
# kernel the senders' first messages were stamped 6.1 s into the round
# (starting 8 processes takes that long there) and the link went down at
# 6.7 s, so none was stamped in the second before it that "delivered
# what was committed before it went away" needs.
DOWN_AFTER_MS=$((1500 * OP_SLOW_NET))
RTO_MIN_MS=${OP_RDM_RTO_MIN_MS:-50}
RETRIES=${OP_RDM_RETRIES:-4}
EE_UNREACH=6
EE_RECALLED=7
DIAG_KEYS+=" retransmits recalls rx_recalls window_stalls rx_rdm_msgs"

tap_plan "fabric up 4 hosts 2 tors" "SOCK_RDM sysctls set" \
	"h4 link down during the traffic" "8 op-traffic processes ran" \
	"every message was sent" \
	"messages to h4 failed with EHOSTUNREACH" \
	"the rest of those scatterings was recalled (ECANCELED)" \
	"failed scatterings: every message notified, none delivered" \
	"h4 delivered what was committed before it went away" \
	"messages to h4 stamped after it went down were notified" \
	"traffic among h1-h3 went on after the failure" \
	"op-check --reliable --unlogged-receivers unknown (h1-h3)" \
	"op-check (all logs)" "senders counted recalls" \
	"receivers discarded recalled messages" \
	"op-traffic --drain waits for the notifications" "h4 link up again" \
	"h4 back: more than a window from h1 delivered" \
	"h4 back: op-check --reliable --expect-all"

need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
fabric_up --hosts 4 --tors 2 || tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

hosts_sysctl net.onepipe.rdm_rto_min_ms="$RTO_MIN_MS" \
	net.onepipe.rdm_retries="$RETRIES" ||
	tap_abort "cannot set the SOCK_RDM sysctls"
tap_pass "SOCK_RDM sysctls set" \
	"rdm_rto_min_ms $RTO_MIN_MS, rdm_retries $RETRIES"

eps=()
for h in 1 2 3 4; do
	for p in 1001 1002; do
		eps+=("$h:$p")
	done
done
snapshot "$WORK/before" hosts
logs=()
senders=()
for ep in "${eps[@]}"; do
	h=${ep%:*}
	p=${ep#*:}
	log=$WORK/h$h-$p.log
	logs+=("$log")
	args=(--type rdm --size 100 --linger-ms 12000 --drain --seed 5 --quiet)
	if [ "$h" != 4 ]; then
		senders+=("$log")
		args+=(--peers "$(peers_except "$ep" "${eps[@]}")"
		       --scatterings "$SCATS" --fanout 2
		       --interval-us "$INTERVAL_US")
	fi
	traffic_start "h$h" "$p" "$log" 180 "${args[@]}"
done
# fabric starts before the round, sets the link DOWN_AFTER_MS into it and
# prints when: its own start-up took 10-15 s in a busy guest.
timeout $((120 * OP_SLOW)) "$FABRIC" link-down h4 \
	--at-file "$WORK/start.$_round" --after-ms $DOWN_AFTER_MS \
	>"$WORK/link-down.out" 2>&1 &
down_pid=$!
_pids+=("$down_pid")
traffic_go
wait "$down_pid"
read -r down_at down_done < <(sed -n \
	's/^fabric: h4 down between \([0-9]*\) and \([0-9]*\)$/\1 \2/p' \
	"$WORK/link-down.out")
if [ -n "${down_done:-}" ]; then
	at_ms=$(((down_at - $(round_start_ns)) / 1000000))
	tap_pass "h4 link down during the traffic" \
		"at $at_ms ms, took $(((down_done - down_at) / 1000000)) ms"
else
	diag "$(cat "$WORK/link-down.out")"
	tap_abort "fabric link-down h4 failed"
fi
step "h4 down"
check_traffic_ran "8 op-traffic processes ran"
snapshot "$WORK/after" hosts

check_all_sent "every message was sent" $((SCATS * 6 * 2)) "${senders[@]}"

# Per failed scattering: its messages, their notifications and
# deliveries; and the deliveries among h1-h3 of scatterings stamped
# after the failure was noticed.
python3 - "$down_at" "$down_done" "$WORK" "$EE_UNREACH" "$EE_RECALLED" \
	>"$WORK/failures.out" 2>&1 <<'PY'
import collections, glob, os, sys

down_at, down_done, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
UNREACH, RECALLED = int(sys.argv[4]), int(sys.argv[5])
EHOSTUNREACH, ECANCELED = 113, 125
M = 1 << 48
logs = {}
for path in glob.glob(os.path.join(work, "h*.log")):
    lines = [ln.split() for ln in open(path)]
    logs["%s:%s" % tuple(lines[0][1:3])] = lines

sent = {}      # (src, scat) -> [dest of idx 0, 1, ...]
# (src, scat) -> {idx: (code, errno, dest)}
notified = collections.defaultdict(dict)
delivered = collections.Counter()         # (src, scat, idx) -> deliveries
for me, lines in logs.items():
    for f in lines:
        if f[0] == "S":
            sent[(me, f[2])] = f[3].split(",")
        elif f[0] == "E":
            notified[(me, f[3])][int(f[4])] = (int(f[6]), int(f[5]), f[2])
        elif f[0] == "R":
            delivered[(f[2], f[3], int(f[4]))] += 1

unreach_bad, recalled_bad, other_codes = [], [], []
n_unreach = n_recalled = 0
for key, es in sorted(notified.items()):
    dests = sent.get(key, [])
    codes = {c for c, _, _ in es.values()}
    for idx, (code, err, dest) in sorted(es.items()):
        if code == UNREACH:
            n_unreach += 1
            if not dest.startswith("4:") or err != EHOSTUNREACH:
                unreach_bad.append("%s/%s/%d->%s errno %d" %
                                   (key[0], key[1], idx, dest, err))
        elif code == RECALLED:
            n_recalled += 1
            if err != ECANCELED:
                recalled_bad.append("%s/%s/%d errno %d" %
                                    (key[0], key[1], idx, err))
        else:
            other_codes.append("%s/%s/%d code %d" % (key[0], key[1], idx,
                                                     code))
    if UNREACH not in codes:
        recalled_bad.append("%s/%s: recalled without a failure" % key)
    # all-or-nothing, seen from the sender: all notified, none delivered
    missing = [i for i in range(len(dests)) if i not in es]
    got = [i for i in range(len(dests)) if delivered[(key[0], key[1], i)]]
    if missing or got:
        print("partial %s/%s notified-missing %s delivered %s" %
              (key[0], key[1], missing, got))
print("unreach %d bad %d %s" % (n_unreach, len(unreach_bad),
                                " ".join(unreach_bad[:5])))
print("recalled %d bad %d %s" % (n_recalled, len(recalled_bad),
                                 " ".join(recalled_bad[:5])))
print("othercodes %d %s" % (len(other_codes), " ".join(other_codes[:5])))
print("failed_scatterings %d" % len(notified))
# Messages to h4, by when they were stamped: a second or more before its
# link went down (must have been delivered there), after the link was
# down (must have been notified), in between (either, or ACKed and kept
# by h4: in doubt).
ts_of = {}
for me, lines in logs.items():
    for f in lines:
        if f[0] == "S":
            ts_of[(me, f[2])] = int(f[1])
old_ok = old_missing = new_ok = new_silent = doubt = 0


def rel(ts, ref):
    d = (ts - ref) % M
    return d - M if d >= M // 2 else d


for (src, scat), dests in sent.items():
    before = rel(ts_of[(src, scat)], down_at)
    after = rel(ts_of[(src, scat)], down_done)
    for idx, dest in enumerate(dests):
        if not dest.startswith("4:"):
            continue
        got = delivered[(src, scat, idx)]
        told = idx in notified.get((src, scat), {})
        if before < -10**9:
            if got == 1 and not told:
                old_ok += 1
            else:
                old_missing += 1
        elif after > 0:
            if told and not got:
                new_ok += 1
            else:
                new_silent += 1
        elif not got and not told:
            doubt += 1
print("h4old %d missing %d" % (old_ok, old_missing))
print("h4new %d silent %d" % (new_ok, new_silent))
print("h4doubt %d" % doubt)
# Deliveries on h1-h3 of messages stamped 2 s after the link went down.
later = 0
for me, lines in logs.items():
    if me.startswith("4:"):
        continue
    for f in lines:
        if f[0] == "R" and ((int(f[1]) - down_at) % M) < M // 2 and \
                ((int(f[1]) - down_at) % M) > 2 * 10**9:
            later += 1
print("later %d" % later)
PY
diag "$(head -n 20 "$WORK/failures.out")"

# val KEY FIELD: a field of the analysis' KEY line.
val()
{
	awk -v k="$1" -v i="$2" '$1 == k { print $i; exit }' \
		"$WORK/failures.out"
}

n6=$(val unreach 2)
bad6=$(val unreach 4)
if [ "${n6:-0}" -gt 0 ] && [ "${bad6:-1}" = 0 ]; then
	tap_pass "messages to h4 failed with EHOSTUNREACH" "$n6"
else
	tap_fail "messages to h4 failed with EHOSTUNREACH" \
		"${n6:-0} notified, ${bad6:-?} not to h4 or not EHOSTUNREACH"
fi

n7=$(val recalled 2)
bad7=$(val recalled 4)
others=$(val othercodes 2)
if [ "${n7:-0}" -gt 0 ] && [ "${bad7:-1}" = 0 ] && [ "${others:-1}" = 0 ]; then
	tap_pass "the rest of those scatterings was recalled (ECANCELED)" \
		"$n7 recalled, $(val failed_scatterings 2) failed scatterings"
else
	# the first bad ones and other codes, as the analysis listed them
	which=$(awk '$1 == "recalled" { for (i = 5; i <= NF; i++) print $i }
		$1 == "othercodes" { for (i = 3; i <= NF; i++) print $i }' \
		"$WORK/failures.out" | tr '\n' ' ')
	tap_fail "the rest of those scatterings was recalled (ECANCELED)" \
		"${n7:-0} recalled, ${bad7:-?} bad, ${others:-?} other codes: $which"
fi

partial=$(grep -c '^partial ' "$WORK/failures.out")
if [ "$partial" -eq 0 ] && [ -n "$n6" ]; then
	tap_pass "failed scatterings: every message notified, none delivered"
else
	tap_fail "failed scatterings: every message notified, none delivered" \
		"$partial partial scatterings"
fi

n=$(val h4old 2)
miss=$(val h4old 4)
if [ "${n:-0}" -gt 0 ] && [ "${miss:-1}" = 0 ]; then
	tap_pass "h4 delivered what was committed before it went away" \
		"$n messages stamped > 1 s before; $(val h4doubt 2) in doubt"
else
	tap_fail "h4 delivered what was committed before it went away" \
		"${n:-0} delivered once, ${miss:-?} not (or notified, or twice)"
fi

n=$(val h4new 2)
miss=$(val h4new 4)
if [ "${n:-0}" -gt 0 ] && [ "${miss:-1}" = 0 ]; then
	tap_pass "messages to h4 stamped after it went down were notified" "$n"
elif [ "${n:-0}" = 0 ] && [ "${miss:-1}" = 0 ]; then
	tap_fail "messages to h4 stamped after it went down were notified" \
		"no message to h4 was stamped after the link-down returned"
else
	tap_fail "messages to h4 stamped after it went down were notified" \
		"${n:-0} notified, ${miss:-?} not notified or delivered"
fi

later=$(val later 2)
if [ "${later:-0}" -gt 0 ]; then
	tap_pass "traffic among h1-h3 went on after the failure" \
		"$later messages stamped 2 s after h4 went down were delivered"
else
	tap_fail "traffic among h1-h3 went on after the failure" \
		"nothing stamped 2 s after h4 went down was delivered"
fi

run_check "op-check --reliable --unlogged-receivers unknown (h1-h3)" \
	--reliable --unlogged-receivers unknown "${senders[@]}"
run_check "op-check (all logs)" "${logs[@]}"

recalls=$(snap_delta "$WORK/before" "$WORK/after" recalls h1 h2 h3)
if [ "$recalls" -gt 0 ]; then
	tap_pass "senders counted recalls" "$recalls (E lines: ${n7:-0})"
else
	tap_fail "senders counted recalls" "recalls did not grow on h1-h3"
fi

rxr=$(snap_delta "$WORK/before" "$WORK/after" rx_recalls h1 h2 h3)
if [ "$rxr" -gt 0 ]; then
	tap_pass "receivers discarded recalled messages" "rx_recalls $rxr"
else
	tap_fail "receivers discarded recalled messages" \
		"rx_recalls did not grow on h1-h3 (${n7:-0} messages recalled)"
fi

# op-traffic --drain with no linger: it must outlive the retries of its
# messages to the (still unreachable) h4 and log their notifications.
traffic_start h1 1004 "$WORK/drain.log" 120 --type rdm --size 100 \
	--quiet --linger-ms 0 --drain --peers 4:1001 --scatterings 3
traffic_go || true
traffic_wait >/dev/null || true
n=$(count_lines E "$WORK/drain.log")
tap_check "op-traffic --drain waits for the notifications" \
	"$n of 3 messages to h4 notified before it exited" [ "$n" -eq 3 ]

# h4 back: more than a window of messages from h1, which abandoned some.
AFTER=${OP_AFTER_SCATS:-400}
if out=$(timeout $((30 * OP_SLOW)) "$FABRIC" link-up h4 2>&1); then
	tap_pass "h4 link up again"
else
	diag "$out"
	tap_fail "h4 link up again" "fabric link-up h4 failed"
fi
# Longer than the commit registers' timeout, so both barriers take h4's
# uplink back in before the round.
sleep 3
back=("$WORK/back-h1.log" "$WORK/back-h4.log")
traffic_start h1 1003 "${back[0]}" 180 --type rdm --size 100 --seed 7 \
	--quiet --linger-ms 8000 --peers 4:1003 --scatterings "$AFTER" \
	--fanout 1 --interval-us 2000
traffic_start h4 1003 "${back[1]}" 180 --type rdm --quiet \
	--linger-ms 8000 --expect "$AFTER"
traffic_go || true
traffic_wait >/dev/null || true
got=$(count_lines R "${back[1]}")
if [ "$got" -eq "$AFTER" ]; then
	tap_pass "h4 back: more than a window from h1 delivered" "$got"
else
	tap_fail "h4 back: more than a window from h1 delivered" \
		"h4 delivered $got of $AFTER"
fi
run_check "h4 back: op-check --reliable --expect-all" --reliable \
	--expect-all "${back[@]}"
