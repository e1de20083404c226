/* The JSON writer. See json.h. */
#include "cli/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

void cli_json_init(cli_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

static void indent(cli_json *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Called before any value: checks that a value is allowed here and writes
 * the separator and indentation. Returns false on misuse. */
static bool before_value(cli_json *j)
{
    if (j->misuse || j->done)
        goto misuse;
    if (j->depth == 0)
        return true;
    if (j->in_object[j->depth - 1]) {
        if (!j->have_key)
            goto misuse;
        j->have_key = false;
        return true;
    }
    if (!j->empty[j->depth - 1])
        fputc(',', j->f);
    j->empty[j->depth - 1] = false;
    indent(j);
    return true;
misuse:
    j->misuse = true;
    return false;
}

/* Called after a complete value. */
static void after_value(cli_json *j)
{
    if (j->depth == 0)
        j->done = true;
}

static void begin(cli_json *j, bool object)
{
    if (!before_value(j))
        return;
    if (j->depth == CLI_JSON_MAX_DEPTH) {
        j->misuse = true;
        return;
    }
    fputc(object ? '{' : '[', j->f);
    j->in_object[j->depth] = object;
    j->empty[j->depth] = true;
    j->depth++;
}

static void end(cli_json *j, bool object)
{
    if (j->misuse || j->depth == 0 || j->in_object[j->depth - 1] != object || j->have_key) {
        j->misuse = true;
        return;
    }
    bool was_empty = j->empty[j->depth - 1];
    j->depth--;
    if (!was_empty)
        indent(j);
    fputc(object ? '}' : ']', j->f);
    after_value(j);
}

void cli_json_begin_object(cli_json *j)
{
    begin(j, true);
}

void cli_json_end_object(cli_json *j)
{
    end(j, true);
}

void cli_json_begin_array(cli_json *j)
{
    begin(j, false);
}

void cli_json_end_array(cli_json *j)
{
    end(j, false);
}

void cli_json_key(cli_json *j, const char *key)
{
    if (j->misuse || j->depth == 0 || !j->in_object[j->depth - 1] || j->have_key) {
        j->misuse = true;
        return;
    }
    if (!j->empty[j->depth - 1])
        fputc(',', j->f);
    j->empty[j->depth - 1] = false;
    indent(j);
    weft__json_string(j->f, key, WEFT__JSON_STRICT);
    fputs(": ", j->f);
    j->have_key = true;
}

void cli_json_string(cli_json *j, const char *s)
{
    if (!s) {
        cli_json_null(j);
        return;
    }
    if (!before_value(j))
        return;
    weft__json_string(j->f, s, WEFT__JSON_STRICT);
    after_value(j);
}

void cli_json_int(cli_json *j, int64_t v)
{
    if (!before_value(j))
        return;
    fprintf(j->f, "%" PRId64, v);
    after_value(j);
}

void cli_json_uint(cli_json *j, uint64_t v)
{
    if (!before_value(j))
        return;
    fprintf(j->f, "%" PRIu64, v);
    after_value(j);
}

void cli_json_double(cli_json *j, double v)
{
    if (!isfinite(v)) {
        cli_json_null(j);
        return;
    }
    if (!before_value(j))
        return;
    /* The shortest %g text that reads back exactly (%.17g always does),
     * with at least as many digits as the integer part has, so that 10 is
     * "10", not "1e+01"; beyond 17 integer digits an exponent is shorter. */
    char buf[40];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    double mag = fabs(v);
    int int_digits = 0;
    while (int_digits < 18 && mag >= 1.0) {
        mag /= 10.0;
        int_digits++;
    }
    if (int_digits > prec && int_digits <= 17)
        prec = int_digits;
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    fputs(buf, j->f);
    after_value(j);
}

void cli_json_bool(cli_json *j, bool v)
{
    if (!before_value(j))
        return;
    fputs(v ? "true" : "false", j->f);
    after_value(j);
}

void cli_json_null(cli_json *j)
{
    if (!before_value(j))
        return;
    fputs("null", j->f);
    after_value(j);
}

void cli_json_rat(cli_json *j, weft_rat v)
{
    char buf[48];
    weft_rat_format(v, buf, sizeof buf);
    cli_json_string(j, buf);
}

void cli_json_kv_string(cli_json *j, const char *key, const char *s)
{
    cli_json_key(j, key);
    cli_json_string(j, s);
}

void cli_json_kv_int(cli_json *j, const char *key, int64_t v)
{
    cli_json_key(j, key);
    cli_json_int(j, v);
}

void cli_json_kv_uint(cli_json *j, const char *key, uint64_t v)
{
    cli_json_key(j, key);
    cli_json_uint(j, v);
}

void cli_json_kv_double(cli_json *j, const char *key, double v)
{
    cli_json_key(j, key);
    cli_json_double(j, v);
}

void cli_json_kv_bool(cli_json *j, const char *key, bool v)
{
    cli_json_key(j, key);
    cli_json_bool(j, v);
}

void cli_json_kv_rat(cli_json *j, const char *key, weft_rat v)
{
    cli_json_key(j, key);
    cli_json_rat(j, v);
}

int cli_json_finish(cli_json *j)
{
    if (j->misuse || !j->done)
        return -1;
    fputc('\n', j->f);
    return 0;
}
