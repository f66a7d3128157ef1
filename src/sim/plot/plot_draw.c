/* plot_draw.c - the drawing of `tcc-sim --plot` (plot.h, docs/tools.md
 * "Power plot") with cairo: the plot module, BUILD/tcc-sim-plot.so, which
 * tcc-sim loads on its first plot (plot.c) so that a run without --plot
 * does not load cairo, fontconfig and their ~19 libraries (about 7 ms of
 * CPU at every start on this VM).  It calls nothing of the simulator: what
 * it draws comes in a PlotPage.
 *
 *   title          the program, its problem, cycles, peak and bucket size
 *   plot area      power per bucket stacked by unit class (static at the
 *                  bottom), the 1000-cycle window average as a line, the
 *                  20 W limit dashed, the hottest window shaded
 *   axes           cycles and W with 1-2-5 ticks
 *   legend         one swatch per class with energy, its energy over the run
 *
 * Text uses cairo's toy font API with a fixed family; nothing in the file
 * depends on the time or on pointers, so the same run gives the same
 * bytes. */
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

/* ---- drawing ----------------------------------------------------------- */

/* The stack, bottom to top: static, then the unit classes in sim.h order. */
static const double class_rgb[UC__COUNT][3] = {
    [UC_MMA] = {0.12, 0.47, 0.71}, [UC_VEC] = {1.00, 0.50, 0.05}, [UC_SFU] = {0.17, 0.63, 0.17},
    [UC_RED] = {0.58, 0.40, 0.74}, [UC_DMA] = {0.55, 0.34, 0.29}, [UC_HBM] = {0.89, 0.47, 0.76},
    [UC_NOC] = {0.74, 0.74, 0.13}, [UC_SH] = {0.09, 0.75, 0.81},  [UC_RF] = {0.68, 0.78, 0.91}};
static const double static_rgb[3] = {0.82, 0.82, 0.82};

#define FONT "DejaVu Sans"

/* The plot area in device units, and the data ranges it shows. */
typedef struct Frame {
  double x0, x1, y0, y1; /* left, right, top, bottom */
  double cmax, wmax;     /* cycles and W at the right and top edges */
} Frame;

static double fx(const Frame *f, double cyc) { return f->x0 + (f->x1 - f->x0) * cyc / f->cmax; }
static double fy(const Frame *f, double w) { return f->y1 - (f->y1 - f->y0) * w / f->wmax; }

/* A 1-2-5 step giving at most `n` intervals over [0, span]. */
static double nice_step(double span, int n) {
  double raw = span / n, mag = pow(10.0, floor(log10(raw)));
  static const double m[] = {1, 2, 5, 10};
  for (int i = 0; i < 4; i++)
    if (m[i] * mag >= raw) return m[i] * mag;
  return 10 * mag;
}

static void text_at(cairo_t *cr, double x, double y, double align, const char *s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_move_to(cr, x - align * e.x_advance, y);
  cairo_show_text(cr, s);
}

/* "250k", "1.5M", "800": a cycle count on the axis. */
static char *cycles_label(double c) {
  if (c >= 1e6 && fmod(c, 1e5) == 0) return g_strdup_printf("%gM", c / 1e6);
  if (c >= 1e3 && fmod(c, 1e2) == 0) return g_strdup_printf("%gk", c / 1e3);
  return g_strdup_printf("%.0f", c);
}

/* The power gridlines, under everything else. */
static void grid(cairo_t *cr, const Frame *f) {
  double ws = nice_step(f->wmax, 6);
  cairo_set_source_rgb(cr, 0.90, 0.90, 0.90);
  cairo_set_line_width(cr, 1);
  for (double w = ws; w <= f->wmax + 1e-9; w += ws) {
    cairo_move_to(cr, f->x0, fy(f, w));
    cairo_line_to(cr, f->x1, fy(f, w));
    cairo_stroke(cr);
  }
}

