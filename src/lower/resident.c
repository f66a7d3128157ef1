/* resident.c - weights kept in the RF across D1's steps (weights: resident;
 * resident.h).  Every projection panel (a K x P slice of a weight matrix) and
 * its bias get one WG, constructively: panels, largest first (first fit
 * decreasing; ties in layer, projection, panel order), take the WGs of the
 * SMs used in the placer's SM-interleaved order, round robin, skipping a WG
 * whose partitions (less rf_temp_kib's, kept for the tasks' activations, and
 * one for its biases) are full; with placement.solver: ilp, resident_ilp.c
 * assigns them instead (this placement is its first incumbent and is kept
 * on a tie).  One preload task per WG (per layer with
 * power.deferred_loads), pinned to it and made before every step (the waves
 * pass staggers them: power.preload_waves), loads its panels once; each step's task for a
 * panel is pinned to the same WG and multiplies by the panel where it lies
 * (ir_verify lets a pinned task read what an earlier task pinned there
 * keeps).  So steps touch HBM only for activations, K/V and outputs.
 *
 * With attention slices, the history K/V stays too where it fits: every
 * (layer, head, slice) of the first layers whose blocks all find room then
 * takes a WG the same way after the panels (its
 * block of history K and V rows, and for the last slice room for the new
 * positions' rows, which the qkv tasks store there each step); the slice's
 * task of every step is pinned there.  The layers from the first whose
 * blocks find no room stream their history from HBM as before (tcc-gen
 * --explain says which).  Constant vectors (LayerNorm gains and biases) are kept by the
 * preload task of each WG that uses them (lw_resident_const).
 *
 * D1 and P1 keep weights resident by different mechanisms, so this module
 * and resident_owners.c stay apart: here a panel stays for all of D1's
 * steps, loaded once by a preload task per WG and multiplied by one row a
 * step by a task pinned beside it; there a P1 owner task keeps its (K
 * shard, panel) for one stage of one layer and streams every row tile
 * through A buffers (multicast, fed, or its own loads).  What they share,
 * a projection's unit shape and the WG order of the placer, lives here
 * (lw_unit_shape) and in shard_group.c. */
#include "resident.h"

#include <string.h>

#include "builder.h"

void lw_unit_shape(const Ir *ir, SchedProj j, int *panel, int *ks) {
  const Schedule *s = &ir->sched;
  *panel = s->panel[j], *ks = s->k_split[j];
  if (!s->ffn_fused) return;
  if (j == PROJ_W1) *panel = s->ffn_channels, *ks = 1;
  if (j == PROJ_W2) *panel = ir->prob.d_model, *ks = s->ffn_producers;
}

gboolean lw_red_split(const Ir *ir, SchedProj j) {
  const Schedule *s = &ir->sched;
  return ir->hw.reduce_units > 0 && (j == PROJ_WO || j == PROJ_W2) && s->k_split[j] > 1 &&
         !(s->ffn_fused && j == PROJ_W2);
}

/* The index of (layer, projection, panel, K shard) in the tables. */
static int shard_slot(const LwResident *r, int l, SchedProj j, int p, int s) {
  return ((l * PROJ__COUNT + (int)j) * r->max_panels + p) * r->max_split + s;
}
static int slot(const LwResident *r, int l, SchedProj j, int p) { return shard_slot(r, l, j, p, 0); }

/* The rows of slice k's K (and V) tensor: its history rows (none for
 * attention.new_slice's own slice), then for the last slice the new
 * positions'. */
static int kv_hist_rows(const LwResident *r, int k) {
  return r->new_slice && k == r->slices - 1 ? 0 : r->block;
}
static int kv_rows(const LwResident *r, int k, int steps) {
  return kv_hist_rows(r, k) + (k == r->slices - 1 ? steps : 0);
}

/* The history K/V of every (layer, head, slice), after the panels, on the
 * WGs in the same order from `next` on, layer by layer from layer 0: a
 * layer keeps its history when every one of its blocks finds a WG, and the
 * layers from the first that does not stream theirs (Ir.history_streamed). */
