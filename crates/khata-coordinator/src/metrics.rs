//! Request metrics of the coordinator: how many reads, range reads and writes it served, how
//! each ended, how long each took, and how many tombstones reads met.
//!
//! Every counter is a relaxed atomic, so recording costs a few uncontended atomic adds and
//! never a lock; a [`CoordinatorMetrics::snapshot`] taken while requests run may be off by
//! the requests in flight, which is what any scrape of live counters is. The admin API turns
//! snapshots into Prometheus text (`khata-server`'s `admin/prometheus.rs`).
//!
//! Latency histograms have fixed buckets on a 1-2.5-5 log scale from 100 µs to 10 s (the
//! shape Prometheus client libraries use for request latencies), stored per bucket and made
//! cumulative only in a snapshot. A fixed, small set of buckets is what a Prometheus histogram
//! needs (buckets are series, so they must not change between scrapes), so a
//! general-purpose histogram crate (HDR and friends) would bring more than it gives here.
//!
//! Latency is measured with tokio's monotonic clock: it paces nothing and never reaches
//! data, and under a paused tokio clock (a simulation) it reads simulated time.
//!
//! Per table, each request's latency also goes to the table's [`LatencyHistogram`]s
//! (`khata_types::latency`: fine buckets, the last minute or two) that
//! `system_views.coordinator_read_latency`, `coordinator_write_latency` and
//! `coordinator_scan_latency` show (a write of several tables counts for each).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use khata_replica::virtual_tables::TableLatencies;
use khata_types::latency::LatencyHistogram;
use uuid::Uuid;

use crate::error::CoordinatorError;

/// The kinds of request the coordinator counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A read of one partition.
    Read,
    /// A read of a token range.
    Range,
    /// A write (a mutation or a batch of them).
    Write,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Read, Op::Range, Op::Write];

    /// The label Prometheus series carry (`op="read"`).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Range => "range",
            Op::Write => "write",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How a request ended, as Cassandra's client-request metrics split it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Ok,
    /// Not enough replicas were up (`Unavailable`); nothing was tried.
    Unavailable,
    /// Replicas did not answer in time.
    Timeout,
    /// Any other error (a replica failure, an invalid request, an internal error).
    Error,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Ok,
        Outcome::Unavailable,
        Outcome::Timeout,
        Outcome::Error,
    ];

    /// The label Prometheus series carry (`result="ok"`).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Unavailable => "unavailable",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        }
    }

    fn of(error: &CoordinatorError) -> Outcome {
        match error {
            CoordinatorError::Unavailable { .. } => Outcome::Unavailable,
            CoordinatorError::ReadTimeout { .. } | CoordinatorError::WriteTimeout { .. } => {
                Outcome::Timeout
            }
            _ => Outcome::Error,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Upper bounds of the latency buckets, in microseconds (`+Inf` is implied after the last).
pub const LATENCY_BUCKETS_MICROS: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

/// A lock-free histogram over [`LATENCY_BUCKETS_MICROS`].
pub struct Histogram {
    /// Per bucket (not cumulative); the last counts what exceeds every bound.
    buckets: [AtomicU64; LATENCY_BUCKETS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_micros: AtomicU64::new(0),
        }
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.snapshot().count)
            .finish_non_exhaustive()
    }
}

impl Histogram {
    /// Count one observation.
    pub fn record(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_BUCKETS_MICROS.partition_point(|&bound| bound < micros);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The counts so far, cumulative as Prometheus wants them.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = Vec::with_capacity(self.buckets.len());
        let mut total = 0u64;
        for b in &self.buckets {
            total = total.saturating_add(b.load(Ordering::Relaxed));
            cumulative.push(total);
        }
        HistogramSnapshot {
            cumulative,
            count: total,
            sum_micros: self.sum_micros.load(Ordering::Relaxed),
        }
    }
}

/// A histogram at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramSnapshot {
    /// Observations at or under each bound of [`LATENCY_BUCKETS_MICROS`], then under `+Inf`
    /// (so one longer than the bounds, and non-decreasing).
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum_micros: u64,
}

/// What a successful request reports besides its latency.
pub trait Observed {
    /// Tombstones the request met (reads); 0 for writes.
    fn tombstones_scanned(&self) -> usize {
        0
    }
}

impl Observed for () {}

