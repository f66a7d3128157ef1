/* jdoc.h - a JSON document written through json-glib's builder, without
 * linking json-glib into the command (module.h): the calls are recorded
 * (JDocOp, one per builder call, json-glib's order and meaning) and
 * replayed into a JsonBuilder by the JSON module, JDOC_MODULE
 * (src/report/json/jdoc_render.c), loaded only when a document is printed.
 * tcc-gen writes JSON only for `--explain --json`: json-glib and the GObject
 * and GIO libraries it needs were ~4 ms of CPU at every start of tcc-gen
 * (docs/testing.md). */
#ifndef TCC_JDOC_H
#define TCC_JDOC_H

#include <glib.h>
#include <stdint.h>

#define JDOC_MODULE "tcc-json.so"
#define JDOC_RENDER "jdoc_render" /* the module's JDocRenderFn */

typedef enum {
  JD_BEGIN_OBJECT, JD_END_OBJECT, JD_BEGIN_ARRAY, JD_END_ARRAY,
  JD_MEMBER,  /* s: the next value's member name          */
  JD_STRING,  /* s                                        */
  JD_INT,     /* i                                        */
  JD_DOUBLE,  /* d                                        */
  JD_BOOL,    /* i: 0 or 1                                */
  JD_NULL
} JDocKind;

typedef struct JDocOp {
  JDocKind kind;
  int64_t i;
  double d;
  const char *s; /* owned by the document                */
} JDocOp;

/* The module's entry point: the recorded document pretty-printed as
 * json-glib prints it, with a final newline (g_free). */
typedef char *(*JDocRenderFn)(const JDocOp *ops, guint n);

typedef struct JDoc JDoc;
JDoc *jdoc_new(void);
void jdoc_free(JDoc *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(JDoc, jdoc_free)

void jdoc_begin_object(JDoc *d);
void jdoc_end_object(JDoc *d);
void jdoc_begin_array(JDoc *d);
void jdoc_end_array(JDoc *d);
void jdoc_member(JDoc *d, const char *name);
void jdoc_string(JDoc *d, const char *s); /* NULL: null */
void jdoc_int(JDoc *d, int64_t v);
void jdoc_double(JDoc *d, double v);
void jdoc_bool(JDoc *d, gboolean v);
void jdoc_null(JDoc *d);

/* The document as text (g_free), rendered by the module; NULL with *err
 * = "cannot load the JSON module: REASON" when it cannot be loaded. */
char *jdoc_pretty_text(const JDoc *d, GError **err);

#endif
