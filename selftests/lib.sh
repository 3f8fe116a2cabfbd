# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the AF_ONEPIPE scenario selftests (sourced, not run).
#
# A scenario declares its test points up front with tap_plan, reports each
# one with tap_pass/tap_fail, and may give up with tap_abort: every point
# not reported by then is printed as "not ok ... not run", so the TAP
# counts stay honest whatever happens.  The EXIT trap brings the fabric
# down, kills what the scenario started and keeps the logs under
# .build/selftests/logs/<scenario>/ for post-mortems on the host.

set -u

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)}
FABRIC=${FABRIC:-$TOP/tools/fabric/fabric}
ONEPIPE=${ONEPIPE:-$TOP/tools/onepipe/onepipe}
TRAFFIC=${TRAFFIC:-$TOP/tools/traffic/op-traffic}
CHECK=${CHECK:-$TOP/tools/checker/op-check}
ONEPIPE_KO=${ONEPIPE_KO:-$TOP/kernel/onepipe.ko}
# The hosts' transport: udp, or verbs (Soft-RoCE; run-in-vm sets it for
# SUITE@verbs).  The fabric tool reads ONEPIPE_FABRIC_TRANSPORT.
OP_TRANSPORT=${OP_TRANSPORT:-udp}
export ONEPIPE_FABRIC_TRANSPORT=$OP_TRANSPORT
# OP_SLOW=N: the guest is N times slower than the one the scenarios'
# timing was set for (run-in-vm sets 3 on the sanitizer kernel).  The
# harness's own waits (fabric up, binding, the time limits of op-check
# and fabric commands; op-traffic's by the larger factor) are N times
# longer; message counts and the checks stay as they are.
OP_SLOW=${OP_SLOW:-1}
[[ $OP_SLOW =~ ^[1-9][0-9]*$ ]] || { echo "OP_SLOW: not a positive integer" >&2; exit 2; }
# OP_SLOW_NET=N (default OP_SLOW): the fabric's packet rate must be N
# times lower: the beacon interval (unless OP_SLOW_BEACON says otherwise;
# with it every timeout counted in intervals), the scenarios' send
# intervals (send_interval_us), the ACK timeout, which waits for a trip
# through the fabric and back, and with it op-traffic's lingers
# (traffic_start) are N times longer. Packet rate is what a slow guest
# runs out of first. On the sanitizer kernel (run-in-vm sets 10 there)
# a 6 ms interval kept both CPUs busy with beacons, the software switches
# got the CPU about ten times a second and barriers lagged the clocks by
# 23-33 s; at 20 ms an idle fabric kept up (a 119 ms commit lag), but
# order_4x2's 2,400 messages a second put the barriers 8-12 s behind, so
# every ACK came after its 6 s timeout.
OP_SLOW_NET=${OP_SLOW_NET:-$OP_SLOW}
[[ $OP_SLOW_NET =~ ^[1-9][0-9]*$ ]] ||
	{ echo "OP_SLOW_NET: not a positive integer" >&2; exit 2; }
# OP_SLOW_BEACON=N (default OP_SLOW_NET): the default beacon interval
# alone N times longer.  Idle beacons are most of a fabric's packets: on
# the sanitizer kernel (run-in-vm sets 25 there) each costs about 3 ms of
# guest CPU, and at 20 ms an idle 4x2 fabric kept 1.6 of the 2 vCPUs
# busy, so every process of the scenario crawled; at 50 ms rdm_mixed took
# 399 s instead of 492-539 s, with ordering still well inside the ACK
# timeout.
OP_SLOW_BEACON=${OP_SLOW_BEACON:-$OP_SLOW_NET}
[[ $OP_SLOW_BEACON =~ ^[1-9][0-9]*$ ]] ||
	{ echo "OP_SLOW_BEACON: not a positive integer" >&2; exit 2; }

# send_interval_us US: a scenario's pause between scatterings, US at
# full speed (OP_SEND_INTERVAL_US overrides it).
send_interval_us()
{
	echo "${OP_SEND_INTERVAL_US:-$(($1 * OP_SLOW_NET))}"
}
# What fabric_up calls when the transport is not available here (fabric
# exit status 4): by default every point is reported as skipped.
FABRIC_UNAVAILABLE=${FABRIC_UNAVAILABLE:-tap_skip_all}

