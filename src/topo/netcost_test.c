/* The bill of materials of small fabrics counted by hand (weft/cost.h's
 * rules), exact totals under a cost file, an override that changes the
 * total by exactly count x difference, every cost-file error with its
 * exact message, and the counter under injected allocation failures. */
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/cost.h"

#define NIC WEFT_COST_NIC
#define PORT WEFT_COST_SWITCH_PORT
#define XCVR WEFT_COST_TRANSCEIVER
#define DAC WEFT_COST_DAC
#define OCS WEFT_COST_OCS_PORT
#define FIBER WEFT_COST_FIBER
#define GPU WEFT_COST_GPU_LINK
#define G200 WEFT_COST_200G
#define G400 WEFT_COST_400G
#define G800 WEFT_COST_800G
#define ANY WEFT_COST_ANY

static uint64_t total_parts(const weft_cost_bom *b)
{
    uint64_t s = 0;
    for (int p = 0; p < WEFT_COST_PARTS; p++)
        for (int r = 0; r < WEFT_COST_RATES; r++)
            s += b->count[p][r];
    return s;
}

/* The bill of materials of t (freed here), or false when t is NULL. */
static bool bom_of_topo(weft_topo *t, weft_cost_bom *b)
{
    CHECK(t != NULL);
    if (!t)
        return false;
    weft_diag d;
    weft_diag_clear(&d);
    memset(b, 0xff, sizeof *b);
    CHECK_ERR(weft_cost_count(t, b, &d), WEFT_OK);
    weft_topo_free(t);
    return true;
}

static bool bom_of(const char *spec, weft_cost_bom *b)
{
    return bom_of_topo(weft__test_topo_spec(spec), b);
}

static bool bom_of_text(const char *text, weft_cost_bom *b)
{
    return bom_of_topo(weft__test_topo_text(text), b);
}

/* The totals of b under the defaults of docs/cost.md. */
static void price_defaults(const weft_cost_bom *b, weft_cost_totals *tot)
{
    weft_cost_table c;
    weft_cost_table_defaults(&c);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_cost_price(b, &c, tot, &d), WEFT_OK);
}

static void check_fig(const weft_cost_value *v, int64_t num, int64_t den)
{
    CHECK(v->known);
    CHECK_INT(v->v.num, num);
    CHECK_INT(v->v.den, den);
}

/* Every default of docs/cost.md's table, exactly, and the keys no public
 * source gave staying unknown. */
static void test_defaults(void)
{
    weft_cost_table c;
    weft_cost_table_defaults(&c);
    /* MixNet (SIGCOMM 2025) Appendix D.2, Table 4, $. */
    const int64_t xcvr[4] = {99, 239, 659, 1399}, port[4] = {187, 374, 1090, 1400},
                  nic[3] = {659, 1079, 1499};
    for (int r = 0; r < 4; r++) {
        check_fig(&c.usd[XCVR][r], xcvr[r], 1);
        check_fig(&c.usd[PORT][r], port[r], 1);
        if (r < 3)
            check_fig(&c.usd[NIC][r], nic[r], 1);
        CHECK(!c.usd[DAC][r].known);
        CHECK_INT(c.usd_line[XCVR][r], 0);
    }
    check_fig(&c.usd[OCS][ANY], 520, 1);
    /* ConnectX-7 typical W; SN5600 940 W over 128 x 400G or 64 x 800G. */
    check_fig(&c.watt[NIC][G200], 167, 10);
    check_fig(&c.watt[NIC][G400], 249, 10);
    check_fig(&c.watt[PORT][G400], 235, 32);
    check_fig(&c.watt[PORT][G800], 235, 16);
    check_fig(&c.watt[XCVR][G400], 9, 1);
    check_fig(&c.watt[XCVR][G800], 17, 1);
    check_fig(&c.watt[GPU][ANY], 0, 1);
    check_fig(&c.usd[GPU][ANY], 0, 1);
    /* No public figure: still unknown. */
    CHECK(!c.usd[NIC][G800].known);
    CHECK(!c.watt[NIC][WEFT_COST_100G].known);
    CHECK(!c.watt[NIC][G800].known);
    CHECK(!c.watt[PORT][WEFT_COST_100G].known);
    CHECK(!c.watt[PORT][G200].known);
    CHECK(!c.watt[OCS][ANY].known);
    CHECK(!c.usd[FIBER][ANY].known);
}

