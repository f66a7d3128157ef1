/* bounds.c - lower bounds on a program's cycles (docs/bounds.md, which shows
 * the arithmetic for the default machine).
 *
 *   mma    the problem's products at block granularity over every array
 *   hbm    every needed line through its channel, plus one load's latency
 *   power  the unavoidable dynamic energy (the products, the lines, the
 *          elementwise work) over the windows the run must have
 *   chain  D1: the load, then per step host -> LD -> compute chain -> ST,
 *          or host -> the lines a step must load again -> ST where the
 *          weights and the history do not fit in the RFs and SHs
 *   sfu    the transcendental elements over every SM's SFU lanes, between
 *          the first load and the last store
 *
 * The bound is the largest.  Every constant is a spec constant of machine.h
 * or a machine parameter; the docs say why each term cannot be avoided. */
#include "bounds.h"

#include <math.h>
#include <string.h>

const char *const sim_bound_name[BOUND__COUNT] = {"mma", "hbm", "power", "chain", "sfu"};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Issue -> completion of a one-line LD from HBM (setup, the channel, its
 * latency, one NoC slot and its latency, one RF write, the completion
 * cycle); an ST to HBM takes the same stages in the other order
 * (docs/machine.md §4, dma.c). */
static int64_t io_latency(void) { return T_DMA_SETUP + T_HBM_LATENCY + T_NOC_LATENCY + 3; }

/* ---- work counts ----------------------------------------------------- */

/* The problem's products: 32x32x32 blocks and multiply-adds.  Causal P1
 * attention counts the blocks on or below the diagonal (and the exact
 * triangle of MACs); D1 step t attends over history + t + 1 positions. */
static void products(const Problem *p, int64_t *blocks, double *macs) {
  int64_t d = p->d_model, f = p->d_ff, h = p->heads, hd = WL_HEAD_DIM;
  int64_t db = d / 32, fb = f / 32, bl = 0;
  double mac = 0;
  if (p->kind == PROB_P1) {
    int64_t rows = (int64_t)p->seqs * p->rows, rb = rows / 32, n = p->rows / 32;
    int64_t dense = rb * db * 3 * db + rb * db * db + 2 * rb * db * fb; /* QKV, WO, W1, W2 */
    int64_t causal = 2 * (int64_t)p->seqs * h * (n * (n + 1) / 2);        /* QK^T and PV */
    bl = p->layers * (dense + causal);
    double tri = (double)p->rows * (p->rows + 1) / 2.0;
    mac = p->layers * ((double)rows * d * (3 * d + d + 2 * f) + 2.0 * p->seqs * h * tri * hd);
  } else {
    for (int t = 0; t < p->steps; t++) {
      int64_t pos = p->history + t + 1;
      bl += p->layers * (db * 3 * db + db * db + 2 * db * fb + 2 * h * cdiv(pos, 32));
      mac += p->layers * ((double)d * (3 * d + d + 2 * f) + 2.0 * h * pos * hd);
    }
  }
  *blocks = bl;
  *macs = mac;
}

/* What every program computes element by element beside the products
 * (docs/bounds.md §3):
 *   sfu      the transcendental elements: an exp per score a row sees, a
 *            tanh per FFN activation, an rsqrt per LayerNorm row;
 *   acts     the FFN activations, each taken through GELU;
 *   adds     the softmax's additions: a row that sees n positions sums its
 *            n exps, n - 1 additions;
 *   ln_rows  the LayerNorm rows, each with the variance of its d values. */
typedef struct Elementwise {
  double sfu, acts, adds, ln_rows;
} Elementwise;

static void elementwise(const Problem *p, Elementwise *w) {
  memset(w, 0, sizeof *w);
  if (p->kind == PROB_P1) {
    double rows = (double)p->seqs * p->rows, n = p->rows;
    double seen = p->seqs * p->heads * n * (n + 1) / 2.0; /* causal: row i sees i + 1 */
    w->sfu = p->layers * (seen + rows * p->d_ff + 2 * rows);
    w->acts = p->layers * rows * p->d_ff;
    w->adds = p->layers * p->seqs * p->heads * n * (n - 1) / 2.0;
    w->ln_rows = p->layers * 2 * rows;
  } else {
    for (int t = 0; t < p->steps; t++) {
      double pos = p->history + t + 1;
      w->sfu += p->layers * (p->heads * pos + p->d_ff + 2);
      w->acts += p->layers * (double)p->d_ff;
      w->adds += p->layers * p->heads * (pos - 1);
      w->ln_rows += p->layers * 2.0;
    }
  }
}

/* ---- HBM lines ------------------------------------------------------- */

