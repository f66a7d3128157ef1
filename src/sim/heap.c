/* heap.c - the commands' heap setup (heap.h).
 *
 * A full D1 or P1 plan's IR takes ~10 MiB of small allocations in tcc-gen,
 * a simulation much more; on a paravirtualised VM the page faults of
 * touching that memory a 4 KiB page at a time were ~35% of tcc-gen's time
 * (perf: 2,520 faults, 56 -> 37 ms of CPU for plans/best.yaml's D1).  So
 * the heap grows in one step of HEAP_STEP bytes (every allocation from the
 * heap, not mmap; never trimmed back) and the step is marked for
 * transparent huge pages (MADV_HUGEPAGE: the kernel's default THP mode is
 * often "madvise"), so that a fault maps 2 MiB.  Both are hints: if the C
 * library or the kernel ignores them, nothing else changes (the output
 * never depends on where memory is).  tcc-sim too: its big arrays were
 * hinted one by one (sim_huge_hint), but the assembler's fixups and the
 * engine's many medium arrays were faulted in 4 KiB pages: plans/best.yaml's
 * P1, 512 -> 377 ms with numerics, 247 -> 218 ms timing only; the bench
 * program 202 -> 181 ms (interleaved medians). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "heap.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void heap_in_one_step(void) { heap_setup(64u << 20, FALSE); }

/* The heap as heap_in_one_step sets it up, in steps of `step` bytes (a
 * multiple of 2 MiB); with `one_arena`, every thread allocates from it
 * (M_ARENA_MAX 1: glibc otherwise gives each thread an arena of its own,
 * mapped 4 KiB page by page and never marked for huge pages, so memory that
 * one thread frees is faulted in afresh by the next).  tcc-grade's threads
 * allocate tens of MiB per check: one arena took its page faults from
 * ~25,000 to ~1,000 per grade of plans/best.yaml. */
void heap_setup(size_t step, gboolean one_arena) {
#if defined(M_TOP_PAD) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD) && defined(MADV_HUGEPAGE)
  enum { HUGE_PAGE = 2 << 20 };
  if (one_arena) mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, (int)step);
  mallopt(M_TRIM_THRESHOLD, (int)step);
  mallopt(M_TOP_PAD, (int)step);
  void *p = malloc(HUGE_PAGE); /* the heap grows by step */
  if (!p) return;
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  (void)madvise((void *)lo, step - 2 * HUGE_PAGE, MADV_HUGEPAGE);
  free(p);
#else
  (void)step;
  (void)one_arena;
#endif
}
