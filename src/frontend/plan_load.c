/* plan_load.c - a plan's YAML tree (plan_yaml.c) -> a validated Plan.
 *
 * Order of work, so that every check sees what it depends on: the top-level
 * keys, `version`, `hardware` (through sim_machine_set/validate), then each
 * problem section: its keys are resolved against the knob table
 * (plan_schema.c), `problem:` dims are applied, defaults computed from the
 * dims and the hardware, then every knob in file order (type, range and
 * divisibility, "not supported yet"), then the "has no effect unless" rules.
 * The first error stops the load.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "text_escape.h"

typedef struct Ctx {
  const char *file;
  Plan *plan;
  GError **err;
  gboolean strict;    /* tcc-gen --strict: no fallback to the shape      */
  ProblemKind kind;   /* the section being loaded                         */
  GArray *later;      /* Leaf: written knobs checked once all are in      */
} Ctx;

/* One `key: value` resolved to a schema entry (index into the level's paths). */
typedef struct Leaf {
  int idx;
  const PNode *key, *val;
  const PNode *group; /* key of the enclosing group (`problem:`), or NULL */
} Leaf;

/* The keys valid in one mapping of the plan and its one-level groups. */
typedef struct Level {
  const char *where;         /* "d1", "hardware"; NULL: top level          */
  const char *const *paths;  /* "sms", "dma.engines", ...                  */
  const gboolean *applies;   /* per path; NULL: all apply                  */
  const char *const *alias;  /* per path, a name to suggest it for; or NULL */
  int n;
} Level;

static gboolean fail_at(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean fail_at(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return plan_fail(c->err, code, c->file, n->line, n->col, "%s", msg);
}

/* ---- scalars ---- */

static gboolean type_error(Ctx *c, const char *key, const char *what, const PNode *v) {
  g_autofree char *got = plan_describe_node(v);
  g_autofree char *k = plan_quote(key);
  return fail_at(c, PLAN_ERROR_TYPE, v, "'%s' must be %s, got %s", k, what, got);
}

/* `key: 123`: a plain decimal integer, optional '-', no leading zeros; an
 * integer that overflows a long is an error, never wrapped. */
static gboolean scalar_int(Ctx *c, const char *key, const PNode *v, long *out) {
  if (v->kind != PN_SCALAR || !v->plain || !v->text[0]) return type_error(c, key, "an integer", v);
  const char *s = v->text + (v->text[0] == '-');
  gboolean digits = *s != '\0' && strspn(s, "0123456789") == strlen(s);
  if (!digits || (s[0] == '0' && s[1])) {
    gboolean numeric = strchr("+-.0123456789", v->text[0]) != NULL;
    return type_error(c, key, numeric ? "a decimal integer" : "an integer", v);
  }
  unsigned long acc = 0, lim = v->text[0] == '-' ? (unsigned long)LONG_MAX + 1 : LONG_MAX;
  for (; *s; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (acc > (lim - d) / 10) {
      g_autofree char *k = plan_quote(key);
      return fail_at(c, PLAN_ERROR_RANGE, v, "'%s' value %s overflows", k, v->text);
    }
    acc = acc * 10 + d;
  }
  *out = v->text[0] == '-' ? (long)(0 - acc) : (long)acc;
  return TRUE;
}

/* `key: true` or `key: false` (plain; not yes/no/on/off/1/0). */
static gboolean scalar_bool(Ctx *c, const char *key, const PNode *v, long *out) {
  if (v->kind == PN_SCALAR && v->plain && (!strcmp(v->text, "true") || !strcmp(v->text, "false"))) {
    *out = v->text[0] == 't';
    return TRUE;
  }
  return type_error(c, key, "true or false", v);
}

/* `key: NAME` with NAME one of `names` (quoted or not). */
static gboolean scalar_enum(Ctx *c, const char *key, const char *const *names, const PNode *v,
                            long *out) {
  for (int i = 0; v->kind == PN_SCALAR && names[i]; i++)
    if (strcmp(v->text, names[i]) == 0) {
      *out = i;
      return TRUE;
    }
  g_autofree char *list = g_strjoinv(", ", (char **)names);
  g_autofree char *got = plan_describe_node(v);
  g_autofree char *k = plan_quote(key);
  return fail_at(c, PLAN_ERROR_TYPE, v, "'%s' must be one of %s; got %s", k, list, got);
}

/* ---- resolving keys against a level ---- */

static int edit_distance(const char *a, const char *b) {
  size_t n = strlen(b);
  g_autofree int *row = g_new(int, n + 1);
  for (size_t j = 0; j <= n; j++) row[j] = (int)j;
  for (size_t i = 1; a[i - 1]; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= n; j++) {
      int up = row[j];
      int best = MIN(row[j] + 1, row[j - 1] + 1);
      row[j] = MIN(best, diag + (a[i - 1] != b[j - 1]));
      diag = up;
    }
  }
  return row[n];
}

