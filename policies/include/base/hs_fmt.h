/* [policies/include/base -> hetsim::status; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_fmt.h: shortest round-trip formatting of doubles (libc only, hetsim::status).
 *
 * hs_fmt_double writes the shortest decimal that strtod reads back to the same
 * bits (among the shortest, the one closest to the value; ties to even digits).
 * Layout is that of printf "%.17g" with the trailing zeros gone: fixed notation
 * when the decimal exponent E of the first digit is in [-4, 16] ("0.0001",
 * "123.25", "10000000000000000"), otherwise exponent form with a sign and at
 * least two exponent digits ("1e-05", "1.7976931348623157e+308").
 * -0 is written "-0" (strtod reads it back as -0). NaN is written "nan" (its
 * sign and payload are not kept), infinities "inf" and "-inf": strtod reads
 * those back, but JSON cannot hold them, so JSON writers test isfinite() first
 * and write null (CSV writers may write the text as it is).
 *
 * Several times faster than snprintf("%.17g"): sim/bench/bench_fmt.c measures
 * it (figures in sim/doc/performance.md). */
#ifndef HS_FMT_H
#define HS_FMT_H

#include <stddef.h>

/* Longest output ("-2.2250738585072014e-308") plus the terminating NUL. */
#define HS_FMT_DOUBLE_MAX 25

/* Writes v and a NUL into buf (at least HS_FMT_DOUBLE_MAX bytes); returns the
 * length without the NUL. */
size_t hs_fmt_double(char *buf, double v);

#endif