/* Lines of byte ranges, counted per channel. */
typedef struct Lines {
  int64_t *chan;   /* lines per channel */
  int nch;
  int64_t lines, bytes;
} Lines;

/* Lines first..last go round the channels: each channel gets n / nch of
 * them and the rem = n % nch channels from first's on get one more, counted
 * per channel rather than per line (tcc-census evaluates thousands of
 * machines). */
static void add_range(Lines *l, uint64_t addr, uint64_t len) {
  uint64_t first = addr / HBM_LINE, n = (addr + len - 1) / HBM_LINE - first + 1;
  uint64_t nch = (uint64_t)l->nch, each = n / nch, rem = n % nch;
  for (uint64_t c = 0; c < nch; c++) l->chan[c] += (int64_t)each;
  for (uint64_t k = 0; k < rem; k++) l->chan[(first + k) % nch]++;
  l->lines += (int64_t)n;
  l->bytes += (int64_t)len;
}

static int64_t busiest(const Lines *l) {
  int64_t m = 0;
  for (int c = 0; c < l->nch; c++) m = MAX(m, l->chan[c]);
  return m;
}

/* The lines a program must move: every weight; x_in and out (D1 with
 * step0: only x_in row 0, no outputs); P1's K/V outputs; D1's history rows
 * (read) and new rows (written, not for step0) of every cache. */
static void needed_lines(const Problem *p, const Abi *abi, gboolean step0, Lines *l) {
  uint64_t kv_row = 4u * WL_HEAD_DIM;
  for (int i = 0; i < abi->n; i++) {
    const AbiSym *s = &abi->syms[i];
    switch (s->kind) {
    case ABI_WEIGHT: add_range(l, s->addr, s->bytes); break;
    case ABI_INPUT: add_range(l, s->addr, step0 ? 4u * (uint64_t)p->d_model : s->bytes); break;
    case ABI_OUTPUT:
      if (!step0) add_range(l, s->addr, s->bytes);
      break;
    case ABI_CACHE:
      for (int j = 0; j < p->heads; j++) {
        uint64_t head = s->addr + kv_row * (uint64_t)j * (uint64_t)(p->history + p->steps);
        if (p->history > 0) add_range(l, head, kv_row * (uint64_t)p->history);
        if (!step0) add_range(l, head + kv_row * (uint64_t)p->history, kv_row * (uint64_t)p->steps);
      }
      break;
    case ABI_SCRATCH: break;
    }
  }
}

/* Lines on the busiest channel -> the earliest cycle the last of them is
 * loaded into an RF and usable: the first request goes out T_DMA_SETUP after
 * an issue at cycle 0, a channel serves one line per cycle, the last line's
 * LD completes io_latency - T_DMA_SETUP after its channel cycle. */
static int64_t lines_loaded(int64_t n) { return n > 0 ? n - 1 + io_latency() : 0; }

/* The same when the last line may be a store, whose descriptor completes
 * T_HBM_LATENCY + 1 after its channel cycle. */
static int64_t lines_done(int64_t n) { return n > 0 ? T_DMA_SETUP + n - 1 + T_HBM_LATENCY + 1 : 0; }

/* ---- power ----------------------------------------------------------- */

/* GELU's VEC products per FFN activation z: the tanh's argument
 * sqrt(2/pi) (z + 0.044715 z^3) is a cubic of z (one product of two values
 * of z reaches z^2, a second z^3), and z times 1 + tanh is a third
 * (docs/bounds.md §3). */
#define GELU_PRODUCTS 3

/* Dynamic energy E (pJ) must fit in the windows that cover the run: the
 * windows [0,1000), [1000,2000), ... and the last one ending at the last
 * cycle cover it, each holds at most dyn_w * 1000 cycles of energy, so a run
 * of C cycles needs ceil(C/1000) >= E / (dyn_w * 1000 cycles). */
static int64_t power_cycles(double e_pj, double dyn_w) {
  if (dyn_w <= 0) return 0; /* static power alone is over the limit */
  double per_window = dyn_w * 1e3 * POWER_WINDOW; /* W = 1e3 pJ per cycle */
  int64_t n = (int64_t)ceil(e_pj / per_window);
  return n <= 1 ? 1 : (n - 1) * POWER_WINDOW + 1;
}

/* ---- D1: what a step must load again ----------------------------------- */

/* Every byte the machine can hold between two steps: every WG's RF and
 * every SM's SH.  Data in flight counts against the range it lands in,
 * which no instruction may touch until it lands (docs/machine.md §3). */
static int64_t onchip_bytes(const Machine *m) {
  return (int64_t)m->sms * ((int64_t)m->wgs_per_sm * m->rf_kib + m->sh_kib) * 1024;
}