SCENARIO=$(basename "$0" .sh)
WORK=$(mktemp -d "/tmp/op-$SCENARIO.XXXXXX")
LOGKEEP=$TOP/.build/selftests/logs/$SCENARIO

_t0=$SECONDS
_tap_names=()
_tap_next=0
_tap_failed=0
_fabric_up=0
_pids=()

# ------------------------------------------------------------------ TAP

# tap_plan NAME...: declare the test points, in the order they will come.
tap_plan()
{
	_tap_names=("$@")
	echo "TAP version 13"
	echo "1..$#"
}

# step WHAT: a timestamped diagnostic, to see where a scenario's time goes.
step() { echo "# [$((SECONDS - _t0))s] $*"; }

# Diagnostic lines (TAP comments).
diag()
{
	local l
	printf '%s\n' "$@" | while IFS= read -r l; do echo "# $l"; done
}

# Reports the next point; its name must be the one declared next.
_tap_report()
{
	local status=$1 name=$2 text=$3 want
	want=${_tap_names[$_tap_next]:-}
	if [ "$want" != "$name" ]; then
		diag "lib.sh: reported '$name' but expected '$want'"
	fi
	_tap_next=$((_tap_next + 1))
	if [ "$status" = ok ]; then
		echo "ok $_tap_next - $name${text:+ ($text)}"
	elif [ "$status" = skip ]; then
		echo "ok $_tap_next - $name # SKIP $text"
	else
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_next - $name: ${text:-failed}"
	fi
}

tap_pass() { _tap_report ok "$1" "${2:-}"; }
tap_fail() { _tap_report fail "$1" "${2:-failed}"; }
# tap_skip NAME REASON: the point cannot be checked on this machine (a
# tool is missing, say); counted as a skip, never a pass.
tap_skip() { _tap_report skip "$1" "$2"; }

# tap_check NAME REASON CMD...: pass when CMD succeeds.
tap_check()
{
	local name=$1 reason=$2
	shift 2
	if "$@"; then
		tap_pass "$name"
	else
		tap_fail "$name" "$reason"
	fi
}

# check_traffic_ran NAME: every op-traffic process of the round exited 0.
check_traffic_ran()
{
	tap_check "$1" "some op-traffic failed" traffic_wait
}

# check_all_sent NAME WANT LOG...: every planned message went out.  Leaves
# the count in $sent for later points.
check_all_sent()
{
	local name=$1 want=$2

	shift 2
	sent=$(sent_msgs "$@")
	if [ "$sent" -eq "$want" ]; then
		tap_pass "$name" "$sent"
	else
		tap_fail "$name" "$sent of $want"
	fi
}

# check_all_delivered NAME WANT LOG...: receivers logged WANT deliveries.
check_all_delivered()
{
	local name=$1 want=$2 recvd

	shift 2
	recvd=$(count_lines R "$@")
	if [ "$recvd" -eq "$want" ]; then
		tap_pass "$name" "$recvd"
	else
		tap_fail "$name" "$recvd of $want"
	fi
}

# check_no_failures NAME LOG...: no sender was told of a failure; the
# first E lines are shown if one was.
check_no_failures()
{
	local name=$1 errs

	shift
	errs=$(count_lines E "$@")
	if [ "$errs" -eq 0 ]; then
		tap_pass "$name"
	else
		diag "$(awk '$1 == "E" { print FILENAME ": " $0 }' "$@" |
			head -n 10)"
		tap_fail "$name" "$errs E lines"
	fi
}

# Every point not reported yet fails with REASON; then exit.
tap_abort()
{
	local reason=$1
	diag "aborting: $reason"
	while [ "$_tap_next" -lt "${#_tap_names[@]}" ]; do
		_tap_report fail "${_tap_names[$_tap_next]}" "not run: $reason"
	done
	exit 1
}

