/* census.c - the census of a hardware space (census.h). */
#include "census.h"
#include "json_text.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* Points between two progress calls. */
#define PROGRESS_EVERY 256

/* The value of hardware key i (plan order) of machine m. */
static int hw_value(const Machine *m, int i) {
  const char *key = plan_hw_sim_key(i);
  for (int p = 0; p < sim_machine_nparams; p++)
    if (strcmp(sim_machine_params[p].key, key) == 0)
      return *(const int *)((const char *)m + sim_machine_params[p].offset);
  return 0;
}

/* "dma.engines" -> "dma_engines": a column name. */
static char *column(int i) {
  char *c = g_strdup(plan_hw_key(i));
  g_strdelimit(c, ".", '_');
  return c;
}

static void bound(const Machine *m, const Problem *p, CensusBound *out) {
  Bounds b;
  sim_bounds(m, p, &b);
  memcpy(out->cycles, b.cycles, sizeof out->cycles);
  out->bound = b.bound;
  out->binding = b.binding;
}

static void evaluate(CensusRow *r) {
  r->area_mm2 = sim_machine_area(&r->hw);
  r->static_w = sim_machine_static_w(&r->hw);
  PlanProblem d1;
  plan_default_problem(&d1, PROB_D1, &r->hw);
  explain_rf(&r->hw, &d1, &r->rf);
  Problem p1;
  wl_problem_default(&p1, PROB_P1);
  bound(&r->hw, &p1, &r->p1);
  bound(&r->hw, &d1.dims, &r->d1);
  r->geo_bound = sqrt((double)r->p1.bound * (double)r->d1.bound);
}

/* By the product of the bounds (exact in 64 bits: each bound is far below
 * 2^31 on a legal machine), then by index: a total order, so the output does
 * not depend on the sort's stability. */
static gint by_bound(gconstpointer a, gconstpointer b) {
  const CensusRow *x = a, *y = b;
  int64_t px = x->p1.bound * x->d1.bound, py = y->p1.bound * y->d1.bound;
  if (px != py) return px < py ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

Census *census_run(const CensusSpace *s, CensusProgress progress, gpointer data) {
  Census *c = g_new0(Census, 1);
  c->space = g_strdup(s->file);
  c->points = s->points;
  c->rows = g_array_new(FALSE, TRUE, sizeof(CensusRow));
  for (guint64 i = 0; i < s->points; i++) {
    if (progress && i % PROGRESS_EVERY == 0) progress(i, s->points, data);
    CensusRow r = {.index = i};
    g_autoptr(GError) e = NULL;
    if (!census_space_point(s, i, &r.hw, &e)) {
      c->invalid++;
      continue;
    }
    if (sim_machine_area(&r.hw) > AREA_LIMIT_MM2) continue;
    evaluate(&r);
    g_array_append_val(c->rows, r);
  }
  if (progress) progress(s->points, s->points, data);
  c->legal = c->rows->len;
  g_array_sort(c->rows, by_bound);
  return c;
}

void census_free(Census *c) {
  if (!c) return;
  g_array_free(c->rows, TRUE);
  g_free(c->space);
  g_free(c);
}

char *census_summary(const Census *c) {
  return g_strdup_printf("%" G_GUINT64_FORMAT " points, %" G_GUINT64_FORMAT " invalid, %" G_GUINT64_FORMAT
                         " area-legal (<= %g mm^2)",
                         c->points, c->invalid, c->legal, (double)AREA_LIMIT_MM2);
}

/* A fixed-point number, whatever the locale. */
static char *fixed(double v, int digits) {
  char fmt[8], buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_snprintf(fmt, sizeof fmt, "%%.%df", digits);
  return g_strdup(g_ascii_formatd(buf, sizeof buf, fmt, v));
}

/* The metrics' columns, after the hardware keys. */
static const char *const metric_cols[] = {
    "area_mm2",  "static_w",   "d1_weights_bytes", "d1_rf_left_bytes", "d1_weights_fit",
    "d1_short_bytes", "p1_bound", "p1_binding", "d1_bound", "d1_binding", "geo_bound", "index"};

char *census_csv(const Census *c) {
  GString *o = g_string_new(NULL);
  for (int i = 0; i < PLAN_NHW; i++) {
    g_autofree char *col = column(i);
    g_string_append_printf(o, "%s,", col);
  }
  for (size_t k = 0; k < G_N_ELEMENTS(metric_cols); k++)
    g_string_append_printf(o, "%s%s", metric_cols[k], k + 1 < G_N_ELEMENTS(metric_cols) ? "," : "\n");
  for (guint r = 0; r < c->rows->len; r++) {
    const CensusRow *x = &g_array_index(c->rows, CensusRow, r);
    for (int i = 0; i < PLAN_NHW; i++) {
      int v = hw_value(&x->hw, i);
      if (strcmp(plan_hw_key(i), "multicast") == 0)
        g_string_append_printf(o, "%s,", v ? "true" : "false");
      else
        g_string_append_printf(o, "%d,", v);
    }
    g_autofree char *area = fixed(x->area_mm2, 6), *sw = fixed(x->static_w, 6), *geo = fixed(x->geo_bound, 1);
    g_string_append_printf(o, "%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s,%" G_GINT64_FORMAT
                              ",%" G_GINT64_FORMAT ",%s,%" G_GINT64_FORMAT ",%s,%s,%" G_GUINT64_FORMAT "\n",
                           area, sw, x->rf.weights, x->rf.left, x->rf.fits ? "true" : "false",
                           x->rf.short_bytes, x->p1.bound, sim_bound_name[x->p1.binding], x->d1.bound,
                           sim_bound_name[x->d1.binding], geo, x->index);
  }
  return g_string_free(o, FALSE);
}

/* Rounded to `digits` decimals, so that the JSON reads as the CSV does. */
static double rounded(double v, int digits) {
  double f = pow(10, digits);
  return round(v * f) / f;
}

static void bound_json(JsonBuilder *j, const char *name, const CensusBound *b) {
  json_builder_set_member_name(j, name);
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "bound");
  json_builder_add_int_value(j, b->bound);
  json_builder_set_member_name(j, "binding");
  json_builder_add_string_value(j, sim_bound_name[b->binding]);
  for (int k = 0; k < BOUND__COUNT; k++) {
    json_builder_set_member_name(j, sim_bound_name[k]);
    json_builder_add_int_value(j, b->cycles[k]);
  }
  json_builder_end_object(j);
}

