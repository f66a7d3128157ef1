/* pace.c - byte-bucket load pacing (plan knobs power.bucket_bytes,
 * power.event_interval, power.pacing_wg).  Each WG counts the HBM lines its
 * loads touch, in program order across its tasks, and cuts them into buckets
 * of `bucket_bytes`.
 *
 * - Self-paced (pacing_wg = -1): after a full bucket the WG waits
 *   event_interval cycles (WAITT) before its next load.
 * - Paced by a WG (the seeds' scheme): buckets are numbered machine-wide in
 *   the order their data is needed (paced()); a WG WAITs for ev.bucket >= its
 *   bucket's number before the bucket's first load, and a pacer task alone on
 *   WG pacing_wg signals ev.bucket once every event_interval cycles.  The machine then streams at
 *   most one bucket per interval however many WGs are ready, which caps the
 *   busy HBM channels and so the hottest power window.  Bucket numbers never
 *   decrease along a WG's program (buckets may share a number; the numbers
 *   used are 1..M, without gaps) and the pacer depends on nobody: no
 *   deadlock. */
#include <limits.h>
#include <string.h>

#include "ir.h"

/* HBM lines (HBM_LINE bytes) touched by the memory side of an LD. */
static int64_t lines(const Ir *ir, const IrOp *op) {
  const IrTensor *t = ir_tensor(ir, op->mem.t);
  int64_t n = 0;
  for (int r = 0; r < op->mem.rows; r++) {
    uint64_t a = t->offset + 4ull * ((uint64_t)(op->mem.r0 + r) * (uint64_t)t->stride + (uint64_t)op->mem.c0);
    uint64_t e = a + 4ull * (uint64_t)op->mem.cols;
    n += (int64_t)((e + HBM_LINE - 1) / HBM_LINE - a / HBM_LINE); /* symbols are 4096-aligned */
  }
  return n;
}

/* Insert a WAITT before op `at` of `task`. */
static void insert_wait(Ir *ir, IrTask *task, guint at, int64_t cycles, IrProv prov) {
  IrOp w = {0};
  w.kind = IR_WAITT;
  w.d.t = w.a.t = w.b.t = w.c.t = w.mem.t = -1;
  w.event = -1;
  w.n = cycles;
  w.prov = prov;
  g_array_insert_val(task->ops, at, w);
  (void)ir;
}

/* The pacer task (made by the pacer pass, placed by place), alone on its WG:
 * releases number k (SIG ev.bucket) every `interval` cycles, and with a cap
 * only while fewer than `cap` released buckets are unfinished: once
 * ev.took (finished buckets) >= released[k - 1] - cap + 1, released[j]
 * being how many buckets have numbers up to j (several may share one). */
static void pacer(Ir *ir, int task, const Schedule *pp, const int64_t *released, int64_t numbers,
                  IrProv prov) {
  int ev = ir_event(ir, "bucket"), took = ir_event(ir, "took");
  for (int64_t k = 1; k <= numbers; k++) {
    IrOp *op;
    if (pp->in_flight > 0 && released[k - 1] >= pp->in_flight) {
      op = ir_emit(ir, task, IR_WAIT);
      op->event = took, op->n = released[k - 1] - pp->in_flight + 1, op->prov = ir_prov(ir, "power.in_flight");
    }
    op = ir_emit(ir, task, IR_WAITT);
    op->n = pp->event_interval, op->prov = ir_prov(ir, "power.event_interval");
    op = ir_emit(ir, task, IR_SIG);
    op->event = ev, op->n = 1, op->prov = prov;
  }
}

static IrOp sync_op(IrOpKind kind, int ev, int64_t n, IrProv prov) {
  IrOp w;
  memset(&w, 0, sizeof w);
  w.kind = kind, w.d.t = w.a.t = w.b.t = w.c.t = w.mem.t = -1;
  w.event = ev, w.n = n, w.prov = prov;
  return w;
}

/* A bucket: where its WAIT goes (task, op index before which), the order
 * key it is released by, and its number. */
