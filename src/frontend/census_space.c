/* census_space.c - a census space file (census_space.h) -> the values of each
 * hardware key.  The YAML goes through the plan's tree builder
 * (plan_yaml.c: every limit enforced while parsing); each value through
 * sim_machine_set, so a space holds only values a plan could write. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "census_space.h"
#include "plan_internal.h"

typedef struct Ctx {
  const char *file;
  CensusSpace *s;
  GError **err;
} Ctx;

static gboolean fail(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean fail(Ctx *c, PlanErrorCode code, const PNode *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return plan_fail(c->err, code, c->file, n->line, n->col, "%s", msg);
}

static gboolean unknown_key(Ctx *c, const PNode *k, const char *where, const char *const *names, int n) {
  return plan_unknown_key(c->err, c->file, k, where, names, n);
}

static int find(const char *key, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(key, names[i]) == 0) return i;
  return -1;
}

/* A plain decimal integer (as the plan loader reads one), or true/false for
 * multicast. */
static gboolean scalar_value(Ctx *c, int key, const PNode *v, long *out) {
  g_autofree char *got = plan_describe_node(v);
  const char *path = plan_hw_key(key);
  if (strcmp(path, "multicast") == 0) {
    if (v->kind == PN_SCALAR && v->plain && (!strcmp(v->text, "true") || !strcmp(v->text, "false"))) {
      *out = v->text[0] == 't';
      return TRUE;
    }
    return fail(c, PLAN_ERROR_TYPE, v, "'%s' values must be true or false, got %s", path, got);
  }
  const char *t = v->kind == PN_SCALAR && v->plain ? v->text : "";
  const char *d = t + (t[0] == '-');
  if (!*d || strspn(d, "0123456789") != strlen(d) || (d[0] == '0' && d[1]))
    return fail(c, PLAN_ERROR_TYPE, v, "'%s' values must be decimal integers, got %s", path, got);
  if (strlen(d) > 18) /* far out of every key's range; strtol cannot overflow below this */
    return fail(c, PLAN_ERROR_RANGE, v, "hardware.%s: %s is out of range", path, t);
  *out = strtol(t, NULL, 10);
  return TRUE;
}

/* Append value v of key `key`, checked by sim_machine_set; no duplicates. */
static gboolean add_value(Ctx *c, int key, const PNode *at, long v) {
  Machine m;
  sim_machine_default(&m);
  g_autoptr(GError) e = NULL;
  if (!sim_machine_set(&m, plan_hw_sim_key(key), v, &e))
    return fail(c, PLAN_ERROR_RANGE, at, "hardware.%s: %s", plan_hw_key(key), e->message);
  GArray *a = c->s->values[key];
  for (guint i = 0; i < a->len; i++)
    if (g_array_index(a, int, i) == v)
      return fail(c, PLAN_ERROR_DUPLICATE, at, "hardware.%s: value %ld is listed twice",
                  plan_hw_key(key), v);
  if (a->len >= CENSUS_MAX_VALUES)
    return fail(c, PLAN_ERROR_LIMIT, at, "hardware.%s: more than %d values", plan_hw_key(key),
                CENSUS_MAX_VALUES);
  int iv = (int)v;
  g_array_append_val(a, iv);
  return TRUE;
}

static gboolean seq_values(Ctx *c, int key, const PNode *seq) {
  if (seq->kids->len == 0)
    return fail(c, PLAN_ERROR_TYPE, seq, "hardware.%s: an empty list", plan_hw_key(key));
  for (guint i = 0; i < seq->kids->len; i++) {
    const PNode *v = g_ptr_array_index(seq->kids, i);
    long x;
    if (!scalar_value(c, key, v, &x) || !add_value(c, key, v, x)) return FALSE;
  }
  return TRUE;
}