static void place_kv(Ir *ir, LwResident *r, GArray *order, guint next, int room) {
  const Problem *d = &ir->prob;
  int S = ir->sched.attn_slices, pb = sim_machine_part_bytes(&ir->hw);
  r->kv = FALSE;
  r->kv_layers = 0;
  r->new_slice = S > 1 && ir->sched.attn_new_slice;
  r->heads = d->heads, r->slices = S + r->new_slice, r->block = d->history / S;
  /* kv_writeback: temp sends the new rows to HBM only (through scratch),
   * never to a slice's RF: the slices then read the cache from HBM */
  if (S <= 1 || ir->sched.kv_writeback != KV_DIRECT) return;
  if (r->layers < d->layers) return; /* resident_layers: the RF is the weights' */
  S = r->slices;
  gsize per = (gsize)d->heads * S, n = (gsize)d->layers * per;
  r->kv_wg = g_new(int, n);
  r->kt = g_new(int, n);
  r->vt = g_new(int, n);
  for (gsize i = 0; i < n; i++) r->kv_wg[i] = r->kt[i] = r->vt[i] = -1;
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int *used = g_new(int, nwg);
  for (int l = 0; l < d->layers; l++) {
    memcpy(used, r->used, sizeof(int) * (gsize)nwg); /* the layers kept so far */
    guint at = next;
    gsize j = 0;
    for (; j < per; j++) {
      int k = (int)(j % (gsize)S), rows = kv_rows(r, k, d->steps);
      int parts = 2 * (int)((4 * (int64_t)rows * WL_HEAD_DIM + pb - 1) / pb), wg = -1;
      guint tried = 0;
      for (; tried < order->len; tried++) {
        int c = g_array_index(order, int, (at + tried) % order->len);
        if (used[c] + parts + 1 <= room) {
          wg = c;
          break;
        }
      }
      if (wg < 0) break;
      at = (at + tried + 1) % order->len;
      used[wg] += parts;
      r->kv_wg[(gsize)l * per + j] = wg;
    }
    if (j < per) { /* streamed, from this layer on */
      for (gsize i = (gsize)l * per; i < n; i++) r->kv_wg[i] = -1;
      ir->history_streamed = TRUE;
      break;
    }
    memcpy(r->used, used, sizeof(int) * (gsize)nwg);
    next = at;
    r->kv_layers = l + 1;
  }
  r->kv = r->kv_layers > 0;
}

gboolean lw_resident_kv_has(const LwResident *r, int l) { return r->kv && l < r->kv_layers; }

static int kv_slot(const LwResident *r, int l, int h, int k) { return (l * r->heads + h) * r->slices + k; }
int lw_resident_kv_wg(const LwResident *r, int l, int h, int k) { return r->kv_wg[kv_slot(r, l, h, k)]; }
int lw_resident_k(const LwResident *r, int l, int h, int k) { return r->kt[kv_slot(r, l, h, k)]; }
int lw_resident_v(const LwResident *r, int l, int h, int k) { return r->vt[kv_slot(r, l, h, k)]; }
int lw_resident_new_row(const LwResident *r, int t) { return kv_hist_rows(r, r->slices - 1) + t; }

