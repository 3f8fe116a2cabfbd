/* SPDX-License-Identifier: GPL-2.0 */
/*
 * onepipe.ko internals: per-host (per network namespace) state, sockets,
 * transports.  The protocol's pure logic lives in core/; this header is
 * the kernel glue around it.
 */
#ifndef _ONEPIPE_H
#define _ONEPIPE_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/hashtable.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <uapi/linux/onepipe.h>

#include "core/barrier.h"
#include "core/clock.h"
#include "core/deadline.h"
#include "core/pq.h"
#include "core/rack.h"
#include "core/push.h"
#include "core/seqrec.h"
#include "core/wire.h"

struct op_net;

/**
 * struct op_verbs_peer - how the verbs transport reaches one host
 * @host: its host id; 0 is the uplink switch, where beacons go
 * @gid: its GID (RoCEv2: an IPv4-mapped IPv6 address)
 * @qpn: its UD QP number
 * @qkey: its Q_Key
 */
struct op_verbs_peer {
	u32 host;
	u8 gid[16];
	u32 qpn;
	u32 qkey;
};

/* Most verbs peers one host may configure (bounds HOST_GET's reply). */
#define OP_VERBS_MAX_PEERS	1024

/* Longest RDMA device name (IB_DEVICE_NAME_MAX). */
#define OP_VERBS_DEV_LEN	64

/**
 * struct op_host_cfg - what ONEPIPE_CMD_HOST_SET configures
 * @host_id: this host's id, 1..U32_MAX-1
 * @transport: enum onepipe_transport_kind
 * @laddr: UDP transport: local IPv4 address
 * @lport: UDP transport: local port
 * @uaddr: UDP transport: uplink switch address
 * @uport: UDP transport: uplink switch port
 * @vdev: verbs transport: RDMA device name
 * @vport: verbs transport: its port number
 * @vqkey: verbs transport: this host's Q_Key
 * @vpeers: verbs transport: the peers' addresses; only valid during
 *	op_host_set() (the transport keeps its own copy)
 * @nvpeers: entries in @vpeers
 */
struct op_host_cfg {
	u32 host_id;
	u32 transport;
	__be32 laddr;
	u16 lport;
	__be32 uaddr;
	u16 uport;
	char vdev[OP_VERBS_DEV_LEN];
	u32 vport;
	u32 vqkey;
	const struct op_verbs_peer *vpeers;
	unsigned int nvpeers;
};

/**
 * struct op_transport_ops - how 1Pipe packets reach the wire
 * @kind: enum onepipe_transport_kind
 * @name: for messages
 * @up: start on @on with @cfg; process context; sets @on's frag_size and
 *	headroom (room for what goes in front of the 1Pipe header); on
 *	success the transport calls op_rcv() for every packet it receives
 *	from then on, or op_rcv_list() for the packets of one datagram
 *	(which may share its buffer)
 * @down: stop; process context; when it returns no op_rcv() or
 *	op_rcv_list() call is running or will run
 * @xmit: send @pkts, each with its data at the 1Pipe header, and empty
 *	the list: every packet is consumed, sent or not; called with BHs
 *	off and tx_lock held, never sleeps.
 *	Packets handed over in order must reach the uplink in that order.
 *	The list is what one send produced (a scattering, the control
 *	packets of one event): a datagram transport may carry several in
 *	one bundle (core/wire.h) if net.onepipe.bundle allows.  A packet
 *	may share its buffer with the message it carries (op_msg_packets()):
 *	its payload is read-only, and headers go in front of it after
 *	skb_cow_head().  Returns how many of them it could not send.
 * @mtu: largest 1Pipe packet (header included) the path carries
 * @beacon_barriers: the fabric never rewrites this transport's packets
 *	(RoCE's ICRC covers them), so barriers travel only in beacons: the
 *	host sends one every interval, and takes barriers only from the
 *	beacons of its uplink (another packet's are its sender's own)
 *
 * Transports are selected per host.
 */
struct op_transport_ops {
	u32 kind;
	const char *name;
	bool beacon_barriers;
	int (*up)(struct op_net *on, const struct op_host_cfg *cfg);
	void (*down)(struct op_net *on);
	int (*xmit)(struct op_net *on, struct sk_buff_head *pkts);
	unsigned int (*mtu)(struct op_net *on);
};

extern const struct op_transport_ops op_udp_transport;
#if IS_ENABLED(CONFIG_INFINIBAND)
extern const struct op_transport_ops op_verbs_transport;
#endif

/* Reliable receive state keeps a ring of this many sequence numbers. */
#define OP_RDM_SEEN_BITS	2048
/* Refusal codes a receiver remembers per sender, for NAKing copies. */
#define OP_RDM_REFUSED		8
/*
 * Most messages a reliable window (net.onepipe.rdm_window) may allow; a
 * receiver accepts sequence numbers up to this far above the first one
 * missing, and remembers refusals this far below it.
 */
