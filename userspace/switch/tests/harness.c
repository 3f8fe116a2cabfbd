// SPDX-License-Identifier: GPL-2.0
/*
 * TAP output, time and the switch's stats file, for the switch's
 * integration tests (see harness.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"

static unsigned int tests, fails;

/* One TAP test point; @fmt describes it. */
void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tests++;
	if (!cond)
		fails++;
	printf("%sok %u - ", cond ? "" : "not ", tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* The TAP plan after the points; the exit status: 1 if any failed. */
int tap_end(void)
{
	printf("1..%u\n", tests);
	if (fails)
		printf("# %u of %u failed\n", fails, tests);
	return fails ? 1 : 0;
}

u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The stats file at @path, whole, in a static buffer; NULL if absent. */
char *stats_read(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/*
 * Asks the switch @pid for a stats dump (SIGUSR1) and reads it once it is
 * there, at most 2 s later.  The switch renames a new file into place, so
 * the inode changes: waiting for that, not for a fixed time, since a
 * switch starved of CPU takes longer than any sleep one would pick (30 ms
 * was once too short in CI).
 */
char *stats_fresh(const char *path, pid_t pid)
{
	u64 end = now_ms() + 2000;
	struct stat st;
	ino_t old;

	old = stat(path, &st) ? 0 : st.st_ino;
	kill(pid, SIGUSR1);
	do {
		sleep_ms(2);
		if (!stat(path, &st) && st.st_ino != old)
			break;
	} while (now_ms() < end);
	return stats_read(path);
}
