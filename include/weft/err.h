/* weft error codes and detailed diagnostics.
 *
 * Every action in weft returns a weft_err. The codes come from one table,
 * WEFT_ERR_MAP, which also gives their names and messages, so the enum, the
 * names and the messages can never disagree. A code says what kind of failure
 * happened; what exactly went wrong and where (file:line:col, which op, which
 * rank) is written into a weft_diag that the caller passes down and can read
 * afterwards.
 */
#ifndef WEFT_ERR_H
#define WEFT_ERR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WEFT_BUILDING)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* X(NAME, message). WEFT_OK must stay first and equal to 0. */
#define WEFT_ERR_MAP(X)                                                                            \
    X(OK, "success")                                                                               \
    X(ENOMEM, "out of memory")                                                                     \
    X(EINVAL, "invalid argument")                                                                  \
    X(EPARSE, "malformed input")                                                                   \
    X(EIO, "input/output error")                                                                   \
    X(ENOENT, "no such file or object")                                                            \
    X(EEXIST, "already exists")                                                                    \
    X(EOVERFLOW, "arithmetic overflow")                                                            \
    X(ERANGE, "value out of range")                                                                \
    X(EUNSUPPORTED, "not supported")                                                               \
    X(ETOPO, "the fabric does not allow this")                                                     \
    X(EVERIFY, "the plan is incorrect")                                                            \
    X(ELIMIT, "exceeds a limit")                                                                   \
    X(EPEER, "a peer failed")                                                                      \
    X(ETIMEDOUT, "timed out")                                                                      \
    X(EAUTH, "authentication failed")

typedef enum weft_err {
#define WEFT__ERR_ENUM(name, msg) WEFT_##name,
    WEFT_ERR_MAP(WEFT__ERR_ENUM)
#undef WEFT__ERR_ENUM
        WEFT__ERR_COUNT
} weft_err;

/* The message of an error code ("out of memory"); never NULL. */
WEFT_API const char *weft_strerror(weft_err err);
/* The name of an error code ("WEFT_ENOMEM"); never NULL. */
WEFT_API const char *weft_err_name(weft_err err);

/* A detailed diagnostic. The caller owns the storage; functions that take a
 * weft_diag * write it only when they fail (a NULL pointer is allowed and
 * means "no details wanted"). msg holds one line without a trailing newline,
 * for example "fab.topo:3:12: unknown node 'gpu9'". It has room for a whole
 * path of PATH_MAX (4096) bytes and a line about it: messages name files
 * by the whole path they were given (a 64-byte copy once dropped the start
 * of a plan path in a deep checkout). */
#define WEFT_DIAG_MSG_SIZE (4096 + 1024)
typedef struct weft_diag {
    weft_err err;
    char msg[WEFT_DIAG_MSG_SIZE];
} weft_diag;

/* Clears a diagnostic to WEFT_OK with an empty message. */
WEFT_API void weft_diag_clear(weft_diag *d);
/* Records err with a printf-style message and returns err, so a failure path
 * can say `return weft_diag_set(d, WEFT_EPARSE, "...", ...);`. d may be NULL. */
WEFT_API weft_err weft_diag_set(weft_diag *d, weft_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
WEFT_API weft_err weft_diag_vset(weft_diag *d, weft_err err, const char *fmt, va_list ap);
/* Records err with the plain message of the code, unless d already holds a
 * message for the same failure. Returns err. WEFT_OK leaves d untouched
 * (it is not read either: a caller's diag may be uninitialised until a
 * failure sets it). */
WEFT_API weft_err weft_diag_code(weft_diag *d, weft_err err);

#ifdef __cplusplus
}
#endif
#endif
