/* diffreport.c - tcc-diff's text and JSON reports (diffreport.h). */
#include <inttypes.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "diffreport.h"
#include "json_text.h"

static const ProblemKind order[] = {PROB_P1, PROB_D1}; /* reports list p1 first */

gboolean diff_pass(const SimResult *r) {
  return (!r->checked || r->check.pass) && r->area_mm2 <= AREA_LIMIT_MM2 && r->peak_w <= POWER_LIMIT_W;
}

char *diff_verdict(const SimResult *r) {
  if (diff_pass(r)) return g_strdup("PASS");
  GString *g = g_string_new("FAIL:");
  if (r->checked && !r->check.pass) g_string_append(g, " numerics,");
  if (r->area_mm2 > AREA_LIMIT_MM2) g_string_append(g, " area,");
  if (r->peak_w > POWER_LIMIT_W) g_string_append(g, " power,");
  g_string_truncate(g, g->len - 1);
  return g_string_free(g, FALSE);
}

/* ---- the metrics, one table for both formats ---- */

typedef enum { M_INT, M_REAL, M_PCT } MetricKind;

typedef struct Metric {
  const char *key;      /* JSON name                                 */
  const char *label;    /* text label                                */
  MetricKind kind;
  int prec;             /* decimals of M_REAL and M_PCT              */
  double a, b;
} Metric;

enum { NMETRICS = 7 + UC__COUNT };

/* The metrics of a problem's two runs: cycles, peak power, HBM lines,
 * area, energy, instructions, MMA blocks, then each unit class's busy %.
 * (The hottest window, the error and the verdict are printed apart.) */
static void metrics(const ProblemDiff *p, Metric m[NMETRICS]) {
  const SimResult *a = &p->res[0], *b = &p->res[1];
  int n = 0;
  m[n++] = (Metric){"cycles", "cycles", M_INT, 0, (double)a->cycles, (double)b->cycles};
  m[n++] = (Metric){"peak_w", "peak W", M_REAL, 4, a->peak_w, b->peak_w};
  m[n++] = (Metric){"hbm_lines", "HBM lines", M_INT, 0, (double)a->hbm_lines, (double)b->hbm_lines};
  m[n++] = (Metric){"area_mm2", "area mm2", M_REAL, 4, a->area_mm2, b->area_mm2};
  m[n++] = (Metric){"energy_uj", "energy uJ", M_REAL, 3, a->energy_uj, b->energy_uj};
  m[n++] = (Metric){"insns", "instructions run", M_INT, 0, (double)a->insns, (double)b->insns};
  m[n++] = (Metric){"mma_blocks", "MMA blocks", M_INT, 0, (double)a->mma_blocks, (double)b->mma_blocks};
  for (int u = 0; u < UC__COUNT; u++)
    m[n++] = (Metric){sim_unit_class_name[u], NULL, M_PCT, 1, 100.0 * a->unit_busy[u], 100.0 * b->unit_busy[u]};
}

/* b / a, or NAN when a is 0 */
static double ratio(double a, double b) { return a != 0 ? b / a : NAN; }

/* A value rounded to `prec` decimals (so that JSON carries what the text
 * shows, and no float noise below it). */
static double rounded(double v, int prec) {
  double s = pow(10.0, prec);
  return round(v * s) / s;
}

/* ---- text ---- */

static char *fmt_value(const Metric *m, double v) {
  if (m->kind == M_INT) return g_strdup_printf("%" PRId64, (int64_t)v);
  return g_strdup_printf("%.*f", m->prec, v);
}

static char *fmt_delta(const Metric *m) {
  if (m->kind == M_INT) return g_strdup_printf("%+" PRId64, (int64_t)m->b - (int64_t)m->a);
  return g_strdup_printf("%+.*f", m->prec, rounded(m->b, m->prec) - rounded(m->a, m->prec));
}

