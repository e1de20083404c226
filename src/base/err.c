#include <stdio.h>
#include <string.h>

#include "weft/err.h"

static const char *const err_messages[] = {
#define WEFT__ERR_MSG(name, msg) msg,
    WEFT_ERR_MAP(WEFT__ERR_MSG)
#undef WEFT__ERR_MSG
};

static const char *const err_names[] = {
#define WEFT__ERR_NAME(name, msg) "WEFT_" #name,
    WEFT_ERR_MAP(WEFT__ERR_NAME)
#undef WEFT__ERR_NAME
};

const char *weft_strerror(weft_err err)
{
    if ((unsigned)err >= WEFT__ERR_COUNT)
        return "unknown error";
    return err_messages[err];
}

const char *weft_err_name(weft_err err)
{
    if ((unsigned)err >= WEFT__ERR_COUNT)
        return "WEFT_UNKNOWN";
    return err_names[err];
}

void weft_diag_clear(weft_diag *d)
{
    if (d) {
        d->err = WEFT_OK;
        d->msg[0] = '\0';
    }
}

weft_err weft_diag_vset(weft_diag *d, weft_err err, const char *fmt, va_list ap)
{
    if (d) {
        d->err = err;
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    }
    return err;
}

weft_err weft_diag_set(weft_diag *d, weft_err err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    weft_diag_vset(d, err, fmt, ap);
    va_end(ap);
    return err;
}

weft_err weft_diag_code(weft_diag *d, weft_err err)
{
    if (d && err != WEFT_OK && !(d->err == err && d->msg[0]))
        weft_diag_set(d, err, "%s", weft_strerror(err));
    return err;
}
