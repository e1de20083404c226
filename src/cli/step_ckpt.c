/* weft step --idle and --checkpoint output (cli/step_ckpt.h). */
#include "cli/step_ckpt.h"

#include <math.h>
#include <stdio.h>

/* k = 1 .. K + 1 (at most the boxes) simultaneous box failures. */
static uint32_t loss_ks(const cli_ckpt_out *o)
{
    uint32_t k = o->spec.replicas + 1;
    return k < o->boxes ? k : o->boxes;
}

void cli_step_ckpt_json(cli_json *j, const cli_ckpt_out *o)
{
    if (o->idle) {
        cli_json_key(j, "idle");
        cli_json_begin_array(j);
        for (size_t i = 0; i < o->ip.n; i++) {
            const weft_idle_group *g = &o->ip.g[i];
            cli_json_begin_object(j);
            cli_json_kv_string(j, "group", g->name);
            cli_json_kv_double(j, "bw_gbs", g->bw_gbs);
            cli_json_kv_double(j, "busy_s", g->busy_ns * 1e-9);
            cli_json_kv_double(j, "idle_s", g->idle_ns * 1e-9);
            cli_json_kv_double(j, "idle_bytes", g->idle_bytes);
            cli_json_key(j, "intervals");
            cli_json_begin_array(j);
            for (size_t k = 0; k < g->n; k++) {
                cli_json_begin_array(j);
                cli_json_double(j, g->iv[k][0]);
                cli_json_double(j, g->iv[k][1]);
                cli_json_end_array(j);
            }
            cli_json_end_array(j);
            cli_json_end_object(j);
        }
        cli_json_end_array(j);
    }
    if (!o->ckpt)
        return;
    const weft_ckpt_result *c = &o->cr;
    bool gem = o->spec.kind == WEFT_CKPT_GEMINI;
    cli_json_key(j, "checkpoint");
    cli_json_begin_object(j);
    cli_json_kv_string(j, "kind", gem ? "gemini" : "remote");
    if (gem) {
        cli_json_kv_uint(j, "replicas", o->spec.replicas);
        cli_json_kv_string(j, "placement", o->spec.place == WEFT_CKPT_RING ? "ring" : "group");
    }
    cli_json_kv_uint(j, "bytes_gpu", c->bytes_gpu);
    cli_json_kv_double(j, "bytes_box", c->bytes_box);
    cli_json_kv_double(j, "send_box", c->send_box);
    if (gem) {
        cli_json_kv_double(j, "host_need", c->host_need);
        cli_json_kv_bool(j, "host_fits", c->host_fits);
        cli_json_kv_double(j, "idle_bytes", c->idle_bytes);
    }
    cli_json_kv_double(j, "path_gbs", c->path_gbs);
    cli_json_kv_uint(j, "iterations_per_checkpoint", c->iters);
    cli_json_kv_double(j, "added_s", gem && c->iters ? 0 : c->added_every_s);
    cli_json_kv_double(j, "added_s_every_iteration", c->added_every_s);
    if (o->F > 0) {
        cli_json_kv_double(j, "failures_per_day", o->F);
        cli_json_kv_double(j, "restart_s", o->restart);
        cli_json_kv_double(j, "interval_s", c->interval_s);
        cli_json_kv_double(j, "lost_per_day_s", c->lost_per_day_s);
    }
    if (o->sim) {
        const weft_ckpt_sim *s = &o->cs;
        cli_json_key(j, "engine");
        cli_json_begin_object(j);
        cli_json_key(j, "iterations_per_checkpoint"); /* null: beyond the steps replayed */
        if (s->iters == UINT32_MAX)
            cli_json_null(j);
        else
            cli_json_uint(j, s->iters);
        cli_json_kv_double(j, "added_s_every_iteration", s->added_every_s);
        cli_json_kv_double(j, "arrival_s", s->arrival_s);
        cli_json_kv_double(j, "training_delay_s", s->training_delay_s);
        cli_json_kv_uint(j, "steps_replayed", s->steps);
        cli_json_kv_uint(j, "nic_groups", s->groups);
        cli_json_kv_uint(j, "flows", s->flows);
        cli_json_end_object(j);
    }
    if (gem) {
        cli_json_key(j, "loss_probability");
        cli_json_begin_array(j);
        for (uint32_t k = 1; k <= loss_ks(o); k++) {
            cli_json_begin_object(j);
            cli_json_kv_uint(j, "failures", k);
            double pg = weft_ckpt_loss_prob(WEFT_CKPT_GROUP, o->boxes, o->spec.replicas, k);
            double pr = weft_ckpt_loss_prob(WEFT_CKPT_RING, o->boxes, o->spec.replicas, k);
            cli_json_key(j, "group"); /* null: boxes not a multiple of K */
            if (isnan(pg))
                cli_json_null(j);
            else
                cli_json_double(j, pg);
            cli_json_kv_double(j, "ring", pr);
            cli_json_end_object(j);
        }
        cli_json_end_array(j);
    }
    cli_json_end_object(j);
}