static void text_metrics(GString *g, const DiffReport *r, const ProblemDiff *p, const char *name) {
  Metric m[NMETRICS];
  metrics(p, m);
  g_string_append_printf(g, "\n%s metrics (seed %" G_GUINT64_FORMAT ")  %16s %16s %14s %9s\n", name, r->seed,
                         "a", "b", "delta", "b/a");
  for (int i = 0; i < NMETRICS; i++) {
    g_autofree char *label = m[i].label ? g_strdup(m[i].label) : g_strdup_printf("busy %s %%", m[i].key);
    g_autofree char *va = fmt_value(&m[i], m[i].a), *vb = fmt_value(&m[i], m[i].b), *d = fmt_delta(&m[i]);
    double q = ratio(m[i].a, m[i].b);
    g_autofree char *rs = isnan(q) ? g_strdup("-") : g_strdup_printf("%.4f", q);
    g_string_append_printf(g, "  %-18s %16s %16s %14s %9s\n", label, va, vb, d, rs);
  }
  const SimResult *a = &p->res[0], *b = &p->res[1];
  g_autofree char *wa = g_strdup_printf("[%" PRId64 ", %" PRId64 ")", a->peak_start, a->peak_start + POWER_WINDOW);
  g_autofree char *wb = g_strdup_printf("[%" PRId64 ", %" PRId64 ")", b->peak_start, b->peak_start + POWER_WINDOW);
  g_string_append_printf(g, "  %-18s %16s %16s %+14" PRId64 "\n", "hottest window", wa, wb,
                         b->peak_start - a->peak_start);
  g_autofree char *ea = g_strdup_printf("%.3e", a->check.max_abs_err);
  g_autofree char *eb = g_strdup_printf("%.3e", b->check.max_abs_err);
  g_string_append_printf(g, "  %-18s %16s %16s\n", "max abs error", ea, eb);
  g_autofree char *va = diff_verdict(a), *vb = diff_verdict(b);
  g_string_append_printf(g, "  %-18s %16s %16s\n", "verdict", va, vb);
}

/* "+3" / "-2" / "." for a count delta */
static char *fmt_count(gint64 d) { return d ? g_strdup_printf("%+" G_GINT64_FORMAT, d) : g_strdup("."); }

static char *fmt_wg(const CodeUnit *u) {
  if (u->wg_a < 0 && u->wg_b < 0) return g_strdup("");
  if (u->wg_a == u->wg_b) return g_strdup_printf("%d", u->wg_a);
  g_autofree char *a = u->wg_a < 0 ? g_strdup("-") : g_strdup_printf("%d", u->wg_a);
  g_autofree char *b = u->wg_b < 0 ? g_strdup("-") : g_strdup_printf("%d", u->wg_b);
  return g_strdup_printf("%s>%s", a, b);
}

/* One changed task or WG: lines a, b, added, removed (~: a lower bound),
 * [RF declarations added, removed,] each class's count delta. */
static void text_unit(GString *g, const CodeUnit *u, int namew, gboolean wg) {
  g_autofree char *w = fmt_wg(u);
  g_string_append_printf(g, "  %-*s", namew, u->name);
  if (!wg) g_string_append_printf(g, " %7s", w);
  g_string_append_printf(g, " %7" G_GINT64_FORMAT " %7" G_GINT64_FORMAT, u->lines_a, u->lines_b);
  g_autofree char *ad = g_strdup_printf("+%" G_GINT64_FORMAT "%s", u->lines.added, u->lines.exact ? "" : "~");
  g_autofree char *rm = g_strdup_printf("-%" G_GINT64_FORMAT "%s", u->lines.removed, u->lines.exact ? "" : "~");
  g_string_append_printf(g, " %7s %7s", ad, rm);
  if (wg) {
    g_autofree char *rad = g_strdup_printf("+%" G_GINT64_FORMAT, u->rf.added);
    g_autofree char *rrm = g_strdup_printf("-%" G_GINT64_FORMAT, u->rf.removed);
    g_string_append_printf(g, " %6s %6s", rad, rrm);
  }
  for (int c = 0; c < IC__COUNT; c++) {
    g_autofree char *d = fmt_count(u->count_b[c] - u->count_a[c]);
    g_string_append_printf(g, " %5s", d);
  }
  g_string_append_c(g, '\n');
}

