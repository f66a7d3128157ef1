/* module.c - finding and loading the tools' modules (module.h). */
#include "module.h"

#include <gmodule.h>

/* The module's file: beside the executable, else in ../lib/tcc from it; the
 * bare name (the dynamic linker's search) when /proc/self/exe is absent. */
static char *module_path(const char *file) {
  g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
  if (!exe) return g_strdup(file);
  g_autofree char *dir = g_path_get_dirname(exe);
  char *p = g_build_filename(dir, file, NULL);
  if (g_file_test(p, G_FILE_TEST_EXISTS)) return p;
  g_free(p);
  return g_build_filename(dir, "..", "lib", "tcc", file, NULL);
}

/* The modules loaded so far, by file name (GModule *, resident). */
static GMutex lock;
static GHashTable *loaded;

gpointer tcc_module_symbol(const char *file, const char *symbol, GError **err) {
  g_mutex_lock(&lock);
  if (!loaded) loaded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GModule *m = g_hash_table_lookup(loaded, file);
  if (!m) {
    g_autofree char *path = module_path(file);
    m = g_module_open(path, G_MODULE_BIND_LOCAL);
    if (m) {
      g_module_make_resident(m);
      g_hash_table_insert(loaded, g_strdup(file), m);
    }
  }
  gpointer sym = NULL;
  if (!m || !g_module_symbol(m, symbol, &sym) || !sym) {
    const char *why = g_module_error();
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s", why ? why : file);
    sym = NULL;
  }
  g_mutex_unlock(&lock);
  return sym;
}
