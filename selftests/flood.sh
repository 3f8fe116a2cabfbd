#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flood of both services at sockets that never read (issue 9, item 2):
# kernel memory stays bounded, other sockets are not disturbed beyond the
# documented per-host-pair window, and everything is given back.
#
# 4 hosts behind 2 ToRs (h1-h2 on tor1, h3-h4 on tor2):
#
#   h1:1001, 1002  the sinks: a best-effort and a reliable socket with a
#                  small receive buffer, never read (--recv-pause-ms)
#   h2, h3         the flooding hosts: from PRE_S s on, for FLOOD_S s,
#                  2:2001 and 3:2001 send 2000-byte best-effort messages to
#                  h1:1001 every FLOOD_US, and 2:2002, 2:2003 and 3:2002
#                  7800-byte reliable ones to h1:1002 as fast as their
#                  window lets them (both fragmented: h1 reassembles them)
#   victims        one best-effort (3001) and one reliable (3002) process on
#                  h1, h3 and h4 from start to end, sending paced streams
#                  h1 <-> h4 and h3 <-> h4: sockets on the flooded host, and
#                  a pair of hosts whose traffic the flood does not carry.
#                  No victim uses a flooded pair (h2 -> h1, h3 -> h1): the
#                  reliable window is per host pair, and the README says that
#                  a reader that stops stalls its senders' host towards its
#                  whole host.
#
# Memory is sampled before anything is sent (the baseline, every process
# started) and every SAMPLE_S of the flood: SUnreclaim of /proc/meminfo
# (slabs, and the large kmallocs of big skbs), the skb and kmalloc slabs,
# /proc/net/sockstat, and what the fabric's own sockets hold (`ss -m` of
# the switches', rxe's and the UDP transport's sockets: not the module's,
# so set apart).  The growth must stay under a bound computed from the
# documented limits (printed term by term) and level off, and h1 must
# never hold more than rdm_window messages from one host (onepipe peer
# show).  Each sample shrinks the slab caches first (SLUB keeps freed
# objects in per-CPU slabs it counts as used), and the reliable messages
# are sized for kmalloc-8k: its growth must show what peer show says h1
# holds, or the samples are blind.  Then the flooders and the sinks are killed (the readers close
# without reading) and the memory must come back to the baseline.  The
# victims' logs pass op-check --expect-all and --reliable --expect-all,
# and their median latency during the flood stays close to before it.
source "$(dirname "$0")/lib.sh"

PRE_S=${OP_FLOOD_PRE_S:-6}		# victims alone before the flood
FLOOD_S=${OP_FLOOD_S:-30}		# the flood
POST_S=${OP_FLOOD_POST_S:-4}		# victims alone after it
SAMPLE_S=4
FLOOD_US=${OP_FLOOD_US:-20000}		# best-effort flooders' pace
VICTIM_US=${OP_SEND_INTERVAL_US:-100000}	# victims' pace
DG_SIZE=2000		# fragmented on both transports
RDM_SIZE=7800		# ditto; reassembled (7800 + shared info) in kmalloc-8k
VICTIM_SIZE=500
SINK_RCVBUF=16384	# SO_RCVBUFFORCE: the kernel doubles it
FLOODER_BUF=65536	# flooders' SO_SNDBUF and SO_RCVBUF (doubled too)
VICTIM_BUF=65536
# What the rest of the kernel may do meanwhile (slabs of processes and
# timers, per-CPU caches...): not attributable to any documented limit.
SLACK_KB=${OP_FLOOD_SLACK_KB:-4096}
# Growth allowed over the second half of the flood, and left after it.
PLATEAU_KB=${OP_FLOOD_PLATEAU_KB:-1536}
DRAIN_KB=${OP_FLOOD_DRAIN_KB:-2048}
# Victims' median latency during the flood: at most LAT_FACTOR times
# before it, or LAT_FLOOR_MS (an emulated guest is noisy).  A victim held
# by the flood would wait for its end, FLOOD_S.
LAT_FACTOR=${OP_FLOOD_LAT_FACTOR:-4}
LAT_FLOOR_MS=${OP_FLOOD_LAT_FLOOR_MS:-1500}
DIAG_KEYS+=" window_stalls window_probes retransmits rx_rdm_msgs"

