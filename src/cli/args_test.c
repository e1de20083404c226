/* The argument parser: every accepted spelling, every usage error with its
 * exact message, help, and --log. The CLI is not part of libweft, so the
 * test compiles the parser in directly. */
#include "cli/args.c"
#include "cli/group.c"

#include <fcntl.h>
#include <unistd.h>

#include "base/testing.h"

static const cli_opt test_opts[] = {
    {"coll", 'c', "C", "the collective"},
    {"output", 'o', "FILE", "write to FILE"},
    {"json", 0, NULL, "print JSON"},
    {"verbose", 'v', NULL, "say more"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup test_group = {"options", test_opts, false};
static const cli_syntax test_syn = {
    .path = "weft test",
    .args = "SPEC [PLAN] [options]",
    .about = "Tests the parser.\n",
    .groups = {&test_group},
    .pos_names = {"SPEC", "PLAN"},
    .min_pos = 1,
    .max_pos = 2,
};

/* Runs cli_args_parse on a NULL-terminated word list with stdout and
 * stderr captured into out/err (each up to 4 KiB). */
static int parse(cli_args *a, char *out, char *err, const char *const *words)
{
    char *argv[16];
    int argc = 0;
    for (; words[argc]; argc++)
        argv[argc] = (char *)words[argc];
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    FILE *fo = tmpfile(), *fe = tmpfile();
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(fo), 1);
    dup2(fileno(fe), 2);
    int rc = cli_args_parse(&test_syn, argc, argv, a);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    size_t n;
    rewind(fo);
    n = fread(out, 1, 4095, fo);
    out[n] = '\0';
    rewind(fe);
    n = fread(err, 1, 4095, fe);
    err[n] = '\0';
    fclose(fo);
    fclose(fe);
    return rc;
}

#define WORDS(...) ((const char *const[]){"test", __VA_ARGS__, NULL})

static void expect_usage(const char *const *words, const char *message)
{
    cli_args a;
    char out[4096], err[4096], want[4096];
    CHECK_INT(parse(&a, out, err, words), CLI_EXIT_USAGE);
    snprintf(want, sizeof want,
             "weft: %s\nusage: weft test SPEC [PLAN] [options]\nrun 'weft test --help' for "
             "details\n",
             message);
    CHECK_STR(err, want);
    CHECK_STR(out, "");
}

int main(void)
{
    cli_args a;
    char out[4096], err[4096];

    /* Every spelling of a value. */
    CHECK_INT(parse(&a, out, err,
                    WORDS("a100:2", "--coll", "allgather", "-o", "x.plan", "--json", "p.plan")),
              CLI_CONTINUE);
    CHECK_STR(cli_args_get(&a, "coll"), "allgather");
    CHECK_STR(cli_args_get(&a, "output"), "x.plan");
    CHECK_STR(cli_args_get(&a, "json"), "");
    CHECK(!cli_args_has(&a, "verbose"));
    CHECK_INT(a.n_pos, 2);
    CHECK_STR(a.pos[0], "a100:2");
    CHECK_STR(a.pos[1], "p.plan");
    cli_args_fini(&a);

    CHECK_INT(parse(&a, out, err, WORDS("--coll=reducescatter", "-ofile", "s", "-v")),
              CLI_CONTINUE);
    CHECK_STR(cli_args_get(&a, "coll"), "reducescatter");
    CHECK_STR(cli_args_get(&a, "output"), "file");
    CHECK(cli_args_has(&a, "verbose"));
    CHECK_STR(a.pos[0], "s");
    cli_args_fini(&a);

    /* Values may look like flags; the last repeat wins; "=" may be empty. */
    CHECK_INT(parse(&a, out, err, WORDS("-c", "-5", "--coll", "x", "--output=", "s")),
              CLI_CONTINUE);
    CHECK_STR(cli_args_get(&a, "coll"), "x");
    CHECK_STR(cli_args_get(&a, "output"), "");
    cli_args_fini(&a);

    /* "--" ends options; "-" is positional. */
    CHECK_INT(parse(&a, out, err, WORDS("-", "--", "--json")), CLI_CONTINUE);
    CHECK_INT(a.n_pos, 2);
    CHECK_STR(a.pos[0], "-");
    CHECK_STR(a.pos[1], "--json");
    CHECK(!cli_args_has(&a, "json"));
    cli_args_fini(&a);

    /* --log sets the level at once; it is a common option. */
    weft_log_set_level(WEFT_LOG_WARN);
    CHECK_INT(parse(&a, out, err, WORDS("s", "--log", "debug")), CLI_CONTINUE);
    CHECK_INT(weft_log_get_level(), WEFT_LOG_DEBUG);
    cli_args_fini(&a);
    CHECK_INT(parse(&a, out, err, WORDS("s", "--log=error")), CLI_CONTINUE);
    CHECK_INT(weft_log_get_level(), WEFT_LOG_ERROR);
    cli_args_fini(&a);
    weft_log_set_level(WEFT_LOG_WARN);

    /* Usage errors, each with its exact message. */
    expect_usage(WORDS("s", "--bogus"), "unknown flag '--bogus'");
    expect_usage(WORDS("s", "--bogus=1"), "unknown flag '--bogus'");
    expect_usage(WORDS("s", "-x"), "unknown flag '-x'");
    expect_usage(WORDS("s", "-vj"), "unknown flag '-vj'");
    expect_usage(WORDS("--"), "missing SPEC");
    expect_usage(WORDS("--json"), "missing SPEC");
    expect_usage(WORDS("s", "--json=yes"), "flag --json takes no value");
    expect_usage(WORDS("s", "--coll"), "flag --coll needs a value (C)");
    expect_usage(WORDS("s", "-o"), "flag --output needs a value (FILE)");
    expect_usage(WORDS("a", "b", "c"), "unexpected argument 'c'");
    expect_usage(WORDS("s", "--log", "loud"),
                 "unknown log level 'loud' for --log (error, warn, info, debug, trace)");
    expect_usage(WORDS("s", "--js"), "unknown flag '--js'");

    /* --help wins over missing arguments and prints everything. */
    CHECK_INT(parse(&a, out, err, WORDS("--help")), CLI_EXIT_OK);
    CHECK_STR(err, "");
    CHECK_STR(out, "usage: weft test SPEC [PLAN] [options]\n"
                   "\n"
                   "Tests the parser.\n"
                   "\n"
                   "options:\n"
                   "  -c, --coll C       the collective\n"
                   "  -o, --output FILE  write to FILE\n"
                   "      --json         print JSON\n"
                   "  -v, --verbose      say more\n"
                   "\n"
                   "common options:\n"
                   "  -h, --help         print this help and exit\n"
                   "      --log LEVEL    error, warn, info, debug or trace (default warn, or "
                   "$WEFT_LOG)\n");
    CHECK_INT(parse(&a, out, err, WORDS("s", "-h")), CLI_EXIT_OK);
    CHECK_CONTAINS(out, "usage: weft test");
    return weft_test_done();
}