#define OP_RDM_WINDOW_MAX	(OP_RDM_SEEN_BITS / 2)

/*
 * Most best-effort messages in flight to one peer (net.onepipe.be_window):
 * its receiver's record of them spans twice as many (core/seqrec.h).
 */
#define OP_BE_WINDOW_MAX	(OP_SEQREC_SPAN / 2)

/**
 * struct op_rdm_tx - the sending half of the reliable service towards a peer
 * @out: stamped messages in @next order, from sending until the host's
 *	commit barrier passes them (an ACKed message may still have to be
 *	recalled while another message of its scattering is unresolved)
 * @una: first message of @out that is not ACKed, NULL if none
 * @active: on op_net.rdm_active while @out is not empty
 * @next: sequence number of the next message
 * @edge: the receiver's window: messages with seq < @edge may be sent
 * @reserved: credits held by scatterings waiting in op_net.waitq
 * @win: the receiver's window in messages, as its ACKs say; 0 until known
 * @need: scratch for counting a scattering's messages to this peer
 * @blocked_gen: op_net.admit_gen of the last pump that found no credit here
 * @srtt_us: smoothed ACK round-trip time, 0 until measured
 * @rttvar_us: its mean deviation
 * @min_rtt_us: the smallest ACK round trip measured, 0 until measured
 * @rack: RACK's loss detection state (core/rack.h)
 * @rto_at: ktime_get_ns() when the retransmission timer expires: an RTO
 *	after the last ACK that acked something new; 0 while nothing is in
 *	flight
 * @tlp_at: when the tail-loss probe goes out, 0 if none is due
 * @reo_at: when RACK looks again at messages that may only be reordered,
 *	0 if none may
 * @tlp_out: a tail-loss probe went out and no ACK acked anything since
 * @probe_at: ktime_get_ns() when a window probe may go out next
 * @sync: messages were abandoned (not ACKed, not recalled): probes tell
 *	the receiver until it has skipped them
 * @backoff: the retransmission timeout is doubled this many times, from
 *	a timeout until the next round-trip sample (as TCP does)
 * @inflight: messages sent and not yet ACKed (nor failed)
 * @cwnd: congestion window (messages in flight), at most the window
 * @alpha: DCTCP's estimate of the marked fraction, in 1/1024
 * @cc_acked: messages ACKed in the current observation window
 * @cc_marked: of which the receiver saw congestion marks
 * @cc_end: the observation window ends when this seq is ACKed
 * @report_due: out of retries while net.onepipe.controlled is set: the
 *	tick tells the controller (ONEPIPE_CMD_EV_UNREACH), again at every
 *	later timeout while no ACK comes; resends go on
 * @relay: out of retries while controlled: every reliable packet for the
 *	peer is also handed to the controller (relay.c), until an ACK that
 *	came over the network says the network carried the data too;
 *	read locklessly by the receive path (answers go that way too)
 * @relay_seq: @next when relaying began: only the ACK of a message sent
 *	since can end it
 *
 * All under tx_lock.
 */
struct op_rdm_tx {
	struct sk_buff_head out;
	struct sk_buff *una;
	struct list_head active;
	u32 next;
	u32 edge;
	u32 reserved;
	u32 win;
	u32 need;
	u32 blocked_gen;
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_rtt_us;
	struct op_rack rack;
	u64 rto_at;
	u64 tlp_at;
	u64 reo_at;
	bool tlp_out;
	u64 probe_at;
	bool sync;
	u32 backoff;
	u32 inflight;
	u32 cwnd;
	u32 alpha;
	u32 cc_acked;
	u32 cc_marked;
	u32 cc_end;
	bool report_due;
	bool relay;
	u32 relay_seq;
};

/**
 * struct op_rdm_rx - the receiving half of the reliable service from a peer
 * @nxt: every message with seq < @nxt has arrived (or was refused)
 * @held: messages arrived but not yet in a socket's receive queue; they
 *	are what the window is charged with
 * @adv: window edge last advertised
 * @granted: the highest edge ever advertised (or assumed by the sender
 *	before our first ACK): messages from @granted on are refused, so
 *	that a sender never makes us hold more than a window
 * @seen: ring of OP_RDM_SEEN_BITS: bit seq % OP_RDM_SEEN_BITS is set when
 *	message seq (>= @nxt) has arrived
 * @refused: ring like @seen: bit seq % OP_RDM_SEEN_BITS is set when message
 *	seq (within OP_RDM_WINDOW_MAX of @nxt, either side) was refused or
 *	abandoned by its sender, so that a copy is never ACKed
 * @refused_seq: the last OP_RDM_REFUSED messages refused (NAKed)
 * @refused_code: their NAK codes, 0 for an empty slot
 * @refused_next: slot the next refusal takes
 * @ce: a packet from the sender came with a congestion mark since the
 *	last ACK to it
 * @ack_lo: first sequence number of the ACK range being built
 * @ack_hi: last sequence number of that range
 * @ack_node: on op_net.rdm_ack_pending while a range is being built
 * @ack_ns: ktime_get_ns() of the last ACK of received messages
 * @last: sequence number of the last message that arrived whole
 * @prev_lo: first sequence number of the last range ACKed
 * @prev_hi: its last
 * @prev_valid: a range was ACKed
 * @relay_in: the last reliable DATA packet from the peer came through the
 *	controller: ACKs and NAKs go back that way too, flagged
 *	OP_F_VIA_CTL
 *
 * All under rx_lock.
 */