tap_plan "fabric up 4 hosts 2 tors" "13 op-traffic processes bound" \
	"best-effort flood refused for want of receive buffer" \
	"reliable flood held by the window" \
	"h1 never held more than rdm_window messages of one host" \
	"the samples see the messages h1 holds" \
	"memory stayed under the computed bound" \
	"memory growth levelled off" "victim processes ran" \
	"victims kept receiving during the flood" \
	"victims' median latency unchanged by the flood" \
	"victims: op-check --expect-all (best effort)" \
	"victims: op-check --reliable --expect-all" \
	"memory back to baseline after the readers closed" \
	"kernel log clean"

mark=$(dmesg_mark)
need_module
need_tools "$FABRIC" "$TRAFFIC" "$CHECK" "$ONEPIPE"
need_rdm
[ -r /proc/slabinfo ] || tap_abort "cannot read /proc/slabinfo"
# ACKs and barriers wait behind the flood in an emulated guest on a busy
# machine: 3 s ACK timeout, links removed after 1 s of silence.
fabric_up --hosts 4 --tors 2 --ack-timeout-ms "${OP_ACK_TIMEOUT_MS:-3000}" \
	--timeout-intervals "${OP_TIMEOUT_INTERVALS:-500}" ||
	tap_abort "fabric up failed"
tap_pass "fabric up 4 hosts 2 tors"

W=$(ip netns exec op-h1 sysctl -n net.onepipe.rdm_window) ||
	tap_abort "cannot read h1's net.onepipe.rdm_window"

# ---------------------------------------------------------------- memory

# Bytes an skb of N payload bytes allocated by alloc_skb() takes (its
# truesize, rounded up): the data area with struct skb_shared_info (320
# bytes on x86-64 6.1), rounded to the kmalloc size above it (a power of
# two), plus the struct sk_buff (256 with its slab alignment).
skb_size()
{
	local need=$((($1 + 63) / 64 * 64 + 320)) a=512
	while [ "$a" -lt "$need" ]; do
		a=$((a * 2))
	done
	echo $((a + 256))
}

# Every process costs a fifth of a second in an emulated guest, so the
# samples spawn few: one awk reads the /proc files, one pipeline sums the
# sockets, and the samples are read back with bash builtins.

# now_ns without a process (bash 5's EPOCHREALTIME).
clock_ns()
{
	local t=${EPOCHREALTIME/./}
	echo "${t}000"
}
# lib.sh's, whose date(1) is a process per call.
now_ns() { clock_ns; }

# mem_sample FILE: "KEY VALUE" lines, kB (time_ns in ns): meminfo,
# slabs in use, sockstat, and "sockmem": what every UDP and packet socket
# of the guest holds (the switches', rxe's, the UDP transport's: rmem +
# wmem of `ss -m`).
mem_sample()
{
	local t f
	# SLUB keeps freed objects in per-CPU slabs it counts as used (and
	# its slab pages in SUnreclaim): give them back first, so that the
	# sample counts live objects.
	# Only the caches that skbs and these sockets use: shrinking every
	# cache takes seconds in an emulated guest.
	for f in /sys/kernel/slab/{kmalloc-{512,1k,2k,4k,8k},skbuff_head_cache,ONEPIPE}/shrink; do
		echo 1 >"$f"
	done 2>/dev/null
	t=$(clock_ns)
	{
		ss -H -a -m -u -0 2>/dev/null
		ip -all netns exec ss -H -a -m -u -0 2>/dev/null
	} | awk -v t="$t" '
		/skmem:/ {
			sub(/.*skmem:\(/, ""); sub(/\).*/, "")
			n = split($0, f, ",")
			for (i = 1; i <= n; i++)
				if (f[i] ~ /^[rt][0-9]+$/)
					sock += substr(f[i], 2)
		}
		END {
			print "time_ns", t
			print "sockmem", int(sock / 1024)
			while ((getline l < "/proc/meminfo") > 0) {
				split(l, f, /[: ]+/)
				if (f[1] ~ /^(Slab|SUnreclaim|MemFree)$/)
					print f[1], f[2]
			}
			while ((getline l < "/proc/slabinfo") > 0) {
				split(l, f, / +/)
				if (f[1] ~ /^(skbuff_head_cache|skbuff_fclone_cache|kmalloc-(256|512|1k|2k|4k|8k)|ONEPIPE)$/)
					print f[1], int(f[2] * f[4] / 1024)
			}
			while ((getline l < "/proc/net/sockstat") > 0) {
				split(l, f, / +/)
				if (f[1] == "sockets:")
					print "sockets_used", f[3]
				if (f[1] == "UDP:")
					print "udp_mem_kb", f[5] * 4
			}
		}' >"$1"
}

