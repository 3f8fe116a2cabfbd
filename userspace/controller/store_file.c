// SPDX-License-Identifier: GPL-2.0
/*
 * The embedded-mode state store (ctl_store.h): one local file.
 *
 * A save writes the whole blob to PATH.tmp, fsyncs it, renames it over
 * PATH and fsyncs the directory, so after a crash PATH holds either the
 * old blob or the new one, never a mix, and a rename that returned is
 * durable.  There is only one instance, so it is always the active one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_store.h"

struct file_store {
	struct ctl_store head;
	char *path;
	char *tmp;	/* PATH.tmp: the blob being written */
	char *dir;	/* PATH's directory, fsynced after the rename */
};

static struct file_store *to_file(struct ctl_store *s)
{
	return (struct file_store *)s;
}

static int file_load(struct ctl_store *s, char **blob, size_t *len)
{
	struct file_store *fs = to_file(s);
	size_t cap = 4096, n = 0;
	char *buf, *nbuf;
	ssize_t r;
	int fd, err;

	fd = open(fs->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		/* Keep one byte for the terminating NUL. */
		if (n + 1 >= cap) {
			cap *= 2;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				err = -ENOMEM;
				goto fail;
			}
			buf = nbuf;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*blob = buf;
	if (len)
		*len = n;
	return 0;
fail:
	close(fd);
	free(buf);
	return err;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t r;

	while (len) {
		r = write(fd, p, len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd, err = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int file_save(struct ctl_store *s, const char *blob, size_t len)
{
	struct file_store *fs = to_file(s);
	int fd, err;

	/*
	 * O_TRUNC rather than O_EXCL: a temp file left by a crash in the
	 * middle of an earlier save is garbage, overwrite it.
	 */
	fd = open(fs->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, blob, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(fs->tmp, fs->path) < 0)
		err = -errno;
	if (err) {
		unlink(fs->tmp);
		return err;
	}
	/* Without this the rename itself may not survive a power cut. */
	return fsync_dir(fs->dir);
}

static int file_campaign(struct ctl_store *s)
{
	(void)s;
	return 1;
}

static int file_keepalive(struct ctl_store *s)
{
	(void)s;
	return 0;
}

static void file_close(struct ctl_store *s)
{
	struct file_store *fs = to_file(s);

	if (!fs)
		return;
	free(fs->path);
	free(fs->tmp);
	free(fs->dir);
	free(fs);
}

static const struct ctl_store_ops file_ops = {
	.name = "file",
	.load = file_load,
	.save = file_save,
	.campaign = file_campaign,
	.keepalive = file_keepalive,
	.close = file_close,
};

/**
 * ctl_store_file_open() - open the file store
 * @path: the state file (need not exist yet; its directory must)
 *
 * Return: the store, or NULL with errno set.
 */
struct ctl_store *ctl_store_file_open(const char *path)
{
	struct file_store *fs;
	const char *slash;

	if (!path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->head.ops = &file_ops;
	fs->head.lease_ms = 0;
	fs->path = strdup(path);
	if (asprintf(&fs->tmp, "%s.tmp", path) < 0)
		fs->tmp = NULL;
	slash = strrchr(path, '/');
	if (!slash)
		fs->dir = strdup(".");
	else if (slash == path)
		fs->dir = strdup("/");
	else
		fs->dir = strndup(path, (size_t)(slash - path));
	if (!fs->path || !fs->tmp || !fs->dir) {
		file_close(&fs->head);
		errno = ENOMEM;
		return NULL;
	}
	return &fs->head;
}