impl Observed for crate::catalog::ReadResult {
    fn tombstones_scanned(&self) -> usize {
        self.tombstones_scanned
    }
}

impl Observed for crate::catalog::ScanResult {
    fn tombstones_scanned(&self) -> usize {
        self.tombstones_scanned
    }
}

impl Observed for crate::catalog::IndexResult {
    fn tombstones_scanned(&self) -> usize {
        self.tombstones_scanned
    }
}

/// The coordinator's request metrics.
#[derive(Debug)]
pub struct CoordinatorMetrics {
    /// `requests[op][outcome]`.
    requests: [[AtomicU64; Outcome::ALL.len()]; Op::ALL.len()],
    latency: [Histogram; Op::ALL.len()],
    tombstones_scanned: AtomicU64,
    /// Per table, the latency of each op (indexed as [`Op::ALL`]).
    tables: parking_lot::RwLock<HashMap<Uuid, Arc<[LatencyHistogram; 3]>>>,
    /// The origin of the per-table histograms' clock.
    origin: tokio::time::Instant,
}

impl Default for CoordinatorMetrics {
    fn default() -> Self {
        CoordinatorMetrics {
            requests: Default::default(),
            latency: Default::default(),
            tombstones_scanned: AtomicU64::new(0),
            tables: Default::default(),
            origin: tokio::time::Instant::now(), // layering: allowed (request latency metrics; never reaches data)
        }
    }
}

impl CoordinatorMetrics {
    /// Run a request and record how it went: its outcome, its latency (whatever the outcome:
    /// a timeout's latency is the timeout) and, for reads, the tombstones it met. A request
    /// whose future is dropped before it ends (its client went away) is not counted.
    /// `tables`: the tables the request reads or writes.
    pub async fn observe<T: Observed>(
        &self,
        op: Op,
        tables: &[Uuid],
        request: impl Future<Output = crate::Result<T>>,
    ) -> crate::Result<T> {
        let started = tokio::time::Instant::now(); // layering: allowed (request latency metrics; never reaches data)
        let result = request.await;
        let outcome = match &result {
            Ok(value) => {
                let tombstones = u64::try_from(value.tombstones_scanned()).unwrap_or(u64::MAX);
                self.tombstones_scanned
                    .fetch_add(tombstones, Ordering::Relaxed);
                Outcome::Ok
            }
            Err(e) => Outcome::of(e),
        };
        let now = tokio::time::Instant::now(); // layering: allowed (request latency metrics; never reaches data)
        let elapsed = now.duration_since(started);
        self.record(op, outcome, elapsed);
        let seconds = now.duration_since(self.origin).as_secs();
        for &table in tables {
            self.record_table(table, op, elapsed, seconds);
        }
        result
    }

    /// Count a request of `table` in its histograms, made on its first request (under the
    /// read lock: no reference count touched on the way).
    fn record_table(&self, table: Uuid, op: Op, elapsed: Duration, seconds: u64) {
        if let Some(h) = self.tables.read().get(&table) {
            h[op.index()].record(elapsed, seconds);
            return;
        }
        let h = self.tables.write().entry(table).or_default().clone();
        h[op.index()].record(elapsed, seconds);
    }

    /// Keep the per-table histograms of the tables `keep` names (the others were dropped).
    pub fn retain_tables(&self, keep: impl Fn(Uuid) -> bool) {
        self.tables.write().retain(|&table, _| keep(table));
    }

    /// The latencies of `table`'s requests (`None` before its first).
    pub fn table_latency(&self, table: Uuid) -> Option<TableLatencies> {
        let h = self.tables.read().get(&table)?.clone();
        let seconds = self.origin.elapsed().as_secs();
        Some(TableLatencies {
            read: h[Op::Read.index()].snapshot(seconds),
            write: h[Op::Write.index()].snapshot(seconds),
            scan: h[Op::Range.index()].snapshot(seconds),
        })
    }

    /// Count one request that took `elapsed`.
    pub fn record(&self, op: Op, outcome: Outcome, elapsed: Duration) {
        self.requests[op.index()][outcome.index()].fetch_add(1, Ordering::Relaxed);
        self.latency[op.index()].record(elapsed);
    }

    /// Requests of `op` that ended in `outcome` so far.
    pub fn requests(&self, op: Op, outcome: Outcome) -> u64 {
        self.requests[op.index()][outcome.index()].load(Ordering::Relaxed)
    }

