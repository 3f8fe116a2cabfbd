// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of tool.c's log-line builder: every field must read exactly
 * as printf would have written it, since op-check and the benchmarks
 * parse the logs (including ones from before the builder).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static int failures;

static void expect(const char *what, const struct log_line *l,
		   const char *want)
{
	if (l->n == strlen(want) && !memcmp(l->b, want, l->n))
		return;
	fprintf(stderr, "FAIL %s: got \"%.*s\", want \"%s\"\n", what,
		(int)l->n, l->b, want);
	failures++;
}

static void test_numbers(void)
{
	static const uint64_t u[] = { 0, 1, 9, 10, 99, 100, 4294967295u,
				      4294967296ull, 18446744073709551615ull };
	static const int64_t s[] = { 0, -1, 1, -10, 123456789,
				     INT64_MAX, INT64_MIN };
	char want[64];
	struct log_line l;
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		line_start(&l, 'R');
		line_u64(&l, u[i]);
		snprintf(want, sizeof(want), "R %" PRIu64, u[i]);
		expect("line_u64", &l, want);
	}
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		line_start(&l, 'R');
		line_i64(&l, s[i]);
		snprintf(want, sizeof(want), "R %" PRId64, s[i]);
		expect("line_i64", &l, want);
	}
}

static void test_host_port(void)
{
	struct log_line l;
	char b[8];

	line_start(&l, 'X');
	line_host_port(&l, 3, 7, false);
	line_host_port(&l, 4294967295u, 65535, false);
	line_host_port(&l, 0x0a4d0102, 5640, true);
	line_host_port(&l, 0, 0, true);
	expect("line_host_port", &l,
	       "X 3:7 4294967295:65535 10.77.1.2:5640 0.0.0.0:0");
	/* cut to the buffer, still terminated; the length written */
	if (host_port_put(b, sizeof(b), 12345, 6789, false) != 7 ||
	    strcmp(b, "12345:6")) {
		fprintf(stderr, "FAIL host_port_put cut: \"%s\"\n", b);
		failures++;
	}
}

static void test_line(void)
{
	char *buf = NULL, tail[600];
	struct log_line l;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	line_start(&l, 'S');
	line_u64(&l, 42);
	line_str(&l, "why");
	line_write(&l, f);
	line_write(&l, NULL);		/* no log: nothing */
	/* a tail longer than a line: written whole */
	for (i = 0; i < sizeof(tail) - 1; i++)
		tail[i] = i % 2 ? ',' : '7';
	tail[i] = 0;
	line_start(&l, 'S');
	line_u64(&l, 1);
	line_write_tail(&l, f, tail);
	fclose(f);
	if (len != strlen("S 42 why\n") + strlen("S 1 ") + strlen(tail) + 1 ||
	    strncmp(buf, "S 42 why\nS 1 7,7,", 17) ||
	    buf[len - 1] != '\n') {
		fprintf(stderr, "FAIL line_write: \"%s\"\n", buf);
		failures++;
	}
	free(buf);
	/* a line never overflows: fields that do not fit are cut */
	line_start(&l, 'S');
	for (i = 0; i < LOG_LINE_MAX; i++)
		line_u64(&l, 18446744073709551615ull);
	line_str(&l, tail);
	line_host_port(&l, 1, 1, false);
	if (l.n > LOG_LINE_MAX - 1) {
		fprintf(stderr, "FAIL overflow: %zu\n", l.n);
		failures++;
	}
}

/* TAP: one point per test. */
static bool run(int n, const char *name, void (*fn)(void))
{
	int before = failures;

	fn();
	printf("%sok %d - %s\n", failures == before ? "" : "not ", n, name);
	return failures == before;
}

int main(void)
{
	tool_name = "test_tool";
	printf("1..3\n");
	run(1, "line fields read as printf writes them", test_numbers);
	run(2, "host:port fields, cut to the buffer", test_host_port);
	run(3, "lines, tails of any length, no overflow", test_line);
	return failures ? 1 : 0;
}
