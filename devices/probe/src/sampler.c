/* sampler.c: the sampling thread. It wakes at fixed instants on
 * CLOCK_MONOTONIC (absolute sleeps, so the interval does not drift with the
 * time a reading takes), reads the sensor and keeps a cumulative energy:
 * counter sensors by unwrapped difference, power sensors by the trapezoid
 * rule between consecutive readings. It also tracks the hottest thermal zone
 * and, on a Raspberry Pi, whether the firmware reports throttling.
 *
 * Invariants (under mu): energy_j is the integral from the first reading to
 * last_t; after a failure no further reading is taken and marks report NAN, so
 * the runs measured before the failure keep their energy. mark() takes a
 * reading itself, so a run's energy is exact at its boundaries rather than
 * quantised to the sampling interval. Window sensors (meter logs) are not
 * polled; their energy is asked for per window afterwards.
 * The wait is pthread_cond_timedwait on a CLOCK_MONOTONIC condition variable
 * with absolute deadlines (so a stop request wakes it at once).
 * Rejected: timer signals (signal-safety of file reads), a relative sleep
 * loop (drifts by the reading time every tick), clock_nanosleep (cannot be
 * woken early to stop). */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct probe_sampler {
  probe_sensor *sensor;
  char *root;
  double period;
  pthread_t th;
  bool running, stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;     /* monotonic clock; signalled to stop */
  /* under mu */
  bool have, failed;
  hs_error err;
  double last_t, last_v, energy_j, first_v, max_temp;
  double took_t, took_real; /* time of the latest reading attempt, both clocks */
  int64_t rpi_ticks;     /* readings that saw the Pi firmware throttling */
  size_t count;
};

int64_t probe_throttle_count(const char *root) {
  char *base = probe_path(root, "/sys/devices/system/cpu");
  DIR *d = opendir(base);
  int64_t total = -1;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9') continue;
      static const char *const files[] = {"core_throttle_count", "package_throttle_count"};
      for (int k = 0; k < 2; k++) {
        char *p = probe_xasprintf("%s/%s/thermal_throttle/%s", base, e->d_name, files[k]);
        int64_t v = 0;
        hs_error ig;
        if (probe_read_i64(p, &v, &ig) == HS_OK) total = (total < 0 ? 0 : total) + v;
        free(p);
      }
    }
    closedir(d);
  }
  free(base);
  return total;
}

double probe_max_temp_c(const char *root) {
  char *base = probe_path(root, "/sys/class/thermal");
  DIR *d = opendir(base);
  double mx = NAN;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "thermal_zone", 12) != 0) continue;
      char *p = probe_xasprintf("%s/%s/temp", base, e->d_name);
      int64_t v = 0;
      hs_error ig;
      if (probe_read_i64(p, &v, &ig) == HS_OK) { /* millidegrees C */
        double c = 1e-3 * (double)v;
        if (isnan(mx) || c > mx) mx = c;
      }
      free(p);
    }
    closedir(d);
  }
  free(base);
  return mx;
}

int64_t probe_rpi_throttled(const char *root) {
  char *p = probe_path(root, "/sys/devices/platform/soc/soc:firmware/get_throttled");
  char buf[32];
  hs_error ig;
  int64_t v = -1;
  if (probe_read_line(p, buf, sizeof buf, &ig) == HS_OK) {
    char *end = NULL;
    unsigned long x = strtoul(buf, &end, 16);
    if (end != buf) v = (int64_t)(x & 0xeu); /* now: frequency capped | throttled | soft temp limit */
  }
  free(p);
  return v;
}

/* One reading; caller holds mu. */
static void sampler_take(probe_sampler *s) {
  double t = probe_now_mono();
  s->took_t = t;
  s->took_real = probe_now_real(); /* same instant on the wall clock, for meter logs */
  double temp = probe_max_temp_c(s->root);
  if (!isnan(temp) && (isnan(s->max_temp) || temp > s->max_temp)) s->max_temp = temp;
  if (probe_rpi_throttled(s->root) > 0) s->rpi_ticks++;
  const probe_sensor_type *ty = s->sensor ? s->sensor->type : NULL;
  if (!ty || !ty->read || s->failed) {
    s->last_t = t;
    return;
  }
  double v = 0;
  hs_error e = {HS_OK, ""};
  if (ty->read(s->sensor->state, &v, &e) != HS_OK) {
    s->failed = true;
    s->err = e;
    return;
  }
  if (!s->have) {
    s->first_v = v;
    s->energy_j = 0;
    s->have = true;
  } else if (ty->kind == PROBE_ENERGY_J) {
    s->energy_j = v - s->first_v;
  } else {
    s->energy_j += 0.5 * (v + s->last_v) * (t - s->last_t);
  }
  s->last_t = t;
  s->last_v = v;
  s->count++;
}

