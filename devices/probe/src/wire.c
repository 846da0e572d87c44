/* wire.c: the cluster runtime's wire protocol (probe_cluster.h): framing of
 * one message over a TCP stream, "key=value" text fields, loopback sockets.
 *
 * Invariants: a message is read only after its header checked out (magic,
 * version, a known type, text <= PROBE_WIRE_TEXT_MAX, binary <= the
 * receiver's limit), so a foreign or oversized message costs 16 bytes and
 * one line; every wait is a poll() with a deadline, in slices of at most
 * 100 ms so a stop request is seen; a short read at any point is reported
 * with how much of which message had arrived. Sockets are non-blocking after
 * connect/accept (writes never block past the deadline). MSG_NOSIGNAL: a
 * peer that vanished is an error return, never a SIGPIPE.
 * Rejected: SO_RCVTIMEO alone (a timeout per call, not per message, and no
 * way to see a stop request); a length-prefixed JSON body (a model of 0.4 MB
 * as text is 1 MB and slow to parse on a small board). */
#include "probe_cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t wire_stop;
void probe_wire_request_stop(void) { wire_stop = 1; }
bool probe_wire_stopped(void) { return wire_stop != 0; }

static const char *const MSG_NAMES[PROBE_MSG_MAX_] = {NULL, "HELLO", "WELCOME", "READY", "ROUND",
                                                      "RESULT", "BYE", "ERROR", "STEP", "GRAD"};
const char *probe_msg_name(probe_msg_type t) {
  static _Thread_local char buf[32];
  if (t > 0 && t < PROBE_MSG_MAX_) return MSG_NAMES[t];
  snprintf(buf, sizeof buf, "message type %u", (unsigned)t);
  return buf;
}

uint64_t probe_model_hash(const void *p, size_t n) {
  const unsigned char *c = p;
  uint64_t h = 14695981039346656037ull;
  for (size_t k = 0; k < n; k++) {
    h ^= c[k];
    h *= 1099511628211ull;
  }
  return h;
}

void probe_msg_fini(probe_msg *m) {
  free(m->text);
  free(m->bin);
  memset(m, 0, sizeof *m);
}

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)(v & 0xff);
  p[1] = (unsigned char)((v >> 8) & 0xff);
}
static void put32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static unsigned get16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }
static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void probe_wire_header(unsigned char h[PROBE_WIRE_HEADER], unsigned version, probe_msg_type t, size_t text_len,
                       size_t bin_len) {
  memcpy(h, "HSPC", 4);
  put16(h + 4, version);
  put16(h + 6, (unsigned)t);
  put32(h + 8, (uint32_t)text_len);
  put32(h + 12, (uint32_t)bin_len);
}

/* Wait until fd is ready for `events` or the deadline passes. */
static probe_wire_end wait_fd(int fd, short events, double deadline, const char *what, hs_error *err) {
  for (;;) {
    if (wire_stop) {
      hs_error_set(err, HS_EIO, "stopped (signal) while %s", what);
      return PROBE_WIRE_STOPPED;
    }
    double left = deadline - probe_now_mono();
    if (left <= 0) {
      hs_error_set(err, HS_EIO, "timed out while %s", what);
      return PROBE_WIRE_TIMEOUT;
    }
    int ms = left > 0.1 ? 100 : (int)ceil(left * 1000);
    struct pollfd pf = {fd, events, 0};
    int r = poll(&pf, 1, ms);
    if (r < 0 && errno != EINTR) {
      hs_error_set(err, HS_EIO, "poll failed while %s: %s", what, strerror(errno));
      return PROBE_WIRE_SYSTEM;
    }
    if (r > 0) return PROBE_WIRE_OK; /* ready, or an error/hangup the next call reports */
  }
}

static probe_wire_end send_all(int fd, const unsigned char *p, size_t n, double timeout_s, const char *what,
                               hs_error *err) {
  size_t done = 0;
  double deadline = probe_now_mono() + timeout_s;
  while (done < n) {
    ssize_t w = send(fd, p + done, n - done, MSG_NOSIGNAL);
    if (w > 0) {
      done += (size_t)w;
      deadline = probe_now_mono() + timeout_s; /* the timeout is on a stall, not on the whole */
      continue;
    }
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      probe_wire_end e = wait_fd(fd, POLLOUT, deadline, what, err);
      if (e != PROBE_WIRE_OK) return e;
      continue;
    }
    if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
      hs_error_set(err, HS_EIO, "connection closed by the peer while %s (%zu of %zu bytes sent)", what, done, n);
      return PROBE_WIRE_CLOSED;
    }
    hs_error_set(err, HS_EIO, "send failed while %s: %s", what, strerror(errno));
    return PROBE_WIRE_SYSTEM;
  }
  return PROBE_WIRE_OK;
}

