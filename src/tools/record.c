/* record.c - experiment records of tcc-grade (record.h; docs/tools.md
 * "Experiment records"): the JSON line of a run (json-glib), its class
 * against the earlier records, appending, and the --log table. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "json_num.h"
#include "machine.h" /* POWER_WINDOW */
#include "text_escape.h"

const char *const rec_class_name[REC__COUNT] = {"pass", "slower", "numerics", "area", "power", "refused", "error"};

char *rec_now(void) {
  g_autoptr(GDateTime) t = g_date_time_new_now_utc();
  return g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
}

char *rec_plan_text_of(const char *bytes, gsize len) {
  if (!bytes || len > REC_MAX_PLAN_TEXT || !g_utf8_validate(bytes, (gssize)len, NULL)) return NULL;
  return g_strndup(bytes, len);
}

/* The plan file is read by the bounded reader (file_read.h) at the plan's
 * own limit: a file over it has no text. */
char *rec_file_text(const char *file) {
  gsize len = 0;
  int errnum = 0;
  g_autofree char *text = file_read(file, REC_MAX_PLAN_TEXT, 0, &len, &errnum);
  return rec_plan_text_of(text, len);
}

/* ---- reading ------------------------------------------------------------ */

/* A member of `o` of a given value type, or NULL. */
static JsonNode *member(JsonObject *o, const char *k, GType type) {
  JsonNode *n = o ? json_object_get_member(o, k) : NULL;
  if (!n || !JSON_NODE_HOLDS_VALUE(n)) return NULL;
  GType t = json_node_get_value_type(n);
  if (type == G_TYPE_DOUBLE) return t == G_TYPE_DOUBLE || t == G_TYPE_INT64 ? n : NULL;
  return t == type ? n : NULL;
}

static const char *get_str(JsonObject *o, const char *k) {
  JsonNode *n = member(o, k, G_TYPE_STRING);
  return n ? json_node_get_string(n) : NULL;
}

