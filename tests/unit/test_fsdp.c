/* test_fsdp.c: the sharded regimes (fsdp, hsdp, fl-fsdp, fl-hsdp) against
 * closed forms: ring collectives on one tier and across tiers, max-min
 * sharing of rails and the global tier, the step schedule with and without
 * overlap, bytes per GPU per step for each regime (specs/fsdp.md 6.5), the
 * degenerate cases, and the amortised FL step time. Whole runs use the
 * shipped 512-GPU scenarios with jitter 0 and overlap off. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "devices/hs_profile.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "fsdp_cost.h"
#include "regime_fsdp.h"
#include "test_tmpdir.h"

#define SCN HS_SOURCE_DIR "/scenarios/gpu512-llama8b-"
#define REL 1e-9

static void expect_close(double got, double want, const char *what) {
  cr_expect(fabs(got - want) <= REL * fabs(want) + 1e-15, "%s: got %.12g, want %.12g", what, got,
            want);
}

/* Leonardo-like: 4 GPUs and 4 rails per node, 200 GB/s node fabric,
 * 12.5 GB/s rails. */
static sim_topo topo(uint32_t nodes_per_cell, double taper, uint32_t nics) {
  sim_topo t = {0};
  t.present = true;
  t.gpus_per_node = 4;
  t.nics_per_node = nics;
  t.nodes_per_cell = nodes_per_cell;
  t.intra_bps = 1600e9;
  t.intra_alpha_s = 3e-6;
  t.nic_bps = 100e9;
  t.nic_alpha_s = 8e-6;
  t.taper = taper;
  t.global_alpha_s = 10e-6;
  return t;
}

Test(fsdp, ring_collectives_closed_form) {
  /* AG = (p-1) a + (p-1)/p 8M/B; AR twice that; p = 1 costs nothing. */
  expect_close(sim_ring_ag(512, 1e9, 400e9, 8e-6), 511 * 8e-6 + 511.0 / 512 * 8e9 / 400e9, "AG");
  expect_close(sim_ring_ar(16, 2e9, 100e9, 10e-6), 2 * (15 * 10e-6 + 15.0 / 16 * 16e9 / 100e9),
               "AR");
  cr_expect_eq(sim_ring_ag(1, 1e9, 1e9, 1), 0);
}

Test(fsdp, tiers_pick_the_slowest_crossed) {
  sim_topo t = topo(2, 0.5, 4);
  sim_group g[1];
  double bus, a;
  sim_group_shape s;
  /* One node: the node fabric. */
  g[0] = (sim_group){4, 1, 4};
  sim_group_shape_of(&t, g, &s);
  cr_expect_eq(s.tier, 0);
  sim_family_rates(&t, g, 1, &bus, &a);
  expect_close(bus, 1600e9, "intra bus");
  expect_close(a, 3e-6, "intra alpha");
  /* Two nodes of one cell, 4 ranks each: 4 rails in parallel. */
  g[0] = (sim_group){0, 1, 8};
  sim_group_shape_of(&t, g, &s);
  cr_expect_eq(s.tier, 1);
  cr_expect_eq(s.per_node, 4);
  sim_family_rates(&t, g, 1, &bus, &a);
  expect_close(bus, 400e9, "4 rails");
  expect_close(a, 8e-6, "ib alpha");
  /* Four nodes over two cells, every rank crossing: taper 0.5 halves the rails. */
  g[0] = (sim_group){0, 1, 16};
  sim_group_shape_of(&t, g, &s);
  cr_expect_eq(s.tier, 2);
  sim_family_rates(&t, g, 1, &bus, &a);
  expect_close(bus, 4 * 0.5 * 100e9, "tapered");
  expect_close(a, 10e-6, "global alpha");
  /* And the collective time across tiers follows: AG of 1 GB on 16 ranks. */
  expect_close(sim_ring_ag(16, 1e9, bus, a), 15 * 10e-6 + 15.0 / 16 * 8e9 / 200e9, "AG across");
}

