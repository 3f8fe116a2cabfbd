// SPDX-License-Identifier: GPL-2.0
/*
 * Streaming JSON writer for the onepipe tool (see json.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "json.h"

/* Deeper nesting than this is a bug in the caller, not a data property. */
#define JW_MAX_DEPTH	16
#define JW_INDENT	4

struct jw {
	FILE *f;
	bool pretty;
	bool name_pending;		/* a name is out, its value is next */
	bool started;			/* a top-level value was begun */
	int depth;
	bool has_items[JW_MAX_DEPTH];	/* container at depth has items */
};

struct jw *jw_new(FILE *f, bool pretty)
{
	struct jw *jw = calloc(1, sizeof(*jw));

	if (!jw)
		return NULL;
	jw->f = f;
	jw->pretty = pretty;
	return jw;
}

void jw_destroy(struct jw *jw)
{
	if (!jw)
		return;
	if (jw->started)
		fputc('\n', jw->f);
	free(jw);
}

static void jw_newline(struct jw *jw)
{
	if (!jw->pretty)
		return;
	fprintf(jw->f, "\n%*s", jw->depth * JW_INDENT, "");
}

/* Everything a value needs before it: a comma and, when pretty, a newline. */
static void jw_begin_value(struct jw *jw)
{
	if (jw->name_pending) {
		jw->name_pending = false;
		return;
	}
	jw->started = true;
	if (jw->depth == 0)
		return;
	if (jw->has_items[jw->depth])
		fputc(',', jw->f);
	jw->has_items[jw->depth] = true;
	jw_newline(jw);
}

static void jw_open(struct jw *jw, char c)
{
	jw_begin_value(jw);
	fputc(c, jw->f);
	if (jw->depth < JW_MAX_DEPTH - 1)
		jw->depth++;
	jw->has_items[jw->depth] = false;
}

static void jw_close(struct jw *jw, char c)
{
	bool had_items = jw->has_items[jw->depth];

	if (jw->depth > 0)
		jw->depth--;
	if (had_items)
		jw_newline(jw);
	fputc(c, jw->f);
}

void jw_start_object(struct jw *jw)
{
	jw_open(jw, '{');
}

void jw_end_object(struct jw *jw)
{
	jw_close(jw, '}');
}

void jw_start_array(struct jw *jw)
{
	jw_open(jw, '[');
}

void jw_end_array(struct jw *jw)
{
	jw_close(jw, ']');
}

static void jw_quote(struct jw *jw, const char *s)
{
	const unsigned char *p;

	fputc('"', jw->f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", jw->f);
			break;
		case '\\':
			fputs("\\\\", jw->f);
			break;
		case '\n':
			fputs("\\n", jw->f);
			break;
		case '\r':
			fputs("\\r", jw->f);
			break;
		case '\t':
			fputs("\\t", jw->f);
			break;
		default:
			/* Other control characters are not allowed raw. */
			if (*p < 0x20)
				fprintf(jw->f, "\\u%04x", *p);
			else
				fputc(*p, jw->f);
		}
	}
	fputc('"', jw->f);
}

void jw_name(struct jw *jw, const char *name)
{
	jw_begin_value(jw);
	jw_quote(jw, name);
	fputs(jw->pretty ? ": " : ":", jw->f);
	jw->name_pending = true;
}

void jw_string(struct jw *jw, const char *s)
{
	jw_begin_value(jw);
	jw_quote(jw, s);
}

void jw_uint(struct jw *jw, uint64_t v)
{
	jw_begin_value(jw);
	fprintf(jw->f, "%" PRIu64, v);
}

void jw_int(struct jw *jw, int64_t v)
{
	jw_begin_value(jw);
	fprintf(jw->f, "%" PRId64, v);
}

void jw_double(struct jw *jw, double v)
{
	char buf[32];
	int prec;

	/* JSON has no NaN or infinity. */
	if (!isfinite(v)) {
		jw_null(jw);
		return;
	}
	/* 17 significant digits always read back exactly; try fewer first. */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	jw_begin_value(jw);
	fputs(buf, jw->f);
}

void jw_bool(struct jw *jw, bool v)
{
	jw_begin_value(jw);
	fputs(v ? "true" : "false", jw->f);
}

void jw_null(struct jw *jw)
{
	jw_begin_value(jw);
	fputs("null", jw->f);
}
