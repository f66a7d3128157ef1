/* plan_yaml.c - YAML text -> a small tree of nodes (PTree), with libyaml's
 * event API so that every limit is enforced while parsing, before anything
 * is built from hostile input:
 *
 *   size <= PLAN_MAX_BYTES, nesting <= PLAN_MAX_DEPTH, scalars <=
 *   PLAN_MAX_SCALAR bytes, nodes <= PLAN_MAX_NODES, one document, no anchors,
 *   aliases or tags (which kills alias bombs), scalar keys, unique keys.
 *
 * libyaml marks are 0-based; every PNode and message here is 1-based.
 */
#include <stdarg.h>
#include <string.h>
#include <yaml.h>

#include "file_read.h"
#include "plan_internal.h"
#include "text_escape.h"

G_DEFINE_QUARK(tcc-plan-error-quark, plan_error)

gboolean plan_fail(GError **err, PlanErrorCode code, const char *file, int line, int col,
                   const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  g_set_error(err, PLAN_ERROR, code, "%s:%d:%d: error: %s", name, line, col, msg);
  return FALSE;
}

char *plan_quote(const char *s) {
  enum { MAX = 64 };
  GString *q = g_string_new(NULL);
  size_t n = strlen(s), cut = n;
  if (n > MAX) {
    cut = MAX;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--; /* UTF-8 boundary */
  }
  for (size_t i = 0; i < cut; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f)
      g_string_append_printf(q, "\\x%02x", c);
    else
      g_string_append_c(q, (char)c);
  }
  if (cut < n) g_string_append(q, "...");
  return g_string_free(q, FALSE);
}

char *plan_describe_node(const PNode *n) {
  if (n->kind == PN_MAP) return g_strdup("a mapping");
  if (n->kind == PN_SEQ) return g_strdup("a sequence");
  if (n->plain && n->text[0] == '\0') return g_strdup("an empty value");
  g_autofree char *q = plan_quote(n->text);
  if (!n->plain) return g_strdup_printf("a quoted string \"%s\"", q);
  return g_strdup_printf("'%s'", q);
}

int plan_map_len(const PNode *map) { return (int)map->kids->len / 2; }

const PNode *plan_map_key(const PNode *map, int i) {
  return g_ptr_array_index(map->kids, 2 * i);
}

const PNode *plan_map_val(const PNode *map, int i) {
  return g_ptr_array_index(map->kids, 2 * i + 1);
}

gboolean plan_node_empty(const PNode *n) {
  return n->kind == PN_SCALAR && n->plain && n->text[0] == '\0';
}

/* ---- building the tree from events ---- */

typedef struct Builder {
  const char *file;
  const char *text;
  size_t len;
  PTree *t;
  GPtrArray *open; /* containers being filled, innermost last */
  int docs, count;
} Builder;

static void node_free(gpointer p) {
  PNode *n = p;
  g_free(n->text);
  if (n->kids) g_ptr_array_unref(n->kids);
  g_free(n);
}

void plan_yaml_free(PTree *t) {
  if (!t) return;
  g_ptr_array_unref(t->nodes);
  g_free(t);
}

static gboolean fail_at(Builder *b, GError **err, PlanErrorCode code, const yaml_mark_t *m,
                        const char *msg) {
  return plan_fail(err, code, b->file, (int)m->line + 1, (int)m->column + 1, "%s", msg);
}

/* libyaml's problem text and mark.  Reader errors (bad encoding) carry a byte
 * offset instead of a mark: count lines up to it. */