gboolean lw_resident_place(Ir *ir, LwResident *r, GError **err) {
  const Schedule *s = &ir->sched;
  const Problem *d = &ir->prob;
  int S = s->sms_used > 0 ? s->sms_used : ir->hw.sms, W = ir->hw.wgs_per_sm;
  int pb = sim_machine_part_bytes(&ir->hw), nparts = ir->hw.vl;
  int temp_parts = (s->rf_temp_kib * 1024 + pb - 1) / pb, room = nparts - temp_parts;
  /* resident_layers: layers 0..r->layers-1 keep their weights, the rest
   * stream theirs (d1.c asks lw_resident_has) */
  r->layers = s->resident_layers > 0 ? MIN(s->resident_layers, d->layers) : d->layers;
  r->max_panels = r->max_split = 1;
  for (int j = 0; j < PROJ__COUNT; j++) {
    int P, ks;
    lw_unit_shape(ir, (SchedProj)j, &P, &ks);
    r->max_panels = MAX(r->max_panels, sched_proj_n(d, (SchedProj)j) / P);
    r->max_split = MAX(r->max_split, ks);
  }
  gsize n = (gsize)r->layers * PROJ__COUNT * r->max_panels * r->max_split;
  r->wg = g_new(int, n);
  r->w = g_new(int, n);
  r->b = g_new(int, n);
  for (gsize i = 0; i < n; i++) r->wg[i] = r->w[i] = r->b[i] = -1;
  GArray *order = g_array_new(FALSE, FALSE, sizeof(int));
  for (int k = 0; k < S * W; k++) {
    int wg = (k % S) * W + k / S;
    if (wg != s->pacing_wg) g_array_append_val(order, wg);
  }
  /* a panel's K shards that all-reduce with RED each need a WG of their own */
  for (int j = 0; j < PROJ__COUNT; j++) {
    if (!lw_red_split(ir, (SchedProj)j) || s->k_split[j] <= (int)order->len) continue;
    char knob[32];
    g_snprintf(knob, sizeof knob, "k_split.%s", sched_proj_name[j]);
    ir_error(ir, err, ir_prov(ir, knob),
             "%s=%d: the K shards of a panel all-reduce with RED, each from a WG of its own, but the "
             "resident weights have %u WG%s (sms_used x wgs_per_sm, less the pacing WG): a second "
             "shard on a WG would never contribute (a deadlock); lower %s or use more WGs",
             knob, s->k_split[j], order->len, order->len == 1 ? "" : "s", knob);
    g_array_free(order, TRUE);
    return FALSE;
  }
  int nwg = sim_machine_wgs(&ir->hw);
  r->used = g_new0(int, nwg); /* partitions taken on each WG */
  int *used = r->used;
  /* the panels, largest first (first fit decreasing packs the WGs tighter;
   * ties in (layer, projection, panel) order) */
  g_autoptr(GArray) todo = g_array_new(FALSE, FALSE, sizeof(LwUnit));
  if (room < 2) { /* not even a partition of weights beside the biases' */
    ir_error(ir, err, ir_prov(ir, "rf_temp_kib"),
             "weights: resident: rf_temp_kib=%d leaves %d of a WG's %d KiB RF (hardware.rf_kib) for "
             "weights, less than a partition and the biases' one: lower rf_temp_kib",
             s->rf_temp_kib, MAX(room, 0) * pb / 1024, ir->hw.rf_kib);
    g_array_free(order, TRUE);
    return FALSE;
  }
  for (int l = 0; l < r->layers; l++)
    for (int j = 0; j < PROJ__COUNT; j++) {
      int ks, P;
      lw_unit_shape(ir, (SchedProj)j, &P, &ks);
      int K = sched_proj_k(d, (SchedProj)j) / ks, np = sched_proj_n(d, (SchedProj)j) / P;
      if (s->ffn_fused && j == PROJ_W2) continue; /* with its W1 panel (below) */
      int parts = (int)((4 * (int64_t)K * P + pb - 1) / pb); /* + one for a WG's small biases */
      if (s->ffn_fused && j == PROJ_W1) /* fused FFN: producer p keeps W1's columns and W2's rows */
        parts += (int)((4 * (int64_t)P * d->d_model + pb - 1) / pb);
      if (parts + 1 > room) {
        char knob[32];
        g_snprintf(knob, sizeof knob, "panels.%s", sched_proj_name[j]);
        ir_error(ir, err, ir_prov(ir, knob),
                 "weights: resident: a %s panel is %d x %d = %d KiB, %d partitions, but a WG "
                 "keeps %d of its %d partitions after rf_temp_kib (and one for biases): narrow the "
                 "panel (see tcc-gen --explain)",
                 sched_proj_name[j], K, P, (int)(4 * (int64_t)K * P / 1024), parts, room, nparts);
        g_array_free(order, TRUE);
        return FALSE;
      }
      for (int p = 0; p < np; p++)
        for (int k = 0; k < ks; k++) {
          LwUnit e = {parts, l, j, p, k};
          g_array_append_val(todo, e);
        }
    }
  for (guint a = 1; a < todo->len; a++) /* stable insertion sort by parts, descending */
    for (guint b = a; b > 0; b--) {
      LwUnit *x = &g_array_index(todo, LwUnit, b - 1), *y = &g_array_index(todo, LwUnit, b);
      if (x->parts >= y->parts) break;
      LwUnit tmp = *x;
      *x = *y, *y = tmp;
    }
  g_autofree int *at = g_new(int, MAX(todo->len, 1)); /* each unit's WG */
  guint next = 0;
  gboolean fits = TRUE;
  for (guint a = 0; a < todo->len && fits; a++) {
    const LwUnit *e = &g_array_index(todo, LwUnit, a);
    int wg = -1;
    guint tried = 0;
    for (; tried < order->len; tried++) {
      int c = g_array_index(order, int, (next + tried) % order->len);
      if (used[c] + e->parts + 1 <= room) {
        wg = c;
        break;
      }
    }
    if (wg < 0 && s->solver != SOLVER_ILP) {
      ir_error(ir, err, ir_prov(ir, "weights"),
               "weights: resident: the weights do not fit the RF of %d SM%s after rf_temp_kib "
               "(layer %d %s panel %d finds no WG with %d free partitions; see tcc-gen --explain)",
               S, S == 1 ? "" : "s", e->l, sched_proj_name[e->j], e->p, e->parts + 1);
      g_array_free(order, TRUE);
      return FALSE;
    }
    if (wg < 0) { /* the ILP may still pack them */
      fits = FALSE;
      break;
    }
    next = (next + tried + 1) % order->len;
    used[wg] += e->parts;
    at[a] = wg;
  }
  if (s->solver == SOLVER_ILP) {
    /* the ILP proposes (the constructive placement is its first incumbent,
     * kept on a tie); the history K/V then fills the WGs in order from the
     * first */
    g_autofree int *ilp = g_new(int, MAX(todo->len, 1));
    if (!lw_place_ilp(ir, (const LwUnit *)(void *)todo->data, (int)todo->len, order, room - 1,
                      fits ? at : NULL, ilp, err)) {
      g_array_free(order, TRUE);
      return FALSE;
    }
    if (!fits || memcmp(at, ilp, sizeof(int) * todo->len) != 0) { /* else the constructive's kept */
      memcpy(at, ilp, sizeof(int) * todo->len);
      memset(used, 0, sizeof(int) * (gsize)nwg);
      for (guint a = 0; a < todo->len; a++) used[at[a]] += g_array_index(todo, LwUnit, a).parts;
      next = 0;
    }
  }
  for (guint a = 0; a < todo->len; a++) {
    const LwUnit *e = &g_array_index(todo, LwUnit, a);
    r->wg[shard_slot(r, e->l, (SchedProj)e->j, e->p, e->k)] = at[a];
    if (s->ffn_fused && e->j == PROJ_W1) r->wg[shard_slot(r, e->l, PROJ_W2, 0, e->p)] = at[a];
  }
  place_kv(ir, r, order, next, room);
  g_array_free(order, TRUE);
  return TRUE;
}

