/* [sim/kernel/include/sim -> hetsim::sim; not installed]
 * hs_net.h: links and concurrent transfers on the event engine (fluid model,
 * max-min fair sharing).
 *
 * Units: bytes for sizes, bit/s for rates and bandwidths, seconds for time.
 * A scenario link spec gives megabits per second (1 Mbit = 1e6 bit, so
 * bandwidth_bps = bandwidth_mbps * HS_NET_BPS_PER_MBPS) and milliseconds.
 *
 * What a link spec means. A spec in network.links describes a link TYPE.
 *  - Every device gets its OWN instance of its access link. It is modelled as a
 *    per-flow rate cap (cap_bps): a device's transfer never goes faster than its
 *    access bandwidth, and devices on the same link type do not slow each other.
 *    The cap is per flow: two flows of one device at the same time are capped
 *    separately (add the device's link as a shared link if that matters).
 *  - SHARED links (the server's link, a silo fabric, a WAN) are single instances,
 *    added with hs_net_add_link; every flow that lists one shares its bandwidth.
 *    A shared link added with hs_net_add_link is HALF duplex: it carries
 *    traffic in both directions on one capacity. One added with
 *    hs_net_add_duplex_link is FULL duplex: two links of the same bandwidth and
 *    latency, one per direction (the index returned and the one
 *    hs_net_link_reverse gives), so max-min sharing holds per direction and an
 *    upload never slows a download. The caller picks a flow's direction by
 *    the index it lists.
 *
 * A flow is (bytes, cap_bps, latency_s, the set of shared links it crosses).
 *  - Path latency = latency_s (the access link's latency, or anything the caller
 *    adds) + the latency of every shared link crossed (a link listed twice counts
 *    once). The flow enters the fluid system after its path latency:
 *        completion = start + path latency + fluid transfer time.
 *  - In the fluid system, rates are max-min fair: progressive filling raises all
 *    flows' rates together; a flow stops rising when it reaches its cap or when
 *    one of its shared links is full. So a flow with a low cap leaves the rest of
 *    a link to the others (not an equal split). A flow with no shared link and
 *    no cap transfers in zero time.
 *  - Rates are recomputed whenever a flow enters the fluid system, completes or
 *    is cancelled, and only then (piecewise-constant rates between events).
 *
 * Events and callbacks. The network keeps ONE pending event on the engine, at
 * the earliest admission or completion, with priority 0 (hs_net_set_priority).
 * A zero-latency flow is admitted by that event at the current time, so its
 * rate reads 0 until the engine dispatches it (no simulated time passes).
 * on_done(eng, subject, arg) is called from within that event at the completion
 * time, after the network state is updated (a callback may start or cancel
 * transfers). Flows completing at the same simulated time call back in the
 * order of their hs_net_transfer calls. A flow whose callback is due can no
 * longer be cancelled (its id is already stale).
 *
 * Complexity: flows with equal (cap, shared-link set) form a class; all flows of
 * a class progress at the same rate, so each class keeps a virtual clock (bytes
 * sent per flow since the class last became non-empty) and a min-heap of its
 * flows' finishing virtual times. Max-min filling runs over the K active classes
 * and L shared links, not over flows: O(K log K + (K + L) * L) per rate update.
 * A transfer, admission, completion or cancel adds O(log K) work, and O(1) more
 * when the flows of a class finish in the order they entered (equal sizes, as
 * for a model every device sends), else O(log n). All admissions and
 * completions at one simulated time share one rate update.
 * Memory is O(flows + classes): about 60 bytes per flow in flight (net.c),
 * plus one interned (on_done, subject, class) triple per distinct triple in
 * use, so a distinct subject per flow costs up to ~40 bytes more per flow. Many
 * distinct caps (K ~ flows) make the rate update O(K) per event, so give
 * devices link TYPES, not per-device caps.
 *
 * Ownership: the network does not own the engine nor the callback subjects.
 * Destroy the network before its engine. Do not destroy it from a callback. */
#ifndef HS_NET_H
#define HS_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/hs_engine.h"

#define HS_NET_BPS_PER_MBPS 1e6 /* scenario bandwidth_mbps -> bit/s */
#define HS_NET_S_PER_MS 1e-3    /* scenario latency_ms -> s */

typedef struct hs_net hs_net;
typedef uint64_t hs_flow_id; /* 0 is "no flow" */

