# tests/learn.cmake: the learner library (devices/learn, hetsim::learn).
# Builds in HS_PROBE_ONLY too (libc + libm + pthreads), but these suites use
# Criterion, so they run in the normal build. test_learn_data.h writes the
# small data sets they train on.
foreach(m learn learn_partition learn_optim learn_options)
  hs_add_test(NAME ${m} SOURCES unit/test_${m}.c LIBS hetsim::learn TIMEOUT 120)
  # the rng known answers read the library's internal header
  target_include_directories(test_${m} PRIVATE ${PROJECT_SOURCE_DIR}/devices/learn/src)
endforeach()
