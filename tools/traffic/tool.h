/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What op-traffic and tools/bench/op-cpg (which mimics op-traffic's
 * command line and log) do alike: errors and exit codes, allocation,
 * clocks, number and address arguments, the start file and the log file.
 */
#ifndef _OP_TRAFFIC_TOOL_H
#define _OP_TRAFFIC_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NSEC		1000000000ull

/* The program's name for its messages: main sets it before anything. */
extern const char *tool_name;

/* "<tool_name>: <message>" on stderr, exit 1. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The same with a pointer to --help, exit 2: a bad command line. */
void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void *xcalloc(size_t n, size_t sz);

uint64_t now_rt(void);
uint64_t now_mono(void);

bool parse_u64(const char *s, uint64_t *v);
uint64_t num_arg(const char *name, const char *s, uint64_t max);
bool split_host_port(const char *s, char *host, size_t n, uint16_t *port);
const char *host_port_str(uint32_t host, uint16_t port, bool dotted, char *b,
			  size_t n);

bool start_time_known(const char **path, uint64_t *start_at_ns);
FILE *log_open(const char *path);

/*
 * One event-log line, built field by field: the logs hold a line per
 * message sent and delivered, and at saturation formatting them with
 * printf was about a seventh of 1Pipe's instructions per message in
 * op-bench --broadcast (tools/bench/README.md).  These append digits
 * directly.  A line holds at most LOG_LINE_MAX - 1 bytes before its
 * newline: a string that would not fit is cut, a number is left out.
 * Either is a bug in the caller, since a field of any length goes last,
 * with line_write_tail().
 */
#define LOG_LINE_MAX	512

struct log_line {
	size_t n;
	char b[LOG_LINE_MAX];
};

void line_start(struct log_line *l, char tag);
void line_u64(struct log_line *l, uint64_t v);
void line_i64(struct log_line *l, int64_t v);
void line_str(struct log_line *l, const char *s);
void line_host_port(struct log_line *l, uint32_t host, uint16_t port,
		    bool dotted);
void line_write(struct log_line *l, FILE *f);
void line_write_tail(struct log_line *l, FILE *f, const char *tail);
size_t host_port_put(char *b, size_t n, uint32_t host, uint16_t port,
		     bool dotted);

#endif /* _OP_TRAFFIC_TOOL_H */