    /// Every counter and histogram at one moment.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            requests: Op::ALL
                .iter()
                .flat_map(|&op| {
                    Outcome::ALL
                        .iter()
                        .map(move |&outcome| (op, outcome, self.requests(op, outcome)))
                })
                .collect(),
            latency: Op::ALL
                .iter()
                .map(|&op| (op, self.latency[op.index()].snapshot()))
                .collect(),
            tombstones_scanned: self.tombstones_scanned.load(Ordering::Relaxed),
        }
    }
}

/// The coordinator's metrics at one moment, in a fixed order (ops, then outcomes, as listed
/// in [`Op::ALL`] and [`Outcome::ALL`]), so the text rendered from it is stable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsSnapshot {
    pub requests: Vec<(Op, Outcome, u64)>,
    pub latency: Vec<(Op, HistogramSnapshot)>,
    pub tombstones_scanned: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_inclusive_upper_bounds_and_cumulative() {
        let h = Histogram::default();
        h.record(Duration::from_micros(100)); // le=100µs
        h.record(Duration::from_micros(101)); // le=250µs
        h.record(Duration::from_millis(3)); // le=5ms
        h.record(Duration::from_secs(60)); // +Inf only
        let s = h.snapshot();
        assert_eq!(s.cumulative.len(), LATENCY_BUCKETS_MICROS.len() + 1);
        assert_eq!(s.cumulative[0], 1);
        assert_eq!(s.cumulative[1], 2);
        assert_eq!(s.cumulative[4], 2); // 2.5 ms
        assert_eq!(s.cumulative[5], 3); // 5 ms
        assert_eq!(s.cumulative[LATENCY_BUCKETS_MICROS.len() - 1], 3); // 10 s
        assert_eq!(*s.cumulative.last().unwrap(), 4);
        assert_eq!(s.count, 4);
        assert_eq!(s.sum_micros, 100 + 101 + 3_000 + 60_000_000);
        assert!(s.cumulative.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn outcomes_follow_the_error_kind() {
        use crate::consistency::Consistency;
        let unavailable = CoordinatorError::Unavailable {
            consistency: Consistency::Quorum,
            required: 2,
            alive: 1,
        };
        let timeout = CoordinatorError::ReadTimeout {
            consistency: Consistency::One,
            received: 0,
            required: 1,
            data_present: false,
        };
        assert_eq!(Outcome::of(&unavailable), Outcome::Unavailable);
        assert_eq!(Outcome::of(&timeout), Outcome::Timeout);
        assert_eq!(
            Outcome::of(&CoordinatorError::Invalid("x".into())),
            Outcome::Error
        );
    }

    #[tokio::test]
    async fn observe_counts_outcomes_and_tombstones() {
        struct Read(usize);
        impl Observed for Read {
            fn tombstones_scanned(&self) -> usize {
                self.0
            }
        }
        let m = CoordinatorMetrics::default();
        let t = Uuid::new_v4();
        m.observe(Op::Read, &[t], async { Ok(Read(3)) })
            .await
            .unwrap();
        m.observe(Op::Read, &[t], async { Ok(Read(4)) })
            .await
            .unwrap();
        let failed = m
            .observe::<()>(Op::Write, &[t], async {
                Err(CoordinatorError::Internal("disk".into()))
            })
            .await;
        assert!(failed.is_err());
        assert_eq!(m.requests(Op::Read, Outcome::Ok), 2);
        assert_eq!(m.requests(Op::Write, Outcome::Error), 1);
        assert_eq!(m.requests(Op::Write, Outcome::Ok), 0);
        let s = m.snapshot();
        assert_eq!(s.tombstones_scanned, 7);
        assert_eq!(s.requests.len(), Op::ALL.len() * Outcome::ALL.len());
        let read = &s.latency.iter().find(|(op, _)| *op == Op::Read).unwrap().1;
        assert_eq!(read.count, 2);
        let table = m.table_latency(t).expect("the table's requests were seen");
        assert_eq!(
            (table.read.count, table.write.count, table.scan.count),
            (2, 1, 0)
        );
        assert_eq!(m.table_latency(Uuid::new_v4()), None);
        m.retain_tables(|table| table != t);
        assert_eq!(m.table_latency(t), None, "forgotten with its table");
    }
}
