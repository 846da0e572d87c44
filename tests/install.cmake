# tests/install.cmake: hetsim as an installed package (tests/install/). One
# fixture installs the build into build/tests/install-prefix; the C trainer is
# then built against it through pkg-config and through find_package(hetsim),
# and the Python package's unittest suite runs against it.
set(HS_TEST_PREFIX ${CMAKE_CURRENT_BINARY_DIR}/install-prefix)
set(HS_INSTALL_SH ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.sh)
set(HS_INSTALL_CFLAGS "")
if(HS_SANITIZE)
  set(HS_INSTALL_CFLAGS -fsanitize=address,undefined)
endif()
add_test(NAME install_prefix COMMAND sh ${HS_INSTALL_SH} install ${PROJECT_BINARY_DIR}
  ${HS_TEST_PREFIX} ${CMAKE_INSTALL_LIBDIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(install_prefix PROPERTIES TIMEOUT 120 FIXTURES_SETUP hs_installed
  RESOURCE_LOCK hs_install_prefix)
if(HS_SANITIZE)
  set_tests_properties(install_prefix PROPERTIES ENVIRONMENT HS_INSTALL_SANITIZE=1)
endif()
add_test(NAME install_pkgconfig COMMAND sh ${HS_INSTALL_SH} pkgconfig ${HS_TEST_PREFIX}
  ${CMAKE_INSTALL_LIBDIR} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install-pc
  ${HS_INSTALL_CFLAGS})
add_test(NAME install_find_package COMMAND sh ${HS_INSTALL_SH} cmake ${HS_TEST_PREFIX}
  ${CMAKE_INSTALL_LIBDIR} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install-cmake
  ${HS_INSTALL_CFLAGS})
set_tests_properties(install_pkgconfig install_find_package PROPERTIES TIMEOUT 300
  FIXTURES_REQUIRED hs_installed)
# The Python package (policies/python) against the installed tree: unittest,
# standard library only. Skipped in the sanitizer build, where the library
# needs the sanitizer runtime loaded before Python.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND NOT HS_SANITIZE)
  add_test(NAME install_python
    COMMAND ${Python3_EXECUTABLE} -m unittest discover -v
            -s ${PROJECT_SOURCE_DIR}/policies/python/tests -t ${PROJECT_SOURCE_DIR}/policies/python/tests)
  set_tests_properties(install_python PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED hs_installed
    ENVIRONMENT "PYTHONPATH=${HS_TEST_PREFIX}/${HS_INSTALL_PYTHONDIR};HS_TEST_PREFIX=${HS_TEST_PREFIX};PYTHONDONTWRITEBYTECODE=1"
    ENVIRONMENT_MODIFICATION "HETSIM_PREFIX=unset:;HETSIM_LIBRARY=unset:;HETSIM_BIN=unset:")
endif()
