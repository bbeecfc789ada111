#define _GNU_SOURCE
#include "strata_system.h"
#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

int strata_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

int strata_semaphore_wait_monotonic(sem_t *semaphore, unsigned long long nanoseconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    unsigned long long total = (unsigned long long)deadline.tv_nsec + nanoseconds % 1000000000ULL;
    deadline.tv_sec += (time_t)(nanoseconds / 1000000000ULL + total / 1000000000ULL);
    deadline.tv_nsec = (long)(total % 1000000000ULL);
    while (sem_clockwait(semaphore, CLOCK_MONOTONIC, &deadline) != 0) {
        if (errno != EINTR) return 0;
    }
    return 1;
}
