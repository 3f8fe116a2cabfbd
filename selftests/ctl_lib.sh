# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers of the failure-controller scenarios (sourced, not run;
# it sources lib.sh): ctl_failure.sh and ctl_host_down_recall.sh.
#
# The fabric is 4 hosts behind 2 ToRs (h1 h2 on tor1, h3 h4 on tor2) with
# the controller on (onepiped, one agent per host, switches with
# --controller, net.onepipe.controlled=1).  A traffic round is one
# SOCK_RDM op-traffic per host sending scatterings to every other host
# (fanout 3) every SEND_INTERVAL_US; a case then checks the logs with
# op-check --reliable --failures (the controller's decisions) and prints
# the delivery stall at the correct receivers: the longest gap between
# two deliveries (estimated receive time: ts + latency, exact unless a
# scattering waited for window before it was stamped) from 1 s before
# the fault on, in us and in beacon intervals, next to the longest gap
# before the fault; and when the controller decided and completed, after
# the failure timestamp (the last commit barrier heard from the failed
# side, i.e. about when it went silent), from onepiped's log.
#
# A failed host's op-traffic cannot finish by itself (its messages wait
# for ACKs that never come, and only a controller decides for it, which
# it cannot reach), and killing it would lose its buffered log: once the
# correct processes are done, the failed hosts' transport is taken down
# (onepipe host down, a no-op where it is down already; op-traffic runs
# with --until-down), so they end their sending, linger and write their
# logs.  A failed process' log is checked for safety only (order,
# integrity, nothing discarded delivered).
#
# A scenario sources this file, declares its points with tap_plan, then
# calls ctl_prereqs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONTROLLER_DIR=$TOP/userspace/controller
ONEPIPED=${ONEPIPED:-$CONTROLLER_DIR/onepiped}
AGENT=${AGENT:-$CONTROLLER_DIR/onepipe-agent}
FABRIC_RUN=${ONEPIPE_FABRIC_RUN:-/run/onepipe-fabric}
SCATS=${OP_SCATS:-700}
SEND_INTERVAL_US=${OP_SEND_INTERVAL_US:-20000}
INTERVAL_US=${OP_INTERVAL_US:-2000}
# Links time out after INTERVAL_US x TIMEOUT_INTERVALS (200 ms), commit
# registers 10 times later (OP_COMMIT_TIMEOUT_FACTOR): 2 s, what a
# failure takes to be noticed, and what a flap must stay below (with the
# process starts a flap costs in an emulated guest, it lasts ~0.6 s).
TIMEOUT_INTERVALS=${OP_TIMEOUT_INTERVALS:-100}
# shellcheck disable=SC2034 # the scenarios' (ctl_failure.sh: the flap)
COMMIT_TIMEOUT_US=$((INTERVAL_US * TIMEOUT_INTERVALS * 10))
FAULT_AFTER_MS=2000
LINGER_MS=8000
DECIDE_S=60
# Scatterings of the round after a rejoin (all four hosts, no fault).
REJOIN_SCATS=100
DIAG_KEYS+=" retransmits recalls rx_recalls window_stalls rx_rdm_msgs"

# ctl_prereqs: what every controller scenario needs (after tap_plan:
# a missing piece aborts with every point failed).
ctl_prereqs()
{
	need_module
	need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE" "$ONEPIPED" \
		"$AGENT"
	need_rdm
	[ -e /proc/sys/net/onepipe ] &&
		[ ! -e /proc/sys/net/onepipe/controlled ] &&
		tap_abort "onepipe.ko has no net.onepipe.controlled"
	return 0
}

