/* report.c - the text and JSON reports of tcc-sim (issue: report fields). */
#include <math.h>
#include <string.h>

#include "bounds.h"
#include "sim.h"

char *sim_hardware_sha256(const Program *p) {
  g_autofree char *canon = sim_machine_canonical(&p->hw);
  return g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
}

int sim_verdict_exit(const Program *p, const SimResult *r) {
  gboolean ok = (!r->checked || r->check.pass) && sim_machine_area(&p->hw) <= AREA_LIMIT_MM2 &&
                r->peak_w <= POWER_LIMIT_W;
  return ok ? 0 : 1;
}

static const char *pf(gboolean ok) { return ok ? "PASS" : "FAIL"; }

/* JSON string body: the only strings we print are file names and source
 * lines, so escape quotes, backslashes and control characters. */
static void jstr(GString *g, const char *s) {
  /* JSON text is UTF-8: bytes that are not (a source line's comment, a file
   * name may hold any) become U+FFFD */
  g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
  if (valid) s = valid;
  g_string_append_c(g, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      g_string_append_printf(g, "\\%c", c);
    else if (c < 0x20)
      g_string_append_printf(g, "\\u%04x", c);
    else
      g_string_append_c(g, (char)c);
  }
  g_string_append_c(g, '"');
}

/* cycles / bound, the program's distance from the limit */
static double bound_ratio(const SimResult *r, const Bounds *b) {
  return b->bound > 0 ? (double)r->cycles / (double)b->bound : 0.0;
}

/* "bound     55001 cycles (power); cycles / bound = 11.51" and every bound
 * that applies (docs/bounds.md). */
static void bound_lines(GString *g, const Program *p, const SimResult *r) {
  Bounds b;
  sim_bounds(&p->hw, &p->prob, &b);
  g_string_append_printf(g, "bound     %" G_GINT64_FORMAT " cycles (%s); cycles / bound = %.2f\n", b.bound,
                         sim_bound_name[b.binding], bound_ratio(r, &b));
  g_string_append(g, "bounds   ");
  for (int k = 0; k < BOUND__COUNT; k++)
    if (b.cycles[k] > 0)
      g_string_append_printf(g, "%s %s %" G_GINT64_FORMAT, k ? "," : "", sim_bound_name[k], b.cycles[k]);
  g_string_append_c(g, '\n');
}

static void text_report(GString *g, const Program *p, const SimResult *r, const ReportOptions *ro) {
  g_autofree char *prob = wl_problem_canonical(&p->prob);
  g_autofree char *mach = sim_machine_canonical(&p->hw);
  g_autofree char *hh = sim_hardware_sha256(p);
  gboolean num = r->checked && r->check.pass;
  gboolean area = r->area_mm2 <= AREA_LIMIT_MM2, pw = r->peak_w <= POWER_LIMIT_W;
  g_string_append_printf(g, "%s  %s\n", TCC_SIM_VERSION, p->file);
  g_string_append_printf(g, "problem   %s\n", prob + strlen(".problem "));
  g_string_append_printf(g, "hardware  %s\n", mach + strlen(".machine "));
  g_string_append_printf(g, "seed      %" G_GUINT64_FORMAT "\n", ro->seed);
  g_string_append_printf(g, "cycles    %" G_GINT64_FORMAT "\n", r->cycles);
  g_string_append_printf(g, "area      %.4f mm^2 (limit %.0f)\n", r->area_mm2, AREA_LIMIT_MM2);
  g_string_append_printf(g, "power     %.4f W peak in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                            ") (limit %.0f; static %.4f W)\n",
                         r->peak_w, r->peak_start, r->peak_start + POWER_WINDOW, POWER_LIMIT_W,
                         r->static_w);
  g_string_append_printf(g, "energy    %.3f uJ\n", r->energy_uj);
  if (r->checked)
    g_string_append_printf(g, "error     %.3e max abs at %s (tolerance %.0e)%s\n",
                           r->check.max_abs_err, r->check.worst[0] ? r->check.worst : "-",
                           WL_TOLERANCE,
                           r->check.unwritten ? "; some outputs never written" : "");
  if (r->checked)
    g_string_append_printf(g, "verdict   numerics %s, area %s, power %s\n", pf(num), pf(area), pf(pw));
  else
    g_string_append_printf(g, "verdict   numerics SKIPPED (timing only), area %s, power %s\n",
                           pf(area), pf(pw));
  bound_lines(g, p, r);
  g_string_append_printf(g, "program   sha256 %s\n", p->sha256);
  g_string_append_printf(g, "hardware  sha256 %s\n", hh);
}

