/* The JSON form of a plan, for other tools. One object; the schema is in
 * docs/plan-format.md. Names are escaped as JSON strings; shares are exact
 * fractions in strings ("1/2"), as DESIGN.md does for every exact value. */
#include "base/json.h"
#include "plan/plan_internal.h"

/* A plan's names as they always were: every control character as \u00xx,
 * bytes from 0x7F up as they are (base/json.h). */
static void json_string(FILE *f, const char *s)
{
    weft__json_string(f, s, WEFT__JSON_CTRL_HEX | WEFT__JSON_RAW_BYTES);
}

static void json_slot(FILE *f, const char *key, weft_rank r, weft_buf b, uint32_t index)
{
    fprintf(f, "\"%s\":{\"rank\":%u,\"buf\":\"%s\",\"index\":%u}", key, r.v, weft_buf_name(b),
            index);
}

weft_err weft_plan_write_json(const weft_plan *p, FILE *f)
{
    const weft_plan_info *in = &p->info;
    fprintf(f, "{\"format\":\"weft-plan\",\"version\":1,\"coll\":\"%s\",\"ranks\":%u",
            weft_coll_name(in->coll), in->nranks);
    if (weft_coll_has_root(in->coll))
        fprintf(f, ",\"root\":%u", in->root.v);
    fprintf(f, ",\"chunks\":%u,\"scratch\":%u,\"inplace\":%s", in->chunks, in->scratch,
            in->inplace ? "true" : "false");
    if (p->op_bytes)
        fprintf(f, ",\"size\":%llu", (unsigned long long)p->op_size);
    if (p->step_forward) {
        char gbps[32];
        weft__plan_format_double(p->step_gbps, gbps, sizeof gbps);
        fprintf(f, ",\"forward\":{\"step\":%llu,\"gbps\":%s}", (unsigned long long)p->step_forward,
                gbps);
    }
    if (p->whole)
        fputs(",\"whole\":true", f);
    const weft_traffic *tm = weft_plan_traffic(p);
    if (tm) {
        fputs(",\"traffic\":[", f);
        for (uint32_t r = 0; r < tm->ranks; r++) {
            fputs(r ? ",[" : "[", f);
            for (uint32_t c = 0; c < tm->ranks; c++)
                fprintf(f, "%s%llu", c ? "," : "", (unsigned long long)weft_traffic_at(tm, r, c));
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputs(",\"ops\":[", f);
    for (uint32_t i = 0; i < p->nops; i++) {
        const weft_op *op = &p->ops[i];
        fprintf(f, "%s{\"id\":%u,\"kind\":\"%s\",", i ? "," : "", i, weft_op_kind_name(op->kind));
        if (op->kind == WEFT_OP_NOP) {
            fprintf(f, "\"rank\":%u", op->src_rank.v);
            weft_compute cp = weft_plan_op_compute(p, i);
            if (cp != WEFT_COMPUTE_NONE)
                fprintf(f, ",\"compute\":\"%s\"", weft_compute_name(cp));
            if (cp != WEFT_COMPUTE_NONE && p->op_bytes)
                fprintf(f, ",\"bytes\":%llu",
                        i < p->op_bytes_n ? (unsigned long long)p->op_bytes[i] : 0ull);
        } else {
            json_slot(f, "src", op->src_rank, op->src_buf, op->src_index);
            fputc(',', f);
            json_slot(f, "dst", op->dst_rank, op->dst_buf, op->dst_index);
            fprintf(f, ",\"count\":%u", op->count);
            if (p->op_bytes)
                fprintf(f, ",\"bytes\":%llu",
                        i < p->op_bytes_n ? (unsigned long long)p->op_bytes[i] : 0ull);
        }
        fprintf(f, ",\"channel\":%u,\"deps\":[", op->channel);
        const uint32_t *deps = weft__plan_deps(p, i);
        for (uint32_t k = 0; k < p->dep_count[i]; k++)
            fprintf(f, "%s%u", k ? "," : "", deps[k]);
        fputc(']', f);
        uint32_t np = weft_plan_op_num_paths(p, i);
        if (np) {
            fputs(",\"route\":[", f);
            for (uint32_t k = 0; k < np; k++) {
                const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
                char share[48];
                weft_rat_format(pt->share, share, sizeof share);
                fprintf(f, "%s{\"share\":\"%s\",", k ? "," : "", share);
                if (pt->epoch != WEFT_PLAN_NO_EPOCH)
                    fprintf(f, "\"epoch\":%u,", pt->epoch);
                fputs("\"nodes\":[", f);
                for (uint32_t v = 0; v < pt->nnodes; v++) {
                    if (v)
                        fputc(',', f);
                    json_string(f, weft__plan_name(p, p->path_nodes[pt->node_start + v]));
                }
                fputs("]}", f);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputc(']', f);
    if (p->ncircuits) {
        fputs(",\"circuits\":[", f);
        for (size_t c = 0; c < p->ncircuits; c++) {
            const weft__plan_circuit *ci = &p->circuits[c];
            fprintf(f, "%s{\"epoch\":%u,\"ocs\":", c ? "," : "", ci->epoch);
            json_string(f, weft__plan_name(p, ci->ocs));
            fputs(",\"from\":", f);
            json_string(f, weft__plan_name(p, ci->from));
            fputs(",\"to\":", f);
            json_string(f, weft__plan_name(p, ci->to));
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputs("}\n", f);
    return ferror(f) ? WEFT_EIO : WEFT_OK;
}
