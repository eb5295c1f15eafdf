//! The coordinator: every request of a front end goes through here.
//!
//! For each request it finds the keyspace's replicas, checks that enough are up for the
//! consistency level (`Unavailable` otherwise, before anything is tried), sends the work to
//! them, and waits for as many answers as the level needs within the request timeout
//! (`ReadTimeout`/`WriteTimeout` otherwise). It also hands out write timestamps (microseconds,
//! strictly increasing on this node) and applies schema changes, announcing each to
//! subscribers (the CQL front end turns them into `SCHEMA_CHANGE` events).
//!
//! This is the single-node coordinator: the only replica is the local one. The cluster layer
//! will add remote replicas behind the same methods, so the front ends do not change.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use khata_replica::storage::{Mutation, ReadResult, ScanPosition, ScanResult};
use khata_replica::{
    ChangeKind, IndexQuery, IndexResult, NodeInfo, Replica, Schema, SchemaChange, SchemaEvent,
};
use khata_types::LocalTime;
use khata_types::token::{DecoratedKey, Token};
use tokio::sync::broadcast;
use uuid::Uuid;

use crate::consistency::{Consistency, block_for, is_local, replication_factors};
use crate::error::{CoordinatorError, Result, WriteType, read_failure, write_failure};
use crate::metrics::{CoordinatorMetrics, Op};
use crate::trace;

/// Request timeouts, as `cassandra.yaml` names them.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    pub read_request_timeout: Duration,
    pub write_request_timeout: Duration,
    pub range_request_timeout: Duration,
    pub truncate_request_timeout: Duration,
    /// Reads that go to a storage thread at once (`concurrent_reads`, Cassandra's read stage):
    /// the rest wait their turn within their timeout. Each holds what it has read until it
    /// is answered, so this bounds that memory, whatever clients pipeline.
    pub concurrent_reads: usize,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            read_request_timeout: Duration::from_millis(5_000),
            write_request_timeout: Duration::from_millis(2_000),
            range_request_timeout: Duration::from_millis(10_000),
            truncate_request_timeout: Duration::from_millis(60_000),
            concurrent_reads: 32,
        }
    }
}

/// A read of one partition.
#[derive(Clone, Debug)]
pub struct ReadCommand {
    pub table: Uuid,
    pub key: DecoratedKey,
    /// Clustering byte ranges, sorted and disjoint (see the storage engine's `read`).
    pub ranges: Vec<(Bytes, Bytes)>,
    pub reversed: bool,
    pub row_limit: Option<usize>,
    /// `ranges` select at most one row: a full clustering key, or the whole partition of a
    /// table without clustering columns. Lets the replica stop at the newest sources that
    /// settle the row (see the replica's `read_row`).
    pub one_row: bool,
    /// The time TTLs and tombstones are judged at.
    pub now: LocalTime,
}

/// A read of a token range.
#[derive(Clone, Debug)]
pub struct ScanCommand {
    pub table: Uuid,
    pub start: Bound<Token>,
    pub end: Bound<Token>,
    pub resume: Option<ScanPosition>,
    pub row_limit: usize,
    pub now: LocalTime,
}

/// Coordinates requests for the front ends.
#[derive(Debug)]
pub struct Coordinator {
    replica: Arc<Replica>,
    config: CoordinatorConfig,
    /// Permits for reads on storage threads ([`CoordinatorConfig::concurrent_reads`]).
    read_stage: Arc<tokio::sync::Semaphore>,
    schema_events: broadcast::Sender<SchemaEvent>,
    last_timestamp: Arc<AtomicI64>,
    metrics: Arc<CoordinatorMetrics>,
    /// `nodetool settraceprobability`: the share of requests traced unasked ([`f64`] bits).
    pub(crate) trace_probability: std::sync::atomic::AtomicU64,
    /// Held from reading the schema to applying a change built from it ([`Self::lock_schema`]).
    schema_lock: tokio::sync::Mutex<()>,
}