static JsonObject *get_obj(JsonObject *o, const char *k) {
  JsonNode *n = o ? json_object_get_member(o, k) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

/* A record's status; a record written before the result schema has a
 * "class", whose "tool-error" is an error. */
static RecClass class_of(JsonObject *o) {
  const char *c = get_str(o, "status");
  int n = REC__COUNT;
  if (!c && (c = get_str(o, "class"))) {
    if (strcmp(c, "tool-error") == 0) return REC_ERROR;
    n = REC_REFUSED; /* the classes of then */
  }
  for (int k = 0; c && k < n; k++)
    if (strcmp(c, rec_class_name[k]) == 0) return (RecClass)k;
  return REC__COUNT;
}

static gboolean tool_error(RecClass c) { return c == REC_REFUSED || c == REC_ERROR; }

/* A problem's `.problem` line without the keyword ("d1 d_model=128 ..."):
 * the record's "problem" object (kind, then each dim) or, in a record
 * written before the schema, its string; NULL if neither. */
static char *problem_line(JsonObject *p) {
  const char *line = get_str(p, "problem");
  if (line) return g_strdup(line);
  JsonObject *o = get_obj(p, "problem");
  const char *kind = get_str(o, "kind");
  if (!kind) return NULL;
  GString *g = g_string_new(kind);
  g_autoptr(GList) keys = json_object_get_members(o);
  for (GList *k = keys; k; k = k->next) {
    if (strcmp(k->data, "kind") == 0) continue;
    JsonNode *v = member(o, k->data, G_TYPE_INT64);
    if (!v) return (void)g_string_free(g, TRUE), NULL;
    g_string_append_printf(g, " %s=%" G_GINT64_FORMAT, (const char *)k->data, json_node_get_int(v));
  }
  return g_string_free(g, FALSE);
}

/* What is wrong with a record, or NULL: the fields --log and the
 * classification read. */
static const char *invalid(JsonObject *o) {
  if (!get_str(o, "time")) return "no \"time\" string";
  if (!get_str(o, "plan")) return "no \"plan\" string";
  RecClass c = class_of(o);
  if (c == REC__COUNT) return "no \"status\" among pass, slower, numerics, area, power, refused, error";
  JsonNode *note = json_object_get_member(o, "note");
  if (note && !JSON_NODE_HOLDS_NULL(note) && !member(o, "note", G_TYPE_STRING)) return "\"note\" is not a string";
  JsonNode *score = json_object_get_member(o, "score");
  if (score && !JSON_NODE_HOLDS_NULL(score) && !member(o, "score", G_TYPE_DOUBLE)) return "\"score\" is not a number";
  if (tool_error(c)) return NULL;
  JsonObject *ps = get_obj(o, "problems");
  static const char *const names[] = {"p1", "d1"};
  for (int i = 0; i < 2; i++) {
    JsonObject *p = get_obj(ps, names[i]);
    if (!p) return i == 0 ? "no \"problems\" object with \"p1\"" : "no \"problems\" object with \"d1\"";
    g_autofree char *line = problem_line(p);
    if (!member(p, "cycles", G_TYPE_INT64) || !member(p, "peak_w", G_TYPE_DOUBLE) || !line)
      return i == 0 ? "\"p1\" lacks \"cycles\", \"peak_w\" or \"problem\"" : "\"d1\" lacks \"cycles\", \"peak_w\" or \"problem\"";
  }
  return NULL;
}

/* "malformed JSON: " and json-glib's reason, without its "<data>:1:6:
 * Parse error: " prefix. */
static char *parse_reason(const char *msg) {
  const char *p = strstr(msg, "Parse error: ");
  return g_strconcat("malformed JSON: ", p ? p + strlen("Parse error: ") : msg, NULL);
}

/* What is wrong with one line of the file (LEN bytes, no newline), or
 * NULL, its record then in *rec (a new reference); *reason holds a
 * parse error's text. */
static const char *bad_line(const char *line, gsize len, JsonObject **rec, char **reason) {
  *rec = NULL;
  if (memchr(line, '\0', len)) return "a NUL byte in the line";
  if (!g_utf8_validate(line, (gssize)len, NULL)) return "the line is not UTF-8 text";
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) pe = NULL;
  if (!json_parser_load_from_data(parser, line, (gssize)len, &pe)) return *reason = parse_reason(pe->message);
  JsonNode *root = json_parser_get_root(parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT(root)) return "expected one JSON object on the line";
  const char *why = invalid(json_node_get_object(root));
  if (!why) *rec = json_object_ref(json_node_get_object(root));
  return why;
}

/* The records of DIR/records.jsonl (rec_load); a bad line is skipped with
 * "FILE:LINE:1: warning: REASON; line skipped" in `warn` (when given).
 * `lines` (when given): the file's line of each record; *nlines: the
 * lines in the file; *torn: it does not end in a newline.  The file is
 * read by length: a NUL byte ends nothing but its own line. */
static gboolean load(const char *dir, gboolean missing_ok, GPtrArray **records, GArray *lines, guint *nlines,
                     gboolean *torn, GString *warn, GError **err) {
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  gsize len = 0;
  int errnum = 0;
  *records = g_ptr_array_new_with_free_func((GDestroyNotify)json_object_unref);
  *nlines = 0;
  *torn = FALSE;
  g_autofree char *text = file_read(file, TCC_DATA_MAX_BYTES, 0, &len, &errnum);
  if (!text) {
    if (missing_ok && errnum == ENOENT) return TRUE;
    g_autofree char *why = file_read_why(errnum, TCC_DATA_MAX_BYTES);
    int code = errnum == FILE_READ_TOO_LARGE ? G_FILE_ERROR_FAILED : g_file_error_from_errno(errnum);
    g_set_error(err, G_FILE_ERROR, code, "%s: error: cannot read: %s", file, why);
    g_clear_pointer(records, g_ptr_array_unref);
    return FALSE;
  }
  *torn = len > 0 && text[len - 1] != '\n';
  for (gsize at = 0; at < len;) {
    const char *nl = memchr(text + at, '\n', len - at);
    gsize n = nl ? (gsize)(nl - (text + at)) : len - at;
    guint no = ++*nlines;
    JsonObject *rec;
    g_autofree char *reason = NULL;
    const char *why = bad_line(text + at, n, &rec, &reason);
    at += n + 1;
    if (why) {
      if (warn) {
        g_autofree char *one = text_escape(why); /* a parse error may quote the line */
        g_string_append_printf(warn, "%s:%u:1: warning: %s; line skipped\n", file, no, one);
      }
      continue;
    }
    g_ptr_array_add(*records, rec);
    if (lines) g_array_append_val(lines, no);
  }
  return TRUE;
}

