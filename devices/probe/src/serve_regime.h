/* serve_regime.h: what `hetsim-probe serve` shares between its regimes
 * (folder-internal: serve.c, serve_pma.c, serve_ddp.c, serve_fedasync.c).
 *
 * serve.c does everything a run needs before its first model moves and after
 * its last: read the scenario, find the regime's descriptor, check the
 * regime's keys against the simulator's, make the controller, the learner and
 * the sockets, admit the boards (HELLO, WELCOME, READY), and in the end tell
 * them BYE or ERROR. A regime is one file and one line of the table in
 * serve.c: its descriptor names the simulator's keys of that regime, parses
 * the ones it honours (and refuses the others with one line), and runs the
 * run and writes its records. Shared code asks the descriptor; it never
 * compares a regime's name.
 *
 * The records' common pieces live here too, so that every regime prints them
 * the same way: telemetry.csv (one writer, probe_srv_tel_row), the energy
 * label of a row, run.json's common fields, the atomic write. */
#ifndef PROBE_SERVE_REGIME_H
#define PROBE_SERVE_REGIME_H

#include "probe_cluster.h"

#include "learn/hs_learn.h"
#include "policies/hs_policy.h"

/* One board's connection and its exchange in flight (ROUND -> RESULT). */
typedef struct probe_srv_board {
  size_t i;
  const char *name;
  int fd;
  unsigned port;
  char energy_src[160];  /* READY's energy=: "measured:...", "stated:...", "none:..." */
  /* the exchange: in */
  uint32_t round;        /* ROUND's round= (pma: the round; fedasync: the board's update) */
  uint64_t draw;         /* ROUND's draw= */
  uint64_t samples;
  const unsigned char *model_in;
  unsigned char *model_out;
  size_t model_bytes;
  double io_timeout_s, round_timeout_s;
  /* out: the instants (this machine's CLOCK_MONOTONIC), energy, loss */
  double t_send0, t_recv_end, b_dl_end, b_train0, b_train1, b_ul0, energy_j, loss;
  probe_wire_end end;
  hs_error err;
} probe_srv_board;

/* telemetry.csv: round,device,time_s,energy_j,samples, written by one function
 * for every regime. Each figure is printed with 9 significant digits and the
 * controller is fed the parsed text, so `hetsim replay` sees exactly what the
 * run's controller saw. */
typedef struct probe_srv_tel {
  char *csv;
  size_t len;
} probe_srv_tel;
void probe_srv_tel_init(probe_srv_tel *t);
void probe_srv_tel_fini(probe_srv_tel *t);
/* Append a row and fill *fed and *comm_fed with the values as written (a
 * board with samples > 0 and a zero time gets 1e-9 s: the controller's rule,
 * a clock tick can read 0). comm_s: the board's download + upload seconds of
 * the round (pma), of the round's steps (ddp), or the mean of the window's
 * merged updates (fedasync), as the simulator reports it; the regime gives
 * the comm_fed values to hs_controller_set_comm before the update. */
void probe_srv_tel_row(probe_srv_tel *t, size_t round, const char *device, double time_s, double energy_j,
                       uint64_t samples, double comm_s, hs_telemetry *fed, double *comm_fed);

/* The run, as serve.c hands it to a regime. */
typedef struct probe_srv_run {
  const probe_serve_cfg *cfg;
  const probe_cscn *s;
  const struct probe_srv_regime *rg;
  const void *opts;      /* the regime's parsed options (rg->opts_size bytes) */
  hs_learner *l;
  hs_controller *ctl;
  probe_srv_board *b;    /* n boards, connected and READY */
  size_t n, np, mb;      /* boards, model parameters, model_bytes */
  size_t rounds;         /* rounds (pma, ddp) or reporting windows (fedasync) */
  double budget;         /* samples per round (the controller's budget) */
  float *global;         /* the initial model (hs_learn_init_params); a regime updates it */
} probe_srv_run;

/* A regime of the runtime. */
typedef struct probe_srv_regime {
  const char *name;             /* regime.kind */
  const char *const *keys;      /* the simulator's regime.<key>s of this regime (NULL-terminated) */
  unsigned caps_refused;        /* policy capabilities refused (hs_policy_caps) */
  const char *caps_why;         /* "<policy> " + this, when refused */
  size_t opts_size;
  /* Parse the regime's keys into opts (zeroed, opts_size bytes); refuse a key
   * or value the runtime cannot honour: one line, exit status. */
  int (*options)(const probe_cscn *s, void *opts);
  /* Optional: what the regime sets in the policy's configuration before the
   * controller is made (ddp: steps_per_round, as the simulator sets it). */
  void (*policy_cfg)(const void *opts, hs_policy_config *pc);
  /* Run, write the records into cfg->out; exit status (one line when not 0). */
  int (*run)(probe_srv_run *r);
} probe_srv_regime;

extern const probe_srv_regime probe_srv_pma, probe_srv_ddp, probe_srv_fedasync;

/* One line "hetsim-probe serve: ..." on stderr; returns rc. */
int probe_srv_say(int rc, const char *fmt, ...) PROBE_PRINTF(2, 3);
/* The exit status of a failed wire operation: 2 for a protocol error, else 1. */
int probe_srv_end_rc(probe_wire_end e);
/* The board's instants and figures of a RESULT or GRAD (dl_end, train0,
 * train1, ul0 on the shared clock; energy_j, loss) into b; b->err on error. */
hs_status probe_srv_read_stamps(const char *text, probe_srv_board *b);
/* One exchange (a thread's body): ROUND with b->round, b->draw, b->samples and
 * the model, then the board's RESULT (checked: round, samples, instants in
 * order, energy >= 0) into b->model_out and the instants. */
void *probe_srv_exchange(void *board);
/* Tell every connected board the run is over (reason NULL: BYE) or failed
 * (ERROR reason=...), and close. */
void probe_srv_release(probe_srv_board *b, size_t n, const char *reason);
/* Append printf text to a growing heap string. */
void probe_srv_add(char **s, size_t *len, const char *fmt, ...) PROBE_PRINTF(3, 4);
/* Write DIR/FILE atomically; 0 or the exit status after one line. */
int probe_srv_write(const char *dir, const char *file, const char *text);
/* A row's energy label: "measured", "stated" or "none" (none when samples 0). */
const char *probe_srv_energy_kind(const probe_srv_board *b, uint64_t samples);
/* run.json's text: the common fields (as the pma run has always written
 * them), then `extra` (lines of "  \"key\": value,\n"; "" for none), then
 * the boards' energy sources. Heap. */
char *probe_srv_run_json(const probe_srv_run *r, double makespan_s, double server_s_per_round,
                         double overhead_fraction, double final_loss, double final_acc, const char *extra);
/* Option text helpers for a regime's options(): the key's value as a number
 * in [lo, hi] (integer when asked), or as one of choices; found = false when
 * absent. Exit status after one line naming the key. */
int probe_srv_opt_num(const probe_cscn *s, const char *key, double lo, double hi, bool integer, double *out,
                      bool *found);
int probe_srv_opt_choice(const probe_cscn *s, const char *key, const char *const *choices, const char **out);

#endif