/* The preload tasks of layers [l0, l1], one per WG that keeps something of
 * them, pinned there (the waves pass may then make them wait for each
 * other: power.preload_waves).  task[w] gets WG w's task (-1: it keeps
 * nothing of those layers). */
static void preload_tasks(Ir *ir, LwResident *r, int l0, int l1, int *task, IrProv prov) {
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree gboolean *has = g_new0(gboolean, nwg);
  gsize per = (gsize)PROJ__COUNT * r->max_panels * r->max_split;
  for (gsize i = (gsize)l0 * per; i < (gsize)(l1 + 1) * per; i++)
    if (r->wg[i] >= 0) has[r->wg[i]] = TRUE;
  gsize kper = r->kv ? (gsize)r->heads * r->slices : 0;
  for (gsize i = (gsize)l0 * kper; i < (gsize)MIN(l1 + 1, r->kv_layers) * kper; i++) has[r->kv_wg[i]] = TRUE;
  /* attention.new_slice: the first preload tasks also hold the new
   * positions' slices of every layer that keeps its history (load_kv) */
  if (l0 == 0 && r->kv && r->new_slice)
    for (gsize i = (gsize)r->slices - 1; i < (gsize)r->kv_layers * kper; i += (gsize)r->slices)
      has[r->kv_wg[i]] = TRUE;
  for (int w = 0; w < nwg; w++) {
    if (!has[w]) continue;
    g_autofree char *name = r->deferred ? g_strdup_printf("preload.l%d.wg%d", l0, w)
                                        : g_strdup_printf("preload.wg%d", w);
    task[w] = lw_task(ir, name, -1, prov, ir_role(ROLE_PRELOAD));
    IrTask *tk = ir_task_at(ir, task[w]);
    tk->pin = w;
    tk->role.layer = r->deferred ? l0 : -1;
  }
}

/* The loads of layer l's panels and history K/V, into the layer's preload
 * tasks. */
