/* commands.c: the registry of subcommands, in the order `hetsim --help` lists them. */
#include "commands.h"

const hs_command hs_commands[] = {
    {"version", "print the version", hs_cmd_version},
    {"replay", "feed recorded telemetry to a policy, print its allocations", hs_cmd_replay},
    {"validate", "check a scenario and print it with every default filled in", hs_cmd_validate},
};
const size_t hs_ncommands = sizeof hs_commands / sizeof hs_commands[0];
