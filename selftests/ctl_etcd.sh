#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The failure controller on etcd, end to end: two onepiped instances
# (fabric up --etcd: ctl0 active, ctl1 standby, lease 2 s, one socket
# path) on a real three-member etcd cluster on 127.0.0.1 in the initial
# netns (userspace/controller/tests/etcd_cluster.sh starts it and runs
# this script again with the endpoints as its argument), 4 hosts behind
# 2 ToRs, the timing of ctl_failure.sh.  One SOCK_RDM op-traffic per host
# sends scatterings to every other host (fanout 3) every 20 ms.
#
# 1. fabric kill h4 during the traffic, and at once the active instance
#    is SIGKILLed (fabric ctl-kill active), while h4's silence is being
#    detected.  The standby takes over within the lease (the takeover
#    time is printed) and runs the procedure: h4 failed once, in epoch 1,
#    phase idle; h1-h3 applied it (onepipe fail show); delivery among
#    h1-h3 resumes; op-check --reliable --failures passes.
# 2. fabric ctl-start ctl0: back, as a standby.  One etcd member is
#    killed ($ETCD_KILL_ONE: the first endpoint): the active instance
#    keeps its lease; fabric kill h3 is decided (epoch 2) and applied at
#    h1-h2 through the two members left; then the active instance is
#    killed again and ctl0 takes over with that state.
#
# The fabric's constants, the traffic round and its end, ran_ok,
# keep_ctl_logs and applied (here "once": across a takeover each decision
# is applied exactly once) are ctl_lib.sh's; polling one instance's role,
# pid and epoch is etcd's, here.
set -u

