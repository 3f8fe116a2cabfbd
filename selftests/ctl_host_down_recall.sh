#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two more failures decided by the controller, end to end, on the fabric
# and traffic of ctl_failure.sh (helpers in ctl_lib.sh): 4 hosts behind
# 2 ToRs (h1 h2 on tor1, h3 h4 on tor2), the controller on, one SOCK_RDM
# op-traffic per host sending to every other host (fanout 3) every 20 ms;
# shorter rounds than ctl_failure's (CI time) that still go on for a few
# seconds after the procedure.
#
# 1. host down: 2 s into the traffic, h4's transport is taken down
#    (onepipe host down inside h4); its agent and its link stay up, so
#    nothing tells the controller but h4's silence: tor2 hears it no more
#    and, after the commit timeout, reports the link; the controller
#    declares h4 failed and goes idle, h1-h3 applied it (fail show) and
#    every process there was notified (F lines), delivery among h1-h3
#    resumes, op-check --reliable --failures holds.  The point after the
#    case checks that tor2 is the one that reported h4 and that h4's
#    agent and link were up all along (agent running and connected to
#    onepiped, up0 up).
#    Then h4 is configured again (onepipe host set, as fabric up did):
#    tor2 hears it again, the controller makes it rejoin as a new
#    incarnation, and traffic among all four is delivered exactly once
#    (op-check --reliable --expect-all).
# 2. a failure during a recall, on a fresh fabric (h4's rejoined entry
#    in the failure log would be a second failure of h4 for op-check
#    --failures): fabric kill h4 2 s into the traffic and, while its
#    silence is still being detected, fabric kill hS (S = SECOND, h2 by
#    default) SECOND_KILL_MS later (both commands start that far apart
#    and run in parallel; a kill takes 1-2.5 s in an emulated guest).
#    When FAIL(h4) reaches the two correct hosts (h1 h3) they recall
#    every scattering that included h4 and is not committed; each of
#    those included hS too (fanout 3 of 3 peers), which no longer
#    answers, so the recalls stay pending and they cannot answer DONE
#    for h4 (EV_FAIL_DONE waits for them: with a controller a recall out
#    of retries is resent, not given up).  The commit timeout then
#    reports hS and the controller decides it in a second epoch of the
#    same procedure; the correct hosts apply it, their recalls to hS
#    end, they answer DONE for both, and the procedure completes (idle,
#    failures hS and h4).  The kill-case checks as above with the other
#    two hosts as the correct ones, and two more:
#    - two decisions: h4's failure-log epoch is below hS's, onepiped's
#      log has two "decided" lines and no "procedure complete" between
#      them (printed: the time between the decisions, and between the
#      failure timestamps);
#    - recalls pending when h3's decision came, measured three ways at
#      each correct host: (i) its agent's log, whose order is the order
#      in which the agent got FAILs from onepiped and EV_FAIL_DONE from
#      the module, has FAIL host 4, then FAIL host S, and only then DONE
#      host 4 (and DONE host S); (ii) its "recalls" counter grew; and
#      (iii) onepipe fail show, sampled there by a watcher from the
#      moment the agent logged FAIL host 4 until it logged FAIL host S,
#      listed host 4 as pending in every sample taken (the number of
#      samples and the span they cover are printed; a sample showing it
#      done fails the point; no sample, e.g. in a slow guest, is only
#      reported, since (i) already decides).
#    SECOND=3 (OP_RECALL_SECOND=3) fails both hosts of tor2 while tor2
#    lives, and shows a known problem of the switches (README): once
#    both of its commit registers are resumed away, tor2's upward commit
#    group has no input left, but a group that was valid stays valid
#    with its last output (kernel/core/barrier.c), so tor2 goes on
#    beaconing that old commit barrier; the spine's register for tor2,
#    never silent and never failed, holds every commit minimum there for
#    good, and nothing is delivered after the procedure.  h2 by default,
#    so that the recall is what this case tests.
source "$(dirname "$0")/ctl_lib.sh"