gboolean rec_load(const char *dir, gboolean missing_ok, GPtrArray **records, GString *warn, GError **err) {
  guint nlines;
  gboolean torn;
  return load(dir, missing_ok, records, NULL, &nlines, &torn, warn, err);
}

char *rec_plan_text(const char *dir, int n, GError **err) {
  g_autoptr(GPtrArray) recs = NULL;
  g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(guint));
  guint nlines;
  gboolean torn;
  g_autoptr(GString) warn = g_string_new(NULL);
  if (!load(dir, FALSE, &recs, lines, &nlines, &torn, warn, err)) return NULL;
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  if (n < 1 || (guint)n > nlines) {
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: error: no record %d: it holds %u", file, n, nlines);
    return NULL;
  }
  JsonObject *rec = NULL;
  for (guint i = 0; i < lines->len; i++)
    if (g_array_index(lines, guint, i) == (guint)n) rec = g_ptr_array_index(recs, i);
  if (!rec) { /* the line is bad: its warning, as the error */
    g_autofree char *at = g_strdup_printf("%s:%d:1: warning: ", file, n);
    const char *w = strstr(warn->str, at);
    g_autofree char *why = g_strndup(w + strlen(at), strcspn(w + strlen(at), "\n"));
    if (g_str_has_suffix(why, "; line skipped")) why[strlen(why) - strlen("; line skipped")] = '\0';
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%d:1: error: %s", file, n, why);
    return NULL;
  }
  /* a line without the member (written before plans were kept) reads as before */
  const char *text = get_str(rec, "plan_text");
  if (!text) {
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "%s:%d:1: error: the record keeps no plan text (recorded before tcc-grade kept it, or the plan "
                "was unreadable or not UTF-8)",
                file, n);
    return NULL;
  }
  return g_strdup(text);
}

/* ---- classifying -------------------------------------------------------- */

/* P1 cycles x D1 cycles of a record (the score orders runs the same way). */
static double cost_of(JsonObject *o) {
  JsonObject *ps = get_obj(o, "problems");
  return (double)json_object_get_int_member(get_obj(ps, "p1"), "cycles") *
         (double)json_object_get_int_member(get_obj(ps, "d1"), "cycles");
}

static gboolean same_problems(JsonObject *o, const RecRun *r) {
  JsonObject *ps = get_obj(o, "problems");
  g_autofree char *p1 = problem_line(get_obj(ps, "p1")), *d1 = problem_line(get_obj(ps, "d1"));
  return strcmp(p1, r->prob[0].problem) == 0 && strcmp(d1, r->prob[1].problem) == 0;
}

/* The constraints a graded run fails, in the order of tcc-grade's verdicts:
 * numerics, area, power. */
static void failures(const RecRun *r, gboolean fail[REC__COUNT]) {
  memset(fail, 0, sizeof(gboolean) * REC__COUNT);
  for (int i = 0; i < 2; i++) {
    for (int s = 0; s < r->nseeds; s++) fail[REC_NUMERICS] |= !r->prob[i].numerics_ok[s];
    fail[REC_AREA] |= !r->prob[i].area_ok;
    fail[REC_POWER] |= !r->prob[i].power_ok;
  }
}

