/* ir_parse.h - the IR's text form read back (ir_parse.c).  A reader of
 * text, like the plan loader, so it lives in the frontend: it fills a
 * Schedule through the frontend's knob table, and the IR (src/ir) stays
 * independent of the plan. */
#ifndef TCC_IR_PARSE_H
#define TCC_IR_PARSE_H

#include "ir.h"

/* GError code (domain IR_ERROR) of ir_parse's errors. */
enum { IR_ERROR_PARSE = 2 };

/* Parse the text form ir_print writes (tcc-gen --emit=ir, --dump-after) back
 * into an IR: ir_print(ir_parse(T)) == T for every T ir_print writes.  `name`
 * names the text in messages.  NULL with *err set to one line
 * "NAME:LINE:COL: error: MESSAGE" at the first error.  What the text does not
 * carry (tensor indices, which HBM tensor an HBM operand views, provenance
 * columns, the problem section's place) and what hand-written IR may leave
 * out are described at the top of ir_parse.c. */
Ir *ir_parse(const char *name, const char *text, gsize len, GError **err);

#endif
