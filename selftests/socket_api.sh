#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the socket_api binary (kselftest harness) in host h1 of a one-host
# fabric: h1 sends to itself through a software switch, so the data-path
# tests cross the real transport.  The binary's TAP is this suite's TAP.
# OP_SOCKET_TESTS=socket_rdm runs that binary instead (socket_rdm.sh).
source "$(dirname "$0")/lib.sh"

NAME=${OP_SOCKET_TESTS:-socket_api}
BIN=$TOP/selftests/$NAME

# every_test WHY RESULT DIRECTIVE: report every test of the binary as one
# TAP point "RESULT n test # DIRECTIVE", for when none of them can run.
every_test()
{
	local why=$1 result=$2 directive=$3 n=0 t tests
	mapfile -t tests < <(sed -nE \
		's/^TEST_F(_TIMEOUT)?\((\w+), (\w+)(, [0-9]+)?\)$/\2.\3/p' \
		"$TOP/selftests/$NAME.c")
	[ ${#tests[@]} -gt 0 ] || tests=("$NAME")
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
fabric_up --hosts 1 --tors 1 >&2 || no_fabric "fabric up --hosts 1 failed"

rc=0
ip netns exec op-h1 env ONEPIPE_TEST_HOST=1 "$BIN" || rc=$?
if [ "$rc" -ne 0 ]; then
	# Counters and switch state for the post-mortem.
	timeout $((60 * OP_SLOW)) "$FABRIC" status 2>&1 | sed 's/^/# /'
fi
exit "$rc"