typedef struct Bucket {
  int task;
  guint at;     /* index of its first load in the task's ops (before insertion) */
  guint end;    /* where its SIG ev.took goes: before the next bucket's     */
                /* WAIT, or at the task's end for its last bucket              */
  int64_t key;  /* the stage that first needs its data                          */
  int64_t seq;  /* creation order: ties                                         */
  int64_t num;  /* its release number, 1..                                      */
} Bucket;

static int by_key(const void *a, const void *b) {
  const Bucket *x = *(Bucket *const *)a, *y = *(Bucket *const *)b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Per RF tensor, the lowest stage of a task (stage >= 0) that reads it:
 * when a load's data is first needed. */
static int64_t *first_reader(const Ir *ir) {
  guint T = ir->tensors->len;
  int64_t *first = g_new(int64_t, T + 1);
  for (guint t = 0; t < T; t++) first[t] = G_MAXINT64;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *task = ir_task_at(ir, (int)k);
    if (task->stage < 0) continue;
    for (guint i = 0; i < task->ops->len; i++) {
      const IrOp *op = &g_array_index(task->ops, IrOp, i);
      IrView c = ir_op_c(op);
      const IrView *src[] = {&op->a, &op->b, &c};
      for (int q = 0; q < 3; q++)
        if (src[q]->t >= 0 && (guint)src[q]->t < T && task->stage < first[src[q]->t])
          first[src[q]->t] = task->stage;
    }
  }
  return first;
}

/* With in_flight: number the buckets in an order the machine can release
 * them in under the cap.  The need order made monotone along each WG's
 * program is not one: a WG's bucket may sit behind a WAIT for work whose
 * own bucket, raised behind another WG's later data, comes after it, and
 * with at most in_flight buckets out the pacer then waits for a bucket
 * that waits for the pacer.  So the program runs here on its events (as
 * ir_verify_progress: each WG in order, SIGs counting up, `in` always
 * released), with the pacer's rule: a bucket whose WG has reached its WAIT
 * is ready; while fewer than in_flight released buckets have not
 * signalled ev.took, the ready one needed first (key, then creation) gets
 * the next number and its WG goes on.  Each WAIT ev.bucket holds -(its
 * bucket's index + 1) until then.  FALSE (at the knob) when the cap stops
 * every WG. */