/* {from, to[, step | factor]}, {values: [...]} or {same_as: KEY}. */
static const char *const range_keys[] = {"from", "to", "step", "factor", "values", "same_as"};
enum { R_FROM, R_TO, R_STEP, R_FACTOR, R_VALUES, R_SAME_AS, R__COUNT };

static gboolean range_values(Ctx *c, int key, const PNode *key_node, const PNode *map) {
  const PNode *r[R__COUNT] = {NULL};
  const char *path = plan_hw_key(key);
  g_autofree char *where = g_strdup_printf("in hardware.%s", path);
  for (int i = 0; i < plan_map_len(map); i++) {
    const PNode *k = plan_map_key(map, i);
    int idx = find(k->text, range_keys, R__COUNT);
    if (idx < 0) return unknown_key(c, k, where, range_keys, R__COUNT);
    r[idx] = plan_map_val(map, i);
  }
  if (r[R_SAME_AS]) {
    if (plan_map_len(map) != 1)
      return fail(c, PLAN_ERROR_CONFLICT, map, "hardware.%s: same_as goes alone", path);
    const PNode *v = r[R_SAME_AS];
    const char *names[PLAN_NHW];
    for (int i = 0; i < PLAN_NHW; i++) names[i] = plan_hw_key(i);
    int other = v->kind == PN_SCALAR ? find(v->text, names, PLAN_NHW) : -1;
    if (other < 0) {
      if (v->kind != PN_SCALAR)
        return fail(c, PLAN_ERROR_TYPE, v, "hardware.%s: same_as names a hardware key", path);
      return unknown_key(c, v, "for same_as", names, PLAN_NHW);
    }
    if (other == key)
      return fail(c, PLAN_ERROR_CONFLICT, v, "hardware.%s: same_as names the key itself", path);
    c->s->same_as[key] = other;
    (void)key_node;
    return TRUE;
  }
  if (r[R_VALUES]) {
    if (plan_map_len(map) != 1)
      return fail(c, PLAN_ERROR_CONFLICT, map, "hardware.%s: values goes alone", path);
    if (r[R_VALUES]->kind != PN_SEQ)
      return fail(c, PLAN_ERROR_TYPE, r[R_VALUES], "hardware.%s: values must be a list", path);
    return seq_values(c, key, r[R_VALUES]);
  }
  if (!r[R_FROM] || !r[R_TO])
    return fail(c, PLAN_ERROR_MISSING, map, "hardware.%s: a range needs from and to (or values, or same_as)",
                path);
  if (r[R_STEP] && r[R_FACTOR])
    return fail(c, PLAN_ERROR_CONFLICT, r[R_FACTOR], "hardware.%s: step or factor, not both", path);
  if (strcmp(path, "multicast") == 0)
    return fail(c, PLAN_ERROR_TYPE, map, "hardware.multicast: a range of booleans; write [false, true]");
  long from, to, by = 1;
  if (!scalar_value(c, key, r[R_FROM], &from) || !scalar_value(c, key, r[R_TO], &to)) return FALSE;
  const PNode *byn = r[R_STEP] ? r[R_STEP] : r[R_FACTOR];
  if (byn && !scalar_value(c, key, byn, &by)) return FALSE;
  if (from > to) return fail(c, PLAN_ERROR_RANGE, r[R_TO], "hardware.%s: to %ld is below from %ld", path, to, from);
  if (r[R_FACTOR] ? by < 2 : by < 1)
    return fail(c, PLAN_ERROR_RANGE, byn, "hardware.%s: %s must be at least %d", path,
                r[R_FACTOR] ? "factor" : "step", r[R_FACTOR] ? 2 : 1);
  if (from < 1 && r[R_FACTOR])
    return fail(c, PLAN_ERROR_RANGE, r[R_FROM], "hardware.%s: a factor range starts at 1 or more", path);
  /* each value is checked (range, power of two) where the range starts */
  for (long v = from;;) {
    if (!add_value(c, key, r[R_FROM], v)) return FALSE;
    if (r[R_FACTOR] ? v > to / by : v > to - by) return TRUE; /* the next would pass `to` (no overflow) */
    v = r[R_FACTOR] ? v * by : v + by;
  }
}