/* The arithmetic behind each bound (--profile). */
static void bound_detail(GString *g, const Program *p) {
  Bounds b;
  sim_bounds(&p->hw, &p->prob, &b);
  g_string_append(g, "\nlower bounds (docs/bounds.md)\n");
  g_string_append_printf(g, "  mma    %10" G_GINT64_FORMAT "  %" G_GINT64_FORMAT " blocks x %d cycles / %d arrays\n",
                         b.cycles[BOUND_MMA], b.mma_blocks, T_MMA_BLOCK, b.mma_arrays);
  g_string_append_printf(g, "  hbm    %10" G_GINT64_FORMAT "  %" G_GINT64_FORMAT " lines, %" G_GINT64_FORMAT
                            " on the busiest of %d channels\n",
                         b.cycles[BOUND_HBM], b.hbm_lines, b.hbm_busiest, p->hw.hbm_channels);
  if (b.dyn_w > 0)
    g_string_append_printf(g, "  power  %10" G_GINT64_FORMAT "  %.3f uJ (MMA %.3f, HBM %.3f, NoC %.3f, RF %.3f, SFU %.3f) "
                              "/ %.4f W = %.1f cycles\n",
                           b.cycles[BOUND_POWER], b.e_total_uj, b.e_mma_uj, b.e_hbm_uj, b.e_noc_uj, b.e_rf_uj,
                           b.e_sfu_uj, b.dyn_w, b.power_time);
  else
    g_string_append(g, "  power           -  static power alone is over the limit\n");
  if (p->prob.kind == PROB_D1)
    g_string_append_printf(g, "  chain  %10" G_GINT64_FORMAT "  step 0 ends >= max(%" G_GINT64_FORMAT ", load %"
                              G_GINT64_FORMAT " + ST %" G_GINT64_FORMAT "); then per step host %d + LD %"
                              G_GINT64_FORMAT " + compute %" G_GINT64_FORMAT " + ST %" G_GINT64_FORMAT "\n",
                           b.cycles[BOUND_CHAIN], b.step_period, b.load_ready, b.io_latency, T_HOST_LATENCY,
                           b.io_latency, b.step_compute, b.io_latency);
}

char *sim_verdict_hint(const Program *p, const SimResult *r, const SimResult *profiled, const char *prefix) {
  GString *g = g_string_new(NULL);
  if (r->area_mm2 > AREA_LIMIT_MM2) {
    double mm2;
    const char *what = sim_machine_area_largest(&p->hw, &mm2);
    g_string_append_printf(g, "%sarea over the limit: the largest part is %s, %.4f of %.4f mm^2\n", prefix, what,
                           mm2, r->area_mm2);
  }
  if (r->peak_w > POWER_LIMIT_W && !(profiled && profiled->hot))
    g_string_append_printf(g, "%spower over the limit: tcc-sim --profile names the knobs of the hottest window\n",
                           prefix);
  if (r->peak_w > POWER_LIMIT_W && profiled && profiled->hot) {
    g_autoptr(GArray) gr = sim_hot_groups(p, profiled, HOT_BY_KNOB);
    double win = profiled->peak_w * POWER_WINDOW * 1e-3;
    if (gr->len > 0 && win > 0) {
      const HotGroup *h = &g_array_index(gr, HotGroup, 0);
      g_string_append_printf(g, "%spower over the limit: %.1f%% of the hottest window's energy is from %s "
                                "(tcc-sim --profile: by knob, stage and task)\n",
                             prefix, 100.0 * h->energy_pj * 1e-6 / win, h->name);
    }
  }
  if (g->len == 0) {
    g_string_free(g, TRUE);
    return NULL;
  }
  return g_string_free(g, FALSE);
}

