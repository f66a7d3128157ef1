/* sweep.c - plan variants, their jobs, results and table (sweep.h). */
#include "sweep.h"

#include "jobs.h"
#include "json_text.h"

#include <errno.h>
#include <math.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "csv.h"
#include "file_read.h"
#include "plan.h"
#include "machine.h" /* TCC_RESULT_SCHEMA */
#include "outfile.h"
#include "plan_edit.h"
#include "text_escape.h"

G_DEFINE_QUARK(tcc-sweep-error-quark, sweep_error)

/* ---- --set ------------------------------------------------------------ */

SweepSet *sweep_set_parse(const char *arg, GError **err) {
  const char *eq = strchr(arg, '=');
  g_autofree char *qarg = text_escape(arg); /* echoed on one line */
  if (!eq) {
    g_set_error(err, SWEEP_ERROR, 1, "--set %s: expected KEY.PATH=V1,V2,...", qarg);
    return NULL;
  }
  g_autoptr(SweepSet) s = g_new0(SweepSet, 1);
  s->path = g_strndup(arg, (gsize)(eq - arg));
  if (!plan_edit_path_ok(s->path)) {
    g_autofree char *qpath = text_escape(s->path);
    g_set_error(err, SWEEP_ERROR, 1, "--set %s: '%s' is not a plan path (keys of letters, digits and _, "
                "joined by dots: d1.panels.w1)", qarg, qpath);
    return NULL;
  }
  s->values = plan_edit_values("--set", arg, eq + 1, err);
  return s->values ? g_steal_pointer(&s) : NULL;
}

void sweep_set_free(SweepSet *s) {
  if (!s) return;
  g_free(s->path);
  if (s->values) g_ptr_array_unref(s->values);
  g_free(s);
}

static void variant_free(gpointer p) {
  SweepVariant *v = p;
  g_free(v->name);
  g_ptr_array_unref(v->values);
  g_free(v);
}

void sweep_free(Sweep *s) {
  if (!s) return;
  g_free(s->dir);
  g_free(s->template_path);
  g_free(s->problem);
  if (s->keys) g_ptr_array_unref(s->keys);
  if (s->variants) g_ptr_array_unref(s->variants);
  g_free(s);
}

static Sweep *sweep_new(const char *dir) {
  Sweep *s = g_new0(Sweep, 1);
  s->dir = g_canonicalize_filename(dir, NULL);
  s->keys = g_ptr_array_new_with_free_func(g_free);
  s->variants = g_ptr_array_new_with_free_func(variant_free);
  return s;
}

/* The job plan's first lines: what it is.  The template's name and the
 * values are escaped (text_escape.h): a line break in either would end
 * the comment, and what followed it would be YAML of the job plan. */
static char *variant_header(const char *template_path, GPtrArray *keys, GPtrArray *values) {
  g_autoptr(GString) what = g_string_new(template_path);
  for (guint i = 0; i < keys->len; i++)
    g_string_append_printf(what, "%s%s=%s", i ? ", " : " with ", (const char *)g_ptr_array_index(keys, i),
                           (const char *)g_ptr_array_index(values, i));
  g_autofree char *line = text_escape(what->str);
  return g_strdup_printf("# tcc-sweep job: %s\n# (comments of the template are not kept)\n", line);
}

/* "sms_used-8_w1-16-1a2b3c4d": each key's last component and its value
 * (characters other than [A-Za-z0-9._-] as _), at most 64 bytes, then 8
 * hex digits of the plan text's SHA-256. */
static char *variant_name(GPtrArray *keys, GPtrArray *values, const char *text) {
  GString *n = g_string_new(NULL);
  for (guint i = 0; i < keys->len; i++) {
    const char *k = g_ptr_array_index(keys, i), *dot = strrchr(k, '.');
    g_string_append_printf(n, "%s%s-%s", i ? "_" : "", dot ? dot + 1 : k, (const char *)g_ptr_array_index(values, i));
  }
  for (gsize i = 0; i < n->len; i++)
    if (!g_ascii_isalnum(n->str[i]) && !strchr("._-", n->str[i])) n->str[i] = '_';
  if (n->len > 64) g_string_truncate(n, 64);
  g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
  g_string_append_printf(n, "%s%.8s", n->len ? "-" : "", sha);
  return g_string_free(n, FALSE);
}

/* ---- files ------------------------------------------------------------ */

