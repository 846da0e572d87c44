/* sysinfo.c: the board description's case (device tree, DMI, cpuinfo). */
#include "cases.h"

/* ---------------------------------------------------------------- sysinfo */
PROBE_CASE_FN(sysinfo, sysinfo) {
  probe_put_bin(tmp, "proc/device-tree/model", "Raspberry Pi 5 Model B Rev 1.0\0", 31);
  probe_put(tmp, "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 108.00\n\nprocessor\t: 1\n\nprocessor\t: 2\n\n"
                                 "processor\t: 3\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n");
  probe_sysinfo si;
  probe_sysinfo_read(tmp, &si);
  CHECK(strcmp(si.board, "Raspberry Pi 5 Model B Rev 1.0") == 0 && strcmp(si.board_source, "device tree") == 0,
        "board \"%s\" from %s", si.board, si.board_source);
  CHECK(si.ncpu == 4 && strstr(si.cpu, "4 logical CPUs") && strstr(si.cpu, "Raspberry Pi 5"), "cpu \"%s\"", si.cpu);
  char *dt = probe_cs_path(tmp, "proc/device-tree/model");
  unlink(dt);
  free(dt);
  probe_put(tmp, "sys/class/dmi/id/sys_vendor", "LENOVO\n");
  probe_put(tmp, "sys/class/dmi/id/product_name", "20XW0055GE\n");
  probe_put(tmp, "proc/cpuinfo", "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nuarch\t\t: sifive,u74-mc\n");
  probe_sysinfo_read(tmp, &si);
  CHECK(strcmp(si.board, "LENOVO 20XW0055GE") == 0, "DMI board \"%s\"", si.board);
  CHECK(strstr(si.cpu, "sifive,u74-mc") && si.ncpu == 1, "riscv cpu \"%s\"", si.cpu);
  return true;
}
