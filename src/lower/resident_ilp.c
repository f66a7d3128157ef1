/* resident_ilp.c - placement.solver: ilp: the resident weight units (a K shard
 * of a panel, resident.c) assigned to WGs by an integer program that GLPK
 * solves, the seeds' model (seed-facts.md, "Capacity arithmetic"):
 *
 *   n[s][w] integer  units of stage s (layer, projection) on WG w
 *   y[s][w] binary   stage s uses WG w (only when active_weight > 0)
 *   z[s]   >= lb[s]  the busiest SM's load in stage s
 *
 *   minimise   sum_s z[s]
 *   coverage   sum_w n[s][w] = units of s
 *   capacity   sum_s parts[s] n[s][w] <= cap  (partitions less rf_temp_kib's and one for biases)
 *   load       sum_{w of SM m} load[s] n[s][w] + active_weight y[s][w] <= z[s], every SM m
 *   active     n[s][w] <= ub[s] y[s][w]
 *   apart      n[s][w] <= panels of s, for a stage whose K shards
 *              all-reduce with RED (in the bounds of n[s][w])
 *
 * with load[s] = K_shard / k_divisor + partition_weight x parts[s].  A
 * stage's units are alike (same rows, same partitions), so counts replace
 * per-unit binaries (as the seeds' x[layer, projection, WG]): D1's default
 * (88 panels on 64 WGs) is 8 x 64 integers.  To make the solver prove
 * optimality quickly: lb[s], by pigeonhole, is the load of ceil(units /
 * SMs) units on one SM (plus the WGs they need at least), which is the LP
 * bound the root starts from; WGs of one SM are ordered by the partitions
 * they hold and SMs of equal size likewise (every placement has such a
 * permutation of equal load); and the constructive placement, when it fits,
 * is the first incumbent, so the ILP never returns a worse one.
 *
 * A stage's units then go to its WGs in (shard, panel) order, so a panel's
 * shards land on different WGs where the counts allow: always when a WG
 * holds at most as many of the stage's units as it has panels (any run of
 * that many units in that order has each panel once), which is what
 * `apart` asks of a RED stage (lw_red_split: shard 0 reads the sum at once,
 * so a second shard behind it on its WG would never contribute; tcc-sim
 * reports the deadlock).  Where the constructive placement breaks that rule
 * it is neither offered to GLPK nor kept on a tie.  GLPK runs with
 * fixed options and no terminal output: the same plan gives the same
 * placement, unless the time limit stops the search, whose incumbent then
 * depends on the machine's speed (docs/plan.md).  When it stops with none
 * (GLPK code 9, before its first incumbent: the constructive one is offered
 * only once the root's LP is solved), the constructive placement is used,
 * with a warning and the status IR_ILP_FALLBACK, where it fits and keeps
 * the RED shards apart; else the plan is refused at placement.solver.  The account (status,
 * objective, bound, per-stage loads, the constructive placement's by the
 * same formula) goes to ir->ilp for tcc-gen --explain. */
#include "resident.h"

#include <glpk.h>
#include <math.h>
#include <string.h>

int lw_ilp_test_tm_lim_ms = 0;

typedef struct Model {
  int ns, nw, nsm;           /* stages, WG slots, SMs                          */
  int *slot_wg, *slot_sm;    /* per slot: its WG, its SM (0..nsm)              */
  int *sm_first, *sm_size;   /* per SM: its first slot, its slots              */
  int *units, *parts, *load, *ub, *lb; /* per stage                            */
  gboolean *red;             /* per stage: its K shards all-reduce (apart)     */
  int cap, active;
  int *n_col, *y_col, *z_col; /* GLPK columns (y_col: 0 when no active term)  */
} Model;

/* Callback state: the incumbent to offer once, the best bound seen. */
typedef struct Search {
  const double *start;        /* column values (1-based), or NULL            */
  gboolean offered;
  double bound;
} Search;

static void model_free(Model *m) {
  g_free(m->slot_wg), g_free(m->slot_sm), g_free(m->sm_first), g_free(m->sm_size);
  g_free(m->units), g_free(m->parts), g_free(m->load), g_free(m->ub), g_free(m->lb), g_free(m->red);
  g_free(m->n_col), g_free(m->y_col), g_free(m->z_col);
}

static int stage_of(const LwUnit *u) { return u->l * PROJ__COUNT + u->j; }

