/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal streaming JSON writer: enough for the onepipe tool's objects,
 * arrays, strings, numbers and booleans.  The caller drives the
 * structure; the writer only takes care of commas, quoting and indentation,
 * so output is valid JSON by construction.
 */
#ifndef ONEPIPE_TOOL_JSON_H
#define ONEPIPE_TOOL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct jw;

struct jw *jw_new(FILE *f, bool pretty);
/* Terminates the document with a newline and frees the writer. */
void jw_destroy(struct jw *jw);

void jw_start_object(struct jw *jw);
void jw_end_object(struct jw *jw);
void jw_start_array(struct jw *jw);
void jw_end_array(struct jw *jw);

/* Member name; the next value written becomes its value. */
void jw_name(struct jw *jw, const char *name);

void jw_string(struct jw *jw, const char *s);
void jw_uint(struct jw *jw, uint64_t v);
void jw_int(struct jw *jw, int64_t v);
/* Shortest form that reads back as @v; null if not finite. */
void jw_double(struct jw *jw, double v);
void jw_bool(struct jw *jw, bool v);
void jw_null(struct jw *jw);

#endif /* ONEPIPE_TOOL_JSON_H */
