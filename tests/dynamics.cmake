# tests/dynamics.cmake: devices that change (sim/run/dynamics/dyn*.c): thermal closed
# forms, hysteresis, availability, deadlines, compute_cv_adapted.
hs_add_test(NAME dynamics SOURCES unit/test_dynamics.c LIBS hetsim::sim hetsim::traces TIMEOUT 120)
target_link_libraries(test_dynamics PRIVATE hetsim::sim_inner)
# hetsim-probe import (devices/probe/src/import.c) on a fixture log, and the
# profile it writes read back by the simulator's loader.
if(TARGET hetsim-probe)
  target_link_libraries(test_dynamics PRIVATE hetsim::probe_core)
  add_dependencies(test_dynamics hetsim-probe)
  target_compile_definitions(test_dynamics PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")
endif()
# The shared slowdown (sim/run/dynamics/dyn_shared.c): its law, the correlation
# it gives two devices, its periods and the byte-identical default.
hs_add_test(NAME dyn_shared SOURCES unit/test_dyn_shared.c LIBS hetsim::sim hetsim::traces TIMEOUT 120)
target_link_libraries(test_dyn_shared PRIVATE hetsim::sim_inner)
if(TARGET hetsim-probe)
  add_dependencies(test_dyn_shared hetsim-probe)
  target_compile_definitions(test_dyn_shared PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")
endif()
