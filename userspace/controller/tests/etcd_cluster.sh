#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a test program against a real three-member etcd cluster on loopback:
#
#   tests/etcd_cluster.sh PROGRAM [ARGS...]
#
# starts the cluster (ports picked per run, data under a temporary
# directory), waits until every member is healthy, runs
# PROGRAM ARGS... http://127.0.0.1:P1,http://127.0.0.1:P2,...
# and tears the cluster down whatever happens.  PROGRAM's exit status is
# the script's.
#
# PROGRAM may kill one member (to test that the cluster's remaining
# members serve it) by running the shell command in $ETCD_KILL_ONE; the
# member killed is the first endpoint, the one a client talks to first.
#
# A missing etcd is a failure, not a skip: "make check" must not pass
# without having tested the store.

set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 PROGRAM [ARGS...]" >&2
	exit 2
fi
for tool in etcd etcdctl; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "not ok - etcd-server missing ($tool not found;" \
		     "tools/install-deps installs it)"
		exit 1
	fi
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/onepipe-etcd.XXXXXX") || exit 1
pids=()

# The data is thrown away: no need to wait for a graceful stop, which
# takes seconds once a member is missing (leadership transfer attempts).
stop_cluster() {
	local pid i alive

	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for i in $(seq 1 10); do
		alive=0
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		{ wait "$pid"; } 2>/dev/null
	done
	pids=()
}

# shellcheck disable=SC2317 # (called by the trap)
cleanup() {
	stop_cluster
	rm -rf "$dir"
}
trap cleanup EXIT
prog=""
trap '[ -n "$prog" ] && kill -TERM $prog 2>/dev/null; exit 130' INT TERM

# Is something listening on 127.0.0.1:$1?
port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_cluster BASE: members m0..m2, client port BASE+2i, peer BASE+2i+1.
start_cluster() {
	local base=$1 i cluster="" p

	for i in 0 1 2 3 4 5; do
		if port_busy $((base + i)); then
			return 1
		fi
	done
	for i in 0 1 2; do
		p=$((base + 2 * i + 1))
		cluster+="${cluster:+,}m$i=http://127.0.0.1:$p"
	done
	endpoints=""
	rm -rf "$dir"/m*
	for i in 0 1 2; do
		p=$((base + 2 * i))
		endpoints+="${endpoints:+,}http://127.0.0.1:$p"
		# Short heartbeat / election timeouts: a lost member's
		# successor is elected in well under a second, which keeps
		# the test quick; the minimum lease TTL falls to 1 s.
		etcd --name m$i --data-dir "$dir/m$i" \
			--listen-client-urls http://127.0.0.1:$p \
			--advertise-client-urls http://127.0.0.1:$p \
			--listen-peer-urls http://127.0.0.1:$((p + 1)) \
			--initial-advertise-peer-urls \
				http://127.0.0.1:$((p + 1)) \
			--initial-cluster "$cluster" \
			--initial-cluster-state new \
			--initial-cluster-token "onepipe-test-$$-$base" \
			--heartbeat-interval 50 --election-timeout 500 \
			>"$dir/m$i.log" 2>&1 &
		pids+=($!)
	done
	# Healthy = every member serves a quorum read.
	for i in $(seq 1 100); do
		if ETCDCTL_API=3 etcdctl --endpoints="$endpoints" \
			--dial-timeout=1s --command-timeout=2s \
			endpoint health >/dev/null 2>&1; then
			return 0
		fi
		for p in "${pids[@]}"; do
			if ! kill -0 "$p" 2>/dev/null; then
				return 1	# a member died: port taken?
			fi
		done
		sleep 0.2
	done
	return 1
}

started=0
for attempt in 1 2 3 4 5; do
	base=$((20000 + ($$ * 7 + attempt * 1009) % 12000))
	if start_cluster $base; then
		started=1
		break
	fi
	echo "# etcd cluster on ports $base.. did not come up, retrying" >&2
	stop_cluster
done
if [ $started = 0 ]; then
	echo "not ok - could not start a three-member etcd cluster"
	for f in "$dir"/m*.log; do
		[ -f "$f" ] && { echo "# $f:"; tail -5 "$f" | sed 's/^/# /'; }
	done
	exit 1
fi
echo "# etcd cluster up: $endpoints"

export ETCD_KILL_ONE="kill -KILL ${pids[0]}"
# The shell's own stderr goes to /dev/null meanwhile: else it reports
# the member PROGRAM killed as if something had gone wrong.
exec 3>&2 2>/dev/null
# In the background so that a signal to this script is handled at once
# (the trap stops PROGRAM too), not after PROGRAM finished.
"$@" "$endpoints" 2>&3 &
prog=$!
wait $prog
rc=$?
prog=""
if [ $rc != 0 ]; then
	for f in "$dir"/m*.log; do
		echo "# last lines of $f:"
		tail -5 "$f" | sed 's/^/# /'
	done
fi
stop_cluster
exec 2>&3 3>&-
exit $rc
