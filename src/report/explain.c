/* explain.c - the capacity report (explain.h), the seeds' capacity arithmetic
 * (seed-facts.md, "Capacity arithmetic"):
 *
 *   weights      per layer and projection, K x N FP32
 *   RF           SMs used x WGs x rf_kib, minus rf_temp_kib per WG, minus the
 *                D1 history K/V (layers x 2 x heads x history x 32 floats):
 *                what is left for resident weights, and by how much the
 *                weights of all layers fit or fall short
 *   panels       each projection's panel (K x panel width): bytes, whole
 *                partitions, whether it fits a WG beside its temp space, and
 *                its placement load K / k_divisor + partition_weight x parts
 *                (the ILP objective's terms)
 *   allocation   when the plan compiled: per WG its tasks, the peak bytes of
 *                RF tensors live at once and the partitions rf_alloc used
 *
 * One computation (Cap), printed as text or as JSON (json-glib, through the
 * JSON module: jdoc.h). */
#include "explain.h"
#include "jdoc.h"

#include <string.h>

typedef struct ProjCap {
  int K, N, panel, npanels, parts, load;
  int64_t layer_bytes, panel_bytes;
  gboolean fits;                 /* the panel fits a WG beside its temp space */
} ProjCap;

typedef struct WgCap {
  int wg, tasks, parts;
  int64_t peak;
  GPtrArray *keeps;              /* with resident weights: the panels it keeps */
} WgCap;

typedef struct Cap {
  const char *problem;
  int sms, wgs_per_sm, wgs, rf_kib, part_bytes, nparts, layers, heads, history;
  int k_divisor, partition_weight;
  int64_t rf, temp, history_bytes, left, layer_weights, weights, wg_room;
  ProjCap proj[PROJ__COUNT];
  GArray *wg;                    /* WgCap of every WG with tasks (NULL: no IR) */
} Cap;

/* A change of the live bytes of one WG at one point of its program. */
typedef struct Live {
  int wg;
  int64_t at;    /* 2 * op (+1 for a tensor that becomes live): ends first */
  int64_t bytes; /* + when a tensor becomes live, - when it dies */
} Live;

static gint by_wg_at(gconstpointer a, gconstpointer b) {
  const Live *x = a, *y = b;
  if (x->wg != y->wg) return x->wg < y->wg ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* Per WG with tasks: its tasks, the peak bytes of RF tensors live at once,
 * the partitions its tensors were given (an allocated IR), and the weight
 * panels and history K/V blocks its preload task keeps ("l0.w2.p3",
 * "l0.kv.h1.s2"). */
static GArray *wg_caps(const Ir *ir) {
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int *tasks = g_new0(int, nwg);
  g_autofree guint64 *parts = g_new0(guint64, nwg);
  g_autofree GPtrArray **keeps = g_new0(GPtrArray *, nwg);
  g_autoptr(GArray) ev = g_array_new(FALSE, FALSE, sizeof(Live));
  for (guint k = 0; k < ir->tasks->len; k++) {
    int w = ir_task_at(ir, (int)k)->wg;
    if (w >= 0 && w < nwg) tasks[w]++;
  }
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF || x->part < 0 || x->first_op < 0 || x->task < 0) continue;
    int w = ir_task_at(ir, x->task)->wg;
    if (w < 0 || w >= nwg) continue;
    int64_t bytes = 4 * (int64_t)x->rows * x->cols;
    Live a = {w, 2 * (int64_t)x->first_op + 1, bytes}, b = {w, 2 * ((int64_t)x->last_op + 1), -bytes};
    g_array_append_val(ev, a);
    g_array_append_val(ev, b);
    for (int p = x->part; p < x->part + MAX(x->nparts, 1) && p < 64; p++) parts[w] |= (guint64)1 << p;
    if (ir_task_at(ir, x->task)->role.kind == ROLE_PRELOAD &&
        (g_str_has_suffix(x->name, ".w") || g_str_has_suffix(x->name, ".k"))) {
      if (!keeps[w]) keeps[w] = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(keeps[w], g_strndup(x->name, strlen(x->name) - 2));
    }
  }
  g_array_sort(ev, by_wg_at);
  GArray *out = g_array_new(FALSE, TRUE, sizeof(WgCap));
  guint e = 0;
  for (int w = 0; w < nwg; w++) {
    if (!tasks[w]) continue;
    WgCap c = {.wg = w, .tasks = tasks[w], .parts = __builtin_popcountll(parts[w]), .keeps = keeps[w]};
    int64_t live = 0;
    for (; e < ev->len && g_array_index(ev, Live, e).wg <= w; e++) {
      const Live *l = &g_array_index(ev, Live, e);
      if (l->wg != w) continue;
      live += l->bytes;
      c.peak = MAX(c.peak, live);
    }
    g_array_append_val(out, c);
  }
  return out;
}

