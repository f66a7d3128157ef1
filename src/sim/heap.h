/* heap.h - how the commands (tcc-gen, tcc-sim, tcc-grade) set up their
 * process heap (heap.c). */
#ifndef TCC_HEAP_H
#define TCC_HEAP_H

/* Grow the heap in one large step backed by transparent huge pages where
 * the kernel offers them; call first thing in main().  Only hints. */
void heap_in_one_step(void);

#endif
