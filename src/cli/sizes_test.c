/* The size grammar every size flag shares (sim --size, tune --sizes, perf
 * -b/-e): each unit's exact factor, whole-byte fractions, and the reason
 * for every way a size or a sweep is refused. The CLI is not part of
 * libweft, so the test compiles the parser in directly. */
#include "cli/args.c"
#include "cli/group.c"
#include "cli/sizes.c"

#include "base/testing.h"

static void check_size(const char *text, uint64_t want)
{
    uint64_t v = 0;
    const char *why = "";
    if (!cli_parse_size(text, strlen(text), &v, &why) || v != want) {
        fprintf(stderr, "size '%s': %llu (%s), expected %llu\n", text, (unsigned long long)v, why,
                (unsigned long long)want);
        weft__test_failed++;
    } else {
        weft__test_passed++;
    }
}

static void check_size_bad(const char *text, const char *want_why)
{
    uint64_t v = 7;
    const char *why = "";
    CHECK(!cli_parse_size(text, strlen(text), &v, &why));
    CHECK_STR(why, want_why);
    CHECK(v == 7);
}

static void check_sweep(const char *text, uint64_t lo, uint64_t hi, uint64_t f)
{
    uint64_t a = 0, b = 0, c = 9;
    char why[512] = "";
    CHECK(cli_parse_sweep(text, &a, &b, &c, why, sizeof why));
    CHECK_STR(why, "");
    CHECK(a == lo && b == hi && c == f);
}

static void check_sweep_bad(const char *text, const char *want_why)
{
    uint64_t a, b, c;
    char why[512] = "";
    CHECK(!cli_parse_sweep(text, &a, &b, &c, why, sizeof why));
    CHECK_STR(why, want_why);
}

int main(void)
{
    check_size("4096", 4096);
    check_size("4096B", 4096);
    check_size("1k", 1024);
    check_size("1K", 1024);
    check_size("64M", 64ull << 20);
    check_size("64m", 64ull << 20);
    check_size("1G", 1ull << 30);
    check_size("1GiB", 1ull << 30);
    check_size("1MiB", 1ull << 20);
    check_size("1KiB", 1024);
    check_size("1GB", 1000000000);
    check_size("1MB", 1000000);
    check_size("1KB", 1000);
    check_size("1kB", 1000);
    check_size("1.5G", 1610612736);
    check_size("0.5K", 512);
    check_size("2e3", 2000);
    check_size("1.5e3KB", 1500000);
    check_size("16G", 16ull << 30);
    check_size("17179869183G", 17179869183ull << 30); /* 2^64 - 2^30 */

    check_size_bad("1.5", "not a whole number of bytes");
    check_size_bad("0.1K", "not a whole number of bytes");
    check_size_bad("0", "must be > 0");
    check_size_bad("-1K", "must be > 0");
    check_size_bad("17179869184GiB", "too large"); /* 2^64 */
    check_size_bad("99999999999999999999999", "too large");
    check_size_bad("1Q", CLI_SIZE_GRAMMAR);
    check_size_bad("1 K", CLI_SIZE_GRAMMAR);
    check_size_bad("1Kb", CLI_SIZE_GRAMMAR);
    check_size_bad("1/2K", CLI_SIZE_GRAMMAR);
    check_size_bad("K", CLI_SIZE_GRAMMAR);
    check_size_bad("", CLI_SIZE_GRAMMAR);

    check_sweep("64M", 64ull << 20, 64ull << 20, 0);
    check_sweep("1K:1G:x4", 1024, 1ull << 30, 4);
    check_sweep("1k:1GiB:x2", 1024, 1ull << 30, 2);
    check_sweep("1M:1M:x2", 1ull << 20, 1ull << 20, 2);
    check_sweep_bad("1M:1K:x2", "the sweep's end 1024 is below its start 1048576");
    check_sweep_bad("1K:1M:x1", "its factor 'x1' must be a whole number >= 2, e.g. x2 or x4");
    check_sweep_bad("1K:1M:x", "its factor 'x' must be a whole number >= 2, e.g. x2 or x4");
    check_sweep_bad("1K:1M:x2.5", "its factor 'x2.5' must be a whole number >= 2, e.g. x2 or x4");
    check_sweep_bad("1K:1M:4", "a sweep is MIN:MAX:xF, e.g. 1K:1G:x4 (MIN, MIN*F, ... up to MAX)");
    check_sweep_bad("1K:1M", "a sweep is MIN:MAX:xF, e.g. 1K:1G:x4 (MIN, MIN*F, ... up to MAX)");
    check_sweep_bad("1K:1M:x2:x2",
                    "a sweep is MIN:MAX:xF, e.g. 1K:1G:x4 (MIN, MIN*F, ... up to MAX)");
    check_sweep_bad("1x:1M:x2", "its start '1x' is not a size");
    check_sweep_bad("1K:0.5:x2", "its end '0.5': not a whole number of bytes");
    check_sweep_bad("0:1M:x2", "its start '0': must be > 0");
    check_sweep_bad("1.5", "not a whole number of bytes");
    return weft_test_done();
}
