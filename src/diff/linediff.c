/* linediff.c - line-diff counts: unique lines dropped, common prefix and
 * suffix trimmed, then Myers' greedy search for the edit distance D on the
 * rest (linediff.h). */
#include "linediff.h"

struct DiffInterner {
  GHashTable *ids; /* char * (owned) -> GUINT_TO_POINTER(id) */
};

DiffInterner *diff_interner_new(void) {
  DiffInterner *in = g_new(DiffInterner, 1);
  in->ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return in;
}

void diff_interner_free(DiffInterner *in) {
  if (!in) return;
  g_hash_table_destroy(in->ids);
  g_free(in);
}

guint diff_intern(DiffInterner *in, const char *s) {
  gpointer v = g_hash_table_lookup(in->ids, s);
  if (v) return GPOINTER_TO_UINT(v);
  guint id = g_hash_table_size(in->ids) + 1;
  g_hash_table_insert(in->ids, g_strdup(s), GUINT_TO_POINTER(id));
  return id;
}

/* The ids of both sides renumbered densely: dense[i] for a then b, and
 * how often each dense id occurs on each side. */
typedef struct Dense {
  guint *a, *b;     /* the sequences in dense ids */
  gint64 *na, *nb;  /* occurrences per dense id   */
} Dense;

static void densify(const guint *a, gsize na, const guint *b, gsize nb, Dense *d) {
  g_autoptr(GHashTable) map = g_hash_table_new(g_direct_hash, g_direct_equal);
  d->a = g_new(guint, na + 1);
  d->b = g_new(guint, nb + 1);
  /* dense ids start at 1: a looked-up value of NULL means "not seen" */
  for (gsize i = 0; i < na + nb; i++) {
    guint id = i < na ? a[i] : b[i - na];
    gpointer v = g_hash_table_lookup(map, GUINT_TO_POINTER(id));
    guint dn = v ? GPOINTER_TO_UINT(v) : g_hash_table_size(map) + 1;
    if (!v) g_hash_table_insert(map, GUINT_TO_POINTER(id), GUINT_TO_POINTER(dn));
    if (i < na)
      d->a[i] = dn;
    else
      d->b[i - na] = dn;
  }
  guint n = g_hash_table_size(map) + 1;
  d->na = g_new0(gint64, n);
  d->nb = g_new0(gint64, n);
  for (gsize i = 0; i < na; i++) d->na[d->a[i]]++;
  for (gsize i = 0; i < nb; i++) d->nb[d->b[i]]++;
}

static void dense_clear(Dense *d) {
  g_free(d->a);
  g_free(d->b);
  g_free(d->na);
  g_free(d->nb);
}

/* Keep the lines of s[0..n) that occur on the other side (other[id] > 0),
 * in place; returns how many were kept. */
static gsize keep_common(guint *s, gsize n, const gint64 *other) {
  gsize k = 0;
  for (gsize i = 0; i < n; i++)
    if (other[s[i]] > 0) s[k++] = s[i];
  return k;
}

/* Myers' greedy forward search: the edit distance of a[0..n) and b[0..m),
 * or -1 when it is over max_d.  v[k] is the furthest x reached on diagonal
 * k = x - y with d edits. */
static gint64 myers(const guint *a, gsize n, const guint *b, gsize m, gsize max_d) {
  gsize lim = MIN(n + m, max_d);
  gint64 off = (gint64)lim + 1;
  g_autofree gint64 *v = g_new0(gint64, 2 * lim + 3);
  for (gint64 d = 0; d <= (gint64)lim; d++) {
    for (gint64 k = -d; k <= d; k += 2) {
      gint64 x = k == -d || (k != d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1]
                                                                         : v[off + k - 1] + 1;
      gint64 y = x - k;
      while (x < (gint64)n && y < (gint64)m && a[x] == b[y]) x++, y++;
      v[off + k] = x;
      if (x >= (gint64)n && y >= (gint64)m) return d;
    }
  }
  return -1;
}

/* The common prefix and suffix of a[0..*na) and b[0..*nb): *a and *b move
 * past the prefix, *na and *nb shrink by both (they are in some longest
 * common subsequence). */
static void trim(const guint **a, gsize *na, const guint **b, gsize *nb) {
  gsize p = 0, n = *na, m = *nb;
  while (p < n && p < m && (*a)[p] == (*b)[p]) p++;
  while (n > p && m > p && (*a)[n - 1] == (*b)[m - 1]) n--, m--;
  *a += p;
  *b += p;
  *na = n - p;
  *nb = m - p;
}

DiffCount diff_ids(const guint *a, gsize na, const guint *b, gsize nb, gsize max_d) {
  DiffCount r = {0, 0, TRUE};
  trim(&a, &na, &b, &nb); /* first on the ids: an unchanged task costs O(N) */
  if (na == 0 || nb == 0) {
    r.removed = (gint64)na;
    r.added = (gint64)nb;
    return r;
  }
  Dense d;
  densify(a, na, b, nb, &d);
  /* a line that the other side lacks is removed (added) wherever it is */
  gsize n = keep_common(d.a, na, d.nb), m = keep_common(d.b, nb, d.na);
  r.removed = (gint64)(na - n);
  r.added = (gint64)(nb - m);
  const guint *x = d.a, *y = d.b;
  trim(&x, &n, &y, &m);
  gint64 dist = n == 0 || m == 0 ? (gint64)(n + m) : myers(x, n, y, m, max_d ? max_d : DIFF_MAX_D);
  if (dist >= 0) {
    gint64 lcs = ((gint64)(n + m) - dist) / 2;
    r.removed += (gint64)n - lcs;
    r.added += (gint64)m - lcs;
  } else { /* over the limit: match the multisets, a lower bound */
    g_autofree gint64 *cnt = g_new0(gint64, na + nb + 2);
    for (gsize i = 0; i < n; i++) cnt[x[i]]++;
    gint64 common = 0;
    for (gsize i = 0; i < m; i++)
      if (cnt[y[i]] > 0) cnt[y[i]]--, common++;
    r.removed += (gint64)n - common;
    r.added += (gint64)m - common;
    r.exact = FALSE;
  }
  dense_clear(&d);
  return r;
}

DiffCount diff_lines(const char *const *a, gsize na, const char *const *b, gsize nb) {
  g_autoptr(DiffInterner) in = diff_interner_new();
  g_autofree guint *ia = g_new(guint, na + 1), *ib = g_new(guint, nb + 1);
  for (gsize i = 0; i < na; i++) ia[i] = diff_intern(in, a[i]);
  for (gsize i = 0; i < nb; i++) ib[i] = diff_intern(in, b[i]);
  return diff_ids(ia, na, ib, nb, 0);
}