static gboolean number_capped(Ir *ir, GPtrArray *all, const Schedule *pp, int bucket, int took,
                              GError **err) {
  int nwg = sim_machine_wgs(&ir->hw);
  guint E = ir->events->len, K = ir->tasks->len;
  g_autofree GArray **tasks = g_new0(GArray *, nwg);
  g_autofree guint *tk = g_new0(guint, nwg), *at = g_new0(guint, nwg);
  g_autofree int64_t *count = g_new0(int64_t, E + 1);
  g_autofree GArray **waiting = g_new0(GArray *, E + 1);
  for (int w = 0; w < nwg; w++) tasks[w] = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint e = 0; e <= E; e++) waiting[e] = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint k = 0; k < K; k++) {
    int w = ir_task_at(ir, (int)k)->wg;
    if (w >= 0 && w < nwg && ir_task_at(ir, (int)k)->role.kind != ROLE_PACER)
      g_array_append_val(tasks[w], k);
  }
  g_autoptr(GArray) run = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GArray) ready = g_array_new(FALSE, FALSE, sizeof(int));
  for (int w = 0; w < nwg; w++) g_array_append_val(run, w);
  int64_t released = 0, finished = 0;
  gboolean ok = TRUE;
  for (;;) {
    while (run->len) { /* each runnable WG until it blocks, reaches a bucket or ends */
      int w = g_array_index(run, int, run->len - 1);
      g_array_set_size(run, run->len - 1);
      for (gboolean go = TRUE; go && tk[w] < tasks[w]->len;) {
        IrTask *t = ir_task_at(ir, g_array_index(tasks[w], int, tk[w]));
        for (; at[w] < t->ops->len; at[w]++) {
          IrOp *op = &g_array_index(t->ops, IrOp, at[w]);
          if (op->event <= 0 || (guint)op->event >= E) continue;
          if (op->kind == IR_SIG) {
            count[op->event] += op->n;
            if (op->event == took) finished += op->n;
            g_array_append_vals(run, waiting[op->event]->data, waiting[op->event]->len);
            g_array_set_size(waiting[op->event], 0);
          } else if (op->kind == IR_WAIT && op->event == bucket && op->n < 0) {
            int b = (int)(-op->n - 1);
            g_array_append_val(ready, b);
            go = FALSE;
            break;
          } else if (op->kind == IR_WAIT && count[op->event] < op->n) {
            g_array_append_val(waiting[op->event], w);
            go = FALSE;
            break;
          }
        }
        if (go) tk[w]++, at[w] = 0;
      }
    }
    if (ready->len == 0) break;
    if (released - finished >= pp->in_flight) {
      ir_error(ir, err, ir_prov(ir, "power.in_flight"),
               "power.in_flight=%d: every bucket out waits for work behind a bucket not yet "
               "released (a deadlock): raise power.in_flight, or 0 for no cap", pp->in_flight);
      ok = FALSE;
      break;
    }
    guint best = 0; /* the ready bucket needed first */
    for (guint i = 1; i < ready->len; i++) {
      Bucket *x = g_ptr_array_index(all, g_array_index(ready, int, i)),
             *y = g_ptr_array_index(all, g_array_index(ready, int, best));
      if (x->key < y->key || (x->key == y->key && x->seq < y->seq)) best = i;
    }
    Bucket *b = g_ptr_array_index(all, g_array_index(ready, int, best));
    g_array_remove_index_fast(ready, best);
    b->num = ++released;
    int w = ir_task_at(ir, b->task)->wg;
    IrOp *op = &g_array_index(ir_task_at(ir, b->task)->ops, IrOp, at[w]);
    op->n = b->num;
    count[bucket] = released;
    at[w]++;
    g_array_append_val(run, w);
  }
  /* buckets never reached (a WG stuck on something else): after the others,
   * in need order; the pipeline's progress check reports the deadlock */
  for (guint i = 0; i < all->len; i++) {
    Bucket *b = g_ptr_array_index(all, i);
    if (b->num <= 0) b->num = ++released;
  }
  for (int w = 0; w < nwg; w++) g_array_free(tasks[w], TRUE);
  for (guint e = 0; e <= E; e++) g_array_free(waiting[e], TRUE);
  return ok;
}

/* Paced by a WG: cut each task's loads into buckets; WAIT for the bucket's
 * release before its first load and SIG ev.took after its last load (before
 * the next bucket's WAIT, or at the task's end).  A bucket never spans
 * tasks.  Buckets are numbered in the order their data is needed, not in
 * program order: by the lowest stage of a task that reads what they load
 * (a preload's panels: the stage that first multiplies by them; a task's
 * own loads: its stage), ties in program order; along each WG's program the
 * numbers never decrease (a bucket takes at least its predecessor's), so
 * with in_flight a WG never waits for a bucket behind one it holds. */