probe_wire_end probe_wire_send(int fd, probe_msg_type t, const char *text, const void *bin, size_t bin_len,
                               double timeout_s, hs_error *err) {
  size_t tl = text ? strlen(text) : 0;
  if (tl > PROBE_WIRE_TEXT_MAX || bin_len > UINT32_MAX) {
    hs_error_set(err, HS_EINVAL, "%s message too large to send (%zu text, %zu binary bytes)", probe_msg_name(t), tl,
                 bin_len);
    return PROBE_WIRE_PROTOCOL;
  }
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, PROBE_WIRE_VERSION, t, tl, bin_len);
  char what[64];
  snprintf(what, sizeof what, "sending a %s message", probe_msg_name(t));
  probe_wire_end e = send_all(fd, h, sizeof h, timeout_s, what, err);
  if (e == PROBE_WIRE_OK && tl) e = send_all(fd, (const unsigned char *)text, tl, timeout_s, what, err);
  if (e == PROBE_WIRE_OK && bin_len) e = send_all(fd, bin, bin_len, timeout_s, what, err);
  return e;
}

/* Read exactly n bytes; *got says how many came. */
static probe_wire_end recv_all(int fd, unsigned char *p, size_t n, double first_timeout_s, double timeout_s,
                               const char *what, size_t *got, hs_error *err) {
  size_t done = 0;
  double deadline = probe_now_mono() + first_timeout_s;
  *got = 0;
  while (done < n) {
    ssize_t r = recv(fd, p + done, n - done, 0);
    if (r > 0) {
      done += (size_t)r;
      *got = done;
      deadline = probe_now_mono() + timeout_s;
      continue;
    }
    if (r == 0) {
      hs_error_set(err, HS_EIO, "connection closed by the peer while %s", what);
      return PROBE_WIRE_CLOSED;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      probe_wire_end e = wait_fd(fd, POLLIN, deadline, what, err);
      if (e != PROBE_WIRE_OK) return e;
      continue;
    }
    if (errno == ECONNRESET) {
      hs_error_set(err, HS_EIO, "connection reset by the peer while %s", what);
      return PROBE_WIRE_CLOSED;
    }
    hs_error_set(err, HS_EIO, "recv failed while %s: %s", what, strerror(errno));
    return PROBE_WIRE_SYSTEM;
  }
  return PROBE_WIRE_OK;
}

probe_wire_end probe_wire_recv(int fd, size_t bin_max, double first_timeout_s, double timeout_s, probe_msg *m,
                               hs_error *err) {
  memset(m, 0, sizeof *m);
  unsigned char h[PROBE_WIRE_HEADER];
  size_t got = 0;
  probe_wire_end e = recv_all(fd, h, 1, first_timeout_s, timeout_s, "waiting for a message", &got, err);
  if (e == PROBE_WIRE_OK) e = recv_all(fd, h + 1, sizeof h - 1, timeout_s, timeout_s, "reading a message header", &got, err);
  if (e != PROBE_WIRE_OK) {
    if (e == PROBE_WIRE_CLOSED && got > 0)
      hs_error_set(err, HS_EIO, "connection closed after %zu of the %d header bytes (truncated message)", got + 1,
                   PROBE_WIRE_HEADER);
    return e;
  }
  if (memcmp(h, "HSPC", 4) != 0) {
    hs_error_set(err, HS_EPARSE, "not a hetsim-probe peer (the message does not start with \"HSPC\")");
    return PROBE_WIRE_PROTOCOL;
  }
  unsigned v = get16(h + 4), t = get16(h + 6);
  size_t tl = get32(h + 8), bl = get32(h + 12);
  if (v != PROBE_WIRE_VERSION) {
    hs_error_set(err, HS_EINVAL, "the peer speaks protocol version %u, this hetsim-probe speaks version %d", v,
                 PROBE_WIRE_VERSION);
    return PROBE_WIRE_PROTOCOL;
  }
  if (t == 0 || t >= PROBE_MSG_MAX_) {
    hs_error_set(err, HS_EPARSE, "unknown message type %u", t);
    return PROBE_WIRE_PROTOCOL;
  }
  if (tl > PROBE_WIRE_TEXT_MAX || bl > bin_max) {
    hs_error_set(err, HS_ERANGE, "%s message too large: %zu text bytes (limit %u), %zu binary bytes (limit %zu)",
                 probe_msg_name((probe_msg_type)t), tl, PROBE_WIRE_TEXT_MAX, bl, bin_max);
    return PROBE_WIRE_PROTOCOL;
  }
  m->type = (probe_msg_type)t;
  m->text = hs_malloc(tl + 1);
  m->text_len = tl;
  m->bin = bl ? hs_malloc(bl) : NULL;
  m->bin_len = bl;
  char what[64];
  snprintf(what, sizeof what, "reading a %s message", probe_msg_name(m->type));
  e = recv_all(fd, (unsigned char *)m->text, tl, timeout_s, timeout_s, what, &got, err);
  size_t body = got;
  if (e == PROBE_WIRE_OK && bl) {
    e = recv_all(fd, m->bin, bl, timeout_s, timeout_s, what, &got, err);
    body = tl + got;
  }
  if (e != PROBE_WIRE_OK) {
    if (e == PROBE_WIRE_CLOSED)
      hs_error_set(err, HS_EIO, "connection closed after %zu of the %zu body bytes of a %s message (truncated)", body,
                   tl + bl, probe_msg_name(m->type));
    probe_msg_fini(m);
    return e;
  }
  m->text[tl] = '\0';
  if (memchr(m->text, '\0', tl)) {
    hs_error_set(err, HS_EPARSE, "%s message: a NUL byte in its text", probe_msg_name(m->type));
    probe_msg_fini(m);
    return PROBE_WIRE_PROTOCOL;
  }
  return PROBE_WIRE_OK;
}