/// Whether partition reads run on the request's own thread rather than on a blocking thread.
/// A read is usually served from memtables and cached chunks in microseconds, and the hand-off
/// to a blocking thread and back cost more than the read: on 2 cores it made the node spend
/// two-thirds of its CPU in the scheduler and grow to hundreds of threads
/// (docs/benchmarks.md). A read that misses the page cache now holds its worker thread for the
/// disk read; range scans, which can be long, still go to blocking threads.
const INLINE_POINT_READS: bool = true;

/// Schema events kept for slow subscribers before they miss some.
const SCHEMA_EVENT_QUEUE: usize = 1024;

impl Coordinator {
    pub fn new(replica: Arc<Replica>, config: CoordinatorConfig) -> Self {
        let metrics = Arc::new(CoordinatorMetrics::default());
        let source = metrics.clone();
        replica.set_coordinator_latency_source(Arc::new(move |table| source.table_latency(table)));
        Coordinator {
            replica,
            read_stage: Arc::new(tokio::sync::Semaphore::new(config.concurrent_reads.max(1))),
            config,
            schema_events: broadcast::channel(SCHEMA_EVENT_QUEUE).0,
            last_timestamp: Arc::new(AtomicI64::new(0)),
            metrics,
            trace_probability: std::sync::atomic::AtomicU64::new(0),
            schema_lock: tokio::sync::Mutex::new(()),
        }
    }

    pub fn schema(&self) -> Arc<Schema> {
        self.replica.schema()
    }

    pub fn node(&self) -> &NodeInfo {
        self.replica.node()
    }

    pub fn host_id(&self) -> Uuid {
        self.replica.host_id()
    }

    pub fn tokens(&self) -> &[Token] {
        self.replica.tokens()
    }

    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    /// The local replica (for the admin API: flush, compaction, statistics).
    pub fn replica(&self) -> &Arc<Replica> {
        &self.replica
    }

    /// Estimates of a table's rows and bytes (memtables and SSTables, before compaction merges
    /// overwrites), as DynamoDB's `ItemCount` and `TableSizeBytes` are estimates. One node
    /// answers for itself; a cluster will sum its replicas' estimates divided by the
    /// replication factor.
    pub fn table_estimate(&self, table: Uuid) -> Result<TableEstimate> {
        let stats = self
            .replica
            .engine()
            .table_stats(table)
            .map_err(|e| CoordinatorError::Internal(e.to_string()))?;
        Ok(TableEstimate {
            rows: stats.rows_estimate,
            bytes: stats.live_data_bytes + stats.memtable_bytes as u64,
        })
    }

    /// Request counts, latencies and tombstones scanned (for the admin API's `/metrics`).
    pub fn metrics(&self) -> &CoordinatorMetrics {
        &self.metrics
    }

    /// Schema changes as they happen.
    pub fn subscribe_schema(&self) -> broadcast::Receiver<SchemaEvent> {
        self.schema_events.subscribe()
    }

    /// A write timestamp: the clock in microseconds, strictly increasing on this node.
    pub fn timestamp(&self) -> i64 {
        self.timestamp_source().next()
    }

    /// The source of [`Coordinator::timestamp`], to take timestamps where the coordinator is
    /// not at hand: a read-modify-write takes its timestamp inside its compare-and-set, so
    /// that writes to one item are timestamped in the order they are serialized.
    pub fn timestamp_source(&self) -> TimestampSource {
        TimestampSource {
            clock: self.replica.clock().clone(),
            last: self.last_timestamp.clone(),
        }
    }

    /// A new version-1 (time-based) UUID, unique on this node: its time is a fresh
    /// [`Coordinator::timestamp`] (in 100 ns units since 1582-10-15), its node and clock
    /// sequence come from the host id. CQL's `now()` and list element paths use these.
    pub fn timeuuid(&self) -> Uuid {
        timeuuid_at(self.timestamp(), self.host_id())
    }

    /// A new random (version-4) UUID, for CQL's `uuid()`.
    pub fn random_uuid(&self) -> Uuid {
        Uuid::new_v4()
    }

    /// The local time in seconds (TTL expiry, tombstone times).
    pub fn now_seconds(&self) -> LocalTime {
        self.replica.clock().now_seconds()
    }

