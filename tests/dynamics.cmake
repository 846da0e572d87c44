# tests/dynamics.cmake: devices that change (sim/src/dyn*.c): thermal closed
# forms, hysteresis, availability, deadlines, compute_cv_adapted.
hs_add_test(NAME dynamics SOURCES unit/test_dynamics.c LIBS hetsim::sim hetsim::traces TIMEOUT 120)
target_include_directories(test_dynamics PRIVATE ${PROJECT_SOURCE_DIR}/sim/src)
