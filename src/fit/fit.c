/* fit.c - power fitting (fit.h).
 *
 * The controls are the SMs used, load pacing by byte buckets (pace.c), a
 * load rate per stage (power.stage_rate, pace.c) and per kind of stage
 * (power.stage_rate.STAGE: rung_shaped) and, in P1 with resident weights,
 * the hot stages' own spacings (rung_hot).
 * Fewer SMs load fewer lines at once (the FEWER_SMS rung: rung_sms).
 * Pacing: after every bucket of HBM loads a WG waits event_interval
 * cycles (self-paced), or the pacer's interval between buckets grows
 * (power.pacing_wg).  Pacing the
 * loads paces everything they feed, so the hottest window falls as the
 * interval grows: on the shapes measured it falls from over 22 W to 14 W
 * (docs/techniques.md, "Power fitting").  One integer, the cycles added
 * to the interval, is the fitting's level:
 *
 *   - the plan paces by buckets: event_interval = the plan's + added;
 *   - it does not: bucket_bytes = FIT_BUCKET_BYTES, self-paced, and
 *     event_interval = added;
 *   - by stage: stage_rate = FIT_STAGE_BYTES / added (the lower of that
 *     and the plan's rate).
 *
 * The search: level 0 is the plan as written; if it is over the limit,
 * first the most SMs under it, then on each pacing rung the level doubles
 * from 32 until a program is under it (FIT_MAX_INTERVAL at most), then
 * bisection between the last level over and the first under, to within
 * 1/16 of the level.  The window is not monotone in the level (a pause
 * can line two phases up), so every program measured under the limit is
 * a candidate and the one with the fewest cycles is returned:
 * never one that was not measured.  All of it is deterministic: the same
 * plan gives the same levels, programs and bytes. */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "sim.h"
#include "text_escape.h"

/* The measured program of one level. */
typedef struct Point {
  int family;
  int64_t added;
  int relax;       /* power.fit: relax: the pacing knobs x relax/4 (-1: as written) */
  Ir *ir;          /* owned (NULL once freed)  */
  char *dump;      /* owned                    */
  Program *prog;   /* its program and timing run, kept from a run */
  SimTiming *timing; /* without a profile (FitKept); owned, or NULL */
  double peak_w, static_w;
  double dyn_w;    /* the run's average dynamic power (W) */
  int64_t cycles;
} Point;

/* The ladder's rungs: the two ways to pace, each WG by itself or a pacer
 * task on a WG of its own releasing buckets machine-wide (which also
 * spreads loads that all WGs issue at once: a stage's first chunks), fewer
 * SMs, unpaced (rung_sms), the hot stages spaced (rung_hot), each
 * stage's loads at one rate (PACE_STAGE: a stage on 64 WGs slowed as much
 * as one on 4, where a rate per WG slows the first 16 times less) and each
 * kind of stage at a rate of its own (PACE_SHAPED, from PACE_STAGE's best);
 * self-paced after the hot stages were spaced (PACE_HOT_SELF: what is
 * left when no stage's own knobs cool it further). */
typedef enum { PACE_SELF, PACE_PACER, FEWER_SMS, PACE_HOT, PACE_STAGE, PACE_SHAPED, PACE_HOT_SELF } Family;
static const char *const family_name[] = {"self-paced", "paced by a pacer WG", "unpaced on fewer SMs",
                                          "unpaced, the hot stages spaced", "paced by stage",
                                          "paced by stage, each kind of stage at its own rate",
                                          "self-paced, the hot stages spaced"};

/* PACE_HOT (P1): the projections whose A chunks come from issuer tasks
 * (resident weights, multicast, not fed by the stage before: W2 with
 * handoff: rf, wo with attention.handoff rf or relay), whose
 * issue_spacing.PROJ spaces each issuer's LD.mc.  A bit per projection. */
static unsigned issued(const PlanProblem *pp) {
  unsigned m = 0;
  if (pp->dims.kind != PROB_P1 || pp->weights != WEIGHTS_RESIDENT || pp->multicast_pass) return 0;
  for (int k = 0; k < PROJ__COUNT; k++) {
    if (!pp->multicast[k]) continue;
    if (k == PROJ_W2 && pp->handoff == HANDOFF_RF) continue;
    if (k == PROJ_WO && pp->attn_handoff != ATTHANDOFF_HBM && pp->attn_query_tiles > 1) continue;
    m |= 1u << k;
  }
  return m;
}

/* Did PACE_HOT change a spacing (issue, weight, store, fold stagger, first
 * gap, attention's stagger) the plan wrote? */
static gboolean spacing_written(const PlanProblem *pp, const Schedule *sc) {
  for (int k = 0; k < PROJ__COUNT; k++) {
    char a[32], b[32], c[32];
    g_snprintf(a, sizeof a, "issue_spacing.%s", sched_proj_name[k]);
    g_snprintf(b, sizeof b, "weight_spacing.%s", sched_proj_name[k]);
    g_snprintf(c, sizeof c, "ln_fold_stagger.%s", sched_proj_name[k]);
    if ((sc->issue_spacing[k] != pp->issue_spacing[k] && plan_knob_loc(pp, a).line > 0) ||
        (sc->weight_spacing[k] != pp->weight_spacing[k] && plan_knob_loc(pp, b).line > 0) ||
        ((k == PROJ_QKV || k == PROJ_W1) && sc->ln_fold_stagger[k] != pp->ln_fold_stagger[k] &&
         plan_knob_loc(pp, c).line > 0))
      return TRUE;
  }
  for (int st = 0; st < SPACE__COUNT; st++) {
    char a[32];
    g_snprintf(a, sizeof a, "store_spacing.%s", sched_space_name[st]);
    if (sc->stage_spacing[st] != pp->stage_spacing[st] &&
        (plan_knob_loc(pp, a).line > 0 || plan_knob_loc(pp, "store_spacing").line > 0))
      return TRUE;
  }
  return (sc->ln_fold_first_gap != pp->ln_fold_first_gap && plan_knob_loc(pp, "ln_fold_first_gap").line > 0) ||
         (sc->attn_stagger != pp->attn_stagger && plan_knob_loc(pp, "attention.stagger").line > 0) ||
         (sc->ln_first_stagger != pp->ln_first_stagger && plan_knob_loc(pp, "ln_first_stagger").line > 0) ||
         (sc->ln_stagger != pp->ln_stagger && plan_knob_loc(pp, "ln_stagger").line > 0);
}

/* The WG the pacer takes: the first of an SM the plan leaves idle, else
 * the machine's last. */
static int pacer_wg(const Plan *plan, const PlanProblem *pp) {
  int W = plan->hw.wgs_per_sm, used = pp->sms_used > 0 ? pp->sms_used : plan->hw.sms;
  return used < plan->hw.sms ? used * W : plan->hw.sms * W - 1;
}

/* The section with the fitting's level applied: `added` cycles on the
 * plan's interval (a plan that paces already keeps its way), else a
 * FIT_BUCKET_BYTES bucket every `added` cycles, paced as `family` says. */
static void apply(const Plan *plan, const PlanProblem *plan_pp, PlanProblem *pp, Family family, int64_t added) {
  *pp = *plan_pp;
  if (added == 0) return;
  if (family == FEWER_SMS) {
    plan_knob_fit(pp, "sms_used", plan_pp->sms_used - added);
    return;
  }
  if (family == PACE_STAGE) { /* level L: a stage loads 64 KiB per L cycles */
    long rate = (long)MAX(1, FIT_STAGE_BYTES / added);
    if (plan_pp->stage_rate > 0) rate = MIN(rate, plan_pp->stage_rate);
    plan_knob_fit(pp, "power.stage_rate", rate);
    return;
  }
  if (plan_pp->bucket_bytes > 0 && plan_pp->event_interval > 0) {
    plan_knob_fit(pp, "power.event_interval", (long)MIN(plan_pp->event_interval + added, FIT_MAX_INTERVAL));
    if (family == PACE_PACER && plan_pp->pacing_wg < 0) plan_knob_fit(pp, "power.pacing_wg", pacer_wg(plan, pp));
    return;
  }
  plan_knob_fit(pp, "power.bucket_bytes", FIT_BUCKET_BYTES);
  plan_knob_fit(pp, "power.event_interval", (long)MIN(added, FIT_MAX_INTERVAL));
  if (family == PACE_PACER) plan_knob_fit(pp, "power.pacing_wg", pacer_wg(plan, pp));
}

static gboolean time_ir(const Plan *plan, const PlanProblem *plan_pp, int64_t cap, Point *pt, GError **err);

/* Compile and time one level.  FALSE with an error when it does not
 * compile, when its program does not run (the compiler's bug), or when it
 * runs past `cap` cycles (> 0: the fastest legal program so far, which a
 * slower one cannot displace; pacing further only slows it more). */
static gboolean measure(const Plan *plan, const PlanProblem *plan_pp, Family family, int64_t added, int64_t cap,
                        const char *dump_after, gboolean verify, Point *pt, GError **err) {
  PlanProblem pp;
  apply(plan, plan_pp, &pp, family, added);
  *pt = (Point){.family = family, .added = added, .relax = -1};
  pt->ir = pass_pipeline_section(plan, &pp, dump_after, dump_after ? &pt->dump : NULL, verify, err);
  return pt->ir && time_ir(plan, plan_pp, cap, pt, err);
}

/* Whether this thread's fitting keeps each plain run's program and timing
 * with its Point (fit_pipeline_kept): only for the call that asks, since a
 * Point kept as the best so far then holds its program (text and
 * instructions) while the next one runs. */
static _Thread_local gboolean keep_runs;

/* The kind of stage (SchedSpace) of a profile's stage name: its last
 * component ("t3.l1.w2", "l0.ln1", "l1.wo_g2"); -1 for none ("preload"). */
static int stage_kind(const char *name) {
  const char *s = strrchr(name, '.');
  s = s ? s + 1 : name;
  if (g_str_has_prefix(s, "ln")) return SPACE_LN;
  for (int k = 0; k < SPACE__COUNT; k++) {
    size_t n = strlen(sched_space_name[k]);
    if (strncmp(s, sched_space_name[k], n) == 0 && (s[n] == '\0' || s[n] == '_')) return k;
  }
  return -1;
}

/* Time pt->ir's program (measure).  With `hot`, the stage that makes most
 * of the hottest window; with `kind_w`, each kind of stage's average
 * dynamic power over its stages' spans (W; 0 where it has none). */
