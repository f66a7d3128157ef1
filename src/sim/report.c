/* report.c - the text and JSON reports of tcc-sim. */
#include <math.h>
#include <string.h>

#include "bounds.h"
#include "jdoc.h"
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

const char *const sim_constraint_name[3] = {"numerics", "area", "power"};

static const char *pf(gboolean ok) { return ok ? "PASS" : "FAIL"; }


/* cycles / bound, the program's distance from the limit */
static double bound_ratio(const SimResult *r, const Bounds *b) {
  return b->bound > 0 ? (double)r->cycles / (double)b->bound : 0.0;
}

/* "bound     56001 cycles (power); cycles / bound = 14.33" and every bound
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
                            " on the busiest of %d channels",
                         b.cycles[BOUND_HBM], b.hbm_lines, b.hbm_busiest, p->hw.hbm_channels);
  if (b.reload_lines > 0)
    g_string_append_printf(g, "; + %" G_GINT64_FORMAT " lines loaded again after step 0 (a step needs %"
                              G_GINT64_FORMAT " B of weights and K/V, the RFs and SHs hold %" G_GINT64_FORMAT " B)",
                           b.reload_lines, b.step_need_bytes, b.onchip_bytes);
  g_string_append_c(g, '\n');
  if (b.dyn_w > 0)
    g_string_append_printf(g, "  power  %10" G_GINT64_FORMAT "  %.3f uJ (MMA %.3f, HBM %.3f, NoC %.3f, RF %.3f, VEC %.3f, "
                              "SFU %.3f) / %.4f W = %.1f cycles\n",
                           b.cycles[BOUND_POWER], b.e_total_uj, b.e_mma_uj, b.e_hbm_uj, b.e_noc_uj, b.e_rf_uj,
                           b.e_vec_uj, b.e_sfu_uj, b.dyn_w, b.power_time);
  else
    g_string_append(g, "  power           -  static power alone is over the limit\n");
  if (p->prob.kind == PROB_D1)
    g_string_append_printf(g, "  chain  %10" G_GINT64_FORMAT "  step 0 ends >= max(%" G_GINT64_FORMAT ", load %"
                              G_GINT64_FORMAT " + ST %" G_GINT64_FORMAT "); then per step host %d + LD %"
                              G_GINT64_FORMAT " + compute %" G_GINT64_FORMAT " + ST %" G_GINT64_FORMAT "%s\n",
                           b.cycles[BOUND_CHAIN], b.step_period, b.load_ready, b.io_latency, T_HOST_LATENCY,
                           b.io_latency, b.step_compute, b.io_latency,
                           b.reload_lines > 0 ? ", or the lines it loads again + ST" : "");
  g_string_append_printf(g, "  sfu    %10" G_GINT64_FORMAT "  LD %" G_GINT64_FORMAT " + %" G_GINT64_FORMAT
                            " elements / %d lanes + ST %" G_GINT64_FORMAT "\n",
                         b.cycles[BOUND_SFU], b.io_latency, b.sfu_elems, b.sfu_lanes, b.io_latency);
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
    double win = sim_e_uj(profiled->peak_e) + profiled->static_w * POWER_WINDOW * 1e-3;
    if (gr->len > 0 && win > 0) {
      const HotGroup *h = &g_array_index(gr, HotGroup, 0);
      g_string_append_printf(g, "%spower over the limit: %.1f%% of the hottest window's energy is from %s "
                                "(tcc-sim --profile: by knob, stage and task)\n",
                             prefix, 100.0 * sim_e_uj(h->energy) / win, h->name);
    }
  }
  if (g->len == 0) {
    g_string_free(g, TRUE);
    return NULL;
  }
  return g_string_free(g, FALSE);
}

/* The window's energy (W x 1 us = uJ), static included, and its static part. */
static double window_static_uj(const SimResult *r) { return r->static_w * POWER_WINDOW * 1e-3; }
static double window_uj(const SimResult *r) { return sim_e_uj(r->peak_e) + window_static_uj(r); }

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
      g_string_append_printf(g, "  %9.3f uJ %5.1f%%  %-32s %d instructions\n", sim_e_uj(h->energy),
                             win > 0 ? 100.0 * sim_e_uj(h->energy) / win : 0.0, h->name, h->insns);
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
                           st->pace, st->stall, sim_e_uj(st->energy),
                           span > 0 ? sim_e_w(st->energy, span) : 0.0);
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
    g_string_append_printf(g, "  %9.1f nJ  wg%-3d line %-5d %s\n", sim_e_nj(h->energy), h->wg, in->line,
                           sim_insn_text(p, in));
  }
  if (r->nhot > shown) g_string_append_printf(g, "  ... and %d more\n", r->nhot - shown);
  hot_group_report(g, p, r);
  stage_report(g, r);
  wait_report(g, r);
}

