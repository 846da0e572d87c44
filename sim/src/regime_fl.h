/* regime_fl.h: what regime_fl.c (the regime, star and threshold) shares with
 * regime_fl_tree.c (the hierarchical topology): the options and the tree's
 * entry points. Private to hetsim::sim. */
#ifndef SIM_REGIME_FL_H
#define SIM_REGIME_FL_H

#include <stddef.h>
#include <stdint.h>

#include "hs_report.h"
#include "hs_status.h"
#include "sim_regime.h"

#define FL_MAX_LEVELS 8

typedef struct fl_level {
  uint32_t fanout;
  char *link;
  double s_per_update, s_per_mb, idle_w, busy_w; /* the aggregator host */
} fl_level;

typedef struct fl_opts {
  char *topology;
  uint32_t k; /* threshold: K (1 <= K <= N) */
  char *late;
  fl_level *levels; /* hierarchical, leaves first */
  size_t nlevels;
  uint32_t *group_of; /* hierarchical: level-1 aggregator of each device */
} fl_opts;

typedef struct fl_tree fl_tree;

hs_status fl_levels_parse(sim_opt_ctx *c, const cJSON *node, fl_opts *o);
void fl_levels_print(cJSON *reg, const fl_opts *o);
void fl_levels_free(fl_opts *o);

hs_status fl_tree_setup(sim_run *r, hs_error *err);
void fl_tree_start_round(sim_run *r);
size_t fl_tree_summary(sim_run *r, double makespan_s, hs_report_field *out, size_t cap);
void fl_tree_free(fl_tree *t);
/* The tree in the regime's state (regime_fl.c owns the state). */
fl_tree *fl_state_tree(sim_run *r);
void fl_state_set_tree(sim_run *r, fl_tree *t);

#endif
