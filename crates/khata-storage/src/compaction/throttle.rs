//! The `compaction_throughput` limit: a pure token bucket over bytes.
//!
//! Cassandra throttles compaction with Guava's `RateLimiter` (default 64 MiB/s; 0 disables it).
//! khata's [`Throttle`] keeps the same contract without a clock or a sleep inside: the
//! compaction thread reports the bytes it just wrote and the current time, and is told how long
//! to wait before going on. Time is the caller's (`now_micros` from `khata-env`'s clock), so
//! tests drive it with a simulated clock.
//!
//! The bucket is kept as a single instant (the generic cell rate algorithm): the time at which
//! every byte acquired so far will have been paid for at the configured rate. Acquiring `n`
//! bytes moves that instant `n / rate` later and the caller waits until it. Idle time earns
//! credit, capped at [`BURST_MICROS`] worth of bytes (one second, like Guava's `SmoothBursty`,
//! so a compaction that was blocked on a read does not fall behind its budget, nor burst far
//! above it). The instant is kept in units of microseconds times the rate, in 128 bits, so
//! even one-byte acquires at a high rate are charged exactly and nothing is lost to rounding.
//!
//! A new throttle starts with no credit. Several compactions sharing one throttle share its
//! rate, as Cassandra's global limiter does.

use std::time::Duration;

/// Unused rate carried over from idle time, at most (one second).
pub const BURST_MICROS: i64 = 1_000_000;

const MICROS_PER_SECOND: i128 = 1_000_000;

/// A bytes-per-second limit (Cassandra's `compaction_throughput`; 0 = unthrottled).
#[derive(Clone, Debug)]
pub struct Throttle {
    bytes_per_second: u64,
    /// When every byte acquired so far is paid for, in microseconds times `bytes_per_second`;
    /// `None` before the first acquire.
    paid_until: Option<i128>,
}

impl Throttle {
    /// A throttle at `bytes_per_second`; 0 means no limit.
    pub fn new(bytes_per_second: u64) -> Self {
        Throttle {
            bytes_per_second,
            paid_until: None,
        }
    }

    /// The configured rate (0 = unthrottled).
    pub fn bytes_per_second(&self) -> u64 {
        self.bytes_per_second
    }

    /// Changes the rate (as `nodetool setcompactionthroughput` does). Debt and credit
    /// accumulated at the old rate are forgotten.
    pub fn set_bytes_per_second(&mut self, bytes_per_second: u64) {
        *self = Throttle::new(bytes_per_second);
    }

    /// Accounts for `bytes` processed at `now_micros`; returns how long the caller must wait
    /// to stay within the rate (zero when unthrottled or within budget).
    pub fn acquire(&mut self, bytes: u64, now_micros: i64) -> Duration {
        if self.bytes_per_second == 0 {
            return Duration::ZERO;
        }
        let rate = i128::from(self.bytes_per_second);
        let now = i128::from(now_micros) * rate;
        let earliest = now - i128::from(BURST_MICROS) * rate;
        let start = self.paid_until.map_or(now, |paid| paid.max(earliest));
        let paid_until = start + i128::from(bytes) * MICROS_PER_SECOND;
        self.paid_until = Some(paid_until);
        if paid_until <= now {
            return Duration::ZERO;
        }
        // Round up, so that waiting exactly this long never leaves the caller ahead of the rate.
        let wait_micros = (paid_until - now + rate - 1) / rate;
        Duration::from_micros(u64::try_from(wait_micros).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// Writes `chunks` chunks of `chunk` bytes through the throttle, spending `work_micros` of
    /// simulated time on each and then waiting as told; returns the achieved bytes per second.
    fn simulate(throttle: &mut Throttle, chunk: u64, chunks: u64, work_micros: i64) -> f64 {
        let start: i64 = 1_700_000_000_000_000;
        let mut now = start;
        for _ in 0..chunks {
            now += work_micros;
            now += throttle.acquire(chunk, now).as_micros() as i64;
        }
        (chunk * chunks) as f64 / ((now - start) as f64 / 1e6)
    }

    fn assert_close(actual: f64, expected: f64) {
        let error = (actual - expected).abs() / expected;
        assert!(
            error < 0.02,
            "rate {actual:.0} B/s is not within 2% of {expected:.0} B/s"
        );
    }

    #[test]
    fn zero_is_unlimited() {
        let mut throttle = Throttle::new(0);
        assert_eq!(throttle.acquire(u64::MAX, 0), Duration::ZERO);
        assert_eq!(throttle.acquire(u64::MAX, 0), Duration::ZERO);
    }

    #[test]
    fn default_rate_holds_on_a_simulated_clock() {
        let rate = 64 * MIB;
        let achieved = simulate(&mut Throttle::new(rate), 64 * 1024, 10_000, 0);
        assert_close(achieved, rate as f64);
    }

    #[test]
    fn uneven_chunks_and_work_time_still_average_the_rate() {
        let rate = 10 * MIB;
        let mut throttle = Throttle::new(rate);
        let start = 5_000_000;
        let mut now = start;
        let mut bytes = 0;
        for i in 0..20_000u64 {
            let chunk = 1 + (i * 7_919) % 20_000;
            now += 100;
            now += throttle.acquire(chunk, now).as_micros() as i64;
            bytes += chunk;
        }
        assert_close(bytes as f64 / ((now - start) as f64 / 1e6), rate as f64);
    }

    #[test]
    fn one_byte_acquires_are_charged_exactly() {
        // 64 MiB/s is 0.015 µs per byte: rounding each to whole microseconds would lose it all.
        let rate = 64 * MIB;
        let achieved = simulate(&mut Throttle::new(rate), 1, 4 * MIB, 0);
        assert_close(achieved, rate as f64);
    }

    #[test]
    fn a_caller_slower_than_the_rate_never_waits() {
        let mut throttle = Throttle::new(MIB);
        // A new throttle has no credit: the first kibibyte pays its own millisecond.
        assert_eq!(throttle.acquire(1024, 0), Duration::from_micros(977));
        let mut now = 0;
        for _ in 0..1_000 {
            now += 10_000; // 1 KiB every 10 ms is 100 KiB/s
            assert_eq!(throttle.acquire(1024, now), Duration::ZERO);
        }
    }

    #[test]
    fn idle_credit_is_capped_at_one_second() {
        let rate = MIB;
        let mut throttle = Throttle::new(rate);
        assert_eq!(throttle.acquire(1, 0), Duration::from_micros(1));
        // Ten idle seconds earn one second of bytes, not ten.
        let now = 10_000_000;
        assert_eq!(throttle.acquire(rate, now), Duration::ZERO);
        assert_eq!(
            throttle.acquire(rate / 2, now),
            Duration::from_micros(500_000)
        );
    }

    #[test]
    fn a_large_acquire_waits_its_full_cost() {
        let mut throttle = Throttle::new(MIB);
        assert_eq!(throttle.acquire(3 * MIB, 0), Duration::from_secs(3));
        // Called again at once, the debt is still owed.
        assert_eq!(throttle.acquire(MIB, 0), Duration::from_secs(4));
    }

    #[test]
    fn changing_the_rate_starts_afresh() {
        let mut throttle = Throttle::new(MIB);
        throttle.acquire(10 * MIB, 0);
        throttle.set_bytes_per_second(2 * MIB);
        assert_eq!(throttle.bytes_per_second(), 2 * MIB);
        assert_eq!(throttle.acquire(MIB, 0), Duration::from_millis(500));
        throttle.set_bytes_per_second(0);
        assert_eq!(throttle.acquire(MIB, 0), Duration::ZERO);
    }
}