static void load_layer(Ir *ir, LwResident *r, int l, IrProv prov) {
  int nwg = sim_machine_wgs(&ir->hw);
  const int *task = r->preload + (gsize)l * nwg;
  for (int j = 0; j < PROJ__COUNT; j++) {
    int K = sched_proj_k(&ir->prob, (SchedProj)j), N = sched_proj_n(&ir->prob, (SchedProj)j);
    int P, ks;
    lw_unit_shape(ir, (SchedProj)j, &P, &ks);
    int Ks = K / ks;
    g_autofree char *wsym = lw_weight_sym((SchedProj)j, l), *bsym = lw_bias_sym((SchedProj)j, l);
    for (int p = 0; p < N / P; p++)
      for (int k = 0; k < ks; k++) { /* shard k: rows k*Ks.. (the bias with shard 0) */
        int i = shard_slot(r, l, (SchedProj)j, p, k), wg = r->wg[i];
        g_autofree char *tag = ks == 1 ? g_strdup_printf("l%d.%s.p%d", l, sched_proj_name[j], p)
                                       : g_strdup_printf("l%d.%s.p%d.k%d", l, sched_proj_name[j], p, k);
        r->w[i] = lw_rf_sub(ir, task[wg], tag, "w", Ks, P);
        lw_load(ir, task[wg], ir_all(ir, r->w[i]), wsym, k * Ks, p * P, N, prov);
        if (k > 0) continue;
        r->b[i] = lw_rf_sub(ir, task[wg], tag, "b", 1, P);
        lw_load(ir, task[wg], ir_all(ir, r->b[i]), bsym, 0, p * P, N, prov);
      }
  }
}

/* attention.new_slice: the K and V rows of the new positions' own slice
 * of every (layer, head).  Nothing loads them: only the qkv tasks' stores
 * write them, and no event orders those after a later layer's preload
 * task, so the WG's first preload task holds them, live from the start of
 * the WG's program (ir_order.c).  Made with layer 0's tensors, so that
 * every tensor of a task comes before those of the tasks after it (the IR
 * prints, and ir_parse numbers, tensors by task). */
static void own_slices(Ir *ir, LwResident *r) {
  for (int l = 0; l < r->kv_layers; l++)
    for (int h = 0; h < r->heads; h++) {
      int k = r->slices - 1, i = kv_slot(r, l, h, k), wg = r->kv_wg[i];
      g_autofree char *tag = g_strdup_printf("l%d.kv.h%d.s%d", l, h, k);
      r->kt[i] = lw_rf_sub(ir, r->preload[wg], tag, "k", ir->prob.steps, WL_HEAD_DIM);
      r->vt[i] = lw_rf_sub(ir, r->preload[wg], tag, "v", ir->prob.steps, WL_HEAD_DIM);
    }
}

/* Each slice's block of history rows: K rows h*pos + k*block.. of the
 * layer's cache (docs/workloads.md), the new positions' rows after it. */
static void load_kv(Ir *ir, LwResident *r, int l, IrProv prov) {
  int nwg = sim_machine_wgs(&ir->hw), pos = ir->prob.history + ir->prob.steps;
  const int *task = r->preload + (gsize)l * nwg;
  g_autofree char *ksym = g_strdup_printf("k_cache.l%d", l), *vsym = g_strdup_printf("v_cache.l%d", l);
  if (l == 0 && r->new_slice) own_slices(ir, r);
  for (int h = 0; h < r->heads; h++)
    for (int k = 0; k < r->slices; k++) {
      int i = kv_slot(r, l, h, k), wg = r->kv_wg[i];
      if (kv_hist_rows(r, k) == 0) continue; /* own_slices */
      int rows = kv_rows(r, k, ir->prob.steps);
      g_autofree char *tag = g_strdup_printf("l%d.kv.h%d.s%d", l, h, k);
      r->kt[i] = lw_rf_sub(ir, task[wg], tag, "k", rows, WL_HEAD_DIM);
      r->vt[i] = lw_rf_sub(ir, task[wg], tag, "v", rows, WL_HEAD_DIM);
      int row0 = h * pos + k * r->block;
      lw_load(ir, task[wg], ir_win(r->kt[i], 0, r->block, 0, WL_HEAD_DIM), ksym, row0, 0, WL_HEAD_DIM, prov);
      lw_load(ir, task[wg], ir_win(r->vt[i], 0, r->block, 0, WL_HEAD_DIM), vsym, row0, 0, WL_HEAD_DIM, prov);
    }
}

