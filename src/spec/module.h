/* module.h - the tools' optional modules: shared objects that carry a heavy
 * library (cairo for --plot, json-glib for tcc-gen's --explain --json), so
 * that a command that does not use it does not load it at every start
 * (about 4-7 ms of CPU each on this VM; docs/testing.md).  A module is looked
 * for beside the executable (the build directory), then in ../lib/tcc from
 * it (make install puts modules in PREFIX/lib/tcc, the commands in
 * PREFIX/bin).  Loaded once and never unloaded.  Shared by the compiler and
 * the simulator (like machine.h); src/sim/module.c implements it. */
#ifndef TCC_MODULE_H
#define TCC_MODULE_H

#include <glib.h>

/* The address of `symbol` in module `file` ("tcc-sim-plot.so"), loading the
 * module on first use; NULL with *err = the dynamic linker's reason (it names
 * the path), domain G_FILE_ERROR.  Thread-safe. */
gpointer tcc_module_symbol(const char *file, const char *symbol, GError **err);

#endif
