/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny TAP producer and seeded PRNG for the core unit tests.
 *
 * Each test binary calls ok()/is_*() as it goes and ends with
 * "return tap_done();", which prints the plan ("1..N", allowed at the end
 * by TAP) and yields a non-zero exit status if anything failed.  Output is
 * flushed per line so a sanitizer abort never hides earlier results.
 */
#ifndef _ONEPIPE_TESTS_TAP_H
#define _ONEPIPE_TESTS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int tap_count;
static int tap_failed;

static inline void tap_vreport(int pass, const char *file, int line,
			       const char *fmt, va_list ap)
{
	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	putchar('\n');
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

static inline int __attribute__((format(printf, 4, 5)))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(pass, file, line, fmt, ap);
	va_end(ap);
	return pass;
}

static inline void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Equality checks that print both values when they fail. */
#define is_u64(got, want, ...) ({					\
	uint64_t _g = (got), _w = (want);				\
	int _p = tap_ok(_g == _w, __FILE__, __LINE__, __VA_ARGS__);	\
	if (!_p)							\
		diag("  got 0x%" PRIx64 ", want 0x%" PRIx64, _g, _w);	\
	_p;								\
})

#define is_s64(got, want, ...) ({					\
	int64_t _g = (got), _w = (want);				\
	int _p = tap_ok(_g == _w, __FILE__, __LINE__, __VA_ARGS__);	\
	if (!_p)							\
		diag("  got %" PRId64 ", want %" PRId64, _g, _w);	\
	_p;								\
})

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed)
		diag("%d of %d tests failed", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

/* splitmix64: small, fast, and fully determined by the seed. */
struct tap_rng {
	uint64_t s;
};

static inline uint64_t tap_rand(struct tap_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform enough in [0, n) for test purposes (n > 0). */
static inline uint64_t tap_below(struct tap_rng *r, uint64_t n)
{
	return tap_rand(r) % n;
}

/* Uniform enough in [lo, hi]. */
static inline int64_t tap_range(struct tap_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)tap_below(r, (uint64_t)(hi - lo) + 1);
}

#endif /* _ONEPIPE_TESTS_TAP_H */
