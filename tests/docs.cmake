# tests/docs.cmake: the pages' commands run against this build (tests/docs/,
# tests/README.md "Docs that are tested"): every ```sh block of README.md and
# sim/doc/tutorial.md, their outputs compared with the ```text block below
# each, so a page that lies fails.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(FATAL_ERROR "python3 not found: install the Debian package python3 (the docs test runs the pages' commands)")
endif()
add_test(NAME docs
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/run_docs_test.py
          --build ${PROJECT_BINARY_DIR} --src ${PROJECT_SOURCE_DIR}
          --work ${CMAKE_CURRENT_BINARY_DIR}/docs-work
          README.md sim/doc/tutorial.md)
set_tests_properties(docs PROPERTIES TIMEOUT 180 ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
