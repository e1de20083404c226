/* Cost tables and $/W text for the CLI. See fabric_cost.h. */
#include "cli/fabric_cost.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_cost_table(const char *path, weft_cost_table *out)
{
    weft_cost_table_defaults(out);
    if (!path)
        return CLI_EXIT_OK;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_cost_table_load(out, path, &d);
    if (e)
        return cli_fail(e, &d);
    return CLI_EXIT_OK;
}

int cli_cost_of(const weft_topo *t, const weft_cost_table *c, weft_cost_bom *b,
                weft_cost_totals *tot)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_cost_count(t, b, &d);
    if (!e)
        e = weft_cost_price(b, c, tot, &d);
    return e ? cli_fail(e, &d) : CLI_EXIT_OK;
}

/* v / per, exactly when it fits. */
static bool per_value(weft_cost_value v, uint32_t per, weft_rat *out)
{
    if (per == 0) {
        *out = v.v;
        return true;
    }
    return weft_rat_div(v.v, weft_rat_int(per), out) == WEFT_OK;
}

void cli_cost_text(weft_cost_value v, uint32_t per, char *buf, size_t len)
{
    weft_rat r;
    /* Unknown: ">=" the priced parts' sum, or "-" when none has a price. */
    if (!per_value(v, per, &r) || (!v.known && r.num == 0)) {
        snprintf(buf, len, "-");
        return;
    }
    const char *at_least = v.known ? "" : ">=";
    if (r.den == 1)
        snprintf(buf, len, "%s%lld", at_least, (long long)r.num);
    else
        snprintf(buf, len, "%s%.2f", at_least, weft_rat_to_double(r));
}

void cli_cost_json(cli_json *j, const char *key, weft_cost_value v, uint32_t per)
{
    char exact_key[64];
    snprintf(exact_key, sizeof exact_key, "%s_exact", key);
    weft_rat r;
    bool have = per_value(v, per, &r);
    if (!v.known || !have) {
        /* Unknown: null, and the priced parts' sum, when some are, as
         * KEY_at_least. */
        cli_json_key(j, key);
        cli_json_null(j);
        cli_json_key(j, exact_key);
        cli_json_null(j);
        char least_key[64];
        snprintf(least_key, sizeof least_key, "%s_at_least", key);
        if (have && r.num > 0)
            cli_json_kv_double(j, least_key, weft_rat_to_double(r));
        return;
    }
    cli_json_kv_double(j, key, weft_rat_to_double(r));
    cli_json_kv_rat(j, exact_key, r);
}

void cli_cost_totals_json(cli_json *j, const weft_cost_totals *tot, uint32_t ranks)
{
    cli_cost_json(j, "usd", tot->usd, 0);
    cli_cost_json(j, "w", tot->watt, 0);
    cli_cost_json(j, "usd_per_rank", tot->usd, ranks);
    cli_cost_json(j, "w_per_rank", tot->watt, ranks);
    cli_json_kv_string(j, "missing_usd", tot->missing_usd);
    cli_json_kv_string(j, "missing_w", tot->missing_watt);
}