/* The stages, the WG slots (SM by SM, WGs in index order) and the bounds. */
static void model_init(Model *m, const Ir *ir, const LwUnit *u, int n, const GArray *order, int cap) {
  const Schedule *s = &ir->sched;
  int W = ir->hw.wgs_per_sm, nwg = sim_machine_wgs(&ir->hw);
  m->ns = ir->prob.layers * PROJ__COUNT;
  m->cap = cap;
  m->active = s->obj_active_weight;
  g_autofree gboolean *avail = g_new0(gboolean, nwg);
  for (guint i = 0; i < order->len; i++) avail[g_array_index(order, int, i)] = TRUE;
  m->slot_wg = g_new(int, order->len);
  m->slot_sm = g_new(int, order->len);
  m->sm_first = g_new0(int, nwg / W + 1);
  m->sm_size = g_new0(int, nwg / W + 1);
  for (int w = 0; w < nwg; w++) {
    if (!avail[w]) continue;
    if (m->nw == 0 || ir_wg_sm(ir, m->slot_wg[m->nw - 1]) != ir_wg_sm(ir, w)) m->sm_first[m->nsm++] = m->nw;
    m->slot_wg[m->nw] = w, m->slot_sm[m->nw] = m->nsm - 1;
    m->sm_size[m->nsm - 1]++;
    m->nw++;
  }
  m->units = g_new0(int, m->ns), m->parts = g_new0(int, m->ns), m->load = g_new0(int, m->ns);
  m->ub = g_new0(int, m->ns), m->lb = g_new0(int, m->ns), m->red = g_new0(gboolean, m->ns);
  for (int i = 0; i < n; i++) {
    int st = stage_of(&u[i]), K = sched_proj_k(&ir->prob, (SchedProj)u[i].j) / s->k_split[u[i].j];
    m->units[st]++;
    m->parts[st] = u[i].parts;
    m->load[st] = K / s->obj_k_divisor + s->obj_partition_weight * u[i].parts;
    m->red[st] = lw_red_split(ir, (SchedProj)u[i].j);
  }
  for (int st = 0; st < m->ns; st++) {
    if (!m->units[st] || !m->nsm) continue; /* no SM: infeasible, said by the caller */
    m->ub[st] = MIN(m->units[st], cap / m->parts[st]);
    if (m->red[st]) /* apart: at most one shard of each panel per WG */
      m->ub[st] = MIN(m->ub[st], m->units[st] / ir->sched.k_split[st % PROJ__COUNT]);
    int c = (m->units[st] + m->nsm - 1) / m->nsm, need = (c + m->ub[st] - 1) / MAX(m->ub[st], 1);
    m->lb[st] = c * m->load[st] + m->active * need;
  }
}

/* Per stage, the busiest SM's load of the counts cnt[st * nw + slot];
 * returns their sum (the objective). */
static int64_t evaluate(const Model *m, const int *cnt, int64_t *stage_max) {
  int64_t total = 0;
  for (int st = 0; st < m->ns; st++) {
    int64_t best = 0;
    for (int sm = 0; sm < m->nsm; sm++) {
      int64_t l = 0;
      for (int k = m->sm_first[sm]; k < m->sm_first[sm] + m->sm_size[sm]; k++) {
        int c = cnt[st * m->nw + k];
        l += (int64_t)m->load[st] * c + (c > 0 ? m->active : 0);
      }
      best = MAX(best, l);
    }
    if (stage_max) stage_max[st] = best;
    total += best;
  }
  return total;
}

/* The counts of a placement (a WG per unit). */
static int *counts(const Model *m, const LwUnit *u, int n, const int *wg) {
  int *cnt = g_new0(int, (gsize)m->ns * m->nw);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m->nw; k++)
      if (m->slot_wg[k] == wg[i]) cnt[stage_of(&u[i]) * m->nw + k]++;
  return cnt;
}

static int slot_parts(const Model *m, const int *cnt, int k) {
  int p = 0;
  for (int st = 0; st < m->ns; st++) p += m->parts[st] * cnt[st * m->nw + k];
  return p;
}

static int sm_parts(const Model *m, const int *cnt, int sm) {
  int p = 0;
  for (int k = m->sm_first[sm]; k < m->sm_first[sm] + m->sm_size[sm]; k++) p += slot_parts(m, cnt, k);
  return p;
}

/* The SMs with the most slots (all but a pacing WG's), in order. */
static int full_sms(const Model *m, int *out) {
  int most = 0, n = 0;
  for (int sm = 0; sm < m->nsm; sm++) most = MAX(most, m->sm_size[sm]);
  for (int sm = 0; sm < m->nsm; sm++)
    if (m->sm_size[sm] == most) out[n++] = sm;
  return n;
}