RecClass rec_classify(const RecRun *r, const GPtrArray *earlier, JsonObject **best) {
  *best = NULL;
  if (!r->graded) return r->refused ? REC_REFUSED : REC_ERROR;
  gboolean fail[REC__COUNT];
  failures(r, fail);
  for (int c = REC_NUMERICS; c <= REC_POWER; c++)
    if (fail[c]) return (RecClass)c;
  double best_cost = INFINITY;
  for (guint i = 0; i < earlier->len; i++) {
    JsonObject *o = g_ptr_array_index(earlier, i);
    RecClass c = class_of(o);
    if ((c == REC_PASS || c == REC_SLOWER) && same_problems(o, r) && cost_of(o) < best_cost) {
      best_cost = cost_of(o);
      *best = o;
    }
  }
  double cost = (double)r->prob[0].cycles * (double)r->prob[1].cycles;
  return *best && cost > best_cost ? REC_SLOWER : REC_PASS;
}

/* ---- writing ------------------------------------------------------------ */

/* A string, made UTF-8 (json_utf8): a file name may hold any bytes. */
static void put_str(JsonBuilder *b, const char *k, const char *v) {
  json_builder_set_member_name(b, k);
  g_autofree char *u = json_utf8(v);
  if (u)
    json_builder_add_string_value(b, u);
  else
    json_builder_add_null_value(b);
}

static void put_int(JsonBuilder *b, const char *k, int64_t v) {
  json_builder_set_member_name(b, k);
  json_builder_add_int_value(b, v);
}

/* A number; JSON has no inf or nan: null. */
static void put_num(JsonBuilder *b, const char *k, double v) {
  json_builder_set_member_name(b, k);
  if (isfinite(v))
    json_builder_add_double_value(b, v);
  else
    json_builder_add_null_value(b);
}

/* Watts and mm^2 as the reports print them, to 4 decimals. */
static double r4(double v) { return isfinite(v) ? round(v * 1e4) / 1e4 : v; }

/* A `.problem` line's words as the schema's problem object: "kind", then
 * each dim as a number. */
static void put_problem_line(JsonBuilder *b, const char *line) {
  json_builder_set_member_name(b, "problem");
  json_builder_begin_object(b);
  g_auto(GStrv) w = g_strsplit(line, " ", -1);
  for (int i = 0; w[i]; i++) {
    char *eq = strchr(w[i], '=');
    if (i == 0 || !eq) {
      put_str(b, "kind", w[i]);
      continue;
    }
    *eq = '\0';
    put_int(b, w[i], g_ascii_strtoll(eq + 1, NULL, 10));
  }
  json_builder_end_object(b);
}