Test(fsdp, concurrent_groups_share_rails_and_global_links_max_min) {
  /* Replica groups (stride 4: one rank per node) on disjoint rails: each
   * keeps a whole rail. */
  sim_topo t = topo(1000, 1, 4);
  sim_group g[4];
  double bus[4], a[4];
  for (size_t k = 0; k < 4; k++) g[k] = (sim_group){k, 4, 8};
  sim_family_rates(&t, g, 4, bus, a);
  for (size_t k = 0; k < 4; k++) expect_close(bus[k], 100e9, "disjoint rails");
  /* Two rails per node: local ranks 0 and 2 share rail 0, so each gets half. */
  t = topo(1000, 1, 2);
  sim_family_rates(&t, g, 4, bus, a);
  for (size_t k = 0; k < 4; k++) expect_close(bus[k], 50e9, "shared rail");
  /* All four groups cross cells of 2 nodes at taper 0.25: the cell's global
   * capacity (0.25 x 4 rails x 2 nodes) is shared by its 8 rank flows. */
  t = topo(2, 0.25, 4);
  sim_family_rates(&t, g, 4, bus, a);
  for (size_t k = 0; k < 4; k++) expect_close(bus[k], 25e9, "tapered, shared");
  /* One such group alone keeps its rail: the global link is not full. */
  sim_family_rates(&t, g, 1, bus, a);
  expect_close(bus[0], 100e9, "alone");
}

Test(fsdp, step_schedule_serial_and_overlapped) {
  double fwd[3] = {0.1, 0.2, 0.2}, bwd[3] = {0.2, 0.4, 0.4}, ag[3] = {0.05, 0.03, 0.03};
  double rs[3] = {0.05, 0.03, 0.03}, ar[3] = {0.01, 0.02, 0.02};
  sim_step_in in = {3, fwd, bwd, ag, rs, ar, 0.07, 0.5, 0.01, false, SIM_BWD_NONE, false, true};
  sim_step_out o;
  sim_step_schedule(&in, &o);
  /* Everything in line. */
  expect_close(o.fwd_s, 0.5 + 0.11, "serial forward");
  expect_close(o.bwd_s, 1.0 + 0.11 + 0.11 + 0.05, "serial backward");
  expect_close(o.total_s, 0.61 + 1.27 + 0.07 + 0.5 + 0.01, "serial total");
  expect_close(o.compute_s, 1.57, "compute");
  /* Prefetch: only the first AG is exposed forward; the replica AR overlaps
   * all but the last unit's; BACKWARD_PRE hides AG(u-1) under bwd(u). */
  in.fwd_prefetch = true;
  in.ar_overlap = true;
  in.bwd_prefetch = SIM_BWD_PRE;
  sim_step_schedule(&in, &o);
  expect_close(o.fwd_s, 0.05 + 0.5, "prefetched forward");
  /* backward: only the first AG (0.03) is exposed; the three backward
   * computes run back to back (each unit's AG ran under the previous one and
   * its RS overlaps the next), then the last RS (0.05) and AR (0.01). */
  expect_close(o.bwd_s, 0.03 + 0.4 + 0.4 + 0.2 + 0.05 + 0.01, "prefetched backward");
  /* BACKWARD_POST: AG(u-1) issued as bwd(u) ends, ahead of RS(u): each AG
   * after the first is exposed (0.03, 0.05) but no longer waits for an RS,
   * which overlaps the next compute. */
  in.bwd_prefetch = SIM_BWD_POST;
  sim_step_schedule(&in, &o);
  expect_close(o.bwd_s, 0.03 + 0.4 + 0.03 + 0.4 + 0.05 + 0.2 + 0.05 + 0.01, "post backward");
}

/* --- whole runs --------------------------------------------------------- */

static const double P = 7.505e9, B = 2, C = 2 * 0.67975, OPT_PER_PARAM = 1.6e-11;

typedef struct res {
  double makespan, energy, f[16];
} res;

static const char *const keys[] = {"step_total_s",
                                   "step_local_s",
                                   "step_aggregation_s",
                                   "bytes_per_gpu_step_intra",
                                   "bytes_per_gpu_step_inter",
                                   "bytes_per_gpu_step_global",
                                   "tokens_per_s",
                                   "energy_per_token_j",
                                   "step_forward_s",
                                   "step_backward_s",
                                   "samples",
                                   NULL};
enum { TOTAL, LOCAL, AGG, BINTRA, BINTER, BGLOBAL, TOKS, EPT, FWD, BWD, SAMPLES };

/* Run a shipped scenario with the serial, noise-free switches (the closed
 * forms of specs/fsdp.md 6.5 have no overlap, so backward_prefetch none, not
 * the default pre) and extra overrides ("key=value" strings). */
