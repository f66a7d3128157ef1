/* project.c - a projection panel, for both problems (project.h):
 * acc (R x P) = A (R x K) . W[0..K, c0..c0+P), W streamed from HBM in chunks
 * of k_chunk rows, A either resident in the RF or streamed from HBM chunk by
 * chunk beside W; then the bias.
 *
 * The chunks go through stream_depth = N buffers (N W buffers, and N A
 * buffers when A streams): chunk i into buffer i mod N, its loads issued
 * N - 1 chunks ahead of its MMA.  A WG issues in order and an MMA waits for
 * its chunk's load, so with one buffer each load waits for the MMA before it
 * and each MMA for its load: the DMA runs one descriptor at a time, a
 * chunk's latency and its row segments in series.  With N buffers up to N
 * descriptors are in flight (the SM's DMA engines serve them at once) while
 * the MMAs catch up; a load into a buffer still waits for the MMA that read
 * it N chunks before (the RF hazard).  Where N chunks of k_chunk rows do
 * not fit the task's RF room, the chunks get smaller, then fewer
 * (chunks_that_fit). */
#include "project.h"

#include "builder.h"
#include "resident.h"

/* Partitions a tensor of `bytes` takes: whole ones (a small tensor shares
 * its partition, counted whole here: an upper bound). */
static int parts_of(int64_t bytes, int pb) { return (int)((bytes + pb - 1) / pb); }

/* The partitions the RF tensors of `task` take so far, each counted in whole
 * partitions (an upper bound).  A task's tensors are the latest the
 * lowering made (it builds one task at a time; a resident constant of
 * another task may come between), so only the last TASK_TENSORS are looked
 * at: a scan of the whole IR per streamed panel was quadratic in the
 * program. */
#define TASK_TENSORS 256
static int parts_used(const Ir *ir, int task, int pb) {
  int used = 0, n = (int)ir->tensors->len;
  for (int t = n - 1; t >= 0 && t >= n - TASK_TENSORS; t--) {
    const IrTensor *x = ir_tensor(ir, t);
    if (x->home == HOME_RF && x->task == task) used += parts_of(4 * (int64_t)x->rows * x->cols, pb);
  }
  return used;
}

/* The chunk rows and buffers of a streamed panel: `depth` buffers of k_chunk
 * rows where they fit the task's room (rf_temp_kib's beside resident
 * weights, a D1 layer streamed beside resident ones; else the WG's whole RF)
 * less what it has and `reserve` partitions to spare (what it makes after
 * them); else smaller chunks (multiples of 32 dividing K, down to 32 rows),
 * then fewer buffers. */
static void chunks_that_fit(const Ir *ir, int task, int K, int R, int P, gboolean a_streams, int depth,
                            int reserve, int *kc, int *nb) {
  *nb = 1;
  if (depth <= 1 || K <= *kc) return; /* one buffer: nothing to fit */
  int pb = sim_machine_part_bytes(&ir->hw);
  int room = (ir->sched.weights == WEIGHTS_RESIDENT ? lw_resident_task_parts(ir) : ir->hw.vl) -
             parts_used(ir, task, pb) - reserve;
  for (int n = MIN(depth, (K + *kc - 1) / *kc); n > 1; n--)
    for (int c = *kc; c >= 32; c -= 32) {
      if (K % c != 0 && c != *kc) continue;
      int per = parts_of(4 * (int64_t)c * P, pb) + (a_streams ? parts_of(4 * (int64_t)R * c, pb) : 0);
      if (n * per <= room && (K + c - 1) / c >= n) {
        *kc = c, *nb = n;
        return;
      }
    }
}

/* Chunk i's loads (A's too when it streams). */
static void load_chunk(Ir *ir, const LwStream *st, const LwSource *a, int i) {
  int k0 = i * st->kc, n = MIN(st->kc, st->K - k0), b = i % st->nb;
  IrProv lp = st->nb > 1 ? st->p.dprov : st->p.kprov; /* loads run ahead of the MMAs */
  if (a && a->sym)
    lw_load(ir, st->task, ir_win(st->abuf[b], 0, st->R, 0, n), a->sym, a->row, a->col + k0, a->stride, a->prov);
  lw_load(ir, st->task, ir_win(st->w[b], 0, n, 0, st->P), st->wsym, st->wrow0 + k0, st->c0, st->wstride, lp);
}

void lw_stream_begin(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym, int wrow0,
                     int wstride, int c0, int R, int P, const LwProj *p, int reserve, LwStream *st) {
  *st = (LwStream){.task = task, .K = K, .R = R, .P = P, .wrow0 = wrow0, .wstride = wstride,
                   .c0 = c0, .p = *p, .kc = MIN(p->k_chunk, K), .a_streams = a && a->sym};
  g_strlcpy(st->wsym, wsym, sizeof st->wsym);
  chunks_that_fit(ir, task, K, R, P, st->a_streams, CLAMP(p->depth, 1, 8), reserve, &st->kc, &st->nb);
  st->nc = (K + st->kc - 1) / st->kc;
  for (int b = 0; b < st->nb; b++) {
    g_autofree char *wn = b ? g_strdup_printf("w%d", b) : g_strdup("w");
    g_autofree char *an = b ? g_strdup_printf("a%d", b) : g_strdup("a");
    st->w[b] = lw_rf_sub(ir, task, tag, wn, st->kc, P);
    st->abuf[b] = st->a_streams ? lw_rf_sub(ir, task, tag, an, R, st->kc) : -1;
  }
  for (int i = 0; i < st->nb; i++) load_chunk(ir, st, a, i);
}

void lw_stream_finish(Ir *ir, const LwStream *st, const LwSource *a, IrView acc) {
  for (int m = 0; m < st->nc; m++) {
    int k0 = m * st->kc, n = MIN(st->kc, st->K - k0), b = m % st->nb;
    IrView av = st->a_streams ? ir_win(st->abuf[b], 0, st->R, 0, n)
                              : ir_win(a->rf.t, a->rf.r0, a->rf.rows, a->rf.c0 + k0, n);
    IrOp *op = lw_op(ir, st->task, IR_MMA, acc, av, ir_win(st->w[b], 0, n, 0, st->P), st->p.kprov);
    if (m == 0) op->mods = IR_MOD_Z;
    if (m + st->nb < st->nc) load_chunk(ir, st, a, m + st->nb);
  }
}

void lw_project(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                int wstride, int c0, IrView acc, const LwProj *p) {
  lw_project_rows(ir, task, tag, a, K, wsym, 0, wstride, c0, acc, p);
}

void lw_project_rows(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                     int wrow0, int wstride, int c0, IrView acc, const LwProj *p) {
  LwStream st;
  lw_stream_begin(ir, task, tag, a, K, wsym, wrow0, wstride, c0, acc.rows, acc.cols, p, 2, &st);
  lw_stream_finish(ir, &st, a, acc);
}

void lw_add_bias(Ir *ir, int task, const char *tag, IrView acc, const char *bsym, int c0, IrProv prov) {
  int b = lw_rf_sub(ir, task, tag, "bias", 1, acc.cols);
  IrView bv = ir_all(ir, b);
  lw_load(ir, task, bv, bsym, 0, c0, acc.cols, prov);
  lw_op(ir, task, IR_VADD, acc, acc, bv, prov);
}

