/* The JSON writer: exact bytes for nesting, escaping, numbers, rationals,
 * and misuse detection. The CLI is not part of libweft, so the test
 * compiles the writer in directly. */
#include "cli/json.c"

#include <stdlib.h>

#include "base/testing.h"

/* Runs fill() on a writer over a memory stream and returns the text and
 * what cli_json_finish said. */
static char *render(void (*fill)(cli_json *), int *finish)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    cli_json j;
    cli_json_init(&j, f);
    fill(&j);
    *finish = cli_json_finish(&j);
    fclose(f);
    return buf;
}

static void fill_nested(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_kv_uint(j, "ranks", 16);
    cli_json_kv_string(j, "coll", "allgather");
    cli_json_kv_double(j, "algbw", 1040.0 / 3.0);
    weft_rat r = {1040, 3};
    cli_json_kv_rat(j, "algbw_exact", r);
    cli_json_kv_rat(j, "int_exact", weft_rat_int(25));
    cli_json_kv_int(j, "neg", -7);
    cli_json_kv_bool(j, "ok", true);
    cli_json_key(j, "none");
    cli_json_null(j);
    cli_json_key(j, "list");
    cli_json_begin_array(j);
    cli_json_int(j, 1);
    cli_json_begin_object(j);
    cli_json_end_object(j);
    cli_json_begin_array(j);
    cli_json_end_array(j);
    cli_json_string(j, NULL);
    cli_json_end_array(j);
    cli_json_end_object(j);
}

static void fill_strings(cli_json *j)
{
    cli_json_begin_array(j);
    cli_json_string(j, "quote\" back\\ nl\n tab\t cr\r bs\b ff\f");
    cli_json_string(j, "\x01\x1f\x7f");
    cli_json_string(j, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
    cli_json_string(j, "bad \xff \xc0\xaf \xed\xa0\x80 \xe2\x86 end");
    cli_json_string(j, "");
    cli_json_end_array(j);
}

static void fill_numbers(cli_json *j)
{
    cli_json_begin_array(j);
    cli_json_double(j, 325.0);
    cli_json_double(j, 10.0);
    cli_json_double(j, -1200.0);
    cli_json_double(j, 1e16);
    cli_json_double(j, 1e20);
    cli_json_double(j, 0.1);
    cli_json_double(j, 12.5);
    cli_json_double(j, 1e300);
    cli_json_double(j, -2.5e-7);
    cli_json_double(j, 0.0 / 0.0);
    cli_json_double(j, 1.0 / 0.0);
    cli_json_int(j, INT64_MIN);
    cli_json_uint(j, UINT64_MAX);
    cli_json_end_array(j);
}

static void fill_value_without_key(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_int(j, 1);
    cli_json_end_object(j);
}

static void fill_key_in_array(cli_json *j)
{
    cli_json_begin_array(j);
    cli_json_key(j, "k");
    cli_json_end_array(j);
}

static void fill_mismatched(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_end_array(j);
}

static void fill_unfinished(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_kv_int(j, "a", 1);
}

static void fill_two_documents(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_end_object(j);
    cli_json_begin_object(j);
    cli_json_end_object(j);
}

static void fill_dangling_key(cli_json *j)
{
    cli_json_begin_object(j);
    cli_json_key(j, "a");
    cli_json_end_object(j);
}

static void fill_too_deep(cli_json *j)
{
    for (int i = 0; i <= CLI_JSON_MAX_DEPTH; i++)
        cli_json_begin_array(j);
}

static void expect(void (*fill)(cli_json *), int want_finish, const char *want)
{
    int finish = 99;
    char *text = render(fill, &finish);
    CHECK_INT(finish, want_finish);
    if (want)
        CHECK_STR(text, want);
    free(text);
}

int main(void)
{
    expect(fill_nested, 0,
           "{\n"
           "  \"ranks\": 16,\n"
           "  \"coll\": \"allgather\",\n"
           "  \"algbw\": 346.6666666666667,\n"
           "  \"algbw_exact\": \"1040/3\",\n"
           "  \"int_exact\": \"25\",\n"
           "  \"neg\": -7,\n"
           "  \"ok\": true,\n"
           "  \"none\": null,\n"
           "  \"list\": [\n"
           "    1,\n"
           "    {},\n"
           "    [],\n"
           "    null\n"
           "  ]\n"
           "}\n");
    expect(fill_strings, 0,
           "[\n"
           "  \"quote\\\" back\\\\ nl\\n tab\\t cr\\r bs\\b ff\\f\",\n"
           "  \"\\u0001\\u001f\\u007f\",\n"
           "  \"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\",\n"
           "  \"bad \\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd end\",\n"
           "  \"\"\n"
           "]\n");
    expect(fill_numbers, 0,
           "[\n"
           "  325,\n"
           "  10,\n"
           "  -1200,\n"
           "  10000000000000000,\n"
           "  1e+20,\n"
           "  0.1,\n"
           "  12.5,\n"
           "  1e+300,\n"
           "  -2.5e-07,\n"
           "  null,\n"
           "  null,\n"
           "  -9223372036854775808,\n"
           "  18446744073709551615\n"
           "]\n");
    expect(fill_value_without_key, -1, NULL);
    expect(fill_key_in_array, -1, NULL);
    expect(fill_mismatched, -1, NULL);
    expect(fill_unfinished, -1, NULL);
    expect(fill_two_documents, -1, NULL);
    expect(fill_dangling_key, -1, NULL);
    expect(fill_too_deep, -1, NULL);
    return weft_test_done();
}
