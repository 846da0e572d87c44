/* regime_fl.h: what the files of the fl round machine share (regimes fl and
 * pma): regime_fl.c (descriptors, options, set-up), regime_fl_round.c (star,
 * threshold, the close of every round), regime_fl_ring.c, regime_fl_tree.c
 * (hierarchical), regime_fl_dvfs.c, regime_fl_energy.c: the options, the
 * run's state and the entry points. Private to hetsim::sim's regimes. */
#ifndef SIM_REGIME_FL_H
#define SIM_REGIME_FL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/hs_report.h"
#include "base/hs_status.h"
#include "sim_regime.h"

#define FL_MAX_LEVELS 8

/* Default regime.network.j_per_byte: energy per model byte per link crossed
 * (a hop crosses two). An ESTIMATE from public figures, not a measurement:
 *  - "1 to 17 joules per MByte of data transferred for conventional
 *    high-power Wi-Fi equipment" (Macnica, "Hi-Q news" application note,
 *    https://www.macnica.eu/knowledge-base/hi-q-news);
 *  - an 802.11b card at 11 Mb/s spent 485-1267 x 0.86 nJ per bit sent, i.e.
 *    3.3-8.7 uJ per byte (Barr and Asanovic, "Energy Aware Lossless Data
 *    Compression", MobiSys 2003, https://www.usenix.org/legacy/publications/
 *    library/proceedings/mobisys03/tech/barr/barr_html/node7.html).
 * 1 uJ per byte per link makes a hop 2 J/MB: inside the first range, below
 * the 2003 card (newer radios move more bits per joule). Ethernet and
 * datacenter links cost far less per byte: a scenario on them states its own. */
#define FL_DEFAULT_J_PER_BYTE 1e-6
/* Default regime.network.port_w: the switch port (or access-point share)
 * each endpoint occupies, drawn for the whole makespan. An ESTIMATE from
 * measured whole-switch wall power divided by user ports, idle, one port
 * linked at 1000BASE-T (adlerweb/SwitchPower, https://github.com/adlerweb/
 * SwitchPower, README table): HP 2510G-24 (J9279A) 27 W / 24 ports = 1.13 W;
 * HP 2930F-48G-PoE+ (JL256A) 37 W / 48 = 0.77 W; Ubiquiti US-48-500W 39 W /
 * 48 = 0.81 W. Mean 0.90 W, rounded to 1 W per port. Cross-check: a Gigabit
 * PHY alone draws 0.45 to over 1 W (Texas Instruments, G. Yamasaki, "Why is
 * Ethernet so power-hungry?", https://training-dev.ti.com/document-viewer/
 * lit/html/ssztam3). The endpoint's own NIC is inside its profile's wall
 * power (device profiles measure or estimate the whole board), so only the
 * switch side is counted here. */
#define FL_DEFAULT_PORT_W 1.0
/* The server (and aggregator) host profile used when a scenario names none:
 * devices/profiles/<FL_DEFAULT_SERVER>.json, format hetsim-server/1 (its
 * provenance says where each figure comes from). */
#define FL_DEFAULT_SERVER "server-r740"

/* A server or aggregator host: the profile it was read from (NULL: none
 * named, FL_DEFAULT_SERVER) and its figures after any inline override. */
typedef struct fl_host {
  char *profile;
  double idle_w, busy_w;          /* wall power, W */
  double s_per_update, s_per_mb;  /* aggregation cost: per update, per model MB */
} fl_host;

typedef struct fl_level {
  uint32_t fanout;
  char *link;
  fl_host agg; /* the aggregator host of this level */
} fl_level;

typedef struct fl_opts {
  char *topology;
  uint32_t k; /* threshold: K (1 <= K <= N) */
  char *late;
  fl_level *levels; /* hierarchical, leaves first */
  size_t nlevels;
  uint32_t *group_of; /* hierarchical: level-1 aggregator of each device */
  fl_host srv;               /* regime.server */
  bool srv_given;            /* pma: regime.server was written (absent: all 0, not printed) */
  double j_per_byte, port_w; /* regime.network */
  struct fl_dvfs_level *dvfs; /* regime.dvfs levels, fastest first (NULL: none) */
  size_t ndvfs;
  int governor; /* 0 performance, 1 powersave, 2 slack */
  bool dvfs_profile; /* levels: "profile" (each device's thermal levels) */
} fl_opts;