/* What step t (>= 1) needs in an RF after its row is released: every
 * weight matrix, and the K and V rows of every position before it, of every
 * layer and head (docs/bounds.md §4): matrices + per_pos x (history + t)
 * bytes.  Not the vectors (biases, LayerNorm gains): a program may fold one
 * into a matrix or into another.  Over what the machine holds (onchip), in
 * whole lines, is what the step loads again. */
typedef struct Reload {
  int64_t matrices, per_pos, onchip;
} Reload;

static Reload reload_of(const Machine *m, const Problem *p, const Abi *abi) {
  Reload r = {0, 0, onchip_bytes(m)};
  for (int i = 0; i < abi->n; i++) {
    const AbiSym *s = &abi->syms[i];
    if (s->kind == ABI_WEIGHT && s->rows > 1 && s->cols > 1) r.matrices += (int64_t)s->bytes;
    if (s->kind == ABI_CACHE) r.per_pos += 4 * WL_HEAD_DIM * (int64_t)p->heads;
  }
  return r;
}

static int64_t step_need(const Reload *r, const Problem *p, int t) {
  return r->matrices + r->per_pos * (int64_t)(p->history + t);
}

static int64_t reload_bytes(const Reload *r, const Problem *p, int t) {
  return MAX(0, step_need(r, p, t) - r->onchip);
}

/* ---- the D1 chain ---------------------------------------------------- */

/* The compute chain of D1 step t, input row in an RF -> output row in an
 * RF, per layer: a product (scores), exp of every score (spread over every
 * SM's SFU), a product (x1 and the FFN input), LN2's variance (a multiply
 * and a row sum), rsqrt, two vector ops (scale, GELU's cube term), tanh of
 * every activation, one vector op (z * tanh); then the last layer's output
 * product.  Products are MMA blocks; each VEC op takes at least a cycle. */
static int64_t step_compute(const Machine *m, const Problem *p, int t) {
  int64_t sfu = (int64_t)m->sms * m->sfu;
  int64_t lg = (int64_t)log2(m->vl);
  int64_t exps = cdiv((int64_t)p->heads * (p->history + t + 1), sfu);
  int64_t var = 1 + (1 + lg); /* VEC.mul, VEC.rsum of one vector-width chunk */
  int64_t rsqrt = 1, vec = 1, tanh = cdiv(p->d_ff, sfu);
  int64_t layer = T_MMA_BLOCK + exps + T_MMA_BLOCK + var + rsqrt + 2 * vec + tanh + vec;
  return p->layers * layer + T_MMA_BLOCK;
}

/* The end of the last step: step 0's output is stored no earlier than its
 * chain after the first release or than the last line it needs plus an
 * ST; each later step starts T_HOST_LATENCY after the previous output and
 * takes its chain, or the lines it must load again (issued after the
 * release) and an ST, whichever is longer. */
static int64_t d1_chain(const Machine *m, const Problem *p, const Abi *abi, const Reload *r, Bounds *b) {
  Lines l = {g_new0(int64_t, m->hbm_channels), m->hbm_channels, 0, 0};
  needed_lines(p, abi, TRUE, &l);
  b->load_ready = lines_loaded(busiest(&l));
  g_free(l.chan);
  b->step_compute = step_compute(m, p, 0);
  b->step_period = T_HOST_LATENCY + b->io_latency + b->step_compute + b->io_latency;
  int64_t out = MAX(b->step_period, b->load_ready + b->io_latency);
  for (int t = 1; t < p->steps; t++) {
    int64_t chain = b->io_latency + step_compute(m, p, t) + b->io_latency;
    int64_t busy = cdiv(cdiv(reload_bytes(r, p, t), HBM_LINE), m->hbm_channels);
    out += T_HOST_LATENCY + MAX(chain, busy > 0 ? lines_loaded(busy) + b->io_latency : 0);
  }
  return out;
}

/* ---- all ------------------------------------------------------------- */

