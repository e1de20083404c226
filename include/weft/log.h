/* Levelled logging.
 *
 * Lines look like "weft WARN topo: message": a level and a subsystem, so they
 * stay greppable. The level is set once by the program (the CLI reads it from
 * flags or WEFT_LOG); library code never reads the environment itself.
 * Output goes to stderr unless a sink is installed.
 */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_log_level {
    WEFT_LOG_ERROR = 0,
    WEFT_LOG_WARN,
    WEFT_LOG_INFO,
    WEFT_LOG_DEBUG,
    WEFT_LOG_TRACE,
} weft_log_level;

/* A sink receives each formatted line without the trailing newline. */
typedef void (*weft_log_sink)(weft_log_level level, const char *line, void *arg);

WEFT_API void weft_log_set_level(weft_log_level level);
WEFT_API weft_log_level weft_log_get_level(void);
/* Installs a sink (NULL restores stderr). */
WEFT_API void weft_log_set_sink(weft_log_sink sink, void *arg);
/* Parses "error", "warn", "info", "debug", "trace"; WEFT_EINVAL otherwise. */
WEFT_API weft_err weft_log_level_parse(const char *text, weft_log_level *out);
WEFT_API const char *weft_log_level_name(weft_log_level level);

WEFT_API void weft_log(weft_log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif
