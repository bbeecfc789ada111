// What Strata needs from C: prctl is variadic, and Swift cannot call variadic C functions; Swift
// has no cache prefetch intrinsic; glibc declares sem_clockwait only for GNU sources. Everything
// else is Swift.
#ifndef STRATA_SYSTEM_H
#define STRATA_SYSTEM_H

#include <semaphore.h>

/// Sets the calling thread's timer slack (how late the kernel may wake a sleeping thread) in
/// nanoseconds. The change poller uses 1 µs instead of the default 50 µs so that its short sleeps
/// are short. Returns 0 on success, -1 with errno set on failure.
int strata_set_timer_slack(unsigned long nanoseconds);

/// Takes `semaphore`, waiting at most `nanoseconds` measured on the monotonic clock (so a step of
/// the wall clock neither shortens nor lengthens the wait). Returns 1 if it took it, 0 if the
/// time ran out. Interrupted waits resume until the same deadline.
int strata_semaphore_wait_monotonic(sem_t *semaphore, unsigned long long nanoseconds);

/// Asks the CPU to start loading the cache line holding `address`. Only a hint: it never faults
/// and changes no state, so it is safe on any address; batched tree lookups use it to overlap the
/// cache misses of several keys.
static inline void strata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
