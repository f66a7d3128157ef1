/* test_plot.c - the power plot (plot.c; docs/tools.md "Power plot"): the
 * stacked unit classes add up to the power runs bucket by bucket and to the
 * report's energy per class, the window curve stays under the report's peak,
 * long runs are bucketed within the limit, the SVG and PNG files are what
 * they claim (header, signature, size, ink), the same run gives the same
 * bytes, and a file that cannot be written is one diagnostic. */
#include <cairo.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "plot.h"
#include "tests.h"

/* Run a program of the source tree with the timeline recorded. */
static Program *run_traced(const char *rel, SimResult *r) {
  g_autoptr(GError) err = NULL;
  g_autofree char *path = g_strconcat(TCC_TOP "/", rel, NULL);
  Program *p = sim_asm_load(path, &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "");
  SimOptions o;
  sim_options_default(&o);
  o.trace = TRUE;
  o.timing_only = TRUE;
  ck_assert_msg(sim_run(p, &o, r, &err), "%s", err ? err->message : "");
  return p;
}

static void check_series(const SimResult *r, int max_buckets) {
  PlotSeries s;
  plot_series(r->trace, max_buckets, &s);
  ck_assert(s.nb >= 1 && s.nb <= max_buckets);
  ck_assert(s.nb * s.bucket >= r->cycles && (s.nb - 1) * s.bucket < r->cycles);
  ck_assert_int_eq(s.cycles, r->cycles);
  /* a bucket twice as large would have fitted only if this one is the
   * recorded size (buckets never grow more than needed) */
  ck_assert(s.bucket == r->trace->bucket || (r->cycles + s.bucket / 2 - 1) / (s.bucket / 2) > max_buckets);
  for (int64_t k = 0; k < s.nb; k++) {
    double w = s.static_w;
    for (int u = 0; u < UC__COUNT; u++) w += s.unit_w[(size_t)u * (size_t)s.nb + (size_t)k];
    ck_assert_msg(fabs(w - s.total_w[k]) <= 1e-9 * MAX(1.0, s.total_w[k]),
                  "bucket %" G_GINT64_FORMAT ": units %.12f W, power runs %.12f W", k, w, s.total_w[k]);
    ck_assert_msg(s.window_w[k] <= s.peak_w + 1e-9, "window %.6f over the peak %.6f", s.window_w[k], s.peak_w);
  }
  /* the buckets hold the same units as the report's classes: the same bits */
  for (int u = 0; u < UC__COUNT; u++)
    ck_assert_msg(s.unit_uj[u] == r->unit_energy_uj[u], "%s: %.9f uJ plotted, %.9f in the report",
                  sim_unit_class_name[u], s.unit_uj[u], r->unit_energy_uj[u]);
  ck_assert(s.peak_w == r->peak_w && s.peak_start == r->peak_start);
  plot_series_clear(&s);
}

/* The layers add up to the power runs (the report's accounting), per
 * bucket and per class, at the plot's bucket count and at a tight one. */
START_TEST(test_plot_series_sums) {
  static const char *const progs[] = {"tests/asm/tiny_p1.asm", "tests/asm/tiny_d1.asm", "tests/golden/d1_small.asm"};
  for (guint i = 0; i < G_N_ELEMENTS(progs); i++) {
    SimResult r;
    g_autoptr(Program) p = run_traced(progs[i], &r);
    (void)p; /* freed at the end of the block, after the result */
    check_series(&r, PLOT_MAX_BUCKETS);
    check_series(&r, 16);
    check_series(&r, 1);
    sim_result_clear(&r);
  }
}
END_TEST

static char *slurp(const char *file, gsize *len) {
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(file, &text, len, NULL), "cannot read %s", file);
  return text;
}

/* An SVG and a PNG of a small program: the SVG's header, the PNG's
 * signature, size and ink, and the same bytes on a second run. */
/* The power axis follows the 1000-cycle window, not the buckets: a
 * 128-cycle bucket at 40 W in a program whose window stays at 19 W leaves
 * the axis at the limit's 25 W (it is clipped there); a window over the
 * limit raises it. */
START_TEST(test_plot_axis_top) {
  double total[4] = {10, 40, 12, 11}, window[4] = {15, 19, 18, 16};
  PlotSeries s = {.cycles = 512, .bucket = 128, .nb = 4, .total_w = total, .window_w = window, .peak_w = 19};
  ck_assert_double_eq_tol(plot_axis_top(&s), POWER_LIMIT_W * 1.25, 1e-9);
  window[2] = 30, s.peak_w = 30;
  ck_assert_double_eq_tol(plot_axis_top(&s), 33, 1e-9);
}
END_TEST

/* The stage markers of a golden program: every stage its instructions'
 * comments name, once, at its first issue, in start order (no hash order). */
START_TEST(test_plot_stages) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/golden/d1_small.asm", &r);
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GArray) starts = NULL;
  int n = plot_stages(p, r.trace, &names, &starts);
  ck_assert_int_gt(n, 4);
  ck_assert_int_eq((int)names->len, n);
  gboolean qkv = FALSE;
  for (int i = 0; i < n; i++) {
    const char *name = g_ptr_array_index(names, i);
    qkv |= strcmp(name, "t0.l0.qkv") == 0;
    ck_assert(strcmp(name, "(none)") != 0);
    if (i > 0) ck_assert(g_array_index(starts, int64_t, i - 1) <= g_array_index(starts, int64_t, i));
    for (int j = 0; j < i; j++) ck_assert_str_ne(name, g_ptr_array_index(names, j));
  }
  ck_assert_msg(qkv, "no t0.l0.qkv stage");
  sim_result_clear(&r);
}
END_TEST