/* The window's energy (W x 1 us = uJ), static included, and its static part. */
static double window_uj(const SimResult *r) { return r->peak_w * POWER_WINDOW * 1e-3; }
static double window_static_uj(const SimResult *r) { return r->static_w * POWER_WINDOW * 1e-3; }

enum { HOT_GROUPS_SHOWN = 12 };

/* The hottest window by plan knob, by stage and by task (hot_groups.c),
 * largest first, each with its share of the window's energy: which knob to
 * turn. */
static void hot_group_report(GString *g, const Program *p, const SimResult *r) {
  double win = window_uj(r);
  g_string_append_printf(g, "\nhottest window's %.3f uJ (static %.3f) by what made its instructions:\n", win,
                         window_static_uj(r));
  for (int by = 0; by < HOT_BY__COUNT; by++) {
    g_autoptr(GArray) gr = sim_hot_groups(p, r, (HotBy)by);
    g_string_append_printf(g, "  by %s:\n", sim_hot_by_name[by]);
    int shown = MIN((int)gr->len, HOT_GROUPS_SHOWN);
    for (int i = 0; i < shown; i++) {
      const HotGroup *h = &g_array_index(gr, HotGroup, i);
      g_string_append_printf(g, "  %9.3f uJ %5.1f%%  %-32s %d instructions\n", h->energy_pj * 1e-6,
                             win > 0 ? 100.0 * h->energy_pj * 1e-6 / win : 0.0, h->name, h->insns);
    }
    if ((int)gr->len > shown) g_string_append_printf(g, "  ... and %d more\n", (int)gr->len - shown);
  }
}

/* Each stage's span, work and where its WGs' cycles went (stages.c). */
static void stage_report(GString *g, const SimResult *r) {
  g_string_append(g, "\nstages, by first issue (wait / pace / stall: WG-cycles before a WAIT, after a WAITT, "
                     "before any other issue):\n");
  g_string_append_printf(g, "  %-16s %9s %9s %9s %4s %8s %8s %9s %10s %10s %10s %10s %7s\n", "stage", "start",
                         "end", "span", "WGs", "insns", "MMA blk", "HBM lines", "wait", "pace", "stall", "energy uJ",
                         "dyn W");
  for (int i = 0; i < r->nstages; i++) {
    const SimStage *st = &r->stages[i];
    int64_t span = st->end - st->start;
    g_string_append_printf(g, "  %-16s %9" G_GINT64_FORMAT " %9" G_GINT64_FORMAT " %9" G_GINT64_FORMAT
                              " %4d %8" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %9" G_GINT64_FORMAT " %10" G_GINT64_FORMAT
                              " %10" G_GINT64_FORMAT " %10" G_GINT64_FORMAT " %10.3f %7.3f\n",
                           st->name, st->start, st->end, span, st->wgs, st->insns, st->mma_blocks, st->hbm_lines, st->wait,
                           st->pace, st->stall, st->energy_pj * 1e-6,
                           span > 0 ? st->energy_pj / (double)span * 1e-3 : 0.0);
  }
}

enum { WAIT_GROUPS_SHOWN = 20 };

/* The stage of each wait group's `wait` (stages.c), for its share. */
static int64_t stage_wait(const SimResult *r, const char *stage) {
  for (int i = 0; i < r->nstages; i++)
    if (!strcmp(r->stages[i].name, stage)) return r->stages[i].wait;
  return 0;
}

/* What each stage waited for (waits.c): its WAITs' WG-cycles by event
 * family, largest first. */
static void wait_report(GString *g, const SimResult *r) {
  int64_t all = 0;
  for (int i = 0; i < r->nwaits; i++) all += r->waits[i].wait;
  g_string_append_printf(g, "\nwaits by stage and event family (WG-cycles before each WAIT's issue; %" G_GINT64_FORMAT
                            " in all), largest first:\n", all);
  g_string_append_printf(g, "  %-16s %-32s %10s %6s %7s %4s %8s %8s\n", "stage", "event family", "wait",
                         "stage%", "WAITs", "WGs", "mean", "max");
  int shown = MIN(r->nwaits, WAIT_GROUPS_SHOWN);
  for (int i = 0; i < shown; i++) {
    const SimWaitGroup *w = &r->waits[i];
    int64_t sw = stage_wait(r, w->stage);
    g_string_append_printf(g, "  %-16s %-32s %10" G_GINT64_FORMAT " %5.1f%% %7" G_GINT64_FORMAT " %4d %8.1f %8" G_GINT64_FORMAT
                              "\n", w->stage, w->family, w->wait, sw > 0 ? 100.0 * (double)w->wait / (double)sw : 0.0,
                           w->waits, w->wgs, w->waits > 0 ? (double)w->wait / (double)w->waits : 0.0, w->max);
  }
  if (r->nwaits > shown) g_string_append_printf(g, "  ... and %d more\n", r->nwaits - shown);
}

