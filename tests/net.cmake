# tests/net.cmake: the network (fluid max-min links) and the collective cost models.
hs_add_test(NAME net SOURCES unit/test_net.c LIBS hetsim::sim TIMEOUT 60)
hs_add_test(NAME net_slots SOURCES unit/test_net_slots.c LIBS hetsim::sim TIMEOUT 60)
hs_add_test(NAME collective SOURCES unit/test_collective.c LIBS hetsim::sim TIMEOUT 60)