/* A JSON file this tool wrote (the manifest, a result), read by the bounded
 * reader (file_read.h, TCC_DATA_MAX_BYTES) into parser p; FALSE with *why
 * (g_free it) when it cannot be read or parsed. */
static gboolean load_json(JsonParser *p, const char *path, char **why) {
  gsize len = 0;
  int errnum = 0;
  g_autofree char *text = file_read(path, TCC_DATA_MAX_BYTES, 0, &len, &errnum);
  if (!text) {
    *why = file_read_why(errnum, TCC_DATA_MAX_BYTES);
    return FALSE;
  }
  g_autoptr(GError) e = NULL;
  if (json_parser_load_from_data(p, text, (gssize)len, &e)) return TRUE;
  *why = g_strdup(e->message);
  return FALSE;
}

/* PATH written whole as every output file is (outfile.h), never over
 * `input` (the template, or a job's plan; NULL: none). */
static gboolean write_file(const char *path, const char *text, const char *input, OutFileFlags flags, GError **err) {
  g_autoptr(GError) e = NULL;
  if (outfile_write(path, text, -1, (const char *const[]){input, NULL}, flags, &e)) return TRUE;
  g_autofree char *name = text_escape(path);
  if (g_error_matches(e, OUTFILE_ERROR, OUTFILE_ERROR_INPUT)) {
    g_autofree char *in = text_escape(e->message);
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_IO, "cannot write '%s': it is the plan %s itself", name, in);
  } else {
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_IO, "cannot write '%s': %s", name, e->message);
  }
  return FALSE;
}

static gboolean make_dir(const char *path, GError **err) {
  if (g_mkdir_with_parents(path, 0777) == 0) return TRUE;
  int e = errno;
  g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_IO, "cannot create '%s': %s", path, g_strerror(e));
  return FALSE;
}

static char *job_path(const Sweep *s, const char *name) {
  g_autofree char *f = g_strconcat(name, ".yaml", NULL);
  return g_build_filename(s->dir, "jobs", f, NULL);
}

static char *result_path(const Sweep *s, const char *name) {
  g_autofree char *f = g_strconcat(name, ".json", NULL);
  return g_build_filename(s->dir, "results", f, NULL);
}

static gboolean write_manifest(const Sweep *s, GError **err) {
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "template");
  g_autofree char *tname = text_escape(s->template_path); /* valid UTF-8, whatever the name holds */
  json_builder_add_string_value(b, tname);
  if (s->problem) { /* only when one: the manifests of both-problem sweeps stay as they were */
    json_builder_set_member_name(b, "problem");
    json_builder_add_string_value(b, s->problem);
  }
  json_builder_set_member_name(b, "keys");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->keys->len; i++) json_builder_add_string_value(b, g_ptr_array_index(s->keys, i));
  json_builder_end_array(b);
  json_builder_set_member_name(b, "variants");
  json_builder_begin_array(b);
  for (guint v = 0; v < s->variants->len; v++) {
    const SweepVariant *x = g_ptr_array_index(s->variants, v);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, x->name);
    json_builder_set_member_name(b, "values");
    json_builder_begin_array(b);
    for (guint i = 0; i < x->values->len; i++) json_builder_add_string_value(b, g_ptr_array_index(x->values, i));
    json_builder_end_array(b);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autofree char *text = json_pretty_text(b);
  g_autofree char *path = g_build_filename(s->dir, "sweep.json", NULL);
  return write_file(path, text, s->template_path, OUTFILE_DEFAULT, err);
}

/* jobs.txt: per job, `sweep_cmd --run-job NAME DIR`, quoted for sh. */
static gboolean write_jobs(const Sweep *s, const char *sweep_cmd, GError **err) {
  g_autoptr(GString) t = g_string_new(NULL);
  g_autofree char *qdir = g_shell_quote(s->dir);
  for (guint v = 0; v < s->variants->len; v++) {
    const SweepVariant *x = g_ptr_array_index(s->variants, v);
    g_autofree char *qname = g_shell_quote(x->name);
    g_string_append_printf(t, "%s --run-job %s %s\n", sweep_cmd, qname, qdir);
  }
  g_autofree char *path = g_build_filename(s->dir, "jobs.txt", NULL);
  return write_file(path, t->str, s->template_path, OUTFILE_DEFAULT, err);
}