struct op_rdm_rx {
	u32 nxt;
	u32 held;
	u32 adv;
	u32 granted;
	DECLARE_BITMAP(seen, OP_RDM_SEEN_BITS);
	DECLARE_BITMAP(refused, OP_RDM_SEEN_BITS);
	u32 refused_seq[OP_RDM_REFUSED];
	u8 refused_code[OP_RDM_REFUSED];
	u8 refused_next;
	bool ce;
	u32 ack_lo;
	u32 ack_hi;
	struct list_head ack_node;
	u64 ack_ns;
	u32 last;
	u32 prev_lo;
	u32 prev_hi;
	bool prev_valid;
	bool relay_in;
};

/**
 * struct op_peer - what this host keeps about another host
 * @host: the peer's host id
 * @tx_seq: next message sequence number towards the peer (tx_lock)
 * @outstanding: sent messages awaiting the peer's ACK, in @tx_seq order;
 *	the skbs are the socket-charged payload copies (tx_lock)
 * @be_reserved: best-effort credits held by scatterings waiting in
 *	op_net.waitq; with @outstanding, what be_window bounds (admit.c says
 *	when it may be passed; tx_lock)
 * @be_blocked_gen: op_net.admit_gen of the last pump that found no
 *	best-effort credit here (tx_lock)
 * @be_dl: the delay measured towards the peer and the last deadline
 *	given to a best-effort message to it (core/deadline.h, tx_lock)
 * @ack_lo: first sequence number of the ACK range being built (rx_lock)
 * @ack_hi: last sequence number of that range (rx_lock)
 * @ack_node: on op_net.ack_pending while a range is being built (rx_lock)
 * @berec: what became of the peer's best-effort messages here, for the
 *	answers to its queries (core/seqrec.h, rx_lock)
 * @partial: messages being reassembled from fragments (rx_lock)
 * @rtx: reliable service, sending half (tx_lock)
 * @rrx: reliable service, receiving half (rx_lock)
 * @failed: the controller declared the peer failed (ONEPIPE_CMD_FAIL):
 *	its reliable messages stamped at or after @fail_ts are discarded
 *	(rx_lock to write; READ_ONCE outside it)
 * @rejoined: a new incarnation of it rejoined (ONEPIPE_CMD_REJOIN):
 *	@failed is clear, and what the old one stamped from @fail_ts until
 *	@fail_end is still discarded (rx_lock)
 * @fail_ts: its failure timestamp (rx_lock)
 * @fail_end: the new incarnation's first timestamp: everything the peer
 *	stamped before it is the old incarnation's (rx_lock)
 * @rejoin_epoch: the decision that made it rejoin (rx_lock)
 * @fail_epoch: the controller's decision that failed it (rx_lock)
 * @fail_armed: the recalls the failure started are out: once none is
 *	left, it is complete (rx_lock)
 * @fail_done: the failure is complete here and ONEPIPE_CMD_EV_FAIL_DONE
 *	was sent (rx_lock)
 *
 * Peers are created on first use and live as long as the namespace's
 * 1Pipe state; lookups are lockless through op_net.peers.
 */
struct op_peer {
	u32 host;
	u32 tx_seq;
	struct sk_buff_head outstanding;
	u32 be_reserved;
	u32 be_blocked_gen;
	struct op_deadline be_dl;
	u32 ack_lo;
	u32 ack_hi;
	struct list_head ack_node;
	struct op_seqrec berec;
	struct list_head partial;
	struct op_rdm_tx rtx;
	struct op_rdm_rx rrx;
	bool failed;
	bool rejoined;
	bool fail_armed;
	bool fail_done;
	u32 fail_epoch;
	u64 fail_ts;
	u64 fail_end;
	u32 rejoin_epoch;
};

/* Counters live per CPU so that hot paths never share a cache line. */
struct op_counters {
	u64 c[__ONEPIPE_C_MAX];
};

/**
 * struct op_net - one 1Pipe host: the module's state in a network namespace
 *
 * Locking, outermost first (never take them the other way round):
 *  cfg_mutex: configuration changes (process context only).
 *  rx_lock:   the input link, barrier aggregation, reorder queue,
 *	       reassembly and ACK ranges.  Taken in softirq by the receive
 *	       path and the tick, with BHs off elsewhere.
 *  tx_lock:   the clock, sequence numbers, outstanding messages and the
 *	       transport's transmit path, so that stamping order is wire
 *	       order.  BH-safe like rx_lock.  push_timer's callback takes
 *	       it: start that timer under it, never cancel it under it.
 *  port_lock: binding of sockets to ports (lookups are RCU).
 *  peers' xa_lock: innermost, only inside op_peer_get()'s insertion
 *	       and the namespace's teardown.  Peers are created in process
 *	       context and in softirq (under rx_lock), so it is BH-safe too
 *	       (XA_FLAGS_LOCK_BH); lookups are RCU.
 */