static gboolean paced(Ir *ir, const Schedule *pp, IrProv prov, GError **err) {
  int ev = ir_event(ir, "bucket"), took = ir_event(ir, "took"), pacer_task = -1;
  g_autofree int64_t *need = first_reader(ir);
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *task = ir_task_at(ir, (int)k);
    if (task->role.kind == ROLE_PACER) {
      pacer_task = (int)k;
      continue;
    }
    Bucket *b = NULL;
    int64_t fill = 0;
    for (guint i = 0; i < task->ops->len; i++) {
      IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      int64_t bytes = HBM_LINE * lines(ir, op);
      if (!b || fill + bytes > pp->bucket_bytes) {
        if (b) b->end = i; /* its SIG right before the next bucket's WAIT */
        b = g_new0(Bucket, 1);
        b->task = (int)k, b->at = i, b->key = G_MAXINT64, b->seq = all->len;
        g_ptr_array_add(all, b);
        fill = 0;
      }
      fill += bytes;
      int64_t when = task->stage >= 0 ? task->stage : (op->d.t >= 0 ? need[op->d.t] : G_MAXINT64);
      if (when < b->key) b->key = when;
    }
    if (b) b->end = task->ops->len; /* the last bucket's SIG: at the task's end */
  }
  if (pacer_task < 0) {
    ir_error(ir, err, prov, "internal: power.pacing_wg is set but there is no pacer task");
    return FALSE;
  }
  /* numbers by need, then made monotone along each WG's program */
  g_autoptr(GPtrArray) order = g_ptr_array_new();
  for (guint i = 0; i < all->len; i++) g_ptr_array_add(order, g_ptr_array_index(all, i));
  qsort(order->pdata, order->len, sizeof(gpointer), by_key);
  for (guint i = 0; i < order->len; i++) ((Bucket *)g_ptr_array_index(order, i))->num = (int64_t)i + 1;
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int64_t *last = g_new0(int64_t, nwg);
  for (guint i = 0; i < all->len; i++) {
    Bucket *b = g_ptr_array_index(all, i);
    int wg = ir_task_at(ir, b->task)->wg;
    if (wg >= 0 && wg < nwg) {
      if (b->num < last[wg]) b->num = last[wg];
      last[wg] = b->num;
    }
  }
  /* raised numbers leave gaps, which the pacer would release with no
   * bucket to finish (with in_flight: a deadlock): renumber 1..M in
   * order, equal numbers staying equal, and count the buckets up to each */
  g_autofree int64_t *count = g_new0(int64_t, all->len + 1); /* by old number */
  for (guint i = 0; i < all->len; i++) count[((Bucket *)g_ptr_array_index(all, i))->num]++;
  g_autofree int64_t *dense = g_new0(int64_t, all->len + 1), *released = g_new0(int64_t, all->len + 1);
  int64_t numbers = 0;
  for (guint n = 1; n <= all->len; n++)
    if (count[n] > 0) {
      dense[n] = ++numbers;
      released[numbers] = released[numbers - 1] + count[n];
    }
  for (guint i = 0; i < all->len; i++) {
    Bucket *b = g_ptr_array_index(all, i);
    b->num = dense[b->num];
  }
  /* the ops, from each task's last bucket back (indices stay valid); with
   * in_flight, the WAITs hold -(bucket index + 1) for number_capped */
  gboolean capped = pp->in_flight > 0;
  for (guint i = all->len; i-- > 0;) {
    Bucket *b = g_ptr_array_index(all, i);
    IrTask *task = ir_task_at(ir, b->task);
    IrOp t = sync_op(IR_SIG, took, 1, prov), w = sync_op(IR_WAIT, ev, capped ? -(int64_t)i - 1 : b->num, prov);
    g_array_insert_val(task->ops, b->end, t);
    g_array_insert_val(task->ops, b->at, w);
  }
  if (capped) {
    for (guint i = 0; i < all->len; i++) ((Bucket *)g_ptr_array_index(all, i))->num = 0;
    if (!number_capped(ir, all, pp, ev, took, err)) return FALSE;
    for (guint k = 0; k < ir->tasks->len; k++) { /* the buckets number_capped did not reach */
      GArray *ops = ir_task_at(ir, (int)k)->ops;
      for (guint i = 0; i < ops->len; i++) {
        IrOp *op = &g_array_index(ops, IrOp, i);
        if (op->kind == IR_WAIT && op->event == ev && op->n < 0)
          op->n = ((Bucket *)g_ptr_array_index(all, (guint)(-op->n - 1)))->num;
      }
    }
    numbers = (int64_t)all->len; /* one bucket a number */
    for (int64_t k = 0; k <= numbers; k++) released[k] = k;
  }
  pacer(ir, pacer_task, pp, released, numbers, prov);
  return TRUE;
}

/* A load of more than a bucket is cut into loads of whole rows of at most
 * a bucket each (one row at least), in order, each with the load's
 * provenance (the pieces after the first: power.bucket_bytes'): a bucket is then what the pacing spaces, however the
 * lowering sized its loads (a resident panel's preload of 32 KiB is one LD
 * otherwise, which every WG issues at once).  Not an LD.mc, whose one read
 * feeds several WGs. */