    /// Serialize schema changes: whoever builds a change from the current schema (an ALTER
    /// TABLE's new columns, a DynamoDB table's new tags) holds this from reading the schema
    /// until [`Self::change_schema`] has applied the change, so that two changes to one table
    /// are applied one after the other, each to the schema the other left, and neither is
    /// lost, as Cassandra applies schema changes one at a time.
    pub async fn lock_schema(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.schema_lock.lock().await
    }

    /// Apply a schema change and announce it.
    pub async fn change_schema(&self, change: SchemaChange) -> Result<SchemaEvent> {
        let replica = self.replica.clone();
        let event = run_blocking(move || replica.change_schema(change))
            .await?
            .map_err(CoordinatorError::Schema)?;
        if event.change == ChangeKind::Dropped {
            // A dropped table's (or keyspace's tables') request latencies go with it.
            let schema = self.schema();
            self.metrics
                .retain_tables(|table| schema.table_by_id(table).is_some());
        }
        // No subscriber is not an error.
        let _ = self.schema_events.send(event.clone());
        Ok(event)
    }

    /// Whether a write returns as soon as it is applied (periodic commit log), with no wait
    /// for a sync that would block the thread.
    fn writes_return_at_once(&self) -> bool {
        matches!(
            self.replica.engine().config().commitlog.sync,
            khata_replica::storage::SyncMode::Periodic { .. }
        )
    }

    /// Check that enough replicas of `table`'s keyspace are up for `cl`; returns `blockFor`.
    pub(crate) fn check_available(&self, table: Uuid, cl: Consistency) -> Result<u32> {
        let schema = self.schema();
        let Some(t) = schema.table_by_id(table) else {
            return Err(CoordinatorError::Invalid(format!("unknown table {table}")));
        };
        let Some(ks) = schema.keyspace(&t.def.keyspace) else {
            return Err(CoordinatorError::Invalid(format!(
                "unknown keyspace {}",
                t.def.keyspace
            )));
        };
        let (local_rf, total_rf) =
            replication_factors(&ks.def.replication, &self.node().data_center);
        let required = block_for(cl, local_rf, total_rf);
        // One node: it holds a replica of everything its keyspace replicates to its DC.
        let alive = if is_local(cl) || matches!(cl, Consistency::LocalOne) {
            u32::from(local_rf > 0)
        } else {
            u32::from(total_rf > 0 && local_rf > 0)
        };
        let alive = if cl == Consistency::Any { 1 } else { alive };
        if required > alive {
            return Err(CoordinatorError::Unavailable {
                consistency: cl,
                required,
                alive,
            });
        }
        Ok(required)
    }

    /// Write mutations (of one or more tables) at consistency `cl`. A logged batch is
    /// atomic: all its mutations go into one commit-log record.
    pub async fn write(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: WriteType,
    ) -> Result<()> {
        let single;
        let several: Vec<Uuid>;
        let tables: &[Uuid] = match &mutations[..] {
            [m] => {
                single = [m.table];
                &single
            }
            _ => {
                let mut ids: Vec<Uuid> = mutations.iter().map(|m| m.table).collect();
                ids.sort_unstable();
                ids.dedup();
                several = ids;
                &several
            }
        };
        let request = self.write_unobserved(mutations, cl, write_type);
        self.metrics.observe(Op::Write, tables, request).await
    }

    async fn write_unobserved(
        &self,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: WriteType,
    ) -> Result<()> {
        trace::event(|| "Determining replicas for mutation".to_string());
        let mut required = 1;
        let mut durable = true;
        let schema = self.schema();
        for m in &mutations {
            required = required.max(self.check_available(m.table, cl)?);
            if let Some(t) = schema.table_by_id(m.table)
                && let Some(ks) = schema.keyspace(&t.def.keyspace)
            {
                durable &= ks.def.durable_writes;
            }
        }
        if trace::is_tracing() {
            self.trace_write(&mutations, durable);
        }
        if self.writes_return_at_once() && !self.replica.engine().writes_would_wait() {
            // Periodic commit log: a write is a memtable insert and a write(2) to the log,
            // microseconds; handing it to a blocking thread and back costs more than it does.
            // Not while flushes are behind: then the write waits for memory, and on a request
            // thread it would hold up every other connection the thread serves.
            return self
                .replica
                .apply(mutations, durable)
                .map_err(|e| write_failure(e, cl, required, write_type));
        }
        let replica = self.replica.clone();
        let work = run_blocking(move || replica.apply(mutations, durable));
        match tokio::time::timeout(self.config.write_request_timeout, work).await {
            Ok(done) => done?.map_err(|e| write_failure(e, cl, required, write_type)),
            Err(_) => Err(CoordinatorError::WriteTimeout {
                consistency: cl,
                received: 0,
                required,
                write_type,
            }),
        }
    }