/* The name a path shows at this point: its first component at the level's
 * top, the rest inside `group`; NULL when the path is not at this point. */
static const char *name_at(const char *path, const char *group, char *buf, size_t size) {
  if (group) {
    size_t g = strlen(group);
    return strncmp(path, group, g) == 0 && path[g] == '.' ? path + g + 1 : NULL;
  }
  g_strlcpy(buf, path, size);
  char *dot = strchr(buf, '.');
  if (dot) *dot = '\0';
  return buf;
}

/* The closest valid name within edit distance 2 (into buf), or NULL. */
static const char *suggest(const Level *lvl, const char *group, const char *key, char *buf,
                           size_t size) {
  int best = 3;
  for (int i = 0; i < lvl->n; i++) {
    char tmp[PLAN_MAX_SCALAR + 1];
    const char *name = name_at(lvl->paths[i], group, tmp, sizeof tmp);
    if (!name || (lvl->applies && !lvl->applies[i])) continue;
    int d = lvl->alias && lvl->alias[i] && !strcmp(lvl->alias[i], key) ? 0
                                                                       : edit_distance(key, name);
    if (d < best && d < (int)strlen(name)) {
      best = d;
      g_strlcpy(buf, name, size);
    }
  }
  return best <= 2 ? buf : NULL;
}

static gboolean unknown_key(Ctx *c, const Level *lvl, const char *group, const PNode *k) {
  g_autofree char *q = plan_quote(k->text);
  g_autofree char *where = !lvl->where ? g_strdup("at top level")
                           : group     ? g_strdup_printf("in %s.%s", lvl->where, group)
                                       : g_strdup_printf("in %s", lvl->where);
  char buf[PLAN_MAX_SCALAR + 1];
  const char *s = suggest(lvl, group, k->text, buf, sizeof buf);
  if (s) return fail_at(c, PLAN_ERROR_UNKNOWN_KEY, k, "unknown key '%s' %s; did you mean '%s'?",
                        q, where, s);
  return fail_at(c, PLAN_ERROR_UNKNOWN_KEY, k, "unknown key '%s' %s", q, where);
}

/* Index of `path` in the level (-1), and whether it names a group: *any
 * says whether an applicable path is in that group. */
static int find_path(const Level *lvl, const char *path, gboolean *group, gboolean *any) {
  size_t n = strlen(path);
  *group = *any = FALSE;
  for (int i = 0; i < lvl->n; i++) {
    const char *p = lvl->paths[i];
    gboolean ok = !lvl->applies || lvl->applies[i];
    if (strcmp(p, path) == 0) {
      *any = ok;
      return i;
    }
    if (strncmp(p, path, n) == 0 && p[n] == '.') {
      *group = TRUE;
      *any = *any || ok;
    }
  }
  return -1;
}

/* Does `path` prefix a path of the level ("store_spacing" of
 * "store_spacing.qkv")? */
static gboolean has_group(const Level *lvl, const char *path) {
  size_t n = strlen(path);
  for (int i = 0; i < lvl->n; i++)
    if (strncmp(lvl->paths[i], path, n) == 0 && lvl->paths[i][n] == '.') return TRUE;
  return FALSE;
}

