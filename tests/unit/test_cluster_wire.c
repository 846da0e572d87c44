/* test_cluster_wire.c: the cluster runtime's wire protocol (wire.c): framing
 * round trip, a wrong version, a foreign peer, truncated and oversized
 * messages, a peer that stalls (the timeout fires, within bounds), a peer
 * that vanished (an error, not SIGPIPE), key=value fields and the loopback
 * rule. Both ends are a socketpair: the same non-blocking code paths as TCP. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe_cluster.h"

static void pair(int sv[2]) {
  cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  probe_sock_prepare(sv[0]);
  probe_sock_prepare(sv[1]);
}

Test(cluster_wire, round_trip) {
  int sv[2];
  pair(sv);
  hs_error err = {HS_OK, ""};
  float model[1000];
  for (int i = 0; i < 1000; i++) model[i] = (float)i * 0.5f;
  cr_assert_eq(probe_wire_send(sv[0], PROBE_MSG_ROUND, "round=3\nsamples=17\n", model, sizeof model, 1, &err),
               PROBE_WIRE_OK, "%s", err.msg);
  probe_msg m;
  cr_assert_eq(probe_wire_recv(sv[1], sizeof model, 1, 1, &m, &err), PROBE_WIRE_OK, "%s", err.msg);
  cr_expect_eq(m.type, PROBE_MSG_ROUND);
  cr_expect_str_eq(m.text, "round=3\nsamples=17\n");
  cr_expect_eq(m.bin_len, sizeof model);
  cr_expect_eq(memcmp(m.bin, model, sizeof model), 0);
  double r = 0, n = 0;
  cr_expect_eq(probe_kv_num(m.text, "round", &r, &err), HS_OK);
  cr_expect_eq(probe_kv_num(m.text, "samples", &n, &err), HS_OK);
  cr_expect(r == 3 && n == 17);
  cr_expect_eq(probe_kv_num(m.text, "absent", &r, &err), HS_EMISSING);
  probe_msg_fini(&m);
  /* an empty message */
  cr_assert_eq(probe_wire_send(sv[1], PROBE_MSG_BYE, NULL, NULL, 0, 1, &err), PROBE_WIRE_OK);
  cr_assert_eq(probe_wire_recv(sv[0], 0, 1, 1, &m, &err), PROBE_WIRE_OK, "%s", err.msg);
  cr_expect(m.type == PROBE_MSG_BYE && m.text_len == 0 && m.bin_len == 0);
  probe_msg_fini(&m);
  close(sv[0]);
  close(sv[1]);
}

Test(cluster_wire, header_layout) {
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, 1, PROBE_MSG_RESULT, 0x0102, 0x03040506);
  const unsigned char want[16] = {'H', 'S', 'P', 'C', 1, 0, 5, 0, 0x02, 0x01, 0, 0, 0x06, 0x05, 0x04, 0x03};
  cr_expect_eq(memcmp(h, want, 16), 0, "the header is little-endian: magic, version, type, text, binary");
}

/* Write raw bytes from one end, receive at the other: the end and the message. */
static probe_wire_end raw(const void *bytes, size_t n, bool close_after, size_t bin_max, double timeout,
                          hs_error *err) {
  int sv[2];
  pair(sv);
  cr_assert_eq(write(sv[0], bytes, n), (ssize_t)n);
  if (close_after) close(sv[0]);
  probe_msg m;
  probe_wire_end e = probe_wire_recv(sv[1], bin_max, timeout, timeout, &m, err);
  if (e == PROBE_WIRE_OK) probe_msg_fini(&m);
  if (!close_after) close(sv[0]);
  close(sv[1]);
  return e;
}

Test(cluster_wire, wrong_version) {
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, PROBE_WIRE_VERSION + 1, PROBE_MSG_HELLO, 0, 0);
  hs_error err = {HS_OK, ""};
  cr_expect_eq(raw(h, sizeof h, false, 0, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "version 3") && strstr(err.msg, "version 2"), "%s", err.msg);
}

Test(cluster_wire, foreign_peer_and_unknown_type) {
  hs_error err = {HS_OK, ""};
  cr_expect_eq(raw("GET / HTTP/1.1\r\n", 16, false, 0, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "not a hetsim-probe peer"), "%s", err.msg);
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, PROBE_WIRE_VERSION, (probe_msg_type)99, 0, 0);
  cr_expect_eq(raw(h, sizeof h, false, 0, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "unknown message type 99"), "%s", err.msg);
}

Test(cluster_wire, oversized) {
  unsigned char h[PROBE_WIRE_HEADER];
  hs_error err = {HS_OK, ""};
  probe_wire_header(h, PROBE_WIRE_VERSION, PROBE_MSG_RESULT, 10, 1001);
  cr_expect_eq(raw(h, sizeof h, false, 1000, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "too large") && strstr(err.msg, "1001") && strstr(err.msg, "limit 1000"), "%s", err.msg);
  probe_wire_header(h, PROBE_WIRE_VERSION, PROBE_MSG_HELLO, PROBE_WIRE_TEXT_MAX + 1, 0);
  cr_expect_eq(raw(h, sizeof h, false, 0, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "too large"), "%s", err.msg);
}

