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
	char b[8], e[12];

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
	/* one byte short of fitting: the NUL stays inside */
	memset(e, 'x', sizeof(e));
	if (host_port_put(e, 10, 12345, 6789, false) != 9 ||
	    strcmp(e, "12345:678") || e[10] != 'x') {
		fprintf(stderr, "FAIL host_port_put exact: \"%.10s\"\n", e);
		failures++;
	}
}

static bool line_fits(struct log_line *l);

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
	line_start(&l, 'S');
	line_u64(&l, 42);
	line_write(&l, NULL);		/* no log: nothing, line untouched */
	if (l.n != 4) {
		fprintf(stderr, "FAIL line_write without a log\n");
		failures++;
	}
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
	/* a line is never lost or cut, nor overflowed, near its end */
	for (i = 2; i < LOG_LINE_MAX; i++) {
		static const uint64_t nums[] = { 7, 4294967295u,
						 18446744073709551615ull };
		size_t k;

		memset(tail, 'a', i - 2);
		tail[i - 2] = 0;
		for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
			line_start(&l, 'S');
			line_str(&l, tail);	/* n == i */
			line_u64(&l, nums[k]);
			line_i64(&l, -(int64_t)(nums[k] >> 1));
			line_str(&l, "why");
			line_host_port(&l, 4294967295u, 65535, true);
			if (!line_fits(&l))
				return;
		}
	}
}

/* Written out, @l must end in its newline within the buffer. */
static bool line_fits(struct log_line *l)
{
	char *buf = NULL;
	size_t len = 0, n = l->n;
	FILE *f = open_memstream(&buf, &len);

	line_write(l, f);
	fclose(f);
	if (n > LOG_LINE_MAX - 1 || len != n + 1 || buf[n] != '\n') {
		fprintf(stderr, "FAIL line of %zu bytes written as %zu\n", n,
			len);
		failures++;
		free(buf);
		return false;
	}
	free(buf);
	return true;
}

/*
 * Every line type as op-traffic and op-cpg build it, against the printf
 * format each used before.
 */
static void test_whole_lines(void)
{
	const uint64_t ts = 1764300000123456789ull, id = 4294967296ull;
	const int64_t lat = -1234;
	char want[LOG_LINE_MAX];
	struct log_line l;

	line_start(&l, 'R');		/* op-traffic R */
	line_u64(&l, ts);
	line_host_port(&l, 3, 7, false);
	line_u64(&l, id);
	line_u64(&l, 65535u);
	line_u64(&l, (size_t)64);
	line_i64(&l, lat);
	snprintf(want, sizeof(want), "R %" PRIu64 " %s %" PRIu64 " %" PRIu32
		 " %zu %" PRId64, ts, "3:7", id, (uint32_t)65535, (size_t)64,
		 lat);
	expect("R line", &l, want);

	line_start(&l, 'R');		/* op-cpg R: its sender's name, %d me */
	line_u64(&l, ts);
	line_str(&l, "10.77.2.2:7");
	line_u64(&l, id);
	line_i64(&l, 3);
	line_u64(&l, (size_t)256);
	line_i64(&l, INT64_MIN);
	snprintf(want, sizeof(want), "R %" PRIu64 " %s %" PRIu64 " %d %zu %"
		 PRId64, ts, "10.77.2.2:7", id, 3, (size_t)256, INT64_MIN);
	expect("op-cpg R line", &l, want);

	line_start(&l, 'E');
	line_u64(&l, 0);
	line_host_port(&l, 0x0a4d0302, 7, true);
	line_u64(&l, id);
	line_u64(&l, 2u);
	line_u64(&l, 110u);
	line_u64(&l, 5u);
	snprintf(want, sizeof(want), "E %" PRIu64 " %s %" PRIu64 " %" PRIu32
		 " %" PRIu32 " %u", (uint64_t)0, "10.77.3.2:7", id,
		 (uint32_t)2, (uint32_t)110, 5u);
	expect("E line", &l, want);

	line_start(&l, 'F');
	line_u64(&l, ts);
	line_u64(&l, 4u);
	line_u64(&l, 4294967295u);
	snprintf(want, sizeof(want), "F %" PRIu64 " %" PRIu32 " %" PRIu32,
		 ts, (uint32_t)4, (uint32_t)4294967295u);
	expect("F line", &l, want);

	line_start(&l, 'X');
	line_host_port(&l, 0, 0, false);
	line_str(&l, "no-ts-cmsg");
	expect("X line", &l, "X 0:0 no-ts-cmsg");

	line_start(&l, 'P');
	line_str(&l, "1 7");
	expect("P line", &l, "P 1 7");
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
	printf("1..4\n");
	run(1, "line fields read as printf writes them", test_numbers);
	run(2, "host:port fields, cut to the buffer", test_host_port);
	run(3, "lines, tails of any length, no overflow", test_line);
	run(4, "every line type reads as its old printf format",
	    test_whole_lines);
	return failures ? 1 : 0;
}
