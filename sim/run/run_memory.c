/* run_memory.c: will a run fit in memory? An estimate made before the first
 * per-device allocation, so a run too large for the machine (or for the
 * address-space limit it runs under) ends with one line naming the device
 * count and the bytes it needs (HS_ENOMEM, exit 1), not with abort() half way
 * through its set-up (issue 16 defect 4, issue 13).
 *
 * Estimate: bytes per device of the run's set-up and its peak while rounds
 * run, summed from the structures' sizes (the cold device record sim_dev, the
 * ledger's line (which holds sim_hot) and powers, the run's per-device arrays,
 * the engine's two event slots and queue entries per device, the controller's
 * arrays, the network's flow records at the upload peak), plus the regime's
 * and the policy's extras and what only some runs allocate (telemetry noise's
 * streams, traces' spans, dynamics' map, the scratch other regimes use).
 * Device names are the scenario's (not copied), made on the first name asked:
 * counted here (name_bytes). Checked against the measured peak RSS of
 * hs-bench-pma (sim/doc/performance.md): the estimate is above it on
 * purpose (glibc chunk headers, the arrays' doubling, a regime with two
 * events pending per device where PMA posts one, and the names the bench
 * never makes). The scenario keeps nothing else per device.
 *
 * Available: the address-space limit (RLIMIT_AS) minus the process's current
 * virtual size, when a limit is set; else MemAvailable from /proc/meminfo
 * (the kernel's estimate of what can be allocated without swapping), and when
 * neither can be read, no refusal. It is a heuristic (overcommit, other
 * processes), so the check errs on the side of running: it refuses only when
 * the estimate exceeds what is available.
 *
 * Complexity O(1) (two small /proc reads). Rejected: probing with a trial
 * malloc of the whole size (overcommit makes it succeed, then the OOM killer
 * ends the run), and RLIMIT_DATA (glibc serves large blocks with mmap, which
 * RLIMIT_DATA counts since Linux 4.7 the same way RLIMIT_AS does; the AS limit
 * is the one `ulimit -v` sets). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim_run.h"

/* Per device, whatever the regime and policy (see the header comment), from
 * the structures' sizes after issue 13's last round of work: the engine's
 * figure allows two pending events per device, each with its 32-byte slot,
 * 20-byte calendar entry and 4-byte free-stack entry (a posted event in a
 * sorted run takes 24 bytes and its sort buffer's share, less); the
 * network's, the flows of one burst in flight (40-byte record, generation,
 * free-stack entry, lane and run FIFO entries, due callback: 68 bytes) with
 * room for the arrays' doubling. The estimate is above hs-bench-pma's
 * measured peak at 10^6 (sim/doc/performance.md). */
static size_t base_bytes(void) {
  return sizeof(sim_dev)                       /* run.c's cold device records */
         + 64 + 8                              /* ledger: line (with sim_hot), power factor */
         + HS_LEDGER_MARK_BYTES                /* the mark, which holds the run's telemetry
                                                  (hs_ledger_mark_in); the allocation in
                                                  force is the controller's (no copy) */
         + 2 * (32 + 20 + 4)                   /* engine: 2 event slots, queue and stack entries */
         + 8 + 8 + 4 + 4                       /* controller: alloc, w (scratch), order, actives */
         + 8                                   /* the round's comm telemetry (the controller
                                                  keeps a copy only for a policy that reads
                                                  it: its bytes_per_participant) */
         + 80;                                 /* network: a burst's flows, with doubling */
}

/* The "<entry>-<k>" names over the devices, rounded up: made by the scenario
 * on the first name a run asks for (outputs, traces, messages), so counted
 * whether or not this run will (an upper bound for a run that writes none). */
static size_t name_bytes(const hs_scenario *sc) {
  double total = 0;
  for (size_t j = 0; j < sc->ndevices; j++) {
    const hs_device_spec *d = &sc->devices[j];
    if (d->count < 2) continue;
    size_t digits = 1;
    for (uint32_t v = d->count - 1; v >= 10; v /= 10) digits++;
    total += (double)d->count * (double)(strlen(d->name) + 2 + digits);
  }
  return sc->total_devices ? (size_t)ceil(total / (double)sc->total_devices) : 0;
}

size_t sim_run_bytes_per_device(const hs_scenario *sc) {
  size_t b = base_bytes() + name_bytes(sc);
  /* The policy's and the regime's own state, from their descriptors. */
  b += hs_policy_bytes_per_participant(sc->policy.kind);
  const sim_regime *rg = sim_regime_find(sc->regime.kind);
  uint32_t steps = sc->regime.steps_per_round ? sc->regime.steps_per_round : 1;
  if (rg) b += rg->dev_bytes + rg->step_bytes * steps;
  bool step_level = hs_policy_caps(sc->policy.kind) & HS_POLICY_CAP_STEP_LEVEL;
  if (step_level || sc->dynamics) b += sizeof(uint64_t); /* the run's own allocation: DDP's
                                                             trained samples, PMA's lost ones */
  if (sc->telemetry_time_noise > 0 || sc->telemetry_energy_noise > 0) b += sizeof(hs_rng);
  for (size_t k = 0; k < sc->ndevices; k++) /* devices[].cpu: the send-stall streams */
    if (sc->devices[k].cpu_share > 0 && sc->devices[k].cpu_share < 1) {
      b += sizeof(hs_rng);
      break;
    }
  if (sc->dynamics) b += sizeof(void *) + 2 * 3 * 8; /* map; stored powers, mark joules */
  return b;
}

/* The process's virtual size in bytes, 0 when unknown. */
static double vm_size(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0;
  int ok = fscanf(f, "%lu", &pages) == 1;
  fclose(f);
  return ok ? (double)pages * (double)sysconf(_SC_PAGESIZE) : 0;
}

/* MemAvailable in bytes, negative when unknown. */
static double mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return -1;
  char line[256];
  double v = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long kb;
    if (sscanf(line, "MemAvailable: %lu kB", &kb) == 1) {
      v = 1024.0 * (double)kb;
      break;
    }
  }
  fclose(f);
  return v;
}

static void human(char *buf, size_t cap, double bytes) {
  if (bytes >= 1e9)
    snprintf(buf, cap, "%.1f GB", bytes / 1e9);
  else
    snprintf(buf, cap, "%.0f MB", bytes / 1e6);
}

hs_status hs_run_check_memory(const hs_scenario *sc, hs_error *err) {
  size_t per = sim_run_bytes_per_device(sc);
  double need = (double)sc->total_devices * (double)per + 16e6; /* + fixed: tables, buffers */
  double avail = -1;
  const char *what = "available";
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    avail = (double)rl.rlim_cur - vm_size();
    what = "left under the address-space limit (ulimit -v)";
  } else {
    avail = mem_available();
  }
  if (avail < 0 || need <= avail) return HS_OK;
  char n[32], a[32];
  human(n, sizeof n, need);
  human(a, sizeof a, avail > 0 ? avail : 0);
  return hs_error_set(err, HS_ENOMEM,
                      "%s: devices: %zu devices need about %s of memory (%zu bytes each); "
                      "%s is %s",
                      sc->path, sc->total_devices, n, per, a, what);
}