/* clos:hosts=2,gpus=2,nics=2,leafports=2: two hosts of 2 GPUs on an
 * NVSwitch and 2 NICs of 400G; rail-optimised, 2 leaves, 2 spines, each
 * leaf-spine link 2 * 50 / 2 = 50 GB/s (400G). By hand: 4 GPU-NVSwitch
 * links; GPU-NIC is PCIe; 4 NIC-leaf cables: 4 NICs, 4 leaf ports, 4 DACs;
 * 4 leaf-spine cables: 8 switch ports, 8 transceivers, 4 fibers. */
static void test_clos(void)
{
    weft_cost_bom b;
    if (!bom_of("clos:hosts=2,gpus=2,nics=2,leafports=2", &b))
        return;
    CHECK_INT(b.ranks, 4);
    CHECK_INT(b.count[NIC][G400], 4);
    CHECK_INT(b.count[PORT][G400], 12);
    CHECK_INT(b.count[XCVR][G400], 8);
    CHECK_INT(b.count[DAC][G400], 4);
    CHECK_INT(b.count[FIBER][ANY], 4);
    CHECK_INT(b.count[GPU][ANY], 4);
    CHECK_INT(total_parts(&b), 36);

    /* Sourced defaults (docs/cost.md): NIC 400G 1499 $ / 24.9 W, switch
     * port 400G 1090 $ / 940/128 W, transceiver 400G 659 $ / 9 W, DACs,
     * fibers and GPU links 0 W. W = 4*24.9 + 12*235/32 + 8*9 =
     * 498/5 + 705/8 + 72 = 10389/40 (259.725) exactly. No public price
     * for a DAC or a fiber: the $ total is unknown and names them. */
    weft_cost_totals tot;
    price_defaults(&b, &tot);
    CHECK(!tot.usd.known);
    CHECK(tot.watt.known);
    CHECK_INT(tot.watt.v.num, 10389);
    CHECK_INT(tot.watt.v.den, 40);
    CHECK_STR(tot.missing_watt, "");
    CHECK_STR(tot.missing_usd, "dac.400g.usd, fiber.usd");

    /* Giving only the two missing prices completes the $ total on top of
     * the defaults: 4*1499 + 12*1090 + 8*659 + 4*100 + 4*50 = 24948. */
    const char *two = "dac.400g.usd = 100\nfiber.usd = 50\n";
    weft_diag d;
    weft_diag_clear(&d);
    weft_cost_table c2;
    weft_cost_table_defaults(&c2);
    CHECK_ERR(weft_cost_table_parse(&c2, two, strlen(two), "two.cost", &d), WEFT_OK);
    CHECK_ERR(weft_cost_price(&b, &c2, &tot, &d), WEFT_OK);
    CHECK(tot.usd.known);
    CHECK_INT(tot.usd.v.num, 24948);
    CHECK_INT(tot.usd.v.den, 1);
    CHECK_INT(tot.watt.v.num, 10389);

    const char *file = "# quotes\n"
                       "nic.400g.usd = 1000\n"
                       "nic.400g.w = 20\n"
                       "switch_port.400g.usd=500   # a 64-port switch / 64\n"
                       "switch_port.400g.w = 10.5\n"
                       "\n"
                       "transceiver.400g.usd = 300\n"
                       "dac.400g.usd = 100\n"
                       "fiber.usd = 50\n";
    weft_cost_table c;
    weft_cost_table_defaults(&c);
    CHECK_ERR(weft_cost_table_parse(&c, file, strlen(file), "q.cost", &d), WEFT_OK);
    CHECK_ERR(weft_cost_price(&b, &c, &tot, &d), WEFT_OK);
    /* 4*1000 + 12*500 + 8*300 + 4*100 + 4*50 = 13000 $;
     * 4*20 + 12*10.5 + 8*9 = 278 W. */
    CHECK(tot.usd.known);
    CHECK(tot.watt.known);
    CHECK_INT(tot.usd.v.num, 13000);
    CHECK_INT(tot.usd.v.den, 1);
    CHECK_INT(tot.watt.v.num, 278);
    CHECK_INT(tot.watt.v.den, 1);
    CHECK_STR(tot.missing_usd, "");
    CHECK_INT(c.usd_line[NIC][G400], 2);

    /* Overriding one figure changes the total by count x difference:
     * 4 NICs x (1250 - 1000) = +1000 $; 8 transceivers x (8.25 - 9) W. */
    const char *over = "nic.400g.usd = 1250\ntransceiver.400g.w = 8.25\n";
    CHECK_ERR(weft_cost_table_parse(&c, over, strlen(over), "o.cost", &d), WEFT_OK);
    CHECK_ERR(weft_cost_price(&b, &c, &tot, &d), WEFT_OK);
    CHECK_INT(tot.usd.v.num, 14000);
    CHECK_INT(tot.watt.v.num, 272);
    CHECK_INT(tot.watt.v.den, 1);
}

