/* json.c: the strict JSON reader/writer's case. */
#include "cases.h"

/* ------------------------------------------------------------------- JSON */
PROBE_CASE_FN(json, json) {
  (void)tmp;
  const char *t = "{\"a\": [1, 2.50, -3e2], \"s\": \"x\\u00e9\\n\", \"b\": true, \"n\": null, \"o\": {}}";
  hs_error e = {HS_OK, ""};
  probe_json *j = probe_json_parse(t, strlen(t), &e);
  CHECK(j, "valid JSON rejected: %s", e.msg);
  probe_json *a = probe_json_get(j, "a");
  bool ok = a && a->n == 3 && a->kids[2]->num == -300 && strcmp(a->kids[1]->str, "2.50") == 0 &&
            strcmp(probe_json_get(j, "s")->str, "x\xc3\xa9\n") == 0;
  char *w = probe_json_write(j);
  probe_json *j2 = probe_json_parse(w, strlen(w), &e);
  ok = ok && j2 && strstr(w, "2.50") && strstr(w, "\\u000a");
  probe_json_destroy(j2);
  free(w);
  probe_json_destroy(j);
  CHECK(ok, "values or round trip wrong");
  static const struct {
    const char *text, *want;
  } bad[] = {{"{\"a\": 1,}", "offset 8: trailing comma"},   {"{\"a\": 1, \"a\": 2}", "offset 9: duplicate key"},
             {"// c\n{}", "offset 0"},                        {"[1, 2] x", "offset 7: text after"},
             {"{\"a\": 01}", "offset"},                       {"{\"a\": NaN}", "offset 6"},
             {"\"abc", "unterminated"}};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    probe_json *x = probe_json_parse(bad[k].text, strlen(bad[k].text), &e);
    probe_json_destroy(x);
    CHECK(!x && strstr(e.msg, bad[k].want), "\"%s\": got \"%s\", want \"%s\"", bad[k].text, x ? "accepted" : e.msg,
          bad[k].want);
  }
  return true;
}