void rec_problem_members(JsonBuilder *b, const RecProblem *p, const uint64_t *seeds, int nseeds) {
  gboolean num = TRUE;
  for (int s = 0; s < nseeds; s++) num &= p->numerics_ok[s];
  const gboolean ok[3] = {num, p->area_ok, p->power_ok};
  const char *const *constraint = &rec_class_name[REC_NUMERICS]; /* numerics, area, power */
  const char *status = "pass";
  for (int c = 2; c >= 0; c--)
    if (!ok[c]) status = constraint[c];
  put_str(b, "status", status);
  json_builder_set_member_name(b, "failures");
  json_builder_begin_array(b);
  for (int c = 0; c < 3; c++)
    if (!ok[c]) json_builder_add_string_value(b, constraint[c]);
  json_builder_end_array(b);
  put_int(b, "cycles", p->cycles);
  put_num(b, "peak_w", r4(p->peak_w));
  json_builder_set_member_name(b, "window");
  json_builder_begin_array(b);
  json_builder_add_int_value(b, p->peak_start);
  json_builder_add_int_value(b, p->peak_start + POWER_WINDOW);
  json_builder_end_array(b);
  put_num(b, "area_mm2", r4(p->area_mm2));
  if (p->bound > 0) {
    json_builder_set_member_name(b, "bound");
    json_builder_begin_object(b);
    put_int(b, "cycles", p->bound);
    put_str(b, "binding", p->binding);
    put_num(b, "ratio", r4((double)p->cycles / (double)p->bound));
    json_builder_end_object(b);
  }
  put_problem_line(b, p->problem);
  put_str(b, "program_sha256", p->program_sha256);
  put_str(b, "hardware_sha256", p->hardware_sha256);
  json_builder_set_member_name(b, "seeds");
  json_builder_begin_array(b);
  for (int s = 0; s < nseeds; s++) {
    json_builder_begin_object(b);
    if (seeds[s] <= (uint64_t)INT64_MAX) put_int(b, "seed", (int64_t)seeds[s]);
    put_num(b, "max_abs_err", p->max_abs_err[s]);
    put_str(b, "status", p->numerics_ok[s] ? "pass" : "numerics");
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
}

static void put_problem(JsonBuilder *b, const RecRun *r, const RecProblem *p) {
  json_builder_set_member_name(b, p->name);
  json_builder_begin_object(b);
  rec_problem_members(b, p, r->seeds, r->nseeds);
  json_builder_end_object(b);
}

char *rec_json(const RecRun *r, RecClass cls, JsonObject *best) {
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  put_int(b, "schema_version", TCC_RESULT_SCHEMA);
  put_str(b, "tool", r->grader);
  put_str(b, "time", r->time);
  put_str(b, "plan", r->plan);
  put_str(b, "plan_sha256", r->plan_sha256);
  put_str(b, "plan_text", r->plan_text);
  put_str(b, "note", r->note);
  put_str(b, "simulator", r->simulator);
  put_int(b, "spec", r->spec);
  json_builder_set_member_name(b, "seeds");
  json_builder_begin_array(b);
  for (int s = 0; s < r->nseeds; s++) json_builder_add_int_value(b, (int64_t)r->seeds[s]);
  json_builder_end_array(b);
  put_str(b, "status", rec_class_name[cls]);
  json_builder_set_member_name(b, "failures");
  json_builder_begin_array(b);
  if (r->graded) {
    gboolean fail[REC__COUNT];
    failures(r, fail);
    for (int c = REC_NUMERICS; c <= REC_POWER; c++)
      if (fail[c]) json_builder_add_string_value(b, rec_class_name[c]);
  }
  json_builder_end_array(b);
  if (r->has_score)
    put_num(b, "score", r->score);
  else
    put_str(b, "score", NULL);
  if (r->graded) {
    json_builder_set_member_name(b, "problems");
    json_builder_begin_object(b);
    for (int i = 0; i < 2; i++) put_problem(b, r, &r->prob[i]);
    json_builder_end_object(b);
  } else {
    put_str(b, "error", r->error);
  }
  if (best) { /* what "slower" (or not) was measured against */
    json_builder_set_member_name(b, "best_before");
    json_builder_begin_object(b);
    put_str(b, "time", get_str(best, "time"));
    put_str(b, "plan", get_str(best, "plan"));
    JsonObject *ps = get_obj(best, "problems");
    put_int(b, "p1_cycles", json_object_get_int_member(get_obj(ps, "p1"), "cycles"));
    put_int(b, "d1_cycles", json_object_get_int_member(get_obj(ps, "d1"), "cycles"));
    json_builder_end_object(b);
  }
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *text = json_to_string(root, FALSE);
  return json_shortest_numbers(text);
}

/* DIR and its parents, and the records already there (load). */
static gboolean open_dir(const char *dir, GPtrArray **recs, guint *nlines, gboolean *torn, GString *warn,
                         GError **err) {
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    int e = errno;
    g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: error: cannot create: %s", dir, g_strerror(e));
    return FALSE;
  }
  return load(dir, TRUE, recs, NULL, nlines, torn, warn, err);
}

gboolean rec_prepare(const char *dir, GString *warn, GError **err) {
  g_autoptr(GPtrArray) recs = NULL;
  guint nlines;
  gboolean torn;
  return open_dir(dir, &recs, &nlines, &torn, warn, err);
}

gboolean rec_append(const char *dir, const RecRun *r, RecClass *cls, int *line, GError **err) {
  g_autoptr(GPtrArray) recs = NULL;
  guint nlines;
  gboolean torn;
  if (!open_dir(dir, &recs, &nlines, &torn, NULL, err)) return FALSE;
  JsonObject *best;
  *cls = rec_classify(r, recs, &best);
  *line = (int)nlines + 1;
  g_autofree char *json = rec_json(r, *cls, best);
  /* after a torn last line (no newline: a write cut short), a newline
   * first, so that the record is a line of its own */
  g_autofree char *text = g_strconcat(torn ? "\n" : "", json, "\n", NULL);
  g_autofree char *file = g_build_filename(dir, REC_FILE, NULL);
  /* one write with O_APPEND: concurrent graders append whole lines */
  int fd = open(file, O_WRONLY | O_APPEND | O_CREAT, 0644);
  size_t n = strlen(text);
  ssize_t w = fd < 0 ? -1 : write(fd, text, n);
  int e = w < 0 ? errno : (size_t)w != n ? ENOSPC : 0;
  if (fd >= 0 && close(fd) != 0 && !e) e = errno;
  if (e) {
    g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: error: cannot write: %s", file, g_strerror(e));
    return FALSE;
  }
  return TRUE;
}

