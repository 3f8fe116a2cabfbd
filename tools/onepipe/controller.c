// SPDX-License-Identifier: GPL-2.0
/*
 * onepipe controller show: the failure controller's state, asked of
 * onepiped over its control socket (userspace/controller/ctl_proto.h):
 * one CTL_SHOW, answered by CTL_SHOW_REPLY packets carrying a JSON
 * document in chunks, the last with CTL_F_LAST.
 *
 * onepipe fail show: the failures this host has applied
 * (ONEPIPE_CMD_FAIL_GET dump).
 *
 * The daemon's JSON is parsed here (a small DOM), both to check it and
 * to render it: re-written as JSON (compact or pretty, whatever the
 * daemon sent), or as text.  The text form does not know the document's
 * schema: it follows its shape (scalars as "key value" items on a line,
 * objects and arrays of objects as indented blocks), so that what the
 * daemon adds shows up without a change here.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>

#include "ctl_proto.h"
#include "json.h"
#include "parse.h"
#include "tool.h"

/* How long onepiped may take for each packet of its answer. */
#define CTL_SHOW_TIMEOUT_MS	5000

/* The JSON reader ---------------------------------------------------------- */

struct jparse {
	const char *s;
	size_t len;
	size_t pos;
	int depth;
	char *err;
	size_t errlen;
};

static struct op_jval *jfail(struct jparse *p, const char *what)
{
	if (!p->err[0])
		snprintf(p->err, p->errlen, "%s at offset %zu", what, p->pos);
	return NULL;
}

static void jskip_ws(struct jparse *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) &&
	       p->s[p->pos])
		p->pos++;
}

static bool jeat(struct jparse *p, char c)
{
	jskip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == c) {
		p->pos++;
		return true;
	}
	return false;
}

static struct op_jval *jnew(struct jparse *p, enum op_jtype type)
{
	struct op_jval *v = calloc(1, sizeof(*v));

	if (!v)
		return jfail(p, "out of memory");
	v->type = type;
	return v;
}

