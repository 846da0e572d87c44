/* sysinfo.c: what board this is, for the profile's board/cpu/arch and its
 * provenance. Board: the device tree's model (Arm and RISC-V boards), else
 * DMI vendor + product (x86), else "virtual machine ..." when the CPU flags
 * say hypervisor, else "unknown board". CPU: /proc/cpuinfo's model name, or
 * the fields Arm (Hardware, Model) and RISC-V (uarch, isa) kernels print, plus
 * the processor count. The load (probe_load_read): /proc/loadavg's first
 * figure and /proc/stat's steal ticks, for the warning a calibration on a
 * busy machine gets. All under a root folder so tests use fake trees. */
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static bool si_read(const char *root, const char *path, char *buf, size_t cap) {
  char *p = probe_path(root, path);
  unsigned char *data = NULL;
  size_t len = 0;
  hs_error ig;
  bool ok = probe_read_file(p, &data, &len, &ig) == HS_OK && len > 0;
  free(p);
  if (ok) {
    /* device-tree strings end in NUL; sysfs ones in a newline */
    size_t n = strnlen((const char *)data, len);
    while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == ' ')) n--;
    if (n >= cap) n = cap - 1;
    memcpy(buf, data, n);
    buf[n] = '\0';
    ok = n > 0;
  }
  free(data);
  return ok;
}

/* Value of the first "key<spaces>: value" line in text. */
static bool si_field(const char *text, const char *key, char *buf, size_t cap) {
  size_t kl = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, kl) != 0) continue;
    const char *c = l + kl;
    while (*c == ' ' || *c == '\t') c++;
    if (*c != ':') continue;
    c++;
    while (*c == ' ') c++;
    size_t n = strcspn(c, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(buf, c, n);
    buf[n] = '\0';
    return n > 0;
  }
  return false;
}

void probe_sysinfo_read(const char *root, probe_sysinfo *si) {
  memset(si, 0, sizeof *si);
  struct utsname u;
  if (uname(&u) == 0) {
    snprintf(si->arch, sizeof si->arch, "%.60s", u.machine);
    snprintf(si->kernel, sizeof si->kernel, "%.120s", u.release);
  }
  char *cp = probe_path(root, "/proc/cpuinfo");
  unsigned char *ci = NULL;
  size_t cl = 0;
  hs_error ig;
  if (probe_read_file(cp, &ci, &cl, &ig) != HS_OK) ci = NULL;
  free(cp);
  const char *txt = ci ? (const char *)ci : "";
  for (const char *l = txt; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
    if (strncmp(l, "processor", 9) == 0) si->ncpu++;
  si->virtual_machine = strstr(txt, " hypervisor") != NULL;
  char model[200] = "";
  if (!si_field(txt, "model name", model, sizeof model) && !si_field(txt, "Model", model, sizeof model) &&
      !si_field(txt, "Hardware", model, sizeof model) && !si_field(txt, "uarch", model, sizeof model) &&
      !si_field(txt, "isa", model, sizeof model))
    snprintf(model, sizeof model, "unknown CPU");
  char fam[16] = "", mod[16] = "";
  if (si_field(txt, "cpu family", fam, sizeof fam) && si_field(txt, "model", mod, sizeof mod))
    snprintf(si->cpu, sizeof si->cpu, "%.180s (family %.15s model %.15s), %u logical CPUs", model, fam, mod, si->ncpu);
  else
    snprintf(si->cpu, sizeof si->cpu, "%.180s, %u logical CPUs", model, si->ncpu);
  free(ci);

  char a[120] = "", b[120] = "";
  if (si_read(root, "/proc/device-tree/model", a, sizeof a) ||
      si_read(root, "/sys/firmware/devicetree/base/model", a, sizeof a)) {
    snprintf(si->board, sizeof si->board, "%s", a);
    snprintf(si->board_source, sizeof si->board_source, "device tree");
  } else if (si_read(root, "/sys/class/dmi/id/product_name", b, sizeof b)) {
    if (!si_read(root, "/sys/class/dmi/id/sys_vendor", a, sizeof a)) snprintf(a, sizeof a, "unknown vendor");
    snprintf(si->board, sizeof si->board, "%.120s %.120s", a, b);
    snprintf(si->board_source, sizeof si->board_source, "DMI");
  } else if (si->virtual_machine) {
    snprintf(si->board, sizeof si->board, "virtual machine (%u vCPUs; no DMI, no device tree)", si->ncpu);
    snprintf(si->board_source, sizeof si->board_source, "cpuinfo hypervisor flag");
  } else {
    snprintf(si->board, sizeof si->board, "unknown board (no device tree model, no DMI)");
    snprintf(si->board_source, sizeof si->board_source, "none");
  }
}

void probe_load_read(const char *root, probe_load *l) {
  memset(l, 0, sizeof *l);
  char buf[256];
  if (si_read(root, "/proc/loadavg", buf, sizeof buf)) {
    char *end;
    l->loadavg1 = strtod(buf, &end);
    l->have_loadavg = end != buf && l->loadavg1 >= 0;
  }
  char *p = probe_path(root, "/proc/stat");
  unsigned char *data = NULL;
  size_t len = 0;
  hs_error ig;
  if (probe_read_file(p, &data, &len, &ig) == HS_OK && len > 4 && !strncmp((const char *)data, "cpu ", 4)) {
    /* cpu user nice system idle iowait irq softirq steal ...: the first eight */
    unsigned long long v[8] = {0};
    const char *c = (const char *)data + 4;
    int n = 0;
    for (char *end; n < 8; n++, c = end) {
      v[n] = strtoull(c, &end, 10);
      if (end == c) break;
    }
    if (n == 8) {
      l->have_stat = true;
      l->steal = v[7];
      for (int k = 0; k < 8; k++) l->total += v[k];
    }
  }
  free(data);
  free(p);
}

double probe_steal_fraction(const probe_load *before, const probe_load *after) {
  if (!before->have_stat || !after->have_stat || after->total <= before->total ||
      after->steal < before->steal)
    return NAN;
  return (double)(after->steal - before->steal) / (double)(after->total - before->total);
}