/* Add u's figures into the running sum t (lines and counts). */
static void unit_add(CodeUnit *t, const CodeUnit *u) {
  t->lines_a += u->lines_a;
  t->lines_b += u->lines_b;
  t->lines.added += u->lines.added;
  t->lines.removed += u->lines.removed;
  t->lines.exact &= u->lines.exact;
  t->rf.added += u->rf.added;
  t->rf.removed += u->rf.removed;
  for (int c = 0; c < IC__COUNT; c++) t->count_a[c] += u->count_a[c], t->count_b[c] += u->count_b[c];
}

/* The changed tasks (or WGs), in order: the first `limit` (0: all) one a
 * row, the rest summed in one row; then the unchanged ones in one line;
 * for WGs a last row with the whole program's sums. */
static void text_units(GString *g, const GArray *units, gboolean wg, guint limit) {
  int namew = 5;
  gint64 same = 0, same_lines = 0;
  guint shown = 0, nchanged = 0;
  for (guint i = 0; i < units->len; i++) {
    const CodeUnit *u = &g_array_index(units, CodeUnit, i);
    if (u->changed && (!limit || nchanged++ < limit)) namew = MAX(namew, (int)strlen(u->name));
  }
  const char *what = wg ? "WG" : "task";
  g_autofree char *more = limit && nchanged > limit ? g_strdup_printf("%u more", nchanged - limit) : NULL;
  if (more) namew = MAX(namew, (int)strlen(more));
  CodeUnit rest = {.wg_a = -1, .wg_b = -1, .lines.exact = TRUE, .rf.exact = TRUE};
  CodeUnit all = rest;
  guint nrest = 0;
  g_string_append_printf(g, "  %-*s", namew, wg ? "WG" : "task");
  if (!wg) g_string_append_printf(g, " %7s", "wg");
  g_string_append_printf(g, " %7s %7s %7s %7s", "a", "b", "+", "-");
  if (wg) g_string_append_printf(g, " %6s %6s", "rf+", "rf-");
  for (int c = 0; c < IC__COUNT; c++) g_string_append_printf(g, " %5s", diff_class_name[c]);
  g_string_append_c(g, '\n');
  for (guint i = 0; i < units->len; i++) {
    const CodeUnit *u = &g_array_index(units, CodeUnit, i);
    unit_add(&all, u);
    if (!u->changed)
      same++, same_lines += u->lines_a;
    else if (!limit || shown++ < limit)
      text_unit(g, u, namew, wg);
    else
      nrest++, unit_add(&rest, u);
  }
  if (nrest) {
    rest.name = more;
    text_unit(g, &rest, namew, wg);
  }
  if (same)
    g_string_append_printf(g, "  %" G_GINT64_FORMAT " %s%s unchanged (%" G_GINT64_FORMAT " instruction%s)\n", same,
                           what, same == 1 ? "" : "s", same_lines, same_lines == 1 ? "" : "s");
  if (wg) {
    all.name = "total";
    text_unit(g, &all, namew, wg);
  }
}

static void text_code(GString *g, const ProblemDiff *p, const char *name, guint limit) {
  const CodeDiff *c = p->code;
  g_string_append_printf(g, "\n%s code: %d of %u tasks changed, %d of %u WGs changed; instructions %" G_GINT64_FORMAT
                            " -> %" G_GINT64_FORMAT " (+%" G_GINT64_FORMAT " -%" G_GINT64_FORMAT "%s)\n",
                         name, c->tasks_changed, c->tasks->len, c->wgs_changed, c->wgs->len, c->lines_a, c->lines_b,
                         c->lines.added, c->lines.removed, c->lines.exact ? "" : ", at least");
  if (c->tasks_changed == 0 && c->wgs_changed == 0) return;
  text_units(g, c->tasks, FALSE, limit);
  text_units(g, c->wgs, TRUE, limit);
  gboolean approx = !c->lines.exact;
  for (guint i = 0; i < c->tasks->len; i++) approx |= !g_array_index(c->tasks, CodeUnit, i).lines.exact;
  if (approx)
    g_string_append(g, "  ~: past the diff's work limit; the lines' multisets compared, a lower bound\n");
}

