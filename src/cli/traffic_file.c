/* --traffic FILE (traffic_file.h). */
#include <inttypes.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "cli/traffic_file.h"

int cli_traffic_load(const char *path, const char *spec, uint32_t ranks, weft_traffic *out)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_traffic m;
    cli_context_object("reading the traffic matrix");
    weft_err e = weft_traffic_load_file(path, &m, &d);
    if (e)
        return cli_fail(e, &d);
    if (m.ranks != ranks) {
        cli_error("%s: the traffic matrix has %" PRIu32 " ranks, the fabric %s has %" PRIu32, path,
                  m.ranks, spec, ranks);
        weft_traffic_free(&m);
        return CLI_EXIT_INPUT;
    }
    *out = m;
    return CLI_EXIT_OK;
}

int cli_traffic_write(const char *path, const weft_traffic *t, const char *comment)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_traffic_write(o.f, t, comment, &d);
    if (e) {
        cli_out_close(&o, false);
        return cli_fail(e, &d);
    }
    return cli_out_close(&o, true);
}