static void axes(cairo_t *cr, const Frame *f) {
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 12);
  double ws = nice_step(f->wmax, 6);
  for (double w = 0; w <= f->wmax + 1e-9; w += ws) { /* ticks, labels: W */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, f->x0 - 5, fy(f, w));
    cairo_line_to(cr, f->x0, fy(f, w));
    cairo_stroke(cr);
    g_autofree char *l = g_strdup_printf("%g", w);
    text_at(cr, f->x0 - 8, fy(f, w) + 4, 1.0, l);
  }
  double cs = nice_step(f->cmax, 8);
  for (double c = 0; c <= f->cmax + 1e-9; c += cs) { /* ticks, labels: cycles */
    cairo_move_to(cr, fx(f, c), f->y1);
    cairo_line_to(cr, fx(f, c), f->y1 + 5);
    cairo_stroke(cr);
    g_autofree char *l = cycles_label(c);
    text_at(cr, fx(f, c), f->y1 + 19, 0.5, l);
  }
  cairo_set_line_width(cr, 1.2);
  cairo_move_to(cr, f->x0, f->y0);
  cairo_line_to(cr, f->x0, f->y1);
  cairo_line_to(cr, f->x1, f->y1);
  cairo_stroke(cr);
  cairo_set_font_size(cr, 13);
  text_at(cr, (f->x0 + f->x1) / 2, f->y1 + 40, 0.5, "cycles");
  cairo_save(cr);
  cairo_translate(cr, f->x0 - 42, (f->y0 + f->y1) / 2);
  cairo_rotate(cr, -G_PI / 2);
  text_at(cr, 0, 0, 0.5, "power (W)");
  cairo_restore(cr);
}

/* Layer `top` of the stack filled from 0 up to the cumulative power of the
 * layers 0..top (0 = static, 1 + u = unit class u), as steps per bucket;
 * drawn from the top layer down, each covering the ones above it below
 * its edge. */
static void layer(cairo_t *cr, const Frame *f, const PlotSeries *s, int top) {
  cairo_move_to(cr, fx(f, 0), fy(f, 0));
  for (int64_t k = 0; k < s->nb; k++) {
    double w = s->static_w;
    for (int u = 0; u < top; u++) w += s->unit_w[(size_t)u * (size_t)s->nb + (size_t)k];
    double a = (double)(k * s->bucket), b = (double)MIN((k + 1) * s->bucket, s->cycles);
    cairo_line_to(cr, fx(f, a), fy(f, w));
    cairo_line_to(cr, fx(f, b), fy(f, w));
  }
  cairo_line_to(cr, fx(f, (double)s->cycles), fy(f, 0));
  cairo_close_path(cr);
  const double *rgb = top == 0 ? static_rgb : class_rgb[top - 1];
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  cairo_fill(cr);
}

/* The hottest window's span on the x axis, inside the plot area and at
 * least 3 units wide so that it stays visible on a long run. */
static void hot_span(const Frame *f, const PlotSeries *s, double *a, double *b) {
  *a = fx(f, (double)s->peak_start);
  *b = fx(f, (double)(s->peak_start + POWER_WINDOW));
  *b = MIN(*b, f->x1); /* a run shorter than the window: [0, 1000) */
  if (*b - *a < 3) *a = (*a + *b) / 2 - 1.5, *b = *a + 3;
  if (*b > f->x1) *a -= *b - f->x1, *b = f->x1;
}

static void curves(cairo_t *cr, const Frame *f, const PlotSeries *s) {
  /* the hottest window: a band behind the stack, its edges over it */
  double a, b;
  hot_span(f, s, &a, &b);
  cairo_set_source_rgba(cr, 1.0, 0.80, 0.0, 0.40);
  cairo_rectangle(cr, a, f->y0, b - a, f->y1 - f->y0);
  cairo_fill(cr);
  cairo_save(cr); /* the buckets over the axis's top are clipped (plot_axis_top) */
  cairo_rectangle(cr, f->x0, f->y0, f->x1 - f->x0, f->y1 - f->y0);
  cairo_clip(cr);
  for (int top = UC__COUNT; top >= 0; top--)
    if (top == 0 || s->unit_uj[top - 1] > 0) layer(cr, f, s, top);
  cairo_restore(cr);
  cairo_set_source_rgb(cr, 0.85, 0.60, 0.0);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, a, f->y0, b - a, f->y1 - f->y0);
  cairo_stroke(cr);
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  g_autofree char *hot = g_strdup_printf("hottest 1000 cycles: %.2f W", s->peak_w);
  cairo_text_extents_t e;
  cairo_text_extents(cr, hot, &e);
  double tx = CLAMP((a + b) / 2 - e.x_advance / 2, f->x0, f->x1 - e.x_advance);
  cairo_set_source_rgb(cr, 0.55, 0.40, 0.0);
  text_at(cr, tx, f->y0 - 4, 0, hot);
  /* the 1000-cycle window average, at bucket centres: the main line, the
   * one the limit is about */
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_set_line_width(cr, 2.4);
  for (int64_t k = 0; k < s->nb; k++) {
    double c = ((double)(k * s->bucket) + (double)MIN((k + 1) * s->bucket, s->cycles)) / 2;
    if (k == 0) cairo_move_to(cr, fx(f, c), fy(f, s->window_w[k]));
    else cairo_line_to(cr, fx(f, c), fy(f, s->window_w[k]));
  }
  cairo_stroke(cr);
  /* the limit */
  static const double dash[] = {8, 4};
  cairo_set_source_rgb(cr, 0.85, 0.10, 0.10);
  cairo_set_line_width(cr, 1.6);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, f->x0, fy(f, POWER_LIMIT_W));
  cairo_line_to(cr, f->x1, fy(f, POWER_LIMIT_W));
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  g_autofree char *lim = g_strdup_printf("limit %g W", POWER_LIMIT_W);
  text_at(cr, f->x1 - 4, fy(f, POWER_LIMIT_W) - 5, 1.0, lim);
}

