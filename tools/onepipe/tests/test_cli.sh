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
expect_ok "help prints usage" \
	"OBJECT := { host | link | sock | peer | dev | controller | fail }" help
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
expect_ok "controller help" "onepipe controller show \[ -j \]" controller help
expect_ok "c h (both abbreviated)" "default /run/onepipe/onepiped.sock" c h
expect_ok "fail help" "onepipe fail show" fail help
expect_ok "f h (both abbreviated)" "onepipe fail show" f h
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
expect_fail "unknown controller command" 'Try "onepipe controller help"' \
	controller frob
expect_fail "unknown fail command" 'Try "onepipe fail help"' fail frob
expect_fail "controller show: unknown argument" \
	'controller show: unexpected argument "x"' controller show x
expect_fail "controller show: --socket without a path" \
	'controller show: --socket needs a path' controller show --socket
expect_fail "fail show: no --socket" \
	'fail show: unexpected argument "--socket"' fail show --socket /x
expect_fail "controller show: no daemon" \
	"cannot connect to onepiped at $tmp/none.sock: No such file or directory (is onepiped running?)" \
	controller show --socket "$tmp/none.sock"
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

# controller show against a stand-in for onepiped (one answer each).
fake=$(dirname "$0")/fake_onepiped.py
sock=$tmp/onepiped.sock
# fake_answer MODE: start the stand-in and wait until it listens
fake_answer() {
	rm -f "$tmp/ready"
	python3 "$fake" "$sock" "$1" >"$tmp/ready" 2>"$tmp/fake.err" &
	fake_pid=$!
	for _ in $(seq 100); do
		grep -q ready "$tmp/ready" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
if ! command -v python3 >/dev/null; then
	for t in text JSON pretty closed bad-json garbage; do
		skip "controller show: $t" "no python3"
	done
else
	fake_answer ok
	run controller show --socket "$sock"
	wait $fake_pid
	[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] &&
		grep -q '^epoch 1 phase idle$' "$tmp/out" &&
		grep -q '^    name h2 state failed$' "$tmp/out" &&
		grep -q '^    epoch 1 host 2 ts 42$' "$tmp/out"
	ok $? "controller show: text, from three chunks"
	fake_answer ok
	run -j controller show --socket="$sock"
	wait $fake_pid
	[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = '{"epoch":1,"phase":"idle","nodes":[{"name":"h1","state":"correct"},{"name":"h2","state":"failed"}],"failures":[{"epoch":1,"host":2,"ts":42}]}' ]
	ok $? "controller show: JSON"
	fake_answer ok
	run controller show -p socket "$sock"
	wait $fake_pid
	[ $rc -eq 0 ] && python3 -c 'import json,sys; json.load(sys.stdin)' \
		<"$tmp/out" && grep -q '^    "epoch": 1,$' "$tmp/out"
	ok $? "controller show: pretty JSON"
	fake_answer close
	run controller show --socket "$sock"
	wait $fake_pid
	[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q 'onepiped closed the connection after 1 part(s)' "$tmp/err"
	ok $? "controller show: an answer cut short"
	fake_answer badjson
	run controller show --socket "$sock"
	wait $fake_pid
	[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q "onepiped sent bad JSON: ',' or '}' expected" "$tmp/err"
	ok $? "controller show: bad JSON"
	fake_answer garbage
	run controller show --socket "$sock"
	wait $fake_pid
	[ $rc -eq 1 ] && grep -q 'malformed answer from onepiped' "$tmp/err"
	ok $? "controller show: a malformed packet"
fi

# The generic netlink family exists only while onepipe.ko is loaded.
notfound="onepipe: generic netlink family 'onepipe' not found (is onepipe.ko loaded?)"
if [ -d /sys/module/onepipe ]; then
	skip "host show without the module" "onepipe.ko is loaded"
	skip "link show -j without the module" "onepipe.ko is loaded"
	skip "peer show -j without the module" "onepipe.ko is loaded"
	skip "dev show without the module" "onepipe.ko is loaded"
	skip "fail show -j without the module" "onepipe.ko is loaded"
	skip "valid verbs host set without the module" "onepipe.ko is loaded"
else
	expect_fail "host show without the module" "^$notfound\$" host show
	expect_fail "link show -j without the module" "^$notfound\$" \
		-j link show
	expect_fail "peer show -j without the module" "^$notfound\$" \
		-j peer show
	expect_fail "dev show without the module" "^$notfound\$" dev show
	expect_fail "fail show -j without the module" "^$notfound\$" \
		fail show -j
	# A valid command gets as far as the kernel.
	expect_fail "valid verbs host set without the module" \
		"^$notfound\$" host set id 2 transport verbs dev opr2 \
		port 1 qkey 0x1f1fe peer 0 gid ::ffff:10.77.2.1 qpn 1 \
		peer 1 gid 10.77.1.2 qpn 17 qkey 0x1f1fe
fi

echo "1..$n"
[ $failed -eq 0 ] || echo "# $failed of $n tests failed"
[ $failed -eq 0 ]