/* ---- the JSON report: the result schema (docs/tools.md, "Results") ---- */

/* Figures rounded as the text report prints them: watts and mm^2 to 4
 * decimals, energies and shares to 6 (the JSON module then spells each
 * the shortest way, json_num.h). */
static double rnd(double v, double scale) { return isfinite(v) ? round(v * scale) / scale : v; }
#define R4(v) rnd((v), 1e4)
#define R6(v) rnd((v), 1e6)

static void jint(JDoc *d, const char *k, int64_t v) { jdoc_member(d, k), jdoc_int(d, v); }
static void jdbl(JDoc *d, const char *k, double v) { jdoc_member(d, k), jdoc_double(d, v); }
static void jstring(JDoc *d, const char *k, const char *v) { jdoc_member(d, k), jdoc_string(d, v); }

/* A canonical line's "key=value" words as an object, after its first word
 * (the problem's kind, given as "kind"): integers as numbers, others
 * ("dma=2x1") as strings. */
static void jwords(JDoc *d, const char *k, const char *line, gboolean kind) {
  jdoc_member(d, k);
  jdoc_begin_object(d);
  g_auto(GStrv) w = g_strsplit(line, " ", -1);
  for (int i = 1; w[i]; i++) {
    if (i == 1 && kind) {
      jstring(d, "kind", w[i]);
      continue;
    }
    char *eq = strchr(w[i], '=');
    if (!eq) continue;
    *eq = '\0';
    char *end = NULL;
    gint64 v = g_ascii_strtoll(eq + 1, &end, 10);
    if (eq[1] && !*end)
      jint(d, w[i], v);
    else
      jstring(d, w[i], eq + 1);
  }
  jdoc_end_object(d);
}

/* "bound": the binding bound, the ratio, each bound and its inputs. */
static void json_bounds(JDoc *d, const Program *p, const SimResult *r) {
  Bounds b;
  sim_bounds(&p->hw, &p->prob, &b);
  jdoc_member(d, "bound");
  jdoc_begin_object(d);
  jint(d, "cycles", b.bound);
  jstring(d, "binding", sim_bound_name[b.binding]);
  jdbl(d, "ratio", R4(bound_ratio(r, &b)));
  jdoc_member(d, "mma");
  jdoc_begin_object(d);
  jint(d, "cycles", b.cycles[BOUND_MMA]), jint(d, "blocks", b.mma_blocks), jint(d, "arrays", b.mma_arrays);
  jdoc_end_object(d);
  jdoc_member(d, "hbm");
  jdoc_begin_object(d);
  jint(d, "cycles", b.cycles[BOUND_HBM]), jint(d, "lines", b.hbm_lines), jint(d, "bytes", b.hbm_bytes);
  jint(d, "busiest_channel_lines", b.hbm_busiest);
  if (p->prob.kind == PROB_D1) {
    jint(d, "reload_lines", b.reload_lines), jint(d, "reload_bytes", b.reload_bytes);
    jint(d, "step_need_bytes", b.step_need_bytes), jint(d, "onchip_bytes", b.onchip_bytes);
  }
  jdoc_end_object(d);
  jdoc_member(d, "power");
  jdoc_begin_object(d);
  jint(d, "cycles", b.cycles[BOUND_POWER]);
  jdbl(d, "energy_uj", R6(b.e_total_uj)), jdbl(d, "mma_uj", R6(b.e_mma_uj)), jdbl(d, "hbm_uj", R6(b.e_hbm_uj));
  jdbl(d, "noc_uj", R6(b.e_noc_uj)), jdbl(d, "rf_uj", R6(b.e_rf_uj)), jdbl(d, "vec_uj", R6(b.e_vec_uj));
  jdbl(d, "sfu_uj", R6(b.e_sfu_uj));
  jdbl(d, "dynamic_budget_w", R6(b.dyn_w));
  jdoc_end_object(d);
  if (p->prob.kind == PROB_D1) {
    jdoc_member(d, "chain");
    jdoc_begin_object(d);
    jint(d, "cycles", b.cycles[BOUND_CHAIN]), jint(d, "load_ready", b.load_ready);
    jint(d, "io_latency", b.io_latency), jint(d, "step_compute", b.step_compute);
    jint(d, "host_latency", T_HOST_LATENCY);
    jdoc_end_object(d);
  }
  jdoc_member(d, "sfu");
  jdoc_begin_object(d);
  jint(d, "cycles", b.cycles[BOUND_SFU]), jint(d, "elements", b.sfu_elems), jint(d, "lanes", b.sfu_lanes);
  jint(d, "io_latency", b.io_latency);
  jdoc_end_object(d);
  jdoc_end_object(d);
}