    /// Read one partition at consistency `cl`.
    pub async fn read(&self, command: ReadCommand, cl: Consistency) -> Result<ReadResult> {
        let table = command.table;
        let request = self.read_unobserved(command, None, cl);
        self.metrics.observe(Op::Read, &[table], request).await
    }

    /// Read one partition at consistency `cl`, a page that ends after the row with which the
    /// read has met `tombstone_page_limit` tombstones (`limit_reached` set; the answer's last
    /// row, live or not, is where the next page starts) instead of failing past
    /// `tombstone_failure_threshold`: DynamoDB's Query, which never fails on deleted items.
    pub async fn read_paged(
        &self,
        command: ReadCommand,
        tombstone_page_limit: usize,
        cl: Consistency,
    ) -> Result<ReadResult> {
        let table = command.table;
        let request = self.read_unobserved(command, Some(tombstone_page_limit), cl);
        self.metrics.observe(Op::Read, &[table], request).await
    }

    async fn read_unobserved(
        &self,
        command: ReadCommand,
        tombstone_page_limit: Option<usize>,
        cl: Consistency,
    ) -> Result<ReadResult> {
        let required = self.check_available(command.table, cl)?;
        trace::event(|| {
            format!(
                "Executing single-partition query on {}",
                self.table_name(command.table)
            )
        });
        let result = if INLINE_POINT_READS {
            read_locally(&self.replica, &command, tombstone_page_limit)
                .map_err(|e| read_failure(e, cl, required, self.node().rpc_address))
        } else {
            let replica = self.replica.clone();
            let timeout = self.config.read_request_timeout;
            read_blocking(
                &self.read_stage,
                self.node().rpc_address,
                timeout,
                cl,
                required,
                move || read_locally(&replica, &command, tombstone_page_limit),
            )
            .await
        };
        if let Ok(r) = &result {
            trace::event(|| {
                format!(
                    "Merged data from memtables and {} sstables",
                    r.sstables_read
                )
            });
            trace::event(|| {
                format!(
                    "Read {} live rows and {} tombstone cells",
                    r.live_rows, r.tombstones_scanned
                )
            });
        }
        result
    }

    /// A write's trace events, as Cassandra's for a local replica: the commit log (unless the
    /// keyspace skips it), then each table's memtable.
    fn trace_write(&self, mutations: &[Mutation], durable: bool) {
        if durable {
            trace::event(|| "Appending to commitlog".to_string());
        }
        let mut tables: Vec<Uuid> = mutations.iter().map(|m| m.table).collect();
        tables.sort_unstable();
        tables.dedup();
        for table in tables {
            trace::event(|| format!("Adding to {} memtable", self.table_name(table)));
        }
    }

    /// A table's name for a trace (its id, if it is gone).
    fn table_name(&self, table: Uuid) -> String {
        self.schema()
            .table_by_id(table)
            .map_or_else(|| table.to_string(), |t| t.def.name.clone())
    }

    /// Read a token range at consistency `cl`.
    pub async fn scan(&self, command: ScanCommand, cl: Consistency) -> Result<ScanResult> {
        let table = command.table;
        let request = self.scan_unobserved(command, None, cl);
        self.metrics.observe(Op::Range, &[table], request).await
    }