char *diff_report_text(const DiffReport *r) {
  GString *g = g_string_new(NULL);
  g_string_append_printf(g, "%s\nsimulator: %s\n", TCC_DIFF_VERSION, TCC_SIM_VERSION);
  g_string_append_printf(g, "a  %s\nb  %s\n", r->file[0], r->file[1]);
  GString *scope = g_string_new("hardware");
  for (guint i = 0; i < G_N_ELEMENTS(order); i++)
    if (r->prob[order[i]].on) g_string_append_printf(scope, ", %s", wl_problem_name(order[i]));
  g_string_append_printf(g, "\nknobs (%s; effective values): %u differ%s\n", scope->str, r->knobs->len,
                         r->knobs->len == 1 ? "s" : "");
  g_string_free(scope, TRUE);
  for (guint i = 0; i < r->knobs->len; i++) {
    const KnobDiff *k = &g_array_index(r->knobs, KnobDiff, i);
    g_autofree char *a = diff_knob_side(k->a, k->a_loc), *b = diff_knob_side(k->b, k->b_loc);
    g_string_append_printf(g, "  %s: %s -> %s\n", k->path, a, b);
  }
  for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
    const ProblemDiff *p = &r->prob[order[i]];
    if (!p->on) continue;
    const char *name = wl_problem_name(order[i]);
    text_code(g, p, name, r->limit);
    text_metrics(g, r, p, name);
  }
  return g_string_free(g, FALSE);
}

/* ---- JSON ---- */

static void j_pair_int(JsonBuilder *j, const char *key, gint64 a, gint64 b) {
  json_builder_set_member_name(j, key);
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "a");
  json_builder_add_int_value(j, a);
  json_builder_set_member_name(j, "b");
  json_builder_add_int_value(j, b);
  json_builder_set_member_name(j, "delta");
  json_builder_add_int_value(j, b - a);
  json_builder_end_object(j);
}

static void j_metric(JsonBuilder *j, const Metric *m) {
  json_builder_set_member_name(j, m->key);
  json_builder_begin_object(j);
  int prec = m->kind == M_INT ? 0 : m->prec + 2;
  double a = rounded(m->a, prec), b = rounded(m->b, prec), q = ratio(m->a, m->b);
  json_builder_set_member_name(j, "a");
  if (m->kind == M_INT) json_builder_add_int_value(j, (gint64)m->a); else json_builder_add_double_value(j, a);
  json_builder_set_member_name(j, "b");
  if (m->kind == M_INT) json_builder_add_int_value(j, (gint64)m->b); else json_builder_add_double_value(j, b);
  json_builder_set_member_name(j, "delta");
  if (m->kind == M_INT)
    json_builder_add_int_value(j, (gint64)m->b - (gint64)m->a);
  else
    json_builder_add_double_value(j, rounded(b - a, prec));
  json_builder_set_member_name(j, "ratio");
  if (isnan(q)) json_builder_add_null_value(j); else json_builder_add_double_value(j, rounded(q, 6));
  json_builder_end_object(j);
}

static void j_error(JsonBuilder *j, const SimResult *r) {
  if (!r->checked || !isfinite(r->check.max_abs_err)) {
    json_builder_add_null_value(j);
    return;
  }
  char buf[32];
  g_snprintf(buf, sizeof buf, "%.6e", r->check.max_abs_err);
  json_builder_add_double_value(j, g_ascii_strtod(buf, NULL));
}

