/* project.h - a projection panel with streamed weights (project.c). */
#ifndef TCC_LOWER_PROJECT_H
#define TCC_LOWER_PROJECT_H

#include "builder.h"

/* A projection's A operand (project.c): resident in the RF (`rf`, sym
 * NULL), or streamed from HBM symbol `sym` (rows row.., columns col.., row
 * stride `stride`) chunk by chunk beside W, for RF budgets that cannot hold
 * all of A. */
typedef struct LwSource {
  IrView rf;
  const char *sym;
  int row, col, stride;
  IrProv prov;
  gboolean packed;  /* resident_owners.c: A packed (LwMat: base col, width stride) */
} LwSource;
/* acc (R x P) = A (R x K) . W[0..K rows, cols c0..c0+P) of HBM symbol `wsym`
 * (row stride `wstride`), loading W in chunks of p->k_chunk rows through
 * stream_depth buffers (project.c). */
void lw_project(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                int wstride, int c0, IrView acc, const LwProj *p);
/* The same with W's rows from wrow0 on: acc = A . W[wrow0..wrow0+K, c0..c0+P)
 * (a K shard of a streamed panel). */
void lw_project_rows(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym,
                     int wrow0, int wstride, int c0, IrView acc, const LwProj *p);

/* lw_project_rows in two halves, so that a task can load its first chunks
 * before anything else (stream_prefetch: before it waits for its input):
 * begin sizes the chunks and buffers (leaving `reserve` partitions of the
 * task's room for what it makes after them) and loads the first chunks,
 * one per buffer; finish multiplies chunk by chunk (A: the source given to
 * begin, or its RF operand now) and loads the rest.  lw_project_rows is
 * begin (reserve 2: the bias and the residual) then finish. */
typedef struct LwStream {
  int task, K, R, P, kc, nb, nc, wrow0, wstride, c0;
  gboolean a_streams;
  char wsym[32];     /* W's HBM symbol ("w2.l1")                       */
  LwProj p;
  int w[8], abuf[8];
} LwStream;
void lw_stream_begin(Ir *ir, int task, const char *tag, const LwSource *a, int K, const char *wsym, int wrow0,
                     int wstride, int c0, int R, int P, const LwProj *p, int reserve, LwStream *st);
void lw_stream_finish(Ir *ir, const LwStream *st, const LwSource *a, IrView acc);

/* d (R x C) = a + (row-broadcast) bias loaded from `bsym` columns c0.. */
void lw_add_bias(Ir *ir, int task, const char *tag, IrView acc, const char *bsym, int c0,
                 IrProv prov);

#endif
