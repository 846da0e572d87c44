/* text.c: the aclImdb text reader's case (tokenising, the folder layout). */
#include "cases.h"

/* ------------------------------------------------------------------ text */
PROBE_CASE_FN(text, tokenize_and_load) {
  uint32_t ids[16];
  size_t n = lrn_tokenize("Great film!<br /><br />GREAT, isn't it?", ids, 16);
  CHECK(n == 5 && ids[0] == ids[2], "tokens: %zu (want 5, great == GREAT)", n);
  CHECK(probe_put(tmp, "aclImdb/train/pos/0_9.txt", "A wonderful movie.") &&
            probe_put(tmp, "aclImdb/train/pos/1_8.txt", "Loved it.") &&
            probe_put(tmp, "aclImdb/train/neg/0_2.txt", "Awful.<br />Boring.") &&
            probe_put(tmp, "aclImdb/train/neg/1_1.txt", "A waste of time."),
        "cannot write corpus");
  char *dir = probe_cs_path(tmp, "aclImdb/train");
  lrn_docs d;
  hs_error e = {HS_OK, ""};
  hs_status st = lrn_docs_load(dir, 0, &d, &e);
  bool ok = st == HS_OK && d.n == 4 && d.label[0] == 1 && d.label[1] == 0 && d.len[0] == 3 && d.len[1] == 2;
  lrn_docs_fini(&d);
  CHECK(ok, "aclImdb load: %d \"%s\"", st, e.msg);
  probe_put_bin(tmp, "aclImdb/train/neg/2_3.txt", "bad \xff byte", 10);
  st = lrn_docs_load(dir, 0, &d, &e);
  CHECK(st == HS_EPARSE && strstr(e.msg, "2_3.txt") && strstr(e.msg, "offset 4"), "bad UTF-8: \"%s\"", e.msg);
  free(dir);
  dir = probe_cs_path(tmp, "nowhere");
  st = lrn_docs_load(dir, 0, &d, &e);
  free(dir);
  CHECK(st == HS_ENOENT && strstr(e.msg, "nowhere/pos"), "missing corpus: \"%s\"", e.msg);
  return true;
}