static gboolean time_ir_hot(const Plan *plan, const PlanProblem *plan_pp, int64_t cap, Point *pt, char **hot,
                            double *kind_w, GError **err) {
  char *text = be_emit(pt->ir);
  g_autofree char *name = g_strdup_printf("%s[%s].asm", plan->file ? plan->file : "-",
                                          wl_problem_name(plan_pp->dims.kind));
  g_autoptr(Program) prog = sim_asm_parse_take(name, text, strlen(text), err);
  if (!prog) return FALSE;
  SimOptions opt;
  sim_options_default(&opt);
  opt.timing_only = TRUE;
  opt.profile = hot != NULL || kind_w != NULL;
  if (cap > 0) opt.max_cycles = cap;
  SimResult r;
  if (!opt.profile && keep_runs) { /* the run kept with the program, for a caller that runs it again */
    SimTiming *t = sim_time(prog, &opt);
    const SimResult *tr = sim_timing_result(t, err);
    if (!tr) {
      sim_timing_free(t);
      return FALSE;
    }
    pt->peak_w = tr->peak_w;
    pt->static_w = tr->static_w;
    pt->dyn_w = sim_e_w(tr->dyn_e, MAX(1, tr->cycles));
    pt->cycles = tr->cycles;
    pt->timing = t;
    pt->prog = g_steal_pointer(&prog);
    return TRUE;
  }
  if (!sim_run(prog, &opt, &r, err)) return FALSE;
  pt->peak_w = r.peak_w;
  pt->static_w = r.static_w;
  pt->dyn_w = sim_e_w(r.dyn_e, MAX(1, r.cycles));
  pt->cycles = r.cycles;
  if (hot) { /* the stage with the most of the hottest window's energy */
    GArray *g = sim_hot_groups(prog, &r, HOT_BY_STAGE);
    *hot = g->len ? g_strdup(g_array_index(g, HotGroup, 0).name) : NULL;
    g_array_unref(g);
  }
  if (kind_w) {
    SimEnergySum e[SPACE__COUNT] = {0};
    int64_t span[SPACE__COUNT] = {0};
    for (int i = 0; i < r.nstages; i++) {
      int k = stage_kind(r.stages[i].name);
      if (k < 0) continue;
      e[k] += r.stages[i].energy;
      span[k] += MAX(1, r.stages[i].end - r.stages[i].start);
    }
    for (int k = 0; k < SPACE__COUNT; k++) kind_w[k] = span[k] > 0 ? sim_e_w(e[k], span[k]) : 0;
  }
  sim_result_clear(&r);
  return TRUE;
}

static gboolean time_ir(const Plan *plan, const PlanProblem *plan_pp, int64_t cap, Point *pt, GError **err) {
  return time_ir_hot(plan, plan_pp, cap, pt, NULL, NULL, err);
}

static void point_free(Point *pt) {
  if (pt->ir) ir_free(pt->ir);
  g_free(pt->dump);
  sim_timing_free(pt->timing);
  if (pt->prog) sim_program_free(pt->prog);
  pt->ir = NULL;
  pt->dump = NULL;
  pt->timing = NULL;
  pt->prog = NULL;
}

void fit_kept_clear(FitKept *kept) {
  sim_timing_free(kept->timing);
  if (kept->prog) sim_program_free(kept->prog);
  kept->timing = NULL;
  kept->prog = NULL;
}

static gboolean legal(const Point *pt) { return pt->peak_w <= FIT_LIMIT_W - FIT_MARGIN_W; }

/* Keep pt if it is under the limit and faster than *best (ties: the lower
 * level, measured first); free the loser. */
static void consider(Point *best, Point *pt) {
  if (legal(pt) && (!best->ir || pt->cycles < best->cycles)) {
    point_free(best);
    *best = *pt;
  } else {
    point_free(pt);
  }
}

/* The cycle limit of a measuring run: the fastest legal program so far
 * (0: none yet, the simulator's default).  Never the caller's cap
 * (fit_pipeline_capped): the search, and so the program, must be the one
 * every tool gets. */
static int64_t cap_of(const Point *best) { return best->ir ? best->cycles : 0; }

/* Did the plan write a knob the fitting changes? */
static gboolean overrides(const PlanProblem *pp) {
  return plan_knob_loc(pp, "power.event_interval").line > 0 || plan_knob_loc(pp, "power.bucket_bytes").line > 0;
}

/* power.stage_rate.STAGE of kind k into buf. */
static const char *rate_path(int k, char buf[static 40]) {
  g_snprintf(buf, 40, "power.stage_rate.%s", sched_space_name[k]);
  return buf;
}

/* Did the plan write a stage rate (power.stage_rate or one of a kind's)? */
static gboolean rates_written(const PlanProblem *pp) {
  gboolean any = plan_knob_loc(pp, "power.stage_rate").line > 0;
  char path[40];
  for (int k = 0; k < SPACE__COUNT; k++) any |= plan_knob_loc(pp, rate_path(k, path)).line > 0;
  return any;
}

/* A measuring run stopped at its cycle limit, the cap (cap_of): slower
 * than a program it need not beat, not a broken one. */
static gboolean past_cap(const GError *e, int64_t cap) {
  return cap > 0 && e && strstr(e->message, "cycle limit of") != NULL;
}

/* One rung: from level 0 (the plan as written, already measured) the
 * level doubles from 32 until a program is under the limit, then bisection
 * between the last level over and the first under, to within 1/16 of the
 * level.  Every program measured is offered to *best.  A level whose run
 * passes the cap brackets the search from above as a level under the limit
 * does (more pacing only slows it more), without being a candidate; a level
 * that does not compile (the pacer's WG is needed for work) ends the rung.
 * *hottest gets the last window measured, *paced its level. */
static void rung(const Plan *plan, const PlanProblem *plan_pp, Family family, const char *dump_after,
                 gboolean verify, Point *best, FitResult *res, double *hottest, int64_t *paced) {
  int64_t lo = 0, hi = -1,
          base = family != PACE_STAGE && plan_pp->bucket_bytes > 0 && plan_pp->event_interval > 0
                     ? plan_pp->event_interval
                     : 0;
  if (family == PACE_SELF && plan_pp->pacing_wg >= 0) return; /* a pacer paces already */
  for (int64_t x = 32; hi < 0; x *= 2) {
    Point pt;
    g_autoptr(GError) e = NULL;
    int64_t level = MIN(x, FIT_MAX_INTERVAL - base), cap = cap_of(best);
    res->runs++;
    if (!measure(plan, plan_pp, family, level, cap, dump_after, verify, &pt, &e)) {
      point_free(&pt);
      if (!past_cap(e, cap)) return;
      hi = level;
      break;
    }
    *hottest = pt.peak_w;
    *paced = base + pt.added;
    if (legal(&pt))
      hi = pt.added;
    else
      lo = pt.added;
    consider(best, &pt);
    if (hi < 0 && x >= FIT_MAX_INTERVAL - base) return;
  }
  while (hi - lo > MAX(2, lo / 16)) {
    int64_t mid = lo + (hi - lo) / 2, cap = cap_of(best);
    Point pt;
    g_autoptr(GError) e = NULL;
    res->runs++;
    if (!measure(plan, plan_pp, family, mid, cap, dump_after, verify, &pt, &e)) {
      point_free(&pt);
      if (!past_cap(e, cap)) return;
      hi = mid;
      continue;
    }
    if (legal(&pt))
      hi = mid;
    else
      lo = mid;
    consider(best, &pt);
  }
}

/* The third rung: the plan unpaced on fewer SMs.  Fewer SMs load fewer
 * lines at once, and a streamed program's window follows them nearly in
 * proportion (plans/baseline.yaml's P1 runs on 6 of 16), where pacing a
 * program on all of them stretches every stage alike.  Bisection for the
 * most SMs under the limit: a count over it sends the search lower, a
 * count the plan's techniques cannot run on (resident weights need the
 * SMs' RF) higher, as does one under it.  Returns that count, 0 for none. */
static int rung_sms(const Plan *plan, const PlanProblem *plan_pp, const char *dump_after, gboolean verify,
                    Point *best, FitResult *res) {
  int S = plan_pp->sms_used, lo = 1, hi = S - 1, found = 0;
  while (lo <= hi) {
    int mid = lo + (hi - lo + 1) / 2;
    Point pt;
    g_autoptr(GError) e = NULL;
    res->runs++;
    int64_t cap = cap_of(best);
    if (!measure(plan, plan_pp, FEWER_SMS, S - mid, cap, dump_after, verify, &pt, &e)) {
      point_free(&pt);
      /* slower than the fastest legal program: more SMs; as the base of
       * the rung one SM above, it counts as found (an earlier rung's cap
       * must not hide the count that rung starts from) */
      if (past_cap(e, cap)) found = mid;
      lo = mid + 1;
      continue;
    }
    if (legal(&pt)) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
    consider(best, &pt);
  }
  return found;
}

/* PACE_HOT (P1): the stage that makes most of the hottest window (the
 * profile's attribution, "l1.wo_g2") has its own pacing knobs raised, and
 * then the stage hottest in that program, until one is under the limit.
 * The load-pacing rungs slow every stage alike, which costs a program
 * whose heat is one stage at a time (P1 in panel groups; a streamed grid,
 * whose sets run in step, which per-WG pacing puts out of step).  With
 * resident weights and multicast, a projection's issue_spacing (its
 * issuers' LD.mc, so its MMAs and A's lines) and weight_spacing; a
 * projection's store_spacing and, with ln_fold, ln_fold_stagger,
 * ln_fold_slots (doubled) and layer 0 qkv's ln_fold_first_gap;
 * attention's stagger and store_spacing.att; LayerNorm's store_spacing.ln
 * and its tasks' stagger (ln_first_stagger for layer 0's LN1, ln_stagger
 * for the others).  Each goes to at least FIT_HOT_FIRST (a
 * quarter of it for stores and the stagger) times the watts over the
 * limit's dynamic share, squared, within [1.25, 4].  At most
 * FIT_HOT_STEPS programs; it ends when the same stage stays hottest twice
 * without cooling, at a stage it cannot name, or past the fastest legal
 * program so far.  The plan as written is measured again (step 0) for its
 * attribution. */
#define FIT_HOT_FIRST 128
#define FIT_HOT_STEPS 24
static void rung(const Plan *plan, const PlanProblem *plan_pp, Family family, const char *dump_after,
                 gboolean verify, Point *best, FitResult *res, double *hottest, int64_t *paced);

/* rung_hot's program over the limit, whose hottest stage its own knobs do
 * not cool further: self-paced from there (rung), the heat left being
 * every stage's a little; a program it finds is PACE_HOT_SELF. */