void lw_resident_preload(Ir *ir, LwResident *r, IrProv prov) {
  int nwg = sim_machine_wgs(&ir->hw);
  r->deferred = ir->sched.deferred_loads;
  r->prov = prov;
  r->preload = g_new(int, (gsize)r->layers * nwg);
  for (gsize i = 0; i < (gsize)r->layers * nwg; i++) r->preload[i] = -1;
  r->consts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (r->deferred) { /* layer 0 now, the others by lw_resident_preload_layer */
    lw_resident_preload_layer(ir, r, 0);
    return;
  }
  preload_tasks(ir, r, 0, r->layers - 1, r->preload, prov);
  for (int l = 1; l < r->layers; l++) memcpy(r->preload + (gsize)l * nwg, r->preload, sizeof(int) * (gsize)nwg);
  for (int l = 0; l < r->layers; l++) load_layer(ir, r, l, prov);
  for (int l = 0; l < r->layers; l++)
    if (lw_resident_kv_has(r, l)) load_kv(ir, r, l, prov);
}

void lw_resident_preload_layer(Ir *ir, LwResident *r, int l) {
  int nwg = sim_machine_wgs(&ir->hw);
  preload_tasks(ir, r, l, l, r->preload + (gsize)l * nwg, r->prov);
  load_layer(ir, r, l, r->prov);
  if (lw_resident_kv_has(r, l)) load_kv(ir, r, l, r->prov);
}

int lw_resident_preload_task(const Ir *ir, const LwResident *r, int wg, int l) {
  return r->preload[(gsize)l * sim_machine_wgs(&ir->hw) + wg];
}

IrView lw_resident_const(Ir *ir, LwResident *r, int wg, int l, const char *sym, int cols, IrProv prov) {
  g_autofree char *key = g_strdup_printf("%d/%s", wg, sym);
  gpointer t;
  if (g_hash_table_lookup_extended(r->consts, key, NULL, &t)) return ir_all(ir, GPOINTER_TO_INT(t));
  char what[16];
  g_snprintf(what, sizeof what, "wg%d", wg);
  int pre = lw_resident_preload_task(ir, r, wg, l);
  int x = lw_rf_sub(ir, pre, sym, what, 1, cols);
  lw_load(ir, pre, ir_all(ir, x), sym, 0, 0, cols, prov);
  g_hash_table_insert(r->consts, g_steal_pointer(&key), GINT_TO_POINTER(x));
  return ir_all(ir, x);
}

gboolean lw_resident_has(const LwResident *r, int l) { return l >= 0 && l < r->layers; }

int lw_resident_wg(const LwResident *r, int l, SchedProj j, int p) { return r->wg[slot(r, l, j, p)]; }
int lw_resident_shard_wg(const LwResident *r, int l, SchedProj j, int p, int s) {
  return r->wg[shard_slot(r, l, j, p, s)];
}

void lw_resident_project_shard(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j,
                               int p, int s, IrView acc, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_MMA);
  op->mods = IR_MOD_Z, op->d = acc, op->a = a, op->b = ir_all(ir, r->w[shard_slot(r, l, j, p, s)]),
  op->prov = prov;
}

IrView lw_resident_weights(const Ir *ir, const LwResident *r, int l, SchedProj j, int p) {
  return ir_all(ir, r->w[slot(r, l, j, p)]);
}

IrView lw_resident_bias(const Ir *ir, const LwResident *r, int l, SchedProj j, int p) {
  return ir_all(ir, r->b[slot(r, l, j, p)]);
}

int lw_resident_task_parts(const Ir *ir) {
  int pb = sim_machine_part_bytes(&ir->hw);
  return MAX(1, ir->sched.rf_temp_kib * 1024 / pb);
}

void lw_resident_project(Ir *ir, int task, IrView a, const LwResident *r, int l, SchedProj j, int p,
                         IrView acc, IrProv prov) {
  int i = slot(r, l, j, p);
  IrOp *op = ir_emit(ir, task, IR_MMA);
  op->mods = IR_MOD_Z, op->d = acc, op->a = a, op->b = ir_all(ir, r->w[i]), op->prov = prov;
  op = ir_emit(ir, task, IR_VADD);
  op->d = acc, op->a = acc, op->b = ir_all(ir, r->b[i]), op->prov = prov;
}

void lw_resident_free(LwResident *r) {
  g_free(r->wg);
  g_free(r->w);
  g_free(r->b);
  g_free(r->used);
  g_free(r->preload);
  g_free(r->kv_wg);
  g_free(r->kt);
  g_free(r->vt);
  if (r->consts) g_hash_table_destroy(r->consts);
  memset(r, 0, sizeof *r);
}