/* The same placement permuted to meet the symmetry rows (WGs of an SM, and
 * SMs of full size, by partitions held, non-increasing): same objective. */
static int *canonical(const Model *m, const int *cnt) {
  gsize sz = (gsize)m->ns * m->nw;
  g_autofree int *a = g_memdup2(cnt, sizeof(int) * sz);
  for (int sm = 0; sm < m->nsm; sm++) /* insertion sort of each SM's slots */
    for (int x = m->sm_first[sm] + 1; x < m->sm_first[sm] + m->sm_size[sm]; x++)
      for (int y = x; y > m->sm_first[sm] && slot_parts(m, a, y - 1) < slot_parts(m, a, y); y--)
        for (int st = 0; st < m->ns; st++) {
          int t = a[st * m->nw + y - 1];
          a[st * m->nw + y - 1] = a[st * m->nw + y], a[st * m->nw + y] = t;
        }
  /* the full SMs (a pacing WG's SM has one slot less) by partitions, stably */
  g_autofree int *full = g_new(int, MAX(m->nsm, 1));
  int nf = full_sms(m, full);
  g_autofree int *sorted = g_memdup2(full, sizeof(int) * (gsize)MAX(nf, 1));
  for (int x = 1; x < nf; x++)
    for (int y = x; y > 0 && sm_parts(m, a, sorted[y - 1]) < sm_parts(m, a, sorted[y]); y--) {
      int t = sorted[y - 1];
      sorted[y - 1] = sorted[y], sorted[y] = t;
    }
  int *b = g_memdup2(a, sizeof(int) * sz);
  for (int x = 0; x < nf; x++)
    for (int k = 0; k < m->sm_size[full[x]]; k++)
      for (int st = 0; st < m->ns; st++)
        b[st * m->nw + m->sm_first[full[x]] + k] = a[st * m->nw + m->sm_first[sorted[x]] + k];
  return b;
}

/* ---- the GLPK problem ---- */

typedef struct Triplets {
  GArray *i, *j;  /* int, 1-based; element 0 unused (glp_load_matrix)  */
  GArray *v;      /* double                                             */
} Triplets;

static void put(Triplets *t, int row, int col, double v) {
  g_array_append_val(t->i, row);
  g_array_append_val(t->j, col);
  g_array_append_val(t->v, v);
}

static int add_row(glp_prob *P, int type, double lo, double hi) {
  int r = glp_add_rows(P, 1);
  glp_set_row_bnds(P, r, type, lo, hi);
  return r;
}

/* n[st][k] * parts[st] summed over stages into row r with sign `sign`. */
static void put_parts(Triplets *t, const Model *m, int r, int k, double sign) {
  for (int st = 0; st < m->ns; st++)
    if (m->units[st]) put(t, r, m->n_col[st * m->nw + k], sign * m->parts[st]);
}