# load_sample FILE NAME: the sample's values as MEM[NAME.KEY].
declare -A MEM
load_sample()
{
	local k v
	while read -r k v; do
		MEM[$2.$k]=$v
	done <"$1"
}

# growth_kb NAME: SUnreclaim growth of sample NAME since the baseline,
# less what the fabric's own sockets grew by.
growth_kb()
{
	local ds=$((${MEM[$1.sockmem]} - ${MEM[base.sockmem]}))
	[ "$ds" -gt 0 ] || ds=0
	echo $((${MEM[$1.SUnreclaim]} - ${MEM[base.SUnreclaim]} - ds))
}

# sample_s NAME: seconds from the flood's start to sample NAME.
sample_s()
{
	echo $(((${MEM[$1.time_ns]} - flood_ns) / 1000000000))
}

# mem_line NAME: one diagnostic line for a sample.
mem_line()
{
	local k line=
	for k in SUnreclaim Slab sockmem skbuff_head_cache kmalloc-2k \
		kmalloc-4k kmalloc-8k ONEPIPE; do
		line+=" $k ${MEM[$1.$k]:-?}"
	done
	echo "${line# }"
}

# held_sample FILE: h1's reliable receive state per peer ("HOST HELD")
# and its sockets' receive queues ("port PORT BYTES").
held_sample()
{
	{
		ip netns exec op-h1 "$ONEPIPE" -j peer show 2>/dev/null |
			tr '{' '\n' | awk '
			match($0, /"host":[0-9]+/) {
				h = substr($0, RSTART + 7, RLENGTH - 7)
				if (match($0, /"rx_held":[0-9]+/))
					print h, substr($0, RSTART + 10, RLENGTH - 10)
			}'
		ip netns exec op-h1 "$ONEPIPE" -j sock show 2>/dev/null |
			tr '{' '\n' | awk '
			match($0, /"port":[0-9]+/) {
				p = substr($0, RSTART + 7, RLENGTH - 7)
				if (match($0, /"rx_queued":[0-9]+/))
					print "port", p, substr($0, RSTART + 12, RLENGTH - 12)
			}'
	} >"$1"
}

