/* census.c - the census of a hardware space (census.h). */
#include "census.h"
#include "json_num.h"
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
  const CensusKept *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The sort key of a machine: the product of its default problems' bounds
 * (evaluate's, without the RF budget). */
static int64_t key_of(const Machine *m) {
  PlanProblem d1;
  plan_default_problem(&d1, PROB_D1, m);
  Problem p1;
  wl_problem_default(&p1, PROB_P1);
  Bounds a, b;
  sim_bounds(m, &p1, &a);
  sim_bounds(m, &d1.dims, &b);
  return a.bound * b.bound;
}

Census *census_run(const CensusSpace *s, CensusProgress progress, gpointer data) {
  Census *c = g_new0(Census, 1);
  c->space = g_strdup(s->file);
  c->s = s;
  c->points = s->points;
  c->kept = g_array_new(FALSE, FALSE, sizeof(CensusKept));
  for (guint64 i = 0; i < s->points; i++) {
    if (progress && i % PROGRESS_EVERY == 0) progress(i, s->points, data);
    Machine hw;
    g_autoptr(GError) e = NULL;
    if (!census_space_point(s, i, &hw, &e)) {
      c->invalid++;
      continue;
    }
    if (sim_machine_area(&hw) > AREA_LIMIT_MM2) continue;
    CensusKept k = {i, key_of(&hw)};
    g_array_append_val(c->kept, k);
  }
  if (progress) progress(s->points, s->points, data);
  c->legal = c->kept->len;
  g_array_sort(c->kept, by_bound);
  return c;
}

void census_row(const Census *c, guint64 r, CensusRow *row) {
  const CensusKept *k = &g_array_index(c->kept, CensusKept, r);
  *row = (CensusRow){.index = k->index};
  if (!census_space_point(c->s, k->index, &row->hw, NULL)) g_assert_not_reached(); /* valid when kept */
  evaluate(row);
}

void census_free(Census *c) {
  if (!c) return;
  g_array_free(c->kept, TRUE);
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

static void csv_header(GString *o) {
  for (int i = 0; i < PLAN_NHW; i++) {
    g_autofree char *col = column(i);
    g_string_append_printf(o, "%s,", col);
  }
  for (size_t k = 0; k < G_N_ELEMENTS(metric_cols); k++)
    g_string_append_printf(o, "%s%s", metric_cols[k], k + 1 < G_N_ELEMENTS(metric_cols) ? "," : "\n");
}

static void csv_row(GString *o, const CensusRow *x) {
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

/* A row as the JSON document's rows hold it. */
static void json_row(JsonBuilder *j, const CensusRow *x) {
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

/* The document without its rows: the counts, and "rows" an empty array. */
static char *json_head(const Census *c) {
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
  json_builder_end_array(j);
  json_builder_end_object(j);
  return json_pretty_text(j);
}

/* Row x as the document prints it: json-glib's pretty text of the row
 * alone (its numbers spelled shortest, as json_pretty_text does), each line
 * indented 4 more spaces (the rows are at depth 2), no final newline. */
static void json_row_text(GString *o, JsonGenerator *gen, const CensusRow *x) {
  g_autoptr(JsonBuilder) j = json_builder_new();
  json_row(j, x);
  g_autoptr(JsonNode) root = json_builder_get_root(j);
  json_generator_set_root(gen, root);
  g_autofree char *raw = json_generator_to_data(gen, NULL);
  g_autofree char *text = json_shortest_numbers(raw);
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    gsize n = nl ? (gsize)(nl - p) : strlen(p);
    g_string_append(o, "    ");
    g_string_append_len(o, p, (gssize)n);
    if (!nl) break;
    g_string_append_c(o, '\n');
    p = nl + 1;
  }
}

/* Text is handed to the writer in pieces of about this size. */
#define WRITE_CHUNK ((gsize)1 << 20)

static gboolean flush(GString *o, CensusWrite write, gpointer data, gsize at_least) {
  if (o->len < at_least || o->len == 0) return TRUE;
  gboolean ok = write(o->str, o->len, data);
  g_string_truncate(o, 0);
  return ok;
}

gboolean census_write(const Census *c, gboolean json, CensusWrite write, gpointer data) {
  g_autoptr(GString) o = g_string_sized_new(WRITE_CHUNK + 4096);
  if (!json) {
    csv_header(o);
    for (guint64 r = 0; r < c->legal; r++) {
      CensusRow x;
      census_row(c, r, &x);
      csv_row(o, &x);
      if (!flush(o, write, data, WRITE_CHUNK)) return FALSE;
    }
    return flush(o, write, data, 0);
  }
  g_autofree char *head = json_head(c);
  if (c->legal == 0) { /* the document as it is: rows [] as json-glib prints it */
    g_string_append(o, head);
    return flush(o, write, data, 0);
  }
  /* the head up to its "rows" array's bracket, then the rows, then the
   * closing lines json-glib prints after an array of objects */
  const char *rows = g_strrstr(head, "\"rows\" : [");
  g_assert(rows);
  g_string_append_len(o, head, (gssize)(rows - head + strlen("\"rows\" : [")));
  g_string_append_c(o, '\n');
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  for (guint64 r = 0; r < c->legal; r++) {
    CensusRow x;
    census_row(c, r, &x);
    json_row_text(o, gen, &x);
    g_string_append(o, r + 1 < c->legal ? ",\n" : "\n");
    if (!flush(o, write, data, WRITE_CHUNK)) return FALSE;
  }
  g_string_append(o, "  ]\n}\n");
  return flush(o, write, data, 0);
}

static gboolean to_string(const char *text, gsize len, gpointer data) {
  g_string_append_len(data, text, (gssize)len);
  return TRUE;
}

char *census_csv(const Census *c) {
  GString *o = g_string_new(NULL);
  census_write(c, FALSE, to_string, o);
  return g_string_free(o, FALSE);
}

char *census_json(const Census *c) {
  GString *o = g_string_new(NULL);
  census_write(c, TRUE, to_string, o);
  return g_string_free(o, FALSE);
}