static void wg_caps_free(GArray *a) {
  for (guint i = 0; i < a->len; i++)
    if (g_array_index(a, WgCap, i).keeps) g_ptr_array_free(g_array_index(a, WgCap, i).keeps, TRUE);
  g_array_free(a, TRUE);
}

static void cap_compute(Cap *c, const Machine *hw, const Schedule *s, const Ir *ir) {
  const Problem *d = &s->dims;
  c->problem = wl_problem_name(d->kind);
  c->sms = s->sms_used > 0 ? s->sms_used : hw->sms;
  c->wgs_per_sm = hw->wgs_per_sm;
  c->wgs = c->sms * c->wgs_per_sm;
  c->rf_kib = hw->rf_kib;
  c->part_bytes = sim_machine_part_bytes(hw);
  c->nparts = hw->vl;
  c->layers = d->layers;
  c->heads = d->heads;
  c->history = d->kind == PROB_D1 ? d->history : 0;
  c->rf = (int64_t)c->wgs * c->rf_kib * 1024;
  c->temp = (int64_t)c->wgs * s->rf_temp_kib * 1024;
  c->history_bytes = (int64_t)c->layers * 2 * c->heads * c->history * WL_HEAD_DIM * 4;
  c->left = c->rf - c->temp - c->history_bytes;
  c->wg_room = ((int64_t)c->rf_kib - s->rf_temp_kib) * 1024;
  /* the ILP objective's weights: the plan's when it uses the ILP, else the
   * seeds' (4, 20), so the loads read the same in every report */
  gboolean ilp = s->solver == SOLVER_ILP;
  c->k_divisor = ilp ? s->obj_k_divisor : 4;
  c->partition_weight = ilp ? s->obj_partition_weight : 20;
  for (int k = 0; k < PROJ__COUNT; k++) {
    ProjCap *p = &c->proj[k];
    p->K = sched_proj_k(d, (SchedProj)k);
    p->N = sched_proj_n(d, (SchedProj)k);
    p->panel = s->panel[k];
    p->npanels = p->N / p->panel;
    p->layer_bytes = 4 * (int64_t)p->K * p->N;
    p->panel_bytes = 4 * (int64_t)p->K * p->panel;
    p->parts = (int)((p->panel_bytes + c->part_bytes - 1) / c->part_bytes);
    p->fits = p->panel_bytes <= c->wg_room;
    p->load = p->K / c->k_divisor + c->partition_weight * p->parts;
    c->layer_weights += p->layer_bytes;
  }
  c->weights = c->layer_weights * c->layers;
  c->wg = ir ? wg_caps(ir) : NULL;
}

void explain_rf(const Machine *hw, const Schedule *s, ExplainRf *out) {
  Cap c = {0};
  cap_compute(&c, hw, s, NULL);
  *out = (ExplainRf){.rf = c.rf, .temp = c.temp, .history = c.history_bytes, .left = c.left,
                     .weights = c.weights, .short_bytes = MAX(c.weights - c.left, 0),
                     .fits = c.left >= c.weights};
}

/* "0.75 MiB", "48 KiB", "100 B": the largest unit that keeps it readable. */
static char *size(int64_t b) {
  int64_t a = b < 0 ? -b : b;
  if (a >= 1 << 20) return g_strdup_printf("%.4g MiB", (double)b / (1 << 20));
  if (a >= 1 << 10) return g_strdup_printf("%.4g KiB", (double)b / (1 << 10));
  return g_strdup_printf("%" G_GINT64_FORMAT " B", b);
}