static res run(const char *kind, const char *const *extra) {
  hs_override ovr[16];
  size_t n = 0;
  static const char *const serial[] = {"regime.jitter=0", "regime.forward_prefetch=0",
                                       "regime.backward_prefetch=none",
                                       "regime.phase_barriers=1", NULL};
  char buf[16][128];
  const char *const *lists[2] = {serial, extra};
  for (size_t li = 0; li < 2; li++)
    for (const char *const *l = lists[li]; l && *l; l++) {
      snprintf(buf[n], sizeof buf[n], "%s", *l);
      hs_error e = {0};
      cr_assert_eq(hs_override_parse(buf[n], &ovr[n], &e), HS_OK);
      n++;
    }
  char path[512];
  snprintf(path, sizeof path, SCN "%s.json", kind);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(path, ovr, n, &err);
  cr_assert_not_null(sc, "%s", err.msg);
  char dir[] = "/tmp/hs-test-fsdp-XXXXXX";
  cr_assert_not_null(test_mkdtemp_at(dir));
  hs_run_opts ro = {.out_dir = dir};
  hs_summary s;
  cr_assert_eq(hs_run(sc, &ro, &s, &err), HS_OK, "%s", err.msg);
  hs_scenario_destroy(sc);
  char file[600];
  snprintf(file, sizeof file, "%s/summary.json", dir);
  FILE *fp = fopen(file, "rb");
  cr_assert_not_null(fp);
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[len] = 0;
  cJSON *j = cJSON_Parse(text);
  cr_assert_not_null(j);
  res r = {s.makespan_s, s.energy_j, {0}};
  for (size_t k = 0; keys[k]; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
    cr_assert(cJSON_IsNumber(v), "%s in summary.json", keys[k]);
    r.f[k] = v->valuedouble;
  }
  cJSON_Delete(j);
  const char *outs[] = {"summary.json", "rounds.csv", "devices.csv"};
  for (size_t k = 0; k < 3; k++) {
    snprintf(file, sizeof file, "%s/%s", dir, outs[k]);
    remove(file);
  }
  rmdir(dir);
  return r;
}

/* Units: the root (5.253e8 parameters) and 32 equal layers. */
static double units_sum(double (*per_unit)(double m, void *), void *arg) {
  double root = 5.253e8, layer = (P - root) / 32, s = per_unit(root, arg);
  for (int u = 0; u < 32; u++) s += per_unit(layer, arg);
  return s;
}

typedef struct coll {
  uint32_t p;
  double bus, alpha, shard;
  int ar;
} coll;

static double coll_unit(double m, void *arg) {
  const coll *c = arg;
  double bytes = m / c->shard * B;
  return c->ar ? sim_ring_ar(c->p, bytes, c->bus, c->alpha)
               : sim_ring_ag(c->p, bytes, c->bus, c->alpha);
}

Test(fsdp, fsdp_bytes_and_step_closed_form) {
  res r = run("fsdp", NULL);
  expect_close(r.f[BINTER], 3 * 511.0 / 512 * P * B, "FSDP 3(N-1)/N P b");
  cr_expect_eq(r.f[BINTRA], 0);
  cr_expect_eq(r.f[BGLOBAL], 0);
  /* Step: compute + 3 ring passes per unit over 512 ranks at 4 rails
   * (50 GB/s bus, 8 us) + optimiser on P/512. */
  coll c = {512, 400e9, 8e-6, 1, 0};
  double want = C + OPT_PER_PARAM * P / 512 + 3 * units_sum(coll_unit, &c);
  expect_close(r.f[TOTAL], want, "FSDP step");
  expect_close(r.makespan, 64 * want, "64 steps");
  /* The samples the GPUs trained (micro_batch x steps), not the allocation. */
  cr_expect_eq(r.f[SAMPLES], 512 * 2 * 64);
}

Test(fsdp, hsdp_bytes_and_step_closed_form) {
  const char *no_overlap[] = {"regime.replica_overlap=0", NULL};
  res r = run("hsdp", no_overlap);
  expect_close(r.f[BINTRA], 3 * 0.75 * P * B, "HSDP intra 3(S-1)/S P b");
  expect_close(r.f[BINTER], 2 * 127.0 / 128 * P * B / 4, "HSDP inter 2(R-1)/R P b / S");
  coll ag = {4, 1600e9, 3e-6, 1, 0}, ar = {128, 100e9, 8e-6, 4, 1};
  double want =
      C + OPT_PER_PARAM * P / 4 + 3 * units_sum(coll_unit, &ag) + units_sum(coll_unit, &ar);
  expect_close(r.f[TOTAL], want, "HSDP step");
}

