#include "strata_system.h"
#include <sys/prctl.h>

int strata_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}