Sweep *sweep_expand(const char *template_path, GPtrArray *sets, const char *dir, const char *sweep_cmd,
                    const char *grade, const char *problem, GError **err) {
  /* DIR goes on every job line: refused before anything is read or made */
  g_autofree char *canon = g_canonicalize_filename(dir, NULL);
  g_autoptr(GError) je = NULL;
  if (!jobs_name_ok("-o", canon, &je)) {
    g_set_error(err, SWEEP_ERROR, 1, "%s", je->message);
    return NULL;
  }
  g_autofree char *text = NULL; /* read once (a FIFO reads once): the text the variants edit */
  gsize len = 0;
  if (!plan_read_text(template_path, "plan", &text, &len, err)) return NULL;
  g_autoptr(Plan) plan = plan_parse(template_path, text, len, err);
  if (!plan) return NULL;
  guint64 n = 1;
  for (guint i = 0; i < sets->len; i++) {
    const SweepSet *a = g_ptr_array_index(sets, i);
    for (guint k = 0; k < i; k++)
      if (strcmp(a->path, ((const SweepSet *)g_ptr_array_index(sets, k))->path) == 0) {
        g_set_error(err, SWEEP_ERROR, 1, "--set %s: the key is set twice", a->path);
        return NULL;
      }
    n *= a->values->len;
    if (n > SWEEP_MAX_VARIANTS) {
      g_set_error(err, SWEEP_ERROR, 1, "more than %d variants", SWEEP_MAX_VARIANTS);
      return NULL;
    }
  }
  g_autoptr(Sweep) s = sweep_new(dir);
  s->template_path = g_strdup(template_path);
  s->problem = g_strdup(problem);
  for (guint i = 0; i < sets->len; i++)
    g_ptr_array_add(s->keys, g_strdup(((const SweepSet *)g_ptr_array_index(sets, i))->path));
  g_autofree char *jobs = g_build_filename(s->dir, "jobs", NULL);
  g_autofree char *results = g_build_filename(s->dir, "results", NULL);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free); /* each variant's plan */
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal); /* name -> variant number */
  for (guint64 v = 0; v < n; v++) {
    SweepVariant *x = g_new0(SweepVariant, 1);
    x->values = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(s->variants, x);
    guint64 rest = v;
    g_autofree guint *pick = g_new0(guint, sets->len + 1);
    for (guint i = sets->len; i-- > 0;) { /* the last set varies fastest */
      const SweepSet *a = g_ptr_array_index(sets, i);
      pick[i] = (guint)(rest % a->values->len);
      rest /= a->values->len;
    }
    for (guint i = 0; i < sets->len; i++) {
      const SweepSet *a = g_ptr_array_index(sets, i);
      g_ptr_array_add(x->values, g_strdup(g_ptr_array_index(a->values, pick[i])));
    }
    g_autofree char *body = plan_edit_text(template_path, text, len, "--set", s->keys, x->values, err);
    if (!body) return NULL;
    x->name = variant_name(s->keys, x->values, body); /* the plan's text, not how the template was named */
    g_autofree char *head = variant_header(template_path, s->keys, x->values);
    g_autofree char *vt = g_strconcat(head, body, NULL);
    gpointer k;
    if (g_hash_table_lookup_extended(seen, x->name, NULL, &k)) {
      g_set_error(err, SWEEP_ERROR, 1, "variants %u and %u have the same plan text (job %s)",
                  GPOINTER_TO_UINT(k) + 1, (guint)v + 1, x->name);
      return NULL;
    }
    g_hash_table_insert(seen, x->name, GUINT_TO_POINTER((guint)v));
    /* each variant is a valid plan, checked before anything is written: a
     * bad --set value or key is said as the --set it came from, not as a
     * place in a generated file, and leaves no half-made directory */
    g_autoptr(GError) pe = NULL;
    g_autoptr(Plan) vp = plan_parse("variant", vt, strlen(vt), &pe);
    if (!vp) {
      const char *why = strstr(pe->message, ": error: ");
      g_autoptr(GString) set = g_string_new(NULL);
      for (guint i = 0; i < sets->len; i++)
        g_string_append_printf(set, "%s%s=%s", i ? " " : "", (const char *)g_ptr_array_index(s->keys, i),
                               (const char *)g_ptr_array_index(x->values, i));
      g_autofree char *qset = text_escape(set->str); /* a value may hold a control character */
      g_set_error(err, SWEEP_ERROR, 1, "--set %s: %s", qset, why ? why + 9 : pe->message);
      return NULL;
    }
    g_ptr_array_add(texts, g_steal_pointer(&vt));
  }
  /* a file of the sweep that is the template itself (a job plan of an
   * earlier sweep into the same DIR) is refused before anything is
   * written: the sweep would replace its own input */
  const char *const tpl[] = {template_path, NULL};
  for (guint v = 0; v <= s->variants->len + 1; v++) {
    g_autofree char *path = v < s->variants->len ? job_path(s, ((const SweepVariant *)g_ptr_array_index(s->variants, v))->name)
                            : g_build_filename(s->dir, v == s->variants->len ? "jobs.txt" : "sweep.json", NULL);
    if (outfile_is_input(path, tpl, NULL)) {
      g_autofree char *q = text_escape(path);
      g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_USAGE, "-o DIR: %s is the template itself; give another -o DIR", q);
      return NULL;
    }
  }
  if (!make_dir(jobs, err) || !make_dir(results, err)) return NULL;
  for (guint v = 0; v < s->variants->len; v++) {
    g_autofree char *jp = job_path(s, ((const SweepVariant *)g_ptr_array_index(s->variants, v))->name);
    if (!write_file(jp, g_ptr_array_index(texts, v), template_path, OUTFILE_DEFAULT, err)) return NULL;
  }
  g_autofree char *cmd = grade ? g_strdup_printf("%s --grade %s", sweep_cmd, grade) : g_strdup(sweep_cmd);
  if (!write_jobs(s, cmd, err) || !write_manifest(s, err)) return NULL;
  return g_steal_pointer(&s);
}

