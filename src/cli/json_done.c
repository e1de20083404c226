/* The end of every command's --json document. See cli.h. (Its own file:
 * the unit tests compile group.c in directly and have no JSON writer.) */
#include "cli/cli.h"
#include "cli/json.h"

int cli_json_done(struct cli_json *j)
{
    if (!cli_json_finish(j))
        return CLI_EXIT_OK;
    cli_error("internal error: incomplete JSON document");
    return CLI_EXIT_INPUT;
}
