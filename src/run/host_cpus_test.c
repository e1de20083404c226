/* weft__cpus_from_cpu_max: cgroup v2 quotas to CPUs, rounded up. */
#include "base/testing.h"
#include "run/host_cpus.h"

int main(void)
{
    CHECK_INT(weft__cpus_from_cpu_max("max 100000\n"), 0);
    CHECK_INT(weft__cpus_from_cpu_max("200000 100000\n"), 2);
    CHECK_INT(weft__cpus_from_cpu_max("150000 100000"), 2);
    CHECK_INT(weft__cpus_from_cpu_max("50000 100000\n"), 1);
    CHECK_INT(weft__cpus_from_cpu_max("1600000 100000\n"), 16);
    CHECK_INT(weft__cpus_from_cpu_max("100000 0\n"), 0);
    CHECK_INT(weft__cpus_from_cpu_max("garbage"), 0);
    CHECK_INT(weft__cpus_from_cpu_max(""), 0);
    CHECK_INT(weft__cpus_from_cpu_max(NULL), 0);
    uint32_t n = weft__host_cpus_detect();
    CHECK(n >= 1);
    return weft_test_done();
}
