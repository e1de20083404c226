#include "base/alloc.h"
#include "base/testing.h"
#include "weft/log.h"

static int sink_calls;
static char sink_line[256];

static void sink(weft_log_level level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    sink_calls++;
    snprintf(sink_line, sizeof sink_line, "%s", line);
}

int main(void)
{
    CHECK_STR(weft_err_name(WEFT_OK), "WEFT_OK");
    CHECK_STR(weft_err_name(WEFT_ENOMEM), "WEFT_ENOMEM");
    CHECK_STR(weft_strerror(WEFT_ENOMEM), "out of memory");
    CHECK_STR(weft_err_name(WEFT_EPEER), "WEFT_EPEER");
    CHECK_STR(weft_err_name((weft_err)999), "WEFT_UNKNOWN");
    CHECK_INT(WEFT_OK, 0);

    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_diag_set(&d, WEFT_EPARSE, "%s:%d:%d: unknown node '%s'", "f.topo", 3, 12, "x"),
              WEFT_EPARSE);
    CHECK_STR(d.msg, "f.topo:3:12: unknown node 'x'");
    CHECK_ERR(weft_diag_code(&d, WEFT_EPARSE), WEFT_EPARSE);
    CHECK_STR(d.msg, "f.topo:3:12: unknown node 'x'"); /* kept: same failure */
    CHECK_ERR(weft_diag_code(&d, WEFT_ENOMEM), WEFT_ENOMEM);
    CHECK_STR(d.msg, "out of memory");
    CHECK_ERR(weft_diag_set(NULL, WEFT_EIO, "ignored"), WEFT_EIO);

    /* Logging: levels filter, lines carry level and subsystem. */
    weft_log_set_sink(sink, NULL);
    weft_log_set_level(WEFT_LOG_WARN);
    weft_log(WEFT_LOG_INFO, "topo", "hidden %d", 1);
    CHECK_INT(sink_calls, 0);
    weft_log(WEFT_LOG_WARN, "topo", "switch %s unbalanced", "sw0");
    CHECK_INT(sink_calls, 1);
    CHECK_STR(sink_line, "weft WARN topo: switch sw0 unbalanced");
    weft_log_level lv;
    CHECK_ERR(weft_log_level_parse("debug", &lv), WEFT_OK);
    CHECK_INT(lv, WEFT_LOG_DEBUG);
    CHECK_ERR(weft_log_level_parse("loud", &lv), WEFT_EINVAL);
    weft_log_set_sink(NULL, NULL);

    /* Allocation failure injection and live counting. */
    long base = weft__alloc_live();
    weft__alloc_fail_after(1);
    void *a = weft__malloc(10);
    void *b = weft__malloc(10);
    weft__alloc_fail_after(-1);
    CHECK(a != NULL);
    CHECK(b == NULL);
    CHECK_INT(weft__alloc_live(), base + 1);
    void *c = weft__realloc(a, 100);
    CHECK(c != NULL);
    weft__free(c);
    CHECK_INT(weft__alloc_live(), base);
    CHECK(weft__realloc_array(NULL, SIZE_MAX / 2, 4) == NULL);
    int *arr = NULL;
    size_t cap = 0;
    CHECK_INT(weft__grow((void **)&arr, &cap, 100, sizeof *arr), 0);
    CHECK(cap >= 100);
    weft__free(arr);
    return weft_test_done();
}