static gboolean syntax_error(Builder *b, const yaml_parser_t *p, GError **err) {
  const char *problem = p->problem ? p->problem : "invalid YAML";
  if (p->error == YAML_MEMORY_ERROR)
    return plan_fail(err, PLAN_ERROR_LIMIT, b->file, 1, 1, "out of memory while parsing");
  if (p->error == YAML_READER_ERROR) {
    int line = 1, col = 1;
    for (size_t i = 0; i < p->problem_offset && i < b->len; i++, col++)
      if (b->text[i] == '\n') line++, col = 0;
    if (p->problem_value >= 0)
      return plan_fail(err, PLAN_ERROR_SYNTAX, b->file, line, col, "%s (byte 0x%02x)",
                       problem, (unsigned)p->problem_value);
    return plan_fail(err, PLAN_ERROR_SYNTAX, b->file, line, col, "%s", problem);
  }
  int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
  size_t at = p->problem_mark.index;
  if (at < b->len && b->text[at] == '\t') /* libyaml: "found character that cannot start any token" */
    return plan_fail(err, PLAN_ERROR_SYNTAX, b->file, line, col,
                     "a tab character: YAML indents with spaces, and a tab may not start a token");
  if (p->context)
    return plan_fail(err, PLAN_ERROR_SYNTAX, b->file, line, col, "%s (%s at line %d)",
                     problem, p->context, (int)p->context_mark.line + 1);
  return plan_fail(err, PLAN_ERROR_SYNTAX, b->file, line, col, "%s", problem);
}

/* Anchors, tags and the node budget: checked on every node event. */
static gboolean check_node(Builder *b, const yaml_char_t *anchor, const yaml_char_t *tag,
                           const yaml_mark_t *m, GError **err) {
  if (anchor) return fail_at(b, err, PLAN_ERROR_LIMIT, m, "anchors and aliases are not allowed in plans");
  if (tag) return fail_at(b, err, PLAN_ERROR_LIMIT, m, "tags are not allowed in plans");
  if (++b->count > PLAN_MAX_NODES) {
    g_autofree char *msg = g_strdup_printf("more than %d YAML nodes in a plan", PLAN_MAX_NODES);
    return fail_at(b, err, PLAN_ERROR_LIMIT, m, msg);
  }
  return TRUE;
}

static PNode *new_node(Builder *b, PNodeKind kind, const yaml_mark_t *m) {
  PNode *n = g_new0(PNode, 1);
  n->kind = kind;
  n->line = (int)m->line + 1;
  n->col = (int)m->column + 1;
  if (kind != PN_SCALAR) n->kids = g_ptr_array_new();
  g_ptr_array_add(b->t->nodes, n);
  return n;
}

/* Put `n` into the innermost open container (or make it the root).  A key
 * must be a scalar not seen before in its mapping. */
static gboolean attach(Builder *b, PNode *n, GError **err) {
  if (b->open->len == 0) {
    b->t->root = n;
    return TRUE;
  }
  PNode *parent = g_ptr_array_index(b->open, b->open->len - 1);
  if (parent->kind == PN_MAP && parent->kids->len % 2 == 0) {
    if (n->kind != PN_SCALAR)
      return plan_fail(err, PLAN_ERROR_STRUCTURE, b->file, n->line, n->col,
                       "mapping keys must be scalars");
    for (guint i = 0; i < parent->kids->len; i += 2) {
      const PNode *k = g_ptr_array_index(parent->kids, i);
      if (strcmp(k->text, n->text) != 0) continue;
      g_autofree char *q = plan_quote(n->text);
      return plan_fail(err, PLAN_ERROR_DUPLICATE, b->file, n->line, n->col,
                       "duplicate key '%s' (first at line %d)", q, k->line);
    }
  }
  g_ptr_array_add(parent->kids, n);
  return TRUE;
}

static gboolean on_scalar(Builder *b, const yaml_event_t *ev, GError **err) {
  const yaml_mark_t *m = &ev->start_mark;
  if (!check_node(b, ev->data.scalar.anchor, ev->data.scalar.tag, m, err)) return FALSE;
  size_t len = ev->data.scalar.length;
  if (len > PLAN_MAX_SCALAR) {
    g_autofree char *msg = g_strdup_printf("scalar of %zu bytes is longer than the limit of %d",
                                           len, PLAN_MAX_SCALAR);
    return fail_at(b, err, PLAN_ERROR_LIMIT, m, msg);
  }
  if (memchr(ev->data.scalar.value, '\0', len))
    return fail_at(b, err, PLAN_ERROR_LIMIT, m, "scalars may not contain NUL characters");
  PNode *n = new_node(b, PN_SCALAR, m);
  n->text = g_strndup((const char *)ev->data.scalar.value, len);
  n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  return attach(b, n, err);
}

