/* json_num.h - JSON numbers as people write them.  json-glib prints a
 * double with 17 significant digits (g_ascii_dtostr), so a peak of 17.7336 W
 * comes out as 17.733599999999999.  Every JSON document the tools write goes
 * through json_shortest_numbers, which rewrites each number with a fraction
 * or an exponent to the shortest text that reads back as the same double:
 * the value is unchanged, only its spelling. */
#ifndef TCC_JSON_NUM_H
#define TCC_JSON_NUM_H

/* A copy of the JSON text TEXT (g_free) whose non-integer numbers are
 * spelled shortest: fixed notation where json-glib used it (at least one
 * digit after the point: 1000.0 stays 1000.0), else the shortest %g.
 * Strings are copied as they are; integers too. */
char *json_shortest_numbers(const char *text);

/* A copy of S (g_free; NULL for NULL) that a JSON string can hold: JSON
 * text is UTF-8, and a parser rejects a document with any other bytes, so
 * each invalid sequence (a file name may hold any bytes: "\xff.yaml")
 * becomes U+FFFD (g_utf8_make_valid).  Every string a tool puts in a JSON
 * document goes through it (jdoc.c, the records, tcc-grade --json,
 * tcc-diff --json). */
char *json_utf8(const char *s);

#endif