static glp_prob *model_build(Model *m) {
  glp_prob *P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MIN);
  gsize sz = (gsize)m->ns * m->nw;
  m->n_col = g_new0(int, sz), m->y_col = g_new0(int, sz), m->z_col = g_new0(int, m->ns);
  for (int st = 0; st < m->ns; st++) {
    if (!m->units[st]) continue;
    for (int k = 0; k < m->nw; k++) {
      int c = m->n_col[st * m->nw + k] = glp_add_cols(P, 1);
      glp_set_col_kind(P, c, GLP_IV);
      glp_set_col_bnds(P, c, m->ub[st] > 0 ? GLP_DB : GLP_FX, 0, m->ub[st]);
      if (!m->active) continue;
      c = m->y_col[st * m->nw + k] = glp_add_cols(P, 1);
      glp_set_col_kind(P, c, GLP_BV);
    }
    int z = m->z_col[st] = glp_add_cols(P, 1);
    glp_set_col_bnds(P, z, GLP_LO, m->lb[st], 0);
    glp_set_obj_coef(P, z, 1);
  }
  Triplets t = {g_array_new(FALSE, FALSE, sizeof(int)), g_array_new(FALSE, FALSE, sizeof(int)),
                g_array_new(FALSE, FALSE, sizeof(double))};
  put(&t, 0, 0, 0);
  for (int st = 0; st < m->ns; st++) { /* coverage */
    if (!m->units[st]) continue;
    int r = add_row(P, GLP_FX, m->units[st], m->units[st]);
    for (int k = 0; k < m->nw; k++) put(&t, r, m->n_col[st * m->nw + k], 1);
  }
  for (int k = 0; k < m->nw; k++) put_parts(&t, m, add_row(P, GLP_UP, 0, m->cap), k, 1); /* capacity */
  for (int st = 0; st < m->ns; st++) { /* each SM's load in each stage, under z */
    if (!m->units[st]) continue;
    for (int sm = 0; sm < m->nsm; sm++) {
      int r = add_row(P, GLP_UP, 0, 0);
      for (int k = m->sm_first[sm]; k < m->sm_first[sm] + m->sm_size[sm]; k++) {
        put(&t, r, m->n_col[st * m->nw + k], m->load[st]);
        if (m->active) put(&t, r, m->y_col[st * m->nw + k], m->active);
      }
      put(&t, r, m->z_col[st], -1);
    }
    for (int k = 0; m->active && k < m->nw; k++) { /* n <= ub y */
      int r = add_row(P, GLP_UP, 0, 0);
      put(&t, r, m->n_col[st * m->nw + k], 1);
      put(&t, r, m->y_col[st * m->nw + k], -MAX(m->ub[st], 1));
    }
  }
  /* capacity, rounded (Chvatal-Gomory): for each size q of a stage's units,
   * sum floor(parts/q) n <= floor(cap/q) per WG, e.g. at cap 11 a WG keeps
   * one 8-partition unit or two 4-partition ones, not both: the LP bound
   * then sees most packing waste, and proves most infeasible plans at the
   * root instead of branching until the time limit */
  for (int q = 2; q <= m->cap; q++) {
    gboolean size = FALSE, rounds = m->cap % q != 0;
    for (int st = 0; st < m->ns; st++)
      if (m->units[st]) size |= m->parts[st] == q, rounds |= m->parts[st] % q != 0 && m->parts[st] > q;
    if (!size || !rounds) continue;
    for (int k = 0; k < m->nw; k++) {
      int r = add_row(P, GLP_UP, 0, m->cap / q);
      for (int st = 0; st < m->ns; st++)
        if (m->units[st] && m->parts[st] >= q) put(&t, r, m->n_col[st * m->nw + k], m->parts[st] / q);
    }
  }
  for (int k = 0; k + 1 < m->nw; k++) { /* symmetry: an SM's WGs by partitions */
    if (m->slot_sm[k] != m->slot_sm[k + 1]) continue;
    int r = add_row(P, GLP_LO, 0, 0);
    put_parts(&t, m, r, k, 1);
    put_parts(&t, m, r, k + 1, -1);
  }
  g_autofree int *full = g_new(int, MAX(m->nsm, 1));
  int nf = full_sms(m, full);
  for (int x = 0; x + 1 < nf; x++) { /* symmetry: full SMs by partitions */
    int r = add_row(P, GLP_LO, 0, 0);
    for (int k = 0; k < m->sm_size[full[x]]; k++) put_parts(&t, m, r, m->sm_first[full[x]] + k, 1);
    for (int k = 0; k < m->sm_size[full[x + 1]]; k++) put_parts(&t, m, r, m->sm_first[full[x + 1]] + k, -1);
  }
  glp_load_matrix(P, (int)t.i->len - 1, (int *)(void *)t.i->data, (int *)(void *)t.j->data,
                  (double *)(void *)t.v->data);
  g_array_free(t.i, TRUE), g_array_free(t.j, TRUE), g_array_free(t.v, TRUE);
  return P;
}

/* The column values (1-based) of counts cnt, for glp_ios_heur_sol. */
static double *columns(const Model *m, glp_prob *P, const int *cnt) {
  double *x = g_new0(double, glp_get_num_cols(P) + 1);
  g_autofree int64_t *smax = g_new(int64_t, m->ns);
  evaluate(m, cnt, smax);
  for (int st = 0; st < m->ns; st++) {
    if (!m->units[st]) continue;
    for (int k = 0; k < m->nw; k++) {
      int c = cnt[st * m->nw + k];
      x[m->n_col[st * m->nw + k]] = c;
      if (m->active) x[m->y_col[st * m->nw + k]] = c > 0;
    }
    x[m->z_col[st]] = (double)smax[st];
  }
  return x;
}

/* GLPK's callback: offer the constructive incumbent once; keep the bound. */
static void on_tree(glp_tree *tree, void *info) {
  Search *se = info;
  int b = glp_ios_best_node(tree);
  if (b) se->bound = MAX(se->bound, glp_ios_node_bound(tree, b));
  if (glp_ios_reason(tree) == GLP_IHEUR && se->start && !se->offered) {
    se->offered = TRUE;
    glp_ios_heur_sol(tree, se->start);
  }
}