# 12 and 14 s of traffic: a fault takes up to 9 s to inject in a busy
# emulated guest, and the procedure 3 s more.
HOSTDOWN_SCATS=${OP_SCATS:-600}
RECALL_SCATS=${OP_SCATS:-700}
# Between the two kills: well below the commit timeout (h3 must be dead
# when FAIL(h4) comes) and well above what a decision takes (h3's
# report must come after it).
SECOND_KILL_MS=${OP_SECOND_KILL_MS:-1000}
# The second host to fail (see the top for 3).
SECOND=${OP_RECALL_SECOND:-2}
case $SECOND in
1 | 2 | 3) ;;
*) echo "OP_RECALL_SECOND must be 1, 2 or 3" >&2 && exit 2 ;;
esac
RFAILED=$(printf '%s\n' "$SECOND" 4 | sort -n | paste -sd,)
RCORRECT=$(printf '%s\n' 1 2 3 | grep -vx "$SECOND" | paste -sd,)
RWHO=h${RCORRECT//,/,h}

tap_plan "fabric up 4 hosts 2 tors with the controller" \
	"host down: onepipe host down in h4 during the traffic" \
	"host down: the controller failed h4 and went idle" \
	"host down: h1-h3 applied the decision (fail show)" \
	"host down: h1-h3 traffic ran" \
	"host down: h1-h3 processes notified (F lines)" \
	"host down: delivery among h1-h3 resumed" \
	"host down: op-check --reliable --failures" \
	"host down: delivery stall at h1-h3" \
	"host down: tor2 reported h4, whose agent and link stayed up" \
	"h4 back: configured again (onepipe host set)" \
	"h4 back: h4 rejoined, the controller went idle" \
	"h4 back: traffic among all four ran" \
	"h4 back: op-check --reliable --expect-all" \
	"fabric up again" \
	"recall: fabric kill h4, then h$SECOND, during the traffic" \
	"recall: the controller failed h${RFAILED//,/ h} and went idle" \
	"recall: $RWHO applied the decision (fail show)" \
	"recall: $RWHO traffic ran" \
	"recall: $RWHO processes notified (F lines)" \
	"recall: delivery among $RWHO resumed" \
	"recall: op-check --reliable --failures" \
	"recall: delivery stall at $RWHO" \
	"recall: h4 then h$SECOND decided in two epochs of one procedure" \
	"recall: $RWHO's recalls were pending when h$SECOND's decision came"

ctl_prereqs

# ---------------------------------------------------------------- setup

up_with_controller || tap_abort "fabric up with the controller failed"
tap_pass "fabric up 4 hosts 2 tors with the controller"

# -------------------------------------------------------- 1. host down

h4_down()
{
	timeout $((30 * OP_SLOW)) "$FABRIC" exec h4 "$ONEPIPE" host down
}

SCATS=$HOSTDOWN_SCATS
kill_case host-down 7011 4 1,2,3 h1-h3 "host down" \
	"onepipe host down in h4 during the traffic" h4_down

# Who reported h4, and whether its agent and link were left alone.
why=
pid=$(cat "$FABRIC_RUN/agent-h4.pid" 2>/dev/null)
if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
	why+=" h4's agent is gone;"
fi
[ -e "$FABRIC_RUN/killed.h4" ] && why+=" h4 has a kill record;"
ip -n op-h4 -o link show up0 2>/dev/null | grep -q 'state UP' ||
	why+=" h4's up0 is not up;"
python3 - "$WORK/host-down-ctl.json" <<'PY' || why+=" onepiped saw h4 disconnected;"
import json, sys
c = json.load(open(sys.argv[1]))["controller"]
sys.exit(0 if any(n.get("name") == "h4" and n.get("connected") is True
                  for n in c["nodes"]) else 1)
PY
grep -q 'tor2: link to h4 down' "$FABRIC_RUN/onepiped.log" ||
	why+=" no report from tor2 about h4 in onepiped's log;"
if [ -z "$why" ]; then
	tap_pass "host down: tor2 reported h4, whose agent and link stayed up" \
		"$(grep -m 1 'tor2: link to h4 down' "$FABRIC_RUN/onepiped.log" |
			sed 's/^.*: tor2:/tor2:/')"
else
	diag "$(grep -E 'h4|decided' "$FABRIC_RUN/onepiped.log" | tail -n 20)"
	tap_fail "host down: tor2 reported h4, whose agent and link stayed up" \
		"${why%;}"
fi

# ------------------------------------------------------- 1b. h4 back

rejoin_case "h4 back" "configured again (onepipe host set)" 4 7012 \
	host_configure 4
keep_ctl_logs fabric-1

# ------------------------------------------- 2. a failure during a recall

if up_with_controller; then
	tap_pass "fabric up again"
else
	tap_abort "fabric up (second time) failed"
fi

