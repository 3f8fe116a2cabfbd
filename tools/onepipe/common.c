// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the onepipe tool's objects: usage errors and dumps.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <linux/genetlink.h>

#include "tool.h"

int op_usage_error(const char *object, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("onepipe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (object)
		fprintf(stderr, "\nTry \"onepipe %s help\".\n", object);
	else
		fputs("\nTry \"onepipe help\".\n", stderr);
	return 1;
}

int op_unexpected_arg(const char *object, const char *cmd,
		      const char *arg)
{
	return op_usage_error(object, "%s %s: unexpected argument \"%s\"",
			      object, cmd, arg);
}

void op_print_item(struct op_out *o, op_print_fn print,
		   const struct nlattr **tb)
{
	out_obj_start(o);
	out_line(o, 0);
	print(o, tb);
	out_obj_end(o);
	out_eol(o);
}

struct dump_ctx {
	struct op_out *o;
	uint16_t nest;
	const struct op_attr_spec *spec;
	unsigned int max;
	op_print_fn print;
	const struct nlattr **tb;
	bool started;
};

/* JSON: "[" only once there is something to show, or at the very end. */
static void dump_start(struct dump_ctx *d)
{
	if (d->started)
		return;
	d->started = true;
	out_array_start(d->o);
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *top[ONEPIPE_A_MAX + 1];
	struct dump_ctx *d = data;

	op_nl_parse_msg(nlh, op_attrs, ONEPIPE_A_MAX, top);
	if (d->nest == ONEPIPE_A_UNSPEC) {
		/* The reply's own attributes are the item. */
		memcpy(d->tb, top, sizeof(top));
	} else if (top[d->nest]) {
		op_nl_parse_nest(top[d->nest], d->spec, d->max, d->tb);
	} else {
		fprintf(stderr, "onepipe: warning: reply without %s\n",
			op_attrs[d->nest].name);
		return MNL_CB_OK;
	}
	dump_start(d);
	op_print_item(d->o, d->print, d->tb);
	return MNL_CB_OK;
}

int op_dump(struct op_ctx *ctx, uint8_t cmd, uint16_t nest,
	    const struct op_attr_spec *spec, unsigned int max,
	    op_print_fn print, const char *what)
{
	/* Room for the item's attributes; every ONEPIPE_?_MAX is smaller. */
	const struct nlattr *tb[64];
	struct dump_ctx d = {
		.nest = nest, .spec = spec, .max = max,
		.print = print, .tb = tb,
	};
	struct op_out o;
	struct op_nl nl;
	int err;

	if (max >= ARRAY_SIZE(tb) ||
	    (nest == ONEPIPE_A_UNSPEC && max != ONEPIPE_A_MAX)) {
		fprintf(stderr, "onepipe: internal error: nest too large\n");
		return 1;
	}
	if (op_nl_open(&nl))
		return 1;
	if (out_init(&o, ctx->out, ctx->json, ctx->pretty)) {
		op_nl_close(&nl);
		fprintf(stderr, "onepipe: out of memory\n");
		return 1;
	}
	d.o = &o;
	err = op_nl_talk(&nl, op_nl_request(&nl, cmd, NLM_F_DUMP), dump_cb,
			 &d);
	/* Keep the JSON well formed even when the dump failed midway. */
	if (!err || d.started) {
		dump_start(&d);
		out_array_end(&o);
	}
	if (out_fini(&o) && !err)
		err = -EIO;
	else if (err)
		op_nl_perror(&nl, what, err);
	op_nl_close(&nl);
	return err ? 1 : 0;
}