static gboolean key_values(Ctx *c, int key, const PNode *k, const PNode *v) {
  if (c->s->values[key]->len || c->s->same_as[key] >= 0)
    return fail(c, PLAN_ERROR_DUPLICATE, k, "hardware.%s is given twice", plan_hw_key(key));
  if (v->kind == PN_SEQ) return seq_values(c, key, v);
  if (v->kind == PN_MAP) return range_values(c, key, k, v);
  long x;
  return scalar_value(c, key, v, &x) && add_value(c, key, v, x);
}

/* hardware: {KEY: VALUES, ..., dma: {engines: VALUES, depth: VALUES}} */
static gboolean load_hardware(Ctx *c, const PNode *map) {
  const char *names[PLAN_NHW + 1];
  for (int i = 0; i < PLAN_NHW; i++) names[i] = plan_hw_key(i);
  names[PLAN_NHW] = "dma";
  for (int i = 0; i < plan_map_len(map); i++) {
    const PNode *k = plan_map_key(map, i), *v = plan_map_val(map, i);
    if (strcmp(k->text, "dma") == 0) {
      if (v->kind != PN_MAP) {
        g_autofree char *got = plan_describe_node(v);
        return fail(c, PLAN_ERROR_TYPE, v, "'dma' must be a mapping {engines, depth}, got %s", got);
      }
      static const char *const dma[] = {"engines", "depth"};
      for (int j = 0; j < plan_map_len(v); j++) {
        const PNode *dk = plan_map_key(v, j);
        int d = find(dk->text, dma, 2);
        if (d < 0) return unknown_key(c, dk, "in hardware.dma", dma, 2);
        g_autofree char *path = g_strconcat("dma.", dk->text, NULL);
        if (!key_values(c, find(path, names, PLAN_NHW), dk, plan_map_val(v, j))) return FALSE;
      }
      continue;
    }
    int key = strchr(k->text, '.') ? -1 : find(k->text, names, PLAN_NHW);
    if (key < 0) return unknown_key(c, k, "in hardware", names, PLAN_NHW + 1);
    if (!key_values(c, key, k, v)) return FALSE;
  }
  return TRUE;
}

/* Keys not written take the default machine's value; a same_as key takes
 * the values of the key it names, each checked against its own range. */
static gboolean finish(Ctx *c, const PNode *hw) {
  Machine def;
  sim_machine_default(&def);
  for (int i = 0; i < PLAN_NHW; i++) {
    if (c->s->values[i]->len || c->s->same_as[i] >= 0) continue;
    for (int p = 0; p < sim_machine_nparams; p++)
      if (strcmp(sim_machine_params[p].key, plan_hw_sim_key(i)) == 0) {
        int v = *(const int *)((const char *)&def + sim_machine_params[p].offset);
        g_array_append_val(c->s->values[i], v);
      }
  }
  c->s->points = 1;
  for (int i = 0; i < PLAN_NHW; i++) {
    int o = c->s->same_as[i];
    if (o >= 0) {
      if (c->s->same_as[o] >= 0)
        return fail(c, PLAN_ERROR_CONFLICT, hw, "hardware.%s: same_as %s, which is itself same_as",
                    plan_hw_key(i), plan_hw_key(o));
      Machine m = def;
      for (guint j = 0; j < c->s->values[o]->len; j++) {
        g_autoptr(GError) e = NULL;
        if (!sim_machine_set(&m, plan_hw_sim_key(i), g_array_index(c->s->values[o], int, j), &e))
          return fail(c, PLAN_ERROR_RANGE, hw, "hardware.%s (same_as %s): %s", plan_hw_key(i),
                      plan_hw_key(o), e->message);
      }
      continue;
    }
    c->s->points *= c->s->values[i]->len;
    if (c->s->points > CENSUS_MAX_POINTS)
      return fail(c, PLAN_ERROR_LIMIT, hw, "the space has more than %llu points",
                  (unsigned long long)CENSUS_MAX_POINTS);
  }
  return TRUE;
}

