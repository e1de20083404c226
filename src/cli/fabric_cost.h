/* What weft topo cost and weft sim --compare-fabrics share: the cost table
 * a command uses (the defaults of docs/cost.md, then --cost FILE) and how
 * $ and W are written. */
#ifndef WEFT_CLI_FABRIC_COST_H
#define WEFT_CLI_FABRIC_COST_H

#include <stddef.h>

#include "cli/json.h"
#include "weft/cost.h"

/* The defaults, then the file at path when not NULL. CLI_EXIT_OK, or
 * CLI_EXIT_INPUT after printing the file's error ("q.cost:3:1: ..."). */
int cli_cost_table(const char *path, weft_cost_table *out);

/* Counts and prices fabric t: CLI_EXIT_OK or CLI_EXIT_INPUT after
 * printing why. */
int cli_cost_of(const weft_topo *t, const weft_cost_table *c, weft_cost_bom *b,
                weft_cost_totals *tot);

/* "13000", "278.5", "-" when unknown; per != 0 divides first (per rank),
 * two decimals unless whole. */
void cli_cost_text(weft_cost_value v, uint32_t per, char *buf, size_t len);

/* key: a number, or null when unknown; key_exact its exact text. */
void cli_cost_json(cli_json *j, const char *key, weft_cost_value v, uint32_t per);

/* A fabric's totals as JSON keys: usd, w, usd_per_rank, w_per_rank (each
 * by cli_cost_json), missing_usd, missing_w. */
void cli_cost_totals_json(cli_json *j, const weft_cost_totals *tot, uint32_t ranks);

#endif
