// The few libmdbx declarations peer-bench uses, written from libmdbx's documented C API (mdbx.h,
// v0.13). Nothing is linked: peer-bench loads libmdbx.so at run time with dlopen (see
// MDBXLibrary.swift), so it builds and runs its other engines where libmdbx is missing.
#ifndef PEERBENCH_CMDBX_SHIM_H
#define PEERBENCH_CMDBX_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct MDBX_env MDBX_env;
typedef struct MDBX_txn MDBX_txn;
typedef struct MDBX_cursor MDBX_cursor;
typedef uint32_t MDBX_dbi;

/// A key or value: `struct iovec` layout (base first, then length; LMDB's MDB_val is the other way).
typedef struct MDBX_val {
    void *iov_base;
    size_t iov_len;
} MDBX_val;

/// `mdbx_version` (exported data symbol).
typedef struct MDBX_version_info {
    uint16_t major, minor, patch, tweak;
    const char *semver_prerelease;
    struct { const char *datetime, *tree, *commit, *describe; } git;
    const char *sourcery;
} MDBX_version_info;

// Environment flags (MDBX_env_flags_t).
enum {
    PB_MDBX_SYNC_DURABLE = 0,          // every commit is flushed (the default)
    PB_MDBX_SAFE_NOSYNC = 0x10000,     // no flush; a system crash may lose commits, not corrupt
    PB_MDBX_RDONLY = 0x20000,
};
// Transaction flags (MDBX_txn_flags_t).
enum { PB_MDBX_TXN_READWRITE = 0, PB_MDBX_TXN_RDONLY = 0x20000 };
// Database flags (MDBX_db_flags_t) and put flags (MDBX_put_flags_t).
enum { PB_MDBX_DB_DEFAULTS = 0, PB_MDBX_CREATE = 0x40000, PB_MDBX_UPSERT = 0 };
// Cursor operations (MDBX_cursor_op) and result codes.
enum { PB_MDBX_FIRST = 0, PB_MDBX_NEXT = 8 };
enum { PB_MDBX_SUCCESS = 0, PB_MDBX_NOTFOUND = -30798 };

// The functions, as pointer types for dlsym.
typedef int (*pb_mdbx_env_create)(MDBX_env **env);
typedef int (*pb_mdbx_env_set_geometry)(MDBX_env *env, intptr_t size_lower, intptr_t size_now, intptr_t size_upper,
                                        intptr_t growth_step, intptr_t shrink_threshold, intptr_t pagesize);
typedef int (*pb_mdbx_env_open)(MDBX_env *env, const char *pathname, unsigned flags, mode_t mode);
typedef int (*pb_mdbx_env_close)(MDBX_env *env);
typedef int (*pb_mdbx_txn_begin)(MDBX_env *env, MDBX_txn *parent, unsigned flags, MDBX_txn **txn);
typedef int (*pb_mdbx_txn_commit)(MDBX_txn *txn);
typedef int (*pb_mdbx_txn_abort)(MDBX_txn *txn);
typedef uint64_t (*pb_mdbx_txn_id)(const MDBX_txn *txn);
typedef int (*pb_mdbx_dbi_open)(MDBX_txn *txn, const char *name, unsigned flags, MDBX_dbi *dbi);
typedef int (*pb_mdbx_put)(MDBX_txn *txn, MDBX_dbi dbi, const MDBX_val *key, MDBX_val *data, unsigned flags);
typedef int (*pb_mdbx_get)(const MDBX_txn *txn, MDBX_dbi dbi, const MDBX_val *key, MDBX_val *data);
typedef int (*pb_mdbx_cursor_open)(MDBX_txn *txn, MDBX_dbi dbi, MDBX_cursor **cursor);
typedef int (*pb_mdbx_cursor_get)(MDBX_cursor *cursor, MDBX_val *key, MDBX_val *data, int op);
typedef void (*pb_mdbx_cursor_close)(MDBX_cursor *cursor);
typedef const char *(*pb_mdbx_strerror)(int errnum);

#endif