static void split_task_loads(Ir *ir, IrTask *task, int64_t bucket, IrProv prov) {
  for (guint i = 0; i < task->ops->len; i++) {
    IrOp *op = &g_array_index(task->ops, IrOp, i);
    if (op->kind != IR_LD || op->ntargets > 0 || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
    int rows = op->mem.rows;
    int64_t bytes = HBM_LINE * lines(ir, op);
    if (bytes <= bucket || rows <= 1 || op->d.rows != rows) continue;
    int per = (int)MAX(1, bucket / ((bytes + rows - 1) / rows)); /* rows of a piece */
    if (per >= rows) continue;
    IrOp whole = *op;
    op->d.rows = op->mem.rows = per;
    for (int r = per; r < rows; r += per) {
      IrOp piece = whole;
      piece.d.r0 += r, piece.mem.r0 += r;
      piece.d.rows = piece.mem.rows = MIN(per, rows - r);
      piece.prov = prov; /* the pieces after the first: the bucket's */
      g_array_insert_val(task->ops, ++i, piece);
    }
  }
}

static void split_loads(Ir *ir, int64_t bucket, IrProv prov) {
  for (guint k = 0; k < ir->tasks->len; k++) split_task_loads(ir, ir_task_at(ir, (int)k), bucket, prov);
}

/* A (stage, WG) pair of stage_rate's: a WG that loads from HBM in a stage. */
typedef struct StageWg {
  int stage, wg;
} StageWg;

static int by_stage_wg(const void *a, const void *b) {
  const StageWg *x = a, *y = b;
  if (x->stage != y->stage) return (x->stage > y->stage) - (x->stage < y->stage);
  return (x->wg > y->wg) - (x->wg < y->wg);
}

/* The rate of a task's stage and, into *prov, the knob that set it:
 * power.stage_rate.STAGE where written (its role's kind of stage), else
 * power.stage_rate; 0: not paced. */
static int64_t rate_of(const Ir *ir, const IrTask *task, IrProv *prov) {
  int st = ir_role_space(task->role.kind);
  if (st >= 0 && ir->sched.stage_rates[st] > 0) {
    char path[40];
    g_snprintf(path, sizeof path, "power.stage_rate.%s", sched_space_name[st]);
    *prov = ir_prov(ir, path);
    return ir->sched.stage_rates[st];
  }
  *prov = ir_prov(ir, "power.stage_rate");
  return ir->sched.stage_rate;
}

/* power.stage_rate = R: a stage's HBM loads go at about R bytes a cycle,
 * however many WGs share them.  The loads are cut into pieces of at most
 * STAGE_RATE_BUCKET bytes (split_task_loads) and each WG's loads of a stage into
 * buckets of that many bytes (a bucket's bytes: its loads in its task).  A stage
 * whose loads are spread over n WGs gives each WG R / n bytes a cycle:
 * before each of its buckets but the first, a WG waits n x the bucket's
 * bytes / R cycles (WAITT), and before its first the WG of rank r among
 * the n (by WG number) waits r x the bucket's bytes / R, so that the n
 * start in turn instead of at once: a round robin at R.  The load pacing
 * of the other knobs slows every stage by one rate per WG, which a stage
 * on many WGs (D1's streamed W1, on every WG) passes through many times as
 * fast as a stage on few; this one caps each stage as a whole, and a stage
 * under the rate only waits its turns.  Tasks of no stage (stage < 0: the
 * preloads) count as one stage.  power.stage_rate.STAGE gives one kind of
 * stage (a task's role: its W2 tasks, say) a rate of its own (rate_of):
 * where the fitting finds a kind of stage cooler than the others, it
 * raises that kind's rate alone (docs/compiler.md). */
#define STAGE_RATE_BUCKET 4096
static void stage_rate(Ir *ir) {
  for (guint k = 0; k < ir->tasks->len; k++) { /* the paced tasks' loads, citing their rate */
    IrTask *task = ir_task_at(ir, (int)k);
    IrProv prov;
    if (rate_of(ir, task, &prov) > 0) split_task_loads(ir, task, STAGE_RATE_BUCKET, prov);
  }
  g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(StageWg));
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *task = ir_task_at(ir, (int)k);
    for (guint i = 0; i < task->ops->len; i++) {
      const IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      StageWg p = {MAX(task->stage, -1), task->wg};
      g_array_append_val(pairs, p);
      break;
    }
  }
  g_array_sort(pairs, by_stage_wg);
  guint u = 0; /* unique pairs */
  for (guint i = 0; i < pairs->len; i++)
    if (u == 0 || by_stage_wg(&g_array_index(pairs, StageWg, u - 1), &g_array_index(pairs, StageWg, i)) != 0)
      g_array_index(pairs, StageWg, u++) = g_array_index(pairs, StageWg, i);
  g_array_set_size(pairs, u);
  int nwg = sim_machine_wgs(&ir->hw);
  g_autofree int64_t *fill = g_new0(int64_t, nwg);
  g_autofree int *cur = g_new(int, nwg);
  for (int w = 0; w < nwg; w++) cur[w] = INT_MIN;
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *task = ir_task_at(ir, (int)k);
    int w = task->wg, stage = MAX(task->stage, -1);
    IrProv prov;
    int64_t rate = rate_of(ir, task, &prov);
    if (w < 0 || w >= nwg || rate <= 0) continue;
    int64_t rank = -1, n = 0; /* the WG's place among the stage's n loading WGs */
    for (guint i = 0; i < task->ops->len; i++) {
      IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      if (rank < 0) { /* the task loads: its pair is in `pairs` */
        StageWg key = {stage, w};
        const StageWg *p = bsearch(&key, pairs->data, pairs->len, sizeof(StageWg), by_stage_wg);
        guint at = (guint)(p - (const StageWg *)pairs->data), a = at, z = at;
        while (a > 0 && g_array_index(pairs, StageWg, a - 1).stage == stage) a--;
        while (z + 1 < pairs->len && g_array_index(pairs, StageWg, z + 1).stage == stage) z++;
        rank = at - a, n = z - a + 1;
      }
      gboolean first = cur[w] != stage;
      if (first || fill[w] >= STAGE_RATE_BUCKET) { /* a bucket starts here: its turn */
        int64_t b = 0; /* the bucket's bytes: its loads in this task up to STAGE_RATE_BUCKET */
        for (guint j = i; j < task->ops->len && b < STAGE_RATE_BUCKET; j++) {
          const IrOp *o = &g_array_index(task->ops, IrOp, j);
          if (o->kind == IR_LD && ir_tensor(ir, o->mem.t)->home == HOME_HBM) b += HBM_LINE * lines(ir, o);
        }
        int64_t wait = ((first ? rank : n) * b + rate - 1) / rate;
        cur[w] = stage, fill[w] = 0;
        if (wait > 0) {
          insert_wait(ir, task, i++, wait, prov);
          op = &g_array_index(task->ops, IrOp, i);
        }
      }
      fill[w] += HBM_LINE * lines(ir, op);
    }
  }
}