/* Counters, for tests and benchmarks (an open value type). */
typedef struct hs_net_stats {
  uint64_t flows_started;   /* transfers accepted */
  uint64_t flows_completed; /* on_done delivered (or due) */
  uint64_t flows_cancelled;
  uint64_t rate_updates;    /* max-min recomputations */
  uint64_t events;          /* network events dispatched by the engine */
  size_t flows_latent;      /* in their latency phase now */
  size_t flows_active;      /* in the fluid system now */
  size_t classes;           /* distinct (cap, link set) classes seen so far */
  size_t classes_active;    /* classes with at least one flow in the fluid system */
  size_t kinds;             /* distinct (on_done, subject, class) of pending or due flows */
  double bytes_delivered;   /* sum of bytes of completed flows */
  double bytes_cancelled;   /* bytes cancelled flows had sent before cancellation */
} hs_net_stats;

/* A network on `eng` with no shared link. Never NULL (allocation aborts). */
hs_net *hs_net_create(hs_engine *eng);
/* Frees the network and cancels its pending engine event; on_done callbacks of
 * unfinished flows never fire. NULL is a no-op. */
void hs_net_destroy(hs_net *net);

/* Priority of the network's engine event (default 0); takes effect at the next
 * (re)scheduling. Smaller runs first among events at the same time. */
void hs_net_set_priority(hs_net *net, int priority);

/* Add a shared link. Returns its index (0, 1, ... in order of addition), or
 * HS_EINVAL (negative) when bandwidth_bps is not > 0 (INFINITY is allowed) or
 * latency_s is not a finite value >= 0. `name` is copied; it may be NULL. */
int hs_net_add_link(hs_net *net, const char *name, double bandwidth_bps, double latency_s);
/* Add a full-duplex shared link: two capacities of bandwidth_bps, one per
 * direction, both with latency latency_s. Returns the index of the forward
 * direction (the reverse is the next index, as hs_net_link_reverse says), or
 * HS_EINVAL as hs_net_add_link. Both directions carry `name`; find gives the
 * forward one. */
int hs_net_add_duplex_link(hs_net *net, const char *name, double bandwidth_bps,
                           double latency_s);
/* The link carrying `link`'s other direction: `link` itself for a half-duplex
 * link. A full-duplex link's two indices name each other. */
int hs_net_link_reverse(const hs_net *net, int link);
/* Links in the network, counting each direction of a full-duplex link. */
size_t hs_net_link_count(const hs_net *net);
/* Index of the first link with this name, or HS_ENOENT (negative). */
int hs_net_link_find(const hs_net *net, const char *name);
double hs_net_link_bandwidth_bps(const hs_net *net, int link);
double hs_net_link_latency_s(const hs_net *net, int link);
/* Sum of the current rates of the flows crossing the link (<= its bandwidth). */
double hs_net_link_load_bps(const hs_net *net, int link);
/* Bytes the link has carried from creation up to now (all flows crossing it). */
double hs_net_link_bytes(const hs_net *net, int link);

/* Start a transfer of `bytes` (finite, >= 0) now. cap_bps > 0 is the per-flow cap
 * (the device's access bandwidth; INFINITY for none). latency_s (finite, >= 0) is
 * added to the latencies of the shared links crossed. shared_links holds nlinks
 * link indices (may be NULL when nlinks is 0; duplicates count once).
 * on_done (may be NULL) is called as on_done(eng, subject, arg) at completion.
 * Returns the flow's id, valid until the flow completes or is cancelled, or 0
 * (and nothing starts) when an argument is out of range. */
hs_flow_id hs_net_transfer(hs_net *net, double bytes, double cap_bps, double latency_s,
                           const int *shared_links, size_t nlinks, hs_event_fn on_done,
                           void *subject, uint64_t arg);
/* Stop a pending flow now; its on_done never fires; the other flows' rates are
 * recomputed at once. False when the id is 0 or stale. */
bool hs_net_cancel(hs_net *net, hs_flow_id flow);

/* Current rate of the flow in bit/s: 0 while in its latency phase (or not
 * admitted yet) and for stale ids. */
double hs_net_flow_rate(const hs_net *net, hs_flow_id flow);
/* Bytes the flow still has to send now (all of them during the latency phase);
 * NAN for a stale id. */
double hs_net_flow_remaining_bytes(const hs_net *net, hs_flow_id flow);
/* True while the flow is pending (latency phase or fluid system). */
bool hs_net_flow_pending(const hs_net *net, hs_flow_id flow);

void hs_net_get_stats(const hs_net *net, hs_net_stats *out);

#endif