/* mixnet:hosts=2,gpus=4: per host 4 GPU-NVSwitch links, NICs 0 and 1 on
 * rails 0 and 1 (switch port + DAC each), NICs 2 and 3 on ocs0 (OCS port,
 * one transceiver at the NIC, one fiber each). */
static void test_mixnet(void)
{
    weft_cost_bom b;
    if (!bom_of("mixnet:hosts=2,gpus=4", &b))
        return;
    CHECK_INT(b.ranks, 8);
    CHECK_INT(b.count[GPU][ANY], 8);
    CHECK_INT(b.count[NIC][G400], 8);
    CHECK_INT(b.count[PORT][G400], 4);
    CHECK_INT(b.count[DAC][G400], 4);
    CHECK_INT(b.count[OCS][ANY], 4);
    CHECK_INT(b.count[XCVR][G400], 4);
    CHECK_INT(b.count[FIBER][ANY], 4);
    CHECK_INT(total_parts(&b), 36);

    /* No public figure for an OCS port's power: W unknown, naming it;
     * $ unknown for the DACs and fibers only (the OCS port has 520 $). */
    weft_cost_totals tot;
    price_defaults(&b, &tot);
    CHECK(!tot.usd.known);
    CHECK(!tot.watt.known);
    CHECK_STR(tot.missing_watt, "ocs_port.w");
    CHECK_STR(tot.missing_usd, "dac.400g.usd, fiber.usd");
}

/* torus:4x4 (100 GB/s = 800G, ranks of no host): 32 duplex neighbour
 * pairs, each a direct optical cable between two ranks' own NICs. */
static void test_torus_and_star(void)
{
    weft_cost_bom b;
    if (bom_of("torus:4x4", &b)) {
        CHECK_INT(b.count[NIC][G800], 64);
        CHECK_INT(b.count[XCVR][G800], 64);
        CHECK_INT(b.count[FIBER][ANY], 32);
        CHECK_INT(total_parts(&b), 160);
        /* No 800G NIC had a public price or power: both totals unknown. */
        weft_cost_totals tot;
        price_defaults(&b, &tot);
        CHECK(!tot.usd.known);
        CHECK(!tot.watt.known);
        CHECK_STR(tot.missing_usd, "nic.800g.usd, fiber.usd");
        CHECK_STR(tot.missing_watt, "nic.800g.w");
    }
    /* switch:4,bw=25 (200G): each rank's own NIC, a port, a DAC. */
    if (bom_of("switch:4,bw=25", &b)) {
        CHECK_INT(b.count[NIC][G200], 4);
        CHECK_INT(b.count[PORT][G200], 4);
        CHECK_INT(b.count[DAC][G200], 4);
        CHECK_INT(total_parts(&b), 12);
    }
}

/* Rate classes: a 250 GB/s (2000G) switch-switch link is ceil(2000/800) =
 * 3 cables of 800G; the larger direction of an asymmetric pair sets the
 * class (50 GB/s one way, 25 the other: 400G); 12.5 GB/s is 100G. */