/* "0.75 MiB": the budget lines speak MiB, as the seeds' arithmetic does. */
static char *mib(int64_t b) { return g_strdup_printf("%.4g MiB", (double)b / (1 << 20)); }

static const char *ilp_status(const IrIlp *a) {
  return a->status == IR_ILP_OPTIMAL    ? "optimal"
         : a->status == IR_ILP_FEASIBLE ? "feasible at the time limit"
                                        : "no placement within the time limit: the constructive one is used";
}

static double ilp_gap(const IrIlp *a) {
  return a->objective > 0 ? 100.0 * (double)(a->objective - a->bound) / (double)a->objective : 0;
}

/* placement.solver: ilp: what GLPK proved (ir->ilp; resident_ilp.c) and the
 * busiest SM's load per stage, beside the constructive placement's. */
static void placement_text(GString *o, const Ir *ir, const Schedule *s) {
  g_string_append(o, "\nplacement (ilp, GLPK; the solver proposes, the simulator decides: run tcc-sim):\n");
  if (!ir || !ir->ilp) {
    g_string_append(o, "  none: the plan did not compile (below)\n");
    return;
  }
  const IrIlp *a = ir->ilp;
  g_string_append_printf(o, "  status %s", ilp_status(a));
  if (a->status == IR_ILP_FEASIBLE)
    g_string_append_printf(o, " (time_limit_s %d: the incumbent depends on the machine's speed)",
                           s->solver_time_limit_s);
  if (a->status == IR_ILP_FALLBACK)
    g_string_append_printf(o, " (time_limit_s %d; see the warning)", s->solver_time_limit_s);
  g_string_append_printf(o, "; objective %" G_GINT64_FORMAT ", best bound %" G_GINT64_FORMAT
                            ", gap %.2f%%\n",
                         a->objective, a->bound, ilp_gap(a));
  g_string_append_printf(o, "  model: %d units in %u stages on %d WGs, %d columns, %d rows; "
                            "active_weight %d\n",
                         a->units, a->stages->len, a->wgs, a->columns, a->rows, s->obj_active_weight);
  if (a->constructive >= 0 && a->constructive_red_shared)
    g_string_append_printf(o, "  the constructive placement scores %" G_GINT64_FORMAT " by the same formula, but "
                              "puts a panel's RED K shards on one WG (a deadlock): not a candidate\n",
                           a->constructive);
  else if (a->constructive >= 0)
    g_string_append_printf(o, "  the constructive placement scores %" G_GINT64_FORMAT " by the same formula%s\n",
                           a->constructive,
                           a->status == IR_ILP_FALLBACK         ? ": the placement used"
                           : a->constructive == a->objective ? ": as good, so it is kept (ties go to it)"
                                                             : "");
  else
    g_string_append(o, "  the constructive placement does not fit\n");
  g_string_append(o, "  stage    busiest SM load (ilp / constructive)\n");
  for (guint i = 0; i < a->stages->len; i++) {
    const IrIlpStage *e = &g_array_index(a->stages, IrIlpStage, i);
    g_string_append_printf(o, "  %-8s %6" G_GINT64_FORMAT, e->name, e->max_load);
    if (e->constructive_max_load >= 0)
      g_string_append_printf(o, " / %" G_GINT64_FORMAT, e->constructive_max_load);
    g_string_append_c(o, '\n');
  }
}

/* multicast.pass: what the multicast pass merged (ir->mc; multicast.c),
 * per stage: groups (one LD.mc each), the candidate loads they replace and
 * the HBM lines those would have read beyond one read per group. */