struct op_net {
	struct net *net;

	struct mutex cfg_mutex;		/* configuration changes */
	struct op_host_cfg cfg;		/* cfg_mutex; read locklessly */
	const struct op_transport_ops *tops;	/* set under cfg + tx_lock */
	void *tpriv;			/* transport's own state */
	unsigned int frag_size;		/* payload bytes per packet */
	unsigned int headroom;		/* set by the transport's up() */
	bool beacon_barriers;		/* see struct op_transport_ops */
	bool up;			/* cfg_mutex + tx_lock to write */
	u32 incarnation_epoch;		/* cfg_mutex: rejoin that made us */
	u64 incarnation_first;		/* cfg_mutex: its first timestamp */
	/*
	 * When this state was made (a timestamp): the best-effort records
	 * (op_peer.berec) say nothing of what was delivered before.
	 */
	u64 born_ts;

	/* sysctls (net.onepipe.*) */
	int beacon_interval_us;
	int link_timeout_intervals;
	int ack_timeout_ms;
	int clock_offset_ns;
	int rdm_window;
	int be_window;
	int be_deadline_max_ms;
	int rdm_rto_min_ms;
	int rdm_retries;
	int controlled;
	int failure_hold_ms;
	int bundle;
	struct ctl_table_header *sysctl_hdr;

	spinlock_t tx_lock;		/* see above */
	struct op_clock clock;		/* tx_lock */
	u64 tx_barrier;			/* tx_lock: last barrier sent */
	bool tx_stale;			/* tx_lock: uplink lacks our news */
	struct op_push push;		/* tx_lock: pacing of pushed beacons */
	u64 tx_commit;			/* tx_lock: last commit barrier sent */
	bool tx_commit_valid;		/* tx_lock: @tx_commit was sent */
	struct list_head waitq;		/* tx_lock: op_scat waiting for credits */
	struct list_head rdm_active;	/* tx_lock: peers with reliable msgs out */
	u32 admit_gen;			/* tx_lock: pump generation */
	u32 rdm_win_gen;		/* tx_lock: bumped when a peer's win changes */
	u32 rdm_unacked;		/* tx_lock: reliable msgs not yet ACKed */
	u64 rdm_last_ts;		/* tx_lock: stamp of the last one sent */
	bool rdm_sent;			/* tx_lock: @rdm_last_ts is valid */
	u64 rdm_retx_at;		/* tx_lock: next retransmission scan */
	bool rdm_report;		/* tx_lock: a peer's report_due is set */

	spinlock_t rx_lock;		/* see above */
	struct op_link uplink;		/* rx_lock: our one input link */
	struct op_agg agg;		/* rx_lock: its output (delivery) group */
	struct op_pq pq;		/* rx_lock: the reorder queue */
	u64 pq_bytes;			/* rx_lock: best effort's */
	u64 delivered;			/* rx_lock: delivered below this */
	u64 rx_max_ts;			/* rx_lock write, READ_ONCE in tx */
	bool rx_seen;			/* rx_lock write, READ_ONCE in tx */
	struct list_head ack_pending;	/* rx_lock: peers with ACKs to send */
	struct op_link cuplink;		/* rx_lock: commit register of uplink */
	struct op_agg cagg;		/* rx_lock: its commit output group */
	struct op_pq rdm_pq;		/* rx_lock: reliable msgs until commit */
	u64 cdelivered;			/* rx_lock: committed below this */
	struct list_head recalls;	/* rx_lock: recalls awaiting their msg */
	unsigned int nrecalls;		/* rx_lock: entries on @recalls */
	struct list_head rdm_ack_pending; /* rx_lock: peers owed reliable ACKs */
	bool cup_reported;		/* rx_lock: silent commit uplink reported */
	unsigned int nfailed;		/* rx_lock: nonzero once a peer failed */
	unsigned int fail_pending;	/* rx_lock: failed peers not @fail_done */
	unsigned int nholds;		/* rx_lock: sockets holding delivery */

	struct xarray peers;		/* host id -> op_peer; RCU readers */
	atomic_t npeers;

	spinlock_t port_lock;		/* binding to ports */
	DECLARE_HASHTABLE(ports, 8);	/* op_sock by port; RCU readers */
	u16 next_port;			/* port_lock */

	/*
	 * Packets for the controller to relay (relay.c): filled under
	 * tx_lock or rx_lock, drained by @relay_work in process context.
	 */
	struct sk_buff_head relay_q;	/* its own lock */
	struct work_struct relay_work;

