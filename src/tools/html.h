/* html.h - the one-page report of `tcc-grade PLAN --html FILE`
 * (docs/tools.md "HTML report"): a self-contained HTML page (inline CSS
 * and SVG, nothing fetched) with the verdicts and the score, each
 * problem's lower bound, power plot, stages, energy by unit against the
 * unavoidable minimum, the effective knobs with their provenance, the
 * program hashes and the commands that rebuild and trace each program.
 *
 * Like record.c, the module knows the plan and the schedule record, not
 * the simulator: the grader fills an HtmlPage with plain numbers and
 * strings.  Every string from the user (the plan's path, knob values,
 * warnings, stage names) goes through html_escape; the same page data
 * gives the same bytes (no time, no pointer or hash order). */
#ifndef TCC_HTML_H
#define TCC_HTML_H

#include <glib.h>
#include <stdint.h>

#include "plan.h"

/* One stage of a problem's run (the profile's stages, by start). */
typedef struct HtmlStage {
  const char *name;
  int64_t start, end;
  int wgs;
  int64_t insns, mma_blocks, hbm_lines;
  double energy_uj;            /* its instructions' dynamic energy */
} HtmlStage;

/* One unit class: its energy over the run and the unavoidable minimum the
 * power bound counts for it (NAN: the bound counts none). */
typedef struct HtmlUnit {
  const char *name;
  double uj, min_uj;
} HtmlUnit;

enum { HTML_MAX_BOUNDS = 5, HTML_MAX_SEEDS = 8, HTML_MAX_UNITS = 16 };

typedef struct HtmlProblem {
  const char *name;            /* "p1", "d1" */
  const char *problem;         /* the `.problem` line without the keyword */
  const char *machine;         /* the `.machine` line without the keyword */
  gboolean pass;
  const char *failures;        /* "numerics (seed 13), power"; "" when it passes */
  const char *hint;            /* a FAIL's hint lines, or NULL */
  int64_t cycles, peak_start;  /* the hottest window [peak_start, +1000) */
  double peak_w, area_mm2, static_w, energy_uj;
  double max_abs_err[HTML_MAX_SEEDS];
  gboolean numerics_ok[HTML_MAX_SEEDS];
  /* the lower bound (docs/bounds.md): each bound (0: does not apply) */
  int nbounds;
  const char *bound_name[HTML_MAX_BOUNDS];
  int64_t bound_cycles[HTML_MAX_BOUNDS];
  int binding;                 /* index of the binding one */
  double min_dynamic_uj;       /* the power bound's energy, and its budget */
  double dynamic_budget_w;
  int nunits;
  HtmlUnit units[HTML_MAX_UNITS];
  int nstages;
  const HtmlStage *stages;
  const char *svg;             /* the power plot (an <svg> document), or NULL */
  const char *svg_note;        /* why there is none */
  const PlanProblem *planned;  /* the section as the plan loader made it */
  const Schedule *sched;       /* the knobs the program was compiled with, or NULL */
  const char *const *warnings; /* the loader's and the compiler's fallbacks */
  int nwarnings;
  const char *fit_note;        /* the power fitting's account, or NULL */
  const char *program_sha256, *hardware_sha256;
} HtmlProblem;

typedef struct HtmlPage {
  const char *plan;            /* the path as given */
  const char *plan_sha256;     /* of its bytes, or NULL */
  const char *grader, *simulator;
  const Plan *loaded;          /* the hardware keys' provenance */
  const uint64_t *seeds;
  int nseeds;                  /* <= HTML_MAX_SEEDS; seeds[0] is graded */
  gboolean has_score;
  double score;
  const char *score_note;      /* why there is no score */
  int nprob;
  HtmlProblem prob[2];
} HtmlPage;

/* Append s to g with & < > " ' as character references, bytes that are
 * not UTF-8 as U+FFFD and control characters other than tab and newline
 * as U+FFFD: text that is safe in an element or a quoted attribute. */
void html_escape_append(GString *g, const char *s);
/* The same as a new string (g_free). */
char *html_escape(const char *s);

/* Where knob i of an effective schedule came from: "plan line 9:5",
 * "default", "power.fit", "fallback (written at line 9:5)", "auto (line
 * 9:5)", "fallback (capacity repair)" (g_free). */
typedef enum { HTML_KNOB_DEFAULT, HTML_KNOB_PLAN, HTML_KNOB_FIT, HTML_KNOB_FALLBACK, HTML_KNOB_AUTO } HtmlKnobSource;
char *html_knob_source(const Schedule *s, int i, HtmlKnobSource *kind);

/* The page (g_free). */
char *html_page(const HtmlPage *pg);

/* The output file of --html, written as every output file is (outfile.h).
 * html_out_open, before the run: refuses a FILE that is `input` (the same
 * device and inode: "tcc-grade: error: --html FILE is the plan itself"),
 * opens a temporary file beside a regular (or missing) FILE, or FILE
 * itself when it exists and is not regular (a device, a FIFO); FALSE with
 * "FILE: error: cannot write: REASON".  html_out_commit writes the text
 * and puts the temporary file in FILE's place; html_out_abort removes it
 * (a run that failed writes no page). */
typedef struct HtmlOut {
  struct OutFile *out;
  char *file;
} HtmlOut;
gboolean html_out_open(HtmlOut *o, const char *file, const char *input, GError **err);
gboolean html_out_commit(HtmlOut *o, const char *text, gsize len, GError **err);
void html_out_abort(HtmlOut *o);

#endif