static void multicast_text(GString *o, const Ir *ir) {
  g_string_append(o, "\nmulticast (pass; tcc-sim --json hbm_lines counts what is read):\n");
  if (!ir || !ir->mc) {
    g_string_append(o, ir ? "  no candidate loads\n" : "  none: the plan did not compile (below)\n");
    return;
  }
  const IrMulticast *a = ir->mc;
  g_string_append(o, "  stage      groups   loads  HBM lines saved\n");
  for (guint i = 0; i < a->stages->len; i++) {
    const IrMcStage *e = &g_array_index(a->stages, IrMcStage, i);
    g_string_append_printf(o, "  %-8s %8d %7d %16" G_GINT64_FORMAT "\n", e->name, e->groups, e->loads, e->lines_saved);
  }
  g_string_append_printf(o, "  %-8s %8d %7d %16" G_GINT64_FORMAT "\n", "total", a->groups, a->loads, a->lines_saved);
  g_string_append_printf(o, "  %d candidate load%s left as %s own\n", a->unmerged, a->unmerged == 1 ? "" : "s",
                         a->unmerged == 1 ? "its" : "their");
}

char *explain_text(const Machine *hw, const Schedule *s, const char *file, const Ir *ir,
                   const char *failure) {
  Cap c = {0};
  cap_compute(&c, hw, s, ir);
  GString *o = g_string_new(NULL);
  g_autofree char *pb = size(c.part_bytes), *room = size(c.wg_room);
  g_string_append_printf(o, "capacity report: %s of %s\n", c.problem, file ? file : "-");
  g_string_append_printf(o, "machine: %d SMs used x %d WGs x %d KiB RF (%d partitions of %s)\n\n",
                         c.sms, c.wgs_per_sm, c.rf_kib, c.nparts, pb);
  g_string_append(o, "weights (FP32, K x N):\n");
  for (int k = 0; k < PROJ__COUNT; k++) {
    g_autofree char *b = size(c.proj[k].layer_bytes);
    g_string_append_printf(o, "  %-4s %5d x %-5d %s per layer\n", sched_proj_name[k], c.proj[k].K,
                           c.proj[k].N, b);
  }
  g_autofree char *lw = mib(c.layer_weights), *aw = mib(c.weights);
  g_string_append_printf(o, "  per layer %s; %d layer%s %s\n\n", lw, c.layers, c.layers == 1 ? "" : "s", aw);
  g_autofree char *rf = mib(c.rf), *temp = mib(c.temp), *wt = size((int64_t)s->rf_temp_kib * 1024);
  g_autofree char *hist = mib(c.history_bytes), *left = mib(c.left);
  g_string_append(o, "RF:\n");
  g_string_append_printf(o, "  %d WGs x %d KiB = %s\n", c.wgs, c.rf_kib, rf);
  g_string_append_printf(o, "  temp %s per WG (%s.rf_temp_kib) = %s\n", wt, c.problem, temp);
  if (c.history)
    g_string_append_printf(o, "  history K/V (%d layers x 2 x %d heads x %d positions) = %s\n", c.layers,
                           c.heads, c.history, hist);
  else
    g_string_append(o, "  history K/V: none\n");
  if (c.left >= c.weights) {
    g_autofree char *spare = mib(c.left - c.weights);
    g_string_append_printf(o, "  left for weights %s: %s of weights fit in total, %s spare "
                              "(each WG still needs an allocation)\n",
                           left, aw, spare);
  } else {
    g_autofree char *shortb = mib(c.weights - c.left); /* as the JSON's short_bytes */
    g_string_append_printf(o, "  left for weights %s: %s short of %s\n", left, shortb, aw);
  }
  g_string_append_printf(o, "\npanels (a WG has %s after temp; load = K/%d + %d x partitions):\n",
                         room, c.k_divisor, c.partition_weight);
  for (int k = 0; k < PROJ__COUNT; k++) {
    const ProjCap *p = &c.proj[k];
    g_autofree char *b = size(p->panel_bytes);
    g_string_append_printf(o, "  %-4s %3d columns: %d x %d = %s = %d partition%s, %d panels per layer, ",
                           sched_proj_name[k], p->panel, p->K, p->panel, b, p->parts,
                           p->parts == 1 ? "" : "s", p->npanels);
    if (p->fits)
      g_string_append_printf(o, "load %d/%d + %d x %d = %d\n", p->K, c.k_divisor, c.partition_weight,
                             p->parts, p->load);
    else
      g_string_append_printf(o, "fits in no WG (%s after temp)\n", room);
  }
  if (s->solver == SOLVER_ILP) placement_text(o, ir, s);
  if (s->multicast_pass) multicast_text(o, ir);
  if (ir && ir->warnings && ir->warnings->len) {
    g_string_append(o, "\nfallbacks (the plan's values the machine or the shape could not take):\n");
    for (guint i = 0; i < ir->warnings->len; i++)
      g_string_append_printf(o, "  %s\n", (const char *)g_ptr_array_index(ir->warnings, i));
  }
  if (ir && (ir->fit_note || ir->fit_account)) /* what the power fitting measured */
    g_string_append_printf(o, "\n%s\n", ir->fit_note ? ir->fit_note : ir->fit_account);
  g_string_append(o, "\nallocation (rf_alloc, the plan's strategy):\n");
  if (!c.wg) {
    g_string_append_printf(o, "  none: %s\n", failure ? failure : "the plan did not compile");
  } else {
    for (guint i = 0; i < c.wg->len; i++) {
      const WgCap *w = &g_array_index(c.wg, WgCap, i);
      g_autofree char *pk = size(w->peak);
      g_string_append_printf(o, "  wg%-3d (sm%d) %3d task%s, peak %s live, %d of %d partitions", w->wg,
                             w->wg / c.wgs_per_sm, w->tasks, w->tasks == 1 ? " " : "s", pk, w->parts,
                             c.nparts);
      for (guint k = 0; w->keeps && k < w->keeps->len; k++)
        g_string_append_printf(o, "%s%s", k ? ", " : "; keeps ", (const char *)g_ptr_array_index(w->keeps, k));
      g_string_append_c(o, '\n');
    }
    wg_caps_free(c.wg);
  }
  return g_string_free(o, FALSE);
}

