// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of netns_isolation.sh: the socket calls and packets that suite
 * needs, run in whatever network namespace it is started in.
 *
 *   listen PORT SECONDS [rdm]   bind (this host, PORT), print "bound",
 *                               then one "R TEXT" line per message
 *                               received, until SECONDS have passed
 *   send HOST PORT TEXT         send one best-effort message, print "ok"
 *   bind HOST PORT              bind to (HOST, PORT), print "ok"
 *   uplink ADDR PORT SECONDS    stand in for an uplink switch: a UDP
 *                               socket on ADDR:PORT printing "bound",
 *                               then "D DST_HOST DST_PORT TEXT" for every
 *                               1Pipe DATA packet it receives
 *   forge SADDR SPORT DADDR DPORT HOST OPPORT TEXT COUNT
 *                               COUNT well-formed 1Pipe DATA packets for
 *                               (HOST, OPPORT) carrying TEXT, in UDP
 *                               datagrams from SADDR:SPORT (any source
 *                               address: a raw socket writes the IPv4
 *                               header) to DADDR:DPORT; print "sent N"
 *
 * A call that fails prints "error NAME" (the errno's name) and exits 1;
 * usage errors exit 2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/onepipe.h>

/* The wire format of kernel/core/wire.h, kept apart from the kernel's. */
#define HDR_LEN		52
#define PKT_DATA	1
#define F_UNORDERED	0x01
#define F_NOBARRIER	0x02
#define F_NOCOMMIT	0x08
/* Forged packets claim to come from a host that does not exist. */
#define FORGED_SRC_HOST	99
#define MAX_TEXT	200

static int fail(const char *what)
{
	const char *name = strerrorname_np(errno);

	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	printf("error %s\n", name ? name : "?");
	return 1;
}

static int print_usage(void)
{
	fputs("usage: netns_isolation_helper listen PORT SECONDS [rdm] |\n"
	      "       send HOST PORT TEXT | bind HOST PORT |\n"
	      "       uplink ADDR PORT SECONDS |\n"
	      "       forge SADDR SPORT DADDR DPORT HOST OPPORT TEXT COUNT\n",
	      stderr);
	return 2;
}

static int num(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return errno || !*s || *end || *v > max ? -1 : 0;
}

static void op_addr(struct sockaddr_onepipe *a, unsigned long host,
		    unsigned long port)
{
	memset(a, 0, sizeof(*a));
	a->sop_family = AF_ONEPIPE;
	a->sop_host = host;
	a->sop_port = port;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Prints a payload as one word: anything but graphic ASCII becomes '.'. */
static void print_text(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < MAX_TEXT; i++)
		putchar(p[i] > ' ' && p[i] < 0x7f ? p[i] : '.');
}

/*
 * Waits for datagrams on @fd until @secs have passed; @show prints one.
 * A socket error (an ICMP error on the uplink's UDP socket, say) is no
 * reason to stop.
 */
static int recv_loop(int fd, double secs,
		     void (*show)(const unsigned char *, ssize_t))
{
	double end = now() + secs;
	unsigned char buf[70000];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		double left = end - now();

		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			return fail("poll");
		}
		if (!(pfd.revents & POLLIN))
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n >= 0)
			show(buf, n);
	}
}

static void show_msg(const unsigned char *p, ssize_t n)
{
	fputs("R ", stdout);
	print_text(p, n);
	putchar('\n');
	fflush(stdout);
}