gboolean pass_pace(Ir *ir, GError **err) {
  const Schedule *pp = &ir->sched;
  gboolean rated = pp->stage_rate > 0;
  for (int st = 0; st < SPACE__COUNT; st++) rated |= pp->stage_rates[st] > 0;
  if (rated) stage_rate(ir);
  if (pp->bucket_bytes <= 0 || pp->event_interval <= 0) return TRUE;
  IrProv prov = ir_prov(ir, "power.bucket_bytes");
  split_loads(ir, pp->bucket_bytes, prov);
  if (pp->pacing_wg >= 0) return paced(ir, pp, prov, err);
  int64_t *fill = g_new0(int64_t, sim_machine_wgs(&ir->hw));
  gboolean *full = g_new0(gboolean, sim_machine_wgs(&ir->hw));
  for (guint k = 0; k < ir->tasks->len; k++) {
    IrTask *task = ir_task_at(ir, (int)k);
    for (guint i = 0; i < task->ops->len; i++) {
      IrOp *op = &g_array_index(task->ops, IrOp, i);
      if (op->kind != IR_LD || ir_tensor(ir, op->mem.t)->home != HOME_HBM) continue;
      if (full[task->wg]) {
        insert_wait(ir, task, i++, pp->event_interval, ir_prov(ir, "power.event_interval"));
        op = &g_array_index(task->ops, IrOp, i);
        full[task->wg] = FALSE;
        fill[task->wg] = 0;
      }
      fill[task->wg] += HBM_LINE * lines(ir, op);
      if (fill[task->wg] >= pp->bucket_bytes) full[task->wg] = TRUE;
    }
  }
  g_free(fill);
  g_free(full);
  return TRUE;
}