Sweep *sweep_load(const char *dir, GError **err) {
  g_autoptr(Sweep) s = sweep_new(dir);
  g_autofree char *path = g_build_filename(s->dir, "sweep.json", NULL);
  g_autoptr(JsonParser) p = json_parser_new();
  g_autofree char *why = NULL;
  if (!load_json(p, path, &why)) {
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_PLACED, "%s: error: %s (not a tcc-sweep directory?)", path, why);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(p);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonNode *t = o ? json_object_get_member(o, "template") : NULL;
  JsonNode *k = o ? json_object_get_member(o, "keys") : NULL;
  JsonNode *v = o ? json_object_get_member(o, "variants") : NULL;
  JsonNode *pb = o ? json_object_get_member(o, "problem") : NULL;
  gboolean ok = t && JSON_NODE_HOLDS_VALUE(t) && json_node_get_value_type(t) == G_TYPE_STRING && k &&
                JSON_NODE_HOLDS_ARRAY(k) && v && JSON_NODE_HOLDS_ARRAY(v);
  if (ok && pb) {
    const char *name = JSON_NODE_HOLDS_VALUE(pb) && json_node_get_value_type(pb) == G_TYPE_STRING
                           ? json_node_get_string(pb)
                           : NULL;
    ok = name && (strcmp(name, "p1") == 0 || strcmp(name, "d1") == 0);
    if (ok) s->problem = g_strdup(name);
  }
  if (ok) {
    s->template_path = g_strdup(json_node_get_string(t));
    JsonArray *ka = json_node_get_array(k), *va = json_node_get_array(v);
    for (guint i = 0; ok && i < json_array_get_length(ka); i++) {
      const char *key = json_array_get_string_element(ka, i);
      ok = key != NULL;
      if (ok) g_ptr_array_add(s->keys, g_strdup(key));
    }
    for (guint i = 0; ok && i < json_array_get_length(va); i++) {
      JsonNode *xn = json_array_get_element(va, i);
      JsonObject *xo = JSON_NODE_HOLDS_OBJECT(xn) ? json_node_get_object(xn) : NULL;
      JsonNode *nn = xo ? json_object_get_member(xo, "name") : NULL;
      JsonNode *vn = xo ? json_object_get_member(xo, "values") : NULL;
      ok = nn && JSON_NODE_HOLDS_VALUE(nn) && json_node_get_value_type(nn) == G_TYPE_STRING && vn &&
           JSON_NODE_HOLDS_ARRAY(vn) && json_array_get_length(json_node_get_array(vn)) == s->keys->len;
      if (!ok) break;
      SweepVariant *x = g_new0(SweepVariant, 1);
      x->name = g_strdup(json_node_get_string(nn));
      x->values = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(s->variants, x);
      JsonArray *vals = json_node_get_array(vn);
      for (guint j = 0; ok && j < json_array_get_length(vals); j++) {
        const char *val = json_array_get_string_element(vals, j);
        ok = val != NULL;
        if (ok) g_ptr_array_add(x->values, g_strdup(val));
      }
      ok = ok && *x->name && !strchr(x->name, '/') && strcmp(x->name, "..") != 0;
    }
  }
  if (!ok) {
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_PLACED, "%s: error: not a tcc-sweep manifest", path);
    return NULL;
  }
  return g_steal_pointer(&s);
}

