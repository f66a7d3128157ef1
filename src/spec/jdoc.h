/* jdoc.h - a JSON document written through json-glib's builder, without
 * linking json-glib into the command (module.h): the calls are recorded
 * (JDocOp, one per builder call, json-glib's order and meaning) and
 * replayed into a JsonBuilder by the JSON module, JDOC_MODULE
 * (src/sim/json/jdoc_render.c), loaded only when a document is printed.
 * tcc-gen writes JSON only for `--explain --json`, tcc-sim only for
 * `--trace`: json-glib and the GObject and GIO libraries it needs were ~4-6
 * ms of CPU at every start of each (docs/testing.md).  Shared by the
 * compiler and the simulator; src/sim/jdoc.c implements it. */
#ifndef TCC_JDOC_H
#define TCC_JDOC_H

#include <glib.h>
#include <stdint.h>

#define JDOC_MODULE "tcc-json.so"
#define JDOC_RENDER "jdoc_render"                 /* the module's JDocRenderFns */
#define JDOC_RENDER_COMPACT "jdoc_render_compact"

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

/* The module's entry points: the recorded document as json-glib prints it,
 * pretty with a final newline (jdoc_render), or on one line without one
 * (jdoc_render_compact); g_free. */
typedef char *(*JDocRenderFn)(const JDocOp *ops, guint n);
char *jdoc_render(const JDocOp *ops, guint n);
char *jdoc_render_compact(const JDocOp *ops, guint n);

/* A program that links the module's source in (the fuzz targets, which run
 * from directories without the module) gives its entry points here; others
 * load the module on the first document printed. */
void jdoc_use_renderers(JDocRenderFn pretty, JDocRenderFn compact);

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
void jdoc_reset(JDoc *d); /* empty again, for the next document */

/* The document as text (g_free), rendered by the module: pretty with a
 * final newline, or compact on one line; NULL with *err = "cannot load the
 * JSON module: REASON" when it cannot be loaded.  Thread-safe. */
char *jdoc_pretty_text(const JDoc *d, GError **err);
char *jdoc_compact_text(const JDoc *d, GError **err);
/* Load the module now (so that a missing one fails before any work), with
 * the same error; TRUE when it is loaded or the renderers were given. */
gboolean jdoc_load(GError **err);

#endif