# tap_skip_all REASON: the scenario cannot run on this machine (no
# Soft-RoCE, say): every point not reported yet is a SKIP, never a pass.
tap_skip_all()
{
	diag "skipping: $1"
	while [ "$_tap_next" -lt "${#_tap_names[@]}" ]; do
		tap_skip "${_tap_names[$_tap_next]}" "$1"
	done
	exit 0
}

# ------------------------------------------------------------- cleanup

# udp_drops: "node:N ..." for every fabric namespace whose UDP sockets
# dropped datagrams for want of receive buffer space (RcvbufErrors).
udp_drops()
{
	local ns n out=
	for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^op-/ { print $1 }'); do
		n=$(ip netns exec "$ns" awk '/^Udp:/ && ++i == 2 {
			print $6 }' /proc/net/snmp 2>/dev/null)
		[ "${n:-0}" = 0 ] || out+=" ${ns#op-}:$n"
	done
	echo "${out# }"
}

# The host counters that explain lost or late messages (a scenario may
# add its own, e.g. the reliable service's).
DIAG_KEYS="rx_late link_timeouts rx_reasm_drop rx_nobufs rx_noport"
DIAG_KEYS+=" tx_errors send_failures rx_bad"

# host_diag: the host counters of DIAG_KEYS, one line per host.
host_diag()
{
	local h k line
	snapshot "$WORK/.diag" hosts
	for h in $(awk '{ print $1 }' "$WORK/.diag" | sort -u); do
		line="$h:"
		for k in $DIAG_KEYS; do
			line+=" $k $(snap "$WORK/.diag" "$h" "$k")"
		done
		echo "$line"
	done
}