void sim_bounds(const Machine *m, const Problem *p, Bounds *b) {
  memset(b, 0, sizeof *b);
  Abi abi;
  wl_abi_build(p, &abi);
  double macs;
  products(p, &b->mma_blocks, &macs);
  b->mma_arrays = m->sms * m->mma_arrays;
  b->cycles[BOUND_MMA] = cdiv(b->mma_blocks * T_MMA_BLOCK, b->mma_arrays);

  Lines l = {g_new0(int64_t, m->hbm_channels), m->hbm_channels, 0, 0};
  needed_lines(p, &abi, FALSE, &l);
  b->hbm_lines = l.lines;
  b->hbm_bytes = l.bytes;
  b->hbm_busiest = busiest(&l);
  g_free(l.chan);
  /* D1: the weights and history over what the machine holds, again each
   * step after the first (docs/bounds.md §4) */
  Reload rl = reload_of(m, p, &abi);
  b->onchip_bytes = rl.onchip;
  if (p->kind == PROB_D1) {
    b->step_need_bytes = step_need(&rl, p, p->steps - 1);
    for (int t = 1; t < p->steps; t++) {
      int64_t over = reload_bytes(&rl, p, t);
      b->reload_lines += cdiv(over, HBM_LINE);
      b->reload_bytes += over;
    }
  }
  int64_t spread = cdiv(b->hbm_lines + b->reload_lines, m->hbm_channels);
  b->cycles[BOUND_HBM] = lines_done(MAX(b->hbm_busiest, spread));

  /* energy: MMA blocks; HBM lines; each moved byte once over a NoC link and
   * once through an RF port; the MMA operands' RF bytes (at least
   * 12 MACs / sqrt(RF floats), docs/bounds.md); the SFU elements; the
   * elementwise work's VEC elements and RF bytes (below) */
  double rf_floats = (double)m->rf_kib * 256.0;
  b->e_mma_uj = (double)b->mma_blocks * E_MMA_BLOCK * 1e-6;
  double moved = (double)(b->hbm_bytes + b->reload_bytes);
  b->e_hbm_uj = (double)(b->hbm_lines + b->reload_lines) * E_HBM_LINE * 1e-6;
  b->e_noc_uj = moved * E_NOC_BYTE * 1e-6;
  double rf_bytes = moved + 12.0 * macs / sqrt(rf_floats);

  /* the elementwise work (docs/bounds.md §3): an SFU element reads its
   * operand and writes its result, 8 RF bytes; a VEC product of two values
   * of one element (GELU's, the variance's) is a VEC element that reads both
   * and writes one, 12 bytes; a softmax addition is a VEC element or a
   * REDUCE float and reads its addend, 4 bytes; a variance's addition can
   * ride on a product (VEC.fma) but still reads its addend, 4 bytes */
  Elementwise w;
  elementwise(p, &w);
  double e_add = MIN(E_VEC_ELEM, E_RED_ELEM);
  double gelu = w.acts * GELU_PRODUCTS;
  double var = w.ln_rows * (p->d_model - 1), var_adds = w.ln_rows * (p->d_model - 2);
  double sfu_rf = 8.0 * w.sfu, gelu_rf = 12.0 * gelu, sums_rf = 4.0 * w.adds, var_rf = 12.0 * var + 4.0 * var_adds;
  b->e_sfu_rf_uj = sfu_rf * E_RF_BYTE * 1e-6;
  b->e_gelu_uj = (gelu * E_VEC_ELEM + gelu_rf * E_RF_BYTE) * 1e-6;
  b->e_sums_uj = (w.adds * e_add + sums_rf * E_RF_BYTE) * 1e-6;
  b->e_var_uj = (var * E_VEC_ELEM + var_rf * E_RF_BYTE) * 1e-6;
  rf_bytes += sfu_rf + gelu_rf + sums_rf + var_rf;

  b->e_rf_uj = rf_bytes * E_RF_BYTE * 1e-6;
  b->e_vec_uj = ((gelu + var) * E_VEC_ELEM + w.adds * e_add) * 1e-6;
  b->e_sfu_uj = w.sfu * E_SFU_ELEM * 1e-6;
  b->e_total_uj = b->e_mma_uj + b->e_hbm_uj + b->e_noc_uj + b->e_rf_uj + b->e_vec_uj + b->e_sfu_uj;
  b->dyn_w = POWER_LIMIT_W - sim_machine_static_w(m);
  b->power_time = b->dyn_w > 0 ? b->e_total_uj * 1e3 / b->dyn_w : 0;
  b->cycles[BOUND_POWER] = power_cycles(b->e_total_uj * 1e6, b->dyn_w);

  /* every SFU element depends on a loaded input, and every output that
   * depends on one is stored after it: an LD before the first, an ST after
   * the last (docs/bounds.md §5) */
  b->io_latency = io_latency();
  b->sfu_elems = (int64_t)w.sfu;
  b->sfu_lanes = m->sms * m->sfu;
  b->cycles[BOUND_SFU] = b->io_latency + cdiv(b->sfu_elems, b->sfu_lanes) + b->io_latency;

  if (p->kind == PROB_D1) b->cycles[BOUND_CHAIN] = d1_chain(m, p, &abi, &rl, b);
  wl_abi_clear(&abi);

  b->binding = BOUND_MMA;
  for (int k = 1; k < BOUND__COUNT; k++)
    if (b->cycles[k] > b->cycles[b->binding]) b->binding = (BoundKind)k;
  b->bound = b->cycles[b->binding];
}
