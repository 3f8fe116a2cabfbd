# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The syscall fuzzer (syscall_fuzz.c) as the scenarios run it: in fabric
# host h1, bounded from outside, its exit judged.  Sourced after lib.sh
# by syscall_fuzz.sh and fault_inject.sh.

FUZZ=$TOP/selftests/syscall_fuzz
FUZZ_THREADS=${FUZZ_THREADS:-4}
FUZZ_NICE=${FUZZ_NICE:-0}
FUZZ_SEED=${FUZZ_SEED:-$(($(date +%s%N) % 1000000007))}

# h1 CMD...: run CMD in the fabric's host h1.
h1() { ip netns exec op-h1 "$@"; }

# fuzz_run LOG SECS ARGS...: the fuzzer in h1, bounded even if its own
# watchdog cannot end it; its exit status.
fuzz_run()
{
	local log=$1 secs=$2
	shift 2
	h1 nice -n "$FUZZ_NICE" timeout -k 10 $((secs + 120)) "$FUZZ" \
		--seconds "$secs" \
		--seed "$FUZZ_SEED" --threads "$FUZZ_THREADS" "$@" \
		>"$log" 2>&1
}

# fuzz_verdict LOG RC: sets $verdict (empty if no crash/hang) and $rate.
fuzz_verdict()
{
	local log=$1 rc=$2
	rate=$(awk '$1 == "syscall_fuzz:" && $2 == "execs" {
		r = $3 " execs in " $5 " s, " $7 } END { print r }' "$log")
	case "$rc" in
	0 | 1) verdict= ;;
	3) verdict="hang: $(grep -m 1 '^HANG' "$log")" ;;
	124 | 137) verdict="killed by the outer timeout (exit $rc)" ;;
	*) verdict="exit status $rc" ;;
	esac
	[ -n "$verdict" ] || [ -n "$rate" ] || verdict="no summary line"
}

# fuzz_points NAME LOG RC: two test points, "NAME: no crash or hang" and
# "NAME: no API findings", from a run's log and exit status.
fuzz_points()
{
	local name=$1 log=$2 rc=$3 nf
	fuzz_verdict "$log" "$rc"
	if [ -z "$verdict" ]; then
		tap_pass "$name without a crash or hang" "seed $FUZZ_SEED, $rate"
	else
		diag "$(grep -A 60 '^HANG' "$log" | head -n 80)"
		diag "$(tail -n 5 "$log")"
		tap_fail "$name without a crash or hang" "seed $FUZZ_SEED: $verdict"
	fi
	if [ "$rc" -eq 0 ]; then
		tap_pass "$name: no API findings"
	else
		nf=$(sed -n 's/.* findings \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
		diag "$(grep '^FINDING\|^finding ' "$log" | head -n 40)"
		tap_fail "$name: no API findings" "${nf:-?} findings (seed $FUZZ_SEED)"
	fi
}

# sockets_used: sockets in use in h1's netns (/proc/net/sockstat is per netns).
sockets_used()
{
	# shellcheck disable=SC2016 # awk's fields, not the shell's
	h1 awk '$1 == "sockets:" { print $3 }' /proc/net/sockstat
}
