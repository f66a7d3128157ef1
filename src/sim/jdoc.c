/* jdoc.c - recording a JSON document for the JSON module (jdoc.h). */
#include "jdoc.h"

#include "json_num.h"

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
  /* JSON text is UTF-8: bytes that are not (a file name, a source line's
   * comment may hold any) become U+FFFD (json_utf8); valid text is not
   * copied (a trace has many strings) */
  g_autofree char *valid = s && !g_utf8_validate(s, -1, NULL) ? json_utf8(s) : NULL;
  if (valid) s = valid;
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

void jdoc_reset(JDoc *d) {
  g_array_set_size(d->ops, 0);
  g_string_chunk_clear(d->text);
}

/* The renderers, once resolved (or given); guarded by lock. */
static GMutex lock;
static JDocRenderFn pretty_fn, compact_fn;

void jdoc_use_renderers(JDocRenderFn pretty, JDocRenderFn compact) {
  g_mutex_lock(&lock);
  pretty_fn = pretty;
  compact_fn = compact;
  g_mutex_unlock(&lock);
}

static gboolean renderers(JDocRenderFn *pretty, JDocRenderFn *compact, GError **err) {
  g_mutex_lock(&lock);
  g_autoptr(GError) e = NULL;
  if (!pretty_fn || !compact_fn) {
    gpointer p = tcc_module_symbol(JDOC_MODULE, JDOC_RENDER, &e);
    gpointer c = p ? tcc_module_symbol(JDOC_MODULE, JDOC_RENDER_COMPACT, &e) : NULL;
    if (c) pretty_fn = (JDocRenderFn)p, compact_fn = (JDocRenderFn)c;
  }
  *pretty = pretty_fn;
  *compact = compact_fn;
  g_mutex_unlock(&lock);
  if (*pretty && *compact) return TRUE;
  g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "cannot load the JSON module: %s", e ? e->message : "?");
  return FALSE;
}

gboolean jdoc_load(GError **err) {
  JDocRenderFn pretty, compact;
  return renderers(&pretty, &compact, err);
}

char *jdoc_pretty_text(const JDoc *d, GError **err) {
  JDocRenderFn pretty, compact;
  if (!renderers(&pretty, &compact, err)) return NULL;
  return pretty((const JDocOp *)(const void *)d->ops->data, d->ops->len);
}

char *jdoc_compact_text(const JDoc *d, GError **err) {
  JDocRenderFn pretty, compact;
  if (!renderers(&pretty, &compact, err)) return NULL;
  return compact((const JDocOp *)(const void *)d->ops->data, d->ops->len);
}