static void profile_report(GString *g, const Program *p, const SimResult *r) {
  g_string_append(g, "\nunit      busy    energy uJ\n");
  for (int u = 0; u < UC__COUNT; u++)
    g_string_append_printf(g, "%-8s %5.1f%%  %10.3f\n", sim_unit_class_name[u], 100.0 * r->unit_busy[u],
                           r->unit_energy_uj[u]);
  g_string_append_printf(g, "%-8s    -   %10.3f\n", "static", r->static_w * (double)r->cycles * 1e-3);
  bound_detail(g, p);
  g_string_append_printf(g, "\nhottest window [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                            "): %.4f W; instructions overlapping it, largest energy first:\n",
                         r->peak_start, r->peak_start + POWER_WINDOW, r->peak_w);
  int shown = MIN(r->nhot, 20);
  for (int i = 0; i < shown; i++) {
    const HotInsn *h = &r->hot[i];
    const Insn *in = &p->wgs[h->wg].insns[h->pc];
    g_string_append_printf(g, "  %9.1f nJ  wg%-3d line %-5d %s\n", h->energy_pj * 1e-3, h->wg, in->line,
                           sim_insn_text(p, in));
  }
  if (r->nhot > shown) g_string_append_printf(g, "  ... and %d more\n", r->nhot - shown);
  hot_group_report(g, p, r);
  stage_report(g, r);
  wait_report(g, r);
}

/* "bound": the binding bound, the ratio, each bound and its inputs. */
static void json_bounds(GString *g, const Program *p, const SimResult *r) {
  Bounds b;
  sim_bounds(&p->hw, &p->prob, &b);
  g_string_append_printf(g, "  \"bound\": {\"cycles\": %" G_GINT64_FORMAT ", \"binding\": \"%s\", \"ratio\": %.6f,\n",
                         b.bound, sim_bound_name[b.binding], bound_ratio(r, &b));
  g_string_append_printf(g, "    \"mma\": {\"cycles\": %" G_GINT64_FORMAT ", \"blocks\": %" G_GINT64_FORMAT
                            ", \"arrays\": %d},\n", b.cycles[BOUND_MMA], b.mma_blocks, b.mma_arrays);
  g_string_append_printf(g, "    \"hbm\": {\"cycles\": %" G_GINT64_FORMAT ", \"lines\": %" G_GINT64_FORMAT
                            ", \"bytes\": %" G_GINT64_FORMAT ", \"busiest_channel_lines\": %" G_GINT64_FORMAT "},\n",
                         b.cycles[BOUND_HBM], b.hbm_lines, b.hbm_bytes, b.hbm_busiest);
  g_string_append_printf(g, "    \"power\": {\"cycles\": %" G_GINT64_FORMAT ", \"energy_uj\": %.6f, \"mma_uj\": %.6f, "
                            "\"hbm_uj\": %.6f, \"noc_uj\": %.6f, \"rf_uj\": %.6f, \"sfu_uj\": %.6f, "
                            "\"dynamic_budget_w\": %.6f}",
                         b.cycles[BOUND_POWER], b.e_total_uj, b.e_mma_uj, b.e_hbm_uj, b.e_noc_uj, b.e_rf_uj, b.e_sfu_uj,
                         b.dyn_w);
  if (p->prob.kind == PROB_D1)
    g_string_append_printf(g, ",\n    \"chain\": {\"cycles\": %" G_GINT64_FORMAT ", \"load_ready\": %" G_GINT64_FORMAT
                              ", \"io_latency\": %" G_GINT64_FORMAT ", \"step_compute\": %" G_GINT64_FORMAT
                              ", \"host_latency\": %d}",
                           b.cycles[BOUND_CHAIN], b.load_ready, b.io_latency, b.step_compute, T_HOST_LATENCY);
  g_string_append(g, "},\n");
}

