#ifndef PARLEY_CSQLITE_SHIM_H
#define PARLEY_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro ((sqlite3_destructor_type)-1) and does not import.
static inline sqlite3_destructor_type parley_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type parley_sqlite_static(void) { return SQLITE_STATIC; }
// sqlite3_config is variadic.
static inline int parley_sqlite_config_multithread(void) { return sqlite3_config(SQLITE_CONFIG_MULTITHREAD); }
static inline int parley_sqlite_config_serialized(void) { return sqlite3_config(SQLITE_CONFIG_SERIALIZED); }
#endif
