// SPDX-License-Identifier: GPL-2.0
/*
 * TAP tests of onepiped's state stores (ctl_store.h).
 *
 *   tests/test_store --file-only     the file store only
 *   tests/test_store ENDPOINTS       the file store, then the etcd store
 *                                    against the cluster at ENDPOINTS
 *
 * The etcd cases want a cluster of their own (tests/etcd_cluster.sh
 * starts one); they use a key prefix unique to the run all the same.  The
 * last case kills a member by running the shell command in $ETCD_KILL_ONE
 * (set by etcd_cluster.sh) and checks the store carries on through the
 * others; without the variable it is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_store.h"

#define TTL_S		2
/* etcd checks for expired leases about every 500 ms; allow for that and
 * for a slow machine. */
#define SLACK_MS	2500

static int n_tests, n_failed;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	n_tests++;
	if (!cond)
		n_failed++;
	printf("%sok %d - ", cond ? "" : "not ", n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* load() and compare with the expected bytes. */
static int load_is(struct ctl_store *s, const char *want, size_t want_len)
{
	char *blob = NULL;
	size_t len = 0;
	int err, same;

	err = s->ops->load(s, &blob, &len);
	if (err) {
		diag("load: %s", strerror(-err));
		return 0;
	}
	same = len == want_len && !memcmp(blob, want, len) && !blob[len];
	if (!same)
		diag("load: %zu bytes, not the %zu saved", len, want_len);
	free(blob);
	return same;
}

/* ---- file store --------------------------------------------------------- */

static int dir_entries(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

/*
 * A writer process alternates two blobs of very different sizes while we
 * load as fast as we can: every load must be exactly one of them, never
 * a prefix, a mix, or nothing.
 */
static void file_concurrent(const char *path, struct ctl_store *s)
{
	static char big[150000];
	const char *small = "small blob\n";
	long long end;
	int loads = 0, bad = 0, status;
	pid_t pid;

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\n';
	if (s->ops->save(s, small, strlen(small))) {
		ok(0, "file: concurrent loads see whole blobs (setup)");
		return;
	}
	pid = fork();
	if (pid < 0) {
		ok(0, "file: concurrent loads see whole blobs (fork)");
		return;
	}
	if (!pid) {
		struct ctl_store *w = ctl_store_file_open(path);
		int i, err = 0;

		/* only frees: keeps valgrind's leak check of the child quiet */
		s->ops->close(s);

		end = now_ms() + 400;
		for (i = 0; !err && now_ms() < end; i++)
			err = i & 1 ? w->ops->save(w, small, strlen(small)) :
				      w->ops->save(w, big, sizeof(big));
		w->ops->close(w);
		_exit(err ? 1 : 0);
	}
	end = now_ms() + 500;
	while (now_ms() < end) {
		char *blob;
		size_t len;

		loads++;
		if (s->ops->load(s, &blob, &len)) {
			bad++;
			continue;
		}
		if (!((len == strlen(small) && !memcmp(blob, small, len)) ||
		      (len == sizeof(big) && !memcmp(blob, big, len))))
			bad++;
		free(blob);
	}
	waitpid(pid, &status, 0);
	ok(!bad && WIFEXITED(status) && !WEXITSTATUS(status),
	   "file: %d loads during concurrent saves, %d not a whole blob",
	   loads, bad);
}

static void test_file(void)
{
	char dir[] = "/tmp/test_store.XXXXXX", path[64], bad[96];
	const char *blob = "epoch 3\nfail h2 1234\n";
	struct ctl_store *s;
	char *out = NULL;
	size_t len;
	int err;

	if (!mkdtemp(dir)) {
		ok(0, "file: mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	s = ctl_store_file_open(path);
	ok(s && !strcmp(s->ops->name, "file"), "file: open");
	if (!s)
		return;
	err = s->ops->load(s, &out, &len);
	ok(err == -ENOENT, "file: load before any save is -ENOENT (%d)", err);
	ok(s->ops->campaign(s) == 1 && s->ops->keepalive(s) == 0 &&
	   s->lease_ms == 0, "file: always active");
	ok(!s->ops->save(s, blob, strlen(blob)) &&
	   load_is(s, blob, strlen(blob)), "file: save/load round trip");
	ok(!s->ops->save(s, "x", 1) && load_is(s, "x", 1),
	   "file: a shorter blob replaces a longer one whole");
	ok(!s->ops->save(s, "", 0) && load_is(s, "", 0),
	   "file: empty blob");
	file_concurrent(path, s);
	ok(dir_entries(dir) == 1, "file: no temporary file left behind");
	err = s->ops->save(s, blob, strlen(blob));
	s->ops->close(s);

	/* A fresh open reads what an earlier instance wrote. */
	s = ctl_store_file_open(path);
	ok(!err && s && load_is(s, blob, strlen(blob)),
	   "file: survives reopening");
	if (s)
		s->ops->close(s);

	snprintf(bad, sizeof(bad), "%s/missing/state", dir);
	s = ctl_store_file_open(bad);
	err = s ? s->ops->save(s, blob, strlen(blob)) : 0;
	ok(s && err == -ENOENT && dir_entries(dir) == 1,
	   "file: save into a missing directory fails cleanly (%d)", err);
	if (s)
		s->ops->close(s);

	unlink(path);
	rmdir(dir);
}

/* ---- etcd store --------------------------------------------------------- */

/* Retry @op until it returns @want or @ms pass; the time it took, or -1. */
#define RETRY(ms, want, op) ({						\
	long long __t0 = now_ms(), __r = -1;				\
	while (now_ms() - __t0 < (ms)) {				\
		if ((op) == (want)) {					\
			__r = now_ms() - __t0;				\
			break;						\
		}							\
		sleep_ms(100);						\
	}								\
	__r;								\
})

static void test_etcd(const char *eps)
{
	static char big[100 * 1024];
	struct ctl_store *a, *b, *c;
	char prefix[64], *out;
	const char *kill_cmd;
	long long t0, t;
	size_t i, len;
	int ra, rb, err;

	snprintf(prefix, sizeof(prefix), "/onepipe-test-%d-%lld",
		 (int)getpid(), now_ms());
	a = ctl_store_etcd_open(eps, prefix, "a", TTL_S);
	b = ctl_store_etcd_open(eps, prefix, "b", TTL_S);
	ok(a && b && !strcmp(a->ops->name, "etcd") &&
	   a->lease_ms == TTL_S * 1000, "etcd: open");
	if (!a || !b)
		return;

	err = a->ops->load(a, &out, &len);
	ok(err == -ENOENT, "etcd: load before any save is -ENOENT (%d)", err);
	err = a->ops->save(a, "x", 1);
	ok(err == -EPERM, "etcd: save before campaign is -EPERM (%d)", err);

	ra = a->ops->campaign(a);
	rb = b->ops->campaign(b);
	ok((ra == 1) + (rb == 1) == 1 && ra >= 0 && rb >= 0,
	   "etcd: exactly one of two wins the campaign (a %d, b %d)", ra, rb);
	if (rb == 1) {		/* name them so that a leads */
		struct ctl_store *tmp = a;

		a = b;
		b = tmp;
	}
	ok(a->ops->campaign(a) == 1 && b->ops->campaign(b) == 0,
	   "etcd: campaigning again changes nothing");

	/* every byte value, to exercise the base64 both ways */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + i / 256);
	t0 = now_ms();
	err = a->ops->save(a, big, sizeof(big));
	t = now_ms() - t0;
	ok(!err && load_is(b, big, sizeof(big)),
	   "etcd: 100 KB save/load round trip (save %lld ms)", t);
	ok(!a->ops->keepalive(a), "etcd: leader's keepalive");

	err = b->ops->save(b, "loser", 5);
	ok(err == -EPERM, "etcd: standby's save is -EPERM (%d)", err);
	err = b->ops->keepalive(b);
	ok(err == -EPERM, "etcd: standby's keepalive is -EPERM (%d)", err);
	ok(load_is(a, big, sizeof(big)), "etcd: standby did not write");

	/* The leader hangs: no more keepalives.  The standby takes over. */
	t0 = now_ms();
	t = RETRY(TTL_S * 1000 + SLACK_MS, 1, b->ops->campaign(b));
	ok(t >= 0, "etcd: standby wins within TTL+slack once the leader "
	   "stops renewing (%lld ms, TTL %d s)", t, TTL_S);
	ok(t < 0 || t >= TTL_S * 1000 / 2,
	   "etcd: ... but not before the lease ran out");
	ok(!b->ops->save(b, "new leader", 10) && load_is(a, "new leader", 10),
	   "etcd: new leader's save works");
	err = a->ops->save(a, "old leader", 10);
	ok(err == -EPERM && load_is(a, "new leader", 10),
	   "etcd: deposed leader's save is fenced, -EPERM (%d)", err);
	err = a->ops->keepalive(a);
	ok(err == -EPERM, "etcd: deposed leader's keepalive is -EPERM (%d)",
	   err);
	ok(a->ops->campaign(a) == 0, "etcd: deposed leader is now standby");

	/* A leader that resigns hands over at once, not after the TTL. */
	b->ops->close(b);
	b = NULL;
	t0 = now_ms();
	ra = a->ops->campaign(a);
	t = now_ms() - t0;
	ok(ra == 1, "etcd: standby wins at once when the leader closes "
	   "(%lld ms)", t);
	ok(!a->ops->save(a, "after close", 11) &&
	   load_is(a, "after close", 11), "etcd: and saves");

	kill_cmd = getenv("ETCD_KILL_ONE");
	if (!kill_cmd) {
		ok(1, "# SKIP member loss: no $ETCD_KILL_ONE");
		a->ops->close(a);
		return;
	}
	c = ctl_store_etcd_open(eps, prefix, "c", TTL_S);
	ok(c && c->ops->campaign(c) == 0, "etcd: third instance is standby");
	diag("killing a member: %s", kill_cmd);
	err = system(kill_cmd);
	ok(!err, "etcd: member killed");
	/* Its raft leader may have gone with it: allow an election. */
	t = RETRY(10000, 0, a->ops->keepalive(a));
	ok(t >= 0, "etcd: leader's keepalive works after a member was "
	   "lost (%lld ms)", t);
	t = RETRY(10000, 0, a->ops->save(a, "two left", 8));
	ok(t >= 0 && load_is(c, "two left", 8),
	   "etcd: save/load through the remaining members (%lld ms)", t);
	ok(c && c->ops->campaign(c) == 0 && c->ops->save(c, "c", 1) == -EPERM,
	   "etcd: standby is still standby and fenced");
	a->ops->close(a);
	t = c ? RETRY(10000, 1, c->ops->campaign(c)) : -1;
	ok(t >= 0 && !c->ops->save(c, "c leads", 7) && load_is(c, "c leads", 7),
	   "etcd: takeover with a member down (%lld ms)", t);
	if (c)
		c->ops->close(c);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s --file-only | ENDPOINTS\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_file();
	if (strcmp(argv[1], "--file-only"))
		test_etcd(argv[1]);
	printf("1..%d\n", n_tests);
	if (n_failed)
		diag("%d of %d failed", n_failed, n_tests);
	return n_failed ? 1 : 0;
}