START_TEST(test_plot_files) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/asm/tiny_p1.asm", &r);
  g_autofree char *dir = g_dir_make_tmp("tcc-plot-XXXXXX", NULL);
  ck_assert(dir != NULL);
  g_autofree char *svg = g_build_filename(dir, "p.svg", NULL), *svg2 = g_build_filename(dir, "q.SVG", NULL);
  g_autofree char *png = g_build_filename(dir, "p.png", NULL), *png2 = g_build_filename(dir, "q.png", NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(plot_write(p, r.trace, svg, &err), "%s", err ? err->message : "");
  ck_assert(plot_write(p, r.trace, svg2, &err));
  ck_assert(plot_write(p, r.trace, png, &err));
  ck_assert(plot_write(p, r.trace, png2, &err));
  gsize n1, n2;
  g_autofree char *a = slurp(svg, &n1), *b = slurp(svg2, &n2);
  ck_assert(n1 > 1000 && n1 == n2 && memcmp(a, b, n1) == 0);
  ck_assert(g_str_has_prefix(a, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
  ck_assert(strstr(a, "width=\"1200px\" height=\"600px\"") != NULL);
  ck_assert(strstr(a, "</svg>") != NULL);
  g_autofree char *c = slurp(png, &n1), *d = slurp(png2, &n2);
  ck_assert(n1 > 1000 && n1 == n2 && memcmp(c, d, n1) == 0);
  ck_assert(memcmp(c, "\x89PNG\r\n\x1a\n", 8) == 0);
  cairo_surface_t *img = cairo_image_surface_create_from_png(png);
  ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
  ck_assert_int_eq(cairo_image_surface_get_width(img), PLOT_WIDTH);
  ck_assert_int_eq(cairo_image_surface_get_height(img), PLOT_HEIGHT);
  /* ink: pixels that are not white, and several colours (the layers) */
  cairo_surface_flush(img);
  const unsigned char *px = cairo_image_surface_get_data(img);
  int stride = cairo_image_surface_get_stride(img), ink = 0;
  g_autoptr(GHashTable) colours = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (int y = 0; y < PLOT_HEIGHT; y++)
    for (int x = 0; x < PLOT_WIDTH; x++) {
      uint32_t v = ((const uint32_t *)(px + (size_t)y * (size_t)stride))[x] & 0xffffffu;
      ink += v != 0xffffffu;
      g_hash_table_add(colours, GUINT_TO_POINTER(v + 1u));
    }
  cairo_surface_destroy(img);
  ck_assert_msg(ink > PLOT_WIDTH * PLOT_HEIGHT / 10, "only %d inked pixels", ink);
  ck_assert_msg(g_hash_table_size(colours) >= 8, "only %u colours", g_hash_table_size(colours));
  /* the font caches freed (else ASan's leak check fails the suite), then a
   * plot again: the same bytes */
  plot_release_fonts();
  ck_assert(plot_write(p, r.trace, svg2, &err));
  g_autofree char *e = slurp(svg2, &n2);
  ck_assert(n2 == strlen(a) && memcmp(a, e, n2) == 0);
  plot_release_fonts();
  g_remove(svg), g_remove(svg2), g_remove(png), g_remove(png2);
  g_rmdir(dir);
  sim_result_clear(&r);
}
END_TEST

/* Diagnostics: a name that is neither .svg nor .png, a missing directory. */
START_TEST(test_plot_errors) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/asm/tiny_d1.asm", &r);
  ck_assert_int_eq(plot_format_of("a.svg"), PLOT_SVG);
  ck_assert_int_eq(plot_format_of("B.PnG"), PLOT_PNG);
  ck_assert_int_eq(plot_format_of("c.pdf"), PLOT_NONE);
  ck_assert_int_eq(plot_format_of(".svg"), PLOT_NONE);
  g_autoptr(GError) err = NULL;
  ck_assert(!plot_write(p, r.trace, "plot.pdf", &err));
  ck_assert_str_eq(err->message, "plot.pdf: error: a plot file name ends in .svg or .png");
  g_clear_error(&err);
  ck_assert(!plot_write(p, r.trace, "/nonexistent-dir/p.svg", &err));
  ck_assert_str_eq(err->message, "/nonexistent-dir/p.svg:1:1: error: cannot write: No such file or directory");
  g_clear_error(&err);
  ck_assert(!plot_write(p, r.trace, "/nonexistent-dir/p.png", &err));
  ck_assert_str_eq(err->message, "/nonexistent-dir/p.png:1:1: error: cannot write: No such file or directory");
  sim_result_clear(&r);
}
END_TEST

Suite *suite_plot(void) {
  Suite *s = suite_create("plot");
  TCase *tc = tcase_create("plot");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_plot_series_sums);
  tcase_add_test(tc, test_plot_axis_top);
  tcase_add_test(tc, test_plot_stages);
  tcase_add_test(tc, test_plot_files);
  tcase_add_test(tc, test_plot_errors);
  suite_add_tcase(s, tc);
  return s;
}
