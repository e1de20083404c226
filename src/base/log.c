#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "weft/log.h"

static weft_log_level current_level = WEFT_LOG_WARN;
static weft_log_sink current_sink;
static void *current_sink_arg;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

void weft_log_set_level(weft_log_level level)
{
    current_level = level;
}

weft_log_level weft_log_get_level(void)
{
    return current_level;
}

void weft_log_set_sink(weft_log_sink sink, void *arg)
{
    current_sink = sink;
    current_sink_arg = arg;
}

const char *weft_log_level_name(weft_log_level level)
{
    if ((unsigned)level > WEFT_LOG_TRACE)
        return "?";
    return level_names[level];
}

weft_err weft_log_level_parse(const char *text, weft_log_level *out)
{
    static const char *const lower[] = {"error", "warn", "info", "debug", "trace"};
    for (unsigned i = 0; i <= WEFT_LOG_TRACE; i++) {
        if (strcmp(text, lower[i]) == 0) {
            *out = (weft_log_level)i;
            return WEFT_OK;
        }
    }
    return WEFT_EINVAL;
}

void weft_log(weft_log_level level, const char *subsys, const char *fmt, ...)
{
    if (level > current_level)
        return;
    char line[WEFT_DIAG_MSG_SIZE + 64]; /* a message and the prefix */
    int n = snprintf(line, sizeof line, "weft %s %s: ", weft_log_level_name(level), subsys);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (current_sink) {
        current_sink(level, line, current_sink_arg);
        return;
    }
    /* One write(2) per line, newline included: processes sharing stderr
     * (the ranks of an MPI job) interleave whole lines, never pieces of
     * them, as fprintf's separate writes of text and newline allowed
     * ("... Bcast 1weft INFO pmpi: rank 0: ..."). */
    size_t len = strlen(line);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    fflush(stderr);
    for (size_t done = 0; done < len;) {
        ssize_t w = write(STDERR_FILENO, line + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
}