# Without endpoints: start the cluster, which runs this script again.
if [ $# -eq 0 ]; then
	exec "$(dirname "$0")/../userspace/controller/tests/etcd_cluster.sh" \
		"$0"
fi
ETCD_EP=$1
shift
# ONEPIPED AGENT FABRIC_RUN SCATS SEND_INTERVAL_US INTERVAL_US
# TIMEOUT_INTERVALS FAULT_AFTER_MS LINGER_MS DECIDE_S and DIAG_KEYS's
# reliable-service counters: ctl_lib.sh's.
source "$(dirname "$0")/ctl_lib.sh"

LEASE_S=${OP_ETCD_LEASE_S:-2}
# Takeover after a crash: at most the lease plus a third of it (the
# standby campaigns every third); plus what an emulated guest adds.
TAKEOVER_MAX_MS=$((LEASE_S * 1000 * 4 / 3 + 2000))
PORT=7010

tap_plan "etcd cluster and fabric up with ctl0 active, ctl1 standby" \
	"kill h4: fabric kill h4 during the traffic" \
	"kill h4: ctl-kill active during the failure" \
	"kill h4: the standby took over within the lease" \
	"kill h4: h4 failed once (epoch 1), phase idle" \
	"kill h4: h1-h3 applied the decision (fail show)" \
	"kill h4: h1-h3 traffic ran" \
	"kill h4: delivery among h1-h3 resumed" \
	"kill h4: op-check --reliable --failures" \
	"ctl-start ctl0: back as a standby" \
	"etcd member killed: the active instance keeps its lease" \
	"etcd member killed: kill h3 decided (epoch 2), phase idle" \
	"etcd member killed: h1-h2 applied epoch 2 (fail show)" \
	"etcd member killed: ctl-kill active, ctl0 takes over the state"

ctl_prereqs
diag "etcd endpoints: $ETCD_EP"

# ctl_poll SECS OUT PYEXPR: polls the controller (SHOW through the
# socket, j = the answer) until PYEXPR holds; the last answer goes to OUT.
# Prints the seconds it took, or the last phase seen.  Not ctl_lib.sh's
# ctl_wait, which only knows "idle with exactly these failed hosts": here
# the instance's role and pid (a takeover) and the epoch count too.
ctl_poll()
{
	python3 - "$ONEPIPE" "$FABRIC_RUN/onepiped.sock" "$@" <<'PY'
import json, subprocess, sys, time
cli, sock, secs, out, expr = sys.argv[1:6]
t0 = time.monotonic()
last = "no answer"
while True:
    r = subprocess.run([cli, "controller", "show", "-j", "--socket", sock],
                       capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
        c = j["controller"]
        last = "%s pid %s, epoch %s, phase %s, failed %s" % (
            j["daemon"]["role"], j["daemon"]["pid"], c["epoch"],
            c["phase"], sorted(f["host"] for f in c["failures"]
                               if "host" in f))
        if eval(expr):
            open(out, "w").write(r.stdout)
            print("%.3f" % (time.monotonic() - t0))
            sys.exit(0)
    except (ValueError, KeyError, TypeError):
        pass
    if time.monotonic() - t0 > float(secs):
        open(out, "w").write(r.stdout)
        print(last)
        sys.exit(1)
    time.sleep(0.05)
PY
}

# idle_with HOSTS EPOCH: the ctl_poll condition "idle, epoch EPOCH,
# exactly one failure entry per host of HOSTS (e.g. 3,4)".
idle_with()
{
	echo "c['phase'] == 'idle' and c['epoch'] == $2 and" \
		"sorted(f['host'] for f in c['failures'] if 'host' in f)" \
		"== sorted([$1])"
}

# resumed AFTER_NS HOSTS LOG...: deliveries at correct hosts (HOSTS) from
# correct ones, stamped after AFTER_NS.
resumed()
{
	python3 - "$@" <<'PY'
import sys
after, hosts = int(sys.argv[1]), {int(h) for h in sys.argv[2].split(",")}
M = 1 << 48
n = 0
for path in sys.argv[3:]:
    for ln in open(path):
        f = ln.split()
        if len(f) < 3 or f[0] != "R" or int(f[2].split(":")[0]) not in hosts:
            continue
        d = (int(f[1]) - after) % M
        n += 0 < d < M // 2
print(n)
PY
}

# The last step of the procedure instance ID logged.
last_step()
{
	grep -E 'decided|every correct host is done|resuming|procedure complete' \
		"$FABRIC_RUN/onepiped-$1.log" | tail -n 1 | sed 's/^[^ ]* [^ ]* //'
}

# ---------------------------------------------------------------- setup

if fabric_up --hosts 4 --tors 2 --interval-us "$INTERVAL_US" \
	--timeout-intervals "$TIMEOUT_INTERVALS" --controller \
	--etcd "$ETCD_EP" --standbys 1 --lease-s "$LEASE_S" &&
	[ "$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-active 2>&1)" = ctl0 ] &&
	kill -0 "$(cat "$FABRIC_RUN/onepiped-ctl1.pid")" 2>/dev/null; then
	tap_pass "etcd cluster and fabric up with ctl0 active, ctl1 standby"
else
	timeout $((30 * OP_SLOW)) "$FABRIC" status >"$WORK/status.out" 2>&1
	diag "$(tail -n 12 "$WORK/status.out")"
	tap_abort "fabric up --etcd failed"
fi

# ---------------------------------------------------------- 1. kill h4

round kill "$PORT" 4
traffic_go
sleep_until $(($(round_start_ns) + FAULT_AFTER_MS * 1000000))
old=$(cat "$FABRIC_RUN/onepiped-ctl0.pid" 2>/dev/null)
if out=$(timeout $((30 * OP_SLOW)) "$FABRIC" kill h4 2>&1); then
	tap_pass "kill h4: fabric kill h4 during the traffic"
else
	diag "$out"
	tap_fail "kill h4: fabric kill h4 during the traffic"
fi
# At once: h4 is cut, its ToR reports it only after the commit timeout,
# so the standby has the whole procedure to run from the saved state
# (a kill between decision and completion is a unit test of ctl_logic
# and of onepiped's etcd mode: a procedure is shorter than a process
# start in this guest).
if out=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-kill active 2>&1); then
	tap_pass "kill h4: ctl-kill active during the failure" "$out"
else
	diag "$out"
	tap_fail "kill h4: ctl-kill active during the failure"
fi
killed_at=${out##* at }
if took=$(ctl_poll 20 "$WORK/takeover.json" \
	"j['daemon']['role'] == 'active' and j['daemon']['pid'] != $old"); then
	# From the kill to the line the new active instance logs when it
	# listens (UTC, ms), both from this guest's clock.
	listen=$(grep 'listening on' "$FABRIC_RUN/onepiped-ctl1.log" |
		tail -n 1 | cut -d' ' -f1)
	ms=$(python3 -c '
import datetime, sys
p = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
print(int((p(sys.argv[2]) - p(sys.argv[1])).total_seconds() * 1000))
' "$killed_at" "$listen" 2>/dev/null)
	if [ -n "$ms" ] && [ "$ms" -le "$TAKEOVER_MAX_MS" ]; then
		tap_pass "kill h4: the standby took over within the lease" \
			"ctl1 listening $ms ms after the kill (lease $LEASE_S s)"
	else
		tap_fail "kill h4: the standby took over within the lease" \
			"${ms:-?} ms after the kill, max $TAKEOVER_MAX_MS"
	fi
	diag "takeover: killed at $killed_at, ctl1 listening at $listen"
else
	tap_fail "kill h4: the standby took over within the lease" \
		"none after 20 s: $took"
fi
if took=$(ctl_poll "$DECIDE_S" "$WORK/kill-ctl.json" "$(idle_with 4 1)"); then
	done_ns=$(now_ns)
	tap_pass "kill h4: h4 failed once (epoch 1), phase idle" \
		"$took s after the takeover"
else
	done_ns=$(now_ns)
	timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/kill-ctl.out" 2>&1
	diag "$(head -n 40 "$WORK/kill-ctl.out")"
	tap_fail "kill h4: h4 failed once (epoch 1), phase idle" "$took"
fi
applied "kill h4: h1-h3 applied the decision (fail show)" 1,2,3 \
	"$WORK/kill-ctl.json" once

# The correct hosts' traffic ends by itself; h4's once its transport is
# down (it is cut off: its messages wait for ACKs that never come).
round_end 4
ran_ok "kill h4: h1-h3 traffic ran" "${logs[@]:0:3}"
n=$(resumed "$done_ns" 1,2,3 "${logs[@]:0:3}")
if [ "${n:-0}" -gt 0 ]; then
	tap_pass "kill h4: delivery among h1-h3 resumed" \
		"$n messages stamped after the procedure completed"
else
	tap_fail "kill h4: delivery among h1-h3 resumed" \
		"nothing stamped after the procedure completed delivered"
fi
run_check "kill h4: op-check --reliable --failures" --reliable \
	--failures "$WORK/kill-ctl.json" "${logs[@]}"

# ---------------------------------------- 2. etcd member down, h3 killed

active=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-active 2>&1)
apid=$(cat "$FABRIC_RUN/onepiped-$active.pid" 2>/dev/null)
out=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-start ctl0 2>&1)
sleep $((LEASE_S * 2))
now=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-active 2>&1)
if [ "$active" = ctl1 ] && [ "$now" = ctl1 ] &&
	kill -0 "$(cat "$FABRIC_RUN/onepiped-ctl0.pid")" 2>/dev/null; then
	tap_pass "ctl-start ctl0: back as a standby"
