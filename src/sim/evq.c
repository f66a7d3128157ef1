/* evq.c - the event queue: a timing wheel with a heap behind it (evq.h). */
#include "evq.h"

#include <string.h>

#define MASK (EVQ_SLOTS - 1)

void evq_init(EvQueue *q) {
  memset(q, 0, sizeof *q);
  q->slot = g_new(EvSlot, EVQ_SLOTS);
  memset(q->slot, -1, sizeof(EvSlot) * EVQ_SLOTS);
  q->busy = g_new0(uint64_t, EVQ_SLOTS / 64);
  q->free = -1;
  q->first = INT64_MAX;
  q->first_ok = TRUE;
}

void evq_free(EvQueue *q) {
  g_free(q->slot);
  g_free(q->busy);
  g_free(q->node);
  g_free(q->heap);
  memset(q, 0, sizeof *q);
}

/* The one order of events. */
static gboolean before(const Event *a, const Event *b) {
  if (a->t != b->t) return a->t < b->t;
  if ((a->type == EV_WG) != (b->type == EV_WG)) return b->type == EV_WG;
  return a->seq < b->seq;
}

static void heap_push(EvQueue *q, Event e) {
  if (q->nheap == q->capheap) {
    q->capheap = q->capheap ? q->capheap * 2 : 64;
    q->heap = g_renew(Event, q->heap, q->capheap);
  }
  int i = q->nheap++;
  while (i > 0 && before(&e, &q->heap[(i - 1) / 2])) {
    q->heap[i] = q->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  q->heap[i] = e;
}

static Event heap_pop(EvQueue *q) {
  Event top = q->heap[0], last = q->heap[--q->nheap];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= q->nheap) break;
    if (c + 1 < q->nheap && before(&q->heap[c + 1], &q->heap[c])) c++;
    if (!before(&q->heap[c], &last)) break;
    q->heap[i] = q->heap[c];
    i = c;
  }
  if (q->nheap > 0) q->heap[i] = last;
  return top;
}

void evq_add_heap(EvQueue *q, int64_t t, uint64_t seq, EvType type, int a, int64_t cnt, int snap) {
  Event e = {t, seq, type, a, cnt, snap};
  heap_push(q, e);
}

int evq_node_new(EvQueue *q) {
  if (q->nnode == q->capnode) {
    q->capnode = q->capnode ? q->capnode * 2 : 256;
    q->node = g_renew(EvNode, q->node, q->capnode);
  }
  return q->nnode++;
}

void evq_push(EvQueue *q, Event e) { evq_add(q, e.t, e.type, e.a, e.n, e.snap); }

/* The wheel's first slot in use, in time order from cur (-1 if none).  Every
 * event of the wheel lies in [cur, cur + EVQ_SLOTS): pushed inside the
 * window of its day, and not yet popped, so not before the current cur. */
static int first_slot(const EvQueue *q) {
  if (q->nwheel == 0) return -1;
  int s0 = (int)(q->cur & MASK), w0 = s0 >> 6;
  uint64_t x = q->busy[w0] & (~0ull << (s0 & 63));
  for (int k = 0; k <= EVQ_SLOTS / 64; k++) {
    if (x) return ((w0 + k) % (EVQ_SLOTS / 64)) * 64 + __builtin_ctzll(x);
    x = q->busy[(w0 + k + 1) % (EVQ_SLOTS / 64)];
    if (k + 1 == EVQ_SLOTS / 64) x &= ~(~0ull << (s0 & 63)); /* back at w0: its low bits */
  }
  return -1;
}

/* The wheel's first event: the slot's first non-WG event, else its first
 * WG event (node index, or -1). */
static int wheel_first(const EvQueue *q, int *slot, int *kind) {
  int s = !q->first_ok ? first_slot(q) : q->first == INT64_MAX ? -1 : (int)(q->first & MASK);
  if (s < 0) return -1;
  *slot = s;
  *kind = q->slot[s].head[0] < 0;
  return q->slot[s].head[*kind];
}

int64_t evq_min_t_slow(EvQueue *q) {
  if (!q->first_ok) {
    int slot, kind, n = wheel_first(q, &slot, &kind);
    q->first = n >= 0 ? q->node[n].e.t : INT64_MAX;
    q->first_ok = TRUE;
  }
  int64_t t = q->first;
  if (q->nheap > 0 && q->heap[0].t < t) t = q->heap[0].t;
  return t;
}

Event evq_pop_slow(EvQueue *q) {
  int slot, kind, n = wheel_first(q, &slot, &kind);
  Event e;
  if (n < 0 || (q->nheap > 0 && before(&q->heap[0], &q->node[n].e))) {
    e = heap_pop(q);
  } else {
    e = evq_take_node(q, slot, kind);
  }
  q->cur = e.t;
  return e;
}