static int cmd_listen(int argc, char **argv)
{
	int type = SOCK_DGRAM, fd;
	struct sockaddr_onepipe a;
	unsigned long port, secs;

	if (argc < 2 || argc > 3 || num(argv[0], 65535, &port) ||
	    num(argv[1], 3600, &secs))
		return print_usage();
	if (argc == 3) {
		if (strcmp(argv[2], "rdm"))
			return print_usage();
		type = SOCK_RDM;
	}
	fd = socket(AF_ONEPIPE, type, 0);
	if (fd < 0)
		return fail("socket");
	op_addr(&a, ONEPIPE_HOST_LOCAL, port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		return fail("bind");
	printf("bound %lu\n", port);
	fflush(stdout);
	return recv_loop(fd, secs, show_msg);
}

static int cmd_send(int argc, char **argv)
{
	unsigned long host, port;
	struct sockaddr_onepipe a;
	int fd;

	if (argc != 3 || num(argv[0], UINT32_MAX, &host) ||
	    num(argv[1], 65535, &port))
		return print_usage();
	fd = socket(AF_ONEPIPE, SOCK_DGRAM, 0);
	if (fd < 0)
		return fail("socket");
	op_addr(&a, host, port);
	if (sendto(fd, argv[2], strlen(argv[2]), 0, (struct sockaddr *)&a,
		   sizeof(a)) < 0)
		return fail("sendto");
	puts("ok");
	return 0;
}

static int cmd_bind(int argc, char **argv)
{
	unsigned long host, port;
	struct sockaddr_onepipe a;
	int fd;

	if (argc != 2 || num(argv[0], UINT32_MAX, &host) ||
	    num(argv[1], 65535, &port))
		return print_usage();
	fd = socket(AF_ONEPIPE, SOCK_DGRAM, 0);
	if (fd < 0)
		return fail("socket");
	op_addr(&a, host, port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		return fail("bind");
	puts("ok");
	return 0;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void show_data(const unsigned char *p, ssize_t n)
{
	/* Beacons and anything else are of no interest here. */
	if (n < HDR_LEN || p[0] != 1 || p[1] != PKT_DATA)
		return;
	printf("D %u %u ", get32(p + 8), get32(p + 12) & 0xffff);
	print_text(p + HDR_LEN, n - HDR_LEN);
	putchar('\n');
	fflush(stdout);
}

static int cmd_uplink(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned long port, secs;
	int fd;

	if (argc != 3 || inet_pton(AF_INET, argv[0], &sin.sin_addr) != 1 ||
	    num(argv[1], 65535, &port) || num(argv[2], 3600, &secs))
		return print_usage();
	sin.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return fail("socket");
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		return fail("bind");
	puts("bound");
	fflush(stdout);
	return recv_loop(fd, secs, show_data);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* The Internet checksum of @n bytes, continuing @sum. */
static uint32_t csum_add(uint32_t sum, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/*
 * One best-effort DATA packet, unordered (delivered on arrival: it needs
 * no barrier from the uplink) and with no barriers of its own (it must
 * not move the receiver's).
 */
static size_t build_data(unsigned char *p, uint32_t dst_host,
			 uint16_t dst_port, uint32_t seq, const char *text)
{
	size_t len = strlen(text);

	memset(p, 0, HDR_LEN);
	p[0] = 1;
	p[1] = PKT_DATA;
	p[2] = F_UNORDERED | F_NOBARRIER | F_NOCOMMIT;
	put32(p + 4, FORGED_SRC_HOST);
	put32(p + 8, dst_host);
	put16(p + 12, 1);
	put16(p + 14, dst_port);
	p[23] = 1;			/* ts 1 */
	put32(p + 40, seq);
	put32(p + 44, len);
	put16(p + 50, 1);		/* fragment 0 of 1 */
	memcpy(p + HDR_LEN, text, len);
	return HDR_LEN + len;
}

static int cmd_forge(int argc, char **argv)
{
	unsigned long sport, dport, host, opport, count, i;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	unsigned char pkt[sizeof(struct iphdr) + sizeof(struct udphdr) +
			  HDR_LEN + MAX_TEXT];
	struct iphdr *ip = (struct iphdr *)pkt;
	unsigned char *udp = pkt + sizeof(*ip);
	unsigned char pseudo[12];
	struct in_addr src;
	size_t plen, ulen;
	uint32_t sum, seq;
	int fd;

	if (argc != 8 || inet_pton(AF_INET, argv[0], &src) != 1 ||
	    num(argv[1], 65535, &sport) ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1 ||
	    num(argv[3], 65535, &dport) || num(argv[4], UINT32_MAX, &host) ||
	    num(argv[5], 65535, &opport) || strlen(argv[6]) > MAX_TEXT ||
	    num(argv[7], 1000, &count))
		return print_usage();
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0)
		return fail("socket(SOCK_RAW)");
	/* Sequence numbers no real sender used, different every run. */
	seq = (uint32_t)time(NULL) * 1000;
	for (i = 0; i < count; i++) {
		plen = build_data(udp + 8, host, opport, seq + i, argv[6]);
		ulen = 8 + plen;
		put16(udp, sport);
		put16(udp + 2, dport);
		put16(udp + 4, ulen);
		put16(udp + 6, 0);
		memcpy(pseudo, &src, 4);
		memcpy(pseudo + 4, &dst.sin_addr, 4);
		pseudo[8] = 0;
		pseudo[9] = IPPROTO_UDP;
		put16(pseudo + 10, ulen);
		sum = csum_fold(csum_add(csum_add(0, pseudo, 12), udp, ulen));
		put16(udp + 6, sum ? sum : 0xffff);

		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(sizeof(*ip) + ulen);
		ip->saddr = src.s_addr;
		ip->daddr = dst.sin_addr.s_addr;
		/* The kernel fills in the IP id and header checksum. */
		if (sendto(fd, pkt, sizeof(*ip) + ulen, 0,
			   (struct sockaddr *)&dst, sizeof(dst)) < 0)
			return fail("sendto");
	}
	printf("sent %lu\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return print_usage();
	if (!strcmp(argv[1], "listen"))
		return cmd_listen(argc - 2, argv + 2);
	if (!strcmp(argv[1], "send"))
		return cmd_send(argc - 2, argv + 2);
	if (!strcmp(argv[1], "bind"))
		return cmd_bind(argc - 2, argv + 2);
	if (!strcmp(argv[1], "uplink"))
		return cmd_uplink(argc - 2, argv + 2);
	if (!strcmp(argv[1], "forge"))
		return cmd_forge(argc - 2, argv + 2);
	return print_usage();
}