static int hex4(const char *s)
{
	int v = 0, i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t put_utf8(char *d, unsigned int cp)
{
	if (cp < 0x80) {
		d[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = 0xc0 | (cp >> 6);
		d[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = 0xe0 | (cp >> 12);
		d[1] = 0x80 | ((cp >> 6) & 0x3f);
		d[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	d[0] = 0xf0 | (cp >> 18);
	d[1] = 0x80 | ((cp >> 12) & 0x3f);
	d[2] = 0x80 | ((cp >> 6) & 0x3f);
	d[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* A \uXXXX escape at p->pos (after the backslash and 'u'), surrogates too. */
static int junicode(struct jparse *p, unsigned int *cp)
{
	int hi, lo;

	if (p->len - p->pos < 4 || (hi = hex4(p->s + p->pos)) < 0)
		return -1;
	p->pos += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return -1;
	if (hi < 0xd800 || hi > 0xdbff) {
		*cp = hi;
		return 0;
	}
	if (p->len - p->pos < 6 || p->s[p->pos] != '\\' ||
	    p->s[p->pos + 1] != 'u' ||
	    (lo = hex4(p->s + p->pos + 2)) < 0xdc00 || lo > 0xdfff)
		return -1;
	p->pos += 6;
	*cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/*
 * A string at p->pos (its opening quote), decoded into a new C string.
 * \u0000 is refused: everything downstream uses C strings, and the
 * daemon has no reason to send it.
 */
static char *jstring(struct jparse *p)
{
	/* Decoding never makes a string longer than its escaped form. */
	char *d, *out = malloc(p->len - p->pos + 1);
	unsigned int cp;

	if (!out) {
		jfail(p, "out of memory");
		return NULL;
	}
	d = out;
	p->pos++;
	while (p->pos < p->len) {
		unsigned char c = p->s[p->pos++];

		if (c == '"') {
			*d = '\0';
			return out;
		}
		if (c < 0x20)
			break;
		if (c != '\\') {
			*d++ = c;
			continue;
		}
		if (p->pos == p->len)
			break;
		c = p->s[p->pos++];
		switch (c) {
		case '"': case '\\': case '/':
			*d++ = c;
			break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			if (junicode(p, &cp) || !cp)
				goto bad;
			d += put_utf8(d, cp);
			break;
		default:
			goto bad;
		}
	}
bad:
	free(out);
	jfail(p, "bad string");
	return NULL;
}

/* A number, kept as its text: re-written exactly, whatever its size. */
static struct op_jval *jnumber(struct jparse *p)
{
	size_t start = p->pos, n;
	struct op_jval *v;

#define DIGIT(i)	((i) < p->len && p->s[i] >= '0' && p->s[i] <= '9')
	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (!DIGIT(p->pos))
		return jfail(p, "bad number");
	if (p->s[p->pos] == '0')
		p->pos++;
	else
		while (DIGIT(p->pos))
			p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (!DIGIT(p->pos))
			return jfail(p, "bad number");
		while (DIGIT(p->pos))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len &&
		    (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (!DIGIT(p->pos))
			return jfail(p, "bad number");
		while (DIGIT(p->pos))
			p->pos++;
	}
#undef DIGIT
	v = jnew(p, OP_J_NUM);
	if (!v)
		return NULL;
	n = p->pos - start;
	v->str = strndup(p->s + start, n);
	if (!v->str) {
		free(v);
		return jfail(p, "out of memory");
	}
	return v;
}

static struct op_jval *jvalue(struct jparse *p);

/* The elements of an array or the members of an object, after its '['/'{'. */
static struct op_jval *jcontainer(struct jparse *p, enum op_jtype type)
{
	char close = type == OP_J_ARR ? ']' : '}';
	struct op_jval *v, *item, **tail;
	char *key = NULL;

	if (++p->depth > OP_JSON_MAX_DEPTH)
		return jfail(p, "nested too deep");
	v = jnew(p, type);
	if (!v)
		return NULL;
	tail = &v->child;
	if (jeat(p, close))
		goto out;
	do {
		if (type == OP_J_OBJ) {
			jskip_ws(p);
			if (p->pos == p->len || p->s[p->pos] != '"') {
				jfail(p, "member name expected");
				goto err;
			}
			key = jstring(p);
			if (!key)
				goto err;
			if (!jeat(p, ':')) {
				jfail(p, "':' expected");
				goto err;
			}
		}
		item = jvalue(p);
		if (!item)
			goto err;
		item->key = key;
		key = NULL;
		*tail = item;
		tail = &item->next;
	} while (jeat(p, ','));
	if (!jeat(p, close)) {
		jfail(p, type == OP_J_ARR ? "',' or ']' expected" :
		      "',' or '}' expected");
		goto err;
	}
out:
	p->depth--;
	return v;
err:
	free(key);
	op_json_free(v);
	return NULL;
}

static bool jword(struct jparse *p, const char *w)
{
	size_t n = strlen(w);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n))
		return false;
	p->pos += n;
	return true;
}

static struct op_jval *jvalue(struct jparse *p)
{
	struct op_jval *v;

	jskip_ws(p);
	if (p->pos == p->len)
		return jfail(p, "value expected");
	switch (p->s[p->pos]) {
	case '{':
		p->pos++;
		return jcontainer(p, OP_J_OBJ);
	case '[':
		p->pos++;
		return jcontainer(p, OP_J_ARR);
	case '"':
		v = jnew(p, OP_J_STR);
		if (v && !(v->str = jstring(p))) {
			free(v);
			v = NULL;
		}
		return v;
	}
	if (jword(p, "true"))
		return jnew(p, OP_J_TRUE);
	if (jword(p, "false"))
		return jnew(p, OP_J_FALSE);
	if (jword(p, "null"))
		return jnew(p, OP_J_NULL);
	if (p->s[p->pos] != '-' && (p->s[p->pos] < '0' || p->s[p->pos] > '9'))
		return jfail(p, "value expected");
	return jnumber(p);
}

struct op_jval *op_json_parse(const char *s, size_t len, char *err,
			      size_t errlen)
{
	struct jparse p = {
		.s = s, .len = len, .err = err, .errlen = errlen,
	};
	struct op_jval *v;

	err[0] = '\0';
	v = jvalue(&p);
	if (!v)
		return NULL;
	jskip_ws(&p);
	if (p.pos != p.len) {
		op_json_free(v);
		return jfail(&p, "trailing characters");
	}
	return v;
}

void op_json_free(struct op_jval *v)
{
	struct op_jval *next;

	for (; v; v = next) {
		next = v->next;
		op_json_free(v->child);
		free(v->key);
		free(v->str);
		free(v);
	}
}

/* Rendering ---------------------------------------------------------------- */

static void jw_number(struct jw *jw, const char *s)
{
	char *end;
	uint64_t u;
	int64_t i;

	/* Integers as integers, at any size they fit in 64 bits. */
	if (!strpbrk(s, ".eE")) {
		errno = 0;
		if (s[0] == '-') {
			i = strtoll(s, &end, 10);
			if (!errno && !*end) {
				jw_int(jw, i);
				return;
			}
		} else {
			u = strtoull(s, &end, 10);
			if (!errno && !*end) {
				jw_uint(jw, u);
				return;
			}
		}
	}
	jw_double(jw, strtod(s, NULL));
}

void op_json_write(struct jw *jw, const struct op_jval *v)
{
	const struct op_jval *c;

	if (v->key)
		jw_name(jw, v->key);
	switch (v->type) {
	case OP_J_NULL:
		jw_null(jw);
		break;
	case OP_J_FALSE:
	case OP_J_TRUE:
		jw_bool(jw, v->type == OP_J_TRUE);
		break;
	case OP_J_NUM:
		jw_number(jw, v->str);
		break;
	case OP_J_STR:
		jw_string(jw, v->str);
		break;
	case OP_J_ARR:
		jw_start_array(jw);
		for (c = v->child; c; c = c->next)
			op_json_write(jw, c);
		jw_end_array(jw);
		break;
	case OP_J_OBJ:
		jw_start_object(jw);
		for (c = v->child; c; c = c->next)
			op_json_write(jw, c);
		jw_end_object(jw);
		break;
	}
}

static bool is_scalar(const struct op_jval *v)
{
	return v->type != OP_J_ARR && v->type != OP_J_OBJ;
}

/* Fits on a line as one "key value" item: a scalar or a list of them. */
static bool is_inline(const struct op_jval *v)
{
	const struct op_jval *c;

	if (v->type == OP_J_OBJ)
		return !v->child;
	if (v->type != OP_J_ARR)
		return true;
	for (c = v->child; c; c = c->next)
		if (!is_scalar(c))
			return false;
	return true;
}

static const char *scalar_text(const struct op_jval *v)
{
	switch (v->type) {
	case OP_J_NULL:
		return "-";
	case OP_J_FALSE:
		return "no";
	case OP_J_TRUE:
		return "yes";
	case OP_J_NUM:
	case OP_J_STR:
		return v->str[0] ? v->str : "\"\"";
	default:
		return "-";
	}
}

/* A scalar's text, or "a,b,c" for a list of them ("-" if empty); malloc'd. */
static char *inline_text(const struct op_jval *v)
{
	const struct op_jval *c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (is_scalar(v))
		return strdup(scalar_text(v));
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (c = v->child; c; c = c->next)
		fprintf(f, "%s%s", c == v->child ? "" : ",", scalar_text(c));
	if (!v->child)
		fputc('-', f);
	fclose(f);
	return buf;
}

static void print_inline(struct op_out *o, const struct op_jval *v)
{
	/* Only a bare top-level value has no name. */
	char *text = inline_text(v);

	out_str(o, v->key, v->key ? v->key : "-", text ? text : "?");
	free(text);
}

static void print_block(struct op_out *o, const struct op_jval *v,
			int indent);

/*
 * An object's members from a new line at @indent: its inline members
 * first, wrapped, then each other member as a block below.
 */
static void print_members(struct op_out *o, const struct op_jval *obj,
			  const char *label, int indent)
{
	const struct op_jval *c;

	out_line(o, indent);
	out_wrap(o, indent + 4);
	if (label)
		out_group_start(o, NULL, label, indent + 4);
	for (c = obj->child; c; c = c->next)
		if (is_inline(c))
			print_inline(o, c);
	if (label)
		out_group_end(o);
	for (c = obj->child; c; c = c->next)
		if (!is_inline(c))
			print_block(o, c, indent + 2);
}

static void print_block(struct op_out *o, const struct op_jval *v,
			int indent)
{
	const struct op_jval *c;
	char label[128];

	snprintf(label, sizeof(label), "%s:", v->key ? v->key : "-");
	if (v->type == OP_J_OBJ) {
		print_members(o, v, label, indent);
		return;
	}
	/* An array with objects or arrays in it: one line per element. */
	out_line(o, indent);
	out_group_start(o, NULL, label, 0);
	out_group_end(o);
	for (c = v->child; c; c = c->next) {
		if (c->type == OP_J_OBJ) {
			print_members(o, c, NULL, indent + 2);
		} else {
			char *text;

			if (!is_inline(c)) {
				print_block(o, c, indent + 2);
				continue;
			}
			out_line(o, indent + 2);
			text = inline_text(c);
			out_str(o, NULL, text ? text : "?", NULL);
			free(text);
		}
	}
}

static bool has_inline(const struct op_jval *obj)
{
	const struct op_jval *c;

	for (c = obj->child; c; c = c->next)
		if (is_inline(c))
			return true;
	return false;
}

void op_controller_print(struct op_out *o, const struct op_jval *v)
{
	const struct op_jval *c;

	if (out_json(o)) {
		op_json_write(o->jw, v);
		return;
	}
	/* Only blocks at the top (onepiped's own shape): no indent for them. */
	if (v->type == OP_J_OBJ && !has_inline(v))
		for (c = v->child; c; c = c->next)
			print_block(o, c, 0);
	else if (v->type == OP_J_OBJ)
		print_members(o, v, NULL, 0);
	else if (is_inline(v))
		print_inline(o, v);
	else
		print_block(o, v, 0);
	out_eol(o);
}

/* The conversation with onepiped ------------------------------------------- */

int op_ctl_text_add(struct op_ctl_text *t, const struct ctl_msg *m)
{
	size_t need;
	char *buf;

	if (m->type != CTL_SHOW_REPLY || m->host > CTL_TEXT_LEN)
		return -EBADMSG;
	need = t->len + m->host + 1;
	if (need > OP_CTL_TEXT_MAX)
		return -EFBIG;
	if (need > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;

		while (cap < need)
			cap *= 2;
		buf = realloc(t->buf, cap);
		if (!buf)
			return -ENOMEM;
		t->buf = buf;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, m->text, m->host);
	t->len += m->host;
	t->buf[t->len] = '\0';
	t->chunks++;
	return (m->flags & CTL_F_LAST) ? 1 : 0;
}

void op_ctl_text_free(struct op_ctl_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

int op_parse_show_opts(int argc, char **argv, bool allow_socket,
		       struct op_show_opts *opts, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "-json") ||
		    !strcmp(a, "--json")) {
			opts->json = true;
		} else if (!strcmp(a, "-p") || !strcmp(a, "-pretty") ||
			   !strcmp(a, "--pretty")) {
			/* As the global -p: pretty implies JSON. */
			opts->json = true;
			opts->pretty = true;
		} else if (allow_socket && !strncmp(a, "--socket=", 9)) {
			opts->socket = a + 9;
		} else if (allow_socket && (!strcmp(a, "--socket") ||
					    !strcmp(a, "socket"))) {
			if (i + 1 == argc) {
				snprintf(err, errlen, "%s needs a path", a);
				return -EINVAL;
			}
			opts->socket = argv[++i];
		} else {
			snprintf(err, errlen, "unexpected argument \"%s\"", a);
			return -EINVAL;
		}
	}
	if (allow_socket && !opts->socket[0]) {
		snprintf(err, errlen, "the socket path is empty");
		return -EINVAL;
	}
	return 0;
}

/* Wait for the next packet, at most CTL_SHOW_TIMEOUT_MS. */
static ssize_t ctl_recv(int fd, struct ctl_msg *m)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, CTL_SHOW_TIMEOUT_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	/* MSG_TRUNC: the packet's real length, so oversize is caught. */
	n = recv(fd, m, sizeof(*m), MSG_TRUNC);
	return n < 0 ? -errno : n;
}

/**
 * ctl_show() - ask onepiped for its state
 * @path: its socket
 * @t: the JSON text, reassembled
 *
 * Return: 0, or 1 after saying why on stderr.
 */
static int ctl_show(const char *path, struct op_ctl_text *t)
{
	struct ctl_msg m;
	ssize_t n;
	int fd, ret;

	fd = ctl_connect(path);
	if (fd < 0) {
		fprintf(stderr,
			"onepipe: controller show: cannot connect to onepiped at %s: %s%s\n",
			path, strerror(-fd),
			fd == -EACCES ? " (needs root)" :
			fd == -ENOENT || fd == -ECONNREFUSED ?
			" (is onepiped running?)" : "");
		return 1;
	}
	ctl_msg_init(&m, CTL_SHOW, NULL);
	if (send(fd, &m, CTL_MSG_LEN, MSG_NOSIGNAL) != (ssize_t)CTL_MSG_LEN) {
		fprintf(stderr, "onepipe: controller show: send: %s\n",
			strerror(errno));
		close(fd);
		return 1;
	}
	for (;;) {
		n = ctl_recv(fd, &m);
		if (n <= 0) {
			fprintf(stderr,
				"onepipe: controller show: %s after %u part(s) of the answer\n",
				n ? strerror(-n) : "onepiped closed the connection",
				t->chunks);
			break;
		}
		/* Only SHOW_REPLY is for us; anything else is not an answer. */
		if (ctl_msg_check(&m, n) || m.type != CTL_SHOW_REPLY) {
			fprintf(stderr,
				"onepipe: controller show: malformed answer from onepiped\n");
			break;
		}
		ret = op_ctl_text_add(t, &m);
		if (ret < 0) {
			fprintf(stderr, "onepipe: controller show: %s\n",
				strerror(-ret));
			break;
		}
		if (ret) {
			close(fd);
			return 0;
		}
	}
	close(fd);
	return 1;
}

static int controller_show(struct op_ctx *ctx, int argc, char **argv)
{
	struct op_show_opts opts = {
		.json = ctx->json, .pretty = ctx->pretty,
		.socket = CTL_DEFAULT_SOCKET,
	};
	struct op_ctl_text t = { .len = 0 };
	struct op_jval *doc;
	struct op_out o;
	char err[128];
	int ret;

	if (op_parse_show_opts(argc, argv, true, &opts, err, sizeof(err)))
		return op_usage_error("controller", "controller show: %s",
				      err);
	if (ctl_show(opts.socket, &t)) {
		op_ctl_text_free(&t);
		return 1;
	}
	doc = op_json_parse(t.buf ? t.buf : "", t.len, err, sizeof(err));
	op_ctl_text_free(&t);
	if (!doc) {
		fprintf(stderr,
			"onepipe: controller show: onepiped sent bad JSON: %s\n",
			err);
		return 1;
	}
	if (out_init(&o, ctx->out, opts.json, opts.pretty)) {
		fprintf(stderr, "onepipe: out of memory\n");
		op_json_free(doc);
		return 1;
	}
	op_controller_print(&o, doc);
	op_json_free(doc);
	ret = out_fini(&o);
	return ret ? 1 : 0;
}

void controller_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe controller show [ -j ] [ -p ] [ --socket PATH ]\n"
		"       onepipe controller help\n"
		"where  PATH := onepiped's socket (default %s)\n",
		CTL_DEFAULT_SOCKET);
}

int do_controller(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list"))
		return controller_show(ctx, argc > 0 ? argc - 1 : 0,
				       argc > 0 ? argv + 1 : argv);
	if (op_matches(cmd, "help")) {
		controller_usage(stdout);
		return 0;
	}
	return op_usage_error("controller", "command \"%s\" is unknown", cmd);
}

/* onepipe fail show -------------------------------------------------------- */

/* Spec entry of ONEPIPE_A_<x>, for the attributes of a FAIL_GET reply. */
#define FATTR(x, len) [ONEPIPE_A_##x] = { "ONEPIPE_A_" #x, len, NULL }

const struct op_attr_spec op_fail_attrs[ONEPIPE_A_MAX + 1] = {
	FATTR(EPOCH,		4),
	FATTR(FAIL_HOST,	4),
	FATTR(FAIL_TS,		8),
	FATTR(FAIL_PENDING,	4),
};

void op_fail_print(struct op_out *o, const struct nlattr **tb)
{
	if (tb[ONEPIPE_A_FAIL_HOST])
		out_uint(o, "host", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_A_FAIL_HOST]));
	if (tb[ONEPIPE_A_EPOCH])
		out_uint(o, "epoch", NULL,
			 mnl_attr_get_u32(tb[ONEPIPE_A_EPOCH]));
	if (tb[ONEPIPE_A_FAIL_TS])
		out_uint(o, "ts", NULL,
			 mnl_attr_get_u64(tb[ONEPIPE_A_FAIL_TS]));
	/* Pending: its recalls still run, EV_FAIL_DONE not sent yet. */
	if (tb[ONEPIPE_A_FAIL_PENDING])
		out_yesno(o, "pending", NULL,
			  mnl_attr_get_u32(tb[ONEPIPE_A_FAIL_PENDING]));
}