Test(cluster_wire, truncated) {
  unsigned char buf[PROBE_WIRE_HEADER + 10];
  probe_wire_header(buf, PROBE_WIRE_VERSION, PROBE_MSG_HELLO, 100, 0);
  memset(buf + PROBE_WIRE_HEADER, 'x', 10);
  hs_error err = {HS_OK, ""};
  cr_expect_eq(raw(buf, sizeof buf, true, 0, 1, &err), PROBE_WIRE_CLOSED);
  cr_expect(strstr(err.msg, "10 of the 100 body bytes") && strstr(err.msg, "truncated"), "%s", err.msg);
  /* half a header */
  cr_expect_eq(raw(buf, 7, true, 0, 1, &err), PROBE_WIRE_CLOSED);
  cr_expect(strstr(err.msg, "7 of the 16 header bytes"), "%s", err.msg);
  /* nothing at all: closed cleanly between messages */
  cr_expect_eq(raw(buf, 0, true, 0, 1, &err), PROBE_WIRE_CLOSED);
  cr_expect(strstr(err.msg, "waiting for a message"), "%s", err.msg);
}

Test(cluster_wire, stalled_peer_times_out) {
  hs_error err = {HS_OK, ""};
  double t0 = probe_now_mono();
  cr_expect_eq(raw("", 0, false, 0, 0.3, &err), PROBE_WIRE_TIMEOUT);
  double dt = probe_now_mono() - t0;
  cr_expect(dt >= 0.3 && dt < 1.5, "waited %g s for a 0.3 s timeout", dt);
  cr_expect(strstr(err.msg, "timed out"), "%s", err.msg);
  /* a header, then silence: the body's timeout */
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, PROBE_WIRE_VERSION, PROBE_MSG_RESULT, 5, 0);
  t0 = probe_now_mono();
  cr_expect_eq(raw(h, sizeof h, false, 0, 0.2, &err), PROBE_WIRE_TIMEOUT);
  dt = probe_now_mono() - t0;
  cr_expect(dt >= 0.2 && dt < 1.5, "waited %g s", dt);
  cr_expect(strstr(err.msg, "reading a RESULT message"), "%s", err.msg);
}

Test(cluster_wire, send_to_a_vanished_peer) {
  int sv[2];
  pair(sv);
  close(sv[1]);
  static unsigned char big[1 << 20];
  hs_error err = {HS_OK, ""};
  probe_wire_end e = probe_wire_send(sv[0], PROBE_MSG_RESULT, "x=1\n", big, sizeof big, 1, &err);
  cr_expect_eq(e, PROBE_WIRE_CLOSED, "%s", err.msg); /* and the process is still here: no SIGPIPE */
  close(sv[0]);
}

Test(cluster_wire, send_to_a_peer_that_never_reads) {
  int sv[2];
  pair(sv);
  static unsigned char big[8 << 20];
  hs_error err = {HS_OK, ""};
  double t0 = probe_now_mono();
  cr_expect_eq(probe_wire_send(sv[0], PROBE_MSG_ROUND, NULL, big, sizeof big, 0.3, &err), PROBE_WIRE_TIMEOUT);
  cr_expect(probe_now_mono() - t0 < 1.5);
  cr_expect(strstr(err.msg, "timed out while sending a ROUND"), "%s", err.msg);
  close(sv[0]);
  close(sv[1]);
}

Test(cluster_wire, loopback_only) {
  uint32_t a;
  hs_error err = {HS_OK, ""};
  cr_expect_eq(probe_loopback_addr("127.0.0.1", &a, &err), HS_OK);
  cr_expect_eq(probe_loopback_addr("127.9.8.7", &a, &err), HS_OK);
  cr_expect_eq(probe_loopback_addr("10.0.0.1", &a, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "not a loopback address"), "%s", err.msg);
  cr_expect_eq(probe_loopback_addr("localhost", &a, &err), HS_EINVAL);
  cr_expect_eq(probe_loopback_addr("0.0.0.0", &a, &err), HS_EINVAL);
  cr_expect_lt(probe_listen(0, 0, NULL, &err), 0, "0.0.0.0 (every interface) is refused");
  cr_expect_lt(probe_connect(0x08080808u, 80, 0.1, &err), 0, "8.8.8.8 is refused without a packet sent");
  cr_expect(strstr(err.msg, "non-loopback"), "%s", err.msg);
}

Test(cluster_wire, kv_lines) {
  char *s = NULL;
  size_t l = 0;
  probe_kv_add(&s, &l, "name", "%s", "rpi4-0");
  probe_kv_add(&s, &l, "reason", "%s", "two\nlines");
  cr_expect_str_eq(s, "name=rpi4-0\nreason=two lines\n");
  char buf[8];
  cr_expect(probe_kv_get(s, "name", buf, sizeof buf));
  cr_expect_str_eq(buf, "rpi4-0");
  cr_expect(!probe_kv_get(s, "nam", buf, sizeof buf), "a prefix of a key is not the key");
  hs_error err = {HS_OK, ""};
  double v;
  cr_expect_eq(probe_kv_num(s, "name", &v, &err), HS_EINVAL);
  free(s);
}