void cli_step_ckpt_print(const cli_ckpt_out *o)
{
    if (o->idle) {
        printf("\nidle time per link group (step %.6f s):\n", o->ip.step_ns * 1e-9);
        for (size_t i = 0; i < o->ip.n; i++) {
            const weft_idle_group *g = &o->ip.g[i];
            printf("  %-12s busy %.6f s  idle %.6f s in %zu intervals  %.1f GB/s: %.3f GB idle\n",
                   g->name, g->busy_ns * 1e-9, g->idle_ns * 1e-9, g->n, g->bw_gbs,
                   g->idle_bytes / 1e9);
        }
    }
    if (!o->ckpt)
        return;
    const weft_ckpt_result *c = &o->cr;
    bool gem = o->spec.kind == WEFT_CKPT_GEMINI;
    printf("\ncheckpoint: %s", gem ? "gemini" : "remote");
    if (gem)
        printf(" (%u replicas, %s placement)", o->spec.replicas,
               o->spec.place == WEFT_CKPT_RING ? "ring" : "group");
    printf("\n  state      %.2f GB per GPU, %.1f GB per box; a box sends %.1f GB at %.1f GB/s\n",
           c->bytes_gpu / 1e9, c->bytes_box / 1e9, c->send_box / 1e9, c->path_gbs);
    if (gem) {
        printf("  host       %.1f GB per box for the replicas (%s)\n", c->host_need / 1e9,
               c->host_fits ? "fits" : "does not fit the host's memory");
        printf("  idle       %.1f GB a step on the tightest box's NICs\n", c->idle_bytes / 1e9);
        if (c->iters)
            printf("  every      %u iteration%s at no added step time\n", c->iters,
                   c->iters == 1 ? "" : "s");
        else
            printf("  every      iteration, adding %.4f s (no idle time)\n", c->added_every_s);
        if (c->iters > 1)
            printf("  each step  %.4f s added to checkpoint every iteration\n", c->added_every_s);
        if (o->sim) {
            const weft_ckpt_sim *s = &o->cs;
            printf("  engine     ");
            if (s->iters == UINT32_MAX)
                printf(
                    "beyond the replay (at most %u steps, 2^20 flows in one replay, 2^22 in all)",
                    WEFT_CKPT_SIM_STEPS);
            else if (s->iters)
                printf("every %u iteration%s", s->iters, s->iters == 1 ? "" : "s");
            else
                printf("never at no added time");
            printf(", %.4f s added to checkpoint every iteration, training delayed %g s "
                   "(class-1 flows beside %u step%s of NIC traffic)\n",
                   s->added_every_s, s->training_delay_s, s->steps, s->steps == 1 ? "" : "s");
        }
    } else {
        printf("  save       %.4f s, blocking, every %u iterations\n", c->added_every_s, c->iters);
    }
    if (o->F > 0)
        printf("  failures   %.3g a day, %.3g s restart: interval %.3f s, %.1f s lost a day\n",
               o->F, o->restart, c->interval_s, c->lost_per_day_s);
    if (gem)
        for (uint32_t k = 1; k <= loss_ks(o); k++) {
            double pg = weft_ckpt_loss_prob(WEFT_CKPT_GROUP, o->boxes, o->spec.replicas, k);
            printf("  P(loss | %u box%s fail) group ", k, k == 1 ? "" : "es");
            if (isnan(pg)) /* boxes not a multiple of K */
                printf("-");
            else
                printf("%.3g", pg);
            printf(", ring %.3g\n",
                   weft_ckpt_loss_prob(WEFT_CKPT_RING, o->boxes, o->spec.replicas, k));
        }
}