static void hot_then_self(const Plan *plan, const PlanProblem *pp, const char *dump_after, gboolean verify,
                          Point *best, FitResult *res) {
  const Ir *before = best->ir;
  double h;
  int64_t p;
  rung(plan, pp, PACE_SELF, dump_after, verify, best, res, &h, &p);
  if (best->ir != before) best->family = PACE_HOT_SELF;
}

/* The knobs rung_hot's last step raised, each from `from` to `to`. */
typedef struct HotStep {
  int n;
  char path[7][32];
  long from[7], to[7];
} HotStep;

/* rung_hot's last step took the program under the limit, and a raise by
 * the watts over, squared, overshoots: FIT_HOT_REFINE more programs,
 * bisecting each raised knob between its value before the step (over the
 * limit) and after (under), every one a candidate. */
#define FIT_HOT_REFINE 2
static void hot_refine(const Plan *plan, const PlanProblem *pp, HotStep st, const char *dump_after,
                       gboolean verify, Point *best, FitResult *res) {
  for (int r = 0; r < FIT_HOT_REFINE; r++) {
    PlanProblem mid = *pp;
    long m[7];
    gboolean any = FALSE;
    for (int j = 0; j < st.n; j++) {
      m[j] = st.from[j] + (st.to[j] - st.from[j]) / 2;
      if (m[j] != st.to[j]) any |= plan_knob_fit(&mid, st.path[j], m[j]);
    }
    if (!any) return;
    Point pt = {.family = PACE_HOT, .added = FIT_HOT_STEPS + r + 1, .relax = -1};
    g_autoptr(GError) e = NULL;
    res->runs++;
    pt.ir = pass_pipeline_section(plan, &mid, dump_after, dump_after ? &pt.dump : NULL, verify, &e);
    if (!pt.ir || !time_ir(plan, &mid, cap_of(best), &pt, &e)) {
      point_free(&pt);
      return; /* does not compile, or past the fastest legal program */
    }
    gboolean ok = legal(&pt);
    consider(best, &pt);
    for (int j = 0; j < st.n; j++) { /* the bracket that still holds the limit's edge */
      if (ok) st.to[j] = m[j];
      else st.from[j] = m[j];
    }
  }
}

static void rung_hot(const Plan *plan, const PlanProblem *plan_pp, const char *dump_after, gboolean verify,
                     Point *best, FitResult *res) {
  if (plan_pp->dims.kind != PROB_P1) return;
  unsigned m = issued(plan_pp);
  PlanProblem pp = *plan_pp;
  int last_k = -1, stuck = 0;
  double last_w = 0;
  gboolean spaced = FALSE; /* a knob raised: the self-paced tail differs from rung's */
  HotStep last = {0};
  for (int step = 0; step < FIT_HOT_STEPS; step++) {
    Point pt = {.family = PACE_HOT, .added = step + 1, .relax = -1};
    g_autoptr(GError) e = NULL;
    g_autofree char *hot = NULL;
    res->runs++;
    pt.ir = pass_pipeline_section(plan, &pp, dump_after, dump_after ? &pt.dump : NULL, verify, &e);
    if (!pt.ir || !time_ir_hot(plan, &pp, cap_of(best), &pt, &hot, NULL, &e)) {
      point_free(&pt);
      return; /* does not compile, or past the fastest legal program */
    }
    gboolean ok = legal(&pt);
    double pt_w = pt.peak_w, pt_static = pt.static_w;
    if (step > 0) consider(best, &pt);
    else point_free(&pt); /* the plan as written: measured already */
    if (ok) {
      if (step > 0) hot_refine(plan, &pp, last, dump_after, verify, best, res);
      return;
    }
    /* "l1.wo_g2" -> wo; "l0.att", "l0.ln1" */
    const char *dot = hot ? strchr(hot, '.') : NULL;
    int k = -1;
    for (int j = 0; dot && j < PROJ__COUNT; j++) {
      size_t n = strlen(sched_proj_name[j]);
      if (strncmp(dot + 1, sched_proj_name[j], n) == 0 && (dot[1 + n] == '\0' || dot[1 + n] == '_')) k = j;
    }
    gboolean att = dot && strcmp(dot + 1, "att") == 0, ln = dot && g_str_has_prefix(dot + 1, "ln");
    if (k < 0 && !att && !ln) break;
    int key = k >= 0 ? k : att ? PROJ__COUNT : PROJ__COUNT + 1;
    /* the stage's chunks, weight pieces and stores slower by the watts
     * over (of the dynamic power under the limit), squared: a spacing
     * under the issuers' own waits does nothing; at least 1/4 slower */
    double over = (pt_w - pt_static) / (FIT_LIMIT_W - FIT_MARGIN_W - pt_static);
    over = MIN(MAX(over * over, 1.25), 4.0);
    if (key != last_k || pt_w < last_w - 0.01) last_k = key, last_w = pt_w, stuck = 0;
    else if (++stuck >= 2) break; /* its pacing does not make its heat */
    const char *name = k >= 0 ? sched_proj_name[k] : att ? "att" : "ln";
    gboolean fold = k >= 0 && pp.ln_fold && (k == PROJ_QKV || k == PROJ_W1);
    gboolean mc = k >= 0 && (m & (1u << k));
    struct { char path[32]; long base; gboolean on; } knobs[7];
    g_snprintf(knobs[0].path, 32, "issue_spacing.%s", name), knobs[0].base = FIT_HOT_FIRST, knobs[0].on = mc;
    g_snprintf(knobs[1].path, 32, "weight_spacing.%s", name), knobs[1].base = FIT_HOT_FIRST;
    knobs[1].on = k >= 0 && pp.multicast[k];
    g_snprintf(knobs[2].path, 32, "ln_fold_stagger.%s", name), knobs[2].base = FIT_HOT_FIRST, knobs[2].on = fold;
    g_snprintf(knobs[3].path, 32, "ln_fold_first_gap"), knobs[3].base = FIT_HOT_FIRST;
    knobs[3].on = fold && k == PROJ_QKV && g_str_has_prefix(hot, "l0.");
    g_snprintf(knobs[4].path, 32, att ? "attention.stagger" : "store_spacing.%s", name);
    knobs[4].base = FIT_HOT_FIRST / 4, knobs[4].on = !att || pp.attn_query_tiles > 1;
    g_snprintf(knobs[5].path, 32, att ? "store_spacing.att" : "ln_fold_slots.%s", name);
    knobs[5].base = att ? FIT_HOT_FIRST / 4 : 1, knobs[5].on = att || fold;
    g_snprintf(knobs[6].path, 32, "%s", g_str_has_prefix(hot, "l0.ln1") ? "ln_first_stagger" : "ln_stagger");
    knobs[6].base = FIT_HOT_FIRST, knobs[6].on = ln;
    gboolean raised = FALSE;
    last.n = 0;
    for (int j = 0; j < 7; j++) {
      long now;
      if (!knobs[j].on || !plan_knob_number(&pp, knobs[j].path, &now) || now >= FIT_MAX_INTERVAL) continue;
      long to = j == 5 && !att ? MIN(now * 2, 512) /* more owners folding apart */
                       : MIN((long)ceil((double)MAX(now, knobs[j].base) * over), FIT_MAX_INTERVAL);
      if (to == now || !plan_knob_fit(&pp, knobs[j].path, to)) continue;
      raised = TRUE;
      g_strlcpy(last.path[last.n], knobs[j].path, sizeof last.path[0]);
      last.from[last.n] = now, last.to[last.n++] = to;
    }
    if (!raised) break;
    spaced = TRUE;
  }
  if (spaced) hot_then_self(plan, &pp, dump_after, verify, best, res);
}

/* PACE_SHAPED: the stage rung's program with each kind of stage at a rate
 * of its own (power.stage_rate.STAGE).  One rate for every stage holds the
 * hottest kind at the limit and the others under it: on D1 with streamed
 * weights (d_ff 2048) W1 and W2 run at about 12 W of dynamic power under
 * the rate that fits them, qkv, attention and wo at 3 to 8 W.  From the
 * stage rung's best, each kind's average dynamic power over its stages'
 * spans (the profile's stages) is measured, and each kind under the
 * dynamic budget (the limit less the margin and the static power) has its
 * rate raised by budget / its power, at most FIT_SHAPE_MAX times, except
 * the kind that makes most of the hottest window (its heat is the limit's).
 * A program over the limit holds the kind hottest in it at its rate too,
 * or, when that one was held already, has the raises halved
 * (geometrically); at most FIT_SHAPE_TRIES programs a round.  A legal one
 * is the start of the next round, at most FIT_SHAPE_ROUNDS.  Rates are only
 * raised from a legal program, and every program measured is offered to
 * *best. */
#define FIT_SHAPE_ROUNDS 4
#define FIT_SHAPE_TRIES 4
#define FIT_SHAPE_MAX 4.0
static void rung_shaped(const Plan *plan, const PlanProblem *plan_pp, const char *dump_after, gboolean verify,
                        Point *best, FitResult *res) {
  if (!best->ir || best->family != PACE_STAGE) return;
  const Schedule *bs = &best->ir->sched;
  PlanProblem cur = *plan_pp;
  if (best->ir->sms_used != plan_pp->sms_used) plan_knob_fit(&cur, "sms_used", best->ir->sms_used);
  plan_knob_fit(&cur, "power.stage_rate", bs->stage_rate);
  long rate[SPACE__COUNT];
  for (int k = 0; k < SPACE__COUNT; k++) rate[k] = bs->stage_rates[k] > 0 ? bs->stage_rates[k] : bs->stage_rate;
  double w[SPACE__COUNT], static_w;
  int hot_kind;
  { /* the stage rung's best again, for its stages and its hottest window */
    Point pt = {.family = PACE_SHAPED, .relax = -1};
    g_autoptr(GError) e = NULL;
    g_autofree char *hot = NULL;
    res->runs++;
    pt.ir = pass_pipeline_section(plan, &cur, NULL, NULL, FALSE, &e);
    gboolean ok = pt.ir && time_ir_hot(plan, &cur, 0, &pt, &hot, w, &e);
    static_w = pt.static_w;
    point_free(&pt);
    if (!ok) return;
    hot_kind = hot ? stage_kind(hot) : -1;
  }
  double budget = FIT_LIMIT_W - FIT_MARGIN_W - static_w;
  for (int round = 0; round < FIT_SHAPE_ROUNDS; round++) {
    long want[SPACE__COUNT];
    gboolean held[SPACE__COUNT] = {FALSE}, any = FALSE;
    if (hot_kind >= 0) held[hot_kind] = TRUE;
    for (int k = 0; k < SPACE__COUNT; k++) {
      want[k] = rate[k];
      if (held[k] || w[k] <= 0 || (k == SPACE_LN && plan_pp->dims.kind != PROB_P1)) continue;
      double f = MIN(budget / w[k], FIT_SHAPE_MAX);
      if (f < 1.1) continue; /* at the budget already */
      want[k] = MIN((long)lround((double)rate[k] * f), 65536);
      any |= want[k] != rate[k];
    }
    gboolean took = FALSE;
    for (int t = 0; t < FIT_SHAPE_TRIES && any && !took; t++) {
      PlanProblem pp = cur; /* the rates of earlier rounds, and the plan's */
      char path[40];
      for (int k = 0; k < SPACE__COUNT; k++)
        if (want[k] != rate[k]) plan_knob_fit(&pp, rate_path(k, path), want[k]);
      Point pt = {.family = PACE_SHAPED, .added = round + 1, .relax = -1};
      g_autoptr(GError) e = NULL;
      g_autofree char *hot = NULL;
      double w2[SPACE__COUNT];
      res->runs++;
      pt.ir = pass_pipeline_section(plan, &pp, dump_after, dump_after ? &pt.dump : NULL, verify, &e);
      if (!pt.ir || !time_ir_hot(plan, &pp, cap_of(best), &pt, &hot, w2, &e)) {
        point_free(&pt);
        return; /* does not compile, or slower than the fastest legal program */
      }
      int k_hot = hot ? stage_kind(hot) : -1;
      if (legal(&pt)) {
        took = TRUE;
        cur = pp;
        memcpy(rate, want, sizeof rate);
        memcpy(w, w2, sizeof w);
        hot_kind = k_hot;
      } else if (k_hot >= 0 && !held[k_hot] && want[k_hot] != rate[k_hot]) {
        held[k_hot] = TRUE; /* its raise made the heat: back to its rate */
        want[k_hot] = rate[k_hot];
      } else {
        for (int k = 0; k < SPACE__COUNT; k++) want[k] = (long)lround(sqrt((double)want[k] * (double)rate[k]));
      }
      any = FALSE;
      for (int k = 0; k < SPACE__COUNT; k++) any |= want[k] != rate[k];
      consider(best, &pt);
    }
    if (!took) return;
  }
}

