// SPDX-License-Identifier: GPL-2.0
/*
 * clock_check: does CLOCK_MONOTONIC ever go back when read on one CPU
 * after another, and what does a read cost?  (guest_clock.sh)
 *
 * One thread per CPU it may run on, each pinned there, takes turns under a
 * mutex: it reads the clock and compares with the last value any thread
 * read.  The mutex orders the reads, so a smaller value is the clock
 * going back between CPUs: 1Pipe stamps messages from whatever CPU a
 * sender runs on and needs each host's clock to be non-decreasing.
 *
 *   clock_check [MS]     (default 2000)
 *
 * Prints "cpus N reads N back N max_back_ns N read_ns N"; exits 0 when
 * nothing went back, 1 when something did, 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last, reads, back, max_back, until;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *reader(void *arg)
{
	cpu_set_t set;
	bool done = false;

	CPU_ZERO(&set);
	CPU_SET((int)(intptr_t)arg, &set);
	errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (errno) {
		perror("clock_check: pthread_setaffinity_np");
		exit(2);
	}
	while (!done) {
		uint64_t t;

		pthread_mutex_lock(&lock);
		t = mono_ns();
		if (t < last) {
			back++;
			if (last - t > max_back)
				max_back = last - t;
		} else {
			last = t;
		}
		reads++;
		done = t >= until;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	pthread_t th[CPU_SETSIZE];
	uint64_t t0, cost;
	int cpu, n = 0, i;
	cpu_set_t cpus;

	if (argc > 2 || ms <= 0 || ms > 600000) {
		fprintf(stderr, "usage: clock_check [MS]\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(cpus), &cpus)) {
		perror("clock_check: sched_getaffinity");
		return 2;
	}
	/* The cost of one read, on this CPU, alone. */
	t0 = mono_ns();
	for (i = 0; i < 100000; i++)
		mono_ns();
	cost = (mono_ns() - t0) / 100000;

	until = mono_ns() + (uint64_t)ms * 1000000u;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &cpus))
			continue;
		errno = pthread_create(&th[n], NULL, reader,
				       (void *)(intptr_t)cpu);
		if (errno) {
			perror("clock_check: pthread_create");
			return 2;
		}
		n++;
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("cpus %d reads %llu back %llu max_back_ns %llu read_ns %llu\n",
	       n, (unsigned long long)reads, (unsigned long long)back,
	       (unsigned long long)max_back, (unsigned long long)cost);
	return back ? 1 : 0;
}
