// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the controller's control channel (ctl_proto.h), shared by
 * onepiped, onepipe-agent, the switch and the CLI.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"

static const char *const ctl_names[__CTL_TYPE_MAX] = {
	[CTL_HELLO] = "hello",
	[CTL_LINK_DOWN] = "link-down",
	[CTL_LINK_UP] = "link-up",
	[CTL_UNREACH] = "unreach",
	[CTL_FAIL] = "fail",
	[CTL_STATE] = "state",
	[CTL_DONE] = "done",
	[CTL_RESUME] = "resume",
	[CTL_SHOW] = "show",
	[CTL_SHOW_REPLY] = "show-reply",
	[CTL_REJOIN] = "rejoin",
	[CTL_REJOINED] = "rejoined",
	[CTL_RELAY] = "relay",
};

const char *ctl_type_name(unsigned int type)
{
	return type < __CTL_TYPE_MAX && ctl_names[type] ? ctl_names[type] : "?";
}

/* A node name: 1..CTL_NAME_LEN-1 of [A-Za-z0-9_.-]. */
static int ctl_name_ok(const char *s, int may_be_empty)
{
	size_t n = strnlen(s, CTL_NAME_LEN);
	size_t i;

	if (n == CTL_NAME_LEN || (!n && !may_be_empty))
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/**
 * ctl_set_name() - copy a node name into a message field
 * @dst: CTL_NAME_LEN bytes
 * @src: the name
 *
 * Return: 0, or -EINVAL if @src is not a valid node name.
 */
int ctl_set_name(char *dst, const char *src)
{
	memset(dst, 0, CTL_NAME_LEN);
	if (strlen(src) >= CTL_NAME_LEN || !ctl_name_ok(src, 0))
		return -EINVAL;
	memcpy(dst, src, strlen(src));
	return 0;
}

/* A zeroed message of @type from @node (may be NULL: set later). */
void ctl_msg_init(struct ctl_msg *m, enum ctl_type type, const char *node)
{
	memset(m, 0, sizeof(*m));
	m->magic = CTL_MAGIC;
	m->version = CTL_VERSION;
	m->type = type;
	if (node)
		ctl_set_name(m->node, node);
}

/**
 * ctl_msg_check() - validate a received message
 * @m: the message
 * @len: bytes received (the datagram's whole length, MSG_TRUNC)
 *
 * Every type is exactly CTL_MSG_LEN bytes, except CTL_RELAY: the message
 * and CTL_RELAY_MIN to CTL_RELAY_MAX bytes of packet after it.  Only the
 * struct is read here; a caller that reads the packet (ctl_pkt_host())
 * must have received it whole: a buffer of CTL_DGRAM_MAX bytes.
 *
 * Return: 0 if well formed, -EBADMSG otherwise (the caller counts it).
 */
int ctl_msg_check(const struct ctl_msg *m, long len)
{
	if (len < (long)CTL_MSG_LEN)
		return -EBADMSG;
	if (m->type == CTL_RELAY) {
		if (len < (long)(CTL_MSG_LEN + CTL_RELAY_MIN) ||
		    len > (long)CTL_DGRAM_MAX)
			return -EBADMSG;
	} else if (len != (long)CTL_MSG_LEN) {
		return -EBADMSG;
	}
	if (m->magic != CTL_MAGIC ||
	    m->version != CTL_VERSION || !m->type ||
	    m->type >= __CTL_TYPE_MAX || m->pad)
		return -EBADMSG;
	if (!ctl_name_ok(m->node, m->type == CTL_SHOW ||
			 m->type == CTL_SHOW_REPLY) ||
	    !ctl_name_ok(m->peer, 1))
		return -EBADMSG;
	if (m->type == CTL_SHOW_REPLY && m->host > CTL_TEXT_LEN)
		return -EBADMSG;
	return 0;
}

/**
 * ctl_pkt_host() - a host id from a relayed packet's 1Pipe header
 * @pkt: the packet, at least CTL_RELAY_MIN bytes (a RELAY's follows its
 *	struct ctl_msg)
 * @off: CTL_RELAY_SRC_OFF or CTL_RELAY_DST_OFF
 *
 * Return: the big-endian u32 at @off, in host order.
 */
uint32_t ctl_pkt_host(const void *pkt, unsigned int off)
{
	const uint8_t *p = (const uint8_t *)pkt + off;

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/**
 * ctl_connect() - connect to the controller's socket
 * @path: its path
 *
 * Return: a SOCK_SEQPACKET fd (close-on-exec), or -errno.
 */
int ctl_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