/* power.fit: relax.  A program under the limit by FIT_RELAX_HEADROOM_W
 * or more has power to spare, and its spacings and staggers (the pacing
 * knobs: cycles of delay that only shape the power, plan_knob_relax) cost
 * cycles for nothing: the plan's values, written for another shape or
 * machine, are upper bounds.  The section with every pacing knob times 0,
 * 1/4 and 1/2 is compiled and measured (capped at the fastest legal
 * program so far); the fastest under the limit wins, the plan as written
 * included. */
static void rung_relax(const Plan *plan, const PlanProblem *plan_pp, const char *dump_after, gboolean verify,
                       Point *best, FitResult *res) {
  static const int num[] = {0, 1, 2}; /* of 4 */
  for (guint i = 0; i < G_N_ELEMENTS(num); i++) {
    PlanProblem relaxed = *plan_pp;
    if (plan_knob_relax(&relaxed, num[i], 4) == 0) return; /* no pacing knob above 0 */
    Point pt;
    g_autoptr(GError) e = NULL;
    int64_t cap = cap_of(best);
    res->runs++;
    if (!measure(plan, &relaxed, PACE_SELF, 0, cap, dump_after, verify, &pt, &e)) {
      point_free(&pt);
      continue; /* past the cap: slower than the best */
    }
    pt.relax = num[i];
    consider(best, &pt);
  }
}

/* The written knob of the section a refusal names: the technique its text
 * starts with ("weights: resident: a qkv panel shard ...", "handoff_hop_flow:
 * ...", "attention.query_tiles=4 ..."), when the plan wrote it to other
 * than its default; else the knob at its "FILE:LINE:COL: error: " (ir_error
 * at the knob's provenance).  -1 for none (a default, a dim, the section,
 * an internal error). */
static int cited_knob(const Plan *plan, const PlanProblem *pp, const char *msg) {
  g_autofree char *file = text_escape(plan->file ? plan->file : "(plan)"); /* one line */
  size_t n = strlen(file);
  if (strncmp(msg, file, n) != 0 || msg[n] != ':') return -1;
  char *end;
  long line = strtol(msg + n + 1, &end, 10);
  if (*end != ':') return -1;
  long col = strtol(end + 1, &end, 10);
  if (strncmp(end, ": error: ", 9) != 0 || strstr(end, ": error: internal: ") == end) return -1;
  const char *text = end + 9;
  size_t k = strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_.");
  if (k > 0 && k < 64 && (text[k] == ':' || text[k] == '=')) {
    char path[64];
    memcpy(path, text, k);
    path[k] = '\0';
    PlanLoc at = plan_knob_loc(pp, path);
    int t = at.line > 0 ? plan_knob_at(pp, at.line, at.col) : -1;
    if (t >= 0 && pp->chosen[t] != SCHED_FALLBACK && !g_str_has_suffix(pp->loc[t].path, "power.fit")) return t;
  }
  int i = plan_knob_at(pp, (int)line, (int)col);
  return i >= 0 && pp->loc[i].path && !g_str_has_suffix(pp->loc[i].path, "power.fit") ? i : -1;
}

/* ---- Capacity repairs ----
 * Resident weights that do not fit the machine at this shape are first
 * repaired, and taken back to streaming only when no repair compiles: a
 * streamed program reads every weight once per row tile (P1) or per step
 * (D1), so keeping what fits is worth some compiles.  Three kinds of
 * repair, each only to values its knob's rule and needs take at the shape:
 *
 *   - the unit: k_split.X up (more K shards, each fewer rows) or panels.X
 *     down (narrower panels), for the projection X the refusal names, so
 *     that a unit fits a WG (and units pack the WGs tighter);
 *   - the room: rf_temp_kib down, 4 KiB at a time, when the refusal counts
 *     the RF after it (D1: the activations' room, which the passes then
 *     check);
 *   - what stays: resident_layers (D1), the most layers from layer 0 whose
 *     weights fit, the others streamed.
 *
 * For each unit repair (none first) and each room (the plan's first), the
 * most resident layers that compile; of those with the most layers kept,
 * the fastest program (timed as the fitting's level 0), ties to the fewest
 * knobs changed, then to the order tried.  A lowering refuses a placement
 * that does not fit before it makes a task, so a try costs little; at most
 * REPAIR_TRIES.  Deterministic: the same refusal, the same tries. */
#define REPAIR_STEPS 3
#define REPAIR_TRIES 256

/* The projection a refusal names: the earliest of qkv, wo, w1, w2 standing
 * as a word in its text ("a qkv panel shard is", "w2 has 8 panels"), or -1. */
static int named_proj(const char *text) {
  int best = -1;
  const char *first = NULL;
  for (int j = 0; j < PROJ__COUNT; j++) {
    const char *name = sched_proj_name[j];
    size_t n = strlen(name);
    for (const char *q = strstr(text, name); q; q = strstr(q + 1, name)) {
      gboolean before = q == text || (!g_ascii_isalnum(q[-1]) && q[-1] != '_' && q[-1] != '.');
      if (!before || g_ascii_isalnum(q[n]) || q[n] == '_') continue;
      if (!first || q < first) first = q, best = j;
      break;
    }
  }
  return best;
}

/* One repair: knob paths and values (n of them; 0: none). */
typedef struct Repair {
  const char *path[2];
  long v[2];
  int n;
} Repair;

static const Repair NO_REPAIR = {{NULL, NULL}, {0, 0}, 0};

/* Knob `path`'s repair values from its value now, `dir` (+1 up, -1 down)
 * by `step` until `stop`: the first `max` its rule and needs take, each
 * appended to out[] as a one-knob repair.  Returns how many. */
static int repair_values(const Plan *plan, const PlanProblem *pp, const char *path, int dir, long step, long stop,
                         int max, Repair *out) {
  long now;
  int n = 0;
  if (!plan_knob_number(pp, path, &now)) return 0;
  for (long v = now + dir * step; n < max && (dir > 0 ? v <= stop : v >= stop); v += dir * step) {
    PlanProblem probe = *pp;
    if (plan_knob_repair(&probe, &plan->hw, path, v, NULL)) out[n++] = (Repair){{path, NULL}, {v, 0}, 1};
  }
  return n;
}

/* Apply repairs u and t and resident_layers rl (0: as written) to a copy
 * of *pp; FALSE when one of them does not take. */
static gboolean repaired(const Plan *plan, const PlanProblem *pp, const Repair *u, const Repair *t, long rl,
                         PlanProblem *out, GString *what) {
  *out = *pp;
  const Repair *r[2] = {u, t};
  for (int a = 0; a < 2; a++)
    for (int k = 0; k < r[a]->n; k++)
      if (!plan_knob_repair(out, &plan->hw, r[a]->path[k], r[a]->v[k], what)) return FALSE;
  return rl == 0 || plan_knob_repair(out, &plan->hw, "resident_layers", rl, what);
}

/* The section with repair r applied (*c, its changes appended to `what`),
 * compiled into *p, one run; FALSE, *p empty, when the repair does not
 * take or the program does not compile. */
static gboolean repair_point(const Plan *plan, const PlanProblem *pp, const Repair *r, const char *dump_after,
                             gboolean verify, int *runs, PlanProblem *c, GString *what, Point *p) {
  *p = (Point){.relax = -1};
  if (!repaired(plan, pp, r, &NO_REPAIR, 0, c, what)) return FALSE;
  (*runs)++;
  g_autoptr(GError) e = NULL;
  p->ir = pass_pipeline_section(plan, c, dump_after, dump_after ? &p->dump : NULL, verify, &e);
  if (p->ir) return TRUE;
  point_free(p);
  return FALSE;
}

/* Try the repairs of a refusal at resident weights (its text after the
 * "error: "; see above).  TRUE with *pp repaired, *pt its program
 * (measured when `measured`) and the changes in `changed`; FALSE, *pp as
 * it was, when none compiles. */