/* Every key of `map` (and of its groups) -> a Leaf, in file order.  A knob
 * that is also a group (`store_spacing: 32`, `store_spacing: {qkv: 16}`)
 * takes a scalar or a mapping, in which `default` is the knob itself
 * (`store_spacing: {default: 32, qkv: 16}`). */
static gboolean resolve(Ctx *c, const Level *lvl, const PNode *map, const char *group,
                        const PNode *gkey, GArray *out) {
  for (int i = 0; i < plan_map_len(map); i++) {
    const PNode *k = plan_map_key(map, i), *v = plan_map_val(map, i);
    g_autofree char *path = group ? g_strconcat(group, ".", k->text, NULL) : g_strdup(k->text);
    gboolean is_group, any;
    int idx = find_path(lvl, path, &is_group, &any);
    if (idx >= 0 && v->kind == PN_MAP && has_group(lvl, path)) { /* the mapping form */
      idx = -1;
      is_group = TRUE;
    } else if (idx < 0 && group && strcmp(k->text, "default") == 0) { /* {default: 32} */
      gboolean g2, any2;
      int self = find_path(lvl, group, &g2, &any2);
      if (self >= 0) idx = self, any = any2, is_group = FALSE;
    }
    if (strchr(k->text, '.')) { /* `panels.w1: 32` is not a key */
      idx = -1;
      is_group = FALSE;
    }
    if (idx < 0 && !is_group) return unknown_key(c, lvl, group, k);
    if (!any) {
      g_autofree char *q = plan_quote(path);
      return fail_at(c, PLAN_ERROR_NOT_APPLICABLE, k, "'%s' does not apply to %s", q, lvl->where);
    }
    if (idx >= 0) {
      g_array_append_val(out, ((Leaf){idx, k, v, gkey}));
      continue;
    }
    if (plan_node_empty(v)) continue; /* `panels:` with nothing in it */
    if (v->kind != PN_MAP) return type_error(c, k->text, "a mapping", v);
    if (!resolve(c, lvl, v, path, k, out)) return FALSE;
  }
  return TRUE;
}

/* ---- hardware ---- */

/* Plan key -> `.machine` key of sim_machine_params.  ORDER-MATTERS: hw_loc. */
static const char *const hw_paths[PLAN_NHW] = {
    "sms",      "wgs_per_sm",   "rf_kib",   "vl",        "mma_arrays", "sfu",          "sh_kib",
    "dma.engines", "dma.depth", "hbm_channels", "noc_bits", "multicast", "reduce_units"};
static const char *const hw_full[PLAN_NHW] = {
    "hardware.sms",         "hardware.wgs_per_sm",   "hardware.rf_kib",
    "hardware.vl",          "hardware.mma_arrays",   "hardware.sfu",
    "hardware.sh_kib",      "hardware.dma.engines",  "hardware.dma.depth",
    "hardware.hbm_channels", "hardware.noc_bits",    "hardware.multicast",
    "hardware.reduce_units"};
static const char *const hw_sim[PLAN_NHW] = {
    "sms",         "wgs_per_sm", "rf_kib", "vl",  "mma_arrays", "sfu",      "sh_kib",
    "dma_engines", "dma_depth",  "hbm",    "noc", "multicast",  "reduce"};

/* hardware:
 *   sms: 16            wgs_per_sm: 4     rf_kib: 64      vl: 16
 *   mma_arrays: 1      sfu: 8            sh_kib: 0       dma: {engines: 2, depth: 1}
 *   hbm_channels: 8    noc_bits: 512     multicast: true reduce_units: 0
 * every key optional; ranges and defaults are sim_machine_params'. */
