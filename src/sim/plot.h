/* plot.h - the power plot of a run for `tcc-sim --plot` (docs/tools.md
 * "Power plot"): power over time stacked by unit class, the 20 W limit,
 * the 1000-cycle window average and the hottest window, drawn with cairo
 * as SVG or PNG.  The data are the timeline that --trace records (trace.h):
 * the per-unit energy buckets and the power runs of the same sim_energy
 * calls that give the report's peak. */
#ifndef TCC_PLOT_H
#define TCC_PLOT_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

typedef enum { PLOT_NONE, PLOT_SVG, PLOT_PNG } PlotFormat;

/* By the file name's suffix, ignoring case: .svg, .png, else PLOT_NONE. */
PlotFormat plot_format_of(const char *file);

/* The curves of a plot: nb buckets of `bucket` cycles (the last one may be
 * shorter: cycles - (nb-1)*bucket). */
typedef struct PlotSeries {
  int64_t cycles, bucket, nb;
  double static_w;
  double *unit_w;         /* UC__COUNT x nb: average dynamic W of each unit class */
  double *total_w;        /* nb: average power from the power runs, static included */
  double *window_w;       /* nb: the 1000-cycle window centred on the bucket (clamped into the run) */
  double unit_uj[UC__COUNT]; /* each class's energy over the run */
  double peak_w;          /* the report's hottest window */
  int64_t peak_start;
} PlotSeries;

/* Buckets of the plot: the recorded bucket size doubled until the run has
 * at most max_buckets of them. */
void plot_series(const SimTrace *t, int max_buckets, PlotSeries *s);
void plot_series_clear(PlotSeries *s);

enum { PLOT_WIDTH = 1200, PLOT_HEIGHT = 600, PLOT_MAX_BUCKETS = 1024 };

/* The power axis's top (before it is rounded to a tick): the 1000-cycle
 * window's, which the limit is about, with room above it and above the
 * limit, not the buckets': a bucket of 128 cycles may pass 20 W in a legal
 * program, and an axis to 40 W made it look like a violation.  Buckets over
 * the top are clipped, and the plot says so (plot_draw.c). */
static inline double plot_axis_top(const PlotSeries *s) {
  double top = s->peak_w;
  for (int64_t k = 0; k < s->nb; k++) top = top > s->window_w[k] ? top : s->window_w[k];
  top *= 1.1;
  return top > POWER_LIMIT_W * 1.25 ? top : POWER_LIMIT_W * 1.25;
}

/* Draw the plot of a finished run into `file` (format by plot_format_of),
 * as every output file is written (outfile.h: whole, or not at all).
 * FALSE with *err = "FILE:1:1: error: cannot write: REASON" (or "FILE:
 * error: ..." for a name that is neither .svg nor .png, or plot_load's
 * error). */
gboolean plot_write(const Program *p, const SimTrace *t, const char *file, GError **err);
/* The same plot to the stream `fp` (tcc-sim's output file, opened before
 * the run), flushed, not closed; `file` gives the format and names it in
 * *err. */
gboolean plot_write_to(const Program *p, const SimTrace *t, FILE *fp, const char *file, GError **err);
/* The same plot as SVG text in memory (g_free), the bytes plot_write
 * writes to a .svg file (tcc-grade --html puts it in its page).  NULL
 * with *err on plot_load's error. */
char *plot_svg(const Program *p, const SimTrace *t, GError **err);

/* The drawing is a module of its own, PLOT_MODULE, linked with cairo and
 * fontconfig (src/sim/plot/plot_draw.c): a run without --plot does not
 * load those libraries.  plot_write loads it on its first call; tcc-sim
 * calls plot_load before the run, so that a missing module fails early.
 * It is looked for beside the executable, then in ../lib/tcc from it (make
 * install).  FALSE with *err = "tcc-sim: error: --plot: cannot load the
 * plot module: REASON".  Thread-safe. */
#define PLOT_MODULE "tcc-sim-plot.so"
gboolean plot_load(GError **err);

/* What the module draws: the curves and the two title lines (the program
 * and its problem; the problem's shape, cycles, peak and bucket size), with
 * the unit classes' names (UC__COUNT of them, sim.h order). */
typedef struct PlotPage {
  const PlotSeries *s;
  const char *title, *subtitle;
  const char *const *class_names;
  int nstages;                  /* stage markers: each stage's first issue */
  const int64_t *stage_start;   /* (plot_stages), by start                 */
  const char *const *stage_name;
} PlotPage;

/* The stages of a run for its markers: each stage's name (the --profile
 * stage key of its instructions' comments: "l0.w1") and its first issue,
 * by start then name.  *names and *starts get nstages entries. */
int plot_stages(const Program *p, const SimTrace *t, GPtrArray **names, GArray **starts);

/* The module's entry points (plot_draw.c), looked up by name: draw pg to
 * the stream fp in `fmt`, flushed, not closed (FALSE with *err =
 * "NAME:1:1: error: cannot write: REASON"), release the font caches
 * (plot_release_fonts), draw pg as SVG text (plot_svg). */
gboolean plot_draw_stream(const PlotPage *pg, FILE *fp, const char *name, PlotFormat fmt, GError **err);
void plot_draw_release_fonts(void);
/* ... and pg drawn as SVG text (g_free; NULL when cairo fails). */
char *plot_draw_svg(const PlotPage *pg);

/* Free the font caches that drawing text leaves in cairo and fontconfig
 * (reachable only from memory a leak checker does not scan), once no cairo
 * object is alive: the end of a process that plotted, under ASan's leak
 * detection.  Drawing again afterwards works (the caches are rebuilt).
 * Nothing to do when the plot module was never loaded. */
void plot_release_fonts(void);

#endif