/* "hot_groups": the window's energy and, per grouping, its first
 * HOT_GROUPS_SHOWN groups with their share of it (--profile). */
static void json_hot_groups(JDoc *d, const Program *p, const SimResult *r) {
  double win = window_uj(r);
  jdoc_member(d, "hot_groups");
  jdoc_begin_object(d);
  jdbl(d, "window_energy_uj", R6(win));
  jdbl(d, "static_uj", R6(window_static_uj(r)));
  for (int by = 0; by < HOT_BY__COUNT; by++) {
    g_autoptr(GArray) gr = sim_hot_groups(p, r, (HotBy)by);
    int shown = MIN((int)gr->len, HOT_GROUPS_SHOWN);
    jdoc_member(d, sim_hot_by_name[by]);
    jdoc_begin_object(d);
    jint(d, "groups", gr->len);
    jdoc_member(d, "top");
    jdoc_begin_array(d);
    for (int i = 0; i < shown; i++) {
      const HotGroup *h = &g_array_index(gr, HotGroup, i);
      jdoc_begin_object(d);
      jstring(d, "name", h->name);
      jdbl(d, "energy_uj", R6(sim_e_uj(h->energy)));
      jdbl(d, "share", R6(win > 0 ? sim_e_uj(h->energy) / win : 0.0));
      jint(d, "insns", h->insns);
      jdoc_end_object(d);
    }
    jdoc_end_array(d);
    jdoc_end_object(d);
  }
  jdoc_end_object(d);
}

/* "stages": every stage, by start (--profile). */
static void json_stages(JDoc *d, const SimResult *r) {
  jdoc_member(d, "stages");
  jdoc_begin_array(d);
  for (int i = 0; i < r->nstages; i++) {
    const SimStage *st = &r->stages[i];
    jdoc_begin_object(d);
    jstring(d, "name", st->name);
    jint(d, "start", st->start), jint(d, "end", st->end), jint(d, "wgs", st->wgs), jint(d, "insns", st->insns);
    jint(d, "mma_blocks", st->mma_blocks), jint(d, "hbm_lines", st->hbm_lines), jint(d, "wait", st->wait);
    jint(d, "pace", st->pace), jint(d, "stall", st->stall);
    jdbl(d, "energy_uj", R6(sim_e_uj(st->energy)));
    jdoc_end_object(d);
  }
  jdoc_end_array(d);
}

/* "waits": every wait group (waits.c), largest first (--profile): a user
 * filters by stage with jq. */
static void json_waits(JDoc *d, const SimResult *r) {
  int64_t all = 0;
  for (int i = 0; i < r->nwaits; i++) all += r->waits[i].wait;
  jdoc_member(d, "waits");
  jdoc_begin_object(d);
  jint(d, "wait", all);
  jdoc_member(d, "groups");
  jdoc_begin_array(d);
  for (int i = 0; i < r->nwaits; i++) {
    const SimWaitGroup *w = &r->waits[i];
    jdoc_begin_object(d);
    jstring(d, "stage", w->stage);
    jstring(d, "event", w->family);
    jint(d, "wait", w->wait);
    int64_t sw = stage_wait(r, w->stage);
    jdbl(d, "stage_share", R6(sw > 0 ? (double)w->wait / (double)sw : 0.0));
    jint(d, "waits", w->waits), jint(d, "wgs", w->wgs), jint(d, "max", w->max);
    jdoc_end_object(d);
  }
  jdoc_end_array(d);
  jdoc_end_object(d);
}

