/* evq.h - the simulator's event queue.  Events leave in the order of
 * (time, WG wake-ups after every other kind, insertion): the engine's one
 * order of everything (sim.c).
 *
 * Most events land a few cycles after the clock (a WG's next issue, a SIG,
 * a transfer's completion), so the queue is a timing wheel: one slot per
 * cycle of a window [cur, cur + EVQ_SLOTS) after the last event popped,
 * each slot a FIFO per kind (insertion order is the order), and a bitmap of
 * the slots in use; pushing and popping cost a few word operations instead
 * of a heap's log n compares and moves.  Events beyond the window wait in a
 * binary heap; a pop takes the smaller of the two candidates by the full
 * order, so the order never depends on where an event waited.
 */
#ifndef TCC_EVQ_H
#define TCC_EVQ_H

#include <glib.h>
#include <stdint.h>

typedef enum { EV_XFER, EV_SIG, EV_HOST, EV_WG } EvType;
typedef struct Event {
  int64_t t;
  uint64_t seq;       /* ties: insertion order (kind folded in: WG last)   */
  EvType type;
  int a;              /* xfer index / event id / step / wg                 */
  int64_t n;
  int snap;           /* EV_SIG: the signaller's clock (Sim.snaps), or -1  */
} Event;

enum { EVQ_SLOTS = 4096 }; /* a power of two */

typedef struct EvNode {
  Event e;
  int next;           /* the next node of the slot's FIFO, or -1           */
} EvNode;

/* One cycle of the wheel: per kind (0: not a WG wake-up, 1: a WG wake-up)
 * the FIFO of its events as first and last node (-1: empty). */
typedef struct EvSlot {
  int head[2], tail[2];
} EvSlot;

typedef struct EvQueue {
  int64_t cur;        /* the wheel's window: [cur, cur + EVQ_SLOTS)        */
  EvSlot *slot;       /* EVQ_SLOTS, cycle t in slot t % EVQ_SLOTS          */
  uint64_t *busy;     /* bit per slot: holds an event                      */
  int nwheel;         /* events in the wheel                               */
  int64_t first;      /* the wheel's earliest event time (INT64_MAX: none), */
  gboolean first_ok;  /* valid when first_ok: a WG asks after every issue  */
  EvNode *node;       /* the wheel's nodes, with a free list               */
  int nnode, capnode, free;
  Event *heap;        /* events past the window: binary heap               */
  int nheap, capheap;
  uint64_t seq;
} EvQueue;

void evq_init(EvQueue *q);
void evq_free(EvQueue *q);
/* Add `e` (its seq is assigned here).  e.t may be any time at or after the
 * last event popped. */
void evq_push(EvQueue *q, Event e);
/* evq_add's slow paths (evq.c): an event outside the window (the heap);
 * a new node when the free list is empty. */
void evq_add_heap(EvQueue *q, int64_t t, uint64_t seq, EvType type, int a, int64_t n, int snap);
int evq_node_new(EvQueue *q);
/* evq_push of the event with these fields (the engine's: no Event copied).
 * Inline: every issue that stalls or yields comes here. */
static inline void evq_add(EvQueue *q, int64_t t, EvType type, int a, int64_t cnt, int snap) {
  uint64_t seq = q->seq++;
  if (t < q->cur || t - q->cur >= EVQ_SLOTS) { /* outside the window */
    evq_add_heap(q, t, seq, type, a, cnt, snap);
    return;
  }
  int n = q->free;
  if (n >= 0)
    q->free = q->node[n].next;
  else
    n = evq_node_new(q);
  /* the fields one by one: an Event built on the caller's stack and
   * copied whole cost the engine a store-forwarding stall per event */
  EvNode *nd = &q->node[n];
  nd->e.t = t;
  nd->e.seq = seq;
  nd->e.type = type;
  nd->e.a = a;
  nd->e.n = cnt;
  nd->e.snap = snap;
  nd->next = -1;
  int i = (int)(t & (EVQ_SLOTS - 1)), kind = type == EV_WG;
  EvSlot *sl = &q->slot[i];
  if (sl->head[kind] < 0)
    sl->head[kind] = n;
  else
    q->node[sl->tail[kind]].next = n;
  sl->tail[kind] = n;
  q->busy[i >> 6] |= 1ull << (i & 63);
  q->nwheel++;
  if (q->first_ok && t < q->first) q->first = t;
}
static inline gboolean evq_empty(const EvQueue *q) { return q->nwheel == 0 && q->nheap == 0; }
/* The time of the first event (INT64_MAX when empty). */
int64_t evq_min_t_slow(EvQueue *q);
static inline int64_t evq_min_t(EvQueue *q) {
  if (!q->first_ok) return evq_min_t_slow(q); /* the wheel's earliest slot emptied */
  int64_t t = q->first;
  if (q->nheap > 0 && q->heap[0].t < t) t = q->heap[0].t;
  return t;
}
/* Take the first node of the wheel's slot `slot`, list `kind` (0: non-WG
 * events, 1: WG events), which must not be empty; the slot's busy bit is
 * cleared when it empties (evq_pop and evq_pop_slow). */
static inline Event evq_take_node(EvQueue *q, int slot, int kind) {
  EvSlot *sl = &q->slot[slot];
  int n = sl->head[kind];
  EvNode *nd = &q->node[n];
  Event e = nd->e;
  sl->head[kind] = nd->next;
  nd->next = q->free;
  q->free = n;
  q->nwheel--;
  if (sl->head[0] < 0 && sl->head[1] < 0) {
    q->busy[slot >> 6] &= ~(1ull << (slot & 63));
    q->first_ok = FALSE; /* the earliest slot emptied: find the next one when asked */
  }
  return e;
}
/* Remove and return the first event; the queue must not be empty. */
Event evq_pop_slow(EvQueue *q);
static inline Event evq_pop(EvQueue *q) {
  /* the common case, inline: the wheel's earliest slot is known (first_ok)
   * and no event of the heap is as early; its first non-WG event, else its
   * first WG event (evq_pop_slow's choice, without the call and the copy) */
  if (!q->first_ok || q->first == INT64_MAX || (q->nheap > 0 && q->heap[0].t <= q->first))
    return evq_pop_slow(q);
  int slot = (int)(q->first & (EVQ_SLOTS - 1));
  Event e = evq_take_node(q, slot, q->slot[slot].head[0] < 0);
  q->cur = e.t;
  return e;
}

#endif