char *census_json(const Census *c) {
  g_autoptr(JsonBuilder) j = json_builder_new();
  json_builder_begin_object(j);
  json_builder_set_member_name(j, "schema_version");
  json_builder_add_int_value(j, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(j, "tool");
  json_builder_add_string_value(j, TCC_CENSUS_VERSION);
  json_builder_set_member_name(j, "space");
  json_builder_add_string_value(j, c->space);
  json_builder_set_member_name(j, "points");
  json_builder_add_int_value(j, (gint64)c->points);
  json_builder_set_member_name(j, "invalid");
  json_builder_add_int_value(j, (gint64)c->invalid);
  json_builder_set_member_name(j, "area_legal");
  json_builder_add_int_value(j, (gint64)c->legal);
  json_builder_set_member_name(j, "area_limit_mm2");
  json_builder_add_double_value(j, AREA_LIMIT_MM2);
  json_builder_set_member_name(j, "sorted_by");
  json_builder_add_string_value(j, "geo_bound = sqrt(p1.bound * d1.bound), ascending; ties by index");
  json_builder_set_member_name(j, "rows");
  json_builder_begin_array(j);
  for (guint r = 0; r < c->rows->len; r++) {
    const CensusRow *x = &g_array_index(c->rows, CensusRow, r);
    json_builder_begin_object(j);
    json_builder_set_member_name(j, "index");
    json_builder_add_int_value(j, (gint64)x->index);
    json_builder_set_member_name(j, "hardware");
    json_builder_begin_object(j);
    for (int i = 0; i < PLAN_NHW; i++) {
      g_autofree char *col = column(i);
      json_builder_set_member_name(j, col);
      if (strcmp(plan_hw_key(i), "multicast") == 0)
        json_builder_add_boolean_value(j, hw_value(&x->hw, i) != 0);
      else
        json_builder_add_int_value(j, hw_value(&x->hw, i));
    }
    json_builder_end_object(j);
    json_builder_set_member_name(j, "area_mm2");
    json_builder_add_double_value(j, rounded(x->area_mm2, 6));
    json_builder_set_member_name(j, "static_w");
    json_builder_add_double_value(j, rounded(x->static_w, 6));
    json_builder_set_member_name(j, "d1_rf");
    json_builder_begin_object(j);
    json_builder_set_member_name(j, "weights_bytes");
    json_builder_add_int_value(j, x->rf.weights);
    json_builder_set_member_name(j, "rf_bytes");
    json_builder_add_int_value(j, x->rf.rf);
    json_builder_set_member_name(j, "temp_bytes");
    json_builder_add_int_value(j, x->rf.temp);
    json_builder_set_member_name(j, "history_bytes");
    json_builder_add_int_value(j, x->rf.history);
    json_builder_set_member_name(j, "left_bytes");
    json_builder_add_int_value(j, x->rf.left);
    json_builder_set_member_name(j, "fits");
    json_builder_add_boolean_value(j, x->rf.fits);
    json_builder_set_member_name(j, "short_bytes");
    json_builder_add_int_value(j, x->rf.short_bytes);
    json_builder_end_object(j);
    bound_json(j, "p1", &x->p1);
    bound_json(j, "d1", &x->d1);
    json_builder_set_member_name(j, "geo_bound");
    json_builder_add_double_value(j, rounded(x->geo_bound, 1));
    json_builder_end_object(j);
  }
  json_builder_end_array(j);
  json_builder_end_object(j);
  return json_pretty_text(j);
}