static gboolean repair(const Plan *plan, PlanProblem *pp, const char *text, gboolean measured, const char *dump_after,
                       gboolean verify, Point *pt, int *runs, GString *changed) {
  Repair unit[1 + 2 * REPAIR_STEPS] = {{{NULL, NULL}, {0, 0}, 0}}, room[1 + REPAIR_STEPS] = {{{NULL, NULL}, {0, 0}, 0}};
  int nu = 1, nr = 1, j = named_proj(text);
  char ks[32], pn[32];
  if (j >= 0) {
    g_snprintf(ks, sizeof ks, "k_split.%s", sched_proj_name[j]);
    g_snprintf(pn, sizeof pn, "panels.%s", sched_proj_name[j]);
    nu += repair_values(plan, pp, ks, +1, 1, 8, REPAIR_STEPS, unit + nu);
    nu += repair_values(plan, pp, pn, -1, 1, 1, REPAIR_STEPS, unit + nu);
  }
  if (strstr(text, "rf_temp_kib")) nr += repair_values(plan, pp, "rf_temp_kib", -1, 4, 4, REPAIR_STEPS, room + nr);
  long rl_now, L = pp->dims.layers;
  gboolean has_rl = plan_knob_number(pp, "resident_layers", &rl_now);
  long top = has_rl && rl_now > 0 ? MIN(rl_now, L) : L, bottom = has_rl ? 1 : top;
  Point best = {0};
  PlanProblem won;
  long won_rl = 0;
  int won_moves = 0, tries = 0;
  g_autoptr(GString) won_changes = g_string_new(NULL);
  for (int a = 0; a < nu; a++)
    for (int b = 0; b < nr && tries < REPAIR_TRIES; b++) {
      if (a == 0 && b == 0 && !has_rl) continue; /* the plan as written: refused */
      for (long rl = top; rl >= bottom && rl >= won_rl && tries < REPAIR_TRIES; rl--) {
        PlanProblem cand;
        g_autoptr(GString) what = g_string_new(NULL);
        if (a == 0 && b == 0 && rl == top) continue; /* the plan as written */
        if (!repaired(plan, pp, &unit[a], &room[b], rl == top ? 0 : rl, &cand, what)) continue;
        tries++;
        (*runs)++;
        g_autoptr(GError) e = NULL;
        Point p = {0};
        p.ir = pass_pipeline_section(plan, &cand, dump_after, dump_after ? &p.dump : NULL, verify, &e);
        if (!p.ir) {
          point_free(&p);
          continue;
        }
        /* the most layers kept for this unit and room: timed against the
         * fastest with as many (more: it wins) */
        int moves = unit[a].n + room[b].n + (rl != top);
        gboolean ok = !measured || time_ir(plan, &cand, rl == won_rl && best.ir ? best.cycles : 0, &p, &e);
        if (ok && (!best.ir || rl > won_rl || (measured && p.cycles < best.cycles) ||
                   (!measured && moves < won_moves))) {
          point_free(&best);
          best = p;
          won = cand;
          won_rl = rl;
          won_moves = moves;
          g_string_assign(won_changes, what->str);
        } else {
          point_free(&p);
        }
        break; /* fewer layers kept with this unit and room: slower */
      }
    }
  if (!best.ir) return FALSE;
  *pp = won;
  *pt = best;
  g_string_append_printf(changed, "%s%s", changed->len ? ", " : "", won_changes->str);
  return TRUE;
}

/* The projection a refusal (its text after "error: ") is about: the one of
 * the knob it starts with ("k_split.qkv=2: refinements.ln_fold folds ..",
 * "weights: resident: multicast.w2 needs a WG .."), else named_proj's. */
static int refused_proj(const char *text) {
  if (g_str_has_prefix(text, "weights: resident: ")) text += strlen("weights: resident: ");
  size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_."), m;
  const char *dot = memchr(text, '.', n);
  if (n > 0 && (text[n] == ':' || text[n] == '=' || (dot && text[n] == ' '))) { /* a knob's path */
    for (int j = 0; dot && j < PROJ__COUNT; j++)
      if ((m = strlen(sched_proj_name[j])) == n - (size_t)(dot + 1 - text) && strncmp(dot + 1, sched_proj_name[j], m) == 0)
        return j;
    return -1;
  }
  return named_proj(text);
}

/* Does the candidate get the lowering past projection j's refusal: it
 * compiles, or refuses at something `about` (refused_proj, room_proj)
 * does not tie to j?  One compile, counted in *runs. */
static gboolean gets_past(const Plan *plan, const PlanProblem *cand, const char *dump_after, gboolean verify,
                          int *runs, int (*about)(const char *), int j) {
  (*runs)++;
  g_autoptr(GError) e = NULL;
  char *dump = NULL;
  Ir *ir = pass_pipeline_section(plan, cand, dump_after, dump_after ? &dump : NULL, verify, &e);
  g_free(dump);
  const char *at = e ? strstr(e->message, ": error: ") : NULL;
  gboolean past = ir || !at || about(at + 9) != j;
  if (ir) ir_free(ir);
  return past;
}

/* When no single repair compiles the whole section (a stage after the one
 * refused needs its own repair, or a technique built with it a fallback):
 * the first repair of projection X's unit (as above, none first) with the
 * fewest panel_groups.X that gets the lowering past X's refusal: the
 * section compiles, or refuses at something else (a later stage, another
 * knob), which the caller's loop then repairs or falls back in turn.
 * Groups run X's (K shard, panel) units in rounds when there are more of
 * them than the SMs have WGs.  TRUE with *pp repaired and the changes in
 * `changed`. */
static gboolean step_repair(const Plan *plan, PlanProblem *pp, const char *text, const char *dump_after,
                            gboolean verify, int *runs, GString *changed) {
  int j = refused_proj(text);
  if (j < 0 || pp->dims.kind != PROB_P1) return FALSE;
  Repair unit[1 + 2 * REPAIR_STEPS] = {{{NULL, NULL}, {0, 0}, 0}};
  int nu = 1;
  char ks[32], pn[32], pg[32];
  g_snprintf(ks, sizeof ks, "k_split.%s", sched_proj_name[j]);
  g_snprintf(pn, sizeof pn, "panels.%s", sched_proj_name[j]);
  g_snprintf(pg, sizeof pg, "panel_groups.%s", sched_proj_name[j]);
  nu += repair_values(plan, pp, ks, +1, 1, 8, REPAIR_STEPS, unit + nu);
  nu += repair_values(plan, pp, pn, -1, 1, 1, REPAIR_STEPS, unit + nu);
  long g_now;
  if (!plan_knob_number(pp, pg, &g_now)) return FALSE;
  int tries = 0;
  for (long g = g_now; g <= 64 && tries < REPAIR_TRIES; g++)
    for (int a = 0; a < nu && tries < REPAIR_TRIES; a++) {
      if (a == 0 && g == g_now) continue; /* as written: refused */
      PlanProblem cand;
      g_autoptr(GString) what = g_string_new(NULL);
      if (!repaired(plan, pp, &unit[a], &NO_REPAIR, 0, &cand, what)) continue;
      if (g != g_now && !plan_knob_repair(&cand, &plan->hw, pg, g, what)) continue;
      tries++;
      if (!gets_past(plan, &cand, dump_after, verify, runs, refused_proj, j)) continue;
      *pp = cand;
      g_string_append_printf(changed, "%s%s", changed->len ? ", " : "", what->str);
      return TRUE;
    }
  return FALSE;
}

/* The projection of the tensor an rf_alloc refusal names ("rf_alloc: wg0
 * has no room for 'l0.qkv.r0.p8.acc' ..."): a component of its name that
 * is a projection's, or -1. */
static int room_proj(const char *text) {
  if (!g_str_has_prefix(text, "rf_alloc: ")) return -1;
  const char *q = strstr(text, "no room for '");
  if (!q) return -1;
  q += strlen("no room for '");
  const char *end = strchr(q, '\'');
  if (!end) return -1;
  g_autofree char *name = g_strndup(q, (gsize)(end - q));
  g_auto(GStrv) parts = g_strsplit(name, ".", -1);
  for (int i = 0; parts[i]; i++)
    for (int j = 0; j < PROJ__COUNT; j++)
      if (strcmp(parts[i], sched_proj_name[j]) == 0) return j;
  return -1;
}

/* A tensor of projection X's stage with no room in its WG's RF (rf_alloc's
 * refusal): on a machine with a small RF (hardware.rf_kib 16 or 32) the
 * chunks a plan wrote, or the default k_chunk (which counts the W chunk
 * alone), leave no room for the A chunks and results beside them.  The
 * first of k_chunk.X down (each value its rule takes, up to 3), panels.X
 * down (likewise), then the smallest k_chunk with each of those panels,
 * that gets the lowering past X's refusal: the section compiles, or
 * refuses at something else, which the caller's loop repairs or falls back
 * in turn.  TRUE with *pp repaired and the changes in `changed`. */
static gboolean room_repair(const Plan *plan, PlanProblem *pp, const char *text, const char *dump_after,
                            gboolean verify, int *runs, GString *changed) {
  int j = room_proj(text);
  if (j < 0) return FALSE;
  char kc[32], pn[32];
  g_snprintf(kc, sizeof kc, "k_chunk.%s", sched_proj_name[j]);
  g_snprintf(pn, sizeof pn, "panels.%s", sched_proj_name[j]);
  Repair k[REPAIR_STEPS], p[REPAIR_STEPS], cand[3 * REPAIR_STEPS];
  int nk = repair_values(plan, pp, kc, -1, 32, 32, REPAIR_STEPS, k);
  int np = repair_values(plan, pp, pn, -1, 8, 8, REPAIR_STEPS, p), n = 0;
  for (int i = 0; i < nk; i++) cand[n++] = k[i];
  for (int i = 0; i < np; i++) cand[n++] = p[i];
  for (int i = 0; nk > 0 && i < np; i++)
    cand[n++] = (Repair){{k[nk - 1].path[0], p[i].path[0]}, {k[nk - 1].v[0], p[i].v[0]}, 2};
  for (int i = 0; i < n; i++) {
    PlanProblem c;
    g_autoptr(GString) what = g_string_new(NULL);
    if (!repaired(plan, pp, &cand[i], &NO_REPAIR, 0, &c, what) || !gets_past(plan, &c, dump_after, verify, runs, room_proj, j))
      continue;
    *pp = c;
    g_string_append_printf(changed, "%s%s", changed->len ? ", " : "", what->str);
    return TRUE;
  }
  return FALSE;
}

/* D1's history K/V kept beside resident weights in smaller blocks: when
 * the program as compiled streams it for lack of room (Ir.history_streamed:
 * a block of history / attention.slices rows of K and V, the last slice's
 * with the new positions', finds no WG with room in some layer), the
 * repairs that make the blocks smaller: the new positions in a slice of
 * their own (attention.new_slice), more slices (each count the knob's rule
 * takes at the shape, up to its maximum), then both.  Of those whose
 * history stays in every layer, the fastest; when none stays, the fastest
 * of them all, since a history that streams anyway streams faster in more
 * smaller slices on more WGs (timed as the fitting's level 0, against *pt's
 * cycles: one must be faster to win; unmeasured, the first that stays).
 * TRUE with *pp and *pt replaced, the change in `changed` and *holds
 * whether the history now stays; FALSE, both as they were, when none
 * wins. */
