/* [devices/probe/include -> hetsim::probe_cluster; not installed]
 * probe_cluster.h: the real cluster runtime of the board harness: the wire
 * protocol (wire.c), the scenario as the runtime reads it (cluster_scn.c),
 * the server and its regimes (serve.c, serve_pma.c, serve_ddp.c,
 * serve_fedasync.c; src/serve_regime.h), the board (board.c) and the testbed in a box
 * (box.c, box_setup.c). Folder-internal, prefix probe_; main.c is the CLI.
 *
 * libc + libm + pthreads and the libc-only controller (hetsim::policies), so
 * it cross-builds like the rest of the harness. Every address is loopback
 * (127.0.0.0/8): the runtime refuses any other, and stamps every board's
 * download, training, upload and wait on the one CLOCK_MONOTONIC those
 * processes share. */
#ifndef PROBE_CLUSTER_H
#define PROBE_CLUSTER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* ------------------------------------------------------------------- wire */
/* A message: a 16-byte header, then `text` bytes of "key=value\n" lines, then
 * `bin` bytes of binary payload (the model: little-endian float32).
 *   bytes 0-3   magic "HSPC"
 *   bytes 4-5   protocol version (PROBE_WIRE_VERSION), little-endian
 *   bytes 6-7   message type (probe_msg_type), little-endian
 *   bytes 8-11  text length, little-endian, <= PROBE_WIRE_TEXT_MAX
 *   bytes 12-15 binary length, little-endian, <= the receiver's limit
 * The receiver checks magic, version, type and both lengths before reading
 * the body, so an oversized or foreign message is refused without reading it.
 * Every read and write waits at most the caller's timeout (poll in slices of
 * at most 100 ms, so a stop request (SIGINT/SIGTERM) is seen within that). */
#define PROBE_WIRE_VERSION 2 /* 2: STEP and GRAD (ddp), draw= in ROUND (fedasync) */
#define PROBE_WIRE_HEADER 16
#define PROBE_WIRE_TEXT_MAX 65536u

typedef enum probe_msg_type {
  PROBE_MSG_HELLO = 1,   /* board -> server: name=, version= */
  PROBE_MSG_WELCOME = 2, /* server -> board: task, seed, batch, lr, index, participants, ... */
  PROBE_MSG_READY = 3,   /* board -> server: nparams=, sensor=, energy= */
  PROBE_MSG_ROUND = 4,   /* server -> board: round=, samples=, optional draw= (the
                          * samples' draw key; default the round); bin: the model */
  PROBE_MSG_RESULT = 5,  /* board -> server: round=, samples=, times, energy; bin: the model */
  PROBE_MSG_BYE = 6,     /* server -> board: the run is over */
  PROBE_MSG_ERROR = 7,   /* either way: reason= (then the sender closes) */
  PROBE_MSG_STEP = 8,    /* server -> board (ddp): round=, step=, samples=, final=; bin:
                          * the previous step's reduced gradient (float32) or empty */
  PROBE_MSG_GRAD = 9,    /* board -> server (ddp): round=, step=, samples=, hash=, times,
                          * energy, loss; bin: its batch gradient (float32) or empty (final) */
  PROBE_MSG_MAX_ = 10
} probe_msg_type;

typedef struct probe_msg {
  probe_msg_type type;
  char *text;            /* NUL-terminated, text_len bytes before the NUL (heap) */
  size_t text_len;
  unsigned char *bin;    /* bin_len bytes (heap; NULL when 0) */
  size_t bin_len;
} probe_msg;
void probe_msg_fini(probe_msg *m);
const char *probe_msg_name(probe_msg_type t); /* "ROUND"; "message type N" past the end */

/* How a wire operation ended when it did not succeed (err says it in words). */
typedef enum probe_wire_end { PROBE_WIRE_OK, PROBE_WIRE_CLOSED, PROBE_WIRE_TIMEOUT, PROBE_WIRE_STOPPED,
                              PROBE_WIRE_PROTOCOL, PROBE_WIRE_SYSTEM } probe_wire_end;

/* Encode a header (for tests and for send). */
void probe_wire_header(unsigned char h[PROBE_WIRE_HEADER], unsigned version, probe_msg_type t,
                       size_t text_len, size_t bin_len);
/* Send one message: text (may be NULL) and bin (may be NULL with bin_len 0).
 * Waits at most timeout_s for the socket to take it. */
probe_wire_end probe_wire_send(int fd, probe_msg_type t, const char *text, const void *bin, size_t bin_len,
                               double timeout_s, hs_error *err);
/* Receive one message with a binary part of at most bin_max bytes. The first
 * byte may take first_timeout_s (a board training, a server between rounds);
 * the rest of the message must follow within timeout_s of each piece. */
probe_wire_end probe_wire_recv(int fd, size_t bin_max, double first_timeout_s, double timeout_s, probe_msg *m,
                               hs_error *err);