static void json_report(JDoc *d, const Program *p, const SimResult *r, const ReportOptions *ro) {
  g_autofree char *prob = wl_problem_canonical(&p->prob);
  g_autofree char *mach = sim_machine_canonical(&p->hw);
  g_autofree char *hh = sim_hardware_sha256(p);
  gboolean ok[3] = {!r->checked || r->check.pass, r->area_mm2 <= AREA_LIMIT_MM2, r->peak_w <= POWER_LIMIT_W};
  jdoc_begin_object(d);
  jint(d, "schema_version", TCC_RESULT_SCHEMA);
  jstring(d, "tool", TCC_SIM_VERSION);
  jstring(d, "file", p->file);
  jwords(d, "problem", prob, TRUE);
  jwords(d, "hardware", mach, FALSE);
  jdoc_member(d, "seed");
  if (ro->seed <= (uint64_t)INT64_MAX) {
    jdoc_int(d, (int64_t)ro->seed);
  } else { /* above 2^63 - 1 a JSON reader's double would round it: its digits */
    char digits[24];
    g_snprintf(digits, sizeof digits, "%" G_GUINT64_FORMAT, ro->seed);
    jdoc_string(d, digits);
  }
  const char *status = "pass";
  for (int c = 2; c >= 0; c--)
    if (!ok[c]) status = sim_constraint_name[c];
  jstring(d, "status", status);
  jdoc_member(d, "failures");
  jdoc_begin_array(d);
  for (int c = 0; c < 3; c++)
    if (!ok[c]) jdoc_string(d, sim_constraint_name[c]);
  jdoc_end_array(d);
  jdoc_member(d, "numerics_checked");
  jdoc_bool(d, r->checked);
  jint(d, "cycles", r->cycles);
  jdbl(d, "peak_w", R4(r->peak_w));
  jdoc_member(d, "window");
  jdoc_begin_array(d);
  jdoc_int(d, r->peak_start), jdoc_int(d, r->peak_start + POWER_WINDOW);
  jdoc_end_array(d);
  jdbl(d, "area_mm2", R4(r->area_mm2));
  json_bounds(d, p, r);
  jint(d, "insns", r->insns), jint(d, "mma_blocks", r->mma_blocks), jint(d, "hbm_lines", r->hbm_lines);
  jdbl(d, "static_w", R6(r->static_w));
  jdbl(d, "energy_uj", R6(r->energy_uj));
  if (r->checked) {
    jdoc_member(d, "max_abs_err");
    if (isfinite(r->check.max_abs_err))
      jdoc_double(d, r->check.max_abs_err);
    else
      jdoc_null(d);
    jstring(d, "worst", r->check.worst);
    jint(d, "unwritten", r->check.unwritten);
  }
  jstring(d, "program_sha256", p->sha256);
  jstring(d, "hardware_sha256", hh);
  if (ro->profile) {
    jdoc_member(d, "units");
    jdoc_begin_object(d);
    for (int u = 0; u < UC__COUNT; u++) {
      jdoc_member(d, sim_unit_class_name[u]);
      jdoc_begin_object(d);
      jdbl(d, "busy", R6(r->unit_busy[u]));
      jdbl(d, "energy_uj", R6(r->unit_energy_uj[u]));
      jdoc_end_object(d);
    }
    jdoc_end_object(d);
    jdoc_member(d, "hot");
    jdoc_begin_array(d);
    for (int i = 0; i < MIN(r->nhot, 20); i++) {
      const Insn *in = &p->wgs[r->hot[i].wg].insns[r->hot[i].pc];
      jdoc_begin_object(d);
      jint(d, "wg", r->hot[i].wg), jint(d, "line", in->line);
      jdbl(d, "energy_nj", rnd(sim_e_nj(r->hot[i].energy), 1e3));
      jstring(d, "text", sim_insn_text(p, in));
      jdoc_end_object(d);
    }
    jdoc_end_array(d);
    json_hot_groups(d, p, r);
    json_stages(d, r);
    json_waits(d, r);
  }
  jdoc_end_object(d);
}

char *sim_report(const Program *p, const SimResult *r, const ReportOptions *ro, GError **err) {
  if (ro->json) {
    g_autoptr(JDoc) d = jdoc_new();
    json_report(d, p, r, ro);
    return jdoc_pretty_text(d, err);
  }
  GString *g = g_string_new(NULL);
  text_report(g, p, r, ro);
  if (ro->profile) profile_report(g, p, r);
  return g_string_free(g, FALSE);
}
