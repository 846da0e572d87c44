/* synth.c: synthetic data in the REAL layouts, for boards (and this build
 * machine) that have no ERA5 extract or aclImdb corpus offline. The timing of
 * a trainer depends on the layout and the sizes, not on the values, but the
 * provenance must still say the content was synthetic: both writers leave a
 * marker (FILE.synthetic, DIR/SYNTHETIC) that the trainers detect and report.
 *   era5: hourly rows from 2020-01-01 00:00 of one grid point, columns
 *         time,t2m,d2m,u10,v10,msl,sp,tcc,tp in ERA5's units (K, m/s, Pa,
 *         fraction, m), diurnal and seasonal cycles plus AR(1) noise;
 *   imdb: reviews of 60-300 words from a small lexicon with sentiment-bearing
 *         words, "<br /><br />" breaks, files <id>_<rating>.txt with ratings
 *         7-10 in pos/ and 1-4 in neg/, as in aclImdb. */
#include "base/hs_rng.h"
#include "learn/hs_learn_parts.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t sy_next(uint64_t *s) { return hs_splitmix64_step(s); }
static double sy_u(uint64_t *s) { return (double)(sy_next(s) >> 11) * 0x1p-53; }
static double sy_n(uint64_t *s) { /* Box-Muller, one of the pair */
  double u = sy_u(s), v = sy_u(s);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

typedef struct {
  char *b;
  size_t n, cap;
} sy_buf;

static void sy_printf(sy_buf *b, const char *fmt, ...) LRN_PRINTF(2, 3);
static void sy_printf(sy_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if (b->n + (size_t)k + 1 > b->cap) {
    while (b->n + (size_t)k + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 4096;
    b->b = hs_realloc(b->b, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->b + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

hs_status lrn_synth_era5(const char *path, size_t rows, uint64_t seed, hs_error *err) {
  static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}; /* 2020 is a leap year */
  sy_buf b = {NULL, 0, 0};
  sy_printf(&b, "time,t2m,d2m,u10,v10,msl,sp,tcc,tp\n");
  uint64_t s = seed;
  double a_t = 0, a_u = 0, a_v = 0, a_p = 0, a_c = 0;
  int y = 2020, mo = 0, d = 1, h = 0;
  for (size_t i = 0; i < rows; i++) {
    double doy = (double)i / 24.0;
    a_t = 0.95 * a_t + 0.6 * sy_n(&s);
    a_u = 0.9 * a_u + 0.8 * sy_n(&s);
    a_v = 0.9 * a_v + 0.8 * sy_n(&s);
    a_p = 0.98 * a_p + 60.0 * sy_n(&s);
    a_c = 0.9 * a_c + 0.1 * sy_n(&s);
    double t2m = 283.0 - 9.0 * cos(6.283185307179586 * (doy - 15.0) / 366.0) -
                 4.0 * cos(6.283185307179586 * ((double)h - 3.0) / 24.0) + a_t;
    double cloud = fmin(1.0, fmax(0.0, 0.55 + a_c));
    double tp = cloud > 0.8 ? 0.0004 * (cloud - 0.8) * 5.0 * sy_u(&s) : 0.0;
    sy_printf(&b, "%04d-%02d-%02d %02d:00:00,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%.4f,%.6f\n", y, mo + 1, d, h, t2m,
              t2m - 3.0 - 4.0 * (1.0 - cloud), 2.0 + a_u, -1.0 + a_v, 101325.0 + a_p, 98900.0 + 0.97 * a_p, cloud, tp);
    if (++h == 24) {
      h = 0;
      if (++d > mdays[mo]) {
        d = 1;
        if (++mo == 12) {
          mo = 0;
          y++;
        }
      }
    }
  }
  /* Marker first: an interrupted run leaves data that still says it is synthetic. */
  char *m = lrn_xasprintf("%s.synthetic", path);
  static const char note[] = "synthetic content in the ERA5 CSV layout, written by hetsim-probe synth era5\n";
  hs_status st = lrn_write_atomic(m, note, sizeof note - 1, err);
  free(m);
  if (st == HS_OK) st = lrn_write_atomic(path, b.b, b.n, err);
  free(b.b);
  return st;
}

static hs_status sy_mkdir(const char *p, hs_error *err) {
  if (mkdir(p, 0755) == 0 || errno == EEXIST) return HS_OK;
  return hs_error_set(err, HS_EIO, "%s: cannot create folder: %s", p, strerror(errno));
}

hs_status lrn_synth_imdb(const char *dir, size_t docs, uint64_t seed, hs_error *err) {
  static const char *const pos[] = {"great", "wonderful", "brilliant", "moving", "superb", "loved", "beautiful",
                                    "excellent", "charming", "masterpiece", "funny", "touching"};
  static const char *const neg[] = {"awful", "boring", "terrible", "waste", "worst", "dull", "poorly",
                                    "stupid", "mess", "annoying", "bad", "predictable"};
  static const char *const neu[] = {"the", "film", "movie", "a", "and", "of", "to", "is", "it", "in", "this",
                                    "that", "was", "story", "actors", "plot", "scene", "director", "with", "for",
                                    "but", "his", "her", "character", "time", "really", "just", "one", "about",
                                    "end", "watch", "i", "saw", "you", "they", "there", "music", "acting",
                                    "script", "camera", "first", "would", "could", "even", "some", "people"};
  const size_t npos = sizeof pos / sizeof *pos, nneg = sizeof neg / sizeof *neg, nneu = sizeof neu / sizeof *neu;
  uint64_t s = seed;
  hs_status st = sy_mkdir(dir, err);
  if (st == HS_OK) { /* marker first, as for era5 */
    char *m = lrn_xasprintf("%s/SYNTHETIC", dir);
    static const char note[] = "synthetic reviews in the aclImdb layout, written by hetsim-probe synth imdb\n";
    st = lrn_write_atomic(m, note, sizeof note - 1, err);
    free(m);
  }
  static const char *const splits[] = {"train", "test"};
  for (int sp = 0; sp < 2 && st == HS_OK; sp++) {
    char *sd = lrn_xasprintf("%s/%s", dir, splits[sp]);
    st = sy_mkdir(sd, err);
    size_t nd = sp == 0 ? docs : (docs / 10 > 2 ? docs / 10 : 2);
    for (int lab = 0; lab < 2 && st == HS_OK; lab++) {
      char *ld = lrn_xasprintf("%s/%s", sd, lab ? "pos" : "neg");
      st = sy_mkdir(ld, err);
      for (size_t i = 0; i < nd / 2 && st == HS_OK; i++) {
        sy_buf b = {NULL, 0, 0};
        size_t words = 60 + (size_t)(sy_next(&s) % 241);
        for (size_t w = 0; w < words; w++) {
          double u = sy_u(&s);
          const char *word = u < 0.08 ? (lab ? pos : neg)[sy_next(&s) % (lab ? npos : nneg)]
                             : u < 0.11 ? (lab ? neg : pos)[sy_next(&s) % (lab ? nneg : npos)]
                                        : neu[sy_next(&s) % nneu];
          sy_printf(&b, "%s%s%s", w == 0 ? "" : " ", word, w % 23 == 22 ? ".<br /><br />" : "");
        }
        sy_printf(&b, ".");
        int rating = lab ? 7 + (int)(sy_next(&s) % 4) : 1 + (int)(sy_next(&s) % 4);
        char *f = lrn_xasprintf("%s/%zu_%d.txt", ld, i, rating);
        FILE *fp = fopen(f, "w"); /* scratch data, already marked: no fsync per review */
        bool ok = fp != NULL;
        if (fp) {
          ok = fwrite(b.b, 1, b.n, fp) == b.n;
          ok = fclose(fp) == 0 && ok;
        }
        if (!ok) st = hs_error_set(err, HS_EIO, "%s: cannot write: %s", f, strerror(errno));
        free(f);
        free(b.b);
      }
      free(ld);
    }
    free(sd);
  }
  return st;
}