static void test_classes(void)
{
    weft_cost_bom b;
    if (bom_of_text("node r compute\nnode a switch\nnode b switch\nduplex a b 250GB/s\n"
                    "duplex r a 1GB/s\n",
                    &b)) {
        CHECK_INT(b.count[PORT][G800], 6);
        CHECK_INT(b.count[XCVR][G800], 6);
        CHECK_INT(b.count[FIBER][ANY], 3);
        CHECK_INT(b.count[NIC][WEFT_COST_100G], 1);
        CHECK_INT(b.count[PORT][WEFT_COST_100G], 1);
        CHECK_INT(b.count[DAC][WEFT_COST_100G], 1);
        CHECK_INT(total_parts(&b), 18);
    }
    if (bom_of_text("node r compute\nnode a switch\nnode b switch\nnode c switch\n"
                    "link a b 25GB/s\nlink b a 50GB/s\nduplex b c 12.5GB/s\nduplex r a 50GB/s\n",
                    &b)) {
        CHECK_INT(b.count[PORT][G400], 3);
        CHECK_INT(b.count[PORT][WEFT_COST_100G], 2);
        CHECK_INT(b.count[XCVR][G400], 2);
        CHECK_INT(b.count[XCVR][WEFT_COST_100G], 2);
        CHECK_INT(b.count[FIBER][ANY], 2);
    }
}

static void parse_error(const char *text, const char *msg)
{
    weft_cost_table c, before;
    weft_cost_table_defaults(&c);
    before = c;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_cost_table_parse(&c, text, strlen(text), "bad.cost", &d), WEFT_EPARSE);
    CHECK_STR(d.msg, msg);
    CHECK(memcmp(&c, &before, sizeof c) == 0); /* nothing half-applied */
}

static void test_errors(void)
{
    parse_error("nic.400g.usd = 1\nnic.400g.w 20\n",
                "bad.cost:2:1: expected KEY = VALUE, got 'nic.400g.w 20'");
    parse_error("  nic.300g.usd = 5\n",
                "bad.cost:1:3: unknown rate '300g' in 'nic.300g.usd' (expected 100g, 200g, 400g "
                "or 800g)");
    parse_error("ocs_port.400g.w = 1\n",
                "bad.cost:1:1: 'ocs_port.400g.w': ocs_port has one figure for every rate "
                "(ocs_port.w)");
    parse_error("nic.usd = 1\n",
                "bad.cost:1:1: 'nic.usd' needs a rate: nic is priced per rate class "
                "(nic.400g.usd)");
    parse_error("# c\nswitch_port.400g.usd = -3\n",
                "bad.cost:2:24: 'switch_port.400g.usd' needs a non-negative number (such as "
                "1250 or 8.5), not '-3'");
    parse_error("fiber.w = 2 W\n", "bad.cost:1:11: 'fiber.w' needs a non-negative number (such "
                                   "as 1250 or 8.5), not '2 W'");
    parse_error("dac.400g.usd = 1\n\ndac.400g.usd = 2\n",
                "bad.cost:3:1: 'dac.400g.usd' is already given on line 1");
    parse_error("switch.400g.usd = 1\n",
                "bad.cost:1:1: unknown key 'switch.400g.usd' (expected PART.RATE.usd or "
                "PART.RATE.w with PART nic, switch_port, transceiver or dac and RATE 100g, 200g, "
                "400g or 800g, or PART.usd or PART.w with PART ocs_port, fiber or gpu_link)");
    parse_error("nic.400g.eur = 1\n",
                "bad.cost:1:1: unknown key 'nic.400g.eur' (expected PART.RATE.usd or "
                "PART.RATE.w with PART nic, switch_port, transceiver or dac and RATE 100g, 200g, "
                "400g or 800g, or PART.usd or PART.w with PART ocs_port, fiber or gpu_link)");
    weft_cost_table c;
    weft_cost_table_defaults(&c);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_cost_table_load(&c, "/nonexistent/x.cost", &d), WEFT_ENOENT);
    CHECK_CONTAINS(d.msg, "/nonexistent/x.cost: cannot open");
}

static weft_topo *oom_topo;
static weft_cost_bom oom_bom;

static weft_err oom_count(void *arg)
{
    (void)arg;
    return weft_cost_count(oom_topo, &oom_bom, NULL);
}

static void oom_done(void *arg)
{
    (void)arg;
}

static void test_oom(void)
{
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_from_spec("mixnet:hosts=2,gpus=4", NULL, &oom_topo, &d), WEFT_OK);
    if (!oom_topo)
        return;
    CHECK(weft_test_oom_sweep("weft_cost_count", oom_count, oom_done, NULL) > 0);
    CHECK_INT(oom_bom.count[OCS][ANY], 4);
    weft_topo_free(oom_topo);
}

int main(void)
{
    test_defaults();
    test_clos();
    test_mixnet();
    test_torus_and_star();
    test_classes();
    test_errors();
    test_oom();
    return weft_test_done();
}