Test(fsdp, fl_bytes_and_amortised_step) {
  res r = run("fl-fsdp", NULL);
  expect_close(r.f[BINTRA], 3 * 0.75 * P * B, "FL+FSDP intra");
  expect_close(r.f[BINTER], 2 * 127.0 / 128 * P * B / 4 / 8, "FL+FSDP inter, amortised over H");
  coll ag = {4, 1600e9, 3e-6, 1, 0};
  double local = C + OPT_PER_PARAM * P / 4 + 3 * units_sum(coll_unit, &ag);
  double agg = sim_ring_ar(128, P / 4 * B, 100e9, 8e-6);
  expect_close(r.f[LOCAL], local, "local step");
  expect_close(r.f[TOTAL], local + agg / 8, "amortised step = local + aggregation / H");
  expect_close(r.f[AGG], agg / 8, "aggregation per step");

  const char *no_overlap[] = {"regime.replica_overlap=0", NULL};
  r = run("fl-hsdp", no_overlap);
  expect_close(r.f[BINTRA], 3 * 0.75 * P * B, "FL+HSDP intra");
  expect_close(r.f[BINTER], 2 * 7.0 / 8 * P * B / 4 + 2 * 15.0 / 16 * P * B / 4 / 8,
               "FL+HSDP in-group AR + average / H");
  coll rep = {8, 100e9, 8e-6, 4, 1};
  local += units_sum(coll_unit, &rep);
  agg = sim_ring_ar(16, P / 4 * B, 100e9, 8e-6);
  expect_close(r.f[TOTAL], local + agg / 8, "FL+HSDP amortised step");
}

Test(fsdp, degenerate_cases) {
  /* HSDP with S = N is FSDP. */
  res f = run("fsdp", NULL);
  const char *s512[] = {"regime.shard_size=512", NULL};
  res h = run("hsdp", s512);
  expect_close(h.makespan, f.makespan, "HSDP S=N makespan");
  expect_close(h.energy, f.energy, "HSDP S=N energy");
  expect_close(h.f[BINTER], f.f[BINTER], "HSDP S=N bytes");
  /* FL with one group is the plain regime. */
  const char *g512[] = {"regime.group_size=512", NULL};
  res fl = run("fl-fsdp", g512);
  expect_close(fl.makespan, f.makespan, "FL+FSDP G=N");
  const char *g512h[] = {"regime.group_size=512", "regime.replica_overlap=0", NULL};
  const char *hs[] = {"regime.replica_overlap=0", NULL};
  expect_close(run("fl-hsdp", g512h).makespan, run("hsdp", hs).makespan, "FL+HSDP G=N");
  /* H -> infinity (no final average): only the group's own traffic. */
  const char *hinf[] = {"regime.local_steps=1000000000", "regime.final_average=0",
                        "regime.steps_per_round=8", NULL};
  res fi = run("fl-fsdp", hinf);
  cr_expect_eq(fi.f[BINTER], 0, "no averaging traffic");
  expect_close(fi.f[BINTRA], 3 * 0.75 * P * B, "group traffic only");
  /* HSDP with S = 1 is DDP: one all-reduce of P b per step over all ranks
   * (per unit, as DDP buckets), no all-gather. A 1e9-parameter model fits. */
  const char *ddp[] = {"regime.shard_size=1", "model.params=1e9", "model.root_params=1e8",
                       "regime.replica_overlap=0", NULL};
  res d = run("hsdp", ddp);
  expect_close(d.f[BINTER], 2 * 511.0 / 512 * 1e9 * B, "DDP 2(N-1)/N P b");
  cr_expect_eq(d.f[BINTRA], 0);
}

/* The baseline is FSDP as PyTorch runs it by default: backward_prefetch
 * BACKWARD_PRE in every sharded regime's shipped scenario when the file does
 * not say otherwise, and a step with it is shorter than with none. */