/* ",\n  "hot_groups": {...}": the window's energy and, per grouping, its
 * first HOT_GROUPS_SHOWN groups with their share of it (--profile). */
static void json_hot_groups(GString *g, const Program *p, const SimResult *r) {
  double win = window_uj(r);
  g_string_append_printf(g, ",\n  \"hot_groups\": {\"window_energy_uj\": %.6f, \"static_uj\": %.6f", win,
                         window_static_uj(r));
  for (int by = 0; by < HOT_BY__COUNT; by++) {
    g_autoptr(GArray) gr = sim_hot_groups(p, r, (HotBy)by);
    int shown = MIN((int)gr->len, HOT_GROUPS_SHOWN);
    g_string_append_printf(g, ",\n    \"%s\": {\"groups\": %u, \"top\": [", sim_hot_by_name[by], gr->len);
    for (int i = 0; i < shown; i++) {
      const HotGroup *h = &g_array_index(gr, HotGroup, i);
      g_string_append_printf(g, "%s\n      {\"name\": ", i ? "," : "");
      jstr(g, h->name);
      g_string_append_printf(g, ", \"energy_uj\": %.6f, \"share\": %.6f, \"insns\": %d}", h->energy_pj * 1e-6,
                             win > 0 ? h->energy_pj * 1e-6 / win : 0.0, h->insns);
    }
    g_string_append(g, "]}");
  }
  g_string_append(g, "}");
}

/* ",\n  "stages": [...]": every stage, by start (--profile). */
static void json_stages(GString *g, const SimResult *r) {
  g_string_append(g, ",\n  \"stages\": [");
  for (int i = 0; i < r->nstages; i++) {
    const SimStage *st = &r->stages[i];
    g_string_append_printf(g, "%s\n    {\"name\": ", i ? "," : "");
    jstr(g, st->name);
    g_string_append_printf(g, ", \"start\": %" G_GINT64_FORMAT ", \"end\": %" G_GINT64_FORMAT
                              ", \"wgs\": %d, \"insns\": %" G_GINT64_FORMAT ", \"mma_blocks\": %" G_GINT64_FORMAT
                              ", \"hbm_lines\": %" G_GINT64_FORMAT ", \"wait\": %" G_GINT64_FORMAT ", \"pace\": %" G_GINT64_FORMAT
                              ", \"stall\": %" G_GINT64_FORMAT ", \"energy_uj\": %.6f}",
                           st->start, st->end, st->wgs, st->insns, st->mma_blocks, st->hbm_lines, st->wait, st->pace,
                           st->stall,
                           st->energy_pj * 1e-6);
  }
  g_string_append(g, "]");
}

/* ",\n  "waits": {...}": every wait group (waits.c), largest first
 * (--profile): a user filters by stage with jq. */
static void json_waits(GString *g, const SimResult *r) {
  int64_t all = 0;
  for (int i = 0; i < r->nwaits; i++) all += r->waits[i].wait;
  g_string_append_printf(g, ",\n  \"waits\": {\"wait\": %" G_GINT64_FORMAT ", \"groups\": [", all);
  for (int i = 0; i < r->nwaits; i++) {
    const SimWaitGroup *w = &r->waits[i];
    g_string_append_printf(g, "%s\n    {\"stage\": ", i ? "," : "");
    jstr(g, w->stage);
    g_string_append(g, ", \"event\": ");
    jstr(g, w->family);
    g_string_append_printf(g, ", \"wait\": %" G_GINT64_FORMAT ", \"stage_share\": %.6f, \"waits\": %" G_GINT64_FORMAT
                              ", \"wgs\": %d, \"max\": %" G_GINT64_FORMAT "}",
                           w->wait, stage_wait(r, w->stage) > 0 ? (double)w->wait / (double)stage_wait(r, w->stage) : 0.0,
                           w->waits, w->wgs, w->max);
  }
  g_string_append(g, "]}");
}