static gboolean unit_before(const LwUnit *a, const LwUnit *b) {
  if (stage_of(a) != stage_of(b)) return stage_of(a) < stage_of(b);
  return a->k != b->k ? a->k < b->k : a->p < b->p;
}

/* Each unit's WG from the solved counts: a stage's units in (shard, panel)
 * order fill its WG slots in order. */
static void assign(const Model *m, const LwUnit *u, int n, const int *cnt, int *wg) {
  g_autofree int *idx = g_new(int, MAX(n, 1));
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && unit_before(&u[idx[b]], &u[idx[b - 1]]); b--) {
      int t = idx[b - 1];
      idx[b - 1] = idx[b], idx[b] = t;
    }
  int prev = -1, k = 0, left = 0;
  for (int a = 0; a < n; a++) {
    int i = idx[a], st = stage_of(&u[i]);
    if (st != prev) prev = st, k = 0, left = cnt[st * m->nw];
    while (left == 0) left = cnt[st * m->nw + ++k]; /* coverage: the counts add up */
    wg[i] = m->slot_wg[k];
    left--;
  }
}

/* Does a placement put two K shards of a panel that all-reduce with RED on
 * one WG (the rule `apart` keeps)? */
static gboolean red_shared(const Model *m, const LwUnit *u, int n, const int *wg) {
  for (int a = 0; a < n; a++)
    for (int b = a + 1; m->red[stage_of(&u[a])] && b < n; b++)
      if (u[b].l == u[a].l && u[b].j == u[a].j && u[b].p == u[a].p && wg[b] == wg[a]) return TRUE;
  return FALSE;
}

/* The account for tcc-gen --explain. */
static void report(Ir *ir, const Model *m, IrIlpStatus status, int64_t obj, int64_t bound,
                   const int *cnt, const int *cons, gboolean cons_shared, glp_prob *P) {
  IrIlp *a = ir->ilp = g_new0(IrIlp, 1);
  a->status = status, a->objective = obj, a->bound = bound;
  a->constructive_red_shared = cons_shared;
  a->units = 0, a->wgs = m->nw, a->columns = glp_get_num_cols(P), a->rows = glp_get_num_rows(P);
  a->stages = g_array_new(FALSE, TRUE, sizeof(IrIlpStage));
  g_autofree int64_t *smax = g_new(int64_t, m->ns), *cmax = g_new(int64_t, m->ns);
  evaluate(m, cnt, smax);
  a->constructive = cons ? evaluate(m, cons, cmax) : -1;
  for (int st = 0; st < m->ns; st++) {
    if (!m->units[st]) continue;
    a->units += m->units[st];
    IrIlpStage e = {.max_load = smax[st], .constructive_max_load = cons ? cmax[st] : -1};
    g_snprintf(e.name, sizeof e.name, "l%d.%s", st / PROJ__COUNT, sched_proj_name[st % PROJ__COUNT]);
    g_array_append_val(a->stages, e);
  }
}

/* Why no placement exists: the capacity rows are the only ones that can
 * bind (coverage alone is always met, z is free above). */
static void infeasible(Ir *ir, const Model *m, GError **err) {
  int need = 0, largest = 0;
  gboolean apart = FALSE;
  for (int st = 0; st < m->ns; st++) apart |= m->units[st] > 0 && m->red[st];
  for (int st = 0; st < m->ns; st++) need += m->units[st] * m->parts[st], largest = MAX(largest, m->parts[st]);
  int have = m->nw * m->cap;
  if (need > have)
    ir_error(ir, err, ir_prov(ir, "placement.solver"),
             "placement.solver: ilp: infeasible: capacity: the panels need %d partitions, %d WGs "
             "keep %d (%d each after rf_temp_kib and one for biases)",
             need, m->nw, have, m->cap);
  else
    ir_error(ir, err, ir_prov(ir, "placement.solver"),
             "placement.solver: ilp: infeasible: capacity: the panels need %d of the %d partitions "
             "%d WGs keep (%d each), but units of up to %d partitions pack into none of them%s",
             need, have, m->nw, m->cap, largest,
             apart ? " with each panel's RED K shards on WGs of their own" : "");
}

