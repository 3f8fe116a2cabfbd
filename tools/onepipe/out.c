// SPDX-License-Identifier: GPL-2.0
/*
 * Text/JSON output helpers for the onepipe tool (see out.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "out.h"

int out_init(struct op_out *o, FILE *f, bool json, bool pretty)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->line_empty = true;
	if (json) {
		o->jw = jw_new(f, pretty);
		if (!o->jw)
			return -ENOMEM;
	}
	return 0;
}

int out_fini(struct op_out *o)
{
	if (o->jw)
		jw_destroy(o->jw);
	else
		out_eol(o);
	o->jw = NULL;
	/* A full disk or a closed pipe must not look like success. */
	if (fflush(o->f) || ferror(o->f)) {
		fprintf(stderr, "onepipe: write error: %s\n",
			strerror(errno ? errno : EIO));
		return -EIO;
	}
	return 0;
}

void out_eol(struct op_out *o)
{
	if (o->jw || o->line_empty)
		return;
	fputc('\n', o->f);
	o->col = 0;
	o->line_empty = true;
}

void out_line(struct op_out *o, int indent)
{
	if (o->jw)
		return;
	out_eol(o);
	/* Indentation is written with the first item: no blank lines. */
	o->indent = indent;
	o->wrap_indent = 0;
}

void out_wrap(struct op_out *o, int indent)
{
	if (!o->jw)
		o->wrap_indent = indent;
}

/* Text: one "label value" item, separated from the previous one. */
static void out_item(struct op_out *o, const char *label, const char *value)
{
	int len = strlen(label) + (value ? 1 + strlen(value) : 0);

	if (o->line_empty)
		o->col = fprintf(o->f, "%*s", o->indent, "");
	else if (o->wrap_indent > 0 && o->col + 1 + len > OUT_TEXT_WIDTH)
		o->col = fprintf(o->f, "\n%*s", o->wrap_indent, "") - 1;
	else
		o->col += fprintf(o->f, " ");
	o->col += fprintf(o->f, "%s%s%s", label, value ? " " : "",
			  value ? value : "");
	o->line_empty = false;
}

void out_uint(struct op_out *o, const char *key, const char *label,
	      uint64_t v)
{
	char buf[24];

	if (o->jw) {
		jw_name(o->jw, key);
		jw_uint(o->jw, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	out_item(o, label ? label : key, buf);
}

void out_int(struct op_out *o, const char *key, const char *label,
	     int64_t v)
{
	char buf[24];

	if (o->jw) {
		jw_name(o->jw, key);
		jw_int(o->jw, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	out_item(o, label ? label : key, buf);
}

void out_uint_unit(struct op_out *o, const char *key, const char *label,
		   uint64_t v, const char *unit)
{
	char buf[32];

	if (o->jw) {
		jw_name(o->jw, key);
		jw_uint(o->jw, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRIu64 "%s", v, unit);
	out_item(o, label ? label : key, buf);
}

void out_frac(struct op_out *o, const char *key, const char *label,
	      uint64_t num, uint64_t den, int decimals)
{
	double v = den ? (double)num / den : NAN;
	char buf[48];

	if (o->jw) {
		jw_name(o->jw, key);
		jw_double(o->jw, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	out_item(o, label ? label : key, buf);
}

void out_str(struct op_out *o, const char *key, const char *label,
	     const char *s)
{
	if (o->jw) {
		jw_name(o->jw, key);
		jw_string(o->jw, s);
		return;
	}
	out_item(o, label ? label : key, s);
}

void out_onoff(struct op_out *o, const char *key, const char *label, bool v)
{
	if (o->jw) {
		jw_name(o->jw, key);
		jw_bool(o->jw, v);
		return;
	}
	out_item(o, label ? label : key, v ? "on" : "off");
}

void out_yesno(struct op_out *o, const char *key, const char *label, bool v)
{
	if (o->jw) {
		jw_name(o->jw, key);
		jw_bool(o->jw, v);
		return;
	}
	out_item(o, label ? label : key, v ? "yes" : "no");
}

void out_hex(struct op_out *o, const char *key, const char *label,
	     uint64_t v)
{
	char buf[24];

	if (o->jw) {
		jw_name(o->jw, key);
		jw_uint(o->jw, v);
		return;
	}
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	out_item(o, label ? label : key, buf);
}

void out_list_start(struct op_out *o, const char *key)
{
	if (!o->jw)
		return;
	jw_name(o->jw, key);
	jw_start_array(o->jw);
}

void out_list_end(struct op_out *o)
{
	if (o->jw)
		jw_end_array(o->jw);
}

void out_group_start(struct op_out *o, const char *key, const char *label,
		     int wrap_indent)
{
	if (o->jw) {
		jw_name(o->jw, key);
		jw_start_object(o->jw);
		return;
	}
	out_item(o, label ? label : key, NULL);
	o->wrap_indent = wrap_indent;
}

void out_group_end(struct op_out *o)
{
	if (o->jw)
		jw_end_object(o->jw);
	else
		o->wrap_indent = 0;
}

void out_obj_start(struct op_out *o)
{
	if (o->jw)
		jw_start_object(o->jw);
}

void out_obj_end(struct op_out *o)
{
	if (o->jw)
		jw_end_object(o->jw);
}

void out_array_start(struct op_out *o)
{
	if (o->jw)
		jw_start_array(o->jw);
}

void out_array_end(struct op_out *o)
{
	if (o->jw)
		jw_end_array(o->jw);
}
