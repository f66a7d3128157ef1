/* plot.c - the power plot of `tcc-sim --plot` (plot.h, docs/tools.md
 * "Power plot"): the curves and the titles here, the drawing with cairo in
 * the plot module (plot/plot_draw.c, BUILD/tcc-sim-plot.so), loaded on the
 * first plot:
 *
 *   title          the program, its problem, cycles, peak and bucket size
 *   plot area      power per bucket stacked by unit class (static at the
 *                  bottom), the 1000-cycle window average as a line, the
 *                  20 W limit dashed, the hottest window shaded
 *   axes           cycles and W with 1-2-5 ticks
 *   legend         one swatch per class with energy, its energy over the run
 *
 * The curves come from the recorded timeline (trace.h): the per-class
 * energy buckets and the power runs, the same accounting as the report's
 * peak.  Text uses cairo's toy font API with a fixed family; nothing in
 * the file depends on the time or on pointers, so the same run gives the
 * same bytes. */
#include <string.h>

#include "module.h"
#include "outfile.h"
#include "plot.h"
#include "text_escape.h"

PlotFormat plot_format_of(const char *file) {
  size_t n = strlen(file);
  if (n > 4 && g_ascii_strcasecmp(file + n - 4, ".svg") == 0) return PLOT_SVG;
  if (n > 4 && g_ascii_strcasecmp(file + n - 4, ".png") == 0) return PLOT_PNG;
  return PLOT_NONE;
}

/* ---- the curves -------------------------------------------------------- */

void plot_series(const SimTrace *t, int max_buckets, PlotSeries *s) {
  memset(s, 0, sizeof *s);
  s->cycles = MAX(t->cycles, 1);
  int64_t B = t->bucket;
  while ((s->cycles + B - 1) / B > max_buckets) B *= 2;
  s->bucket = B;
  s->nb = (s->cycles + B - 1) / B;
  s->static_w = t->static_w;
  s->peak_w = t->peak_w;
  s->peak_start = t->peak_start;
  s->unit_w = g_new0(double, (size_t)UC__COUNT * (size_t)s->nb);
  s->total_w = g_new(double, s->nb);
  s->window_w = g_new(double, s->nb);
  int64_t f = B / t->bucket;
  for (int u = 0; u < UC__COUNT; u++) {
    const SimEnergySum *v = t->unit_e + (size_t)u * TRACE_BUCKET_CAP;
    SimEnergySum all = 0;
    for (int64_t k = 0; k < s->nb; k++) {
      SimEnergySum e = 0;
      for (int64_t i = k * f; i < (k + 1) * f && i < TRACE_BUCKET_CAP; i++) e += v[i];
      s->unit_w[(size_t)u * (size_t)s->nb + (size_t)k] = sim_e_w(e, MIN(B, s->cycles - k * B));
    }
    for (int i = 0; i < TRACE_BUCKET_CAP; i++) all += v[i];
    s->unit_uj[u] = sim_e_uj(all);
  }
  TraceRuns r;
  trace_runs_init(&r, t);
  int64_t last = MAX(s->cycles - POWER_WINDOW, 0);
  for (int64_t k = 0; k < s->nb; k++) {
    int64_t a = k * B, b = MIN(a + B, s->cycles);
    s->total_w[k] = trace_runs_avg_w(&r, s->static_w, a, b);
    int64_t w0 = CLAMP((a + b) / 2 - POWER_WINDOW / 2, 0, last);
    s->window_w[k] = trace_runs_avg_w(&r, s->static_w, w0, w0 + POWER_WINDOW);
  }
  trace_runs_clear(&r);
}

void plot_series_clear(PlotSeries *s) {
  g_free(s->unit_w);
  g_free(s->total_w);
  g_free(s->window_w);
  memset(s, 0, sizeof *s);
}


/* ---- the plot module --------------------------------------------------- */

typedef gboolean (*DrawFn)(const PlotPage *pg, FILE *fp, const char *name, PlotFormat fmt, GError **err);
typedef void (*ReleaseFn)(void);
typedef char *(*SvgFn)(const PlotPage *pg);

/* The module's entry points, once loaded (module.c: never unloaded, cairo
 * keeps state); guarded by plot_lock. */
static GMutex plot_lock;
static DrawFn draw_fn;
static ReleaseFn release_fn;
static SvgFn svg_fn;

gboolean plot_load(GError **err) {
  g_mutex_lock(&plot_lock);
  if (!draw_fn) {
    g_autoptr(GError) e = NULL;
    gpointer d = tcc_module_symbol(PLOT_MODULE, "plot_draw_stream", &e);
    gpointer r = d ? tcc_module_symbol(PLOT_MODULE, "plot_draw_release_fonts", &e) : NULL;
    gpointer v = r ? tcc_module_symbol(PLOT_MODULE, "plot_draw_svg", &e) : NULL;
    if (!v) {
      g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "tcc-sim: error: --plot: cannot load the plot module: %s",
                  e->message);
      g_mutex_unlock(&plot_lock);
      return FALSE;
    }
    draw_fn = (DrawFn)d;
    release_fn = (ReleaseFn)r;
    svg_fn = (SvgFn)v;
  }
  g_mutex_unlock(&plot_lock);
  return TRUE;
}

