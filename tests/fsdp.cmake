# tests/fsdp.cmake: the sharded regimes (fsdp, hsdp, fl-fsdp, fl-hsdp) and
# their cost model against closed forms (specs/fsdp.md 6.5).
hs_add_test(NAME fsdp SOURCES unit/test_fsdp.c LIBS hetsim::sim hetsim::traces hetsim::cjson
            TIMEOUT 600)
target_include_directories(test_fsdp PRIVATE ${PROJECT_SOURCE_DIR}/sim/src)
