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
 * Device names are the scenario's (not copied). Checked against the measured
 * peak RSS of hs-bench-pma (notes/scaledev.md: the estimate is a little above
 * it, on purpose: glibc chunk headers and the calendar queue's partly filled
 * chunks). The scenario's own per-device memory is already allocated when
 * this runs and is counted in the process's current size.
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
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "run_internal.h"

/* Per device, whatever the regime and policy (see the header comment). */
static size_t base_bytes(void) {
  return sizeof(sim_dev)                       /* run.c's cold device records */
         + 64 + 8 + 3 * 8                      /* ledger: line (with sim_hot), power factor, mark */
         + sizeof(uint64_t) + sizeof(hs_telemetry) /* alloc, tele */
         + 2 * (48 + 24)                       /* engine: 2 event slots + queue entries */
         + 6 * 8 + 1 + 4                       /* controller: alloc, next, tau, eps, w, sd, have, order */
         + 2 * 64;                             /* network: flow records at the upload peak */
}

size_t sim_run_bytes_per_device(const hs_scenario *sc) {
  size_t b = base_bytes();
  if (!strcmp(sc->policy.kind, "oort")) b += 17;
  if (!strcmp(sc->regime.kind, "pma"))
    b += 1; /* participation byte */
  else
    b += sizeof(double); /* the run's scratch */
  if (strstr(sc->regime.kind, "ddp"))
    b += 16 + 8 * (size_t)(sc->regime.steps_per_round ? sc->regime.steps_per_round : 1);
  if (sc->telemetry_time_noise > 0 || sc->telemetry_energy_noise > 0) b += sizeof(hs_rng);
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