/* The stage markers: a light line where each stage first issues, its name
 * along it at the top of the plot area (a name closer than a line of text
 * to the last one written is left out: the lines stay). */
static void stage_marks(cairo_t *cr, const Frame *f, const PlotPage *pg) {
  static const double dash[] = {2, 3};
  cairo_set_source_rgba(cr, 0.25, 0.25, 0.25, 0.55);
  cairo_set_line_width(cr, 0.8);
  cairo_set_dash(cr, dash, 2, 0);
  for (int i = 0; i < pg->nstages; i++) {
    double x = fx(f, (double)pg->stage_start[i]);
    cairo_move_to(cr, x, f->y0);
    cairo_line_to(cr, x, f->y1);
    cairo_stroke(cr);
  }
  cairo_set_dash(cr, NULL, 0, 0);
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 9);
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  double last = -1e9;
  for (int i = 0; i < pg->nstages; i++) {
    double x = fx(f, (double)pg->stage_start[i]);
    if (x - last < 11) continue;
    last = x;
    cairo_save(cr);
    cairo_translate(cr, x + 3, f->y0 + 4);
    cairo_rotate(cr, G_PI / 2);
    text_at(cr, 0, 0, 0, pg->stage_name[i]);
    cairo_restore(cr);
  }
}

/* One legend row: a swatch (or a line) and its text. */
static void legend_row(cairo_t *cr, double x, double y, const double rgb[3], gboolean line, const char *s) {
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  if (line) {
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, x, y - 4);
    cairo_line_to(cr, x + 14, y - 4);
    cairo_stroke(cr);
  } else {
    cairo_rectangle(cr, x, y - 10, 14, 12);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  text_at(cr, x + 20, y, 0, s);
}

static void legend(cairo_t *cr, const Frame *f, const PlotSeries *s, const char *const *names) {
  double x = f->x1 + 18, y = f->y0 + 12;
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 12);
  cairo_set_source_rgb(cr, 0, 0, 0);
  text_at(cr, x, y, 0, "energy (uJ)");
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  y += 22;
  for (int u = UC__COUNT - 1; u >= 0; u--) { /* top of the stack first */
    if (s->unit_uj[u] <= 0) continue;
    g_autofree char *l = g_strdup_printf("%s %.3f", names[u], s->unit_uj[u]);
    legend_row(cr, x, y, class_rgb[u], FALSE, l);
    y += 20;
  }
  g_autofree char *st = g_strdup_printf("static %.3f", s->static_w * (double)s->cycles * 1e-3);
  legend_row(cr, x, y, static_rgb, FALSE, st);
  y += 32;
  static const double black[3] = {0.1, 0.1, 0.1}, red[3] = {0.85, 0.10, 0.10}, gold[3] = {1.0, 0.80, 0.0};
  legend_row(cr, x, y, black, TRUE, "1000-cycle window");
  y += 20;
  legend_row(cr, x, y, red, TRUE, "limit");
  y += 20;
  legend_row(cr, x, y, gold, FALSE, "hottest window");
}

static void title(cairo_t *cr, const PlotPage *pg) {
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 15);
  text_at(cr, 20, 22, 0, pg->title);
  cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  text_at(cr, 20, 40, 0, pg->subtitle);
}

static void draw(cairo_t *cr, const PlotPage *pg) {
  const PlotSeries *s = pg->s;
  /* the same glyphs on every surface: no hinting, whatever the surface's
   * defaults (else a PNG drawn after an SVG in one process could differ) */
  cairo_font_options_t *fo = cairo_font_options_create();
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  cairo_set_font_options(cr, fo);
  cairo_font_options_destroy(fo);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  double top = plot_axis_top(s), ws = nice_step(top, 6);
  Frame f = {75, PLOT_WIDTH - 190, 70, PLOT_HEIGHT - 60, (double)s->cycles, ceil(top / ws) * ws};
  title(cr, pg);
  grid(cr, &f);
  curves(cr, &f, s);
  stage_marks(cr, &f, pg);
  axes(cr, &f);
  legend(cr, &f, s, pg->class_names);
  int clipped = 0; /* said under the legend: the bars are not the limit's measure */
  for (int64_t k = 0; k < s->nb; k++) clipped += s->total_w[k] > f.wmax;
  if (clipped) {
    g_autofree char *n = g_strdup_printf("%d bucket%s of %" G_GINT64_FORMAT " cycles", clipped,
                                         clipped == 1 ? "" : "s", s->bucket);
    g_autofree char *o = g_strdup_printf("over %g W, clipped: the", f.wmax);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_font_size(cr, 10);
    text_at(cr, f.x1 + 18, f.y1 - 34, 0, n);
    text_at(cr, f.x1 + 18, f.y1 - 20, 0, o);
    text_at(cr, f.x1 + 18, f.y1 - 6, 0, "limit is the window's");
  }
}