/* "key=value\n" text: the value of key (copied into buf, NUL-terminated);
 * false when absent. */
bool probe_kv_get(const char *text, const char *key, char *buf, size_t cap);
/* The value as a finite number; HS_EMISSING / HS_EINVAL naming the key. */
hs_status probe_kv_num(const char *text, const char *key, double *out, hs_error *err);
/* Append "key=value\n" to a growing heap string (*s, *len). */
void probe_kv_add(char **s, size_t *len, const char *key, const char *fmt, ...) PROBE_PRINTF(4, 5);

/* FNV-1a (64 bit) of n bytes: ddp's boards and server compare their models by it. */
uint64_t probe_model_hash(const void *p, size_t n);

/* Stop requests: a signal handler calls probe_wire_request_stop(); every
 * wait then ends within 100 ms with PROBE_WIRE_STOPPED. */
void probe_wire_request_stop(void);
bool probe_wire_stopped(void);

/* Loopback only: "127.x.y.z" (dotted quad in 127.0.0.0/8) into *addr (network
 * order); HS_EINVAL "... is not a loopback address" otherwise. */
hs_status probe_loopback_addr(const char *host, uint32_t *addr, hs_error *err);
/* A listening TCP socket on host:port (port 0: any free port; *bound gets it). */
int probe_listen(uint32_t addr, unsigned port, unsigned *bound, hs_error *err);
/* A connected socket made non-blocking, close-on-exec, TCP_NODELAY. */
void probe_sock_prepare(int fd);
/* Connect to host:port, retrying a refused connection until timeout_s. */
int probe_connect(uint32_t addr, unsigned port, double timeout_s, hs_error *err);

/* --------------------------------------------------------------- scenario */
typedef struct probe_cdev {
  char *name;            /* expanded name: "<entry>" for count 1, "<entry>-<k>" else */
  char *profile;         /* profile name or path, as the scenario gives it */
  char *link;            /* link name */
  double link_mbps;      /* the link's bandwidth_mbps */
  double busy_w;         /* the profile's busy_w for the task; NAN when not found */
  double tau_s;          /* the profile's tau_s for the task; NAN when not found */
  char *profile_path;    /* where it was found; NULL when not */
} probe_cdev;

typedef struct probe_cscn {
  char *path, *name, *task, *regime, *policy_kind;
  double rounds, samples_per_round, batch_size, seed, model_bytes;
  size_t ndev;
  probe_cdev *dev;
  double server_mbps;    /* network.server's link bandwidth */
  size_t npolicy_keys;   /* the policy block's keys other than "kind", as text */
  char **policy_keys, **policy_vals;
  size_t nregime_keys;   /* the regime block's keys other than "kind": numbers and */
  char **regime_keys, **regime_vals; /* strings as their text, anything else "{...}" */
  bool *regime_is_num;
} probe_cscn;
/* Read the parts of a hetsim scenario the runtime uses (probe's own JSON):
 * task, rounds, samples_per_round, batch_size, seed, model_bytes, regime.kind,
 * policy (kind and keys), devices (name, profile, link, count) and
 * network.links/server. Profiles are looked up (for stated energy and the
 * box's quotas) in profile_dirs (':'-separated, may be NULL), then
 * $HETSIM_PROFILE_PATH, the scenario's folder and the shipped profiles
 * (hs_share_path("profiles")); a profile
 * not found is not an error (busy_w stays NAN). Messages name the file and
 * the JSON path. */
hs_status probe_cscn_load(const char *path, const char *profile_dirs, probe_cscn *s, hs_error *err);
void probe_cscn_fini(probe_cscn *s);
/* Index of the device named name; SIZE_MAX when absent. */
size_t probe_cscn_find(const probe_cscn *s, const char *name);
/* The device name nearest to name (edit distance), for messages. */
const char *probe_cscn_nearest(const probe_cscn *s, const char *name);
/* The name of the NULL-terminated list nearest to name ("" for an empty list). */
const char *probe_nearest_name(const char *name, const char *const *names);

/* ------------------------------------------------------------------ serve */
typedef struct probe_serve_cfg {
  const char *scenario, *out, *profiles, *data;
  uint32_t addr;                 /* network order, loopback */
  unsigned port;                 /* board i listens on port + i; 0: any free ports */
  double rounds, samples;        /* overrides; 0: the scenario's */
  double max_samples;            /* training images each trainer loads (0: 20000) */
  double connect_timeout_s, io_timeout_s, round_timeout_s;
  bool quiet;
  /* box: listening sockets already made (nlisten == boards), or NULL */
  const int *listen_fds;
  size_t nlisten;
} probe_serve_cfg;
void probe_serve_cfg_init(probe_serve_cfg *c);
/* Run the whole run of the scenario's regime (pma, ddp or fedasync: one
 * file each, serve_<regime>.c, behind the table in serve.c); returns the
 * exit status (0, 1 system, 2 bad input) after one line on stderr when not 0. */
