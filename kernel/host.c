// SPDX-License-Identifier: GPL-2.0
/*
 * A 1Pipe host is a network namespace: its configuration, sysctls, peers
 * and the tick that sends beacons, flushes ACKs and times messages out.
 */
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <net/netns/generic.h>

#include "onepipe.h"

unsigned int op_net_id __read_mostly;

/*
 * 100 us: an idle link costs 10k 52-byte beacons a second (~5 Mbit/s,
 * under 0.1% of a 10G link), and ordering adds about half an interval to
 * delivery latency when traffic is sparse (switches push advances on at
 * once, so not one more per tier).  Shorter intervals buy
 * latency with CPU: each host and switch port handles one beacon per
 * interval.
 */
#define OP_DEFAULT_BEACON_US	100
#define OP_DEFAULT_LINK_TIMEOUT	10
#define OP_DEFAULT_ACK_MS	100
/*
 * Reliable service: 256 messages in flight per sender and receiver keep a
 * 10G path busy with 4 KB messages at a 1 ms round trip; the first resend
 * after 20 ms at the earliest (or the measured RTO), and 8 resends with
 * backoff (about 5 s in all) before a receiver is declared unreachable.
 */
#define OP_DEFAULT_RDM_WINDOW	256
/*
 * Best effort: 64 messages in flight per destination, unACKed.  A
 * message's ACK leaves once it is delivered, after the barrier (at the
 * latest with the next tick), so one pair's throughput is the window
 * over the delivery delay, which at saturation is what the windows
 * themselves queue: a 4-host all-to-all broadcast in the wall-clock test
 * guest delivered about 31k messages/s at 32, 36k at 64 and 37k at 128,
 * at a saturated p50 of 8, 12 and 13 ms (tools/bench/README.md).  What
 * is in flight must still cross the fabric within its deadline
 * (core/deadline.h): with every host sending to every other, a fabric
 * delivering R messages per second holds up to hosts * hosts * be_window
 * of them, R / 10 at the default 100 ms for 4 hosts at about 10,000/s;
 * beyond that, deadlines stretch with the measured delay.
 */
#define OP_DEFAULT_BE_WINDOW	64
/*
 * Best effort: the measured delay may stretch a message's deadline past
 * ack_timeout_ms up to 2 s, the reliable service's longest timeout.
 * That is also how late a sender may learn of a failure (twice this,
 * when the receiver does not answer: op_tx_expire()).
 */
#define OP_DEFAULT_BE_DEADLINE_MAX_MS	2000
#define OP_DEFAULT_RDM_RTO_MS	20
#define OP_DEFAULT_RDM_RETRIES	8
/*
 * An application that does not acknowledge a process-failure notification
 * holds delivery on its socket this long: long enough for a callback to
 * run, short enough that one that ignores them only sees a hiccup.
 */
#define OP_DEFAULT_FAIL_HOLD_MS	500

static int op_beacon_min = 10, op_beacon_max = 1000000;
static int op_timeout_min = 2, op_timeout_max = 1000;
static int op_ack_min = 1, op_ack_max = 600000;
static int op_skew_min = -2000000000, op_skew_max = 2000000000;
static int op_window_min = 1, op_window_max = OP_RDM_WINDOW_MAX;
static int op_rto_min = 1, op_rto_max = 10000;
static int op_be_window_max = OP_BE_WINDOW_MAX;
static int op_retries_min, op_retries_max = 30;
static int op_hold_max = 600000;