/* ---- the file ---------------------------------------------------------- */

/* Where cairo's output goes: a file (PNG) or a string (SVG). */
typedef struct Sink {
  FILE *f;
  GString *g;
  int err; /* errno of the first failed write */
} Sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int len) {
  Sink *k = closure;
  if (k->g) {
    g_string_append_len(k->g, (const char *)data, len);
    return CAIRO_STATUS_SUCCESS;
  }
  if (k->err) return CAIRO_STATUS_WRITE_ERROR;
  errno = 0;
  if (fwrite(data, 1, len, k->f) != len) {
    k->err = errno ? errno : EIO;
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

/* cairo names the SVG's top group after the surface's serial number in the
 * process (`<g id="surface6">` when five surfaces came before): renamed
 * `surface1`, so that the bytes depend on the run alone, not on what the
 * process drew before (a PNG first, a second plot, the unit tests). */
static void svg_stable_ids(GString *g) {
  static const char tag[] = "<g id=\"surface";
  char *at = strstr(g->str, tag);
  if (!at) return;
  gsize pos = (gsize)(at - g->str) + strlen(tag), end = pos;
  while (g_ascii_isdigit(g->str[end])) end++;
  g_string_erase(g, (gssize)pos, (gssize)(end - pos));
  g_string_insert_c(g, (gssize)pos, '1');
}

static gboolean fail(GError **err, const char *file, int e) {
  g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s:1:1: error: cannot write: %s", file,
              g_strerror(e));
  return FALSE;
}

/* Draw pg onto a surface of `fmt` whose bytes go to k (an SVG's into
 * k->g, with stable ids); the cairo status. */
static cairo_status_t render(const PlotPage *pg, PlotFormat fmt, Sink *k) {
  cairo_surface_t *sf;
  if (fmt == PLOT_SVG) {
    sf = cairo_svg_surface_create_for_stream(sink_write, k, PLOT_WIDTH, PLOT_HEIGHT);
    cairo_svg_surface_set_document_unit(sf, CAIRO_SVG_UNIT_PX);
  } else {
    sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, PLOT_WIDTH, PLOT_HEIGHT);
  }
  cairo_t *cr = cairo_create(sf);
  draw(cr, pg);
  cairo_destroy(cr);
  cairo_status_t st = CAIRO_STATUS_SUCCESS;
  if (fmt == PLOT_PNG) st = cairo_surface_write_to_png_stream(sf, sink_write, k);
  cairo_surface_finish(sf); /* an SVG is written out here */
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(sf);
  cairo_surface_destroy(sf);
  if (k->g) svg_stable_ids(k->g);
  return st;
}

gboolean plot_draw_stream(const PlotPage *pg, FILE *fp, const char *name, PlotFormat fmt, GError **err) {
  Sink k = {fp, fmt == PLOT_SVG ? g_string_new(NULL) : NULL, 0};
  cairo_status_t st = render(pg, fmt, &k);
  errno = 0;
  if (k.g) {
    if (fwrite(k.g->str, 1, k.g->len, fp) != k.g->len) k.err = errno ? errno : EIO;
    g_string_free(k.g, TRUE);
  }
  errno = 0;
  if (!k.err && fflush(fp) != 0) k.err = errno ? errno : EIO;
  if (!k.err && st != CAIRO_STATUS_SUCCESS) k.err = st == CAIRO_STATUS_NO_MEMORY ? ENOMEM : EIO;
  return k.err ? fail(err, name, k.err) : TRUE;
}

char *plot_draw_svg(const PlotPage *pg) {
  Sink k = {NULL, g_string_new(NULL), 0};
  cairo_status_t st = render(pg, PLOT_SVG, &k);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_string_free(k.g, TRUE);
    return NULL;
  }
  return g_string_free(k.g, FALSE);
}

void plot_draw_release_fonts(void) {
  cairo_debug_reset_static_data();
  FcFini();
}