# counter HOST NAME: one host counter, straight from the CLI (the python
# snapshot of lib.sh is too slow to run in the middle of the flood).
counter()
{
	local j
	j=$(ip netns exec "op-$1" "$ONEPIPE" -j host show 2>/dev/null)
	[[ $j =~ \"$2\":([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# ---------------------------------------------------------------- traffic

# Nothing may outlive the victims' last send by much.
maxs=$((PRE_S + FLOOD_S + POST_S + 120))
victims=() dg_victims=() rdm_victims=() floods=() sinks=()
vscats=$(((PRE_S + FLOOD_S + POST_S) * 1000000 / VICTIM_US))
for ep in 1:4 3:4 4:1,3; do
	h=${ep%%:*}
	for p in 3001 3002; do
		log=$WORK/victim-h$h-$p.log
		type=dgram
		[ "$p" = 3002 ] && type=rdm
		peers=${ep#*:}
		peers=${peers//,/:$p,}:$p
		traffic_start "h$h" "$p" "$log" "$maxs" --type "$type" \
			--peers "$peers" --fanout 1 --scatterings "$vscats" \
			--size "$VICTIM_SIZE" --interval-us "$VICTIM_US" \
			--sndbuf "$VICTIM_BUF" --rcvbuf "$VICTIM_BUF" \
			--linger-ms 4000 --seed 5 --quiet
		victims+=("${_pids[-1]}")
		if [ "$type" = dgram ]; then
			dg_victims+=("$log")
		else
			rdm_victims+=("$log")
		fi
	done
done
for p in 1001 1002; do
	type=dgram
	[ "$p" = 1002 ] && type=rdm
	traffic_start h1 "$p" "$WORK/sink-$p.log" "$maxs" --type "$type" \
		--rcvbuf "$SINK_RCVBUF" --recv-pause-ms 0:600000 --quiet
	sinks+=("${_pids[-1]}")
done
fscats=$((FLOOD_S * 1000000 / FLOOD_US))
for ep in 2:2001 3:2001 2:2002 2:2003 3:2002; do
	h=${ep%:*}
	p=${ep#*:}
	if [ "$p" = 2001 ]; then
		args=(--type dgram --peers 1:1001 --size "$DG_SIZE"
			--scatterings "$fscats" --interval-us "$FLOOD_US")
	else
		args=(--type rdm --peers 1:1002 --size "$RDM_SIZE"
			--scatterings 1000000 --interval-us 1000)
	fi
	traffic_start "h$h" "$p" "$WORK/flood-h$h-$p.log" "$maxs" "${args[@]}" \
		--fanout 1 --sndbuf "$FLOODER_BUF" --rcvbuf "$FLOODER_BUF" \
		--delay-ms $((PRE_S * 1000)) --quiet
	floods+=("${_pids[-1]}")
done
nflood_hosts=2 nflood_dg=2 nflood_rdm=3 nsink=2 nvictim=6

# The bound, from the documented limits (bytes):
#  - h1 holds at most rdm_window messages per sender host, from arrival
#    until they enter a receive queue (README, "Flow control");
#  - a receive queue holds at most its SO_RCVBUF, plus one message that
#    a reliable socket with an empty queue is always given;
#  - a sending socket holds at most its SO_SNDBUF of messages (ACK
#    pending, until committed, or waiting for window, their packets
#    included) plus one admitted scattering, itself at most SO_SNDBUF;
#  - a best-effort message can be at its receiver (reorder queue,
#    reassembly) only while its sender holds it for the ACK: the same
#    again at h1 per best-effort flooder;
#  - a socket's error queue counts against its SO_RCVBUF;
#  - SLACK_KB for the rest of the kernel.
# (SO_*BUFFORCE doubles what op-traffic asks for.)
t_rdm=$(skb_size "$RDM_SIZE")
t_v=$(skb_size "$VICTIM_SIZE")
b_window=$((nflood_hosts * W * t_rdm))
b_sinks=$((nsink * (2 * SINK_RCVBUF + t_rdm)))
b_send=$(((nflood_dg + nflood_rdm) * 2 * 2 * FLOODER_BUF))
b_inflight=$((nflood_dg * 2 * 2 * FLOODER_BUF))
b_errq=$(((nflood_dg + nflood_rdm) * (2 * FLOODER_BUF + t_rdm)))
b_victims=$((nvictim * (2 * 2 * VICTIM_BUF + 2 * VICTIM_BUF + t_v)))
bound_kb=$(((b_window + b_sinks + b_send + b_inflight + b_errq + \
	b_victims) / 1024 + SLACK_KB))
diag "bound: $((b_window / 1024)) kB window ($nflood_hosts hosts x" \
	"rdm_window $W x $t_rdm B) + $((b_sinks / 1024)) kB sinks +" \
	"$((b_send / 1024)) kB flooders' send buffers +" \
	"$((b_inflight / 1024)) kB best-effort copies at h1 +" \
	"$((b_errq / 1024)) kB error queues + $((b_victims / 1024)) kB" \
	"victims + $SLACK_KB kB slack = $bound_kb kB"

# Nothing is sent before the round starts: the counters' and the
# memory's starting point (every process started, most sockets bound).
nobufs0=$(counter h1 rx_nobufs)
stalls0=$(($(counter h2 window_stalls) + $(counter h3 window_stalls)))
mem_sample "$WORK/mem.base"
load_sample "$WORK/mem.base" base
diag "baseline: $(mem_line base)"
if traffic_go; then
	tap_pass "13 op-traffic processes bound"
else
	tap_fail "13 op-traffic processes bound" "see the diagnostics above"
fi
start_ns=$(round_start_ns)
flood_ns=$((start_ns + PRE_S * 1000000000))
end_ns=$((flood_ns + FLOOD_S * 1000000000))

# Samples every SAMPLE_S of the flood (fewer if taking them is slow).
at=()
n=0
while :; do
	sleep_until $((flood_ns + (n + 1) * SAMPLE_S * 1000000000))
	[ "$(now_ns)" -le "$end_ns" ] || break
	n=$((n + 1))
	mem_sample "$WORK/mem.$n"
	held_sample "$WORK/held.$n"
	load_sample "$WORK/mem.$n" "$n"
	at[n]=$(sample_s "$n")
	diag "flood +${at[n]} s: growth $(growth_kb "$n") kB;" \
		"$(mem_line "$n"); held" \
		"$(awk '$1 != "port" { printf "h%s:%s ", $1, $2 }' \
			"$WORK/held.$n")"
done
nsamples=$n
nobufs=$(($(counter h1 rx_nobufs) - nobufs0))
stalls=$(($(counter h2 window_stalls) + $(counter h3 window_stalls) - stalls0))
waiting=$(($(counter h2 rdm_waiting) + $(counter h3 rdm_waiting)))

# The flood ends: its senders go, then the readers close without reading.
sleep_until "$end_ns"
step "killing the flooders, then the sinks"
for p in "${floods[@]}"; do
	kill -TERM "$p" 2>/dev/null
done
for p in "${floods[@]}"; do
	wait "$p" 2>/dev/null
done
stop_ns=$(now_ns)
for p in "${sinks[@]}"; do
	kill -TERM "$p" 2>/dev/null
done
for p in "${sinks[@]}"; do
	wait "$p" 2>/dev/null
done

# ------------------------------------------------------------ the flood

if [ "${nobufs:-0}" -gt 0 ]; then
	tap_pass "best-effort flood refused for want of receive buffer" \
		"h1 rx_nobufs +$nobufs"
else
	tap_fail "best-effort flood refused for want of receive buffer" \
		"h1 rx_nobufs did not grow: the sink's buffer never filled"
fi

maxheld=$(cat "$WORK"/held.* 2>/dev/null |
	awk '$1 == 2 || $1 == 3 { if ($2 > m) m = $2 } END { print m + 0 }')
if [ "${stalls:-0}" -gt 0 ] && [ "$maxheld" -ge $((W / 2)) ]; then
	tap_pass "reliable flood held by the window" \
		"window_stalls +$stalls on h2+h3, $waiting waiting at the end, h1 held up to $maxheld"
else
	tap_fail "reliable flood held by the window" \
		"window_stalls +${stalls:-?}, h1 held at most $maxheld of $W"
fi

over=$(cat "$WORK"/held.* 2>/dev/null |
	awk -v w="$W" '$1 != "port" && $2 > w { print "h" $1 ":" $2 }' |
	sort -u | head -n 5)
if [ "$nsamples" -gt 0 ] && [ -z "$over" ]; then
	tap_pass "h1 never held more than rdm_window messages of one host" \
		"rdm_window $W, most held $maxheld"
else
	tap_fail "h1 never held more than rdm_window messages of one host" \
		"${over:-no sample} (rdm_window $W)"
fi

# kmalloc-8k's growth at the sample where h1 held the most reliable
# messages from h2 and h3, against those messages' 8 kB each.
best=0 seen=0 need=0
for i in $(seq 1 "$nsamples"); do
	h=$(awk '$1 == 2 || $1 == 3 { s += $2 } END { print s + 0 }' \
		"$WORK/held.$i")
	if [ "$h" -gt "$best" ]; then
		best=$h
		need=$((h * 8))
		seen=$((${MEM[$i.kmalloc-8k]:-0} - ${MEM[base.kmalloc-8k]:-0}))
	fi
done
if [ "$best" -gt 0 ] && [ "$seen" -ge $((need / 2)) ]; then
	tap_pass "the samples see the messages h1 holds" \
		"kmalloc-8k +$seen kB for $best messages held"
else
	tap_fail "the samples see the messages h1 holds" \
		"kmalloc-8k +$seen kB for $best messages held (want $((need / 2)) kB)"
fi

worst=0 worst_at=0
for i in $(seq 1 "$nsamples"); do
	g=$(growth_kb "$i")
	if [ "$g" -gt "$worst" ]; then
		worst=$g
		worst_at=${at[i]}
	fi
done
if [ "$nsamples" -eq 0 ]; then
	tap_fail "memory stayed under the computed bound" "no sample taken"
elif [ "$worst" -le "$bound_kb" ]; then
	tap_pass "memory stayed under the computed bound" \
		"most $worst kB at +$worst_at s, bound $bound_kb kB"
else
	tap_fail "memory stayed under the computed bound" \
		"$worst kB at +$worst_at s > bound $bound_kb kB"
fi

# Levelled off: the second half of the flood (as much traffic as the
# first) adds at most PLATEAU_KB.
mid=$(((nsamples + 1) / 2))
if [ "$nsamples" -ge 3 ]; then
	gm=$(growth_kb "$mid")
	ge=$(growth_kb "$nsamples")
	if [ $((ge - gm)) -le "$PLATEAU_KB" ]; then
		tap_pass "memory growth levelled off" \
			"$gm kB at +${at[mid]} s, $ge kB at +${at[nsamples]} s"
	else
		tap_fail "memory growth levelled off" \
			"+$((ge - gm)) kB from +${at[mid]} s to +${at[nsamples]} s (allowed $PLATEAU_KB)"
	fi
else
	tap_fail "memory growth levelled off" "only $nsamples samples"
fi

# ------------------------------------------------------------ victims

bad=0
for p in "${victims[@]}"; do
	wait "$p" || bad=$((bad + 1))
done
_traffic=()
if [ "$bad" -eq 0 ]; then
	tap_pass "victim processes ran"
else
	for l in "${dg_victims[@]}" "${rdm_victims[@]}"; do
		diag "$(basename "$l"): $(tail -n 3 "$l.out" 2>/dev/null)"
	done
	tap_fail "victim processes ran" "$bad of ${#victims[@]} failed"
fi

# Per victim receiver: messages stamped before the flood and during it,
# with their median and 99th percentile latency (48-bit stamps, as
# op-traffic logs them).
python3 - "$start_ns" "$flood_ns" "$stop_ns" "${dg_victims[@]}" \
	"${rdm_victims[@]}" >"$WORK/victims.out" 2>&1 <<'PY'
import os, sys

start, t0, t1 = (int(x) for x in sys.argv[1:4])
M = 1 << 48


def rel(ts):
    d = (ts - t0) % M
    return d - M if d >= M // 2 else d


def stats(lat):
    lat.sort()
    n = len(lat)
    q = (lambda f: lat[min(n - 1, int(f * n))] if n else 0)
    return "%d %d %d" % (n, q(0.5), q(0.99))


pre, end = start - t0, t1 - t0
for path in sys.argv[4:]:
    before, during = [], []
    for f in (ln.split() for ln in open(path)):
        if not f or f[0] != "R":
            continue
        s, lat = rel(int(f[1])), int(f[6]) // 10**6
        if pre <= s < 0:
            before.append(lat)
        elif 0 <= s < end:
            during.append(lat)
    print(os.path.basename(path)[7:-4], stats(before), stats(during))
PY
diag "victims (receiver; before the flood: n p50_ms p99_ms; during it: n" \
	"p50_ms p99_ms):" "$(cat "$WORK/victims.out")"
nv=$(awk 'NF == 7 { n++ } END { print n + 0 }' "$WORK/victims.out")
starved=$(awk 'NF == 7 && $5 == 0 { print $1 }' "$WORK/victims.out")
if [ "$nv" -eq 6 ] && [ -z "$starved" ]; then
	tap_pass "victims kept receiving during the flood" \
		"$(awk 'NF == 7 { s += $5 } END { print s }' "$WORK/victims.out") messages"
else
	tap_fail "victims kept receiving during the flood" \
		"nothing for: ${starved:-?} ($nv receivers analysed)"
fi
slow=$(awk -v f="$LAT_FACTOR" -v m="$LAT_FLOOR_MS" '
	NF == 7 {
		lim = $3 * f > m ? $3 * f : m
		if ($6 > lim)
			print $1 ": " $6 " ms > " lim
	}' "$WORK/victims.out")
if [ "$nv" -eq 6 ] && [ -z "$slow" ]; then
	tap_pass "victims' median latency unchanged by the flood" \
		"at most $LAT_FACTOR x before or $LAT_FLOOR_MS ms"
else
	tap_fail "victims' median latency unchanged by the flood" \
		"${slow:-no analysis}"
fi

run_check "victims: op-check --expect-all (best effort)" --expect-all \
	"${dg_victims[@]}"
run_check "victims: op-check --reliable --expect-all" --reliable \
	--expect-all "${rdm_victims[@]}"

# ------------------------------------------------------------ drain

# Every op-traffic is gone: the module must have given back what the
# flood made it hold (backlogs, queues, sockets): SUnreclaim back within
# DRAIN_KB of the baseline, which had all thirteen sockets open.
deadline=$((SECONDS + 40))
while :; do
	mem_sample "$WORK/mem.after"
	load_sample "$WORK/mem.after" after
	g=$(growth_kb after)
	[ "$g" -le "$DRAIN_KB" ] || [ "$SECONDS" -ge "$deadline" ] && break
	sleep 2
done
diag "after: growth $g kB; $(mem_line after)"
if [ "$g" -le "$DRAIN_KB" ]; then
	tap_pass "memory back to baseline after the readers closed" \
		"$g kB from the baseline"
else
	tap_fail "memory back to baseline after the readers closed" \
		"still $g kB above the baseline after 40 s"
fi

check_klog "kernel log clean" "$mark"
