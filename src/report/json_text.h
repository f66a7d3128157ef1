/* json_text.h - the JSON every tool writes (explain, tcc-grade --json,
 * tcc-diff, tcc-census, tcc-sweep): one pretty-printed document. */
#ifndef TCC_JSON_TEXT_H
#define TCC_JSON_TEXT_H

#include <json-glib/json-glib.h>

/* The builder's document, pretty-printed, with a final newline (g_free). */
char *json_pretty_text(JsonBuilder *b);

#endif
