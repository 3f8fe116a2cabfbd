/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where onepiped keeps its state (the routing graph, the failure log and
 * the procedure in progress, as one text blob from ctl_logic) and how it
 * decides which instance is active.
 *
 *  - file (default, "embedded mode"): one local file, replaced atomically
 *    (write, fsync, rename); the one instance is always active.
 *  - etcd (--etcd ENDPOINTS): the blob under PREFIX/state, the active
 *    instance elected with a lease on PREFIX/leader (etcd's v3 JSON
 *    gateway over libcurl).  Saves are fenced: a transaction that writes
 *    only while PREFIX/leader still holds this instance's lease, so a
 *    deposed leader cannot overwrite its successor's decisions.
 *
 * All calls block (an etcd request for at most about a second per
 * cluster member it has to try; campaign and keepalive make two) and
 * return 0 or a negative errno.  An etcd store that cannot reach a
 * quorum answers -ETIMEDOUT / -EHOSTUNREACH / -EIO: -EPERM always means
 * etcd said this instance is not (or no longer) the active one.
 */
#ifndef ONEPIPE_CTL_STORE_H
#define ONEPIPE_CTL_STORE_H

#include <stddef.h>

struct ctl_store;

/**
 * struct ctl_store_ops - a state store
 * @name: "file" or "etcd"
 * @load: the last blob saved (malloc'd, NUL-terminated, caller frees):
 *	-ENOENT if none was ever saved
 * @save: replace the blob; -EPERM if this instance is not (or no longer)
 *	the active one
 * @campaign: try to become the active instance without waiting: 1 if
 *	active (now or already), 0 if another instance is.  A standby
 *	calls it periodically and wins once the leader's lease expired.
 * @keepalive: the active instance proves it lives (call at least every
 *	third of the lease); -EPERM once it has lost the lease.  Another
 *	error means etcd could not be asked: if that lasts @lease_ms the
 *	instance must assume it lost (its saves are refused anyway)
 * @close: resign (if active) and free
 */
struct ctl_store_ops {
	const char *name;
	int (*load)(struct ctl_store *s, char **blob, size_t *len);
	int (*save)(struct ctl_store *s, const char *blob, size_t len);
	int (*campaign)(struct ctl_store *s);
	int (*keepalive)(struct ctl_store *s);
	void (*close)(struct ctl_store *s);
};

/**
 * struct ctl_store - common head of every store
 * @ops: its operations
 * @lease_ms: how long an active instance that stops calling keepalive
 *	stays active (etcd: the lease TTL); 0 for the file store
 */
struct ctl_store {
	const struct ctl_store_ops *ops;
	unsigned int lease_ms;
};

struct ctl_store *ctl_store_file_open(const char *path);
/*
 * @endpoints: comma-separated http://HOST:PORT of the cluster's members
 * @prefix: key prefix, e.g. "/onepipe"
 * @id: this instance's name (stored as the leader key's value)
 * @ttl_s: lease TTL in seconds
 */
struct ctl_store *ctl_store_etcd_open(const char *endpoints,
				      const char *prefix, const char *id,
				      unsigned int ttl_s);

#endif /* ONEPIPE_CTL_STORE_H */
