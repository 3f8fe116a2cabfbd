// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by op-traffic and tools/bench/op-cpg (see tool.h): one
 * copy, so that the two programs keep failing, parsing and logging alike.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool.h"

const char *tool_name = "?";

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see %s --help)\n", tool_name);
	exit(2);
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		die("out of memory");
	return p;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC + ts.tv_nsec;
}

/* Timestamps in logs and payloads: comparable across processes. */
uint64_t now_rt(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Timers: immune to clock steps. */
uint64_t now_mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* strtoull() takes a sign and wraps it: a number here has none. */
bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* The value of option @name, at most @max; else a usage error. */
uint64_t num_arg(const char *name, const char *s, uint64_t max)
{
	uint64_t v;

	if (!parse_u64(s, &v) || v > max)
		usage_error("bad %s '%s'", name, s);
	return v;
}

/*
 * "H:P": the host part into @host (@n bytes) and the port; the last colon
 * splits, and how H reads is the caller's.
 */
bool split_host_port(const char *s, char *host, size_t n, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	uint64_t p;

	if (!colon || colon == s || (size_t)(colon - s) >= n)
		return false;
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	if (!parse_u64(colon + 1, &p) || p > 65535)
		return false;
	*port = p;
	return true;
}

/* Decimal digits of @v at the end of @end's buffer; returns the first. */
static char *u64_digits(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/*
 * "H:P" as the logs write it, H an IPv4 address if @dotted, else an id,
 * into @b of @n bytes, NUL-terminated (cut if it does not fit).
 *
 * Return: the length written, without the NUL.
 */
size_t host_port_put(char *b, size_t n, uint32_t host, uint16_t port,
		     bool dotted)
{
	char t[INET_ADDRSTRLEN + 8], *e = t + sizeof(t), *p;
	size_t len;

	p = u64_digits(port, e);
	*--p = ':';
	if (dotted) {
		struct in_addr a = { .s_addr = htonl(host) };
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		len = strlen(ip);
		p -= len;
		memcpy(p, ip, len);
	} else {
		p = u64_digits(host, p);
	}
	len = (size_t)(e - p);
	if (!n)
		return 0;
	if (len >= n)
		len = n - 1;
	memcpy(b, p, len);
	b[len] = 0;
	return len;
}

/* host_port_put() into @b, returning @b. */
const char *host_port_str(uint32_t host, uint16_t port, bool dotted, char *b,
			  size_t n)
{
	host_port_put(b, n, host, port, dotted);
	return b;
}

/*
 * --start-file: whoever starts the processes writes the common start time
 * there once all of them are up (their logs have a P line).  True once
 * the start time is known: no file, or it holds one, which goes to
 * *@start_at_ns; *@path is then cleared so that it is read only once.
 */
bool start_time_known(const char **path, uint64_t *start_at_ns)
{
	unsigned long long v;
	FILE *f;
	int n;

	if (!*path)
		return true;
	f = fopen(*path, "r");
	if (!f)
		return false;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return false;	/* not written completely yet */
	*start_at_ns = v;
	*path = NULL;
	return true;
}

/* The event log, fully buffered: a line per message must stay cheap. */
FILE *log_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("%s: %s", path, strerror(errno));
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* Begin a line with its event letter. */
void line_start(struct log_line *l, char tag)
{
	l->b[0] = tag;
	l->n = 1;
}

/* Append " @s". */
void line_str(struct log_line *l, const char *s)
{
	size_t len = strlen(s), room = sizeof(l->b) - 1 - l->n;

	if (!room)
		return;
	l->b[l->n++] = ' ';
	room--;
	if (len > room)
		len = room;
	memcpy(l->b + l->n, s, len);
	l->n += len;
}

/* Append " " and the digits [@p, @e), or nothing if they do not fit. */
static void line_digits(struct log_line *l, const char *p, const char *e)
{
	size_t len = (size_t)(e - p);

	if (l->n + 1 + len > sizeof(l->b) - 1)
		return;
	l->b[l->n++] = ' ';
	memcpy(l->b + l->n, p, len);
	l->n += len;
}

/* Append " @v" in decimal. */
void line_u64(struct log_line *l, uint64_t v)
{
	char t[24], *e = t + sizeof(t);

	line_digits(l, u64_digits(v, e), e);
}

/* Append " @v" in decimal, with its sign. */
void line_i64(struct log_line *l, int64_t v)
{
	char t[24], *e = t + sizeof(t), *p;

	p = u64_digits(v < 0 ? -(uint64_t)v : (uint64_t)v, e);
	if (v < 0)
		*--p = '-';
	line_digits(l, p, e);
}

/* Append " H:P" (host_port_put()). */
void line_host_port(struct log_line *l, uint32_t host, uint16_t port,
		    bool dotted)
{
	size_t room = sizeof(l->b) - 1 - l->n;

	if (room < 2)
		return;
	l->b[l->n++] = ' ';
	l->n += host_port_put(l->b + l->n, room, host, port, dotted);
}

/* End the line and write it to @f (nothing without a log). */
void line_write(struct log_line *l, FILE *f)
{
	if (!f)
		return;
	l->b[l->n++] = '\n';
	fwrite(l->b, 1, l->n, f);
}

/* line_write() with " @tail" appended, of any length. */
void line_write_tail(struct log_line *l, FILE *f, const char *tail)
{
	if (!f)
		return;
	l->b[l->n++] = ' ';
	fwrite(l->b, 1, l->n, f);
	fputs(tail, f);
	fputc('\n', f);
}