static gboolean load_top(Ctx *c, const PTree *t) {
  static const char *const top[] = {"version", "hardware"};
  if (!t->root)
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "missing required key 'version'");
  if (t->root->kind != PN_MAP) {
    g_autofree char *got = plan_describe_node(t->root);
    return fail(c, PLAN_ERROR_STRUCTURE, t->root, "a census space must be a mapping, got %s", got);
  }
  const PNode *val[2] = {NULL, NULL}, *key[2] = {NULL, NULL};
  for (int i = 0; i < plan_map_len(t->root); i++) {
    const PNode *k = plan_map_key(t->root, i);
    int idx = find(k->text, top, 2);
    if (idx < 0) return unknown_key(c, k, "at top level", top, 2);
    key[idx] = k;
    val[idx] = plan_map_val(t->root, i);
  }
  if (!val[0])
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "missing required key 'version'");
  if (val[0]->kind != PN_SCALAR || strcmp(val[0]->text, "1") != 0) {
    g_autofree char *got = plan_describe_node(val[0]);
    return fail(c, PLAN_ERROR_VERSION, val[0], "unsupported census version %s (this tcc-census reads version %d)",
                got, CENSUS_VERSION);
  }
  if (!val[1])
    return plan_fail(c->err, PLAN_ERROR_MISSING, c->file, t->line, t->col, "missing required key 'hardware'");
  if (val[1]->kind != PN_MAP) {
    g_autofree char *got = plan_describe_node(val[1]);
    return fail(c, PLAN_ERROR_TYPE, val[1], "'hardware' must be a mapping, got %s", got);
  }
  return load_hardware(c, val[1]) && finish(c, key[1]);
}

CensusSpace *census_space_parse(const char *file, const char *text, size_t len, GError **err) {
  g_autoptr(PTree) t = plan_yaml_parse(file, text, len, err);
  if (!t) return NULL;
  g_autoptr(CensusSpace) s = g_new0(CensusSpace, 1);
  s->file = g_strdup(file);
  for (int i = 0; i < PLAN_NHW; i++) {
    s->values[i] = g_array_new(FALSE, FALSE, sizeof(int));
    s->same_as[i] = -1;
  }
  Ctx c = {file, s, err};
  if (!load_top(&c, t)) return NULL;
  return g_steal_pointer(&s);
}

CensusSpace *census_space_load(const char *file, GError **err) {
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!plan_read_text(file, "census space", &text, &len, err)) return NULL;
  return census_space_parse(file, text, len, err);
}

void census_space_free(CensusSpace *s) {
  if (!s) return;
  for (int i = 0; i < PLAN_NHW; i++)
    if (s->values[i]) g_array_free(s->values[i], TRUE);
  g_free(s->file);
  g_free(s);
}

gboolean census_space_varies(const CensusSpace *s, int i) {
  int k = s->same_as[i] >= 0 ? s->same_as[i] : i;
  return s->values[k]->len > 1;
}

gboolean census_space_point(const CensusSpace *s, guint64 index, Machine *m, GError **err) {
  int pick[PLAN_NHW];
  for (int i = PLAN_NHW - 1; i >= 0; i--) {
    if (s->same_as[i] >= 0) continue;
    guint n = s->values[i]->len;
    pick[i] = g_array_index(s->values[i], int, index % n);
    index /= n;
  }
  for (int i = 0; i < PLAN_NHW; i++)
    if (s->same_as[i] >= 0) pick[i] = pick[s->same_as[i]];
  sim_machine_default(m);
  for (int i = 0; i < PLAN_NHW; i++)
    if (!sim_machine_set(m, plan_hw_sim_key(i), pick[i], err)) return FALSE;
  return sim_machine_validate(m, err);
}