gboolean lw_place_ilp(Ir *ir, const LwUnit *u, int n, const GArray *order, int cap,
                      const int *constructive, int *wg, GError **err) {
  Model m = {0};
  model_init(&m, ir, u, n, order, cap);
  int need = 0;
  for (int st = 0; st < m.ns; st++) need += m.units[st] * m.parts[st];
  if (need > m.nw * m.cap) { /* no need to ask GLPK */
    infeasible(ir, &m, err);
    model_free(&m);
    return FALSE;
  }
  int prev_term = glp_term_out(GLP_OFF);
  glp_prob *P = model_build(&m);
  g_autofree int *cons = constructive ? counts(&m, u, n, constructive) : NULL;
  /* a constructive placement with a panel's RED shards on one WG is no
   * candidate: not offered, not kept on a tie (its score is still reported) */
  gboolean shared = constructive && red_shared(&m, u, n, constructive);
  g_autofree int *start = cons && !shared ? canonical(&m, cons) : NULL;
  g_autofree double *x = start ? columns(&m, P, start) : NULL;
  Search se = {.start = x, .bound = -HUGE_VAL};
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  int rc = glp_simplex(P, &sp);
  gboolean ok = rc == 0 && glp_get_status(P) == GLP_OPT;
  if (ok) {
    glp_iocp ip;
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.tm_lim = lw_ilp_test_tm_lim_ms > 0 ? lw_ilp_test_tm_lim_ms : ir->sched.solver_time_limit_s * 1000;
    ip.cb_func = on_tree, ip.cb_info = &se;
    rc = glp_intopt(P, &ip);
  }
  int status = ok ? glp_mip_status(P) : GLP_NOFEAS;
  gboolean found = (rc == 0 || rc == GLP_ETMLIM) && (status == GLP_OPT || status == GLP_FEAS);
  if (!found && (status == GLP_NOFEAS || (ok && rc == 0))) {
    infeasible(ir, &m, err);
  } else if (!found && (!cons || shared)) {
    ir_error(ir, err, ir_prov(ir, "placement.solver"),
             "placement.solver: ilp: no placement found within placement.time_limit_s=%d (GLPK "
             "code %d), and the constructive placement %s: raise the limit",
             ir->sched.solver_time_limit_s, rc,
             cons ? "puts a panel's RED K shards on one WG" : "does not fit");
  } else if (!found) { /* stopped before any incumbent: the constructive placement */
    memcpy(wg, constructive, sizeof(int) * (gsize)n);
    int64_t obj = evaluate(&m, cons, NULL);
    /* the LP relaxation's optimum bounds every placement (integer loads: up) */
    int64_t bound = (int64_t)ceil(MAX(MAX(se.bound, glp_get_obj_val(P)), 0) - 1e-6);
    report(ir, &m, IR_ILP_FALLBACK, obj, MIN(bound, obj), cons, cons, FALSE, P);
    ir_warning(ir, ir_prov(ir, "placement.solver"),
               "placement.solver: ilp: GLPK found no placement within placement.time_limit_s=%d "
               "(GLPK code %d); using the constructive placement (objective %" G_GINT64_FORMAT
               "): raise the limit for the solver's",
               ir->sched.solver_time_limit_s, rc, obj);
    found = TRUE;
  } else {
    g_autofree int *cnt = g_new0(int, (gsize)m.ns * m.nw);
    for (int st = 0; st < m.ns; st++)
      for (int k = 0; m.units[st] && k < m.nw; k++)
        cnt[st * m.nw + k] = (int)lround(glp_mip_col_val(P, m.n_col[st * m.nw + k]));
    int64_t obj = evaluate(&m, cnt, NULL);
    /* a tie goes to the constructive placement: the ILP changes a plan only
     * where it proves a lower objective (an equal one is often a
     * permutation that the objective cannot tell apart but the simulator
     * can: docs/techniques.md) */
    if (cons && !shared && evaluate(&m, cons, NULL) <= obj) {
      memcpy(cnt, cons, sizeof(int) * (gsize)m.ns * m.nw);
      memcpy(wg, constructive, sizeof(int) * (gsize)n);
      obj = evaluate(&m, cnt, NULL);
    } else {
      assign(&m, u, n, cnt, wg);
    }
    /* loads are integers: so is any objective, and the bound rounds up */
    int64_t bound = status == GLP_OPT ? obj : (int64_t)ceil(MAX(se.bound, 0) - 1e-6);
    report(ir, &m, status == GLP_OPT ? IR_ILP_OPTIMAL : IR_ILP_FEASIBLE, obj, MIN(bound, obj), cnt, cons, shared, P);
  }
  glp_delete_prob(P);
  glp_term_out(prev_term);
  model_free(&m);
  return found;
}
