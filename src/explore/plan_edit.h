/* plan_edit.h - a plan's YAML text edited key by key, through libyaml's
 * document API (plan_edit.c): what tcc-sweep writes for each variant and
 * tcc-tune for each point it tries.
 *
 * A PATH names a scalar by the mapping keys down from the root, joined by
 * dots: `hardware.sms`, `d1.panels.w1`, `p1.store_spacing.wo`.  Editing
 * parses the text into a document, replaces each scalar in place (or adds
 * the key, with the mappings it needs) and emits the document again: flow
 * mappings stay flow mappings, comments are not kept. */
#ifndef TCC_PLAN_EDIT_H
#define TCC_PLAN_EDIT_H

#include <glib.h>

/* USAGE messages read "OPT PATH: why" and need the command's
 * "tcc-xxx: error: " prefix; PLACED ones read "file:line:col: error: ...". */
#define PLAN_EDIT_ERROR (plan_edit_error_quark())
GQuark plan_edit_error_quark(void);
enum { PLAN_EDIT_ERROR_USAGE = 1, PLAN_EDIT_ERROR_PLACED };

/* Keys of letters, digits and _, joined by single dots. */
gboolean plan_edit_path_ok(const char *path);

/* The comma-separated values of `list` (each stripped of blanks) as char*,
 * for option `opt` given as `arg` in messages: NULL with *err (USAGE) for
 * a value that is empty or not a plain YAML scalar, or one given twice. */
GPtrArray *plan_edit_values(const char *opt, const char *arg, const char *list, GError **err);

/* The plan text `text` (of file `file`, for messages) with the scalar at
 * each keys[i] set to values[i], as new YAML text without comments.  `opt`
 * names the option the paths came from in messages ("--set", "--knob").
 * NULL with *err: the text is not YAML, or a path runs through a value or
 * ends on a mapping or sequence. */
char *plan_edit_text(const char *file, const char *text, gsize len, const char *opt, GPtrArray *keys,
                     GPtrArray *values, GError **err);

/* The scalar at `path` in the plan text, or NULL with *found FALSE when the
 * text does not have the key.  NULL with *err (and *found TRUE) when the
 * text is not YAML or the path runs through a value or ends on a mapping
 * or sequence. */
char *plan_edit_get(const char *file, const char *text, gsize len, const char *opt, const char *path,
                    gboolean *found, GError **err);

#endif
