/* shape_suite.c - a shape suite file (shape_suite.h) -> its shapes.  The
 * YAML goes through the plan's tree builder (plan_yaml.c: every limit
 * enforced while parsing); each shape through wl_problem_set and
 * wl_problem_validate, so a suite holds only shapes a plan could write. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "shape_suite.h"

typedef struct Ctx {
  const char *file;
  ShapeSuite *s;
  GError **err;
} Ctx;

static gboolean fail(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean fail(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return plan_fail(c->err, code, c->file, n->line, n->col, "%s", msg);
}

static int find(const char *key, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(key, names[i]) == 0) return i;
  return -1;
}

static gboolean unknown_key(Ctx *c, const PNode *k, const char *where, const char *const *names, int n) {
  return plan_unknown_key(c->err, c->file, k, where, names, n);
}

/* The dims of each problem, as `problem:` spells them. */
static const char *const p1_dims[] = {"d_model", "heads", "d_ff", "layers", "seqs", "rows", "quick"};
static const char *const d1_dims[] = {"d_model", "heads", "d_ff", "layers", "history", "steps", "quick"};
enum { NDIMS = 7 };

/* {DIM: N, ..., quick: true}: the problem's defaults but for the dims
 * written; heads follows d_model (d_model / 32) unless written. */
static gboolean load_shape(Ctx *c, ProblemKind kind, const PNode *m) {
  const char *const *names = kind == PROB_P1 ? p1_dims : d1_dims;
  g_autofree char *where = g_strdup_printf("in a %s shape", wl_problem_name(kind));
  if (m->kind != PN_MAP) {
    g_autofree char *got = plan_describe_node(m);
    return fail(c, PLAN_ERROR_TYPE, m, "a shape must be a mapping of dims, got %s", got);
  }
  Shape sh = {.line = m->line};
  wl_problem_default(&sh.dims, kind);
  gboolean heads = FALSE;
  for (int i = 0; i < plan_map_len(m); i++) {
    const PNode *k = plan_map_key(m, i), *v = plan_map_val(m, i);
    int idx = find(k->text, names, NDIMS);
    if (idx < 0) return unknown_key(c, k, where, names, NDIMS);
    g_autofree char *got = plan_describe_node(v);
    const char *t = v->kind == PN_SCALAR && v->plain ? v->text : "";
    if (strcmp(names[idx], "quick") == 0) {
      if (strcmp(t, "true") && strcmp(t, "false"))
        return fail(c, PLAN_ERROR_TYPE, v, "'quick' must be true or false, got %s", got);
      sh.quick = t[0] == 't';
      continue;
    }
    if (!*t || strspn(t, "0123456789") != strlen(t))
      return fail(c, PLAN_ERROR_TYPE, v, "'%s' must be a decimal integer, got %s", names[idx], got);
    if (strlen(t) > 9) /* far out of every dim's range; strtol cannot overflow below this */
      return fail(c, PLAN_ERROR_RANGE, v, "%s=%s is out of range", names[idx], t);
    g_autoptr(GError) e = NULL;
    if (!wl_problem_set(&sh.dims, names[idx], strtol(t, NULL, 10), &e))
      return fail(c, PLAN_ERROR_RANGE, v, "%s", e->message);
    heads |= strcmp(names[idx], "heads") == 0;
  }
  if (!heads) sh.dims.heads = sh.dims.d_model / WL_HEAD_DIM;
  g_autoptr(GError) e = NULL;
  if (!wl_problem_validate(&sh.dims, &e)) return fail(c, PLAN_ERROR_RANGE, m, "%s", e->message);
  if (c->s->shapes->len >= SHAPE_SUITE_MAX)
    return fail(c, PLAN_ERROR_LIMIT, m, "more than %d shapes", SHAPE_SUITE_MAX);
  g_array_append_val(c->s->shapes, sh);
  return TRUE;
}

static gboolean load_top(Ctx *c, const PTree *t) {
  static const char *const top[] = {"version", "p1", "d1"};
  if (!t->root)
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "missing required key 'version'");
  if (t->root->kind != PN_MAP) {
    g_autofree char *got = plan_describe_node(t->root);
    return fail(c, PLAN_ERROR_STRUCTURE, t->root, "a shape suite must be a mapping, got %s", got);
  }
  const PNode *val[3] = {NULL, NULL, NULL};
  for (int i = 0; i < plan_map_len(t->root); i++) {
    const PNode *k = plan_map_key(t->root, i);
    int idx = find(k->text, top, 3);
    if (idx < 0) return unknown_key(c, k, "at top level", top, 3);
    val[idx] = plan_map_val(t->root, i);
  }
  if (!val[0])
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "missing required key 'version'");
  if (val[0]->kind != PN_SCALAR || strcmp(val[0]->text, "1") != 0) {
    g_autofree char *got = plan_describe_node(val[0]);
    return fail(c, PLAN_ERROR_VERSION, val[0], "unsupported shape suite version %s (this tool reads version %d)",
                got, SHAPE_SUITE_VERSION);
  }
  for (int p = 1; p <= 2; p++) {
    const PNode *seq = val[p];
    if (!seq) continue;
    if (seq->kind != PN_SEQ) {
      g_autofree char *got = plan_describe_node(seq);
      return fail(c, PLAN_ERROR_TYPE, seq, "'%s' must be a list of shapes, got %s", top[p], got);
    }
    for (guint i = 0; i < seq->kids->len; i++)
      if (!load_shape(c, p == 1 ? PROB_P1 : PROB_D1, g_ptr_array_index(seq->kids, i))) return FALSE;
  }
  if (c->s->shapes->len == 0)
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "the suite lists no shape (p1: or d1:)");
  return TRUE;
}

ShapeSuite *shape_suite_parse(const char *file, const char *text, size_t len, GError **err) {
  g_autoptr(PTree) t = plan_yaml_parse(file, text, len, err);
  if (!t) return NULL;
  g_autoptr(ShapeSuite) s = g_new0(ShapeSuite, 1);
  s->file = g_strdup(file);
  s->shapes = g_array_new(FALSE, FALSE, sizeof(Shape));
  Ctx c = {file, s, err};
  if (!load_top(&c, t)) return NULL;
  return g_steal_pointer(&s);
}

ShapeSuite *shape_suite_load(const char *file, GError **err) {
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!plan_read_text(file, "shape suite", &text, &len, err)) return NULL;
  return shape_suite_parse(file, text, len, err);
}

void shape_suite_free(ShapeSuite *s) {
  if (!s) return;
  if (s->shapes) g_array_free(s->shapes, TRUE);
  g_free(s->file);
  g_free(s);
}

char *shape_text(const Problem *p) {
  g_autofree char *canon = wl_problem_canonical(p); /* ".problem p1 d_model=..." */
  return g_strdup(canon + strlen(".problem p1 "));
}