static void j_metrics(JsonBuilder *j, const ProblemDiff *p) {
  Metric m[NMETRICS];
  metrics(p, m);
  json_builder_set_member_name(j, "metrics");
  json_builder_begin_object(j);
  for (int i = 0; i < NMETRICS && m[i].kind != M_PCT; i++) j_metric(j, &m[i]);
  json_builder_set_member_name(j, "busy_pct");
  json_builder_begin_object(j);
  for (int i = 0; i < NMETRICS; i++)
    if (m[i].kind == M_PCT) j_metric(j, &m[i]);
  json_builder_end_object(j);
  json_builder_set_member_name(j, "window");
  json_builder_begin_object(j);
  for (int k = 0; k < 2; k++) {
    json_builder_set_member_name(j, k ? "b" : "a");
    json_builder_begin_array(j);
    json_builder_add_int_value(j, p->res[k].peak_start);
    json_builder_add_int_value(j, p->res[k].peak_start + POWER_WINDOW);
    json_builder_end_array(j);
  }
  json_builder_set_member_name(j, "delta");
  json_builder_add_int_value(j, p->res[1].peak_start - p->res[0].peak_start);
  json_builder_end_object(j);
  json_builder_set_member_name(j, "max_abs_err");
  json_builder_begin_object(j);
  for (int k = 0; k < 2; k++) {
    json_builder_set_member_name(j, k ? "b" : "a");
    j_error(j, &p->res[k]);
  }
  json_builder_end_object(j);
  json_builder_set_member_name(j, "status"); /* the result schema's: the first failing constraint */
  json_builder_begin_object(j);
  for (int k = 0; k < 2; k++) {
    const SimResult *r = &p->res[k];
    json_builder_set_member_name(j, k ? "b" : "a");
    json_builder_add_string_value(j, r->checked && !r->check.pass ? "numerics"
                                     : r->area_mm2 > AREA_LIMIT_MM2 ? "area"
                                     : r->peak_w > POWER_LIMIT_W    ? "power"
                                                                    : "pass");
  }
  json_builder_end_object(j);
  json_builder_end_object(j);
}

static void j_wg(JsonBuilder *j, const char *key, int wg) {
  json_builder_set_member_name(j, key);
  if (wg < 0) json_builder_add_null_value(j); else json_builder_add_int_value(j, wg);
}

static void j_unit(JsonBuilder *j, const CodeUnit *u, gboolean wg) {
  json_builder_begin_object(j);
  json_builder_set_member_name(j, wg ? "wg" : "task");
  if (wg) json_builder_add_int_value(j, MAX(u->wg_a, u->wg_b)); else json_add_utf8(j, u->name);
  if (!wg) {
    j_wg(j, "wg_a", u->wg_a);
    j_wg(j, "wg_b", u->wg_b);
  }
  json_builder_set_member_name(j, "lines");
  json_builder_begin_object(j);
  const char *const keys[] = {"a", "b", "added", "removed"};
  const gint64 vals[] = {u->lines_a, u->lines_b, u->lines.added, u->lines.removed};
  for (int i = 0; i < 4; i++) {
    json_builder_set_member_name(j, keys[i]);
    json_builder_add_int_value(j, vals[i]);
  }
  json_builder_set_member_name(j, "exact");
  json_builder_add_boolean_value(j, u->lines.exact);
  json_builder_end_object(j);
  if (wg) {
    json_builder_set_member_name(j, "rf");
    json_builder_begin_object(j);
    const gint64 rv[] = {u->rf_a, u->rf_b, u->rf.added, u->rf.removed};
    for (int i = 0; i < 4; i++) {
      json_builder_set_member_name(j, keys[i]);
      json_builder_add_int_value(j, rv[i]);
    }
    json_builder_end_object(j);
  }
  json_builder_set_member_name(j, "counts");
  json_builder_begin_object(j);
  for (int c = 0; c < IC__COUNT; c++) j_pair_int(j, diff_class_name[c], u->count_a[c], u->count_b[c]);
  json_builder_end_object(j);
  json_builder_end_object(j);
}