static gboolean load_hardware(Ctx *c, const PNode *key, const PNode *val) {
  Machine *hw = &c->plan->hw;
  if (plan_node_empty(val)) return TRUE;
  if (val->kind != PN_MAP) return type_error(c, key->text, "a mapping", val);
  Level lvl = {"hardware", hw_paths, NULL, hw_sim, PLAN_NHW};
  g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(Leaf));
  if (!resolve(c, &lvl, val, NULL, NULL, leaves)) return FALSE;
  for (guint i = 0; i < leaves->len; i++) {
    const Leaf *l = &g_array_index(leaves, Leaf, i);
    gboolean is_bool = strcmp(hw_paths[l->idx], "multicast") == 0;
    long v;
    if (!(is_bool ? scalar_bool : scalar_int)(c, l->key->text, l->val, &v)) return FALSE;
    g_autoptr(GError) e = NULL;
    if (!sim_machine_set(hw, hw_sim[l->idx], v, &e))
      return fail_at(c, PLAN_ERROR_RANGE, l->val, "%s: %s", hw_full[l->idx], e->message);
    c->plan->hw_loc[l->idx] = (PlanLoc){l->key->line, l->key->col, hw_full[l->idx]};
  }
  g_autoptr(GError) e = NULL;
  if (!sim_machine_validate(hw, &e))
    return fail_at(c, PLAN_ERROR_RANGE, key, "hardware: %s", e->message);
  return TRUE;
}

const char *plan_hw_key(int i) { return i >= 0 && i < PLAN_NHW ? hw_paths[i] : NULL; }

const char *plan_hw_sim_key(int i) { return i >= 0 && i < PLAN_NHW ? hw_sim[i] : NULL; }

const char *plan_did_you_mean(const char *key, const char *const *names, int n) {
  int best = 3;
  const char *out = NULL;
  for (int i = 0; i < n; i++) {
    int d = edit_distance(key, names[i]);
    if (d < best && d < (int)strlen(names[i])) {
      best = d;
      out = names[i];
    }
  }
  return out;
}

PlanLoc plan_hw_loc(const Plan *p, const char *key) {
  if (key && g_str_has_prefix(key, "hardware.")) key += strlen("hardware.");
  for (int i = 0; key && i < PLAN_NHW; i++)
    if (strcmp(hw_paths[i], key) == 0) return p->hw_loc[i];
  return (PlanLoc){0, 0, NULL};
}

const char *plan_hw_path(int i) { return i >= 0 && i < PLAN_NHW ? hw_full[i] : NULL; }

char *plan_hw_value_text(const Plan *p, int i) {
  g_return_val_if_fail(i >= 0 && i < PLAN_NHW, NULL);
  for (int k = 0; k < sim_machine_nparams; k++) {
    const MachineParam *mp = &sim_machine_params[k];
    if (strcmp(mp->key, hw_sim[i]) != 0) continue;
    int v = *(const int *)((const char *)&p->hw + mp->offset);
    if (strcmp(hw_paths[i], "multicast") == 0) return g_strdup(v ? "true" : "false");
    return g_strdup_printf("%d", v);
  }
  return NULL; /* not reached: every hw_sim key is a parameter */
}

/* ---- problem sections ---- */

/* problem: {d_model: 128, heads: 4, d_ff: 512, layers: 2, history: 128, steps: 8}  (d1)
 * problem: {d_model: 256, heads: 8, d_ff: 1024, layers: 2, seqs: 2, rows: 256}    (p1)
 * each key optional (workload defaults); checked by wl_problem_set/validate. */
static gboolean load_dims(Ctx *c, PlanProblem *pp, const GArray *leaves) {
  const PNode *group = NULL;
  for (guint i = 0; i < leaves->len; i++) {
    const Leaf *l = &g_array_index(leaves, Leaf, i);
    if (plan_knobs[l->idx].type != KT_DIM) continue;
    long v;
    if (!scalar_int(c, l->key->text, l->val, &v)) return FALSE;
    g_autoptr(GError) e = NULL;
    if (!wl_problem_set(&pp->dims, l->key->text, v, &e))
      return fail_at(c, PLAN_ERROR_RANGE, l->val, "%s", e->message);
    group = l->group;
  }
  g_autoptr(GError) e = NULL;
  if (group && !wl_problem_validate(&pp->dims, &e))
    return fail_at(c, PLAN_ERROR_RANGE, group, "%s", e->message);
  return TRUE;
}

