/* The trace writer. See trace.h. */
#include "sim/trace.h"

#include "weft/protocol.h"
#include "base/alloc.h"

/* Writes s as a JSON string; node names are printable by construction, but
 * quotes and backslashes are escaped anyway. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

weft_err sim_trace_plan(FILE *f, const weft_topo *t, const weft_plan *p, const sim_engine *e,
                        const weft_sim_opts *so, weft_diag *d)
{
    uint32_t slices = so->slices;
    uint32_t nl = weft_topo_num_links(t), nranks = weft_plan_get_info(p)->nranks;
    uint8_t *used = weft__calloc(nl ? nl : 1, 1);
    if (!used)
        return weft_diag_code(d, WEFT_ENOMEM);
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"model\":\"%s\",\"proto\":\"%s\","
               "\"slices\":%u},\"traceEvents\":[\n",
            weft_sim_model_name(so->model),
            so->proto >= 0 ? weft_proto_name((weft_proto)so->proto) : "",
            slices);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"ranks\"}},\n"
          "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"links\"}}",
          f);
    for (uint32_t r = 0; r < nranks; r++)
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                "\"args\":{\"name\":\"rank %u\"}}",
                r, r);
    uint32_t nf = sim_engine_num_flows(e);
    for (uint32_t fl = 0; fl < nf; fl++) {
        uint32_t op = fl / slices, s = fl % slices, n;
        const uint32_t *links;
        double start, drained, done;
        sim_engine_flow_times(e, fl, &start, &drained, &done);
        weft_op o = weft_plan_op(p, op);
        fprintf(f,
                ",\n{\"name\":\"op %u\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.6f,"
                "\"dur\":%.6f,\"args\":{\"slice\":%u,\"dst\":%u,\"bytes\":%.17g}}",
                op, o.src_rank.v, start * 1e6, (done - start) * 1e6, s, o.dst_rank.v,
                sim_engine_flow_bytes(e, fl) * o.count); /* one chunk per unit of count */
        sim_engine_flow_route(e, fl, &n, &links);
        for (uint32_t k = 0; k < n; k++) {
            used[links[k]] = 1;
            fprintf(f,
                    ",\n{\"name\":\"op %u\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%.6f,"
                    "\"dur\":%.6f,\"args\":{\"slice\":%u}}",
                    op, links[k], start * 1e6, (drained - start) * 1e6, s);
        }
    }
    for (uint32_t l = 0; l < nl; l++) {
        if (!used[l])
            continue;
        weft_link_id id = {l};
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%u,\"args\":{\"name\":",
                l);
        char name[2 * WEFT_TOPO_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s -> %s", weft_topo_node_name(t, weft_topo_link_src(t, id)),
                 weft_topo_node_name(t, weft_topo_link_dst(t, id)));
        json_str(f, name);
        fputs("}}", f);
    }
    fputs("\n]}\n", f);
    weft__free(used);
    if (fflush(f) || ferror(f))
        return weft_diag_set(d, WEFT_EIO, "sim: writing the trace failed");
    return WEFT_OK;
}