/* "tasks": {"total", "changed", "unchanged", "unchanged_lines", "list": [changed ones]} */
static void j_units(JsonBuilder *j, const char *key, const GArray *units, gboolean wg) {
  gint64 same = 0, same_lines = 0;
  json_builder_set_member_name(j, key);
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "changed");
  json_builder_begin_array(j);
  for (guint i = 0; i < units->len; i++) {
    const CodeUnit *u = &g_array_index(units, CodeUnit, i);
    if (u->changed)
      j_unit(j, u, wg);
    else
      same++, same_lines += u->lines_a;
  }
  json_builder_end_array(j);
  json_builder_set_member_name(j, "total");
  json_builder_add_int_value(j, units->len);
  json_builder_set_member_name(j, "unchanged");
  json_builder_add_int_value(j, same);
  json_builder_set_member_name(j, "unchanged_lines");
  json_builder_add_int_value(j, same_lines);
  json_builder_end_object(j);
}

static void j_code(JsonBuilder *j, const CodeDiff *c) {
  json_builder_set_member_name(j, "code");
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "lines");
  json_builder_begin_object(j);
  const char *const keys[] = {"a", "b", "added", "removed"};
  const gint64 vals[] = {c->lines_a, c->lines_b, c->lines.added, c->lines.removed};
  for (int i = 0; i < 4; i++) {
    json_builder_set_member_name(j, keys[i]);
    json_builder_add_int_value(j, vals[i]);
  }
  json_builder_set_member_name(j, "exact");
  json_builder_add_boolean_value(j, c->lines.exact);
  json_builder_end_object(j);
  j_units(j, "tasks", c->tasks, FALSE);
  j_units(j, "wgs", c->wgs, TRUE);
  json_builder_end_object(j);
}

static void j_knobs(JsonBuilder *j, const GArray *knobs) {
  json_builder_set_member_name(j, "knobs");
  json_builder_begin_array(j);
  for (guint i = 0; i < knobs->len; i++) {
    const KnobDiff *k = &g_array_index(knobs, KnobDiff, i);
    json_builder_begin_object(j);
    json_builder_set_member_name(j, "path");
    json_add_utf8(j, k->path);
    for (int s = 0; s < 2; s++) {
      json_builder_set_member_name(j, s ? "b" : "a");
      json_add_plan_value(j, s ? k->b : k->a);
      json_builder_set_member_name(j, s ? "b_line" : "a_line");
      int line = s ? k->b_loc.line : k->a_loc.line;
      if (line) json_builder_add_int_value(j, line); else json_builder_add_null_value(j);
    }
    json_builder_end_object(j);
  }
  json_builder_end_array(j);
}

char *diff_report_json(const DiffReport *r) {
  g_autoptr(JsonBuilder) j = json_builder_new();
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "schema_version");
  json_builder_add_int_value(j, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(j, "tool");
  json_builder_add_string_value(j, TCC_DIFF_VERSION);
  json_builder_set_member_name(j, "simulator");
  json_builder_add_string_value(j, TCC_SIM_VERSION);
  json_builder_set_member_name(j, "a");
  json_add_utf8(j, r->file[0]);
  json_builder_set_member_name(j, "b");
  json_add_utf8(j, r->file[1]);
  json_builder_set_member_name(j, "seed");
  json_builder_add_int_value(j, (gint64)r->seed); /* JSON has no unsigned 64-bit type */
  j_knobs(j, r->knobs);
  json_builder_set_member_name(j, "problems");
  json_builder_begin_array(j);
  for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
    const ProblemDiff *p = &r->prob[order[i]];
    if (!p->on) continue;
    json_builder_begin_object(j);
    json_builder_set_member_name(j, "problem");
    json_builder_add_string_value(j, wl_problem_name(order[i]));
    j_code(j, p->code);
    j_metrics(j, p);
    json_builder_end_object(j);
  }
  json_builder_end_array(j);
  json_builder_end_object(j);
  return json_pretty_text(j);
}