static void *sampler_main(void *arg) {
  probe_sampler *s = arg;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  long step_ns = (long)(s->period * 1e9);
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    next.tv_nsec += step_ns % 1000000000L;
    next.tv_sec += step_ns / 1000000000L;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      next.tv_sec++;
    }
    /* Absolute deadline on CLOCK_MONOTONIC; destroy() signals cv, so stopping
     * never waits out a whole period (10 s at 0.1 Hz). */
    int rc = 0;
    while (!s->stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&s->cv, &s->mu, &next);
    if (!s->stop) sampler_take(s);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

probe_sampler *probe_sampler_create(probe_sensor *sensor, const char *root, double hz) {
  probe_sampler *s = hs_calloc(1, sizeof *s);
  s->sensor = sensor;
  s->root = hs_strdup(root ? root : "/");
  s->period = hz > 0 ? 1.0 / hz : 0.1;
  s->max_temp = NAN;
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_lock(&s->mu);
  sampler_take(s);
  pthread_mutex_unlock(&s->mu);
  s->running = pthread_create(&s->th, NULL, sampler_main, s) == 0;
  return s;
}

hs_status probe_sampler_mark(probe_sampler *s, probe_mark *m, hs_error *err) {
  pthread_mutex_lock(&s->mu);
  sampler_take(s);
  m->t_mono = s->took_t; /* the energy below is as of this instant */
  m->t_real = s->took_real;
  bool polled = s->sensor && s->sensor->type && s->sensor->type->read;
  m->energy_j = polled && !s->failed ? s->energy_j : NAN;
  bool failed = s->failed;
  hs_error e = s->err;
  int64_t rpi = s->rpi_ticks;
  pthread_mutex_unlock(&s->mu);
  /* x86 throttle counters, plus the readings during which a Raspberry Pi's
   * firmware reported throttling (its get_throttled is a state, not a count). */
  int64_t x86 = probe_throttle_count(s->root);
  m->throttle = x86 < 0 && rpi == 0 && probe_rpi_throttled(s->root) < 0 ? -1 : (x86 < 0 ? 0 : x86) + rpi;
  if (failed) {
    if (err) *err = e;
    return e.status;
  }
  return HS_OK;
}

hs_status probe_sampler_energy(probe_sampler *s, const probe_mark *a, const probe_mark *b, double *joules,
                                  hs_error *err) {
  *joules = NAN;
  const probe_sensor_type *ty = s->sensor ? s->sensor->type : NULL;
  if (!ty) return hs_error_set(err, HS_ESTATE, "no sensor: energy not measured");
  if (ty->window) return ty->window(s->sensor->state, a->t_real, b->t_real, joules, err);
  if (isnan(a->energy_j) || isnan(b->energy_j)) {
    pthread_mutex_lock(&s->mu);
    hs_error e = s->err;
    pthread_mutex_unlock(&s->mu);
    return hs_error_set(err, HS_EIO, "%s: sensor failed during the run: %s", ty->id(s->sensor->state), e.msg);
  }
  *joules = b->energy_j - a->energy_j;
  return HS_OK;
}

double probe_sampler_max_temp_c(probe_sampler *s, bool reset) {
  pthread_mutex_lock(&s->mu);
  double t = s->max_temp;
  if (reset) s->max_temp = NAN;
  pthread_mutex_unlock(&s->mu);
  return t;
}

size_t probe_sampler_count(probe_sampler *s) {
  pthread_mutex_lock(&s->mu);
  size_t n = s->count;
  pthread_mutex_unlock(&s->mu);
  return n;
}

bool probe_sampler_failed(probe_sampler *s, hs_error *err) {
  pthread_mutex_lock(&s->mu);
  bool f = s->failed;
  if (f && err) *err = s->err;
  pthread_mutex_unlock(&s->mu);
  return f;
}

void probe_sampler_destroy(probe_sampler *s) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (s->running) pthread_join(s->th, NULL);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s->root);
  free(s);
}
