/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The onepipe-switch daemon: what its common part (switch.c: options,
 * event loop, beacon timer, stats file, transmit accounting) shares with
 * its two I/O backends, UDP datagrams (swd_udp.c) and RoCEv2 frames on
 * network interfaces (swd_roce.c).  The switching itself is
 * switch_logic.c's, the same for both.
 */
#ifndef ONEPIPE_SWD_H
#define ONEPIPE_SWD_H

#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "switch_logic.h"

#define SWD_BATCH	64		/* datagrams or frames per recvmmsg() */
#define SWD_BUF		65536		/* largest datagram or frame taken */
#define SWD_RX_ROUNDS	8		/* batches before timers get a turn */
/*
 * The transmit queue: what one receive batch forwards, then beacons.  A
 * bare datagram forwards one packet, but a bundle (UDP) up to
 * OP_BUNDLE_MAX_PKTS.  Room for four packets a datagram on average and a
 * beacon per port; a batch that forwards more is sent in several rounds
 * (swd_tx_queue()), each a sendmmsg() more and ending the bundles being
 * filled.
 */
#define SWD_TXMAX	(4 * SWD_BATCH + SW_MAX_PORTS)
/*
 * --bundle-bytes: a bundle must fit the path MTU (1500-byte Ethernet less
 * the IPv4 and UDP headers, with a margin for tunnels); the most is the
 * largest UDP payload over IPv4.
 */
#define SWD_BUNDLE_DEFAULT	1400
#define SWD_BUNDLE_MIN		64
#define SWD_BUNDLE_MAX		65507
#define SWD_SOCKBUF	(4 << 20)

/* epoll tags; a backend's own start at SWD_EV_BACKEND */
enum { SWD_EV_TICK, SWD_EV_PUSH, SWD_EV_STATS, SWD_EV_SIG,
       SWD_EV_CTL, SWD_EV_CTL_RETRY, SWD_EV_BACKEND = 16 };

/**
 * struct swd_tx - a packet queued for sending
 * @buf: its bytes (a receive buffer or a beacon buffer)
 * @len: their number
 * @port: output port
 * @beacon: a beacon of ours, not a forward
 * @ce: it arrived Congestion Experienced and must leave so
 */
struct swd_tx {
	void *buf;
	size_t len;
	unsigned int port;
	bool beacon;
	bool ce;
};

/**
 * struct swd_backend - an I/O backend
 * @init: backend-wide options (UDP: the --listen address, NULL if none)
 * @add_port: parse one --port and add it with sw_add_port()
 * @open: open the sockets and swd_epoll_add() them, tags from
 *	SWD_EV_BACKEND on
 * @rx: one of its tags is readable (tag - SWD_EV_BACKEND)
 * @beacon: build beacon @b and swd_tx_queue() it
 * @flush: send the queue (swd.tx), swd_tx_send() accounts each packet
 * @put_head: stats: top-level fields after "pid", each followed by ','
 * @put_peer: stats: a port's "peer" string, unquoted
 * @put_port_tail: stats: extra port fields, each preceded by ','
 * @put_tail: stats: extra top-level fields, each preceded by ','
 * @describe: the startup log line, after "onepipe-switch NAME: "
 */
struct swd_backend {
	int (*init)(const char *listen);
	int (*add_port)(const char *spec);
	int (*open)(void);
	void (*rx)(unsigned int tag);
	void (*beacon)(const struct sw_beacon *b);
	void (*flush)(void);
	void (*put_head)(FILE *f);
	void (*put_peer)(FILE *f, unsigned int port);
	void (*put_port_tail)(FILE *f, unsigned int port);
	void (*put_tail)(FILE *f);
	void (*describe)(FILE *f);
};

/**
 * struct swd_ctl - the failure controller's client (swd_ctl.c)
 * @path: --controller, NULL without one (then nothing below is used)
 * @node: --node, this switch's name in the controller's topology
 * @fd: the connection, -1 while there is none
 * @retry_fd: 200 ms timer: redial, resend what could not be sent
 * @dirty: ports whose link state the controller may not have heard
 * @resumed: per port, the epoch of the last RESUME carried out (0: none)
 * @owed: per port, the epoch of a DONE not yet sent (0: none)
 * @reports: per port, LINK_DOWN and LINK_UP sent
 * @connects: connections made
 * @sent_reports: LINK_DOWN and LINK_UP sent, all ports
 * @resumes: RESUMEs carried out (repeats not counted)
 * @dones: DONEs sent
 * @bad: malformed or unexpected messages from the controller, RESUMEs
 *	for no port of ours
 */
struct swd_ctl {
	const char *path;
	const char *node;
	int fd;
	int retry_fd;
	u64 dirty;
	u32 resumed[SW_MAX_PORTS];
	u32 owed[SW_MAX_PORTS];
	u64 reports[SW_MAX_PORTS];
	u64 connects;
	u64 sent_reports;
	u64 resumes;
	u64 dones;
	u64 bad;
};

/*
 * The daemon, whatever the backend: the switch, the timers, the transmit
 * queue and what both backends count that switch_logic cannot know.
 */
struct swd {
	struct sw sw;
	const struct swd_backend *be;
	const char *name;
	const char *stats;
	u64 interval;			/* beacon interval, ns */
	u64 timeout_intervals;
	size_t bundle_bytes;		/* UDP: largest bundle sent, 0: none */
	int cpu;			/* pinned to it, or -1 */
	int tick_fd;
	int push_fd;			/* CLOCK_MONOTONIC: next push due */
	u64 push_armed;			/* when push_fd fires, 0 if disarmed */
	int stats_fd;
	int sig_fd;
	int ep;
	bool running;
	bool rx_err_logged;
	/* transmit queue, flushed after each receive batch and tick */
	struct swd_tx tx[SWD_TXMAX];
	unsigned int ntx;
	/* ECN counters per port, kept here: switch_logic knows no IP */
	u64 rx_ce[SW_MAX_PORTS];	/* received marked CE */
	u64 ce_fwd[SW_MAX_PORTS];	/* sent on with their CE mark */
	struct swd_ctl ctl;
};

extern struct swd swd;
extern u8 swd_rxbuf[SWD_BATCH][SWD_BUF];
extern const struct swd_backend swd_udp;
extern const struct swd_backend swd_roce;

u64 swd_clock_ns(clockid_t id);
int swd_parse_u64(const char *s, u64 min, u64 max, u64 *v);
int swd_epoll_add(int fd, unsigned int tag);
void swd_setbufs(int fd);
void swd_rx_error(const char *what);
void swd_tx_queue(unsigned int port, void *buf, size_t len, bool beacon,
		  bool ce);
void swd_tx_send(int fd, struct mmsghdr *m, const unsigned int *idx,
		 const unsigned int *cnt, unsigned int n);
void swd_flush(void);

int swd_ctl_set(const char *path, const char *node);
int swd_ctl_open(void);
void swd_ctl_event(unsigned int tag);
void swd_ctl_tick(void);
void swd_ctl_put_tail(FILE *f);

#endif /* ONEPIPE_SWD_H */