/* ---- jobs ------------------------------------------------------------- */

static const SweepVariant *variant_of(const Sweep *s, const char *name) {
  for (guint v = 0; v < s->variants->len; v++) {
    const SweepVariant *x = g_ptr_array_index(s->variants, v);
    if (strcmp(x->name, name) == 0) return x;
  }
  return NULL;
}

const char *sweep_status_known(const char *s) {
  static const char *const known[] = {"pass", "numerics", "area", "power", "refused", "error"};
  for (guint i = 0; s && i < G_N_ELEMENTS(known); i++)
    if (strcmp(s, known[i]) == 0) return known[i];
  return NULL;
}

/* The first line of `text` (stderr), or `dflt`. */
static char *first_line(const char *text, const char *dflt) {
  if (!text || !*text) return g_strdup(dflt);
  const char *nl = strchr(text, '\n');
  return g_strndup(text, nl ? (gsize)(nl - text) : strlen(text));
}

gboolean sweep_run_job(const Sweep *s, const char *name, const char *grade, SweepJobState *state,
                       const char **status, GError **err) {
  const SweepVariant *x = variant_of(s, name);
  if (!x) {
    g_set_error(err, SWEEP_ERROR, 1, "%s: no job '%s' in this sweep", s->dir, name);
    return FALSE;
  }
  g_autofree char *rp = result_path(s, name);
  if (g_file_test(rp, G_FILE_TEST_EXISTS)) {
    *state = SWEEP_SKIPPED;
    return TRUE;
  }
  *state = SWEEP_RAN;
  /* the plan relative to DIR, so that the result does not depend on where
   * DIR is */
  g_autofree char *rel = g_strconcat("jobs/", name, ".yaml", NULL);
  char *argv[] = {(char *)grade, "--json", rel, s->problem ? "--problem" : NULL, s->problem, NULL};
  g_autofree char *out = NULL, *errs = NULL;
  int wait = 0;
  g_autoptr(GError) spawn = NULL;
  gboolean spawned = g_spawn_sync(s->dir, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &errs, &wait, &spawn);
  int code = spawned && WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
  g_autoptr(JsonParser) p = json_parser_new();
  gboolean parsed = (code == 0 || code == 1 || code == 2) && json_parser_load_from_data(p, out, -1, NULL) &&
                    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p));
  /* the result's status: tcc-grade's (its JSON says refused or error on
   * exit 2, the first failing constraint on exit 1) */
  const char *gst = parsed ? sweep_status_known(json_object_get_string_member_with_default(
                                 json_node_get_object(json_parser_get_root(p)), "status", NULL))
                           : NULL;
  g_autofree char *why = NULL;
  if (!spawned)
    why = g_strdup_printf("cannot run %s: %s", grade, spawn->message);
  else if (!WIFEXITED(wait))
    why = g_strdup_printf("%s died (signal %d)", grade, WIFSIGNALED(wait) ? WTERMSIG(wait) : 0);
  else if (code == 2)
    why = first_line(errs, "tcc-grade exited 2 without a message");
  else if (!gst)
    why = g_strdup_printf("%s exited %d without a JSON report", grade, code);

  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "schema_version");
  json_builder_add_int_value(b, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(b, "tool");
  json_builder_add_string_value(b, TCC_SWEEP_VERSION);
  json_builder_set_member_name(b, "name");
  json_builder_add_string_value(b, name);
  json_builder_set_member_name(b, "plan");
  json_builder_add_string_value(b, rel);
  json_builder_set_member_name(b, "settings");
  json_builder_begin_object(b);
  for (guint i = 0; i < s->keys->len; i++) {
    json_builder_set_member_name(b, g_ptr_array_index(s->keys, i));
    json_add_plan_value(b, g_ptr_array_index(x->values, i));
  }
  json_builder_end_object(b);
  const char *st = code == 2 && gst && strcmp(gst, "refused") == 0 ? gst : why ? "error" : gst;
  if (status) *status = st;
  json_builder_set_member_name(b, "status");
  json_builder_add_string_value(b, st);
  json_builder_set_member_name(b, "exit");
  json_builder_add_int_value(b, code);
  json_builder_set_member_name(b, "error");
  if (why)
    json_builder_add_string_value(b, why);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "grade");
  if (why)
    json_builder_add_null_value(b);
  else
    json_builder_add_value(b, json_node_copy(json_parser_get_root(p)));
  json_builder_end_object(b);
  g_autofree char *text = json_pretty_text(b);
  /* whole or absent, synced: a grade is worth more than the fsync */
  g_autofree char *plan = g_build_filename(s->dir, rel, NULL);
  return write_file(rp, text, plan, OUTFILE_SYNC, err);
}