/* Any other knob, e.g. `sms_used: 16`, `panels: {w1: 32}`, `layout: row`:
 * type, then range/divisibility against dims and hardware, then "planned". */
static gboolean load_knob(Ctx *c, PlanProblem *pp, const Leaf *l) {
  const PlanKnobDef *k = &plan_knobs[l->idx];
  ProblemKind kind = pp->dims.kind;
  const char *key = l->key->text;
  long v;
  /* `auto`: an int knob checked against the shape, chosen by the compiler
   * (resolve_later: the value an unwritten knob takes, fitted to the shape) */
  if (k->type == KT_INT && k->check && l->val->kind == PN_SCALAR && l->val->plain &&
      strcmp(l->val->text, "auto") == 0) {
    pp->loc[l->idx] = (PlanLoc){l->key->line, l->key->col, k->full[kind]};
    pp->chosen[l->idx] = SCHED_AUTO;
    g_array_append_val(c->later, *l);
    return TRUE;
  }
  gboolean ok = k->type == KT_INT    ? scalar_int(c, key, l->val, &v)
                : k->type == KT_BOOL ? scalar_bool(c, key, l->val, &v)
                                     : scalar_enum(c, key, k->names, l->val, &v);
  if (!ok) return FALSE;
  g_autoptr(GString) msg = g_string_new(NULL);
  int code = plan_knob_check(k, pp, &c->plan->hw, v, msg);
  /* a rule against the dims or another knob: checked once every knob is in */
  if (code == PLAN_ERROR_DIVIDE || (code == PLAN_ERROR_RANGE && k->type == KT_INT && v >= k->min && v <= k->max))
    g_array_append_val(c->later, *l);
  else if (code)
    return fail_at(c, code, l->val, "%s", msg->str);
  *plan_knob_field(pp, k) = (int)v;
  pp->loc[l->idx] = (PlanLoc){l->key->line, l->key->col, k->full[kind]};
  if (k->step[kind] && v != k->def) {
    g_autofree char *text = plan_knob_value_text(k, v);
    return fail_at(c, PLAN_ERROR_PLANNED, l->val,
                   "'%s: %s' is not supported yet for %s (planned; docs/plan.md's status column)", k->path,
                   text, wl_problem_name(kind));
  }
  return TRUE;
}

/* Would v pass k's rules on the problem's default dims?  Then a refusal of
 * v is the shape's doing, not the value's (`k_chunk.qkv: 128` on d_model
 * 96), and the value falls back; a value no shape takes (`k_chunk.qkv:
 * 100`) is refused. */
static gboolean fits_some_shape(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v) {
  PlanProblem d = *pp;
  wl_problem_default(&d.dims, pp->dims.kind);
  g_autoptr(GString) msg = g_string_new(NULL);
  return plan_knob_check(k, &d, hw, v, msg) == 0;
}

/* The legal value of k nearest v (the lower one on a tie), or -1 with none
 * in the knob's range. */
static long nearest_legal(const PlanKnobDef *k, const PlanProblem *pp, const Machine *hw, long v) {
  g_autoptr(GString) msg = g_string_new(NULL);
  for (long d = 0; v - d >= k->min || v + d <= k->max; d++) {
    if (v - d >= k->min && v - d <= k->max && plan_knob_check(k, pp, hw, v - d, msg) == 0) return v - d;
    if (d && v + d <= k->max && v + d >= k->min && plan_knob_check(k, pp, hw, v + d, msg) == 0) return v + d;
  }
  return -1;
}

