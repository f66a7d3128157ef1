/* json_text.h - the JSON every tool writes (explain, tcc-grade --json,
 * tcc-diff, tcc-census, tcc-sweep): one pretty-printed document. */
#ifndef TCC_JSON_TEXT_H
#define TCC_JSON_TEXT_H

#include <json-glib/json-glib.h>

/* The builder's document, pretty-printed, with a final newline (g_free). */
char *json_pretty_text(JsonBuilder *b);

/* A string value made UTF-8 (json_utf8, json_num.h): a file name, a plan's
 * text or a diagnostic that quotes either may hold any bytes. */
void json_add_utf8(JsonBuilder *b, const char *v);

/* A plan's value as JSON, as the plan reads it: a decimal integer or real
 * as a number, anything else (an enum, a list) as its text. */
void json_add_plan_value(JsonBuilder *b, const char *v);

#endif