Test(fsdp, backward_prefetch_defaults_to_pre) {
  const char *kinds[] = {"fsdp", "hsdp", "fl-fsdp", "fl-hsdp"};
  for (size_t k = 0; k < 4; k++) {
    char path[512];
    snprintf(path, sizeof path, SCN "%s.json", kinds[k]);
    hs_error err = {0};
    hs_scenario *sc = hs_scenario_load(path, NULL, 0, &err);
    cr_assert_not_null(sc, "%s", err.msg);
    const fsdp_opts *o = sc->regime.opts;
    cr_expect_str_eq(o->bwd_prefetch, "pre", "%s", kinds[k]);
    hs_scenario_destroy(sc);
  }
  const char *pre[] = {"regime.backward_prefetch=pre", NULL};
  const char *post[] = {"regime.backward_prefetch=post", NULL};
  double none_s = run("fsdp", NULL).f[TOTAL], pre_s = run("fsdp", pre).f[TOTAL];
  double post_s = run("fsdp", post).f[TOTAL];
  cr_expect_lt(pre_s, post_s, "pre %g, post %g", pre_s, post_s);
  cr_expect_lt(post_s, none_s, "post %g, none %g", post_s, none_s);
}

Test(fsdp, jitter_makes_the_synchronous_group_wait_for_its_slowest) {
  const char *jit[] = {"regime.jitter=1", NULL};
  res quiet = run("fsdp", NULL), noisy = run("fsdp", jit);
  /* E[max of 512 lognormal draws, cv 0.02] is about 1 + 3 x 0.02. */
  double excess = noisy.f[LOCAL] - quiet.f[LOCAL];
  cr_expect(excess > 0.04 * C && excess < 0.08 * C, "straggler excess %.4f s", excess);
}

Test(fsdp, energy_closed_form_without_noise) {
  /* Every GPU busy for compute + optimiser, communicating for the rest of
   * the step (no jitter: nobody waits), at the profile's 400 W and 150 W. */
  res r = run("fsdp", NULL);
  double opt = OPT_PER_PARAM * P / 512, step = r.f[TOTAL];
  double per_gpu = 64 * (400 * (C + opt) + 150 * (step - C - opt));
  expect_close(r.energy, 512 * per_gpu, "energy");
  expect_close(r.f[EPT], 512 * per_gpu / (512 * 64 * 2 * 2048.0), "energy per token");
  expect_close(r.f[TOKS], 512 * 2 * 2048.0 / step, "tokens per second");
}

Test(fsdp, same_seed_same_bytes) {
  const char *jit[] = {"regime.jitter=3", NULL};
  res a = run("fl-hsdp", jit), b = run("fl-hsdp", jit);
  cr_expect_eq(a.makespan, b.makespan);
  cr_expect_eq(a.energy, b.energy);
}

Test(fsdp, gpu_profiles_carry_hbm_and_optimiser_figures) {
  const char *names[] = {"a100-sxm4-40gb", "a100-sxm4-64gb", "a100-sxm4-80gb", "h100-sxm5-80gb"};
  const double hbm[] = {40, 64, 80, 80};
  for (size_t k = 0; k < 4; k++) {
    hs_error err = {0};
    hs_profile *p = hs_profile_open(names[k], NULL, &err);
    cr_assert_not_null(p, "%s", err.msg);
    expect_close(hs_profile_hbm_bytes(p), hbm[k] * 1073741824.0, names[k]);
    cr_expect(hs_profile_opt_s_per_param(p) > 0, "%s: optimiser time", names[k]);
    const hs_task_profile *t = hs_profile_task(p, "llama3.1-8b-s2048");
    cr_assert_not_null(t, "%s: the Llama task", names[k]);
    /* tau = FLOP per sequence / (peak x MFU), as the provenance states. */
    double want = k == 3 ? 46.6e9 * 2048 / (989e12 * 0.40) : 46.6e9 * 2048 / (312e12 * 0.45);
    cr_expect(fabs(t->tau_s - want) < 1e-4 * want, "%s: tau %g, want %g", names[k], t->tau_s, want);
    hs_profile_destroy(p);
  }
  hs_error err = {0};
  hs_profile *p = hs_profile_parse(
      "{\"format\": \"hetsim-profile/1\", \"name\": \"g\", \"board\": \"b\", \"arch\": \"x86_64\","
      " \"cpu\": \"c\", \"idle_w\": 50, \"comm_w\": 100, \"gpu\": {\"hbm_bytes\": 0,"
      " \"opt_s_per_param\": 1e-11}, \"provenance\": {\"kind\": \"estimated\", \"sources\": "
      "[\"x\"]},"
      " \"tasks\": {\"t\": {\"tau_s\": 1, \"tau_cv\": 0, \"busy_w\": 300, \"overhead_s\": 0}}}",
      "g.json", &err);
  cr_expect_null(p);
  cr_expect(strstr(err.msg, "gpu.hbm_bytes") != NULL, "%s", err.msg);
}

