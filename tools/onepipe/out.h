/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One set of calls for both output formats, as iproute2's print_*() do:
 * each value is written with its JSON member name and its text label, and
 * the current mode picks which one is used.
 */
#ifndef ONEPIPE_TOOL_OUT_H
#define ONEPIPE_TOOL_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

/* Text lines are wrapped before this column where wrapping is asked for. */
#define OUT_TEXT_WIDTH	80

struct op_out {
	FILE *f;
	struct jw *jw;		/* NULL: text output */
	int col;		/* text: column reached on the current line */
	bool line_empty;	/* text: nothing written on the current line */
	int indent;		/* text: indentation of the current line */
	int wrap_indent;	/* text: continuation indent, 0 = never wrap */
};

int out_init(struct op_out *o, FILE *f, bool json, bool pretty);
/* Finish the output; reports a write error on stderr and returns -EIO. */
int out_fini(struct op_out *o);

static inline bool out_json(const struct op_out *o)
{
	return o->jw != NULL;
}

/* Text: end the current line (if any) and start one at @indent. */
void out_line(struct op_out *o, int indent);
/* Text: end the current line if anything is on it. */
void out_eol(struct op_out *o);
/*
 * Text: wrap the rest of the current line (until the next out_line()) at
 * OUT_TEXT_WIDTH, continuing at @indent.
 */
void out_wrap(struct op_out *o, int indent);

/* "label value" in text (label NULL: use key), "key": value in JSON. */
void out_uint(struct op_out *o, const char *key, const char *label,
	      uint64_t v);
void out_int(struct op_out *o, const char *key, const char *label,
	     int64_t v);
void out_str(struct op_out *o, const char *key, const char *label,
	     const char *s);
/*
 * A quantity with a unit: "label 412us" in text, "key": 412 in JSON, where
 * the key names the unit ("srtt_us").
 */
void out_uint_unit(struct op_out *o, const char *key, const char *label,
		   uint64_t v, const char *unit);
/*
 * The fraction @num / @den: rounded to @decimals places in text, a JSON
 * number in full (exact when @den is a power of two).
 */
void out_frac(struct op_out *o, const char *key, const char *label,
	      uint64_t num, uint64_t den, int decimals);
/* on/off in text, true/false in JSON. */
void out_onoff(struct op_out *o, const char *key, const char *label, bool v);
/* yes/no in text, true/false in JSON. */
void out_yesno(struct op_out *o, const char *key, const char *label, bool v);
/* "0x1f1fe" in text, a JSON number (keys, masks). */
void out_hex(struct op_out *o, const char *key, const char *label,
	     uint64_t v);

/*
 * A named group: a JSON object member, or in text the bare label followed
 * by the group's items, wrapped at OUT_TEXT_WIDTH if @wrap_indent > 0.
 */
void out_group_start(struct op_out *o, const char *key, const char *label,
		     int wrap_indent);
void out_group_end(struct op_out *o);

/*
 * JSON only: a named array member (its items are anonymous objects);
 * nothing in text, where each item starts its own line.
 */
void out_list_start(struct op_out *o, const char *key);
void out_list_end(struct op_out *o);

/* JSON only: anonymous containers (dumps are arrays of objects). */
void out_obj_start(struct op_out *o);
void out_obj_end(struct op_out *o);
void out_array_start(struct op_out *o);
void out_array_end(struct op_out *o);

#endif /* ONEPIPE_TOOL_OUT_H */