	struct hrtimer tick;		/* beacons, ACK flush, timeouts */
	struct hrtimer push_timer;	/* a deferred beacon; tx_lock to arm */
	struct op_counters __percpu *ctr;
};

/* Most peers a host tracks; bounds what garbage on the wire can cost. */
#define OP_MAX_PEERS	4096
/* Most recalls waiting for their message (a window's worth per peer). */
#define OP_MAX_RECALLS	4096
/* Most bytes waiting in the reorder queue and reassembly. */
#define OP_MAX_PQ_BYTES	(64ULL << 20)

/**
 * struct op_scat - a scattering waiting for credits (admit.c)
 * @node: on op_net.waitq, in the order the scatterings closed
 * @msgs: its messages (op_msg_cb.credited says which hold a credit)
 * @wire: their packets, built already, in @msgs order
 * @missing: messages still without a credit
 * @win_gen: op_net.rdm_win_gen when the scattering was last checked
 *	against its receivers' windows
 *
 * Embedded in the socket: a socket has at most one scattering waiting,
 * which keeps its scatterings in the order it sent them.  Under tx_lock.
 */
struct op_scat {
	struct list_head node;
	struct sk_buff_head msgs;
	struct sk_buff_head wire;
	unsigned int missing;
	u32 win_gen;
};

/**
 * struct op_sock - an AF_ONEPIPE socket
 * @sk: must be first
 * @bind_node: in op_net.ports while bound (port_lock, RCU readers)
 * @port: bound port, 0 when unbound
 * @peer: default destination set by connect()
 * @connected: @peer is valid
 * @ordered: messages sent are ordered (ONEPIPE_ORDERED)
 * @has_last_ts: @last_ts is valid
 * @last_ts: timestamp of the last scattering sent
 * @pending: messages of the scattering being built with MSG_MORE /
 *	sendmmsg(); protected by the socket lock
 * @pending_bytes: payload bytes in @pending
 * @builder: the thread whose calls are building @pending, while it is
 *	not empty (a reference: a pid is not reused while held); socket
 *	lock, poll compares it locklessly
 * @scat: the scattering waiting for credits, if @waiting
 * @waiting: @scat is on op_net.waitq (tx_lock; READ_ONCE elsewhere)
 * @backlog: SOCK_RDM: committed messages that did not fit the receive
 *	buffer, in delivery order; they still hold their window (rx_lock)
 * @held: SOCK_RDM: a process-failure notification is not acknowledged
 *	yet: messages stamped at or after @hold_ts stay in @backlog (rx_lock)
 * @hold_ts: the earliest failure timestamp notified while @held (rx_lock)
 * @hold_until: ktime_get_ns() when the hold ends anyway (rx_lock)
 * @notified_epoch: the latest failure epoch notified (rx_lock)
 *
 * @last_ts and @has_last_ts are written under tx_lock, where stamping is.
 */
struct op_sock {
	struct sock sk;
	struct hlist_node bind_node;
	u16 port;
	struct sockaddr_onepipe peer;
	bool connected;
	bool ordered;
	bool has_last_ts;
	u64 last_ts;
	struct sk_buff_head pending;
	unsigned int pending_bytes;
	struct pid *builder;
	struct op_scat scat;
	bool waiting;
	struct sk_buff_head backlog;
	bool held;
	u64 hold_ts;
	u64 hold_until;
	u32 notified_epoch;
};

static inline bool op_sk_reliable(const struct sock *sk)
{
	return sk->sk_type == SOCK_RDM;
}

static inline struct op_sock *op_sk(const struct sock *sk)
{
	return (struct op_sock *)sk;
}

/**
 * struct op_msg_cb - skb->cb of a message, from sendmsg() to its fate
 * @ts: timestamp (valid once stamped)
 * @deadline: best effort: until its first query, the 1Pipe-clock instant
 *	(a timestamp) after which the receiver no longer delivers it; then
 *	ktime_get_ns() of the next query (tx.c)
 * @dst_host: destination host
 * @seq: sequence number towards @dst_host
 * @src_port: sending port
 * @dst_port: destination port
 * @flags: OP_F_* for the wire
 * @nfrags: packets the message was cut into
 * @peer: the destination's peer state, once the message is being sent
 * @sent_us: reliable: ktime_get_ns() / 1000 of the last (re)transmission
 * @state: reliable: enum op_rdm_state
 * @retries: reliable: retransmissions so far (of the message or recall);
 *	best effort: queries sent about it
 * @dl_code: best effort: its deadline as the wire carries it
 * @credited: holds a credit while its scattering waits (admit.c)
 * @err: ONEPIPE_EE_ABORTED: the errno its notification carries
 *
 * For reliable messages @deadline is the next retransmission.
 */
struct op_msg_cb {
	u64 ts;
	u64 deadline;
	struct op_peer *peer;
	u32 dst_host;
	u32 seq;
	u16 src_port;
	u16 dst_port;
	u16 nfrags;
	u8 flags;
	u8 state;
	u32 sent_us;
	u8 retries;
	u8 credited;
	u8 dl_code;
	u8 err;
};