# pending_watch OUT: in the background until every correct host logged
# FAIL for host SECOND (or 120 s): while a host's agent has logged FAIL
# host 4 and not FAIL host SECOND, samples "onepipe -j fail show" there
# and records host 4's entry; a sample counts only if FAIL host SECOND
# was still not logged once it returned.  Agent logs are files: reading them starts no
# process, so the watcher is cheap until the window opens.
pending_watch()
{
	python3 - "$FABRIC_RUN" "$ONEPIPE" "$1" "$RCORRECT" "$SECOND" <<'PY'
import json, os, re, subprocess, sys, time
run, onepipe, out = sys.argv[1:4]
correct = [int(h) for h in sys.argv[4].split(",")]
second = int(sys.argv[5])
fail_re = re.compile(r"FAIL epoch \d+ host (\d+)")


def failed(h):
    try:
        with open(os.path.join(run, "agent-h%d.log" % h)) as fh:
            return {int(m) for m in fail_re.findall(fh.read())}
    except OSError:
        return set()


res = {h: {"pending": 0, "done": 0, "absent": 0, "first": None,
           "last": None, "closed": None} for h in correct}
t0 = time.monotonic()
opened = {}
while time.monotonic() - t0 < 120:
    left = [h for h in res if res[h]["closed"] is None]
    if not left:
        break
    for h in left:
        f = failed(h)
        now = time.monotonic()
        if second in f:
            res[h]["closed"] = round(now - opened.get(h, now), 3)
            continue
        if 4 not in f:
            continue
        opened.setdefault(h, now)
        r = subprocess.run(["ip", "netns", "exec", "op-h%d" % h, onepipe,
                            "-j", "fail", "show"], capture_output=True,
                           text=True)
        if second in failed(h):
            continue        # its decision may have come meanwhile
        try:
            e = [x for x in json.loads(r.stdout) if x.get("host") == 4]
        except ValueError:
            e = []
        t = round(time.monotonic() - opened[h], 3)
        if not e:
            res[h]["absent"] += 1   # FAIL logged, not applied yet
            continue
        res[h]["pending" if e[0].get("pending") else "done"] += 1
        if res[h]["first"] is None:
            res[h]["first"] = t
        res[h]["last"] = t
    time.sleep(0.1)
with open(out, "w") as fh:
    json.dump(res, fh)
PY
}

# kill_h4_then_second: the fault.  Each kill in its own background
# subshell, the second started SECOND_KILL_MS after the first, so that
# the links go down about that far apart whatever a kill costs.
kill_h4_then_second()
{
	local t0 t3 rc=0 p4 p3 e4 e3
	t0=$(now_ns)
	(fabric_kill h4; r=$?; now_ns >"$WORK/recall-kill-h4.end"; exit $r) &
	p4=$!
	sleep_until $((t0 + SECOND_KILL_MS * 1000000))
	t3=$(now_ns)
	(fabric_kill "h$SECOND"; r=$?; now_ns >"$WORK/recall-kill-2.end"
	 exit $r) &
	p3=$!
	wait "$p4" || rc=1
	wait "$p3" || rc=1
	e4=$(cat "$WORK/recall-kill-h4.end" 2>/dev/null || now_ns)
	e3=$(cat "$WORK/recall-kill-2.end" 2>/dev/null || now_ns)
	FAULT_DETAIL="kill h4 took $(((e4 - t0) / 1000000)) ms; kill h$SECOND"
	FAULT_DETAIL+=" started $(((t3 - t0) / 1000000)) ms after it and"
	FAULT_DETAIL+=" took $(((e3 - t3) / 1000000)) ms"
	return "$rc"
}

SCATS=$RECALL_SCATS
pending_watch "$WORK/recall-pending.json" &
watch_pid=$!
_pids+=("$watch_pid")
kill_case recall 7013 "$RFAILED" "$RCORRECT" "$RWHO" recall \
	"fabric kill h4, then h$SECOND, during the traffic" kill_h4_then_second
wait "$watch_pid"