typedef struct StageMark {
  char *name;
  int64_t start;
} StageMark;

static int mark_cmp(const void *x, const void *y) {
  const StageMark *a = x, *b = y;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return strcmp(a->name, b->name);
}

int plot_stages(const Program *p, const SimTrace *t, GPtrArray **names, GArray **starts) {
  g_autoptr(GHashTable) first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (int w = 0; w < p->nwgs; w++)
    for (int pc = 0; pc < p->wgs[w].n; pc++) {
      int64_t at = t->issue[t->insn_base[w] + pc];
      if (at < 0) continue;
      char *key = sim_hot_key(sim_insn_text(p, &p->wgs[w].insns[pc]), HOT_BY_STAGE);
      int64_t *have = g_hash_table_lookup(first, key);
      if (!strcmp(key, "(none)")) {
        g_free(key);
      } else if (!have) {
        g_hash_table_insert(first, key, g_memdup2(&at, sizeof at));
      } else {
        if (at < *have) *have = at;
        g_free(key);
      }
    }
  g_autoptr(GArray) marks = g_array_new(FALSE, FALSE, sizeof(StageMark));
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, first);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    StageMark m = {g_strdup(k), *(int64_t *)v};
    g_array_append_val(marks, m);
  }
  g_array_sort(marks, mark_cmp); /* no hash order in the output */
  *names = g_ptr_array_new_with_free_func(g_free);
  *starts = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (guint i = 0; i < marks->len; i++) {
    StageMark *m = &g_array_index(marks, StageMark, i);
    g_ptr_array_add(*names, m->name);
    g_array_append_val(*starts, m->start);
  }
  return (int)marks->len;
}

/* Draw the plot of a run: into the stream `fp` (named `file`) in `fmt`,
 * or (fp NULL) as SVG text into *svg. */
static gboolean plot_page(const Program *p, const SimTrace *t, FILE *fp, const char *file, PlotFormat fmt, char **svg,
                          GError **err) {
  if (!plot_load(err)) return FALSE;
  PlotSeries s;
  plot_series(t, PLOT_MAX_BUCKETS, &s);
  g_autofree char *prob = wl_problem_canonical(&p->prob);
  g_autofree char *title = g_strdup_printf("power of %s (%s)", p->file, wl_problem_name(p->prob.kind));
  g_autofree char *sub = g_strdup_printf("%s; %" G_GINT64_FORMAT " cycles; peak %.4f W in [%" G_GINT64_FORMAT
                                         ", %" G_GINT64_FORMAT "); %" G_GINT64_FORMAT "-cycle buckets",
                                         prob + strlen(".problem "), s.cycles, s.peak_w, s.peak_start,
                                         s.peak_start + POWER_WINDOW, s.bucket);
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GArray) starts = NULL;
  int n = plot_stages(p, t, &names, &starts);
  PlotPage pg = {&s, title, sub, sim_unit_class_name, n, (const int64_t *)(const void *)starts->data,
                 (const char *const *)names->pdata};
  gboolean ok;
  if (fp) {
    g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
    ok = draw_fn(&pg, fp, name, fmt, err);
  } else {
    *svg = svg_fn(&pg);
    ok = *svg != NULL;
    if (!ok) g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "the power plot could not be drawn");
  }
  plot_series_clear(&s);
  return ok;
}

/* "FILE: error: a plot file name ends in .svg or .png"; PLOT_NONE then */
static PlotFormat format_or_error(const char *file, GError **err) {
  PlotFormat fmt = plot_format_of(file);
  if (fmt == PLOT_NONE) {
    g_autofree char *name = text_escape(file);
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: error: a plot file name ends in .svg or .png", name);
  }
  return fmt;
}

gboolean plot_write_to(const Program *p, const SimTrace *t, FILE *fp, const char *file, GError **err) {
  PlotFormat fmt = format_or_error(file, err);
  return fmt != PLOT_NONE && plot_page(p, t, fp, file, fmt, NULL, err);
}

gboolean plot_write(const Program *p, const SimTrace *t, const char *file, GError **err) {
  if (format_or_error(file, err) == PLOT_NONE || !plot_load(err)) return FALSE;
  g_autoptr(GError) oe = NULL;
  OutFile *o = outfile_open(file, NULL, OUTFILE_DEFAULT, &oe);
  if (o && !plot_write_to(p, t, outfile_stream(o), file, err)) {
    outfile_abandon(o);
    return FALSE;
  }
  if (o && outfile_commit(o, &oe)) return TRUE;
  g_autofree char *name = text_escape(file);
  g_set_error(err, G_FILE_ERROR, oe->code, "%s:1:1: error: cannot write: %s", name, oe->message);
  return FALSE;
}

char *plot_svg(const Program *p, const SimTrace *t, GError **err) {
  char *svg = NULL;
  return plot_page(p, t, NULL, NULL, PLOT_SVG, &svg, err) ? svg : NULL;
}

void plot_release_fonts(void) {
  g_mutex_lock(&plot_lock);
  ReleaseFn r = release_fn;
  g_mutex_unlock(&plot_lock);
  if (r) r(); /* nothing was drawn (no font cached) when the module is not loaded */
}