/* Where a reliable message is in the two-phase commit (op_msg_cb.state). */
enum op_rdm_state {
	OP_RDM_SENT,		/* waiting for the receiver's ACK */
	OP_RDM_ACKED,		/* buffered at the receiver, until commit */
	OP_RDM_RECALLING,	/* recalled, waiting for the recall's ACK */
};

/**
 * struct op_rx_cb - skb->cb of a received message, in the reorder queue
 * @node: reorder queue node, carries the delivery key
 * @dst_port: destination port
 * @dl_code: best effort: the deadline its sender gave it (core/wire.h)
 *
 * Kept within the first 44 bytes: sock_queue_rcv_skb() writes the last
 * four bytes of cb.
 */
struct op_rx_cb {
	struct op_pq_node node;
	u16 dst_port;
	u8 dl_code;
};

/**
 * struct op_err_cb - skb->cb of a send-failure notification
 * @err: what ONEPIPE_CMSG_RECVERR returns
 * @ts: timestamp of the failed message
 */
struct op_err_cb {
	struct onepipe_recverr err;
	u64 ts;
};

#define OP_MSG_CB(skb)	((struct op_msg_cb *)(skb)->cb)
#define OP_RX_CB(skb)	((struct op_rx_cb *)(skb)->cb)
#define OP_ERR_CB(skb)	((struct op_err_cb *)(skb)->cb)

static inline struct sk_buff *op_rx_node_skb(struct op_pq_node *n)
{
	return (struct sk_buff *)((char *)n - offsetof(struct sk_buff, cb));
}

extern unsigned int op_net_id;

static inline struct op_net *op_net(const struct net *net)
{
	return net_generic(net, op_net_id);
}

static inline void op_count(struct op_net *on, int c)
{
	this_cpu_inc(on->ctr->c[c]);
}

static inline void op_count_add(struct op_net *on, int c, u64 n)
{
	this_cpu_add(on->ctr->c[c], n);
}

u64 op_counter_sum(struct op_net *on, int c);

/* The host's wall clock (synchronized across hosts), with the test skew. */
static inline u64 op_now(struct op_net *on)
{
	return ktime_get_real_ns() + READ_ONCE(on->clock_offset_ns);
}

static inline u64 op_interval_ns(struct op_net *on)
{
	return (u64)READ_ONCE(on->beacon_interval_us) * NSEC_PER_USEC;
}

/* host.c: configuration, the tick */
extern struct pernet_operations op_net_ops;
int op_host_set(struct op_net *on, const struct op_host_cfg *cfg);
void op_host_down(struct op_net *on);
void op_host_lost(struct op_net *on, const void *tpriv);
int op_net_sysctl_register(struct op_net *on);
void op_net_sysctl_unregister(struct op_net *on);
struct op_peer *op_peer_get(struct op_net *on, u32 host, gfp_t gfp);
void op_tick_start(struct op_net *on);

/* tx.c */
struct sk_buff *op_pkt_alloc(struct op_net *on, unsigned int payload,
			     gfp_t gfp);
void op_xmit_list(struct op_net *on, struct sk_buff_head *pkts);
void op_xmit(struct op_net *on, struct sk_buff *skb);
unsigned int op_msg_headroom(struct op_net *on, size_t len, bool reliable);
int op_msg_packets(struct op_net *on, struct sk_buff *msg,
		   struct sk_buff_head *wire, gfp_t gfp);
void op_xmit_copy(struct op_net *on, struct sk_buff *msg,
		  struct sk_buff_head *wire, u8 copy, struct sk_buff_head *out);
void op_xmit_msg(struct op_net *on, struct sk_buff *msg,
		 struct sk_buff_head *wire, struct sk_buff_head *out);
u64 op_tx_stamp(struct op_net *on, struct op_sock *os);
void op_tx_abort(struct op_sock *os, bool own, int err);
int op_tx_scattering(struct op_net *on, struct op_sock *os, bool own);
void op_tx_send(struct op_net *on, struct op_sock *os,
		struct sk_buff_head *msgs, struct sk_buff_head *wire);
void op_ctl_push(struct op_net *on, struct sk_buff_head *ctl,
		 const struct op_hdr *h);
void op_ctl_queue(struct op_net *on, struct sk_buff_head *ctl, u8 type,
		  u32 dst_host, u32 seq, u32 aux, u8 code, u64 ts);
void op_tx_ctl_at(struct op_net *on, struct sk_buff_head *ctl, u64 at);

/* Send control packets carrying the barrier as of now. */
static inline void op_tx_ctl(struct op_net *on, struct sk_buff_head *ctl)
{
	op_tx_ctl_at(on, ctl, op_now(on));
}