char *explain_json(const Machine *hw, const Schedule *s, const char *file, const Ir *ir,
                   const char *failure, GError **err) {
  Cap c = {0};
  cap_compute(&c, hw, s, ir);
  g_autoptr(JDoc) j = jdoc_new();
  jdoc_begin_object(j);
  jdoc_member(j, "problem");
  jdoc_string(j, c.problem);
  jdoc_member(j, "plan");
  jdoc_string(j, file ? file : "-");
#define INT(name, v)                                                                           \
  do {                                                                                         \
    jdoc_member(j, name);                                                     \
    jdoc_int(j, v);                                                          \
  } while (0)
  INT("sms_used", c.sms);
  INT("wgs_per_sm", c.wgs_per_sm);
  INT("rf_kib", c.rf_kib);
  INT("partition_bytes", c.part_bytes);
  INT("partitions", c.nparts);
  INT("layers", c.layers);
  INT("weights_per_layer_bytes", c.layer_weights);
  INT("weights_bytes", c.weights);
  INT("rf_bytes", c.rf);
  INT("temp_bytes_per_wg", (int64_t)s->rf_temp_kib * 1024);
  INT("temp_bytes", c.temp);
  INT("history_bytes", c.history_bytes);
  INT("left_for_weights_bytes", c.left);
  INT("short_bytes", MAX(c.weights - c.left, 0));
  INT("wg_room_bytes", c.wg_room);
  INT("k_divisor", c.k_divisor);
  INT("partition_weight", c.partition_weight);
  jdoc_member(j, "projections");
  jdoc_begin_array(j);
  for (int k = 0; k < PROJ__COUNT; k++) {
    const ProjCap *p = &c.proj[k];
    jdoc_begin_object(j);
    jdoc_member(j, "name");
    jdoc_string(j, sched_proj_name[k]);
    INT("K", p->K);
    INT("N", p->N);
    INT("layer_bytes", p->layer_bytes);
    INT("panel_columns", p->panel);
    INT("panels_per_layer", p->npanels);
    INT("panel_bytes", p->panel_bytes);
    INT("panel_partitions", p->parts);
    jdoc_member(j, "fits_a_wg");
    jdoc_bool(j, p->fits);
    INT("load", p->load);
    jdoc_end_object(j);
  }
  jdoc_end_array(j);
  if (s->solver == SOLVER_ILP) {
    jdoc_member(j, "placement");
    const IrIlp *a = ir ? ir->ilp : NULL;
    if (!a) {
      jdoc_null(j);
    } else {
      jdoc_begin_object(j);
      jdoc_member(j, "solver");
      jdoc_string(j, "ilp");
      jdoc_member(j, "status");
      jdoc_string(j, a->status == IR_ILP_OPTIMAL    ? "optimal"
                     : a->status == IR_ILP_FEASIBLE ? "feasible_time_limit"
                                                    : "constructive_time_limit");
      INT("objective", a->objective);
      INT("bound", a->bound);
      jdoc_member(j, "gap_percent");
      jdoc_double(j, ilp_gap(a));
      INT("constructive_objective", a->constructive);
      jdoc_member(j, "constructive_red_shared");
      jdoc_bool(j, a->constructive_red_shared);
      INT("units", a->units);
      INT("wgs", a->wgs);
      INT("columns", a->columns);
      INT("rows", a->rows);
      jdoc_member(j, "stages");
      jdoc_begin_array(j);
      for (guint i = 0; i < a->stages->len; i++) {
        const IrIlpStage *e = &g_array_index(a->stages, IrIlpStage, i);
        jdoc_begin_object(j);
        jdoc_member(j, "name");
        jdoc_string(j, e->name);
        INT("max_load", e->max_load);
        INT("constructive_max_load", e->constructive_max_load);
        jdoc_end_object(j);
      }
      jdoc_end_array(j);
      jdoc_end_object(j);
    }
  }
  if (s->multicast_pass) {
    jdoc_member(j, "multicast");
    const IrMulticast *a = ir ? ir->mc : NULL;
    if (!ir) {
      jdoc_null(j);
    } else {
      jdoc_begin_object(j);
      INT("groups", a ? a->groups : 0);
      INT("loads_merged", a ? a->loads : 0);
      INT("hbm_lines_saved", a ? a->lines_saved : 0);
      INT("unmerged", a ? a->unmerged : 0);
      jdoc_member(j, "stages");
      jdoc_begin_array(j);
      for (guint i = 0; a && i < a->stages->len; i++) {
        const IrMcStage *e = &g_array_index(a->stages, IrMcStage, i);
        jdoc_begin_object(j);
        jdoc_member(j, "name");
        jdoc_string(j, e->name);
        INT("groups", e->groups);
        INT("loads_merged", e->loads);
        INT("hbm_lines_saved", e->lines_saved);
        jdoc_end_object(j);
      }
      jdoc_end_array(j);
      jdoc_end_object(j);
    }
  }
  if (ir && ir->warnings && ir->warnings->len) {
    jdoc_member(j, "fallbacks");
    jdoc_begin_array(j);
    for (guint i = 0; i < ir->warnings->len; i++) jdoc_string(j, g_ptr_array_index(ir->warnings, i));
    jdoc_end_array(j);
  }
  if (ir && (ir->fit_note || ir->fit_account)) {
    jdoc_member(j, "power_fit");
    jdoc_string(j, ir->fit_note ? ir->fit_note : ir->fit_account);
  }
  jdoc_member(j, "allocation");
  if (!c.wg) {
    jdoc_null(j);
    jdoc_member(j, "failure");
    if (failure)
      jdoc_string(j, failure);
    else
      jdoc_null(j);
  } else {
    jdoc_begin_array(j);
    for (guint i = 0; i < c.wg->len; i++) {
      const WgCap *w = &g_array_index(c.wg, WgCap, i);
      jdoc_begin_object(j);
      INT("wg", w->wg);
      INT("sm", w->wg / c.wgs_per_sm);
      INT("tasks", w->tasks);
      INT("peak_live_bytes", w->peak);
      INT("partitions_used", w->parts);
      jdoc_member(j, "keeps");
      jdoc_begin_array(j);
      for (guint k = 0; w->keeps && k < w->keeps->len; k++)
        jdoc_string(j, g_ptr_array_index(w->keeps, k));
      jdoc_end_array(j);
      jdoc_end_object(j);
    }
    jdoc_end_array(j);
    wg_caps_free(c.wg);
  }
#undef INT
  jdoc_end_object(j);
  return jdoc_pretty_text(j, err);
}
