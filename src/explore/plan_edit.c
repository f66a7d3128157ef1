/* plan_edit.c - a plan's YAML text edited key by key (plan_edit.h). */
#include "plan_edit.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "text_escape.h"

G_DEFINE_QUARK(tcc-plan-edit-error-quark, plan_edit_error)

gboolean plan_edit_path_ok(const char *path) {
  if (!*path || path[0] == '.' || path[strlen(path) - 1] == '.' || strstr(path, "..")) return FALSE;
  for (const char *p = path; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.') return FALSE;
  return TRUE;
}

GPtrArray *plan_edit_values(const char *opt, const char *arg, const char *list, GError **err) {
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
  /* the option and the values as the messages echo them: one line */
  g_autofree char *qarg = text_escape(arg);
  g_autofree char *stripped = g_strstrip(g_strdup(list));
  if (!*stripped) { /* g_strsplit would make no values: a product of 0 variants */
    g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: no values after '=' (expected V1,V2,...)",
                opt, qarg);
    return NULL;
  }
  g_auto(GStrv) vals = g_strsplit(list, ",", -1);
  for (int i = 0; vals[i]; i++) {
    g_strstrip(vals[i]);
    if (!*vals[i] || strpbrk(vals[i], "\n\r\t#:{}[]&*!|>'\"%@`")) {
      g_autofree char *qv = text_escape(vals[i]);
      g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: value %d ('%s') is not a plain YAML scalar",
                  opt, qarg, i + 1, qv);
      return NULL;
    }
    for (guint k = 0; k < values->len; k++)
      if (strcmp(g_ptr_array_index(values, k), vals[i]) == 0) {
        g_autofree char *qv = text_escape(vals[i]);
        g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: value '%s' is given twice", opt, qarg, qv);
        return NULL;
      }
    g_ptr_array_add(values, g_strdup(vals[i]));
  }
  return g_steal_pointer(&values);
}

/* Parse the text into *d; FALSE with *err (placed) when it is not YAML. */
static gboolean load_doc(const char *file, const char *text, gsize len, yaml_document_t *d, GError **err) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) {
    g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s: out of memory", file);
    return FALSE;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  gboolean ok = yaml_parser_load(&p, d);
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  if (!ok)
    g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_PLACED, "%s:%d:%d: error: %s", name,
                (int)p.problem_mark.line + 1, (int)p.problem_mark.column + 1,
                p.problem ? p.problem : "invalid YAML");
  yaml_parser_delete(&p);
  return ok;
}

/* The value node of `key` in mapping node `map`, or 0. */
static int map_find(yaml_document_t *d, int map, const char *key) {
  yaml_node_t *m = yaml_document_get_node(d, map);
  size_t n = strlen(key);
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(d, p->key);
    if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == n &&
        memcmp(k->data.scalar.value, key, n) == 0)
      return p->value;
  }
  return 0;
}

/* "OPT PATH: 'a.b' is not a mapping in the template" for parts[0..i). */
static void not_mapping(GError **err, const char *opt, const char *path, char **parts, int i) {
  g_autoptr(GString) at = g_string_new(NULL);
  for (int k = 0; k < i; k++) g_string_append_printf(at, "%s%s", k ? "." : "", parts[k]);
  g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: '%s' is not a mapping in the template", opt,
              path, at->str);
}

static void not_value(GError **err, const char *opt, const char *path, const yaml_node_t *x) {
  g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE,
              "%s %s: the template has a %s there, not a value (set its keys)", opt, path,
              x->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
}

/* Set the scalar at `path` (mappings down from the root) to `value`:
 * replaced in place, or added with the mappings it needs. */
static gboolean set_path(yaml_document_t *d, const char *opt, const char *path, const char *value,
                         GError **err) {
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  int node = 1; /* the root */
  for (int i = 0; parts[i]; i++) {
    yaml_node_t *n = yaml_document_get_node(d, node);
    if (!n || n->type != YAML_MAPPING_NODE) {
      not_mapping(err, opt, path, parts, i);
      return FALSE;
    }
    gboolean last = parts[i + 1] == NULL;
    int v = map_find(d, node, parts[i]);
    if (!v) {
      int k = yaml_document_add_scalar(d, NULL, (yaml_char_t *)parts[i], -1, YAML_PLAIN_SCALAR_STYLE);
      v = last ? yaml_document_add_scalar(d, NULL, (yaml_char_t *)value, -1, YAML_PLAIN_SCALAR_STYLE)
               : yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
      if (!k || !v || !yaml_document_append_mapping_pair(d, node, k, v)) {
        g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: out of memory", opt, path);
        return FALSE;
      }
    } else if (last) {
      yaml_node_t *x = yaml_document_get_node(d, v);
      if (x->type != YAML_SCALAR_NODE) {
        not_value(err, opt, path, x);
        return FALSE;
      }
      char *copy = strdup(value); /* libyaml frees its nodes with free() */
      if (!copy) {
        g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s %s: out of memory", opt, path);
        return FALSE;
      }
      free(x->data.scalar.value);
      x->data.scalar.value = (yaml_char_t *)copy;
      x->data.scalar.length = strlen(copy);
      x->data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    }
    node = v;
  }
  return TRUE;
}

static int to_gstring(void *data, unsigned char *buf, size_t size) {
  g_string_append_len(data, (const char *)buf, (gssize)size);
  return 1;
}

char *plan_edit_text(const char *file, const char *text, gsize len, const char *opt, GPtrArray *keys,
                     GPtrArray *values, GError **err) {
  yaml_document_t d;
  if (!load_doc(file, text, len, &d, err)) return NULL;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < keys->len; i++)
    ok = set_path(&d, opt, g_ptr_array_index(keys, i), g_ptr_array_index(values, i), err);
  if (!ok) {
    yaml_document_delete(&d);
    return NULL;
  }
  GString *out = g_string_new(NULL);
  yaml_emitter_t e;
  yaml_emitter_initialize(&e);
  yaml_emitter_set_output(&e, to_gstring, out);
  yaml_emitter_set_width(&e, -1);
  yaml_emitter_set_unicode(&e, 1);
  ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, &d) && yaml_emitter_close(&e); /* dump frees d */
  yaml_emitter_delete(&e);
  if (!ok) {
    g_set_error(err, PLAN_EDIT_ERROR, PLAN_EDIT_ERROR_USAGE, "%s: cannot write the edited YAML", file);
    g_string_free(out, TRUE);
    return NULL;
  }
  return g_string_free(out, FALSE);
}

char *plan_edit_get(const char *file, const char *text, gsize len, const char *opt, const char *path,
                    gboolean *found, GError **err) {
  *found = TRUE;
  yaml_document_t d;
  if (!load_doc(file, text, len, &d, err)) return NULL;
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  char *value = NULL;
  int node = 1;
  for (int i = 0; parts[i]; i++) {
    yaml_node_t *n = yaml_document_get_node(&d, node);
    if (!n || n->type != YAML_MAPPING_NODE) {
      not_mapping(err, opt, path, parts, i);
      break;
    }
    node = map_find(&d, node, parts[i]);
    if (!node) {
      *found = FALSE;
      break;
    }
    if (parts[i + 1] == NULL) {
      yaml_node_t *x = yaml_document_get_node(&d, node);
      if (x->type == YAML_SCALAR_NODE)
        value = g_strndup((const char *)x->data.scalar.value, x->data.scalar.length);
      else
        not_value(err, opt, path, x);
    }
  }
  yaml_document_delete(&d);
  return value;
}