#define SLICES_MAX 8
static gboolean kv_repair(const Plan *plan, PlanProblem *pp, gboolean measured, const char *dump_after,
                          gboolean verify, Point *pt, int *runs, GString *changed, gboolean *holds) {
  Repair more[SLICES_MAX], cand[1 + 2 * SLICES_MAX];
  int nm = repair_values(plan, pp, "attention.slices", +1, 1, SLICES_MAX, SLICES_MAX, more), n = 0;
  Repair own = {{"attention.new_slice", NULL}, {1, 0}, 1};
  if (!pp->attn_new_slice) cand[n++] = own;
  for (int i = 0; i < nm; i++) cand[n++] = more[i];
  for (int i = 0; i < nm && !pp->attn_new_slice; i++)
    cand[n++] = (Repair){{more[i].path[0], own.path[0]}, {more[i].v[0], 1}, 2};
  Point best[2] = {{0}, {0}}; /* [1]: the history stays; [0]: it streams */
  PlanProblem won[2];
  GString *won_what[2] = {g_string_new(NULL), g_string_new(NULL)};
  for (int i = 0; i < n && !(best[1].ir && !measured); i++) {
    PlanProblem c;
    g_autoptr(GString) what = g_string_new(NULL);
    Point p;
    if (!repair_point(plan, pp, &cand[i], dump_after, verify, runs, &c, what, &p)) continue;
    int stays = !p.ir->history_streamed;
    int64_t cap = best[stays].ir ? best[stays].cycles : measured ? pt->cycles : 0;
    g_autoptr(GError) e = NULL;
    if ((!measured && !stays) || (measured && !time_ir(plan, &c, cap, &p, &e))) {
      point_free(&p);
      continue;
    }
    point_free(&best[stays]);
    best[stays] = p;
    won[stays] = c;
    g_string_assign(won_what[stays], what->str);
  }
  int w = best[1].ir ? 1 : 0;
  point_free(&best[1 - w]);
  gboolean found = best[w].ir != NULL;
  if (found) {
    point_free(pt);
    *pt = best[w];
    *pp = won[w];
    *holds = w == 1;
    g_string_append_printf(changed, "%s%s", changed->len ? ", " : "", won_what[w]->str);
  }
  g_string_free(won_what[0], TRUE);
  g_string_free(won_what[1], TRUE);
  return found;
}

/* kv_repair where the program streams its history, with its warning. */
static void kv_check(const Plan *plan, PlanProblem *pp, gboolean measured, const char *dump_after, gboolean verify,
                     Point *pt, GPtrArray **warnings, int *runs, gboolean *repaired_it) {
  if (!pt->ir->history_streamed) return;
  g_autoptr(GString) changed = g_string_new(NULL);
  int was = pp->attn_slices, own = pp->attn_new_slice;
  gboolean holds;
  if (!kv_repair(plan, pp, measured, dump_after, verify, pt, runs, changed, &holds)) return;
  *repaired_it = TRUE;
  PlanLoc at = plan_knob_loc(pp, "attention.slices");
  if (at.line == 0) at = pp->where;
  g_autofree char *file = text_escape(plan->file ? plan->file : "(plan)");
  if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(*warnings,
                  g_strdup_printf("%s:%d:%d: warning: attention.slices=%d: the history K/V finds no room "
                                  "beside the resident weights in blocks of %d rows (%s %d new positions%s) "
                                  "and would stream from HBM every step; %s %s (--strict keeps the plan's)",
                                  file, MAX(at.line, 1), MAX(at.col, 1), was, pp->dims.history / was,
                                  own ? "the" : "the last slice's with the", pp->dims.steps,
                                  own ? " in a slice of their own" : " too",
                                  holds ? "repaired with" : "it still does, faster with",
                                  changed->str));
}

/* A P1 section whose resident weights the fallbacks took back to
 * streaming reads every W chunk once per row tile and every A chunk once
 * per panel: at the largest shapes 20 times the lines the problem needs,
 * and a program whose energy alone is over the power budget.  rf_grid
 * (src/lower/grid.c) gives a task rows x cols accumulators, so that each W
 * chunk serves `rows` row tiles and each A chunk `cols` panels.  Tried in
 * GRIDS' order (the most reuse first), each where its knobs' rules take it
 * and rf_alloc finds the room; the one with the fewest cycles the fitting
 * can reach wins, estimated from its level 0 as its cycles or its dynamic
 * energy at the power budget, whichever is more (the fitting slows a
 * program at least that much), if that beats the plain fallback's;
 * unmeasured (power.fit: off), the first that compiles.  A plan that
 * writes a grid keeps it. */
#define GRID(r, c) {{"rf_grid.rows", "rf_grid.cols"}, {r, c}, 2}
#define GRID_ROWS(r) {{"rf_grid.rows", NULL}, {r, 0}, 1}
#define GRID_COLS(c) {{"rf_grid.cols", NULL}, {c, 0}, 1}
static const Repair GRIDS[] = {GRID(2, 4), GRID(4, 2), GRID(2, 2), GRID_ROWS(4), GRID_COLS(4), GRID_ROWS(2),
                               GRID_COLS(2)};

static double fitted_estimate(const Point *p) {
  double budget = FIT_LIMIT_W - FIT_MARGIN_W - p->static_w;
  double e = budget > 0 ? (double)p->cycles * p->dyn_w / budget : (double)p->cycles;
  return MAX((double)p->cycles, e);
}

static gboolean grid_repair(const Plan *plan, PlanProblem *pp, gboolean measured, gboolean mc, const char *dump_after,
                            gboolean verify, Point *pt, int *runs, GString *changed, double *was, double *now) {
  Point best = {0};
  PlanProblem won;
  g_autoptr(GString) won_what = g_string_new(NULL);
  double best_est = measured ? fitted_estimate(pt) : 0;
  *was = best_est;
  for (size_t i = 0; i < G_N_ELEMENTS(GRIDS) && !(best.ir && !measured); i++) {
    PlanProblem c;
    g_autoptr(GString) what = g_string_new(NULL);
    Point p;
    if (!repair_point(plan, pp, &GRIDS[i], dump_after, verify, runs, &c, what, &p)) continue;
    /* a run as long as the best estimate cannot beat it (the estimate is
     * at least the cycles): it stops there */
    int64_t cap = measured && best_est > 0 ? (int64_t)ceil(best_est) : 0;
    g_autoptr(GError) e = NULL;
    if (measured && !time_ir(plan, &c, cap, &p, &e)) {
      point_free(&p);
      continue;
    }
    double est = measured ? fitted_estimate(&p) : 0;
    if (measured && est >= best_est) {
      point_free(&p);
      continue;
    }
    point_free(&best);
    best = p;
    best_est = est;
    won = c;
    g_string_assign(won_what, what->str);
  }
  if (!best.ir) return FALSE;
  /* the winner with its loads shared (rf_grid.multicast, grid.c), where
   * the machine multicasts: kept when its estimate is less */
  PlanProblem c = won;
  g_autoptr(GString) what = g_string_new(won_what->str);
  if (measured && mc && plan->hw.multicast && plan_knob_repair(&c, &plan->hw, "rf_grid.multicast", 1, what)) {
    Point p = {.relax = -1};
    g_autoptr(GError) e = NULL;
    (*runs)++;
    p.ir = pass_pipeline_section(plan, &c, dump_after, dump_after ? &p.dump : NULL, verify, &e);
    if (p.ir && time_ir(plan, &c, (int64_t)ceil(best_est), &p, &e) && fitted_estimate(&p) < best_est) {
      point_free(&best);
      best = p, best_est = fitted_estimate(&p), won = c;
      g_string_assign(won_what, what->str);
    } else {
      point_free(&p);
    }
  }
  point_free(pt);
  *pt = best;
  *pp = won;
  *now = best_est;
  g_string_append_printf(changed, "%s%s", changed->len ? ", " : "", won_what->str);
  return TRUE;
}

/* grid_repair where the fallbacks streamed a P1 section's resident
 * weights, with its warning; `mc`: it may try rf_grid.multicast. */
static void grid_check(const Plan *plan, PlanProblem *pp, gboolean measured, gboolean mc, const char *dump_after,
                       gboolean verify, Point *pt, GPtrArray **warnings, int *runs) {
  const PlanProblem *as_written = plan_problem(plan, pp->dims.kind);
  if (pp->dims.kind != PROB_P1 || pp->weights != WEIGHTS_STREAMED || as_written->weights != WEIGHTS_RESIDENT ||
      pp->rf_grid_rows * pp->rf_grid_cols * pp->rf_grid_k > 1)
    return;
  g_autoptr(GString) changed = g_string_new(NULL);
  double was, now;
  if (!grid_repair(plan, pp, measured, mc, dump_after, verify, pt, runs, changed, &was, &now)) return;
  PlanLoc at = plan_knob_loc(pp, "weights");
  if (at.line == 0) at = pp->where;
  g_autofree char *file = text_escape(plan->file ? plan->file : "(plan)");
  g_autofree char *gain = measured ? g_strdup_printf(" (%.0f -> %.0f cycles at the power budget, estimated)", was, now)
                                   : g_strdup("");
  if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(*warnings,
                  g_strdup_printf("%s:%d:%d: warning: weights: the streamed fallback reads each weight chunk once "
                                  "per row tile; tiled with %s, each serves more row tiles and panels%s "
                                  "(--strict refuses the fallback)",
                                  file, MAX(at.line, 1), MAX(at.col, 1), changed->str, gain));
}

/* Level 0 of the section, with capacity fallbacks: while the lowering
 * refuses at a knob the plan wrote (a resident shard over a WG's RF, relays
 * over the machine's WGs, ...), that knob goes back to its default, with
 * the knobs that need it (plan_knob_fallback), and the section compiles
 * again; each fallback is a warning.  With power.fit off (measured FALSE)
 * only compiled.  FALSE with *err: the plan's own refusal (--strict, a
 * knob left at its default, FIT_MAX_FALLBACKS fallbacks). */