    /// [`Coordinator::scan`] that ends its page once it has met `tombstone_page_limit`
    /// tombstones (`resume` set after the partition, or the row of a wide one, that reached
    /// it) instead of failing past `tombstone_failure_threshold`: DynamoDB's Scan, which never
    /// fails on deleted items.
    pub async fn scan_paged(
        &self,
        command: ScanCommand,
        tombstone_page_limit: usize,
        cl: Consistency,
    ) -> Result<ScanResult> {
        let table = command.table;
        let request = self.scan_unobserved(command, Some(tombstone_page_limit), cl);
        self.metrics.observe(Op::Range, &[table], request).await
    }

    async fn scan_unobserved(
        &self,
        command: ScanCommand,
        tombstone_page_limit: Option<usize>,
        cl: Consistency,
    ) -> Result<ScanResult> {
        let required = self.check_available(command.table, cl)?;
        trace::event(|| {
            format!(
                "Executing seq scan of {} for {}",
                self.table_name(command.table),
                describe_range(&command.start, &command.end)
            )
        });
        let replica = self.replica.clone();
        let stage = &self.read_stage;
        let result = read_blocking(
            stage,
            self.node().rpc_address,
            self.config.range_request_timeout,
            cl,
            required,
            move || match tombstone_page_limit {
                Some(limit) => replica.scan_paged(
                    command.table,
                    command.start,
                    command.end,
                    command.resume.as_ref(),
                    command.row_limit,
                    limit,
                    command.now,
                ),
                None => replica.scan(
                    command.table,
                    command.start,
                    command.end,
                    command.resume.as_ref(),
                    command.row_limit,
                    command.now,
                ),
            },
        )
        .await;
        if let Ok(r) = &result {
            trace::event(|| {
                format!(
                    "Read {} live rows and {} tombstone cells",
                    r.live_rows, r.tombstones_scanned
                )
            });
        }
        result
    }

    /// Read a table through a secondary index at consistency `cl`. Indexes are local to each
    /// replica, so this asks the replicas of the token range for their matching rows.
    pub async fn index_query(&self, query: IndexQuery, cl: Consistency) -> Result<IndexResult> {
        let table = query.table;
        let request = self.index_query_unobserved(query, cl);
        self.metrics.observe(Op::Range, &[table], request).await
    }

    async fn index_query_unobserved(
        &self,
        query: IndexQuery,
        cl: Consistency,
    ) -> Result<IndexResult> {
        let required = self.check_available(query.table, cl)?;
        trace::event(|| {
            format!(
                "Executing read on {} using index {}",
                self.table_name(query.table),
                query.index
            )
        });
        let replica = self.replica.clone();
        read_blocking(
            &self.read_stage,
            self.node().rpc_address,
            self.config.range_request_timeout,
            cl,
            required,
            move || replica.index_query(&query),
        )
        .await
    }

    /// Empty a table on every replica.
    pub async fn truncate(&self, table: Uuid) -> Result<()> {
        let replica = self.replica.clone();
        let work = run_blocking(move || replica.truncate(table));
        match tokio::time::timeout(self.config.truncate_request_timeout, work).await {
            Ok(done) => done?.map_err(CoordinatorError::Schema),
            Err(_) => Err(CoordinatorError::Internal(
                "Truncate timed out - received only 0 responses".into(),
            )),
        }
    }
}

/// Gregorian-epoch offset of the Unix epoch, in 100 ns units.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// A version-1 UUID for `micros` since the Unix epoch, with node bits from `host`.
/// What [`Coordinator::table_estimate`] answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableEstimate {
    pub rows: u64,
    pub bytes: u64,
}

pub fn timeuuid_at(micros: i64, host: Uuid) -> Uuid {
    let ticks = (micros.max(0) as u64)
        .wrapping_mul(10)
        .wrapping_add(UUID_EPOCH_OFFSET);
    let host = host.as_bytes();
    let clock_seq = u16::from_be_bytes([host[8], host[9]]) & 0x3FFF;
    let mut node = [0u8; 6];
    node.copy_from_slice(&host[10..16]);
    node[0] |= 0x01; // a random node id has the multicast bit set (RFC 4122 4.5)
    let time_low = (ticks & 0xFFFF_FFFF) as u32;
    let time_mid = ((ticks >> 32) & 0xFFFF) as u16;
    let time_hi = ((ticks >> 48) & 0x0FFF) as u16 | 0x1000;
    let mut bytes = [0u8; 16];
    bytes[0..4].copy_from_slice(&time_low.to_be_bytes());
    bytes[4..6].copy_from_slice(&time_mid.to_be_bytes());
    bytes[6..8].copy_from_slice(&time_hi.to_be_bytes());
    bytes[8..10].copy_from_slice(&(clock_seq | 0x8000).to_be_bytes());
    bytes[10..16].copy_from_slice(&node);
    Uuid::from_bytes(bytes)
}