static struct ctl_table op_sysctl_template[] = {
	{
		.procname	= "beacon_interval_us",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_beacon_min,
		.extra2		= &op_beacon_max,
	},
	{
		.procname	= "link_timeout_intervals",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_timeout_min,
		.extra2		= &op_timeout_max,
	},
	{
		.procname	= "ack_timeout_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_ack_min,
		.extra2		= &op_ack_max,
	},
	{
		/* Test only: skews this host's clock to simulate bad sync. */
		.procname	= "clock_offset_ns",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_skew_min,
		.extra2		= &op_skew_max,
	},
	{
		.procname	= "rdm_window",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_window_min,
		.extra2		= &op_window_max,
	},
	{
		.procname	= "rdm_rto_min_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_rto_min,
		.extra2		= &op_rto_max,
	},
	{
		.procname	= "rdm_retries",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_retries_min,
		.extra2		= &op_retries_max,
	},
	{
		.procname	= "controlled",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "failure_hold_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &op_hold_max,
	},
	{
		.procname	= "be_window",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &op_be_window_max,
	},
	{
		.procname	= "be_deadline_max_ms",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &op_ack_min,
		.extra2		= &op_ack_max,
	},
	{
		.procname	= "bundle",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{ }
};

int op_net_sysctl_register(struct op_net *on)
{
	struct ctl_table *t;

	t = kmemdup(op_sysctl_template, sizeof(op_sysctl_template),
		    GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t[0].data = &on->beacon_interval_us;
	t[1].data = &on->link_timeout_intervals;
	t[2].data = &on->ack_timeout_ms;
	t[3].data = &on->clock_offset_ns;
	t[4].data = &on->rdm_window;
	t[5].data = &on->rdm_rto_min_ms;
	t[6].data = &on->rdm_retries;
	t[7].data = &on->controlled;
	t[8].data = &on->failure_hold_ms;
	t[9].data = &on->be_window;
	t[10].data = &on->be_deadline_max_ms;
	t[11].data = &on->bundle;
	on->sysctl_hdr = register_net_sysctl(on->net, "net/onepipe", t);
	if (!on->sysctl_hdr) {
		kfree(t);
		return -ENOMEM;
	}
	return 0;
}

void op_net_sysctl_unregister(struct op_net *on)
{
	struct ctl_table *t = on->sysctl_hdr->ctl_table_arg;

	unregister_net_sysctl_table(on->sysctl_hdr);
	kfree(t);
}

u64 op_counter_sum(struct op_net *on, int c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(on->ctr, cpu)->c[c];
	return sum;
}

/* Peers -------------------------------------------------------------------- */

/**
 * op_peer_get() - find or create the state kept about host @host
 * @on: this host
 * @host: the peer's id
 * @gfp: allocation flags for creating it
 *
 * Peers are never freed before the namespace's 1Pipe state, so the
 * pointer stays valid without a reference.
 *
 * Return: the peer, or NULL if it could not be created.
 */
struct op_peer *op_peer_get(struct op_net *on, u32 host, gfp_t gfp)
{
	struct op_peer *p, *old;

	p = xa_load(&on->peers, host);
	if (likely(p))
		return p;
	if (atomic_inc_return(&on->npeers) > OP_MAX_PEERS)
		goto out_full;
	p = op_fault_alloc() ? NULL : kzalloc(sizeof(*p), gfp);
	if (!p)
		goto out_full;
	p->host = host;
	/*
	 * Best-effort numbers start anywhere: those of a new incarnation of
	 * this host do not land on what a receiver recorded of the old one
	 * (core/seqrec.h).
	 */
	p->tx_seq = get_random_u32();
	op_deadline_init(&p->be_dl);
	op_seqrec_init(&p->berec);
	skb_queue_head_init(&p->outstanding);
	INIT_LIST_HEAD(&p->ack_node);
	INIT_LIST_HEAD(&p->partial);
	op_rdm_peer_init(on, p);
	old = xa_cmpxchg_bh(&on->peers, host, NULL, p, gfp);
	if (!old)
		return p;
	kfree(p);
	atomic_dec(&on->npeers);
	return xa_is_err(old) ? NULL : old;

out_full:
	atomic_dec(&on->npeers);
	return NULL;
}

static void op_peers_free(struct op_net *on)
{
	struct op_peer *p;
	unsigned long host;

	xa_for_each(&on->peers, host, p) {
		WARN_ON_ONCE(!skb_queue_empty(&p->outstanding));
		WARN_ON_ONCE(!list_empty(&p->partial));
		WARN_ON_ONCE(!skb_queue_empty(&p->rtx.out));
		kfree(p);
	}
	xa_destroy(&on->peers);
}

/* The tick ----------------------------------------------------------------- */

/*
 * Runs in softirq at every multiple of the beacon interval on the wall
 * clock, the same instants on every host and switch, so that a switch
 * gets the beacons of its idle inputs together.
 */
static enum hrtimer_restart op_tick_fn(struct hrtimer *t)
{
	struct op_net *on = container_of(t, struct op_net, tick);
	u64 iv = op_interval_ns(on), now = ktime_get_ns();
	u64 tick = ktime_to_ns(hrtimer_get_expires(t)) +
		   READ_ONCE(on->clock_offset_ns);
	struct sk_buff_head ctl;

	__skb_queue_head_init(&ctl);
	op_tx_tick(on, tick);
	op_rx_tick(on, &ctl);
	op_tx_ctl_at(on, &ctl, tick);
	op_tx_expire(on, now);
	op_rdm_tx_tick(on, now);
	op_fail_tick(on);

	now = ktime_get_real_ns();
	hrtimer_set_expires(t, ns_to_ktime((div64_u64(now, iv) + 1) * iv));
	return HRTIMER_RESTART;
}

void op_tick_start(struct op_net *on)
{
	u64 iv = op_interval_ns(on), now = ktime_get_real_ns();

	hrtimer_start(&on->tick, ns_to_ktime((div64_u64(now, iv) + 1) * iv),
		      HRTIMER_MODE_ABS_SOFT);
}

/* Configuration ------------------------------------------------------------ */

static const struct op_transport_ops *op_transport_find(u32 kind)
{
	switch (kind) {
	case ONEPIPE_TRANSPORT_UDP:
		return &op_udp_transport;
#if IS_ENABLED(CONFIG_INFINIBAND)
	case ONEPIPE_TRANSPORT_VERBS:
		return &op_verbs_transport;
#endif
	default:
		return NULL;
	}
}

static void op_host_down_locked(struct op_net *on)
{
	const struct op_transport_ops *tops;

	lockdep_assert_held(&on->cfg_mutex);
	if (!on->up)
		return;
	hrtimer_cancel(&on->tick);

	spin_lock_bh(&on->tx_lock);
	WRITE_ONCE(on->up, false);
	tops = on->tops;
	spin_unlock_bh(&on->tx_lock);
	/* Nobody starts it once the host is down. */
	hrtimer_cancel(&on->push_timer);

	/* After this no packet is received, and none can be sent. */
	tops->down(on);
	op_tx_fail_all(on, ONEPIPE_EE_DOWN);
	op_rx_flush(on);
	op_relay_forget(on, ONEPIPE_HOST_LOCAL);
}

void op_host_down(struct op_net *on)
{
	mutex_lock(&on->cfg_mutex);
	op_host_down_locked(on);
	mutex_unlock(&on->cfg_mutex);
}

/**
 * op_host_lost() - a transport lost what a host was using
 * @on: the host
 * @tpriv: the transport state the host must still be using
 *
 * Takes the host down, as op_host_down() does, if it still runs on
 * @tpriv: the verbs transport calls this when an RDMA device goes away.
 * Context: process.
 */
void op_host_lost(struct op_net *on, const void *tpriv)
{
	mutex_lock(&on->cfg_mutex);
	if (on->up && on->tpriv == tpriv) {
		pr_info("onepipe: host %u lost its %s device, now down\n",
			on->cfg.host_id, on->tops->name);
		op_host_down_locked(on);
	}
	mutex_unlock(&on->cfg_mutex);
}

/**
 * op_host_set() - (re)configure this host and bring its transport up
 * @on: the host
 * @cfg: the new configuration
 *
 * Context: process.  A running host is taken down first: its pending
 * messages fail with ONEPIPE_EE_DOWN.  If the transport cannot come up
 * the host stays down with no configuration.
 *
 * Return: 0 or a negative errno from validation or the transport.
 */
int op_host_set(struct op_net *on, const struct op_host_cfg *cfg)
{
	const struct op_transport_ops *tops;
	int err;

	if (!cfg->host_id || cfg->host_id == U32_MAX)
		return -EINVAL;
	tops = op_transport_find(cfg->transport);
	if (!tops)
		return -EOPNOTSUPP;

	mutex_lock(&on->cfg_mutex);
	op_host_down_locked(on);
	/* Before up: packets may arrive as soon as the transport is up. */
	WRITE_ONCE(on->beacon_barriers, tops->beacon_barriers);
	err = tops->up(on, cfg);
	if (err) {
		/* Down and unconfigured, rather than half of each. */
		memset(&on->cfg, 0, sizeof(on->cfg));
		goto out;
	}

	spin_lock_bh(&on->tx_lock);
	on->cfg = *cfg;
	on->cfg.vpeers = NULL;
	on->cfg.nvpeers = 0;
	on->tops = tops;
	on->tx_stale = false;
	memset(&on->push, 0, sizeof(on->push));
	WRITE_ONCE(on->up, true);
	spin_unlock_bh(&on->tx_lock);
	op_tick_start(on);
out:
	mutex_unlock(&on->cfg_mutex);
	return err;
}

/* Namespace lifetime ------------------------------------------------------ */

static int __net_init op_net_init(struct net *net)
{
	struct op_net *on = op_net(net);
	int err;

	on->net = net;
	mutex_init(&on->cfg_mutex);
	spin_lock_init(&on->tx_lock);
	spin_lock_init(&on->rx_lock);
	spin_lock_init(&on->port_lock);
	hash_init(on->ports);
	/* Peers are also created in softirq: see struct op_net. */
	xa_init_flags(&on->peers, XA_FLAGS_LOCK_BH);
	op_pq_init(&on->pq);
	op_pq_init(&on->rdm_pq);
	on->agg.members = 1;	/* the uplink is link 0 */
	on->cagg.members = 1;
	INIT_LIST_HEAD(&on->ack_pending);
	INIT_LIST_HEAD(&on->recalls);
	INIT_LIST_HEAD(&on->rdm_ack_pending);
	INIT_LIST_HEAD(&on->waitq);
	INIT_LIST_HEAD(&on->rdm_active);
	op_relay_init(on);
	hrtimer_init(&on->tick, CLOCK_REALTIME, HRTIMER_MODE_ABS_SOFT);
	on->tick.function = op_tick_fn;
	hrtimer_init(&on->push_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	on->push_timer.function = op_tx_push_fn;
	on->beacon_interval_us = OP_DEFAULT_BEACON_US;
	on->link_timeout_intervals = OP_DEFAULT_LINK_TIMEOUT;
	on->ack_timeout_ms = OP_DEFAULT_ACK_MS;
	on->rdm_window = OP_DEFAULT_RDM_WINDOW;
	on->be_window = OP_DEFAULT_BE_WINDOW;
	on->be_deadline_max_ms = OP_DEFAULT_BE_DEADLINE_MAX_MS;
	on->born_ts = op_ts(op_now(on));
	on->rdm_rto_min_ms = OP_DEFAULT_RDM_RTO_MS;
	on->rdm_retries = OP_DEFAULT_RDM_RETRIES;
	on->failure_hold_ms = OP_DEFAULT_FAIL_HOLD_MS;
	on->bundle = 1;

	on->ctr = alloc_percpu(struct op_counters);
	if (!on->ctr)
		return -ENOMEM;
	err = op_net_sysctl_register(on);
	if (err)
		free_percpu(on->ctr);
	return err;
}

static void __net_exit op_net_exit(struct net *net)
{
	struct op_net *on = op_net(net);

	op_host_down(on);
	op_relay_exit(on);
	op_peers_free(on);
	op_net_sysctl_unregister(on);
	free_percpu(on->ctr);
}

struct pernet_operations op_net_ops = {
	.init	= op_net_init,
	.exit	= op_net_exit,
	.id	= &op_net_id,
	.size	= sizeof(struct op_net),
};