static void warn(Ctx *c, const PNode *at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void warn(Ctx *c, const PNode *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *name = text_escape(c->file); /* one line, whatever the name holds */
  g_ptr_array_add(c->plan->warnings[c->kind], g_strdup_printf("%s:%d:%d: warning: %s", name, at->line, at->col, msg));
}

/* The written knobs whose rules read the dims or other knobs, now that
 * every knob is in: `auto` takes the value an unwritten knob would (after
 * plan_problem_fit_defaults), a value that passes stays, and one that does
 * not falls back to the nearest legal value, with a warning, unless
 * --strict or no shape takes it. */
static gboolean resolve_later(Ctx *c, PlanProblem *pp) {
  const Machine *hw = &c->plan->hw;
  for (guint i = 0; i < c->later->len; i++) { /* auto: as if unwritten */
    const Leaf *l = &g_array_index(c->later, Leaf, i);
    if (pp->chosen[l->idx] == SCHED_AUTO) pp->loc[l->idx].line = 0;
  }
  plan_problem_fit_defaults(pp, hw);
  for (guint i = 0; i < c->later->len; i++) {
    const Leaf *l = &g_array_index(c->later, Leaf, i);
    const PlanKnobDef *k = &plan_knobs[l->idx];
    if (pp->chosen[l->idx] == SCHED_AUTO) pp->loc[l->idx] = (PlanLoc){l->key->line, l->key->col, k->full[pp->dims.kind]};
    long v = plan_knob_get(pp, k);
    g_autoptr(GString) msg = g_string_new(NULL);
    int code = plan_knob_check(k, pp, hw, v, msg);
    if (!code) continue;
    gboolean written = pp->chosen[l->idx] != SCHED_AUTO;
    long to = (!c->strict && (!written || fits_some_shape(k, pp, hw, v))) ? nearest_legal(k, pp, hw, v) : -1;
    if (to < 0) return fail_at(c, code, l->val, "%s", msg->str);
    *plan_knob_field(pp, k) = (int)to;
    if (written) {
      pp->chosen[l->idx] = SCHED_FALLBACK;
      warn(c, l->val, "%s; using %ld, the nearest value that fits (--strict refuses)", msg->str, to);
    }
  }
  return TRUE;
}

/* A knob written (to a value other than its default) while the knob it
 * depends on keeps it without effect. */
static gboolean check_needs(Ctx *c, PlanProblem *pp, const GArray *leaves) {
  for (guint i = 0; i < leaves->len; i++) {
    const Leaf *l = &g_array_index(leaves, Leaf, i);
    for (int j = 0; j < plan_nneeds; j++) {
      const PlanNeed *n = &plan_needs[j];
      if (strcmp(n->path, plan_knobs[l->idx].path) != 0) continue;
      if (n->only && !(n->only & (1u << pp->dims.kind))) continue;
      if (plan_knob_get(pp, &plan_knobs[l->idx]) == plan_knobs[l->idx].def) continue;
      int dep = plan_knob_index(n->needs);
      if (plan_knob_get(pp, &plan_knobs[dep]) >= n->needs_min) continue;
      if (pp->chosen[dep] == SCHED_FALLBACK || pp->chosen[l->idx] == SCHED_FALLBACK) {
        /* the knob it needs fell back to the shape: it goes to its default
         * too, and the knobs that need it in turn on the next pass */
        const PlanKnobDef *k = &plan_knobs[l->idx];
        g_autofree char *was = plan_knob_value_text(k, plan_knob_get(pp, k));
        g_autofree char *def = plan_knob_value_text(k, k->def);
        *plan_knob_field(pp, k) = k->def;
        pp->chosen[l->idx] = SCHED_FALLBACK;
        warn(c, l->val, "'%s: %s' has no effect unless %s, which the shape does not allow; using %s "
             "(--strict refuses)", n->path, was, n->text, def);
        return check_needs(c, pp, leaves);
      }
      return fail_at(c, PLAN_ERROR_CONFLICT, l->key, "'%s' has no effect unless %s", n->path,
                     n->text);
    }
  }
  return TRUE;
}

static void problem_defaults(Ctx *c, PlanProblem *pp, ProblemKind kind) {
  memset(pp, 0, sizeof *pp);
  wl_problem_default(&pp->dims, kind);
  pp->where = (PlanLoc){0, 0, wl_problem_name(kind)};
  plan_problem_defaults(pp, &c->plan->hw);
}

void plan_default_problem(PlanProblem *pp, ProblemKind kind, const Machine *hw) {
  memset(pp, 0, sizeof *pp);
  wl_problem_default(&pp->dims, kind);
  pp->where = (PlanLoc){0, 0, wl_problem_name(kind)};
  plan_problem_defaults(pp, hw);
  plan_problem_record(pp);
}

/* d1:                          (or p1:)
 *   problem: {...}             dims, see load_dims
 *   sms_used: 16  row_tile: 32  panels: {...}  k_chunk: {...}  k_split: {...}
 *   layout: row  weights: streamed  kv_writeback: direct  store_spacing: 0
 *   multicast: {...}  rf_grid: {...}  power: {...}  placement: {...}
 *   attention: {...}  ffn: {...}
 * (the full list with ranges: plan_knobs, docs/plan.md). */
static gboolean load_problem(Ctx *c, const PNode *key, const PNode *val, ProblemKind kind,
                             PlanProblem *pp) {
  pp->present = TRUE;
  c->kind = kind;
  pp->where = (PlanLoc){key->line, key->col, wl_problem_name(kind)};
  if (plan_node_empty(val)) return TRUE;
  if (val->kind != PN_MAP) return type_error(c, key->text, "a mapping", val);
  const char *paths[PLAN_NKNOBS];
  gboolean applies[PLAN_NKNOBS];
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    paths[i] = plan_knobs[i].path;
    applies[i] = (plan_knobs[i].applies & (1u << kind)) != 0;
  }
  Level lvl = {wl_problem_name(kind), paths, applies, NULL, PLAN_NKNOBS};
  g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(Leaf));
  if (!resolve(c, &lvl, val, NULL, NULL, leaves) || !load_dims(c, pp, leaves)) return FALSE;
  plan_problem_defaults(pp, &c->plan->hw);
  g_array_set_size(c->later, 0);
  for (guint i = 0; i < leaves->len; i++) {
    const Leaf *l = &g_array_index(leaves, Leaf, i);
    if (plan_knobs[l->idx].type == KT_DIM)
      pp->loc[l->idx] = (PlanLoc){l->key->line, l->key->col, plan_knobs[l->idx].full[kind]};
    else if (!load_knob(c, pp, l))
      return FALSE;
  }
  if (!resolve_later(c, pp)) return FALSE;
  plan_problem_fit_defaults(pp, &c->plan->hw);
  return check_needs(c, pp, leaves);
}