typedef struct Pool {
  const Sweep *s;
  const char *grade;
  GMutex lock;
  guint done, ran, skipped;
  GError *err; /* the first */
  SweepProgress progress;
  gpointer data;
} Pool;

static void pool_job(gpointer item, gpointer data) {
  Pool *p = data;
  const SweepVariant *x = item;
  SweepJobState st = SWEEP_RAN;
  GError *e = NULL;
  gboolean ok = sweep_run_job(p->s, x->name, p->grade, &st, NULL, &e);
  g_mutex_lock(&p->lock);
  p->done++;
  if (!ok && !p->err)
    p->err = e;
  else
    g_clear_error(&e);
  if (ok && st == SWEEP_SKIPPED) p->skipped++;
  if (ok && st == SWEEP_RAN) p->ran++;
  if (p->progress) p->progress(p->done, p->s->variants->len, p->data);
  g_mutex_unlock(&p->lock);
}

gboolean sweep_run_all(const Sweep *s, const char *grade, int threads, SweepProgress progress,
                       gpointer data, guint *ran, guint *skipped, GError **err) {
  Pool p = {.s = s, .grade = grade, .progress = progress, .data = data};
  g_mutex_init(&p.lock);
  GThreadPool *pool = g_thread_pool_new(pool_job, &p, MAX(threads, 1), TRUE, err);
  if (!pool) {
    g_mutex_clear(&p.lock);
    return FALSE;
  }
  for (guint v = 0; v < s->variants->len; v++) g_thread_pool_push(pool, g_ptr_array_index(s->variants, v), NULL);
  g_thread_pool_free(pool, FALSE, TRUE); /* waits for every job */
  g_mutex_clear(&p.lock);
  *ran = p.ran;
  *skipped = p.skipped;
  if (p.err) {
    g_propagate_error(err, p.err);
    return FALSE;
  }
  return TRUE;
}

gboolean sweep_write_slurm(const Sweep *s, GError **err) {
  g_autofree char *jobs = g_build_filename(s->dir, "jobs.txt", NULL);
  GError *e = NULL;
  g_autofree char *text = jobs_slurm_script("tcc-sweep", s->dir, jobs, s->variants->len, &e);
  if (!text) {
    g_set_error_literal(err, SWEEP_ERROR, SWEEP_ERROR_IO, e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autofree char *path = g_build_filename(s->dir, "sweep.slurm", NULL);
  return write_file(path, text, s->template_path, OUTFILE_DEFAULT, err);
}

/* ---- the table -------------------------------------------------------- */

typedef struct Row {
  const char *status;   /* a result's status (sweep_status_known), missing */
  JsonObject *grade;    /* NULL unless graded */
  const char *error;
} Row;

static JsonObject *obj(JsonObject *o, const char *m) {
  JsonNode *n = o ? json_object_get_member(o, m) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonNode *val(JsonObject *o, const char *m) {
  JsonNode *n = o ? json_object_get_member(o, m) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) ? n : NULL;
}

/* The metric columns after the swept keys. */
static const char *const metric_cols[] = {"name",      "status",    "p1_status", "p1_cycles", "p1_peak_w", "d1_status",
                                          "d1_cycles", "d1_peak_w", "area_mm2",  "score",     "error"};
enum {
  M_NAME, M_STATUS, M_P1_STATUS, M_P1_CYCLES, M_P1_W, M_D1_STATUS, M_D1_CYCLES, M_D1_W, M_AREA, M_SCORE, M_ERROR,
  M__COUNT
};

/* A metric's text ("" when absent), and whether it is a number (1 an
 * integer, 2 a real). */
static char *metric(const Row *r, const SweepVariant *x, int m, int *number) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  *number = 0;
  JsonObject *ps = obj(r->grade, "problems");
  /* the area: either problem's (the same hardware) */
  JsonObject *pr = obj(ps, m < M_D1_STATUS || (m == M_AREA && obj(ps, "p1")) ? "p1" : "d1");
  switch (m) {
  case M_NAME: return g_strdup(x->name);
  case M_STATUS: return g_strdup(r->status);
  case M_P1_CYCLES:
  case M_D1_CYCLES: {
    JsonNode *n = val(pr, "cycles");
    *number = n ? 1 : 0;
    return n ? g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n)) : g_strdup("");
  }
  case M_P1_W:
  case M_D1_W:
  case M_AREA: {
    JsonNode *n = val(pr, m == M_AREA ? "area_mm2" : "peak_w");
    *number = n ? 2 : 0;
    return n ? g_strdup(g_ascii_formatd(buf, sizeof buf, "%.4f", json_node_get_double(n))) : g_strdup("");
  }
  case M_P1_STATUS:
  case M_D1_STATUS: {
    JsonNode *n = val(pr, "status");
    return g_strdup(n && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : "");
  }
  case M_SCORE: {
    JsonNode *n = val(r->grade, "score");
    if (!n || json_node_is_null(n)) return g_strdup("");
    *number = 2;
    return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.2f", json_node_get_double(n)));
  }
  default: return g_strdup(r->error ? r->error : "");
  }
}