int probe_serve(const probe_serve_cfg *cfg);
int probe_cmd_serve(int argc, char **argv);

/* ------------------------------------------------------------------ board */
typedef struct probe_board_cfg {
  const char *name, *data, *sensor, *root;
  uint32_t addr;
  unsigned port;
  double connect_timeout_s, io_timeout_s, round_timeout_s;
  unsigned threads;
} probe_board_cfg;
int probe_board(const probe_board_cfg *cfg);
int probe_cmd_board(int argc, char **argv);

/* ------------------------------------------------------------ options */
/* The cluster commands' options: a table, parsed in one place (cluster_cli.c). */
typedef enum probe_opt_kind { PROBE_OPT_STR, PROBE_OPT_NUM, PROBE_OPT_FLAG, PROBE_OPT_LIST } probe_opt_kind;
typedef struct probe_opt {
  const char *name;      /* "--port" */
  probe_opt_kind kind;
  void *dst;             /* const char **, double *, bool *, or probe_opt_list * */
  double lo, hi;
  bool integer;
} probe_opt;
typedef struct probe_opt_list {
  const char **v;
  size_t n;
} probe_opt_list;
/* Parse argv[first..argc) against opts; positional arguments go to *pos (at
 * most npos). Returns 0 or the exit status after one line ("<cmd>: --x: ...").
 * --help prints usage and returns -1. */
int probe_opts_parse(const char *cmd, int argc, char **argv, int first, const probe_opt *opts, size_t nopts,
                     const char **pos, size_t npos, size_t *npos_got, const char *usage);

/* -------------------------------------------------------------------- box */
typedef enum probe_cg_kind { PROBE_CG_NONE, PROBE_CG_V1, PROBE_CG_V2 } probe_cg_kind;
/* Which cgroup CPU controller root has: v1 (root/sys/fs/cgroup/cpu or
 * cpu,cpuacct with cpu.cfs_quota_us) or v2 (root/sys/fs/cgroup with "cpu" in
 * cgroup.controllers); *dir gets the hierarchy's folder (heap). */
probe_cg_kind probe_cg_detect(const char *root, char **dir);

typedef struct probe_box_board {
  char *name;
  double quota;          /* CPU share of one core, (0, 1] */
  double link_mbps;      /* the board's link (htb ceil) */
  unsigned port;         /* its server port */
  char *cg;              /* its cgroup folder (heap), NULL before setup */
} probe_box_board;

typedef struct probe_box_plan {
  size_t n;
  probe_box_board *b;
  double server_mbps;
  double cpu_total;      /* sum of the quotas */
  probe_cg_kind cg;
  char *cg_root;         /* the hierarchy folder */
  char *cg_parent;       /* hetsim-box-<pid> under it, NULL before setup */
} probe_box_plan;
/* Quotas and links from the scenario: quota_i proportional to 1/tau_i (the
 * profile's tau_s for the task; a device without one counts as the median of
 * the others, or 1 when none has one), scaled so that they sum to cpu_total,
 * each capped at 1; --quota NAME=F overrides take precedence (the rest share
 * what is left in the same proportions). Links: the device's link
 * bandwidth_mbps; server: network.server's. Ports: port + i. */
hs_status probe_box_plan_make(const probe_cscn *s, double cpu_total, const char *const *quota_over, size_t nover,
                              unsigned port, probe_box_plan *p, hs_error *err);
void probe_box_plan_fini(probe_box_plan *p);
/* Make the cgroups under p->cg_root: the parent hetsim-box-<tag> (v1
 * cpu.shares 65536; v2 cpu.weight 10000 and +cpu for its children) and one
 * child per board with its quota (v1 cpu.cfs_period_us 100000 and
 * cpu.cfs_quota_us; v2 cpu.max "Q 100000"). On error what was made is
 * removed. */
hs_status probe_box_cgroups_create(probe_box_plan *p, const char *tag, hs_error *err);
/* Remove every cgroup the plan made (children first); idempotent. */
void probe_box_cgroups_remove(probe_box_plan *p);
/* The file a process writes its pid to, to join board i's cgroup (heap). */
char *probe_box_cg_join_file(const probe_box_plan *p, size_t i);
/* The tc command lines (argv vectors without the "tc" itself, NULL-terminated
 * per line) for the plan on dev: an htb root on dev, two parents (1:1 server
 * download, 1:2 server upload) at the server's rate, per board a class for
 * each direction (ceil: its link; rate: min(ceil, server/boards)) with a
 * u32 filter on its port (download: source port, upload: destination port),
 * and a default class for unclassified traffic at 10 Gbit/s. Heap; free with
 * probe_box_tc_free. */
char ***probe_box_tc_lines(const probe_box_plan *p, const char *dev, size_t *nlines);
void probe_box_tc_free(char ***lines, size_t n);
int probe_cmd_box(int argc, char **argv);

#endif