/* ---- the document ---- */

static const char *const top_paths[] = {"version", "hardware", "p1", "d1"};
enum { TOP_VERSION, TOP_HARDWARE, TOP_P1, TOP_D1, TOP__COUNT };

/* version: 1          # required, must be 1
 * hardware: {...}     # optional: load_hardware
 * p1: {...}           # optional: load_problem
 * d1: {...}           # optional: load_problem  */
static gboolean load_top(Ctx *c, const PTree *t) {
  if (!t->root)
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col,
                     "missing required key 'version'");
  if (t->root->kind != PN_MAP) {
    g_autofree char *got = plan_describe_node(t->root);
    return fail_at(c, PLAN_ERROR_STRUCTURE, t->root, "a plan must be a mapping, got %s", got);
  }
  Level lvl = {NULL, top_paths, NULL, NULL, TOP__COUNT};
  g_autoptr(GArray) leaves = g_array_new(FALSE, FALSE, sizeof(Leaf));
  if (!resolve(c, &lvl, t->root, NULL, NULL, leaves)) return FALSE;
  const Leaf *top[TOP__COUNT] = {NULL};
  for (guint i = 0; i < leaves->len; i++) top[g_array_index(leaves, Leaf, i).idx] = &g_array_index(leaves, Leaf, i);
  if (!top[TOP_VERSION])
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col,
                     "missing required key 'version'");
  long v;
  if (!scalar_int(c, "version", top[TOP_VERSION]->val, &v)) return FALSE;
  if (v != PLAN_VERSION)
    return fail_at(c, PLAN_ERROR_VERSION, top[TOP_VERSION]->val,
                   "unsupported plan version %ld (this tcc-gen reads version %d)", v, PLAN_VERSION);
  if (top[TOP_HARDWARE] && !load_hardware(c, top[TOP_HARDWARE]->key, top[TOP_HARDWARE]->val))
    return FALSE;
  problem_defaults(c, &c->plan->p1, PROB_P1);
  problem_defaults(c, &c->plan->d1, PROB_D1);
  if (top[TOP_P1] && !load_problem(c, top[TOP_P1]->key, top[TOP_P1]->val, PROB_P1, &c->plan->p1))
    return FALSE;
  if (top[TOP_D1] && !load_problem(c, top[TOP_D1]->key, top[TOP_D1]->val, PROB_D1, &c->plan->d1))
    return FALSE;
  plan_problem_record(&c->plan->p1);
  plan_problem_record(&c->plan->d1);
  return TRUE;
}

