/* Byte sizes and sweeps. See sizes.h. */
#include "cli/sizes.h"

#include <stdio.h>
#include <string.h>

bool cli_parse_size(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == 0)
        return false;
    unsigned shift = 0;
    if (i < len) {
        switch (s[i]) {
        case 'K':
            shift = 10;
            break;
        case 'M':
            shift = 20;
            break;
        case 'G':
            shift = 30;
            break;
        default:
            return false;
        }
        i++;
    }
    if (i != len || v == 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

bool cli_parse_sweep(const char *s, uint64_t *lo, uint64_t *hi, uint64_t *factor)
{
    const char *c1 = strchr(s, ':');
    if (!c1) {
        *factor = 0;
        return cli_parse_size(s, strlen(s), lo) && (*hi = *lo, true);
    }
    const char *c2 = strchr(c1 + 1, ':');
    return c2 && c2[1] == 'x' && cli_parse_size(s, (size_t)(c1 - s), lo) &&
           cli_parse_size(c1 + 1, (size_t)(c2 - c1 - 1), hi) &&
           cli_parse_size(c2 + 2, strlen(c2 + 2), factor) && *factor >= 2 && *hi >= *lo;
}

void cli_size_label(uint64_t size, char *buf, size_t len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * (unsigned)i;
        if (size >= (1ull << shift) && size % (1ull << shift) == 0) {
            snprintf(buf, len, "%llu%c", (unsigned long long)(size >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)size);
}
