/* [sim/kernel/include/sim -> hetsim::sim; not installed]
 * hs_engine.h: the discrete-event engine.
 *
 * Total order of pending events (the contract every regime relies on):
 *   1. time ascending (simulated seconds, double),
 *   2. then priority ascending (smaller runs first; priorities lie in
 *      [-32768, 32767], asserted),
 *   3. then insertion sequence ascending (FIFO among exact ties).
 * A reschedule counts as a new insertion for rule 3. Ties never depend on
 * pointers, hashing or thread timing.
 *
 * Handles: hs_engine_schedule (and _apart, _in) returns an hs_event_id (never
 * 0) that stays valid until the event fires or is cancelled; afterwards it is stale and cancel /
 * reschedule on it return false (slots carry a generation, so a stale id never
 * names a newer event). Cancel is O(1) (lazy: the entry is dropped when it
 * reaches the top, or by an O(n) compaction when dead entries outnumber live
 * ones). Schedule, reschedule and dispatch cost O(1) amortized plus O(log b),
 * b the events of the current time slice (a calendar queue, sim/kernel/evq.c);
 * O(log n) when all n pending events share one instant. hs_engine_post
 * returns no id: such an event cannot be cancelled or moved, and costs less:
 * posts made between two looks at the next event (a handler's burst) are
 * sorted once into a run (O(1) per event per 8 bits of the burst's time
 * span, a few passes) and then dispatched in O(1) each, without entering the
 * queue; small bursts (see hs_engine_set_run_min) go into the queue with a
 * 16-byte record instead of a 36-byte slot.
 *
 * Scheduling before now() is a programming error and asserts.
 * The engine never reads the wall clock. It owns nothing of the subjects. */
#ifndef HS_ENGINE_H
#define HS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hs_engine hs_engine;
typedef uint64_t hs_event_id; /* 0 is "no event" */

/* Called when an event fires: the engine, the subject given at schedule time,
 * and a free 64-bit argument. Handlers may schedule, cancel and stop. */
typedef void (*hs_event_fn)(hs_engine *eng, void *subject, uint64_t arg);

/* capacity_hint: expected number of pending events (0 for a default). */
hs_engine *hs_engine_create(size_t capacity_hint);
void hs_engine_destroy(hs_engine *eng);

double hs_engine_now(const hs_engine *eng);
size_t hs_engine_pending(const hs_engine *eng);
uint64_t hs_engine_fired(const hs_engine *eng); /* events dispatched so far */

hs_event_id hs_engine_schedule(hs_engine *eng, double time, int priority, hs_event_fn fn,
                               void *subject, uint64_t arg);
/* Same, for an event that is moved often (the network's next-event timer):
 * held apart from the queue, in one of a handful of places, so that a
 * reschedule only rewrites its key and the queue holds no entry for it.
 * Everything else is as for hs_engine_schedule: the order (it draws its
 * insertion sequence from the same counter), the id's rules, cancel,
 * reschedule, event_time, pending and fired. When those places are taken, it
 * is hs_engine_schedule. */
hs_event_id hs_engine_schedule_apart(hs_engine *eng, double time, int priority, hs_event_fn fn,
                                     void *subject, uint64_t arg);
/* Same as hs_engine_schedule, for an event nobody will cancel, move or ask
 * about (a compute phase's end, scheduled by the million): no id; 24 bytes
 * of engine memory while pending in a run (and 24 more per event of a burst
 * while it is sorted), 16 plus the queue's entry otherwise, instead of 36.
 * Same order (its insertion sequence comes from the same counter), counted
 * in pending and fired. Bursts are cheapest when one priority is used: a
 * post of another priority ends the burst collected so far. */
void hs_engine_post(hs_engine *eng, double time, int priority, hs_event_fn fn, void *subject,
                    uint64_t arg);
/* Tuning (tests, benchmarks): posts collected between two looks at the next
 * event are sorted into a run of their own when at least n (default 2048,
 * n = 0 counts as 1), else go into the queue one by one. Never changes the
 * order, only its cost. */
void hs_engine_set_run_min(hs_engine *eng, size_t n);
/* hs_engine_schedule at now() + delay (delay >= 0). */
hs_event_id hs_engine_schedule_in(hs_engine *eng, double delay, int priority, hs_event_fn fn,
                                  void *subject, uint64_t arg);
/* hs_engine_post at now() + delay (delay >= 0). */
void hs_engine_post_in(hs_engine *eng, double delay, int priority, hs_event_fn fn, void *subject,
                       uint64_t arg);
/* Remove a pending event; false when the id is stale or 0. */
bool hs_engine_cancel(hs_engine *eng, hs_event_id id);
/* Move a pending event to a new time (>= now()); keeps its priority, takes a new
 * insertion sequence. False when the id is stale. */
bool hs_engine_reschedule(hs_engine *eng, hs_event_id id, double new_time);
/* Time of a pending event; NAN when stale. */
double hs_engine_event_time(const hs_engine *eng, hs_event_id id);
/* Time of the earliest pending event; INFINITY when none. (Not const: it may
 * drop cancelled entries from the top of the queue.) */
double hs_engine_peek_time(hs_engine *eng);

/* Dispatch events until none is pending or a handler calls hs_engine_stop.
 * Returns the number dispatched by this call. */
uint64_t hs_engine_run(hs_engine *eng);
/* Dispatch every event with time <= t_end (unless stopped), then set now() to
 * t_end if the engine was not stopped and t_end is finite. */
uint64_t hs_engine_run_until(hs_engine *eng, double t_end);
/* Dispatch at most one event; false when none is pending. */
bool hs_engine_step(hs_engine *eng);
/* Ask run/run_until to return after the current handler. Cleared on next run. */
void hs_engine_stop(hs_engine *eng);
bool hs_engine_stopped(const hs_engine *eng);

#endif
