/* bounds.h - lower bounds on the cycles of any program for a problem on a
 * machine (docs/bounds.md): the MMA work, the HBM lines, the power budget,
 * the SFU's elements and, for D1, the per-step dependency chain.  Every figure comes from the
 * machine's parameters, the spec constants of machine.h and the problem's
 * dims; nothing depends on a program. */
#ifndef TCC_BOUNDS_H
#define TCC_BOUNDS_H

#include <stdint.h>

#include "machine.h"
#include "workload.h"

/* ORDER-MATTERS: ties for the binding bound go to the first in this order. */
typedef enum { BOUND_MMA, BOUND_HBM, BOUND_POWER, BOUND_CHAIN, BOUND_SFU, BOUND__COUNT } BoundKind;
extern const char *const sim_bound_name[BOUND__COUNT]; /* "mma", "hbm", "power", "chain", "sfu" */

typedef struct Bounds {
  int64_t cycles[BOUND__COUNT]; /* each bound; 0 = does not apply (chain on P1,
                                   power when static power alone is over the limit) */
  BoundKind binding;            /* the largest                                 */
  int64_t bound;                /* cycles[binding]                             */
  /* MMA work: the problem's products in 32x32x32 blocks (causal blocks only) */
  int64_t mma_blocks;
  int mma_arrays;               /* sms * mma_arrays                            */
  /* HBM: every weight once, the inputs, the outputs (D1: history read, new
   * K/V written); the HBM bound adds reload_lines */
  int64_t hbm_lines, hbm_bytes;
  int64_t hbm_busiest;          /* lines on the busiest channel                */
  /* D1: what the machine holds between steps (every RF and SH), what the
   * last step needs in an RF after its release (every weight, every earlier
   * K/V row), and what steps 1.. must load again beyond the first, in all */
  int64_t onchip_bytes, step_need_bytes;
  int64_t reload_lines, reload_bytes;
  /* unavoidable dynamic energy, uJ, by unit class (docs/bounds.md §3 lists
   * what is counted) */
  double e_mma_uj, e_hbm_uj, e_noc_uj, e_rf_uj, e_vec_uj, e_sfu_uj, e_total_uj;
  /* the elementwise work's parts of e_rf_uj and e_vec_uj: the SFU elements'
   * operands and results (RF); GELU's products, the softmax's sums and the
   * LayerNorm variances (VEC and RF each) */
  double e_sfu_rf_uj, e_gelu_uj, e_sums_uj, e_var_uj;
  double dyn_w;                 /* POWER_LIMIT_W - static power                */
  double power_time;            /* e_total / dyn_w, cycles (not rounded)       */
  int64_t io_latency;           /* an LD from HBM, or an ST to it: issue -> done */
  /* D1 chain */
  int64_t step_compute;         /* the step's compute chain (step 0)           */
  int64_t step_period;          /* host + LD + compute + ST, one step          */
  int64_t load_ready;           /* every line step 0 needs is in an RF          */
  /* SFU: the transcendental elements (an exp per score a row sees, a tanh
   * per FFN activation, an rsqrt per LayerNorm row) over every SM's lanes,
   * after the first load and before the last store */
  int64_t sfu_elems;
  int sfu_lanes;                /* sms * sfu                                   */
} Bounds;

/* The bounds of problem p on machine m (both valid). */
void sim_bounds(const Machine *m, const Problem *p, Bounds *b);

#endif
