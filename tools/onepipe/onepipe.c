// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe - configure and inspect AF_ONEPIPE (1Pipe) hosts.
 *
 * An iproute2-style front end to the "onepipe" generic netlink family:
 *
 *	onepipe [ OPTIONS ] OBJECT { COMMAND | help }
 *
 * This file holds option parsing, the network namespace switch and the
 * object dispatch; each object lives in its own file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "tool.h"

static const struct {
	const char *name;	/* any prefix of it selects the object */
	int (*run)(struct op_ctx *ctx, int argc, char **argv);
} objects[] = {
	{ "host", do_host },
	{ "link", do_link },
	{ "sock", do_sock },
	{ "peer", do_peer },
	{ "dev", do_dev },
	{ "controller", do_controller },
	{ "fail", do_fail },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       onepipe [ -V | -h ]\n"
		"where  OBJECT := { host | link | sock | peer | dev | controller | fail }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -n[etns] NAME |\n"
		"                    -V[ersion] | -h[elp] }\n");
}

/*
 * Enter the network namespace @name: a name under /run/netns as created
 * by "ip netns add", or a path such as /proc/PID/ns/net.  Must happen
 * before the netlink socket is opened, since a socket stays in the
 * namespace it was created in.
 */
static int enter_netns(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) {
		fprintf(stderr, "onepipe: invalid network namespace \"%s\"\n",
			name);
		return -1;
	}
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr,
			"onepipe: cannot open network namespace \"%s\": %s\n",
			name, strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr,
			"onepipe: cannot enter network namespace \"%s\": %s\n",
			name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "pretty",	no_argument,		NULL, 'p' },
		{ "netns",	required_argument,	NULL, 'n' },
		{ "version",	no_argument,		NULL, 'V' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct op_ctx ctx = { .out = stdout };
	const char *netns = NULL;
	unsigned int i;
	int opt;

	/* "+": options end at the object, as in "ip -j link show". */
	while ((opt = getopt_long(argc, argv, "+jpn:Vh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'j':
			ctx.json = true;
			break;
		case 'p':
			/* Pretty only means something for JSON: imply it. */
			ctx.json = true;
			ctx.pretty = true;
			break;
		case 'n':
			netns = optarg;
			break;
		case 'V':
			printf("onepipe utility, version %s (generic netlink family \"%s\" version %d)\n",
			       OP_TOOL_VERSION, ONEPIPE_GENL_NAME,
			       ONEPIPE_GENL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return 1;
	}
	/* Objects first: "h" is host; "he" and longer are help. */
	for (i = 0; i < ARRAY_SIZE(objects); i++) {
		if (!op_matches(argv[0], objects[i].name))
			continue;
		if (netns && enter_netns(netns))
			return 1;
		return objects[i].run(&ctx, argc - 1, argv + 1);
	}
	if (op_matches(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	return op_usage_error(NULL, "object \"%s\" is unknown", argv[0]);
}
