/* workload.h - the two problems (P1 prefill, D1 decode), their ABI memory
 * map, deterministic data, the double-precision reference and the check.
 * docs/workloads.md is the prose version of this file.
 */
#ifndef TCC_WORKLOAD_H
#define TCC_WORKLOAD_H

#include <glib.h>
#include <stdint.h>

typedef enum { PROB_D1, PROB_P1 } ProblemKind;

typedef struct Problem {
  ProblemKind kind;
  int d_model;  /* multiple of 32                                  */
  int heads;    /* head_dim = d_model / heads, must be 32          */
  int d_ff;     /* multiple of 32                                  */
  int layers;
  int history;  /* D1: cached positions before step 0 (mult. of 32) */
  int steps;    /* D1: decode steps                                */
  int seqs;     /* P1: sequences                                   */
  int rows;     /* P1: rows per sequence (multiple of 32)          */
} Problem;

/* What an ABI region holds; decides initialisation and checking. */
typedef enum {
  ABI_INPUT,   /* x_in: written by the host (D1: released per step) */
  ABI_WEIGHT,  /* parameters: read-only data                       */
  ABI_CACHE,   /* D1 k/v cache: history data + new rows to write    */
  ABI_OUTPUT,  /* written by the program, checked                   */
  ABI_SCRATCH, /* free for the program, never checked               */
} AbiKind;

typedef struct AbiSym {
  char name[32];   /* e.g. "wqkv.l0", "x_in", "scratch"             */
  AbiKind kind;
  uint64_t addr;   /* byte address in HBM, 4096-aligned              */
  uint64_t bytes;
  int rows, cols;  /* FP32 matrix shape, row-major                   */
} AbiSym;

typedef struct Abi {
  AbiSym *syms;    /* in address order                               */
  int n;
  uint64_t hbm_bytes; /* total HBM size = end of scratch             */
} Abi;

#define WL_SCRATCH_BYTES (8u << 20) /* the scratch area's minimum size  */
#define WL_HEAD_DIM 32 /* the width of an attention head: d_model = WL_HEAD_DIM * heads */
#define WL_TOLERANCE 1e-4 /* max abs error allowed on every checked value (spec v2; v1: 5e-4) */
#define WL_LN_EPS 1e-5

/* Defaults of the brief for a kind; setting a `.problem` key by name. */
void wl_problem_default(Problem *p, ProblemKind kind);
gboolean wl_problem_set(Problem *p, const char *key, long value, GError **err);
gboolean wl_problem_validate(const Problem *p, GError **err);
const char *wl_problem_name(ProblemKind kind); /* "d1" / "p1" */

/* The score (docs/workloads.md §7): 1000 * sqrt(P1_ref * D1_ref / (p1 *
 * d1)), with the reference cycles frozen in the spec (plans/baseline.yaml on
 * the default machine at spec v1; changing them breaks every score).  It is
 * a score only for the default dims. */
#define WL_SCORE_P1_REF 802528.0
#define WL_SCORE_D1_REF 124192.0
double wl_score(int64_t p1_cycles, int64_t d1_cycles);
/* The data seeds a program is graded on (docs/workloads.md §7), in the
 * order tcc-grade reports them; 7 is tcc-sim's --seed for grading. */
#define WL_GRADE_SEEDS {7, 13, 11, 23}

/* SplitMix64 (Steele, Lea, Flood 2014; docs/workloads.md §4): its output
 * function, and the step its state advances by.  The data's streams, and
 * tcc-tune's draws, which must not depend on GLib's G_RANDOM_VERSION. */
#define WL_GOLDEN 0x9E3779B97F4A7C15ull
uint64_t wl_mix64(uint64_t z);
/* Canonical `.problem` line (no newline). */
char *wl_problem_canonical(const Problem *p);

/* Bytes of `scratch` for a (valid) problem: WL_SCRATCH_BYTES, or for P1
 * 4*seqs*rows*(8*d_model + d_ff) when that is more (eight d_model-wide and
 * one d_ff-wide activation per row), rounded up to 4096. */
uint64_t wl_scratch_bytes(const Problem *p);
void wl_abi_build(const Problem *p, Abi *abi);
void wl_abi_clear(Abi *abi);
const AbiSym *wl_abi_lookup(const Abi *abi, const char *name);