_cleanup()
{
	local rc=$? p d
	trap - EXIT INT TERM
	for p in "${_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ "$_fabric_up" = 1 ]; then
		# What explains a failure: drops and the hosts' counters.
		if [ "$_tap_failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
			d=$(udp_drops)
			[ -z "$d" ] ||
				diag "UDP receive buffer drops (RcvbufErrors): $d"
			diag "$(host_diag)"
			step "collected diagnostics"
		fi
		fabric_down "$WORK/fabric-down.out" && step "fabric down"
	fi
	if [ -n "${SCENARIO_CLEANUP:-}" ]; then
		$SCENARIO_CLEANUP
	fi
	rm -rf "$LOGKEEP"
	mkdir -p "$LOGKEEP" 2>/dev/null && cp -r "$WORK/." "$LOGKEEP/" 2>/dev/null
	rm -rf "$WORK"
	# Unreported points (an unexpected exit) count as failures.
	if [ "$_tap_next" -lt "${#_tap_names[@]}" ]; then
		while [ "$_tap_next" -lt "${#_tap_names[@]}" ]; do
			_tap_report fail "${_tap_names[$_tap_next]}" \
				"not run: scenario exited early (status $rc)"
		done
	fi
	[ "$_tap_failed" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
	exit 1
}
trap _cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------- prereqs

# need_tools TOOL...: abort (all points fail) if a tool is missing.
need_tools()
{
	local t
	for t in "$@"; do
		[ -x "$t" ] || tap_abort "missing $t (not built?)"
	done
}

# load_module: insmod onepipe.ko (after the modules it depends on, which
# insmod does not load by itself) unless it is loaded already.
load_module()
{
	local m
	grep -q '^onepipe ' /proc/modules && return 0
	for m in $(modinfo -F depends "$ONEPIPE_KO" 2>/dev/null | tr , ' '); do
		modprobe -q "$m"
	done
	insmod "$ONEPIPE_KO"
}

need_module()
{
	grep -q '^onepipe ' /proc/modules || tap_abort "onepipe.ko not loaded"
}

# need_rdm: abort (every point fails) unless the module offers SOCK_RDM.
need_rdm()
{
	local err
	err=$(python3 -c '
import socket, sys
try:
    socket.socket(23, socket.SOCK_RDM).close()  # AF_ONEPIPE
except OSError as e:
    sys.exit(e.strerror)' 2>&1) ||
		tap_abort "socket(AF_ONEPIPE, SOCK_RDM): ${err:-failed}"
}

# -------------------------------------------------------------- fabric

# fabric_up ARGS...: bring the fabric up or abort the scenario.  Without
# the failure controller unless ARGS has --controller (or OP_CONTROLLER=1).
fabric_up()
{
	"$FABRIC" down >/dev/null 2>&1	# leftovers of an earlier run
	_fabric_up=1
	# Over verbs every frame also crosses Soft-RoCE twice (its ICRC in
	# software), which an emulated guest runs several times slower than
	# the UDP path: there the defaults below are 3x (ACKs) and 5x (link
	# timeouts) longer, or the guest's stalls make ordered messages late
	# and ACKs time out with nothing lost.
	local ack_ms=2000 tmo_iv=100
	if [ "$OP_TRANSPORT" = verbs ]; then
		ack_ms=3000
		tmo_iv=500
	fi
	# A receiver ACKs a message when it delivers it, so the ACK comes
	# one ordered delivery plus a trip back through three software
	# switches after the send; a loaded CI guest has stalled that past
	# 1 s (order_4x2: 9 of 1440 delivered messages reported ETIMEDOUT on
	# 2026-11-26).  Allow 2 s (scenarios that want the 100 ms default
	# pass their own).
	case " $* " in
	*" --ack-timeout-ms "*) ;;
	*) set -- "$@" --ack-timeout-ms \
		"${OP_ACK_TIMEOUT_MS:-$((ack_ms * OP_SLOW_NET))}" ;;
	esac
	# Beacons every 1 ms on every link of a 7-node fabric keep an
	# emulated guest busy; a slower beat leaves it time for the tests.
	case " $* " in
	*" --interval-us "*) ;;
	*) set -- "$@" --interval-us \
		"${OP_INTERVAL_US:-$((2000 * OP_SLOW_BEACON))}" ;;
	esac
	# A link is removed after timeout-intervals of silence, and an
	# emulated guest can deschedule a switch for tens of ms: the default
	# 10 intervals would remove live links, and their later packets would
	# then arrive late.  Give links 200 ms unless the scenario says.
	case " $* " in
	*" --timeout-intervals "*) ;;
	*) set -- "$@" --timeout-intervals "${OP_TIMEOUT_INTERVALS:-$tmo_iv}" ;;
	esac
	# The scenarios test the module's own failure handling unless they
	# ask for the failure controller (--controller, which fabric runs
	# by default): a controller turns local timeouts into its decisions.
	local args=() a ctl=0
	for a in "$@"; do
		if [ "$a" = --controller ]; then
			ctl=1
		else
			args+=("$a")
		fi
	done
	[ "$ctl" = 1 ] || [ "${OP_CONTROLLER:-0}" = 1 ] ||
		args+=(--no-controller)
	set -- "${args[@]}"
	local rc=0
	case " $* " in
	*" --wait "*) ;;
	*) set -- "$@" --wait "$((60 * OP_SLOW))" ;;
	esac
	timeout "$((120 * OP_SLOW))" "$FABRIC" up "$@" >"$WORK/fabric-up.out" 2>&1 ||
		rc=$?
	if [ "$rc" -eq 4 ]; then
		"$FABRIC_UNAVAILABLE" "$OP_TRANSPORT transport unavailable: $(
			tail -n 1 "$WORK/fabric-up.out")"
		return 1
	elif [ "$rc" -ne 0 ]; then
		diag "fabric up $* failed:" "$(tail -n 20 "$WORK/fabric-up.out")"
		return 1
	fi
	step "fabric up $* (transport $OP_TRANSPORT)"
	return 0
}

# fabric_down [OUT]: take the fabric down (its output in OUT, default
# $WORK/fabric-down.out), so that the exit handler need not (it tries
# again if this failed); on failure a diagnostic and status 1.
fabric_down()
{
	local out=${1:-$WORK/fabric-down.out}

	if timeout $((60 * OP_SLOW)) "$FABRIC" down >"$out" 2>&1; then
		_fabric_up=0
		return 0
	fi
	diag "fabric down failed: $(tail -n 3 "$out")"
	return 1
}

# fx HOST CMD...: run CMD in a fabric host (or switch) namespace.
fx()
{
	"$FABRIC" exec "$@"
}

