# sim/doc/man.cmake: manual pages made at build time from the programs' own
# --help (sim/doc/manpage.sh; why not help2man: sim/doc/building.md), into
# build/share/man/man1/, installed into <prefix>/share/man/man1/ so that
# `man hetsim-sweep` works after `cmake --install`. Included from the top
# CMakeLists.txt after every program's target exists. Not in cross builds:
# the programs cannot run on the build machine there.
if(CMAKE_CROSSCOMPILING)
  return()
endif()
set(HS_MANPAGE_SH ${CMAKE_CURRENT_LIST_DIR}/manpage.sh)
set(HS_MAN_DIR ${PROJECT_BINARY_DIR}/share/man/man1)
# Every command of sim/cli/commands.c but version; the install test checks
# this list against `hetsim --help`.
set(HS_MAN_COMMANDS run compare sweep optimize plot replay check validate reference agc-plan)
set(HS_MAN_PAGES)

# hs_man_page(PAGE TARGET [COMMAND]): PAGE.1 from `TARGET [COMMAND] --help`.
function(hs_man_page page target)
  set(out ${HS_MAN_DIR}/${page}.1)
  if(page STREQUAL "hetsim")
    set(see "")
    foreach(c ${HS_MAN_COMMANDS})
      list(APPEND see hetsim-${c})
    endforeach()
    list(APPEND see hetsim-probe)
  else()
    set(see hetsim)
  endif()
  string(REPLACE ";" "," see "${see}")
  add_custom_command(OUTPUT ${out}
    COMMAND sh ${HS_MANPAGE_SH} ${out} ${page} ${PROJECT_VERSION} "${see}"
            $<TARGET_FILE:${target}> ${ARGN}
    DEPENDS ${target} ${HS_MANPAGE_SH}
    COMMENT "Manual page ${page}(1) from its --help" VERBATIM)
  set(HS_MAN_PAGES ${HS_MAN_PAGES} ${out} PARENT_SCOPE)
endfunction()

if(TARGET hetsim)
  hs_man_page(hetsim hetsim)
  foreach(c ${HS_MAN_COMMANDS})
    hs_man_page(hetsim-${c} hetsim ${c})
  endforeach()
endif()
hs_man_page(hetsim-probe hetsim-probe)
add_custom_target(hetsim-man ALL DEPENDS ${HS_MAN_PAGES})
install(FILES ${HS_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
