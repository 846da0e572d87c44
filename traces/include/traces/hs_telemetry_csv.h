/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_telemetry_csv.h: the telemetry replay input (DESIGN.md, "Formats").
 *
 *   round,device,time_s,energy_j,samples[,comm_s]
 *   0,rpi4,12.5,40.1,100,0.65
 *   0,jetson,3.2,18.0,100,0.07
 *   1,rpi4,...
 *
 * One row per device per round. The first round fixes the devices and their
 * order; every later round lists the same devices in the same order. Round
 * numbers are non-negative integers that strictly increase from block to block
 * (gaps allowed). time_s and energy_j are finite and >= 0, samples is a
 * non-negative integer. comm_s (optional; files without it are valid) is the
 * device's communication time of the round in seconds, its model download
 * plus its upload (download_s + upload_s), finite and >= 0; with the column
 * every row has a value. Blank lines (empty, or only spaces and tabs) are
 * skipped; CRLF line ends are accepted. Read by hs_csv (RFC 4180): columns
 * are found by header name (any order; other columns are ignored) and fields
 * may be quoted, so a device name may hold ',' or '"' (not a line
 * break). A NUL byte is refused with its line.
 *
 * The table is independent of the controller library on purpose (traces/ does
 * not depend on policies/): the caller turns rows into hs_telemetry records. */
#ifndef HS_TELEMETRY_CSV_H
#define HS_TELEMETRY_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

typedef struct hs_telemetry_csv {
  size_t ndevices;
  size_t nrounds;
  char **devices;     /* ndevices names, first-round order */
  uint64_t *rounds;   /* nrounds round numbers, increasing */
  /* nrounds*ndevices values, row-major: [r*ndevices + d] */
  double *time_s;
  double *energy_j;
  int64_t *samples;
  double *comm_s; /* the same layout; NULL when the file has no comm_s column */
} hs_telemetry_csv;

/* Loads and validates path. Errors read "<path>: line N: <field>: <reason>".
 * The caller owns the result: hs_telemetry_csv_destroy. */
hs_telemetry_csv *hs_telemetry_csv_load(const char *path, hs_error *err);
/* Same from an in-memory buffer; `name` stands for the path in messages. */
hs_telemetry_csv *hs_telemetry_csv_parse(const char *text, size_t len, const char *name,
                                         hs_error *err);
void hs_telemetry_csv_destroy(hs_telemetry_csv *t);

#endif
