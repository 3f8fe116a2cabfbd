#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Command-line behaviour of the onepipe binary that needs no kernel module:
# options, help, usage errors (exit status 1, message on stderr, nothing
# on stdout) and, when onepipe.ko is not loaded, the "family not found"
# error.  TAP output.
#
# Usage: tests/test_cli.sh [PATH-TO-ONEPIPE]

set -u
bin=${1:-./onepipe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

ok() {	# ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		sed 's/^/# stdout: /' "$tmp/out"
		sed 's/^/# stderr: /' "$tmp/err"
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

run() {
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect_ok DESC STDOUT-PATTERN ARGS...: exit 0, pattern on stdout
expect_ok() {
	local desc=$1 pat=$2
	shift 2
	run "$@"
	[ $rc -eq 0 ] && grep -q -- "$pat" "$tmp/out" && [ ! -s "$tmp/err" ]
	ok $? "$desc"
}

# expect_fail DESC STDERR-PATTERN ARGS...: exit 1, pattern on stderr,
# and nothing on stdout
expect_fail() {
	local desc=$1 pat=$2
	shift 2
	run "$@"
	[ $rc -eq 1 ] && grep -q -- "$pat" "$tmp/err" && [ ! -s "$tmp/out" ]
	ok $? "$desc"
}

expect_ok "-V prints the version" "^onepipe utility, version" -V
expect_ok "--version" "^onepipe utility, version" --version
expect_ok "-h prints usage" "^Usage: onepipe" -h
expect_ok "help prints usage" "OBJECT := { host | link | sock | peer | dev }" help
expect_ok "host help" "onepipe host set id ID" host help
expect_ok "h help (object abbreviation)" "onepipe host down" h help
expect_ok "link help" "onepipe link show" link help
expect_ok "l he (both abbreviated)" "onepipe link show" l he
expect_ok "sock help" "onepipe sock show" sock help
expect_ok "s help" "onepipe sock show" s help
expect_ok "peer help" "onepipe peer show" peer help
expect_ok "p h (both abbreviated)" "onepipe peer show" p h
expect_ok "dev help" "onepipe dev show" dev help
expect_ok "d h (both abbreviated)" "onepipe dev show" d h
expect_ok "host help shows the verbs form" \
	"PEER := peer PEER_ID gid GID qpn QPN \[ qkey QKEY \]" host help

expect_fail "no object: usage error" "^Usage: onepipe"
expect_fail "unknown option" "^Usage: onepipe" -x host show
expect_fail "-n without a value" "requires an argument" -n
expect_fail "unknown object" 'object "frob" is unknown' frob
expect_fail "unknown host command" 'command "frob" is unknown' host frob
expect_fail "unknown link command" 'Try "onepipe link help"' link frob
expect_fail "unknown sock command" 'Try "onepipe sock help"' sock frob
expect_fail "unknown peer command" 'Try "onepipe peer help"' peer frob
expect_fail "unknown dev command" 'Try "onepipe dev help"' dev frob
expect_fail "host show takes no argument" 'unexpected argument "x"' \
	host show x
expect_fail "host down takes no argument" 'unexpected argument "now"' \
	host down now
expect_fail "link show takes no argument" 'unexpected argument "x"' \
	link show x
expect_fail "sock show takes no argument" 'unexpected argument "x"' \
	-j sock show x
expect_fail "peer show takes no argument" 'peer show: unexpected argument "x"' \
	peer show x
expect_fail "dev show takes no argument" 'dev show: unexpected argument "x"' \
	-j dev show x
expect_fail "host set without id" '"id" is required' host set
expect_fail "host set id 0" 'invalid host id "0"' host set id 0
expect_fail "host set id 2^32-1" 'invalid host id "4294967295"' \
	host set id 4294967295
expect_fail "host set id abc" 'invalid host id "abc"' host set id abc
expect_fail "host set missing value" '"uplink" needs a value' \
	host set id 1 uplink
expect_fail "host set bad transport" 'unknown transport "tcp"' \
	host set id 1 transport tcp
expect_fail "host set bad address" 'invalid local address "10.1"' \
	host set id 1 local 10.1
expect_fail "host set bad port" 'invalid uplink address "1.2.3.4:99999"' \
	host set id 1 uplink 1.2.3.4:99999
expect_fail "host set unknown keyword" 'unknown keyword "mtu"' \
	host set id 1 mtu 1500
expect_fail "host set verbs: peer without qpn" 'peer 0 needs "qpn"' \
	host set id 1 transport verbs dev opr1 peer 0 gid ::ffff:10.77.1.1
expect_fail "host set verbs: bad gid" 'invalid gid "10.77.1"' \
	host set id 1 dev opr1 peer 0 gid 10.77.1 qpn 1
expect_fail "host set verbs: qpn beyond 24 bits" \
	'invalid qpn "16777216" (1..16777215)' \
	host set id 1 dev opr1 peer 0 gid ::1 qpn 16777216
expect_fail "host set verbs: dev after a peer" \
	'"dev" must come before the first peer' \
	host set id 1 peer 0 gid ::1 qpn 1 dev opr1
expect_fail "host set: udp and verbs keywords do not mix" 'do not mix' \
	host set id 1 uplink 10.0.0.1 dev opr1
expect_fail "host set: transport udp with a verbs keyword" \
	'need transport verbs' host set id 1 transport udp port 1
expect_fail "-n with a missing namespace" \
	'cannot open network namespace "onepipe-test-none-'$$'"' \
	-n onepipe-test-none-$$ host show

# The generic netlink family exists only while onepipe.ko is loaded.
notfound="onepipe: generic netlink family 'onepipe' not found (is onepipe.ko loaded?)"
if [ -d /sys/module/onepipe ]; then
	skip "host show without the module" "onepipe.ko is loaded"
	skip "link show -j without the module" "onepipe.ko is loaded"
	skip "peer show -j without the module" "onepipe.ko is loaded"
	skip "dev show without the module" "onepipe.ko is loaded"
	skip "valid verbs host set without the module" "onepipe.ko is loaded"
else
	expect_fail "host show without the module" "^$notfound\$" host show
	expect_fail "link show -j without the module" "^$notfound\$" \
		-j link show
	expect_fail "peer show -j without the module" "^$notfound\$" \
		-j peer show
	expect_fail "dev show without the module" "^$notfound\$" dev show
	# A valid command gets as far as the kernel.
	expect_fail "valid verbs host set without the module" \
		"^$notfound\$" host set id 2 transport verbs dev opr2 \
		port 1 qkey 0x1f1fe peer 0 gid ::ffff:10.77.2.1 qpn 1 \
		peer 1 gid 10.77.1.2 qpn 17 qkey 0x1f1fe
fi

echo "1..$n"
[ $failed -eq 0 ] || echo "# $failed of $n tests failed"
[ $failed -eq 0 ]
