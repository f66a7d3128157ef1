/* png_stats.c - `png-stats FILE.png`: WIDTH HEIGHT INK COLOURS of a PNG on
 * one line, for tests/run_plot.sh (is a screenshot blank?).  INK counts the
 * pixels that differ from the most frequent colour (the background),
 * COLOURS the distinct colours.  Read with cairo; exit 2 on a file that is
 * not a PNG. */
#include <cairo.h>
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: png-stats FILE.png\n");
    return 2;
  }
  cairo_surface_t *s = cairo_image_surface_create_from_png(argv[1]);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "%s: error: %s\n", argv[1], cairo_status_to_string(cairo_surface_status(s)));
    cairo_surface_destroy(s);
    return 2;
  }
  cairo_surface_flush(s);
  int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  const unsigned char *data = cairo_image_surface_get_data(s);
  /* colour -> count; the key is the pixel (alpha ignored: screenshots are
   * opaque) */
  GHashTable *count = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint32_t px = ((const uint32_t *)(data + (size_t)y * (size_t)stride))[x] & 0xffffffu;
      gpointer k = GUINT_TO_POINTER(px + 1u); /* never NULL */
      g_hash_table_insert(count, k, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(count, k)) + 1u));
    }
  guint most = 0;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, count);
  while (g_hash_table_iter_next(&it, &k, &v)) most = MAX(most, GPOINTER_TO_UINT(v));
  printf("%d %d %lld %u\n", w, h, (long long)w * h - most, g_hash_table_size(count));
  g_hash_table_destroy(count);
  cairo_surface_destroy(s);
  return 0;
}