/* Fill HBM (hbm_bytes/4 floats) for a seed: weights, history, NaN in outputs
 * and in the D1 cache rows the program must write, zero in scratch.  D1 input
 * rows are left NaN: the host releases them with wl_release_input(). P1 inputs
 * are written. */
void wl_init_hbm(const Problem *p, const Abi *abi, uint64_t seed, float *hbm);
/* D1: write input row `step` into x_in. */
void wl_release_input(const Problem *p, const Abi *abi, uint64_t seed, int step,
                      float *hbm);

typedef struct WlCheck {
  double max_abs_err;  /* over all checked values (inf if any NaN)   */
  char worst[64];      /* e.g. "out[3][17]" or "k_cache.l1[2][130][5]" */
  long checked;        /* number of values compared                  */
  long unwritten;      /* values still NaN                           */
  gboolean pass;       /* max_abs_err <= WL_TOLERANCE and unwritten == 0 */
} WlCheck;

/* Compare the program's outputs (final hidden rows and new K/V) against the
 * double-precision reference for this seed. */
void wl_check(const Problem *p, const Abi *abi, uint64_t seed, const float *hbm,
              WlCheck *out);
/* The same in two steps, so that a seed's reference can be computed once
 * and early (tcc-grade computes it while the timing runs): wl_check(.., seed,
 * hbm, out) is wl_check_ref(.., wl_reference(.., seed), hbm, out).
 * wl_reference computes on the calling thread alone (callers run seeds in
 * parallel); a WlRef is only read by wl_check_ref (threads may share it). */
typedef struct WlRef WlRef;
WlRef *wl_reference(const Problem *p, const Abi *abi, uint64_t seed);
void wl_check_ref(const Problem *p, const Abi *abi, const WlRef *ref, const float *hbm,
                  WlCheck *out);
void wl_reference_free(WlRef *ref);
/* Write the reference outputs (rounded to float) where the program must write
 * them (out and the new K/V): a correct HBM image for tests. */
void wl_write_reference(const Problem *p, const Abi *abi, uint64_t seed, float *hbm);

/* FOR TESTS ONLY -- never part of a run or a check.  Bug classes a program
 * could have, each a model that differs from the spec's in one way; the
 * tolerance is chosen so that wl_check rejects them (docs/workloads.md
 * section 6, tests/unit/test_workload.c). */
typedef enum {
  WL_DEV_NONE,        /* the spec's model (wl_write_reference)                  */
  WL_DEV_GELU_ERF,    /* GELU(z) = 0.5 z (1 + erf(z/sqrt 2)), not the tanh form  */
  WL_DEV_LN_EPS_1E6,  /* LayerNorm epsilon 1e-6 instead of WL_LN_EPS            */
  WL_DEV_LN_EPS_1E3,  /* LayerNorm epsilon 1e-3 (Keras's default)               */
  WL_DEV_SCALE_33,    /* scores scaled by 1/sqrt(33) instead of 1/sqrt(32)      */
  WL_DEV_DROP_BO,     /* the attention projection's bias bo omitted             */
  WL_DEV_DROP_B2,     /* the FFN output bias b2 omitted                         */
  WL_DEV_MASK_NEXT,   /* P1 only: row i also sees row i+1 of its sequence       */
  WL_DEV_MASK_SELF,   /* a row does not see its own position (P1's row 0 sees
                         nothing: its attention output is 0)                   */
  WL_DEV_COUNT
} WlDeviation;

/* A deviation's short name ("gelu-erf", ...); "?" when out of range. */
const char *wl_deviation_name(WlDeviation dev);
/* Whether a program of problem p could have the bug (FALSE for mask-next on
 * D1: a step cannot see the next one, whose input is not yet released). */
gboolean wl_deviation_applies(const Problem *p, WlDeviation dev);
/* FOR TESTS ONLY: compute the outputs of the deviating model `dev` in double
 * (exactly as the reference, rounded to float once) and write them where a
 * program writes them (out; P1 k_out/v_out; D1 cache rows
 * history..history+steps-1).  WL_DEV_NONE is wl_write_reference. */
void wl_write_deviant(const Problem *p, const Abi *abi, uint64_t seed, WlDeviation dev,
                      float *hbm);

#define WL_ERROR (wl_error_quark())
GQuark wl_error_quark(void);

#endif