/* RFC 4180: quoted when it holds a comma, a quote or a line break. */
/* tune.csv's columns that hold numbers (tune.c); the others are strings. */
static gboolean tune_numeric(const char *col) {
  static const char *const num[] = {"round",     "candidate", "p1_cycles", "p1_peak_w", "d1_cycles",
                                    "d1_peak_w", "area_mm2",  "score",     "best",      "repairs"};
  for (guint i = 0; i < G_N_ELEMENTS(num); i++)
    if (strcmp(col, num[i]) == 0) return TRUE;
  return FALSE;
}

char *sweep_collect_tune(const char *dir, gboolean json, guint *rows, guint *passing, GError **err) {
  g_autofree char *path = g_build_filename(dir, "tune.csv", NULL), *text = NULL;
  gsize len = 0;
  int errnum = 0;
  if (!(text = file_read(path, TCC_DATA_MAX_BYTES, 0, &len, &errnum))) {
    g_autofree char *why = file_read_why(errnum, TCC_DATA_MAX_BYTES);
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_PLACED, "%s: error: cannot read: %s", path, why);
    return NULL;
  }
  const char *p = text;
  g_autoptr(GPtrArray) head = csv_record(&p);
  int status = -1;
  for (guint i = 0; head && i < head->len; i++)
    if (strcmp(g_ptr_array_index(head, i), "status") == 0) status = (int)i;
  if (!head || status < 0) {
    g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_PLACED, "%s:1:1: error: not a tcc-tune log (no status column)", path);
    return NULL;
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "schema_version");
  json_builder_add_int_value(b, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(b, "tool");
  json_builder_add_string_value(b, "tcc-tune");
  json_builder_set_member_name(b, "rows");
  json_builder_begin_array(b);
  *rows = *passing = 0;
  for (GPtrArray *r; (r = csv_record(&p)) != NULL; g_ptr_array_unref(r)) {
    if (r->len != head->len) continue; /* a line cut by a stopped search */
    (*rows)++;
    *passing += strcmp(g_ptr_array_index(r, (guint)status), "pass") == 0;
    json_builder_begin_object(b);
    for (guint i = 0; i < r->len; i++) {
      const char *col = g_ptr_array_index(head, i), *v = g_ptr_array_index(r, i);
      char *end = NULL;
      json_builder_set_member_name(b, col);
      if (!*v)
        json_builder_add_null_value(b);
      else if (tune_numeric(col) && strchr(v, '.') && (g_ascii_strtod(v, &end), *end == '\0'))
        json_builder_add_double_value(b, g_ascii_strtod(v, NULL));
      else if (tune_numeric(col) && (g_ascii_strtoll(v, &end, 10), *end == '\0'))
        json_builder_add_int_value(b, g_ascii_strtoll(v, NULL, 10));
      else if (i >= 2 && i < (guint)status) /* a knob's value */
        json_add_plan_value(b, v);
      else
        json_builder_add_string_value(b, v);
    }
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  if (!json) return g_steal_pointer(&text);
  return json_pretty_text(b);
}

char *sweep_collect(const Sweep *s, gboolean json, guint *bad, GError **err) {
  (void)err;
  *bad = 0;
  guint n = s->variants->len;
  g_autofree Row *rows = g_new0(Row, n);
  g_autoptr(GPtrArray) parsers = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint v = 0; v < n; v++) {
    const SweepVariant *x = g_ptr_array_index(s->variants, v);
    g_autofree char *rp = result_path(s, x->name);
    Row *r = &rows[v];
    r->status = "missing";
    JsonParser *p = json_parser_new();
    g_autofree char *why = NULL;
    g_ptr_array_add(parsers, p);
    if (!g_file_test(rp, G_FILE_TEST_EXISTS)) {
      r->error = "no result yet";
    } else if (!load_json(p, rp, &why) || !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
      r->status = "error";
      r->error = "the result file is not JSON";
    } else {
      JsonObject *o = json_node_get_object(json_parser_get_root(p));
      JsonNode *st = val(o, "status"), *e = val(o, "error");
      const char *stt = st ? json_node_get_string(st) : NULL;
      gboolean known = sweep_status_known(stt) != NULL;
      r->status = known ? stt : "error";
      r->error = e && !json_node_is_null(e) ? json_node_get_string(e)
                 : known                    ? NULL
                                            : "not a result of this tcc-sweep (delete it to grade the job again)";
      r->grade = obj(o, "grade");
    }
    if (strcmp(r->status, "pass") != 0) (*bad)++;
  }
  if (!json) {
    GString *o = g_string_new(NULL);
    for (guint i = 0; i < s->keys->len; i++) {
      csv_field(o, g_ptr_array_index(s->keys, i));
      g_string_append_c(o, ',');
    }
    for (int m = 0; m < M__COUNT; m++) g_string_append_printf(o, "%s%s", metric_cols[m], m + 1 < M__COUNT ? "," : "\n");
    for (guint v = 0; v < n; v++) {
      const SweepVariant *x = g_ptr_array_index(s->variants, v);
      for (guint i = 0; i < s->keys->len; i++) {
        csv_field(o, g_ptr_array_index(x->values, i));
        g_string_append_c(o, ',');
      }
      for (int m = 0; m < M__COUNT; m++) {
        int num;
        g_autofree char *t = metric(&rows[v], x, m, &num);
        csv_field(o, t);
        g_string_append_c(o, m + 1 < M__COUNT ? ',' : '\n');
      }
    }
    return g_string_free(o, FALSE);
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "schema_version");
  json_builder_add_int_value(b, TCC_RESULT_SCHEMA);
  json_builder_set_member_name(b, "tool");
  json_builder_add_string_value(b, TCC_SWEEP_VERSION);
  json_builder_set_member_name(b, "template");
  g_autofree char *tname = text_escape(s->template_path); /* valid UTF-8, whatever the name holds */
  json_builder_add_string_value(b, tname);
  json_builder_set_member_name(b, "keys");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->keys->len; i++) json_builder_add_string_value(b, g_ptr_array_index(s->keys, i));
  json_builder_end_array(b);
  json_builder_set_member_name(b, "rows");
  json_builder_begin_array(b);
  for (guint v = 0; v < n; v++) {
    const SweepVariant *x = g_ptr_array_index(s->variants, v);
    json_builder_begin_object(b);
    for (guint i = 0; i < s->keys->len; i++) {
      json_builder_set_member_name(b, g_ptr_array_index(s->keys, i));
      json_add_plan_value(b, g_ptr_array_index(x->values, i));
    }
    for (int m = 0; m < M__COUNT; m++) {
      int num;
      g_autofree char *t = metric(&rows[v], x, m, &num);
      json_builder_set_member_name(b, metric_cols[m]);
      if (num == 1)
        json_builder_add_int_value(b, g_ascii_strtoll(t, NULL, 10));
      else if (num == 2)
        json_builder_add_double_value(b, g_ascii_strtod(t, NULL));
      else if (!*t)
        json_builder_add_null_value(b);
      else
        json_builder_add_string_value(b, t);
    }
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  return json_pretty_text(b);
}
