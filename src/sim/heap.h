/* heap.h - how the commands (tcc-gen, tcc-sim, tcc-grade) set up their
 * process heap (heap.c). */
#ifndef TCC_HEAP_H
#define TCC_HEAP_H

#include <stddef.h>

#include <glib.h>

/* Grow the heap in one large step backed by transparent huge pages where
 * the kernel offers them; call first thing in main().  Only hints. */
void heap_in_one_step(void);

/* The same in steps of `step` bytes (a multiple of 2 MiB, below 2 GiB),
 * and with `one_arena` one heap for every thread (heap.c says why). */
void heap_setup(size_t step, gboolean one_arena);

#endif