void op_tx_tick(struct op_net *on, u64 tick);
void op_tx_commit_moved(struct op_net *on);
enum hrtimer_restart op_tx_push_fn(struct hrtimer *t);
void op_tx_acked(struct op_net *on, u32 host, u32 lo, u32 hi);
void op_tx_naked(struct op_net *on, u32 host, u32 seq, u8 code, u64 at);
u64 op_tx_deadline_need(struct op_net *on, struct op_peer *p, u64 ts);
void op_tx_expire(struct op_net *on, u64 now_mono);
void op_tx_fail_all(struct op_net *on, int code);
void op_tx_forget_sock(struct op_net *on, struct sock *sk);

/* admit.c: scatterings waiting for credits, both services */
int op_admit_close(struct op_net *on, struct op_sock *os,
		   struct sk_buff_head *wire);
void op_admit_pump(struct op_net *on, struct sk_buff_head *fail);
void op_admit_unqueue(struct op_sock *os, struct sk_buff_head *msgs);
void op_admit_forget_sock(struct op_net *on, struct op_sock *os);

/* rdm_tx.c: the reliable service, sending half */
void op_rdm_send(struct op_net *on, struct op_sock *os);
void op_rdm_acked(struct op_net *on, const struct op_hdr *h);
void op_rdm_naked(struct op_net *on, u32 host, u32 seq, u8 code);
void op_rdm_peer_unreachable(struct op_net *on, u32 host);
void op_rdm_tx_tick(struct op_net *on, u64 now_mono);
void op_rdm_fail_all(struct op_net *on, int code);
void op_rdm_peer_failed(struct op_net *on, u32 host);
void op_rdm_peer_reset(struct op_net *on, u32 host);
void op_rdm_tx_incarnation(struct op_net *on, struct sk_buff_head *fail);
bool op_rdm_recalls_pending(struct op_net *on);
u64 op_rdm_commit(struct op_net *on);
bool op_rdm_commit_news(struct op_net *on);
void op_rdm_peer_init(struct op_net *on, struct op_peer *p);

/* rdm_rx.c: the reliable service, receiving half */
void op_rdm_rx_data(struct op_net *on, struct sk_buff *skb,
		    const struct op_hdr *h, struct sk_buff_head *ctl);
void op_rdm_rx_msg(struct op_net *on, struct sk_buff *skb,
		   const struct op_hdr *h, struct sk_buff_head *ctl);
void op_rdm_rx_recall(struct op_net *on, const struct op_hdr *h,
		      struct sk_buff_head *ctl);
void op_rdm_rx_ce(struct op_net *on, u32 host);
void op_rdm_rx_probe(struct op_net *on, const struct op_hdr *h,
		     struct sk_buff_head *ctl);
void op_rdm_deliver(struct op_net *on, struct sk_buff_head *ctl);
void op_rdm_rx_flush(struct op_net *on);
void op_rdm_rx_reset(struct op_net *on, struct op_peer *p);
void op_rdm_rx_forget(struct op_net *on);
void op_rdm_rx_tick(struct op_net *on, struct sk_buff_head *ctl);
void op_rdm_feed(struct op_net *on, struct op_sock *os,
		 struct sk_buff_head *ctl);
void op_rdm_refill(struct op_net *on, struct op_sock *os);
void op_rdm_sock_purge(struct op_net *on, struct op_sock *os);

/* rx.c */
void op_rcv(struct op_net *on, struct sk_buff *skb, bool ce);
void op_rcv_list(struct op_net *on, struct sk_buff_head *pkts, bool ce);
void op_rcv_relayed(struct op_net *on, struct sk_buff *skb);
void op_rx_observe(struct op_net *on, u64 ts);
struct sk_buff *op_rx_take(struct op_net *on, struct op_pq *q, u64 b);
void op_rx_msg(struct op_net *on, struct sk_buff *skb,
	       const struct op_hdr *h, struct sk_buff_head *ctl);
void op_rx_frag(struct op_net *on, struct sk_buff *skb,
		const struct op_hdr *h, struct sk_buff_head *ctl);
bool op_partial_drop(struct op_net *on, struct op_peer *p, u32 seq, u8 flags);
void op_rx_tick(struct op_net *on, struct sk_buff_head *ctl);
void op_rx_flush(struct op_net *on);
void op_rx_peer_reset(struct op_net *on, struct op_peer *p);

/* af_onepipe.c */
struct sock *op_port_lookup_rcu(struct op_net *on, u16 port);
void op_sock_fail(struct sock *sk, struct sk_buff *skb, int code);
void op_sock_wake_writer(struct sock *sk);
unsigned int op_sock_count(struct op_net *on);

/* transport_verbs.c */

/**
 * struct op_verbs_info - what introspection shows of one RDMA device port
 * @dev: device name
 * @port: port number
 * @state: enum ib_port_state
 * @has_gid: @gid is valid
 * @gid: the GID a host bound to the port uses
 * @qpn: the port's UD QP number
 * @qkey: its Q_Key
 * @mtu: largest 1Pipe packet the port carries
 * @bound: a host uses the port
 * @ctr: the port's counters, by enum onepipe_verbs_counter
 */