Plan *plan_parse(const char *file, const char *text, size_t len, GError **err) {
  return plan_parse_strict(file, text, len, FALSE, err);
}

/* The first line of text[0..len) that starts with ".wg " (a WG's section of
 * tcc assembly), or 0: a program given to tcc-gen.  No plan has one: a
 * plan's top level is a mapping. */
static int asm_line(const char *text, size_t len) {
  int line = 1;
  for (size_t i = 0; i < len; line++) {
    if (len - i >= 4 && memcmp(text + i, ".wg ", 4) == 0) return line;
    const char *nl = memchr(text + i, '\n', len - i);
    if (!nl) break;
    i = (size_t)(nl - text) + 1;
  }
  return 0;
}

Plan *plan_parse_strict(const char *file, const char *text, size_t len, gboolean strict, GError **err) {
  /* TCC_STRICT=1: every tool loads plans as tcc-gen --strict does (a sweep's
   * tcc-grade jobs, say); docs/tools.md */
  const char *env = g_getenv("TCC_STRICT");
  strict |= env && strcmp(env, "1") == 0;
  int at = asm_line(text, len);
  if (at > 0) { /* a program, not a plan: say so, not what YAML makes of it */
    plan_fail(err, PLAN_ERROR_SYNTAX, file, at, 1, "this is assembly (a .wg line), not a plan: run it with tcc-sim");
    return NULL;
  }
  g_autoptr(PTree) t = plan_yaml_parse(file, text, len, err);
  if (!t) return NULL;
  g_autoptr(Plan) p = g_new0(Plan, 1);
  p->file = g_strdup(file);
  for (int k = 0; k < 2; k++) p->warnings[k] = g_ptr_array_new_with_free_func(g_free);
  p->strict = strict;
  p->version = PLAN_VERSION;
  sim_machine_default(&p->hw);
  for (int i = 0; i < PLAN_NHW; i++) p->hw_loc[i] = (PlanLoc){0, 0, hw_full[i]};
  g_autoptr(GArray) later = g_array_new(FALSE, FALSE, sizeof(Leaf));
  Ctx c = {file, p, err, strict, PROB_D1, later};
  if (!load_top(&c, t)) return NULL;
  return g_steal_pointer(&p);
}

Plan *plan_load(const char *file, GError **err) { return plan_load_strict(file, FALSE, err); }

Plan *plan_load_strict(const char *file, gboolean strict, GError **err) {
  g_autofree char *buf = NULL;
  gsize n = 0;
  if (!plan_read_text(file, "plan", &buf, &n, err)) return NULL;
  return plan_parse_strict(file, buf, n, strict, err);
}

void plan_free(Plan *p) {
  if (!p) return;
  for (int k = 0; k < 2; k++)
    if (p->warnings[k]) g_ptr_array_free(p->warnings[k], TRUE);
  g_free(p->file);
  g_free(p);
}

const PlanProblem *plan_problem(const Plan *p, ProblemKind kind) {
  return kind == PROB_P1 ? &p->p1 : &p->d1;
}