# keep_ctl_logs DIR: the fabric's logs (onepiped, agents, switches) and
# topology into $WORK/DIR, before fabric down removes them.
keep_ctl_logs()
{
	local f
	mkdir -p "$WORK/$1"
	for f in "$FABRIC_RUN"/*.log "$FABRIC_RUN"/topology; do
		[ -e "$f" ] && cp "$f" "$WORK/$1/" 2>/dev/null
	done
	return 0
}

up_with_controller()
{
	# --controller: fabric_up leaves the controller out unless asked.
	fabric_up --hosts 4 --tors 2 --interval-us "$INTERVAL_US" \
		--timeout-intervals "$TIMEOUT_INTERVALS" --controller || return 1
	# fabric up waited for every node to be connected, idle, no failure.
	timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/ctl-up.out" 2>&1
}

# ctl_wait HOSTS SECS OUT: polls the controller until its procedure is
# idle with exactly the failed hosts HOSTS (e.g. "3,4"; "" for none);
# its last answer is left in OUT (JSON).  Prints the seconds it took, or
# what it saw last.
ctl_wait()
{
	python3 - "$FABRIC" "$1" "$2" "$3" <<'PY'
import json, subprocess, sys, time
fabric, want, secs, out = sys.argv[1:5]
want = sorted(int(h) for h in want.split(",") if h)
t0 = time.monotonic()
while True:
    r = subprocess.run([fabric, "ctl", "show", "-j"], capture_output=True,
                       text=True)
    try:
        c = json.loads(r.stdout)["controller"]
        hosts = sorted(f["host"] for f in c["failures"] if "host" in f)
        last = "phase %s, failed hosts %s" % (c["phase"], hosts)
        if c["phase"] == "idle" and hosts == want:
            with open(out, "w") as fh:
                fh.write(r.stdout)
            print("%.3f" % (time.monotonic() - t0))
            sys.exit(0)
    except (ValueError, KeyError, TypeError):
        last = "no answer: " + (r.stderr.strip() or r.stdout)[:200]
    if time.monotonic() - t0 > float(secs):
        with open(out, "w") as fh:
            fh.write(r.stdout)
        print(last)
        sys.exit(1)
    time.sleep(0.1)
PY
}

# rejoined_wait HOST SECS: until the controller is idle and host HOST's
# failure is marked rejoined.  Prints the seconds it took, or what it
# saw last.
rejoined_wait()
{
	python3 - "$FABRIC" "$1" "$2" <<'PY'
import json, subprocess, sys, time
fabric, host, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t0, last = time.monotonic(), ""
while time.monotonic() - t0 < secs:
    r = subprocess.run([fabric, "ctl", "show", "-j"], capture_output=True,
                       text=True)
    try:
        c = json.loads(r.stdout)["controller"]
        f = [x for x in c["failures"] if x.get("host") == host]
        last = "phase %s, h%d %s" % (c["phase"], host, f)
        if c["phase"] == "idle" and f and all(x.get("rejoined") for x in f):
            print("%.1f" % (time.monotonic() - t0))
            sys.exit(0)
    except (ValueError, KeyError, TypeError):
        last = "no answer: " + (r.stderr or r.stdout)[:200]
    time.sleep(0.2)
print(last)
sys.exit(1)
PY
}

# round CASE PORT FAILED...: one op-traffic per host on PORT, every host
# sending SCATS scatterings to all the others; FAILED hosts linger
# shorter.  Logs $WORK/CASE-hN.log, listed in $logs.
round()
{
	local case=$1 port=$2 h peers linger
	shift 2
	logs=()
	for h in 1 2 3 4; do
		peers=$(for o in 1 2 3 4; do
			[ "$o" = "$h" ] || printf '%s:%s,' "$o" "$port"
		done)
		linger=$LINGER_MS
		case " $* " in *" $h "*) linger=2000 ;; esac
		logs+=("$WORK/$case-h$h.log")
		traffic_start "h$h" "$port" "$WORK/$case-h$h.log" 180 \
			--type rdm --size 100 --peers "${peers%,}" --fanout 3 \
			--scatterings "$SCATS" --interval-us "$SEND_INTERVAL_US" \
			--linger-ms "$linger" --seed "$port" --until-down --quiet
	done
}

# round_end FAILED...: waits for the correct hosts' op-traffic, then
# takes the FAILED hosts' transport down and waits for theirs (see the
# top).  Each log's exit status goes to LOG.rc.
round_end()
{
	local e pid log h rc
	local -a later=()
	for e in "${_traffic[@]}"; do
		pid=${e%%:*}
		log=${e#*:}
		h=${log##*-h}
		h=${h%.log}
		case " $* " in
		*" $h "*) later+=("$e") && continue ;;
		esac
		rc=0
		wait "$pid" || rc=$?
		echo "$rc" >"$log.rc"
	done
	for h in "$@"; do
		fx "h$h" "$ONEPIPE" host down >/dev/null 2>&1 ||
			diag "onepipe host down in h$h failed"
	done
	for e in "${later[@]}"; do
		pid=${e%%:*}
		log=${e#*:}
		rc=0
		wait "$pid" || rc=$?
		echo "$rc" >"$log.rc"
		[ "$rc" = 0 ] || diag "failed host's op-traffic $(basename \
			"$log") exited $rc (its log may be incomplete)"
	done
	step "traffic round $_round done"
	_traffic=()
	_round=$((_round + 1))
}

# ran_ok NAME LOG...: those op-traffic exited 0.
ran_ok()
{
	local name=$1 log bad=
	shift
	for log in "$@"; do
		[ "$(cat "$log.rc" 2>/dev/null)" = 0 ] ||
			bad+=" $(basename "$log" .log):$(cat "$log.rc" 2>/dev/null)"
	done
	if [ -z "$bad" ]; then
		tap_pass "$name"
	else
		for log in "$@"; do
			diag "$(basename "$log"): $(tail -n 3 "$log.out" 2>/dev/null)"
		done
		tap_fail "$name" "exit status:$bad"
	fi
}

# analyse CASE FAULT_NS CORRECT [CTL_JSON ONEPIPED_LOG]: the figures of
# one case, "KEY VALUE..." lines in $WORK/CASE.analysis:
#   notified N M   correct processes with an F line matching every
#                  decision, of M
#   phases D C     ms from the (first) failure timestamp to the
#                  controller's (first) decision and to the (last)
#                  "procedure complete" (onepiped's log: one fabric per
#                  failure case); "- -" without them
#   resumed N      deliveries at correct processes, from correct ones,
#                  stamped after the procedure completed (after the
#                  failure ts if the log does not say)
#   stall US BASE_US  the longest gap between deliveries at a correct
#                  process from 1 s before FAULT_NS on (while the
#                  correct senders were still sending), and before it
analyse()
{
	python3 - "$WORK" "$@" >"$WORK/$1.analysis" 2>&1 <<'PY'
import datetime, json, os, re, sys
work, case, fault, correct = sys.argv[1:5]
ctl = sys.argv[5] if len(sys.argv) > 5 else ""
opdlog = sys.argv[6] if len(sys.argv) > 6 else ""
fault = int(fault)
correct = [int(h) for h in correct.split(",")]
M = 1 << 48


def rel(ts, ref):
    """ts (48-bit) minus ref (ns since the epoch), wrap-around aware."""
    d = (ts - ref) % M
    return d - M if d >= M // 2 else d


logs, summ = {}, {}
for h in range(1, 5):
    path = os.path.join(work, "%s-h%d.log" % (case, h))
    try:
        logs[h] = [ln.split() for ln in open(path) if ln.strip()]
    except OSError:
        logs[h] = []
    try:
        summ[h] = json.load(open(path + ".json"))
    except (OSError, ValueError):
        summ[h] = {}
decisions = {}
if ctl:
    c = json.load(open(ctl))["controller"]
    decisions = {f["host"]: (f["ts"], f["epoch"]) for f in c["failures"]
                 if "host" in f}
ok = 0
for h in correct:
    got = {(int(f[2]), int(f[1]), int(f[3])) for f in logs[h] if f[0] == "F"}
    ok += all((fh, ts, ep) in got for fh, (ts, ep) in decisions.items())
print("notified %d %d" % (ok, len(correct)))

# onepiped's log: "2026-01-01T10:00:00.123Z onepiped[N] LEVEL: text"
decided = complete = None
stamp = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z ")
try:
    for line in open(opdlog) if opdlog else []:
        m = stamp.match(line)
        if not m:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
        t = t.replace(tzinfo=datetime.timezone.utc)
        ns = int(t.timestamp()) * 10 ** 9 + t.microsecond * 1000
        if decided is None and re.search(r"epoch \d+: decided", line):
            decided = ns
        if "procedure complete" in line:
            complete = ns
except OSError:
    pass
first_ts = min((ts for ts, _ in decisions.values()), default=None)
if first_ts and decided and complete:
    print("phases %d %d" % (-rel(first_ts, decided) // 10 ** 6,
                            -rel(first_ts, complete) // 10 ** 6))
else:
    print("phases - -")
after = complete if complete else None
resumed = sum(1 for h in correct for f in logs[h]
              if f[0] == "R" and int(f[2].split(":")[0]) in correct and
              (rel(int(f[1]), after) > 0 if after else
               first_ts is None or rel(int(f[1]), fault) >
               rel(first_ts, fault)))
print("resumed %d" % resumed)
ends = [summ[h].get("last_send_ns", 0) for h in correct]
end = min(e for e in ends if e) - fault if any(ends) else 0
starts = [summ[h].get("first_send_ns", 0) for h in correct]
start = max(starts) - fault if any(starts) else -10 ** 10
stall = base = 0
for h in correct:
    top = None
    for f in logs[h]:
        if f[0] != "R":
            continue
        t = rel(int(f[1]) + int(f[6]), fault)   # estimated receive time
        if top is not None and t > top:
            gap = t - top
            if -10 ** 9 <= top <= end:
                stall = max(stall, gap)
            elif start + 5 * 10 ** 8 <= top and t <= -2 * 10 ** 8:
                base = max(base, gap)
        top = t if top is None else max(top, t)
print("stall %d %d" % (stall // 1000, base // 1000))
PY
}

val()
{
	awk -v k="$2" -v i="$3" '$1 == k { print $i; exit }' \
		"$WORK/$1.analysis"
}

# stall_point NAME CASE: prints the stall figures as a test point (it
# fails only if there was nothing to measure).
stall_point()
{
	local name=$1 case=$2 us base n msg ph=""
	us=$(val "$case" stall 2)
	base=$(val "$case" stall 3)
	if [ "$(val "$case" phases 2)" != - ]; then
		ph="; decided $(val "$case" phases 2) ms and complete"
		ph+=" $(val "$case" phases 3) ms after the failure ts"
	fi
	n=$(awk -v a="${us:-0}" -v b="$INTERVAL_US" \
		'BEGIN { printf "%.1f", a / b }')
	msg="$case: delivery stall ${us:-?} us = $n beacon intervals of"
	msg+=" $INTERVAL_US us (before the fault: ${base:-?} us)$ph"
	diag "$msg"
	if [ "${us:-0}" -gt 0 ]; then
		tap_pass "$name" "$us us = $n intervals; before: $base us$ph"
	else
		diag "$(cat "$WORK/$case.analysis")"
		tap_fail "$name" "no deliveries to measure"
	fi
}

# applied NAME HOSTS CTL_JSON [once]: every host of HOSTS lists the
# controller's decisions in onepipe fail show, done (not pending), with
# their ts.  The epoch a host shows is that of the last FAIL it answered
# for the host: a failure decided in epoch E and sent again with a later
# decision of the same procedure shows that later epoch, so any epoch
# from E to the controller's current one is accepted.  With "once", each
# decision is listed exactly once with its own epoch (ctl_etcd.sh: across
# a takeover, a decision applied twice or in another epoch must fail).
applied()
{
	local name=$1 hosts=$2 ctl=$3 once=${4:-} h bad=
	for h in ${hosts//,/ }; do
		fx "h$h" "$ONEPIPE" -j fail show >"$WORK/fail-show-h$h.json" \
			2>&1 || true
		python3 - "$ctl" "$WORK/fail-show-h$h.json" "$once" <<'PY' ||
import json, sys
c = json.load(open(sys.argv[1]))["controller"]
want = sorted((f["host"], f["ts"], f["epoch"]) for f in c["failures"]
              if "host" in f)
got = sorted((f["host"], f["ts"], f["epoch"])
             for f in json.load(open(sys.argv[2])) if not f.get("pending"))
if sys.argv[3] == "once":
    ok = want == [g for g in got if g[0] in {w[0] for w in want}]
else:
    ok = all(any(h == gh and ts == gts and e <= ge <= c["epoch"]
                 for gh, gts, ge in got) for h, ts, e in want)
sys.exit(0 if want and ok else 1)
PY
			bad+=" h$h"
	done
	if [ -z "$bad" ]; then
		tap_pass "$name"
	else
		diag "$(head -c 600 "$WORK"/fail-show-h*.json)"
		tap_fail "$name" "not applied${once:+ exactly once} (or pending) at$bad"
	fi
}

# fabric_kill NODE: the fault of a kill case.
fabric_kill()
{
	timeout $((30 * OP_SLOW)) "$FABRIC" kill "$1"
}

# kill_case CASE PORT FAILED CORRECT WHO LABEL FAULT CMD...: a traffic
# round, CMD... at FAULT_AFTER_MS into it (test point "LABEL: FAULT";
# CMD may leave a note for it in FAULT_DETAIL), the controller's
# decision, checks.  FAILED and CORRECT are host lists ("3,4"), WHO names
# the correct ones in the test points ("h1-h2"), LABEL the case.  Leaves
# the fault's time in $fault, the controller's final view in
# $WORK/CASE-ctl.json.
kill_case()
{
	local case=$1 port=$2 failed=$3 correct=$4 who=$5 label=$6 what=$7
	local took h n m clogs=()
	shift 7
	# shellcheck disable=SC2086 # one host per word
	round "$case" "$port" ${failed//,/ }
	traffic_go
	sleep_until $(($(round_start_ns) + FAULT_AFTER_MS * 1000000))
	fault=$(now_ns)
	FAULT_DETAIL=
	if "$@" >"$WORK/$case-fault.out" 2>&1; then
		tap_pass "$label: $what" \
			"took $((($(now_ns) - fault) / 1000000)) ms${FAULT_DETAIL:+; $FAULT_DETAIL}"
	else
		diag "$*:" "$(tail -n 20 "$WORK/$case-fault.out")"
		tap_fail "$label: $what" "${FAULT_DETAIL:-$* failed}"
	fi
	step "fault done: $*"
	if took=$(ctl_wait "$failed" "$DECIDE_S" "$WORK/$case-ctl.json"); then
		tap_pass "$label: the controller failed h${failed//,/ h} and went idle" \
			"within $took s of the fault's end"
	else
		timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/$case-ctl.out" 2>&1
		diag "$(head -n 40 "$WORK/$case-ctl.out")"
		tap_fail "$label: the controller failed h${failed//,/ h} and went idle" \
			"after ${DECIDE_S}s: $took"
	fi
	step "controller decided"
	timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/$case-ctl.out" 2>&1
	applied "$label: $who applied the decision (fail show)" \
		"$correct" "$WORK/$case-ctl.json"
	# shellcheck disable=SC2086 # one host per word
	round_end ${failed//,/ }
	for h in ${correct//,/ }; do
		clogs+=("$WORK/$case-h$h.log")
	done
	ran_ok "$label: $who traffic ran" "${clogs[@]}"
	analyse "$case" "$fault" "$correct" "$WORK/$case-ctl.json" \
		"$FABRIC_RUN/onepiped.log"
	n=$(val "$case" notified 2)
	m=$(val "$case" notified 3)
	if [ -n "$n" ] && [ "$n" = "$m" ]; then
		tap_pass "$label: $who processes notified (F lines)" "$n of $m"
	else
		diag "$(grep -H '^F' "${logs[@]}" | head)"
		tap_fail "$label: $who processes notified (F lines)" \
			"${n:-?} of ${m:-?} with the decision's ts and epoch"
	fi
	n=$(val "$case" resumed 2)
	if [ "${n:-0}" -gt 0 ]; then
		tap_pass "$label: delivery among $who resumed" \
			"$n messages stamped after the procedure completed"
	else
		tap_fail "$label: delivery among $who resumed" \
			"nothing stamped after the procedure completed delivered"
	fi
	run_check "$label: op-check --reliable --failures" --reliable \
		--failures "$WORK/$case-ctl.json" "${logs[@]}"
	stall_point "$label: delivery stall at $who" "$case"
}

# rejoin_case LABEL WHAT HOST PORT CMD...: failed host HOST comes back:
# CMD... (test point "LABEL: WHAT") brings its link, agent and transport
# back; the controller makes it rejoin; then a round of REJOIN_SCATS
# among all four hosts is delivered exactly once (op-check --reliable
# --expect-all: nothing taken for a copy of the old incarnation's
# messages).  Four test points.
rejoin_case()
{
	local label=$1 what=$2 host=$3 port=$4 took out
	local SCATS=$REJOIN_SCATS	# round's, for this round only
	shift 4
	out=$WORK/rejoin-h$host-back.out
	if "$@" >"$out" 2>&1; then
		tap_pass "$label: $what"
	else
		diag "$*:" "$(tail -n 20 "$out")"
		tap_fail "$label: $what"
	fi
	step "h$host back: $*"
	if took=$(rejoined_wait "$host" "$DECIDE_S"); then
		tap_pass "$label: h$host rejoined, the controller went idle" \
			"within $took s"
	else
		timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/rejoin-ctl.out" 2>&1
		diag "$(head -n 40 "$WORK/rejoin-ctl.out")" \
			"$(tail -n 20 "$FABRIC_RUN/agent-h$host.log" 2>/dev/null)"
		tap_fail "$label: h$host rejoined, the controller went idle" \
			"$took"
	fi
	round "rejoin-h$host" "$port"
	traffic_go
	round_end
	ran_ok "$label: traffic among all four ran" "${logs[@]}"
	run_check "$label: op-check --reliable --expect-all" --reliable \
		--expect-all "${logs[@]}"
}

# host_configure HOST: configures fabric host HOST's transport again as
# fabric up did (udp, its address and its ToR's on the uplink).
host_configure()
{
	timeout $((60 * OP_SLOW)) "$FABRIC" exec "h$1" "$ONEPIPE" host set id "$1" \
		transport udp local "10.77.$1.2" uplink "10.77.$1.1"
}
