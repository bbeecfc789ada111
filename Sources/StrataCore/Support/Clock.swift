import Glibc

enum Clock {
    static func wallNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// The wall clock at the kernel's tick (a few ms): cheaper than `wallNanoseconds()` (no
    /// clock-source read), for time stamps that are reported in seconds.
    static func coarseWallNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Seconds as nanoseconds, clamped to 0...about 292 years (infinity and NaN included), so a
    /// caller's huge timeout never traps.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return seconds >= 9.2e9 ? UInt64(Int64.max) : UInt64(seconds * 1e9)
    }
}
