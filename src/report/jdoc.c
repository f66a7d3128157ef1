/* jdoc.c - recording a JSON document for the JSON module (jdoc.h). */
#include "jdoc.h"

#include "module.h"

struct JDoc {
  GArray *ops;         /* JDocOp                          */
  GStringChunk *text;  /* the strings the ops point into  */
};

JDoc *jdoc_new(void) {
  JDoc *d = g_new0(JDoc, 1);
  d->ops = g_array_new(FALSE, FALSE, sizeof(JDocOp));
  d->text = g_string_chunk_new(1024);
  return d;
}

void jdoc_free(JDoc *d) {
  if (!d) return;
  g_array_free(d->ops, TRUE);
  g_string_chunk_free(d->text);
  g_free(d);
}

static void put(JDoc *d, JDocKind kind, int64_t i, double v, const char *s) {
  JDocOp op = {kind, i, v, s ? g_string_chunk_insert(d->text, s) : NULL};
  g_array_append_val(d->ops, op);
}

void jdoc_begin_object(JDoc *d) { put(d, JD_BEGIN_OBJECT, 0, 0, NULL); }
void jdoc_end_object(JDoc *d) { put(d, JD_END_OBJECT, 0, 0, NULL); }
void jdoc_begin_array(JDoc *d) { put(d, JD_BEGIN_ARRAY, 0, 0, NULL); }
void jdoc_end_array(JDoc *d) { put(d, JD_END_ARRAY, 0, 0, NULL); }
void jdoc_member(JDoc *d, const char *name) { put(d, JD_MEMBER, 0, 0, name); }
void jdoc_string(JDoc *d, const char *s) { put(d, s ? JD_STRING : JD_NULL, 0, 0, s); }
void jdoc_int(JDoc *d, int64_t v) { put(d, JD_INT, v, 0, NULL); }
void jdoc_double(JDoc *d, double v) { put(d, JD_DOUBLE, 0, v, NULL); }
void jdoc_bool(JDoc *d, gboolean v) { put(d, JD_BOOL, v ? 1 : 0, 0, NULL); }
void jdoc_null(JDoc *d) { put(d, JD_NULL, 0, 0, NULL); }

char *jdoc_pretty_text(const JDoc *d, GError **err) {
  g_autoptr(GError) e = NULL;
  JDocRenderFn render = (JDocRenderFn)tcc_module_symbol(JDOC_MODULE, JDOC_RENDER, &e);
  if (!render) {
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "cannot load the JSON module: %s", e->message);
    return NULL;
  }
  return render((const JDocOp *)(const void *)d->ops->data, d->ops->len);
}
