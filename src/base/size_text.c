/* weft__size_text (base/size_text.h). */
#include "base/size_text.h"

#include <stdio.h>

void weft__size_text(uint64_t size, char *buf, size_t len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * (unsigned)i;
        if (size >= (1ull << shift) && size % (1ull << shift) == 0) {
            snprintf(buf, len, "%llu (%llu%c)", (unsigned long long)size,
                     (unsigned long long)(size >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)size);
}
