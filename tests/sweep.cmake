# tests/sweep.cmake: hetsim sweep (library and CLI), hetsim-mpi, hetsim plot.
hs_add_test(NAME sweep SOURCES unit/test_sweep.c LIBS hetsim::sim TIMEOUT 120)

# Bad grid specs exit 2 with one line naming the spec (case files sweep-*, plot-*).
add_test(NAME cli_sweep
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "sweep-*" "plot-*")
set_tests_properties(cli_sweep PROPERTIES TIMEOUT 120)

# Byte-equality of -j 1, -j 2 and kill + --resume (and mpirun -np 2 when
# hetsim-mpi is built): tests/sweep/equal_bytes.sh.
if(TARGET hetsim-mpi)
  set(HS_SWEEP_MPI_BIN $<TARGET_FILE:hetsim-mpi>)
  set(HS_SWEEP_MPIEXEC ${MPIEXEC_EXECUTABLE})
else()
  set(HS_SWEEP_MPI_BIN "")
  set(HS_SWEEP_MPIEXEC "")
endif()
add_test(NAME sweep_equal_bytes
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sweep/equal_bytes.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/sweep-work
          "${HS_SWEEP_MPI_BIN}" "${HS_SWEEP_MPIEXEC}")
# OpenMPI refuses root without both variables (CI runs as root).
set_tests_properties(sweep_equal_bytes PROPERTIES TIMEOUT 300
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# hetsim plot on a small sweep and a small run: non-empty PNG and SVG files
# (skipped, not failed, where gnuplot is not installed).
add_test(NAME plot_figures
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sweep/plot.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/plot-work)
set_tests_properties(plot_figures PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

# The metric table: known answers, and a test-only metric reaching every output.
hs_add_test(NAME metrics SOURCES unit/test_metrics.c LIBS hetsim::sim TIMEOUT 60)

# The plot module: registry, table reader, hs_plot with a stand-in gnuplot.
hs_add_test(NAME plot SOURCES unit/test_plot.c LIBS hetsim::plot hetsim::traces TIMEOUT 60)

# Progress lines (run and sweep, any -j) never change an output byte (issue 15).
add_test(NAME progress_bytes
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/progress_bytes.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/progress-bytes)
set_tests_properties(progress_bytes PROPERTIES TIMEOUT 120)

# hetsim optimize (issue 17): bad input exits 2 (cases optimize-*), the same
# bytes for -j 1, -j 3 and kill + --resume, a front of non-dominated points.
add_test(NAME cli_optimize
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "optimize-*")
set_tests_properties(cli_optimize PROPERTIES TIMEOUT 120)
add_test(NAME optimize_bytes
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sweep/optimize_bytes.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/optimize-work)
set_tests_properties(optimize_bytes PROPERTIES TIMEOUT 300)
hs_add_test(NAME optimize SOURCES unit/test_optimize.c LIBS hetsim::sim TIMEOUT 60)
# The front file: one row per distinct objective vector (first kept, tied_points).
add_test(NAME optimize_front
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sweep/optimize_front.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/optimize-front-work)
set_tests_properties(optimize_front PROPERTIES TIMEOUT 120)

# hetsim-mpi optimize: mpirun -np 1, 2, 3 = hetsim optimize byte for byte, a
# job killed twice + --resume, bad input once (exit 2), the --help texts
# (skipped, not failed, where hetsim-mpi is not built).
add_test(NAME optimize_mpi
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sweep/optimize_mpi.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/optimize-mpi-work
          "${HS_SWEEP_MPI_BIN}" "${HS_SWEEP_MPIEXEC}")
set_tests_properties(optimize_mpi PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