static gboolean first_fit(const Plan *plan, PlanProblem *pp, gboolean measured, gboolean repairs, gboolean mc,
                          const char *dump_after, gboolean verify, Point *pt, GPtrArray **warnings, int *runs,
                          gboolean *repaired_it, GError **err) {
  for (int round = 0;; round++) {
    g_autoptr(GError) e = NULL;
    gboolean ok;
    (*runs)++;
    if (measured) {
      ok = measure(plan, pp, PACE_SELF, 0, 0, dump_after, verify, pt, &e);
    } else {
      *pt = (Point){.relax = -1};
      pt->ir = pass_pipeline_section(plan, pp, dump_after, dump_after ? &pt->dump : NULL, verify, &e);
      ok = pt->ir != NULL;
    }
    if (ok && repairs && !plan->strict) kv_check(plan, pp, measured, dump_after, verify, pt, warnings, runs, repaired_it);
    if (ok && !plan->strict) grid_check(plan, pp, measured, mc, dump_after, verify, pt, warnings, runs);
    if (ok) return TRUE;
    int i = pt->ir || plan->strict || round >= FIT_MAX_FALLBACKS ? -1 : cited_knob(plan, pp, e->message);
    const char *at = strstr(e->message, ": error: ");
    gboolean capacity = repairs && at && !pt->ir && !plan->strict && round < FIT_MAX_FALLBACKS &&
                        g_str_has_prefix(at + 9, "weights: resident: ");
    gboolean room = at && !pt->ir && !plan->strict && round < FIT_MAX_FALLBACKS &&
                    g_str_has_prefix(at + 9, "rf_alloc: ");
    if (i < 0 && !capacity && !room) {
      g_propagate_error(err, g_steal_pointer(&e));
      return FALSE;
    }
    point_free(pt);
    g_autoptr(GString) changed = g_string_new(NULL);
    if (room && room_repair(plan, pp, at + 9, dump_after, verify, runs, changed)) {
      if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(*warnings, g_strdup_printf("%.*s: warning: %s; repaired with %s (--strict refuses)",
                                                 (int)(at - e->message), e->message, at + 9, changed->str));
      continue;
    }
    if (capacity && repair(plan, pp, at + 9, measured, dump_after, verify, pt, runs, changed)) {
      *repaired_it = TRUE;
      if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(*warnings, g_strdup_printf("%.*s: warning: %s; repaired with %s (--strict refuses)",
                                                 (int)(at - e->message), e->message, at + 9, changed->str));
      kv_check(plan, pp, measured, dump_after, verify, pt, warnings, runs, repaired_it);
      return TRUE;
    }
    if (capacity && step_repair(plan, pp, at + 9, dump_after, verify, runs, changed)) {
      *repaired_it = TRUE;
      if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(*warnings, g_strdup_printf("%.*s: warning: %s; repaired with %s (--strict refuses)",
                                                 (int)(at - e->message), e->message, at + 9, changed->str));
      continue;
    }
    if (i < 0) {
      g_propagate_error(err, g_steal_pointer(&e));
      return FALSE;
    }
    plan_knob_fallback(pp, i, changed);
    if (changed->len == 0) { /* already at its default: nothing left to try */
      g_propagate_error(err, g_steal_pointer(&e));
      return FALSE;
    }
    if (!*warnings) *warnings = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(*warnings, g_strdup_printf("%.*s: warning: %s; falling back to %s (--strict refuses)",
                                               (int)(at - e->message), e->message, at + 9, changed->str));
  }
}

Ir *fit_pipeline(const Plan *plan, ProblemKind kind, const char *dump_after, char **dump, gboolean verify,
                 FitResult *res, GError **err) {
  return fit_pipeline_capped(plan, kind, 0, dump_after, dump, verify, res, err);
}

static Ir *fit_section(const Plan *plan, ProblemKind kind, int64_t cap, gboolean repairs, gboolean mc,
                       const char *dump_after, char **dump, gboolean verify, FitResult *res, gboolean *repaired_it,
                       FitKept *kept, GError **err);
static Ir *fit_impl(const Plan *plan, ProblemKind kind, int64_t cap, const char *dump_after, char **dump,
                    gboolean verify, FitResult *res, FitKept *kept, GError **err);

Ir *fit_pipeline_capped(const Plan *plan, ProblemKind kind, int64_t cap, const char *dump_after, char **dump,
                        gboolean verify, FitResult *res, GError **err) {
  return fit_impl(plan, kind, cap, dump_after, dump, verify, res, NULL, err);
}

Ir *fit_pipeline_kept(const Plan *plan, ProblemKind kind, FitResult *res, FitKept *kept, GError **err) {
  *kept = (FitKept){0};
  keep_runs = TRUE;
  Ir *ir = fit_impl(plan, kind, 0, NULL, NULL, FALSE, res, kept, err);
  keep_runs = FALSE;
  return ir;
}

/* Of two fits of a section, the first's program, dump, kept run and
 * result in *ir, *d1, *k1, *res: the second's take their place when it is
 * legal and faster (its result's cap the caller's), and the other's are
 * freed.  TRUE when the second was taken. */
static gboolean take_faster(Ir **ir, char **d1, FitKept *k1, FitResult *res, Ir *ir2, char *d2, FitKept *k2,
                            FitResult *r2, int64_t cap) {
  if (ir2 && (!*ir || r2->cycles < res->cycles)) {
    if (*ir) ir_free(*ir);
    g_free(*d1);
    fit_kept_clear(k1);
    *ir = ir2, *d1 = d2, *k1 = *k2;
    r2->cap = cap;
    *res = *r2;
    return TRUE;
  }
  if (ir2) ir_free(ir2);
  g_free(d2);
  fit_kept_clear(k2);
  return FALSE;
}

static Ir *fit_try(const Plan *plan, ProblemKind kind, int64_t cap, gboolean mc, const char *dump_after,
                   char **dump, gboolean verify, FitResult *res, FitKept *kept, GError **err) {
  FitResult dummy;
  if (!res) res = &dummy;
  *res = (FitResult){.cap = cap};
  gboolean repaired_it = FALSE, again = FALSE;
  g_autoptr(GError) e = NULL;
  char *d1 = NULL;
  FitKept k1 = {0}, k2 = {0};
  Ir *ir = fit_section(plan, kind, cap, TRUE, mc, dump_after, dump ? &d1 : NULL, verify, res, &repaired_it,
                       kept ? &k1 : NULL, &e);
  if (!repaired_it || (!ir && res->slower) || (ir && !res->measured)) { /* power.fit off: nothing to compare */
    if (!ir) g_propagate_error(err, g_steal_pointer(&e));
    if (dump) *dump = d1;
    if (kept) *kept = k1;
    return ir;
  }
  /* a capacity repair kept more of the weights resident; the fallback to
   * streaming as well, since the repaired program may need more pacing
   * (a streamed layer's loads on every WG at once) or none may bring it
   * under the limit: the faster legal program of the two */
  FitResult plain = {.runs = res->runs};
  char *d2 = NULL;
  g_autoptr(GError) e2 = NULL;
  int64_t cap2 = ir ? (cap > 0 ? MIN(cap, res->cycles) : res->cycles) : cap;
  Ir *ir2 = fit_section(plan, kind, cap2, FALSE, mc, dump_after, dump ? &d2 : NULL, verify, &plain, &again,
                        kept ? &k2 : NULL, &e2);
  int runs = plain.runs;
  if (!take_faster(&ir, &d1, &k1, res, ir2, d2, &k2, &plain, cap)) {
    if (!ir && !plain.slower) g_propagate_error(err, g_steal_pointer(&e2)); /* the fallback's refusal */
    else if (!ir) g_propagate_error(err, g_steal_pointer(&e));
  }
  res->runs = runs;
  if (dump) *dump = d1;
  else g_free(d1);
  if (kept) *kept = k1;
  return ir;
}

/* A tiled fallback with its loads shared (grid_repair's rf_grid.multicast)
 * is chosen by an estimate from its run as written, and the lockstep of
 * its sets can leave peaks that the fitting only cures with fewer SMs (the
 * largest P1: estimated 1,770,499 cycles, fitted 8,118,000 on 3 SMs,
 * against 5,908,778 without multicast).  So when the fallback chose it,
 * the section is fitted again without it, and the faster legal program of
 * the two is kept. */
static Ir *fit_impl(const Plan *plan, ProblemKind kind, int64_t cap, const char *dump_after, char **dump,
                    gboolean verify, FitResult *res, FitKept *kept, GError **err) {
  FitResult dummy;
  if (!res) res = &dummy;
  char *d1 = NULL;
  FitKept k1 = {0};
  Ir *ir = fit_try(plan, kind, cap, TRUE, dump_after, dump ? &d1 : NULL, verify, res, kept ? &k1 : NULL, err);
  const PlanProblem *written = plan_problem(plan, kind);
  if (!ir || !res->measured || !ir->sched.rf_grid_mc || written->rf_grid_mc) {
    if (dump) *dump = d1;
    if (kept) *kept = k1;
    return ir;
  }
  FitResult plain = {0};
  char *d2 = NULL;
  FitKept k2 = {0};
  g_autoptr(GError) e2 = NULL;
  Ir *ir2 = fit_try(plan, kind, cap > 0 ? MIN(cap, res->cycles) : res->cycles, FALSE, dump_after, dump ? &d2 : NULL,
                    verify, &plain, kept ? &k2 : NULL, &e2);
  int runs = res->runs + plain.runs;
  take_faster(&ir, &d1, &k1, res, ir2, d2, &k2, &plain, cap);
  res->runs = runs;
  if (dump) *dump = d1;
  else g_free(d1);
  if (kept) *kept = k1;
  return ir;
}

/* The fitting's warnings (the fallbacks that made the plan compile) into
 * the IR, before the passes' own (ir_warning). */
static void take_warnings(Ir *ir, GPtrArray **warnings) {
  if (!*warnings) return;
  for (guint i = 0; ir->warnings && i < ir->warnings->len; i++)
    g_ptr_array_add(*warnings, g_strdup(g_ptr_array_index(ir->warnings, i)));
  if (ir->warnings) g_ptr_array_unref(ir->warnings);
  ir->warnings = g_steal_pointer(warnings);
}