static gboolean on_open(Builder *b, PNodeKind kind, const yaml_char_t *anchor,
                        const yaml_char_t *tag, const yaml_mark_t *m, GError **err) {
  if (!check_node(b, anchor, tag, m, err)) return FALSE;
  if (b->open->len + 1 > PLAN_MAX_DEPTH) {
    g_autofree char *msg = g_strdup_printf("nesting deeper than %d levels", PLAN_MAX_DEPTH);
    return fail_at(b, err, PLAN_ERROR_LIMIT, m, msg);
  }
  PNode *n = new_node(b, kind, m);
  if (!attach(b, n, err)) return FALSE;
  g_ptr_array_add(b->open, n);
  return TRUE;
}

static gboolean on_event(Builder *b, const yaml_event_t *ev, GError **err) {
  const yaml_mark_t *m = &ev->start_mark;
  switch (ev->type) {
  case YAML_DOCUMENT_START_EVENT:
    if (++b->docs > 1)
      return fail_at(b, err, PLAN_ERROR_STRUCTURE, m, "a plan is a single YAML document");
    b->t->line = (int)m->line + 1;
    b->t->col = (int)m->column + 1;
    return TRUE;
  case YAML_ALIAS_EVENT:
    return fail_at(b, err, PLAN_ERROR_LIMIT, m, "anchors and aliases are not allowed in plans");
  case YAML_SCALAR_EVENT:
    return on_scalar(b, ev, err);
  case YAML_SEQUENCE_START_EVENT:
    return on_open(b, PN_SEQ, ev->data.sequence_start.anchor, ev->data.sequence_start.tag, m,
                   err);
  case YAML_MAPPING_START_EVENT:
    return on_open(b, PN_MAP, ev->data.mapping_start.anchor, ev->data.mapping_start.tag, m,
                   err);
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    if (b->open->len > 0) g_ptr_array_remove_index(b->open, b->open->len - 1);
    return TRUE;
  default:
    return TRUE;
  }
}

PTree *plan_yaml_parse(const char *file, const char *text, size_t len, GError **err) {
  if (len > PLAN_MAX_BYTES) {
    plan_fail(err, PLAN_ERROR_LIMIT, file, 1, 1, "plan is larger than the limit of %d bytes",
              PLAN_MAX_BYTES);
    return NULL;
  }
  g_autoptr(PTree) t = g_new0(PTree, 1);
  t->nodes = g_ptr_array_new_with_free_func(node_free);
  t->line = t->col = 1;
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) {
    plan_fail(err, PLAN_ERROR_LIMIT, file, 1, 1, "out of memory while parsing");
    return NULL;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  Builder b = {file, text, len, t, g_ptr_array_new(), 0, 0};
  gboolean ok = TRUE, done = FALSE;
  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      ok = syntax_error(&b, &p, err);
      break;
    }
    done = ev.type == YAML_STREAM_END_EVENT;
    ok = on_event(&b, &ev, err);
    yaml_event_delete(&ev);
  }
  g_ptr_array_unref(b.open);
  yaml_parser_delete(&p);
  return ok ? g_steal_pointer(&t) : NULL;
}

gboolean plan_read_text(const char *file, const char *what, char **text, gsize *len, GError **err) {
  int errnum = 0;
  if ((*text = file_read(file, PLAN_MAX_BYTES, 0, len, &errnum))) return TRUE;
  if (errnum == FILE_READ_TOO_LARGE) /* the parser's own limit, said before the rest is read */
    return plan_fail(err, PLAN_ERROR_LIMIT, file, 1, 1, "%s is larger than the limit of %d bytes", what,
                     PLAN_MAX_BYTES);
  return plan_fail(err, PLAN_ERROR_IO, file, 1, 1, "cannot read %s: %s", what, g_strerror(errnum));
}

gboolean plan_unknown_key(GError **err, const char *file, const PNode *k, const char *where,
                          const char *const *names, int n) {
  g_autofree char *q = plan_quote(k->text);
  const char *s = plan_did_you_mean(k->text, names, n);
  if (s)
    return plan_fail(err, PLAN_ERROR_UNKNOWN_KEY, file, k->line, k->col,
                     "unknown key '%s' %s; did you mean '%s'?", q, where, s);
  return plan_fail(err, PLAN_ERROR_UNKNOWN_KEY, file, k->line, k->col, "unknown key '%s' %s", q, where);
}