/* --- key=value text ---------------------------------------------------------- */

bool probe_kv_get(const char *text, const char *key, char *buf, size_t cap) {
  size_t kl = strlen(key);
  for (const char *p = text; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t ll = eol ? (size_t)(eol - p) : strlen(p);
    if (ll > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
      size_t vl = ll - kl - 1;
      if (vl >= cap) vl = cap - 1;
      memcpy(buf, p + kl + 1, vl);
      buf[vl] = '\0';
      return true;
    }
    p = eol ? eol + 1 : NULL;
  }
  return false;
}

hs_status probe_kv_num(const char *text, const char *key, double *out, hs_error *err) {
  char buf[64];
  if (!probe_kv_get(text, key, buf, sizeof buf)) return hs_error_set(err, HS_EMISSING, "%s: missing", key);
  char *end;
  double v = strtod(buf, &end);
  if (end == buf || *end || !isfinite(v)) return hs_error_set(err, HS_EINVAL, "%s: \"%s\" is not a number", key, buf);
  *out = v;
  return HS_OK;
}

void probe_kv_add(char **s, size_t *len, const char *key, const char *fmt, ...) {
  char val[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  for (char *c = val; *c; c++)
    if (*c == '\n') *c = ' ';
  char *line = probe_xasprintf("%s=%s\n", key, val);
  size_t ll = strlen(line);
  *s = hs_realloc(*s, *len + ll + 1);
  memcpy(*s + *len, line, ll + 1);
  *len += ll;
  free(line);
}

/* --- loopback sockets ----------------------------------------------------------- */

hs_status probe_loopback_addr(const char *host, uint32_t *addr, hs_error *err) {
  struct in_addr a;
  if (!host || inet_pton(AF_INET, host, &a) != 1)
    return hs_error_set(err, HS_EINVAL, "\"%s\" is not an IPv4 address (only loopback 127.0.0.0/8 is allowed)",
                        host ? host : "");
  if ((ntohl(a.s_addr) >> 24) != 127)
    return hs_error_set(err, HS_EINVAL, "%s is not a loopback address: hetsim-probe's cluster runs on 127.0.0.0/8 only",
                        host);
  *addr = a.s_addr;
  return HS_OK;
}

void probe_sock_prepare(int fd) {
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int probe_listen(uint32_t addr, unsigned port, unsigned *bound, hs_error *err) {
  if ((ntohl(addr) >> 24) != 127) {
    hs_error_set(err, HS_EINVAL, "refusing to listen on a non-loopback address");
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    hs_error_set(err, HS_EIO, "socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {addr}};
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0) {
    hs_error_set(err, HS_EIO, "cannot listen on 127.x port %u: %s", port, strerror(errno));
    close(fd);
    return -1;
  }
  socklen_t sl = sizeof sa;
  getsockname(fd, (struct sockaddr *)&sa, &sl);
  if (bound) *bound = ntohs(sa.sin_port);
  probe_sock_prepare(fd);
  return fd;
}

int probe_connect(uint32_t addr, unsigned port, double timeout_s, hs_error *err) {
  if ((ntohl(addr) >> 24) != 127) {
    hs_error_set(err, HS_EINVAL, "refusing to connect to a non-loopback address");
    return -1;
  }
  double deadline = probe_now_mono() + timeout_s;
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      hs_error_set(err, HS_EIO, "socket: %s", strerror(errno));
      return -1;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {addr}};
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
      probe_sock_prepare(fd);
      return fd;
    }
    int e = errno;
    close(fd);
    if ((e != ECONNREFUSED && e != EINTR) || probe_now_mono() > deadline || wire_stop) {
      hs_error_set(err, HS_EIO, "cannot connect to port %u within %g s: %s", port, timeout_s,
                   wire_stop ? "stopped (signal)" : strerror(e));
      return -1;
    }
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}
