# policies/cmake/install.cmake: what `cmake --install` puts under the prefix,
# and the build tree's mirror of the installed data layout. Included last by
# the top-level CMakeLists.txt (every target exists by then).
#
#   <prefix>/include/hetsim/hs_*.h           the controller's public headers
#   <prefix>/<libdir>/libhetsim-policies.{a,so}   controller + AGC planner
#   <prefix>/<libdir>/pkgconfig/hetsim-policies.pc
#   <prefix>/<libdir>/cmake/hetsim/          find_package(hetsim): hetsim::policies
#                                            (shared), hetsim::policies_static
#   <prefix>/bin/                            hetsim, hetsim-mpi, hs-policy-bridge,
#                                            hetsim-probe
#   <prefix>/share/hetsim/{scenarios,profiles,plot}   found by the programs from
#                                            their own folder (hs_share_path)
#   <prefix>/<HS_INSTALL_PYTHONDIR>/hetsim/  the Python package
#   <prefix>/share/doc/hetsim/LICENSE
# Every file is relocatable: the .pc file and the CMake package find the
# prefix from their own location, the programs from /proc/self/exe, the Python
# package from its own folder. No path of the build machine is installed.
include(CMakePackageConfigHelpers)

set(HS_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING
  "Where the Python package hetsim goes, relative to the prefix (add <prefix>/<this> to PYTHONPATH)")
set(HS_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hetsim")

# --- the build tree mirrors the install: build/share/hetsim/<x> -> source ---
# The programs in build/bin find their data as <bin>/../share/hetsim/<x>, as an
# installed program does; the links make that the source folders.
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/share/hetsim)
foreach(pair "scenarios=scenarios" "profiles=devices/profiles" "plot=traces/plot")
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 name)
  list(GET pair 1 src)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${src} ${PROJECT_BINARY_DIR}/share/hetsim/${name} SYMBOLIC)
endforeach()

if(NOT HS_PROBE_ONLY)
  # --- the controller library, its headers, pkg-config and CMake package ---
  install(TARGETS hetsim_policies_shared hetsim_policies_static EXPORT hetsimTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hetsim)
  # The headers the library implements (hs_rng_gsl.h is not one: it is the simulator's, sim/kernel).
  # Installed as <prefix>/include/hetsim/{policies,base}/, the same relative
  # paths as in the tree: a trainer writes #include "policies/hs_policy.h".
  install(FILES
    ${PROJECT_SOURCE_DIR}/policies/include/policies/hs_policy.h
    ${PROJECT_SOURCE_DIR}/policies/include/policies/hs_agc.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hetsim/policies)
  install(FILES
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_status.h
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_alloc.h
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_assert.h
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_rng.h
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_util.h
    ${PROJECT_SOURCE_DIR}/policies/include/base/hs_fmt.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hetsim/base)
  install(EXPORT hetsimTargets NAMESPACE hetsim:: DESTINATION ${HS_INSTALL_CMAKEDIR})
  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/hetsimConfig.cmake.in
    ${PROJECT_BINARY_DIR}/hetsimConfig.cmake INSTALL_DESTINATION ${HS_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/hetsimConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/hetsimConfig.cmake
    ${PROJECT_BINARY_DIR}/hetsimConfigVersion.cmake DESTINATION ${HS_INSTALL_CMAKEDIR})
  # pkg-config: the prefix is found from the .pc file's own folder (${pcfiledir}).
  file(RELATIVE_PATH HS_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
  string(REGEX REPLACE "/$" "" HS_PC_TO_PREFIX "${HS_PC_TO_PREFIX}")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/hetsim-policies.pc.in
    ${PROJECT_BINARY_DIR}/hetsim-policies.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/hetsim-policies.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

  # --- programs ---
  install(TARGETS hetsim hs-policy-bridge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(TARGET hetsim-mpi)
    install(TARGETS hetsim-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()

  # --- the Python package: the library and programs are found from its folder
  # (policies/python/hetsim/_paths.py, written here with relative paths) ---
  file(RELATIVE_PATH HS_PY_TO_PREFIX /${HS_INSTALL_PYTHONDIR}/hetsim /)
  set(HS_PY_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  set(HS_PY_BINDIR "${CMAKE_INSTALL_BINDIR}")
  configure_file(${PROJECT_SOURCE_DIR}/policies/python/hetsim/_paths.py.in
    ${PROJECT_BINARY_DIR}/python/_paths.py @ONLY)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/policies/python/hetsim
    DESTINATION ${HS_INSTALL_PYTHONDIR}
    FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  install(FILES ${PROJECT_BINARY_DIR}/python/_paths.py
    DESTINATION ${HS_INSTALL_PYTHONDIR}/hetsim)
  install(FILES ${PROJECT_SOURCE_DIR}/policies/examples/train_loop.py
    ${PROJECT_SOURCE_DIR}/policies/examples/bridge.c
    DESTINATION ${CMAKE_INSTALL_DATADIR}/hetsim/examples)
endif()
install(TARGETS hetsim-probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# --- shipped data and the license ---
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hetsim/scenarios)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/devices/profiles/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hetsim/profiles)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/traces/plot/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hetsim/plot
  FILES_MATCHING PATTERN "*.gp")
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