# Two decisions, h4's first, the second before the first procedure
# completed.
if out=$(python3 - "$WORK/recall-ctl.json" "$FABRIC_RUN/onepiped.log" \
	"$SECOND" 2>&1 <<'PY'
import datetime, json, re, sys
c = json.load(open(sys.argv[1]))["controller"]
s = int(sys.argv[3])
f = {x["host"]: x for x in c["failures"] if "host" in x}
if s not in f or 4 not in f:
    sys.exit("failure log: %s" % c["failures"])
e4, e3 = f[4]["epoch"], f[s]["epoch"]
ev = []
for line in open(sys.argv[2]):
    m = re.match(r"^(\S+)Z .*epoch (\d+): (decided|procedure complete)", line)
    if m:
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
        ev.append((t, int(m.group(2)), m.group(3)))
dec = [e for e in ev if e[2] == "decided"]
kinds = [e[2] for e in ev]
if not e4 < e3:
    sys.exit("h4 failed in epoch %d, h%d in epoch %d: one decision" %
             (e4, s, e3))
if [e[1] for e in dec] != [e4, e3] or kinds != ["decided", "decided",
                                                "procedure complete"]:
    sys.exit("onepiped's log: %s" % [(e[1], e[2]) for e in ev])
gap = (dec[1][0] - dec[0][0]).total_seconds() * 1000
print("h4 in epoch %d, h%d in epoch %d, %.0f ms later; failure ts %.0f ms "
      "apart" % (e4, s, e3, gap, (f[s]["ts"] - f[4]["ts"]) / 1e6))
PY
); then
	tap_pass "recall: h4 then h$SECOND decided in two epochs of one procedure" \
		"$out"
else
	diag "$(grep -E 'decided|complete|failed at|link to' \
		"$FABRIC_RUN/onepiped.log" | tail -n 20)"
	tap_fail "recall: h4 then h$SECOND decided in two epochs of one procedure" \
		"$out"
fi

# Recalls pending at the correct hosts when the second decision came.
snapshot "$WORK/recall.snap" hosts
if out=$(python3 - "$FABRIC_RUN" "$WORK/recall.snap" \
	"$WORK/recall-pending.json" "$RCORRECT" "$SECOND" 2>&1 <<'PY'
import json, os, re, sys
run, snapf, watchf = sys.argv[1:4]
correct = [int(h) for h in sys.argv[4].split(",")]
s = int(sys.argv[5])
snap = {}
for line in open(snapf):
    w = line.split()
    if len(w) == 3:
        snap[(w[0], w[1])] = w[2]
try:
    watch = json.load(open(watchf))
except (OSError, ValueError):
    watch = {}
ok, notes = True, []
for h in correct:
    lines = open(os.path.join(run, "agent-h%d.log" % h)).read().splitlines()

    def first(kind, host):
        pat = re.compile(r"\b%s epoch \d+ host %d\b" % (kind, host))
        return next((i for i, l in enumerate(lines) if pat.search(l)), None)

    f4, f3, d4, d3 = (first("FAIL", 4), first("FAIL", s), first("DONE", 4),
                      first("DONE", s))
    recalls = int(snap.get(("h%d" % h, "recalls"), "0") or 0)
    w = watch.get(str(h), {})
    why = []
    if f4 is None or f3 is None or not f4 < f3:
        why.append("FAIL host 4 then FAIL host %d not both logged (%s, %s)"
                   % (s, f4, f3))
    elif d4 is None or d4 < f3:
        why.append("DONE host 4 %s" % ("never logged" if d4 is None else
                                       "logged before FAIL host %d" % s))
    if d3 is None:
        why.append("no DONE host %d" % s)
    if recalls <= 0:
        why.append("recalls counter 0")
    if w.get("done"):
        why.append("fail show listed host 4 done %d times before FAIL "
                   "host %d" % (w["done"], s))
    if why:
        ok = False
        notes.append("h%d: %s" % (h, "; ".join(why)))
        continue
    n = "h%d: agent log FAIL h4, FAIL h%d, DONE h4 (lines %d %d %d), " \
        "%d recalls" % (h, s, f4, f3, d4, recalls)
    if w.get("pending"):
        n += ", h4 pending in %d fail show samples %.2f-%.2f s after " \
             "FAIL h4 was logged (FAIL h%d at %.2f s)" % (
                 w["pending"], w["first"], w["last"], s, w["closed"] or 0)
    else:
        n += ", no fail show sample in the window"
    notes.append(n)
print("; ".join(notes))
sys.exit(0 if ok else 1)
PY
); then
	tap_pass "recall: $RWHO's recalls were pending when h$SECOND's decision came" \
		"$out"
else
	diag "$(grep -H -E 'FAIL|DONE' "$FABRIC_RUN"/agent-h*.log)"
	tap_fail "recall: $RWHO's recalls were pending when h$SECOND's decision came" \
		"$out"
fi
keep_ctl_logs fabric-2
