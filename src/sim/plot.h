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

/* Draw the plot of a finished run into `file` (format by plot_format_of).
 * FALSE with *err = "FILE:1:1: error: cannot write: REASON" (or "FILE:
 * error: ..." for a name that is neither .svg nor .png). */
gboolean plot_write(const Program *p, const SimTrace *t, const char *file, GError **err);

/* Free the font caches that drawing text leaves in cairo and fontconfig
 * (reachable only from memory a leak checker does not scan), once no cairo
 * object is alive: the end of a process that plotted, under ASan's leak
 * detection.  Drawing again afterwards works (the caches are rebuilt). */
void plot_release_fonts(void);

#endif