/* ---- the log ------------------------------------------------------------ */

enum { L_TIME, L_PLAN, L_NOTE, L_P1, L_D1, L_P1W, L_D1W, L_SCORE, L_CLASS, L_NCOLS };

/* A string for one cell: control characters (a note's newline) as spaces. */
static char *cell_text(const char *s) {
  char *c = g_strdup(s && *s ? s : "-");
  for (char *p = c; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
  return c;
}

static void row_of(JsonObject *o, char *row[L_NCOLS]) {
  row[L_TIME] = cell_text(get_str(o, "time"));
  row[L_PLAN] = cell_text(get_str(o, "plan"));
  row[L_NOTE] = cell_text(get_str(o, "note"));
  row[L_CLASS] = cell_text(rec_class_name[class_of(o)]);
  JsonNode *sc = member(o, "score", G_TYPE_DOUBLE);
  row[L_SCORE] = sc ? g_strdup_printf("%.2f", json_node_get_double(sc)) : g_strdup("-");
  if (tool_error(class_of(o))) {
    for (int c = L_P1; c <= L_D1W; c++) row[c] = g_strdup("-");
    return;
  }
  JsonObject *ps = get_obj(o, "problems"), *p1 = get_obj(ps, "p1"), *d1 = get_obj(ps, "d1");
  row[L_P1] = g_strdup_printf("%" G_GINT64_FORMAT, json_object_get_int_member(p1, "cycles"));
  row[L_D1] = g_strdup_printf("%" G_GINT64_FORMAT, json_object_get_int_member(d1, "cycles"));
  row[L_P1W] = g_strdup_printf("%.2f", json_node_get_double(member(p1, "peak_w", G_TYPE_DOUBLE)));
  row[L_D1W] = g_strdup_printf("%.2f", json_node_get_double(member(d1, "peak_w", G_TYPE_DOUBLE)));
}

char *rec_log(const char *dir, GString *warn, GError **err) {
  g_autoptr(GPtrArray) recs = NULL;
  if (!rec_load(dir, FALSE, &recs, warn, err)) return NULL;
  static const char *const head[L_NCOLS] = {"time", "plan", "note", "P1", "D1", "P1 W", "D1 W", "score", "status"};
  guint n = recs->len + 1;
  char *(*t)[L_NCOLS] = g_malloc0_n(n, sizeof *t);
  for (int c = 0; c < L_NCOLS; c++) t[0][c] = g_strdup(head[c]);
  for (guint i = 1; i < n; i++) row_of(g_ptr_array_index(recs, i - 1), t[i]);
  int width[L_NCOLS] = {0};
  for (guint i = 0; i < n; i++)
    for (int c = 0; c < L_NCOLS; c++) width[c] = MAX(width[c], (int)g_utf8_strlen(t[i][c], -1));
  GString *g = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    for (int c = 0; c < L_NCOLS; c++) {
      gboolean right = c >= L_P1 && c <= L_SCORE;
      int pad = width[c] - (int)g_utf8_strlen(t[i][c], -1);
      if (c == L_CLASS) {
        g_string_append(g, t[i][c]);
      } else {
        if (right) g_string_append_printf(g, "%*s", pad, "");
        g_string_append(g, t[i][c]);
        g_string_append_printf(g, "%*s", (right ? 0 : pad) + 2, "");
      }
      g_free(t[i][c]);
    }
    g_string_append_c(g, '\n');
  }
  g_free(t);
  return g_string_free(g, FALSE);
}
