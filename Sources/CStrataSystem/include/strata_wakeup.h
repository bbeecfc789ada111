// A wake-up word for group commit: one futex that any number of threads sleep on and one call
// wakes them all (a semaphore per thread would take a system call, and usually a preemption of
// the waking thread, per thread woken). Swift cannot call the variadic `syscall`, hence C.
#ifndef STRATA_WAKEUP_H
#define STRATA_WAKEUP_H

#include <stdint.h>

/// Zero-initialized. `sequence` changes at every `strata_wakeup_all`; `waiters` counts threads
/// between `strata_wakeup_prepare` and `strata_wakeup_finish`.
typedef struct {
    uint32_t sequence;
    uint32_t waiters;
} strata_wakeup_word;

/// Announces a waiter and returns the sequence it must sleep on. The caller then checks its
/// condition and, if it does not hold, calls `strata_wakeup_wait` with this value; in every case
/// it calls `strata_wakeup_finish` afterwards. A `strata_wakeup_all` made after this call (by a
/// thread that had made the condition true first) either changes the sequence before the wait
/// (which then returns at once) or wakes it.
uint32_t strata_wakeup_prepare(strata_wakeup_word *word);

/// Sleeps (no spinning) until the sequence differs from `seen` or the thread is woken; may return
/// spuriously (signals), so callers re-check their condition.
void strata_wakeup_wait(strata_wakeup_word *word, uint32_t seen);

/// Ends a waiter's `strata_wakeup_prepare`.
void strata_wakeup_finish(strata_wakeup_word *word);

/// Advances the sequence and wakes every sleeping waiter with one system call (none when no thread
/// is between prepare and finish).
void strata_wakeup_all(strata_wakeup_word *word);

#endif