struct fail_dump {
	struct op_out *o;
	bool started;
};

static int fail_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ONEPIPE_A_MAX + 1];
	struct fail_dump *d = data;

	op_nl_parse_msg(nlh, op_fail_attrs, ONEPIPE_A_MAX, tb);
	if (!d->started) {
		out_array_start(d->o);
		d->started = true;
	}
	op_print_item(d->o, op_fail_print, tb);
	return MNL_CB_OK;
}

/*
 * op_dump() reads a reply's own attributes with op_attrs, which does not
 * name the failure attributes; this is the same dump with their spec.
 */
static int fail_show(struct op_ctx *ctx, int argc, char **argv)
{
	struct op_show_opts opts = { .json = ctx->json, .pretty = ctx->pretty };
	struct fail_dump d = { .started = false };
	struct op_out o;
	struct op_nl nl;
	char err[128];
	int ret;

	if (op_parse_show_opts(argc, argv, false, &opts, err, sizeof(err)))
		return op_usage_error("fail", "fail show: %s", err);
	if (op_nl_open(&nl))
		return 1;
	if (out_init(&o, ctx->out, opts.json, opts.pretty)) {
		op_nl_close(&nl);
		fprintf(stderr, "onepipe: out of memory\n");
		return 1;
	}
	d.o = &o;
	ret = op_nl_talk(&nl, op_nl_request(&nl, ONEPIPE_CMD_FAIL_GET,
					    NLM_F_DUMP), fail_cb, &d);
	/* Keep the JSON well formed even when the dump failed midway. */
	if (!ret || d.started) {
		if (!d.started)
			out_array_start(&o);
		out_array_end(&o);
	}
	if (out_fini(&o) && !ret)
		ret = -EIO;
	else if (ret)
		op_nl_perror(&nl, "fail show", ret);
	op_nl_close(&nl);
	return ret ? 1 : 0;
}

void fail_usage(FILE *f)
{
	fprintf(f,
		"Usage: onepipe fail show [ -j ] [ -p ]\n"
		"       onepipe fail help\n");
}

int do_fail(struct op_ctx *ctx, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : "show";

	if (op_matches(cmd, "show") || op_matches(cmd, "list"))
		return fail_show(ctx, argc > 0 ? argc - 1 : 0,
				 argc > 0 ? argv + 1 : argv);
	if (op_matches(cmd, "help")) {
		fail_usage(stdout);
		return 0;
	}
	return op_usage_error("fail", "command \"%s\" is unknown", cmd);
}