typedef struct fl_dvfs_level {
  double speed, power; /* factors of the nominal training speed and busy power */
} fl_dvfs_level;

hs_status fl_dvfs_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o);
void fl_dvfs_print(cJSON *reg, const fl_opts *o);
/* Training of nominal t s on device i at the governor's level (sets its busy
 * power); returns the time at that level. */
double fl_dvfs_train(sim_run *r, size_t i, double t, double pace_s);
/* Device i's training this round (regime_fl.c, every topology): nominal
 * time from its profile, then its DVFS level; returns the time. */
double fl_train_s(sim_run *r, size_t i);

/* What the run accumulates for whole-system energy (regime_fl_energy.c). */
typedef struct fl_energy_acc {
  double server_busy_s; /* aggregating on the server */
  double bytes_hops;    /* model bytes x links crossed */
  size_t ports;         /* endpoints: devices, aggregators, the server */
} fl_energy_acc;

hs_status fl_energy_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o, const char *key);
void fl_energy_print(cJSON *reg, const fl_opts *o, const char *key);
/* A host block at the current path (node NULL: absent): a profile name or
 * path (string), or {profile?, idle_w?, busy_w?, s_per_update?, s_per_mb?}
 * overriding that profile (default FL_DEFAULT_SERVER). */
hs_status fl_host_parse(sim_opt_ctx *c, const cJSON *node, fl_host *h);
void fl_host_print(cJSON *obj, const char *key, const fl_host *h);
void fl_host_free(fl_host *h);
/* Seconds the server takes to aggregate `updates` updates. */
double fl_server_agg_s(const sim_run *r, size_t updates);
/* energy_server_j, energy_network_j, energy_system_j. */
void fl_energy_summary(const sim_run *r, const fl_energy_acc *a, double makespan_s,
                       double aggregators_j, hs_summary *s);
/* The run's accumulator (regime_fl.c owns it); the round's FedAvg
 * (learning), the server's aggregation of `updates` updates, then the end of
 * the round (every topology: regime_fl_round.c). */
fl_energy_acc *fl_state_energy(sim_run *r);
void fl_close_round(sim_run *r, size_t updates);

typedef struct fl_tree fl_tree;

typedef enum fl_topology { FL_STAR, FL_THRESHOLD, FL_HIERARCHICAL, FL_RING } fl_topology;
/* The topology option (regime pma has none: star). */
fl_topology fl_topology_of(const fl_opts *o);

/* The run's state (regime_fl.c sets it up; regime_fl_round.c, regime_fl_ring.c and
 * regime_fl_tree.c run the rounds). */
typedef struct fl_state {
  bool threshold, fold, ring;
  fl_tree *tree;        /* topology hierarchical (regime_fl_tree.c) */
  fl_energy_acc energy;
  double pace_prev, pace_now; /* slowest nominal training, previous / this round (dvfs) */
  size_t ring_pending;  /* ring: participants still training */
  /* star and threshold (regime_fl_round.c) */
  uint32_t epoch;       /* bumps when a round opens */
  bool closing;         /* the server is aggregating: arrivals now are late */
  bool waiting;         /* no device available: the round opens when one returns */
  bool can_one_pass;    /* star without dynamics, deadline and DVFS */
  bool one_pass;        /* this round is run in one pass: also no traces */
  size_t pending;       /* arrivals still needed to close the round */
  size_t need, participants;
  uint64_t *arrived_n;  /* threshold with learning: the samples that arrived in time */
  uint64_t late_updates, folded_updates;
} fl_state;

/* regime_fl_round.c: star and threshold; the close of every topology's round. */
void fl_round_setup(sim_run *r);
void fl_round_start(sim_run *r);
/* regime_fl_ring.c */
void fl_ring_start(sim_run *r);

hs_status fl_levels_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o);
void fl_levels_print(cJSON *reg, const fl_opts *o);
void fl_levels_free(fl_opts *o);

hs_status fl_tree_setup(sim_run *r, hs_error *err);
void fl_tree_start_round(sim_run *r);
size_t fl_tree_summary(sim_run *r, double makespan_s, hs_report_field *out, size_t cap,
                       double *aggregators_j);
size_t fl_tree_nodes(sim_run *r); /* aggregators in all levels */
void fl_tree_free(fl_tree *t);
/* The tree in the regime's state (regime_fl.c owns the state). */
fl_tree *fl_state_tree(sim_run *r);
void fl_state_set_tree(sim_run *r, fl_tree *t);

#endif
