//! Latency distributions of the recent past, as Cassandra's per-table latency metrics report
//! them (`nodetool tablestats`' "Local read latency", the `system_views.*_latency` tables).
//!
//! A [`LatencyHistogram`] counts latencies in buckets whose bounds grow by a factor of 1.2
//! from 1 µs (Cassandra's `EstimatedHistogram` offsets, zero included: 0, 1, 2, 3, ... 8, 10,
//! 12, 14, 17, 20, ...), 99 of them up to 108 seconds and one above: a percentile read from it
//! is within 20% of the true one. It counts other values as well (the rows or tombstones a
//! read met), as Cassandra's does. The counts are kept in two windows of [`WINDOW_SECONDS`], the current
//! one and the one before, so percentiles, the maximum and the rate describe the last one to
//! two minutes (Cassandra's reservoirs decay over minutes too), while [`LatencySnapshot::count`]
//! counts everything since the histogram was made.
//!
//! Recording is a few relaxed atomic adds and no lock, except once per window, when the
//! first recording of a new window clears the slot it reuses. The caller gives the time, in
//! seconds of a monotonic clock (this crate does no I/O and reads no clock): a simulation
//! drives it with simulated time. A recording racing with the clearing of its window may be
//! lost or land in the new window; a metric can afford that.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The span of one window of counts.
pub const WINDOW_SECONDS: u64 = 60;

/// Buckets with an upper bound, and one more for what exceeds the last bound.
const BOUNDED: usize = 99;

/// Upper bounds of the buckets in microseconds, inclusive: 0, then from 1 each the previous
/// times 1.2, rounded, and at least one more.
pub const BUCKET_BOUNDS_MICROS: [u64; BOUNDED] = bounds();

const fn bounds() -> [u64; BOUNDED] {
    let mut b = [0u64; BOUNDED];
    b[1] = 1;
    let mut i = 2;
    while i < BOUNDED {
        let last = b[i - 1];
        let next = (12 * last + 5) / 10;
        b[i] = if next == last { next + 1 } else { next };
        i += 1;
    }
    b
}

/// The bucket of a latency of `micros`.
fn bucket(micros: u64) -> usize {
    BUCKET_BOUNDS_MICROS.partition_point(|&bound| bound < micros)
}

/// One window's counts.
struct Window {
    counts: [AtomicU64; BOUNDED + 1],
    sum_micros: AtomicU64,
    max_micros: AtomicU64,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_micros: AtomicU64::new(0),
            max_micros: AtomicU64::new(0),
        }
    }
}

impl Window {
    fn clear(&self) {
        for c in &self.counts {
            c.store(0, Ordering::Relaxed);
        }
        self.sum_micros.store(0, Ordering::Relaxed);
        self.max_micros.store(0, Ordering::Relaxed);
    }
}

/// A latency histogram over the recent past (see the module documentation).
pub struct LatencyHistogram {
    total: AtomicU64,
    /// Every value recorded, added up (a Prometheus summary's `_sum`).
    total_sum_micros: AtomicU64,
    windows: [Window; 2],
    /// Which window (seconds / [`WINDOW_SECONDS`]) each slot holds; `u64::MAX` for none yet.
    epochs: [AtomicU64; 2],
    /// Held while a slot is cleared for a new window.
    rotating: Mutex<()>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            total: AtomicU64::new(0),
            total_sum_micros: AtomicU64::new(0),
            windows: [Window::default(), Window::default()],
            epochs: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            rotating: Mutex::new(()),
        }
    }
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("total", &self.total.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl LatencyHistogram {
    /// Count one latency, at `now_seconds` of the caller's monotonic clock.
    pub fn record(&self, latency: Duration, now_seconds: u64) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.record_value(micros, now_seconds);
    }

    /// Count one value that is not a latency (rows or tombstones a read met: Cassandra keeps
    /// those in the same buckets). Where the documentation says microseconds, read units.
    pub fn record_value(&self, micros: u64, now_seconds: u64) {
        let epoch = now_seconds / WINDOW_SECONDS;
        let slot = (epoch % 2) as usize;
        if self.epochs[slot].load(Ordering::Acquire) != epoch {
            self.rotate(slot, epoch);
        }
        let window = &self.windows[slot];
        window.counts[bucket(micros)].fetch_add(1, Ordering::Relaxed);
        window.sum_micros.fetch_add(micros, Ordering::Relaxed);
        window.max_micros.fetch_max(micros, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
        self.total_sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Make `slot` hold window `epoch`, emptied (unless another thread just did).
    fn rotate(&self, slot: usize, epoch: u64) {
        let _rotating = self
            .rotating
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = self.epochs[slot].load(Ordering::Acquire);
        // A thread that read the clock before a newer window began must not clear it.
        if held == epoch || (held != u64::MAX && held > epoch) {
            return;
        }
        self.windows[slot].clear();
        self.epochs[slot].store(epoch, Ordering::Release);
    }

    /// The distribution at `now_seconds`: the current window and the one before it.
    pub fn snapshot(&self, now_seconds: u64) -> LatencySnapshot {
        let epoch = now_seconds / WINDOW_SECONDS;
        let mut counts = [0u64; BOUNDED + 1];
        let mut max_micros = 0;
        let mut sum_micros = 0u64;
        let mut oldest = epoch;
        for (window, held) in self.windows.iter().zip(&self.epochs) {
            let held = held.load(Ordering::Acquire);
            let recent = held == epoch || (epoch > 0 && held == epoch - 1);
            if !recent {
                continue;
            }
            oldest = oldest.min(held);
            for (sum, c) in counts.iter_mut().zip(&window.counts) {
                *sum += c.load(Ordering::Relaxed);
            }
            max_micros = max_micros.max(window.max_micros.load(Ordering::Relaxed));
            sum_micros = sum_micros.saturating_add(window.sum_micros.load(Ordering::Relaxed));
        }
        LatencySnapshot {
            count: self.total.load(Ordering::Relaxed),
            total_sum_micros: self.total_sum_micros.load(Ordering::Relaxed),
            recent: counts.to_vec(),
            sum_micros,
            max_micros,
            span_seconds: (now_seconds - oldest * WINDOW_SECONDS).max(1),
        }
    }
}

/// A [`LatencyHistogram`] at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// Latencies recorded since the histogram was made, and their sum.
    pub count: u64,
    pub total_sum_micros: u64,
    /// Per bucket ([`BUCKET_BOUNDS_MICROS`], then one over the last bound), recent ones only.
    pub recent: Vec<u64>,
    /// The recent latencies added up.
    pub sum_micros: u64,
    /// The largest recent latency.
    pub max_micros: u64,
    /// The seconds the recent counts cover (at least 1).
    pub span_seconds: u64,
}

/// Nothing recorded (a table no request has reached).
impl Default for LatencySnapshot {
    fn default() -> Self {
        LatencySnapshot {
            count: 0,
            total_sum_micros: 0,
            recent: Vec::new(),
            sum_micros: 0,
            max_micros: 0,
            span_seconds: 1,
        }
    }
}

impl LatencySnapshot {
    /// Recent latencies counted.
    pub fn recent_count(&self) -> u64 {
        self.recent.iter().sum()
    }

    /// The `q`-quantile (0 to 1) of the recent latencies, as the upper bound of its bucket
    /// (at most the largest latency seen); 0 when there are none.
    pub fn quantile_micros(&self, q: f64) -> u64 {
        let n = self.recent_count();
        if n == 0 {
            return 0;
        }
        // The rank of the quantile, counted from 1.
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in self.recent.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let bound = BUCKET_BOUNDS_MICROS.get(i).copied().unwrap_or(u64::MAX);
                return bound.min(self.max_micros);
            }
        }
        self.max_micros
    }

    /// The mean of the recent latencies; NaN when there are none (as nodetool prints it).
    pub fn mean_micros(&self) -> f64 {
        self.sum_micros as f64 / self.recent_count() as f64
    }

    /// Recent latencies per second.
    pub fn per_second(&self) -> f64 {
        self.recent_count() as f64 / self.span_seconds as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_cassandras_offsets() {
        assert_eq!(
            BUCKET_BOUNDS_MICROS[..21],
            [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72
            ]
        );
        assert_eq!(BUCKET_BOUNDS_MICROS[BOUNDED - 1], 107_964_792);
        assert!(BUCKET_BOUNDS_MICROS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!(bucket(9), 9);
        assert_eq!(bucket(10), 9);
        assert_eq!(bucket(11), 10);
        assert_eq!(bucket(u64::MAX), BOUNDED);
    }

    #[test]
    fn quantiles_are_within_a_bucket_of_the_truth() {
        let h = LatencyHistogram::default();
        for micros in 1..=10_000u64 {
            h.record(Duration::from_micros(micros), 5);
        }
        let s = h.snapshot(30);
        assert_eq!(s.count, 10_000);
        assert_eq!(s.recent_count(), 10_000);
        assert_eq!(s.max_micros, 10_000);
        for (q, truth) in [(0.5, 5_000.0), (0.99, 9_900.0), (1.0, 10_000.0)] {
            let got = s.quantile_micros(q) as f64;
            assert!(
                got >= truth && got <= truth * 1.2,
                "q{q}: {got} for {truth}"
            );
        }
        assert_eq!(s.span_seconds, 30);
        assert!((s.mean_micros() - 5_000.5).abs() < 1e-9);
        assert!((s.per_second() - 10_000.0 / 30.0).abs() < 1e-9);
    }

    #[test]
    fn old_windows_are_forgotten_but_counted() {
        let h = LatencyHistogram::default();
        h.record(Duration::from_secs(2), 10); // window 0
        h.record(Duration::from_micros(100), 70); // window 1
        let both = h.snapshot(90);
        assert_eq!(both.recent_count(), 2);
        assert_eq!(both.max_micros, 2_000_000);
        assert_eq!(both.span_seconds, 90);
        // Window 2 reuses window 0's slot: the 2 s latency is gone.
        h.record(Duration::from_micros(300), 130);
        let later = h.snapshot(130);
        assert_eq!(later.recent_count(), 2);
        assert_eq!(later.max_micros, 300);
        assert_eq!(later.quantile_micros(0.5), 103); // the bucket of 100 µs: (86, 103]
        assert_eq!(later.count, 3);
        assert_eq!(later.total_sum_micros, 2_000_000 + 100 + 300);
        // Long idle: nothing recent, the total stays.
        let idle = h.snapshot(1_000);
        assert_eq!((idle.recent_count(), idle.count), (0, 3));
        assert_eq!(idle.quantile_micros(0.99), 0);
        assert_eq!(idle.per_second(), 0.0);
        assert!(idle.mean_micros().is_nan());
        let none = LatencySnapshot::default();
        assert_eq!((none.quantile_micros(0.99), none.per_second()), (0, 0.0));
    }

    #[test]
    fn counts_of_zero_have_their_own_bucket() {
        let h = LatencyHistogram::default();
        for value in [0, 0, 0, 5] {
            h.record_value(value, 0);
        }
        let s = h.snapshot(0);
        assert_eq!(s.quantile_micros(0.5), 0);
        assert_eq!(s.quantile_micros(0.99), 5);
        assert_eq!(s.max_micros, 5);
    }

    #[test]
    fn a_late_recording_does_not_clear_a_newer_window() {
        let h = LatencyHistogram::default();
        h.record(Duration::from_micros(5), 125); // window 2, slot 0
        h.record(Duration::from_micros(7), 5); // read the clock in window 0: same slot
        let s = h.snapshot(125);
        assert_eq!(s.recent_count(), 2, "kept, in the newer window");
    }
}