# fabric_hosts: the fabric's host namespaces' names (h1 h2 ...).
fabric_hosts()
{
	ip netns list | awk '$1 ~ /^op-h[0-9]+$/ { print substr($1, 4) }' |
		sort -V
}

# hosts_sysctl KEY=VALUE...: per-netns sysctls (net.onepipe.*) in every
# fabric host; fails, saying where and why, if one cannot be set.
hosts_sysctl()
{
	local h out
	for h in $(fabric_hosts); do
		if ! out=$(ip netns exec "op-$h" sysctl -w "$@" 2>&1); then
			diag "$h: sysctl -w $*: $out"
			return 1
		fi
	done
	step "sysctl $* on every host"
}

# netem_set LINK ARGS...: fabric netem, or a diagnostic and failure.
netem_set()
{
	local out
	out=$(timeout $((30 * OP_SLOW)) "$FABRIC" netem "$@" 2>&1) && return 0
	diag "fabric netem $* failed: $out"
	return 1
}

# ------------------------------------------------------------- traffic

now_ns() { date +%s%N; }

# traffic_start HOST PORT LOG MAXSEC ARGS...: one op-traffic in HOST,
# in the background, killed after MAXSEC.  It binds its socket, then waits
# for the start time that traffic_go writes, so that every process of a
# round starts sending together.  Its --linger-ms is OP_SLOW_NET times
# longer: a linger is a wait for ACKs and notifications, and their
# timeouts scale the same way (a reliable message's fate can take
# several; --drain waits for it).
traffic_start()
{
	local host=$1 port=$2 log=$3 maxs=$4 a prev='' args=()
	shift 4
	for a in "$@"; do
		if [ "$prev" = --linger-ms ] && [[ $a =~ ^[0-9]+$ ]]; then
			a=$((a * OP_SLOW_NET))
		fi
		args+=("$a")
		prev=$a
	done
	set -- "${args[@]}"
	# Straight into the host's netns (op-hN, the fabric's naming
	# contract): one bash less per launch matters under emulation.
	# Its sending and lingering stretch with OP_SLOW_NET, the rest with
	# OP_SLOW: the larger one bounds it.
	ip netns exec "op-$host" timeout -k 5 \
		"$((maxs * (OP_SLOW > OP_SLOW_NET ? OP_SLOW : OP_SLOW_NET)))" \
		"$TRAFFIC" \
		--port "$port" \
		--log "$log" --start-file "$WORK/start.$_round" \
		--summary "$log.json" "$@" >"$log.out" 2>&1 &
	_pids+=("$!")
	_traffic+=("$!:$log")
}
_round=0

# _bound LOG: true once op-traffic's LOG has its P line.  In bash alone:
# traffic_go polls it while the fabric keeps an emulated guest so busy
# that every process costs a fraction of a second.
_bound()
{
	local l
	[ -r "$1" ] || return 1
	while IFS= read -r l; do
		[[ $l == "P "* ]] && return 0
	done <"$1"
	return 1
}