else
	diag "$out"
	tap_fail "ctl-start ctl0: back as a standby" \
		"active before: $active, after: $now"
fi

# shellcheck disable=SC2086 # "kill -KILL PID"
${ETCD_KILL_ONE:?}
step "etcd member killed: $ETCD_KILL_ONE"
sleep $((LEASE_S * 2))
now=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-active 2>&1)
if [ "$now" = "$active" ] && [ "$(cat "$FABRIC_RUN/onepiped-$now.pid" \
	2>/dev/null)" = "$apid" ] && ! grep -q 'lost the leadership' \
	"$FABRIC_RUN/onepiped-$active.log"; then
	tap_pass "etcd member killed: the active instance keeps its lease" \
		"$active after $((LEASE_S * 2)) s"
else
	diag "$(tail -n 5 "$FABRIC_RUN/onepiped-$active.log")"
	tap_fail "etcd member killed: the active instance keeps its lease" \
		"active now: $now"
fi

out=$(timeout $((30 * OP_SLOW)) "$FABRIC" kill h3 2>&1) || diag "fabric kill h3: $out"
if took=$(ctl_poll "$DECIDE_S" "$WORK/kill3-ctl.json" "$(idle_with 3,4 2)"); then
	tap_pass "etcd member killed: kill h3 decided (epoch 2), phase idle" \
		"$took s after the kill"
else
	timeout $((30 * OP_SLOW)) "$FABRIC" ctl show >"$WORK/kill3-ctl.out" 2>&1
	diag "$(head -n 40 "$WORK/kill3-ctl.out")"
	tap_fail "etcd member killed: kill h3 decided (epoch 2), phase idle" \
		"$took"
fi
applied "etcd member killed: h1-h2 applied epoch 2 (fail show)" 1,2 \
	"$WORK/kill3-ctl.json" once

out=$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-kill active 2>&1)
t0=$(now_ns)
step "$out"
if took=$(ctl_poll 20 "$WORK/takeover2.json" \
	"j['daemon']['role'] == 'active' and j['daemon']['pid'] != $apid and $(idle_with 3,4 2)") &&
	[ "$(timeout $((30 * OP_SLOW)) "$FABRIC" ctl-active 2>&1)" = ctl0 ]; then
	tap_pass "etcd member killed: ctl-kill active, ctl0 takes over the state" \
		"$((($(now_ns) - t0) / 1000000)) ms after the kill"
else
	tap_fail "etcd member killed: ctl-kill active, ctl0 takes over the state" \
		"$took"
fi
keep_ctl_logs fabric