static void json_report(GString *g, const Program *p, const SimResult *r, const ReportOptions *ro) {
  g_autofree char *prob = wl_problem_canonical(&p->prob);
  g_autofree char *mach = sim_machine_canonical(&p->hw);
  g_autofree char *hh = sim_hardware_sha256(p);
  g_string_append(g, "{\n  \"version\": ");
  jstr(g, TCC_SIM_VERSION);
  g_string_append(g, ",\n  \"file\": ");
  jstr(g, p->file);
  g_string_append_printf(g, ",\n  \"problem\": \"%s\",\n  \"hardware\": \"%s\",\n", prob + 9, mach + 9);
  g_string_append_printf(g, "  \"seed\": %" G_GUINT64_FORMAT ",\n  \"cycles\": %" G_GINT64_FORMAT ",\n",
                         ro->seed, r->cycles);
  g_string_append_printf(g, "  \"insns\": %" G_GINT64_FORMAT ",\n  \"mma_blocks\": %" G_GINT64_FORMAT
                            ",\n  \"hbm_lines\": %" G_GINT64_FORMAT ",\n",
                         r->insns, r->mma_blocks, r->hbm_lines);
  g_string_append_printf(g, "  \"area_mm2\": %.6f,\n  \"peak_w\": %.6f,\n  \"peak_window\": [%" G_GINT64_FORMAT
                            ", %" G_GINT64_FORMAT "],\n  \"static_w\": %.6f,\n  \"energy_uj\": %.6f,\n",
                         r->area_mm2, r->peak_w, r->peak_start, r->peak_start + POWER_WINDOW, r->static_w,
                         r->energy_uj);
  if (r->checked) {
    char err[32] = "null";
    if (isfinite(r->check.max_abs_err)) g_snprintf(err, sizeof err, "%.6e", r->check.max_abs_err);
    g_string_append_printf(g, "  \"max_abs_error\": %s,\n  \"worst\": \"%s\",\n  \"unwritten\": %ld,\n",
                           err, r->check.worst, r->check.unwritten);
  }
  g_string_append_printf(g, "  \"verdict\": {\"numerics\": %s, \"area\": %s, \"power\": %s},\n",
                         r->checked ? (r->check.pass ? "true" : "false") : "null",
                         r->area_mm2 <= AREA_LIMIT_MM2 ? "true" : "false",
                         r->peak_w <= POWER_LIMIT_W ? "true" : "false");
  json_bounds(g, p, r);
  g_string_append_printf(g, "  \"program_sha256\": \"%s\",\n  \"hardware_sha256\": \"%s\"", p->sha256, hh);
  if (ro->profile) {
    g_string_append(g, ",\n  \"units\": {");
    for (int u = 0; u < UC__COUNT; u++)
      g_string_append_printf(g, "%s\"%s\": {\"busy\": %.6f, \"energy_uj\": %.6f}", u ? ", " : "",
                             sim_unit_class_name[u], r->unit_busy[u], r->unit_energy_uj[u]);
    g_string_append(g, "},\n  \"hot\": [");
    for (int i = 0; i < MIN(r->nhot, 20); i++) {
      const Insn *in = &p->wgs[r->hot[i].wg].insns[r->hot[i].pc];
      g_string_append_printf(g, "%s\n    {\"wg\": %d, \"line\": %d, \"energy_nj\": %.3f, \"text\": ", i ? "," : "",
                             r->hot[i].wg, in->line, r->hot[i].energy_pj * 1e-3);
      jstr(g, sim_insn_text(p, in));
      g_string_append(g, "}");
    }
    g_string_append(g, "]");
    json_hot_groups(g, p, r);
    json_stages(g, r);
    json_waits(g, r);
  }
  g_string_append(g, "\n}\n");
}

char *sim_report(const Program *p, const SimResult *r, const ReportOptions *ro) {
  GString *g = g_string_new(NULL);
  if (ro->json) {
    json_report(g, p, r, ro);
  } else {
    text_report(g, p, r, ro);
    if (ro->profile) profile_report(g, p, r);
  }
  return g_string_free(g, FALSE);
}
