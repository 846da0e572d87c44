/* scenario_reference.c: the scenario-key reference, printed from the tables
 * the loader reads (`hetsim reference scenario-keys`, checked in as
 * sim/doc/reference/scenario-keys.md and compared with the build's output by
 * the reference-pages test).
 *
 * Sources: the top-level keys are the block table (scenario.c; a scalar's
 * type, default and range are the numbers scn_get_line checks with), the
 * keys of a block the list its parse checks against, every regime's options
 * its option table (sim_regime_opt: type, default, range, doc), every
 * policy's keys the policies library (hs_policy_config_foreach on a fresh
 * config for the defaults, hs_policy_key_doc for the meaning). Nothing here
 * is written by hand but the page's framing, so the page cannot drift from
 * the loader. Markdown; deterministic (table orders only).
 * Not printed: the types and defaults of the keys nested inside the
 * network, devices, learning, dynamics and topology blocks (their getters
 * take them as arguments, not from a table); each block's key list is, and
 * the block's page says the rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_fmt.h"
#include "scenario_internal.h"
#include "traces/hs_columns.h"

static const char *type_name(scn_type t) {
  switch (t) {
    case SCN_OBJECT: return "object";
    case SCN_UINT: return "integer";
    case SCN_NUM: return "number";
    case SCN_STR: return "string";
    case SCN_BOOL: return "boolean";
    case SCN_ARRAY: return "array";
  }
  return "?";
}

/* A number as a reader wants it: 2^53 by name, whole numbers in full. */
static void bound(FILE *f, double v) {
  if (v == SCN_MAX_U53) fputs("2^53", f);
  else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.0f", v);
  else {
    char b[HS_FMT_DOUBLE_MAX]; /* the shortest text that reads back: 0.6, not 0.59999... */
    fwrite(b, 1, hs_fmt_double(b, v), f);
  }
}


static void block_default(FILE *f, const scn_block *b) {
  if (b->required) fputs("required", f);
  else if (b->def_text) fprintf(f, "%s", b->def_text);
  else if (b->type == SCN_UINT || b->type == SCN_NUM) bound(f, b->def);
  else if (b->type == SCN_BOOL) fputs(b->def ? "true" : "false", f);
  else fputs("none", f);
}

static void block_range(FILE *f, const scn_block *b) {
  if (b->type == SCN_UINT) {
    fputc('[', f);
    bound(f, b->lo);
    fputs(", ", f);
    bound(f, b->hi);
    fputc(']', f);
  } else if (b->type == SCN_NUM) {
    if (isinf(b->hi)) {
      fprintf(f, "%s ", b->lo_open ? ">" : ">=");
      bound(f, b->lo);
    } else {
      fputc(b->lo_open ? '(' : '[', f);
      bound(f, b->lo);
      fputs(", ", f);
      bound(f, b->hi);
      fputc(']', f);
    }
  } else {
    fputs("-", f);
  }
}

static void key_list(FILE *f, const char *const *keys) {
  for (size_t i = 0; keys[i]; i++) fprintf(f, "%s`%s`", i ? ", " : "", keys[i]);
}

static void print_blocks(FILE *f) {
  fputs("## Top-level keys\n\n"
        "In the order `hetsim validate` prints them.\n\n"
        "| key | type | default | range | meaning |\n|---|---|---|---|---|\n",
        f);
  for (size_t i = 0; i < scn_nblocks; i++) {
    const scn_block *b = scn_blocks[i];
    if (!b->key) continue;
    fprintf(f, "| `%s` | %s | ", b->key, type_name(b->type));
    block_default(f, b);
    fputs(" | ", f);
    block_range(f, b);
    fputs(" | ", f);
    hs_md_cell(f, b->doc);
    fputs(" |\n", f);
  }
  fputs("\nThe keys of the blocks (each one is refused when unknown):\n\n", f);
  for (size_t i = 0; i < scn_nblocks; i++) {
    const scn_block *b = scn_blocks[i];
    if (!b->key || !b->keys) continue;
    fprintf(f, "- `%s`%s: ", b->key, b->type == SCN_ARRAY ? "[i]" : "");
    key_list(f, b->keys);
    fputc('\n', f);
  }
  fputs("- `regime`: `kind` and the options of that regime (below)\n"
        "- `policy`: `kind`, `seed` and the keys of that policy (below)\n\n"
        "Checks across blocks, in the order they run (after the blocks above, before "
        "`learning`):\n\n",
        f);
  for (size_t i = 0; i < scn_nblocks; i++)
    if (!scn_blocks[i]->key) fprintf(f, "- %s\n", scn_blocks[i]->doc);
  fputc('\n', f);
}