/* ddp's messages (version 2): a STEP with and without the reduced gradient,
 * a GRAD with its gradient and a final GRAD without; their names; a GRAD
 * larger than the receiver's model size is refused from its header; a GRAD
 * cut short is reported with how much had arrived. */
Test(cluster_wire, ddp_messages) {
  cr_expect_str_eq(probe_msg_name(PROBE_MSG_STEP), "STEP");
  cr_expect_str_eq(probe_msg_name(PROBE_MSG_GRAD), "GRAD");
  int sv[2];
  pair(sv);
  hs_error err = {HS_OK, ""};
  float g[256];
  for (int i = 0; i < 256; i++) g[i] = (float)(i - 128) * 0.25f;
  cr_assert_eq(probe_wire_send(sv[0], PROBE_MSG_STEP, "round=1\nstep=2\nsamples=9\nfinal=0\n", NULL, 0, 1, &err),
               PROBE_WIRE_OK, "%s", err.msg);
  cr_assert_eq(probe_wire_send(sv[0], PROBE_MSG_STEP, "round=1\nstep=3\nsamples=9\nfinal=0\n", g, sizeof g, 1, &err),
               PROBE_WIRE_OK, "%s", err.msg);
  probe_msg m;
  cr_assert_eq(probe_wire_recv(sv[1], sizeof g, 1, 1, &m, &err), PROBE_WIRE_OK, "%s", err.msg);
  cr_expect(m.type == PROBE_MSG_STEP && m.bin_len == 0);
  probe_msg_fini(&m);
  cr_assert_eq(probe_wire_recv(sv[1], sizeof g, 1, 1, &m, &err), PROBE_WIRE_OK, "%s", err.msg);
  double step = 0;
  cr_expect(m.type == PROBE_MSG_STEP && m.bin_len == sizeof g && !memcmp(m.bin, g, sizeof g));
  cr_expect(probe_kv_num(m.text, "step", &step, &err) == HS_OK && step == 3);
  probe_msg_fini(&m);
  cr_assert_eq(probe_wire_send(sv[1], PROBE_MSG_GRAD, "round=1\nstep=3\nhash=00000000000000ff\n", g, sizeof g, 1, &err),
               PROBE_WIRE_OK);
  cr_assert_eq(probe_wire_recv(sv[0], sizeof g, 1, 1, &m, &err), PROBE_WIRE_OK, "%s", err.msg);
  char h[32];
  cr_expect(m.type == PROBE_MSG_GRAD && m.bin_len == sizeof g && probe_kv_get(m.text, "hash", h, sizeof h) &&
            !strcmp(h, "00000000000000ff"));
  probe_msg_fini(&m);
  /* a gradient larger than the model the receiver expects */
  cr_assert_eq(probe_wire_send(sv[1], PROBE_MSG_GRAD, "round=1\n", g, sizeof g, 1, &err), PROBE_WIRE_OK);
  cr_expect_eq(probe_wire_recv(sv[0], sizeof g - 4, 1, 1, &m, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "GRAD message too large") && strstr(err.msg, "1024 binary bytes"), "%s", err.msg);
  close(sv[0]);
  close(sv[1]);
  /* a GRAD cut short in its gradient */
  unsigned char buf[PROBE_WIRE_HEADER + 4 + 100];
  probe_wire_header(buf, PROBE_WIRE_VERSION, PROBE_MSG_GRAD, 4, 1024);
  memcpy(buf + PROBE_WIRE_HEADER, "a=1\n", 4);
  memset(buf + PROBE_WIRE_HEADER + 4, 0, 100);
  cr_expect_eq(raw(buf, sizeof buf, true, 1024, 1, &err), PROBE_WIRE_CLOSED);
  cr_expect(strstr(err.msg, "GRAD") && strstr(err.msg, "truncated"), "%s", err.msg);
  /* a version-1 peer (no STEP/GRAD) is refused at its first message */
  probe_wire_header(buf, 1, PROBE_MSG_HELLO, 0, 0);
  cr_expect_eq(raw(buf, PROBE_WIRE_HEADER, false, 0, 1, &err), PROBE_WIRE_PROTOCOL);
  cr_expect(strstr(err.msg, "version 1"), "%s", err.msg);
}

/* FNV-1a 64: the published values of "" and "a". */
Test(cluster_wire, model_hash_known_answers) {
  cr_expect_eq(probe_model_hash("", 0), 0xcbf29ce484222325ull);
  cr_expect_eq(probe_model_hash("a", 1), 0xaf63dc4c8601ec8cull);
  float x[2] = {1.0f, 2.0f}, y[2] = {1.0f, 2.0000002f};
  cr_expect_neq(probe_model_hash(x, sizeof x), probe_model_hash(y, sizeof y), "one ulp changes the hash");
}
