#define _GNU_SOURCE
#include "strata_wakeup.h"
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// Sequentially consistent throughout: a waiter's increment of `waiters` precedes its load of
// `sequence`, and a waker's increment of `sequence` precedes its load of `waiters`, so either the
// waker sees the waiter (and wakes it) or the waiter sees the new sequence (and does not sleep).

uint32_t strata_wakeup_prepare(strata_wakeup_word *word) {
    __atomic_add_fetch(&word->waiters, 1, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&word->sequence, __ATOMIC_SEQ_CST);
}

void strata_wakeup_wait(strata_wakeup_word *word, uint32_t seen) {
    // EAGAIN (the sequence moved on) and EINTR both just return: the caller re-checks.
    syscall(SYS_futex, &word->sequence, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

void strata_wakeup_finish(strata_wakeup_word *word) {
    __atomic_sub_fetch(&word->waiters, 1, __ATOMIC_SEQ_CST);
}

void strata_wakeup_all(strata_wakeup_word *word) {
    __atomic_add_fetch(&word->sequence, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&word->waiters, __ATOMIC_SEQ_CST) != 0) {
        syscall(SYS_futex, &word->sequence, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}
