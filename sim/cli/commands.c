/* commands.c: the registry of subcommands, in the order `hetsim --help` lists them. */
#include "commands.h"

const hs_command hs_commands[] = {
    {"run", "simulate a scenario with one policy; write summary, rounds, devices", hs_cmd_run},
    {"compare", "run a scenario under several policies; print one table", hs_cmd_compare},
    {"sweep", "run a scenario over a grid of keys and seeds, in parallel; one CSV", hs_cmd_sweep},
    {"optimize", "search scenario keys with NLopt: one objective or the makespan-energy front", hs_cmd_optimize},
    {"plot", "draw a sweep or a run with gnuplot (PNG and SVG)", hs_cmd_plot},
    {"check", "simulate a real cluster run with its allocations; predicted vs measured", hs_cmd_check},
    {"replay", "feed recorded telemetry to a policy, print its allocations", hs_cmd_replay},
    {"validate", "check a scenario and print it with every default filled in", hs_cmd_validate},
    {"reference", "print the scenario-key, column or metric reference (Markdown)", hs_cmd_reference},
    {"agc-plan", "plan gradient coding with quantisation: bits, shares, layout, weights", hs_cmd_agc_plan},
    {"version", "print the version", hs_cmd_version},
};
const size_t hs_ncommands = sizeof hs_commands / sizeof hs_commands[0];