# traffic_go [ALIGN OFFSET]: waits (up to 60 s) until every op-traffic of
# this round has bound its socket (its log has the P line), then sets the
# start 1 s ahead (with ALIGN and OFFSET, in ns: OFFSET after the first
# multiple of ALIGN on the wall clock past that).  A process that is not
# bound by then would see its peers' first messages refused (NOPORT):
# that is reported.
traffic_go()
{
	local e log missing deadline=$((SECONDS + 60 * OP_SLOW)) f=$WORK/start.$_round
	local start name
	while :; do
		missing=
		for e in "${_traffic[@]}"; do
			log=${e#*:}
			name=${log##*/}
			_bound "$log" || missing+=" ${name%.log}"
		done
		[ -z "$missing" ] || [ "$SECONDS" -ge "$deadline" ] && break
		sleep 0.2
	done
	[ -z "$missing" ] || diag "not bound after $((60 * OP_SLOW)) s:$missing"
	start=$(($(now_ns) + 1000000000))
	[ -z "${1:-}" ] || start=$(((start / $1 + 1) * $1 + $2))
	echo "$start" >"$f.tmp" && mv "$f.tmp" "$f"
	step "${#_traffic[@]} op-traffic bound; round $_round starts at $start"
	[ -z "$missing" ]
}

# round_start_ns: the start time traffic_go gave the current round.
round_start_ns() { cat "$WORK/start.$_round" 2>/dev/null; }

# sleep_until NS: sleeps until CLOCK_REALTIME NS (at once if past).
sleep_until()
{
	local d=$(($1 - $(now_ns)))
	[ "$d" -gt 0 ] || return 0
	sleep "$((d / 1000000000)).$(printf '%09d' $((d % 1000000000)))"
}

# traffic_wait: waits for every op-traffic started since the last call;
# returns the number that failed and lists them as diagnostics.
traffic_wait()
{
	local e pid log rc bad=0
	for e in "${_traffic[@]}"; do
		pid=${e%%:*}
		log=${e#*:}
		rc=0
		wait "$pid" || rc=$?
		echo "$rc" >"$log.rc"
		if [ "$rc" -ne 0 ]; then
			bad=$((bad + 1))
			diag "op-traffic $(basename "$log") exited $rc:" \
				"$(tail -n 5 "$log.out")"
		fi
	done
	step "traffic round $_round done"
	_traffic=()
	_round=$((_round + 1))
	return "$bad"
}
_traffic=()

# mesh_eps HOSTS PORT...: sets $eps to every HOST:PORT of hosts 1..HOSTS.
mesh_eps()
{
	local hosts=$1 h p
	shift
	eps=()
	for h in $(seq 1 "$hosts"); do
		for p in "$@"; do
			eps+=("$h:$p")
		done
	done
}

# mesh_start NAME MAXSEC ARGS...: one op-traffic per endpoint of $eps
# (HOST:PORT), each sending to all the others, with ARGS; logs are
# $WORK/NAME-hHOST-PORT.log, listed in $logs.  traffic_go starts them.
mesh_start()
{
	local name=$1 maxs=$2 ep h p log
	shift 2
	logs=()
	for ep in "${eps[@]}"; do
		h=${ep%:*}
		p=${ep#*:}
		log=$WORK/$name-h$h-$p.log
		logs+=("$log")
		traffic_start "h$h" "$p" "$log" "$maxs" \
			--peers "$(peers_except "$ep" "${eps[@]}")" "$@"
	done
}

# peers_except SELF LIST: comma list of LIST's entries other than SELF.
peers_except()
{
	local self=$1 e out=
	shift
	for e in "$@"; do
		[ "$e" = "$self" ] || out+="${out:+,}$e"
	done
	echo "$out"
}

# Count log lines of one kind ("S", "R", "E") over LOG files.
count_lines()
{
	local kind=$1
	shift
	cat "$@" 2>/dev/null | awk -v k="$kind" '$1 == k { n++ } END { print n + 0 }'
}

# summary_field FILE KEY: a number of op-traffic's JSON summary (the
# --summary file traffic_start asks for: LOG.json); "" if absent.
summary_field()
{
	grep -o "\"$2\":[0-9.]*" "$1" 2>/dev/null | head -n 1 | cut -d: -f2
}

# summary_sum KEY LOG...: KEY summed over those processes' summaries.
summary_sum()
{
	local key=$1 log n sum=0
	shift
	for log in "$@"; do
		n=$(summary_field "$log.json" "$key")
		n=${n%.*}
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

# Messages sent over LOG files: the destinations of every S line (a
# scattering that op-traffic had to split is logged as several S lines).
sent_msgs()
{
	cat "$@" 2>/dev/null |
		awk '$1 == "S" { n += split($4, d, ",") } END { print n + 0 }'
}

# Median of the R lines' latency (ns) over LOG files; 0 if none.
lat_p50()
{
	cat "$@" 2>/dev/null | awk '$1 == "R" { print $7 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

# run_check NAME ARGS... LOGS: op-check as test point NAME; false if it
# failed.
run_check()
{
	local name=$1 out=$WORK/op-check-$1.out rc=0
	shift
	timeout "$((120 * OP_SLOW))" "$CHECK" "$@" >"$out" 2>&1 || rc=$?
	step "op-check done"
	if [ "$rc" -eq 0 ]; then
		tap_pass "$name"
	else
		diag "op-check $* exited $rc:" "$(head -n 30 "$out")"
		tap_fail "$name" "op-check exited $rc"
		return 1
	fi
}

# ------------------------------------------------------------- counters
#
# Python starts slowly under emulation, so counters are read in
# snapshots: one python run collects every fabric host's "onepipe -j host
# show" and every switch's stats into a flat file of "NODE KEY VALUE"
# lines (NODE is hN, a switch name, or SWITCH:PORT for a switch port),
# and snap reads single values out of it with awk.

# snapshot FILE [hosts|switches|all]
snapshot()
{
	local out=$1 what=${2:-all}
	: >"$WORK/.status.json"
	if [ "$what" != hosts ]; then
		"$FABRIC" status --json >"$WORK/.status.json" 2>/dev/null
	fi
	python3 - "$ONEPIPE" "$WORK/.status.json" "$what" >"$out" <<'PY'
import json, subprocess, sys

onepipe, status, what = sys.argv[1:4]

def emit(node, d):
    for k, v in d.items():
        if isinstance(v, dict):
            emit(node, v)
        elif not isinstance(v, list):
            print(node, k, "null" if v is None else v)

if what != "switches":
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True,
                        text=True).stdout.split()
    for n in sorted(x for x in ns if x.startswith("op-h")):
        r = subprocess.run(["ip", "netns", "exec", n, onepipe, "-j", "host",
                            "show"], capture_output=True, text=True)
        try:
            h = json.loads(r.stdout)
        except ValueError:
            continue
        emit(n[3:], h[0] if isinstance(h, list) else h)
if what != "hosts":
    text, dec, pos = open(status).read(), json.JSONDecoder(), 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            sw, pos = dec.raw_decode(text, pos)
        except ValueError:
            break
        emit(sw["name"], {k: v for k, v in sw.items() if k != "ports"})
        for p in sw.get("ports", []):
            emit(sw["name"] + ":" + p["name"], p)
PY
}

# snap FILE NODE KEY: one value of a snapshot ("" if absent).
snap()
{
	awk -v n="$2" -v k="$3" '$1 == n && $2 == k { print $3; exit }' "$1"
}

# snap_sum FILE KEY NODE...: KEY summed over those nodes (absent = 0).
snap_sum()
{
	local f=$1 k=$2
	shift 2
	awk -v k="$k" -v nodes=" $* " '
		$2 == k && index(nodes, " " $1 " ") { s += $3 }
		END { print s + 0 }' "$f"
}

# snap_delta BEFORE AFTER KEY NODE...: how much KEY grew over NODEs.
snap_delta()
{
	local b=$1 a=$2 k=$3
	shift 3
	echo $(($(snap_sum "$a" "$k" "$@") - $(snap_sum "$b" "$k" "$@")))
}

# snap_has FILE KEY: some node of the snapshot reports KEY.
snap_has()
{
	awk -v k="$2" '$2 == k { f = 1 } END { exit !f }' "$1"
}

# host_counter HOST NAME: one counter of a fabric host, now.
host_counter()
{
	snapshot "$WORK/.one" hosts
	snap "$WORK/.one" "$1" "$2"
}

# switch_stat SWITCH KEY [PORT]: a switch counter ("rx_bad",
# "rx_unknown_src", "pid"...) or, with PORT, a field of one of its ports
# ("state", "rx_pkts"...), now.
switch_stat()
{
	snapshot "$WORK/.one" switches
	snap "$WORK/.one" "$1${3:+:$3}" "$2"
}

# json_get PATH: reads JSON on stdin, prints the value at PATH
# (dot-separated keys; a top-level list takes its first element).
json_get()
{
	python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if isinstance(v, list):
        v = v[0]
    v = v[k]
print(v)
' "$1"
}

# ----------------------------------------------------------- kernel log

# Kernel log lines that mean a bug (tools/vm/run's list).
BAD_KMSG=$(cat "$TOP/tools/vm/bad-kmsg" 2>/dev/null) || true
[ -n "$BAD_KMSG" ] || { echo "lib.sh: no tools/vm/bad-kmsg" >&2; exit 1; }

dmesg_mark() { dmesg | wc -l; }

# dmesg_bad_since MARK: prints bad kernel log lines logged after MARK.
dmesg_bad_since()
{
	dmesg | tail -n +"$(($1 + 1))" | grep -E -- "$BAD_KMSG"
}

# ------------------------------------------------------------- leaks

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_clear: forget what kmemleak reported so far (where it exists).
kmemleak_clear()
{
	[ -e "$KMEMLEAK" ] && echo clear >"$KMEMLEAK" 2>/dev/null
	return 0
}

# check_kmemleak NAME: test point NAME passes when kmemleak reports no
# object allocated by the module.  Objects unreferenced for 5 s show up
# after a scan; two scans, as the documentation advises.  A SKIP where
# the kernel has no kmemleak (Debian's; the debug kernel has it).
check_kmemleak()
{
	local name=$1 leaks
	if [ ! -e "$KMEMLEAK" ]; then
		tap_skip "$name" "no $KMEMLEAK in this kernel (the debug kernel has it)"
		return
	fi
	sleep 5
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >"$WORK/kmemleak.txt"
	leaks=$(grep -c 'onepipe\]' "$WORK/kmemleak.txt")
	if [ "$leaks" -eq 0 ]; then
		tap_pass "$name" \
			"$(grep -c '^unreferenced object' "$WORK/kmemleak.txt") reports in all"
	else
		diag "$(head -n 60 "$WORK/kmemleak.txt")"
		tap_fail "$name" "$leaks backtrace lines name the module"
	fi
}

# host_drained HOST: the fabric host has no reliable scattering waiting,
# nothing unacked, an empty reorder queue, and no socket (netlink sock
# dump); $drain_text says what it has.
host_drained()
{
	local j n
	j=$(ip netns exec "op-$1" "$ONEPIPE" -j host show 2>/dev/null) || return 1
	drain_text=$(printf '%s' "$j" | python3 -c '
import json, sys
h = json.load(sys.stdin)
h = h[0] if isinstance(h, list) else h
print(" ".join("%s=%s" % (k, h.get(k)) for k in
               ("state", "rdm_waiting", "rdm_unacked", "reorder_depth")))')
	n=$(ip netns exec "op-$1" "$ONEPIPE" -j sock show 2>/dev/null |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
	drain_text+=" sockets=${n:-?}"
	[[ " $drain_text " == *" rdm_waiting=0 "* ]] &&
		[[ " $drain_text " == *" rdm_unacked=0 "* ]] &&
		[[ " $drain_text " == *" reorder_depth=0 "* ]] &&
		[[ " $drain_text " == *" sockets=0 "* ]]
}

# netns_gone: waits (up to 60 s) until the fabric's namespaces are freed:
# their cleanup runs from a workqueue after `ip netns del`.
netns_gone()
{
	local deadline=$((SECONDS + 60))
	ip netns list | grep -q '^op-' || return 0
	while ip netns list | grep -q '^op-'; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.5
	done
	# the netns cleanup work and RCU callbacks after it
	sleep 3
}

# check_klog NAME MARK: test point NAME passes when the kernel logged
# nothing bad after MARK (dmesg_mark); else the bad lines, with context.
check_klog()
{
	local bad
	bad=$(dmesg_bad_since "$2")
	if [ -z "$bad" ]; then
		tap_pass "$1"
	else
		diag "$(dmesg | tail -n +"$(($2 + 1))" |
			grep -E -B 2 -A 30 -- "$BAD_KMSG" | head -n 120)"
		tap_fail "$1" "$(echo "$bad" | head -n 1)"
	fi
}

# wait_port_state SWITCH PORT STATE SECONDS: polls the switch's stats.
wait_port_state()
{
	local sw=$1 port=$2 want=$3 deadline=$((SECONDS + $4)) st
	while :; do
		st=$(switch_stat "$sw" state "$port")
		[ "$st" = "$want" ] && return 0
		[ "$SECONDS" -ge "$deadline" ] && break
		sleep 0.5
	done
	diag "$sw port $port: state '${st:-?}', wanted '$want'"
	return 1
}