static Ir *fit_section(const Plan *plan, ProblemKind kind, int64_t cap, gboolean repairs, gboolean mc,
                       const char *dump_after, char **dump, gboolean verify, FitResult *res, gboolean *repaired_it,
                       FitKept *kept, GError **err) {
  *res = (FitResult){.cap = cap, .runs = res->runs}; /* the runs of an earlier try count */
  PlanProblem section = *plan_problem(plan, kind);
  const PlanProblem *plan_pp = &section;
  if (!section.present) {
    res->runs = 1;
    return pass_pipeline(plan, kind, dump_after, dump, verify, err);
  }
  g_autoptr(GPtrArray) warnings = NULL;
  Point first, best = {.relax = -1};
  res->measured = section.power_fit != FIT_OFF;
  if (!first_fit(plan, &section, res->measured, repairs, mc, dump_after, verify, &first, &warnings, &res->runs,
                 repaired_it, err)) {
    /* a dump taken before a failing pass is the caller's to write */
    if (dump && !first.ir) *dump = g_steal_pointer(&first.dump);
    point_free(&first);
    return NULL;
  }
  if (!res->measured) {
    take_warnings(first.ir, &warnings);
    if (dump) *dump = first.dump;
    else g_free(first.dump);
    return first.ir;
  }
  res->first_w = first.peak_w;
  res->first_cycles = first.cycles;
  double hottest = first.peak_w, static_w = first.static_w;
  int64_t paced = 0;
  /* at power.fit when the plan writes it, else at the section */
  SchedLoc at = plan_knob_loc(plan_pp, "power.fit");
  if (at.line == 0) at = plan_pp->where;
  g_autofree char *file = text_escape(plan->file ? plan->file : "(plan)"); /* one line */
  if (cap > 0 && !legal(&first) && first.cycles >= cap) { /* fitting slows it: past the cap already */
    point_free(&first);
    res->slower = TRUE;
    g_set_error(err, IR_ERROR, 1,
                "power.fit: %.2f W as written, in %" G_GINT64_FORMAT " cycles, already %" G_GINT64_FORMAT
                " or more: not fitted (pacing and fewer SMs slow a program)", res->first_w, res->first_cycles, cap);
    return NULL;
  }
  consider(&best, &first);
  if (!best.ir && static_w > FIT_LIMIT_W - FIT_MARGIN_W) { /* no pacing lowers it */
    g_set_error(err, IR_ERROR, 1,
                "%s:%d:%d: error: power.fit: the machine's static power is %.2f W, over the %.0f W limit "
                "less %.3f W, before any instruction runs; use fewer or smaller units (docs/machine.md)",
                file, MAX(at.line, 1), MAX(at.col, 1), static_w, FIT_LIMIT_W, FIT_MARGIN_W);
    return NULL;
  }
  if (!best.ir) { /* every rung: the fastest program under the limit wins */
    int fewer = rung_sms(plan, plan_pp, dump_after, verify, &best, res);
    if (fewer > 0 && fewer + 1 < plan_pp->sms_used) { /* one SM more, self-paced: between the two */
      PlanProblem more = *plan_pp;
      plan_knob_fit(&more, "sms_used", fewer + 1);
      double h;
      int64_t p;
      rung(plan, &more, PACE_SELF, dump_after, verify, &best, res, &h, &p);
      rung(plan, &more, PACE_STAGE, dump_after, verify, &best, res, &h, &p); /* and by stage */
    }
    rung(plan, plan_pp, PACE_SELF, dump_after, verify, &best, res, &hottest, &paced);
    rung(plan, plan_pp, PACE_PACER, dump_after, verify, &best, res, &hottest, &paced);
    double h;
    int64_t p;
    rung(plan, plan_pp, PACE_STAGE, dump_after, verify, &best, res, &h, &p);
    rung_shaped(plan, plan_pp, dump_after, verify, &best, res);
    rung_hot(plan, plan_pp, dump_after, verify, &best, res);
  }
  if (section.power_fit == FIT_RELAX && best.ir && best.added == 0 && best.peak_w <= FIT_LIMIT_W - FIT_RELAX_HEADROOM_W)
    rung_relax(plan, plan_pp, dump_after, verify, &best, res);
  if (!best.ir) {
    g_set_error(err, IR_ERROR, 1,
                "%s:%d:%d: error: power.fit: the %s program's hottest window is %.2f W, over the %.0f W limit, "
                "and still %.2f W with loads paced %d bytes per %" G_GINT64_FORMAT " cycles, and on every "
                "smaller sms_used; lower the hardware's bandwidth, or set power.fit: off to see the program",
                file, MAX(at.line, 1), MAX(at.col, 1), wl_problem_name(kind), res->first_w, FIT_LIMIT_W, hottest,
                plan_pp->bucket_bytes > 0 ? plan_pp->bucket_bytes : FIT_BUCKET_BYTES, paced);
    return NULL;
  }
  res->peak_w = best.peak_w;
  res->cycles = best.cycles;
  /* PACE_HOT's level is its step, PACE_STAGE's the cycles per 64 KiB,
   * PACE_SHAPED's its round */
  res->added = best.family == PACE_HOT || best.family == PACE_STAGE || best.family == PACE_SHAPED ? 0 : best.added;
  res->spaced = best.family == PACE_HOT || best.family == PACE_HOT_SELF;
  res->changed = best.added > 0 || best.relax >= 0;
  res->relaxed = best.relax >= 0;
  /* relax lowers only pacing knobs, which a plan setting it gives up */
  res->overrode = best.added > 0 && ((best.ir->sms_used != plan_pp->sms_used && plan_knob_loc(plan_pp, "sms_used").line > 0) ||
                                     (best.family == PACE_HOT_SELF && (spacing_written(plan_pp, &best.ir->sched) || overrides(plan_pp))) ||
                                     (best.family == PACE_HOT ? spacing_written(plan_pp, &best.ir->sched)
                                      : best.family == PACE_STAGE || best.family == PACE_SHAPED ? rates_written(plan_pp)
                                      : best.family != FEWER_SMS && overrides(plan_pp)));
  Ir *ir = best.ir;
  take_warnings(ir, &warnings);
  if (best.relax >= 0) {
    ir->fit_note = g_strdup_printf("power.fit: relax: %d runs; %.2f W as written, under %.0f W by %.0f W or more: "
                                   "spacings and staggers x %d/4 (%.2f W); %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
                                   " cycles",
                                   res->runs, res->first_w, FIT_LIMIT_W, FIT_RELAX_HEADROOM_W, best.relax,
                                   res->peak_w, res->first_cycles, res->cycles);
  } else if (res->changed) {
    const Schedule *sc = &ir->sched;
    g_autoptr(GString) what = g_string_new(NULL);
    if (ir->sms_used != plan_pp->sms_used) g_string_append_printf(what, "sms_used %d -> %d", plan_pp->sms_used, ir->sms_used);
    if (best.family == PACE_HOT || best.family == PACE_HOT_SELF) {
      for (int k = 0; k < PROJ__COUNT; k++) {
        const char *nm = sched_proj_name[k];
        if (sc->issue_spacing[k] != plan_pp->issue_spacing[k])
          g_string_append_printf(what, "%sissue_spacing.%s %d", what->len ? ", " : "", nm, sc->issue_spacing[k]);
        if (sc->weight_spacing[k] != plan_pp->weight_spacing[k])
          g_string_append_printf(what, "%sweight_spacing.%s %d", what->len ? ", " : "", nm, sc->weight_spacing[k]);
        if (sc->ln_fold_stagger[k] != plan_pp->ln_fold_stagger[k])
          g_string_append_printf(what, "%sln_fold_stagger.%s %d", what->len ? ", " : "", nm, sc->ln_fold_stagger[k]);
      }
      for (int k = 0; k < PROJ__COUNT; k++)
        if (sc->ln_fold_slots[k] != plan_pp->ln_fold_slots[k])
          g_string_append_printf(what, "%sln_fold_slots.%s %d", what->len ? ", " : "", sched_proj_name[k],
                                 sc->ln_fold_slots[k]);
      for (int st = 0; st < SPACE__COUNT; st++)
        if (sc->stage_spacing[st] != plan_pp->stage_spacing[st])
          g_string_append_printf(what, "%sstore_spacing.%s %d", what->len ? ", " : "", sched_space_name[st],
                                 sc->stage_spacing[st]);
      if (sc->attn_stagger != plan_pp->attn_stagger)
        g_string_append_printf(what, "%sattention.stagger %d", what->len ? ", " : "", sc->attn_stagger);
      if (sc->ln_fold_first_gap != plan_pp->ln_fold_first_gap)
        g_string_append_printf(what, "%sln_fold_first_gap %d", what->len ? ", " : "", sc->ln_fold_first_gap);
      if (sc->ln_first_stagger != plan_pp->ln_first_stagger)
        g_string_append_printf(what, "%sln_first_stagger %d", what->len ? ", " : "", sc->ln_first_stagger);
      if (sc->ln_stagger != plan_pp->ln_stagger)
        g_string_append_printf(what, "%sln_stagger %d", what->len ? ", " : "", sc->ln_stagger);
    }
    if (best.family == PACE_HOT || best.family == PACE_HOT_SELF) {
      if (best.family == PACE_HOT_SELF)
        g_string_append_printf(what, "%spower.bucket_bytes %d, power.event_interval %d", what->len ? ", " : "",
                               sc->bucket_bytes, sc->event_interval);
    } else if (best.family == PACE_STAGE || best.family == PACE_SHAPED) {
      g_string_append_printf(what, "%spower.stage_rate %d", what->len ? ", " : "", sc->stage_rate);
      for (int k = 0; k < SPACE__COUNT; k++)
        if (sc->stage_rates[k] > 0)
          g_string_append_printf(what, ", power.stage_rate.%s %d", sched_space_name[k], sc->stage_rates[k]);
    } else if (best.family != FEWER_SMS) {
      g_string_append_printf(what, "%spower.bucket_bytes %d, power.event_interval %d", what->len ? ", " : "",
                             sc->bucket_bytes, sc->event_interval);
    }
    if ((best.family == PACE_SELF || best.family == PACE_PACER) && sc->pacing_wg >= 0) g_string_append_printf(what, ", power.pacing_wg %d", sc->pacing_wg);
    ir->fit_note = g_strdup_printf("power.fit: %d runs; hottest window %.2f W -> %.2f W (limit %.0f W less %.3f W), "
                                   "loads %s: %s; %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT " cycles",
                                   res->runs, res->first_w, res->peak_w, FIT_LIMIT_W, FIT_MARGIN_W,
                                   family_name[best.family], what->str, res->first_cycles, res->cycles);
  }
  if (!ir->fit_note) /* measured, unchanged: how far under the limit, for --explain */
    ir->fit_account = g_strdup_printf(
        "power.fit: %d run%s; hottest window %.2f W as written, under the %.0f W limit less %.3f W: the program as "
        "written%s",
        res->runs, res->runs == 1 ? "" : "s", res->first_w, FIT_LIMIT_W, FIT_MARGIN_W,
        section.power_fit != FIT_RELAX                         ? ""
        : res->first_w > FIT_LIMIT_W - FIT_RELAX_HEADROOM_W ? " (relax: too near the limit, the spacings kept)"
                                                              : " (relax: no lower spacing was faster under the limit)");
  if (dump) *dump = best.dump;
  else g_free(best.dump);
  if (kept && best.timing && !ir->fit_note) { /* the text it ran is be_emit(ir)'s */
    kept->prog = g_steal_pointer(&best.prog);
    kept->timing = g_steal_pointer(&best.timing);
  }
  sim_timing_free(best.timing);
  if (best.prog) sim_program_free(best.prog);
  return ir;
}