struct op_verbs_info {
	char dev[OP_VERBS_DEV_LEN];
	u32 port;
	u32 state;
	bool has_gid;
	u8 gid[16];
	u32 qpn;
	u32 qkey;
	u32 mtu;
	bool bound;
	u64 ctr[__ONEPIPE_VC_MAX];
};

#if IS_ENABLED(CONFIG_INFINIBAND)
int op_verbs_init(void);
void op_verbs_exit(void);
int op_verbs_port_info(struct net *net, unsigned long idx,
		       struct op_verbs_info *info);
int op_verbs_host_info(struct op_net *on, struct op_verbs_info *info,
		       struct op_verbs_peer *peers, unsigned int *npeers);
#else
static inline int op_verbs_init(void) { return 0; }
static inline void op_verbs_exit(void) { }
static inline int op_verbs_port_info(struct net *net, unsigned long idx,
				     struct op_verbs_info *info)
{
	return -ENOENT;
}

static inline int op_verbs_host_info(struct op_net *on,
				     struct op_verbs_info *info,
				     struct op_verbs_peer *peers,
				     unsigned int *npeers)
{
	return -ENOENT;
}
#endif

/*
 * fault_inject.c: /sys/kernel/debug/fail_onepipe fails the data path's
 * allocations (op_pkt_alloc(), peers, reassembly, recall records).
 */
#if IS_ENABLED(CONFIG_FAULT_INJECTION)
bool op_fault_alloc(void);
void op_fault_init(void);
void op_fault_exit(void);
#else
static inline bool op_fault_alloc(void) { return false; }
static inline void op_fault_init(void) { }
static inline void op_fault_exit(void) { }
#endif

/* fail.c: the controller's failure decisions applied on this host */
int op_fail_apply(struct op_net *on, u32 epoch, u32 host, u64 ts,
		  struct netlink_ext_ack *extack);
int op_fail_rejoin(struct op_net *on, u32 epoch, u32 host, bool has_first,
		   u64 *first, bool *self, struct netlink_ext_ack *extack);
void op_fail_tick(struct op_net *on);
int op_fail_ack(struct op_net *on, struct op_sock *os, u32 epoch);
void op_fail_sock_release(struct op_net *on, struct op_sock *os);

/*
 * Is a reliable message from @src stamped @ts one that a failure decision
 * discards?  rx_lock held.
 */
static inline bool op_fail_discards(struct op_net *on, u32 src, u64 ts)
{
	struct op_peer *p;

	if (likely(!on->nfailed))
		return false;
	p = xa_load(&on->peers, src);
	if (!p || !(p->failed || p->rejoined) || op_ts_before(ts, p->fail_ts))
		return false;
	return p->failed || op_ts_before(ts, p->fail_end);
}

/*
 * Must reliable DATA from @p stamped @ts be ignored on arrival, with no
 * answer?  What a failed peer stamped from its failure timestamp on
 * (what it stamped before was committed: a copy still gets its ACK, or
 * its sender would hold the commit barrier), and what a rejoined peer's
 * old incarnation stamped (its sequence numbers are the old ones).
 * rx_lock held.
 */
static inline bool op_fail_ignores(const struct op_net *on,
				   const struct op_peer *p, u64 ts)
{
	if (likely(!on->nfailed))
		return false;
	if (p->failed)
		return !op_ts_before(ts, p->fail_ts);
	return p->rejoined && op_ts_before(ts, p->fail_end);
}

/*
 * The same for a PROBE or a RECALL: a failed peer's are ignored whatever
 * their stamp (nothing it recalls was committed, and a window answer
 * from our old state would mislead its new incarnation).
 */
static inline bool op_fail_ignores_ctl(const struct op_net *on,
				       const struct op_peer *p, u64 ts)
{
	return unlikely(on->nfailed) &&
	       (p->failed || op_fail_ignores(on, p, ts));
}

/* Must delivery of @ts to @os wait for the application?  rx_lock held. */
static inline bool op_sock_holds(const struct op_sock *os, u64 ts)
{
	return unlikely(os->held) && !op_ts_before(ts, os->hold_ts);
}

/* netlink.c */
int op_netlink_init(void);
void op_netlink_exit(void);
void op_nl_ev_link(struct op_net *on, bool up, bool has_commit, u64 commit);
void op_nl_ev_unreach(struct op_net *on, u32 host);
void op_nl_ev_fail_done(struct op_net *on, u32 epoch, u32 host);
void op_nl_ev_relay(struct op_net *on, const struct sk_buff *pkt);

/* relay.c */
void op_relay_init(struct op_net *on);
void op_relay_exit(struct op_net *on);
void op_relay_forget(struct op_net *on, u32 host);
void op_relay_out(struct op_net *on, const void *pkt, unsigned int len);
void op_relay_hdr(struct op_net *on, const struct op_hdr *h);
int op_relay_in(struct op_net *on, const void *pkt, unsigned int len,
		struct netlink_ext_ack *extack);

#endif /* _ONEPIPE_H */
