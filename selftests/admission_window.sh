#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The admission tests that need two hosts (admission_window.c, kselftest
# harness): h2's net.onepipe.rdm_window is smaller than a reliable
# scattering h1 sends to it, which must fail as a whole instead of
# waiting for window forever.  rdm_window is per network namespace, so
# the binary runs in h1 of a two-host fabric and makes its h2 socket in
# op-h2's namespace.  The binary's TAP is this suite's TAP.
source "$(dirname "$0")/lib.sh"

BIN=$TOP/selftests/admission_window

# every_test WHY RESULT DIRECTIVE: report every test of the binary as one
# TAP point "RESULT n test # DIRECTIVE", for when none of them can run.
every_test()
{
	local why=$1 result=$2 directive=$3 n=0 t tests
	mapfile -t tests < <(sed -nE \
		's/^TEST_F(_TIMEOUT)?\((\w+), (\w+)(, [0-9]+)?\)$/\2.\3/p' \
		"$TOP/selftests/admission_window.c")
	[ ${#tests[@]} -gt 0 ] || tests=(admission_window)
	echo "TAP version 13"
	echo "1..${#tests[@]}"
	echo "# $why"
	for t in "${tests[@]}"; do
		n=$((n + 1))
		echo "$result $n $t # $directive"
	done
}

# Something is broken: every test fails as not run.
no_fabric()
{
	every_test "$1" "not ok" "not run: $1"
	exit 1
}

# The transport is not available here (no Soft-RoCE): every test skips.
# fabric_up runs with stdout on stderr; the TAP goes to fd 3, the real
# stdout.
exec 3>&1
# shellcheck disable=SC2317 # called by lib.sh's fabric_up
skip_all()
{
	exec 1>&3
	every_test "$1" ok "SKIP $1"
	exit 0
}
FABRIC_UNAVAILABLE=skip_all

[ -x "$BIN" ] || no_fabric "$BIN not built"
[ -x "$FABRIC" ] || no_fabric "no $FABRIC"
grep -q '^onepipe ' /proc/modules || no_fabric "onepipe.ko not loaded"
# Diagnostics to stderr, so that the binary's TAP header comes first.
fabric_up --hosts 2 --tors 1 >&2 || no_fabric "fabric up --hosts 2 failed"
[ -e /run/netns/op-h2 ] || no_fabric "no /run/netns/op-h2"

rc=0
ip netns exec op-h1 env ONEPIPE_TEST_HOST=1 ONEPIPE_PEER_HOST=2 \
	ONEPIPE_PEER_NETNS=/run/netns/op-h2 "$BIN" || rc=$?
if [ "$rc" -ne 0 ]; then
	# Counters, windows and switch state for the post-mortem.
	timeout $((60 * OP_SLOW)) "$FABRIC" status 2>&1 | sed 's/^/# /'
	for h in op-h1 op-h2; do
		echo "# $h: rdm_window $(ip netns exec "$h" \
			cat /proc/sys/net/onepipe/rdm_window)"
		ip netns exec "$h" timeout $((30 * OP_SLOW)) "$ONEPIPE" peer show 2>&1 |
			sed 's/^/#   /'
	done
fi
exit "$rc"