/// A scan's token range as Cassandra's traces write it: `(start, end]`.
fn describe_range(start: &Bound<Token>, end: &Bound<Token>) -> String {
    let (open, from) = match start {
        Bound::Included(t) => ("[", t.0.to_string()),
        Bound::Excluded(t) => ("(", t.0.to_string()),
        Bound::Unbounded => ("(", "min".to_string()),
    };
    let (to, close) = match end {
        Bound::Included(t) => (t.0.to_string(), "]"),
        Bound::Excluded(t) => (t.0.to_string(), ")"),
        Bound::Unbounded => ("max".to_string(), "]"),
    };
    format!("{open}{from}, {to}{close}")
}

/// Run `command` on this node's replica: a one-row read through `read_row`, a paged one
/// through `read_paged`, anything else through `read`.
fn read_locally(
    replica: &Replica,
    command: &ReadCommand,
    tombstone_page_limit: Option<usize>,
) -> khata_replica::Result<ReadResult> {
    if command.one_row && command.row_limit != Some(0) {
        replica.read_row(command.table, &command.key, &command.ranges, command.now)
    } else if let Some(limit) = tombstone_page_limit {
        replica.read_paged(
            command.table,
            &command.key,
            &command.ranges,
            command.reversed,
            command.row_limit,
            limit,
            command.now,
        )
    } else {
        replica.read(
            command.table,
            &command.key,
            &command.ranges,
            command.reversed,
            command.row_limit,
            command.now,
        )
    }
}

/// Run a replica's read on a blocking thread within `timeout`, once the read stage has room
/// for it: its answer, its failure as the client sees it, or a `ReadTimeout` (no replica
/// answered in time, the wait for the stage included).
async fn read_blocking<T: Send + 'static>(
    stage: &tokio::sync::Semaphore,
    replica: std::net::IpAddr,
    timeout: Duration,
    cl: Consistency,
    required: u32,
    read: impl FnOnce() -> khata_replica::Result<T> + Send + 'static,
) -> Result<T> {
    let staged = async {
        let _permit = stage.acquire().await;
        run_blocking(read).await
    };
    match tokio::time::timeout(timeout, staged).await {
        Ok(done) => done?.map_err(|e| read_failure(e, cl, required, replica)),
        Err(_) => Err(CoordinatorError::ReadTimeout {
            consistency: cl,
            received: 0,
            required,
            data_present: false,
        }),
    }
}

/// Run storage work off the async threads (the engine blocks on disk and on commit-log sync).
pub(crate) async fn run_blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoordinatorError::Internal(format!("storage task failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeuuids_carry_their_time() {
        let host = Uuid::from_u128(0x1234_5678_9abc_def0_1122_3344_5566_7788);
        let u = timeuuid_at(1_700_000_000_123_456, host);
        assert_eq!(u.get_version_num(), 1);
        let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
        assert_eq!(secs, 1_700_000_000);
        assert_eq!(nanos, 123_456_000);
        assert_ne!(u, timeuuid_at(1_700_000_000_123_457, host));
    }
}

/// The node's write timestamps (see [`Coordinator::timestamp_source`]).
#[derive(Clone)]
pub struct TimestampSource {
    clock: Arc<dyn khata_env::Clock>,
    last: Arc<AtomicI64>,
}

impl std::fmt::Debug for TimestampSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimestampSource")
            .field("last", &self.last.load(Ordering::Relaxed))
            .finish()
    }
}

impl TimestampSource {
    /// The clock in microseconds, strictly above every timestamp handed out before.
    pub fn next(&self) -> i64 {
        let now = self.clock.now_micros();
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 1);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(actual) => last = actual,
            }
        }
    }
}
