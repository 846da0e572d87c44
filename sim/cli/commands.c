/* commands.c: the registry of subcommands, in the order `hetsim --help` lists them. */
#include "commands.h"

const hs_command hs_commands[] = {
    {"version", "print the version", hs_cmd_version},
};
const size_t hs_ncommands = sizeof hs_commands / sizeof hs_commands[0];