static void opt_default(FILE *f, const sim_regime_opt *o) {
  switch (o->type) {
    case SIM_OPT_UINT:
    case SIM_OPT_NUM: bound(f, o->def); break;
    case SIM_OPT_CHOICE: fprintf(f, "`%s`", o->def_choice ? o->def_choice : o->choices[0]); break;
    case SIM_OPT_CUSTOM: fputs("see meaning", f); break;
  }
}

static void opt_range(FILE *f, const sim_regime_opt *o) {
  switch (o->type) {
    case SIM_OPT_UINT:
      fputs("integer in [", f);
      bound(f, o->lo);
      fputs(", ", f);
      bound(f, o->hi);
      fputc(']', f);
      break;
    case SIM_OPT_NUM:
      if (isinf(o->hi)) {
        fprintf(f, "number %s ", o->bounds & SIM_OPT_LO_OPEN ? ">" : ">=");
        bound(f, o->lo);
      } else {
        fprintf(f, "number in %c", o->bounds & SIM_OPT_LO_OPEN ? '(' : '[');
        bound(f, o->lo);
        fputs(", ", f);
        bound(f, o->hi);
        fputc(o->bounds & SIM_OPT_HI_OPEN ? ')' : ']', f);
      }
      break;
    case SIM_OPT_CHOICE:
      fputs("one of ", f);
      key_list(f, o->choices);
      break;
    case SIM_OPT_CUSTOM: fputs("see meaning", f); break;
  }
}

static void print_regimes(FILE *f) {
  fputs("## Regimes (`regime.kind`)\n\n"
        "Each regime's options come from its option table. A default may depend on the "
        "scenario (the meaning says how); an option that does not apply to the other "
        "options' values is refused.\n\n",
        f);
  for (size_t i = 0; i < sim_regime_count(); i++) {
    const sim_regime *rg = sim_regime_at(i);
    fprintf(f, "### `%s`\n\n%s.\n\n", rg->name, rg->summary);
    if (!rg->nopts) {
      fputs("No options.\n\n", f);
      continue;
    }
    fputs("| key | default | type, range | meaning |\n|---|---|---|---|\n", f);
    for (size_t k = 0; k < rg->nopts; k++) {
      const sim_regime_opt *o = &rg->opts[k];
      fprintf(f, "| `%s` | ", o->key);
      opt_default(f, o);
      fputs(" | ", f);
      opt_range(f, o);
      fputs(" | ", f);
      hs_md_cell(f, o->doc);
      fputs(" |\n", f);
    }
    fputc('\n', f);
  }
}

typedef struct policy_row {
  FILE *f;
  const hs_policy_config *cfg;
} policy_row;

static void policy_key(const char *key, const char *value_text, void *ud) {
  const policy_row *p = ud;
  if (!strcmp(key, "steps_per_round")) return; /* the regime's (regime.steps_per_round) */
  uint64_t u;
  hs_error e = {0};
  const char *type = hs_policy_config_get_uint(p->cfg, key, &u, &e) == HS_OK ? "integer" : "number";
  const char *doc = hs_policy_key_doc(p->cfg->kind, key);
  fprintf(p->f, "| `%s` | %s | %s | ", key, !strcmp(key, "seed") ? "the scenario's seed" : value_text,
          type);
  hs_md_cell(p->f, doc);
  fputs(" |\n", p->f);
}

static void print_policies(FILE *f) {
  fputs("## Policies (`policy.kind`)\n\n"
        "Each policy's keys and defaults come from the policies library (the same that "
        "`hetsim replay --policies` lists); ranges are checked there and stated in the "
        "meaning.\n\n",
        f);
  for (size_t i = 0; i < hs_policy_count(); i++) {
    hs_policy_config cfg;
    hs_error e = {0};
    if (hs_policy_config_init(&cfg, hs_policy_name(i), &e) != HS_OK) continue;
    fprintf(f, "### `%s`\n\n%s.\n\n| key | default | type | meaning |\n|---|---|---|---|\n",
            hs_policy_name(i), hs_policy_summary(i));
    policy_row p = {f, &cfg};
    hs_policy_config_foreach(&cfg, policy_key, &p);
    fputc('\n', f);
  }
}

void hs_scenario_reference(FILE *f) {
  fputs("# Scenario keys\n\n"
        "<!-- generated by `hetsim reference scenario-keys`; do not edit: the "
        "reference-pages test compares it with the build's output -->\n\n"
        "Every key a scenario file may hold, printed from the tables the loader reads. "
        "`hetsim validate SCENARIO` prints a scenario with every default filled in.\n\n",
        f);
  print_blocks(f);
  print_regimes(f);
  print_policies(f);
}