static void expect_load_error(const char *const *sets, const char *kind, const char *msg) {
  hs_override ovr[8];
  char buf[8][160];
  size_t n = 0;
  for (; sets[n]; n++) {
    snprintf(buf[n], sizeof buf[n], "%s", sets[n]);
    hs_error e = {0};
    cr_assert_eq(hs_override_parse(buf[n], &ovr[n], &e), HS_OK);
  }
  char path[512];
  snprintf(path, sizeof path, SCN "%s.json", kind);
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_load(path, ovr, n, &err);
  if (sc) {
    /* Errors found at set-up (memory, node list) come from the run. */
    hs_summary s;
    hs_run_opts ro = {.out_dir = NULL};
    cr_expect_neq(hs_run(sc, &ro, &s, &err), HS_OK, "%s should fail", msg);
    hs_scenario_destroy(sc);
  }
  cr_expect(strstr(err.msg, msg) != NULL, "got: %s", err.msg);
}

Test(fsdp, bad_topology_model_and_layout_name_the_place) {
  const char *a[] = {"topology.nodes=[1,2,2]", NULL};
  expect_load_error(a, "fsdp", "topology.nodes: node 2 appears twice");
  const char *b[] = {"topology.nodes=[1,2]", NULL};
  expect_load_error(b, "fsdp", "topology.nodes: 2 nodes listed, 512 GPUs need 128");
  const char *c[] = {"topology.nics_per_node=8", NULL};
  expect_load_error(c, "fsdp", "topology.nics_per_node");
  const char *d[] = {"model.units=0", NULL};
  expect_load_error(d, "fsdp", "model.units");
  /* S = 4, 5 sequences: 15.0 GB state + 1.49 GB units + 55.0 GB activations. */
  const char *e[] = {"regime.micro_batch=5", NULL};
  expect_load_error(e, "hsdp", "GPU gpu-0 (a100-sxm4-64gb) needs");
  const char *f[] = {"regime.group_size=[32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,16]", NULL};
  expect_load_error(f, "fl-hsdp", "asymmetric federated groups (32 and 16 ranks)");
  hs_override o;
  char t[64] = "regime.group_size=[256,256]";
  hs_error e2 = {0};
  cr_assert_eq(hs_override_parse(t, &o, &e2), HS_OK);
  hs_scenario *sc = hs_scenario_load(SCN "fl-fsdp.json", &o, 1, &e2);
  cr_expect_not_null(sc, "a symmetric list is one number: %s", e2.msg);
  hs_scenario_destroy(sc);
}

Test(fsdp, placement_contiguous_or_by_node_list) {
  sim_topo t = topo(180, 1, 4);
  t.first_node = 178;
  /* Ranks 0-7 on nodes 178, 179 (cell 0), ranks 8-11 on node 180 (cell 1). */
  cr_expect_eq(sim_topo_node(&t, 7), 179);
  cr_expect_eq(sim_topo_cell(&t, 8), 1);
  cr_expect_eq(sim_topo_rail(&t, 6), 2);
  sim_group g = {0, 1, 12};
  sim_group_shape s;
  sim_group_shape_of(&t, &g, &s);
  cr_expect_eq(s.tier, 2, "crosses the cell boundary");
  cr_expect_eq(s.nodes, 3);
  /* A node list: slots map to the listed nodes, so the same ranks stay in one cell. */
  uint32_t nodes[] = {5, 9, 2};
  t.nodes = nodes;
  t.nnodes = 3;
  cr_expect_eq(sim_topo_node(&t, 4), 9);
  sim_group_shape_of(&t, &g, &s);
  cr_expect_eq(s.tier, 1);
  cr_expect_eq(s.per_node, 4);
  /* Stride 4: one rank per node. */
  g = (sim_group){1, 4, 3};
  sim_group_shape_of(&t, &g, &s);
  cr_expect_eq(s.per_node, 1);
}
