//! Helpers shared by the engine behaviour tests: opening an engine with a manual clock and no
//! background threads, building simple mutations, reading a table back as a map, and killing
//! an engine on a [`FaultFs`] the way a power cut kills a process.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use khata_env::fault::{FaultOp, PathFilter};
use khata_env::{Clock, FaultFs, FileSystem, ManualClock};
use khata_storage::commitlog::{CommitLogConfig, SyncMode};
use khata_storage::{Engine, EngineConfig, Mutation, ScanResult, TableSpec};
use khata_types::cell::{Cell, DeletionTime, Expiry, LivenessInfo};
use khata_types::clustering::full_range;
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{CompactionStrategy, Compression, TableOptions};
use khata_types::token::DecoratedKey;
use uuid::Uuid;

/// Where every test's clock starts: 2023-11-14 22:13:20 UTC, in microseconds.
pub const START_MICROS: i64 = 1_700_000_000_000_000;
pub const MICROS_PER_SECOND: i64 = 1_000_000;
/// The one regular column the helpers write.
pub const VALUE_COLUMN: u32 = 1;

pub fn manual_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(START_MICROS))
}

pub fn batch() -> SyncMode {
    SyncMode::Batch
}

pub fn periodic() -> SyncMode {
    SyncMode::Periodic {
        period: Duration::from_secs(10),
    }
}

/// A configuration for tests: manual clock, no background threads, unthrottled compaction.
pub fn config(data_dir: &Path, clock: &Arc<ManualClock>, sync: SyncMode) -> EngineConfig {
    let mut config = EngineConfig::new(data_dir);
    config.background_threads = false;
    config.clock = clock.clone();
    config.commitlog = CommitLogConfig {
        sync,
        ..CommitLogConfig::default()
    };
    config.compaction_throughput_bytes_per_second = 0;
    config
}

pub fn open(fs: &Arc<dyn FileSystem>, config: &EngineConfig) -> Engine {
    Engine::open(fs.clone(), config.clone()).expect("opening the engine")
}

/// Table options with a strategy and gc grace, uncompressed (so sizes follow the data).
pub fn options(compaction: CompactionStrategy, gc_grace_seconds: u32) -> TableOptions {
    TableOptions {
        compaction,
        gc_grace_seconds,
        compression: Compression::None,
        ..TableOptions::default()
    }
}

/// Create table `ks.t` with `options` and return its spec.
pub fn create_table(engine: &Engine, options: TableOptions) -> TableSpec {
    let spec = TableSpec::new("ks", "t", options);
    engine
        .create_table(spec.clone())
        .expect("creating the table");
    spec
}

/// The directory of a table under a data directory.
pub fn table_dir(data_dir: &Path, spec: &TableSpec) -> PathBuf {
    data_dir
        .join("data")
        .join(&spec.keyspace)
        .join(spec.dir_name())
}

/// Partition key `i` (an int).
pub fn pk(i: u32) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&i.to_be_bytes()))
}

/// The int that [`pk`] encoded.
pub fn pk_int(key: &DecoratedKey) -> u32 {
    u32::from_be_bytes(key.key[..4].try_into().expect("a 4-byte key"))
}

/// Clustering key `i` (one int component, order-preserving).
pub fn ck(i: u32) -> Bytes {
    let mut b = vec![khata_types::clustering::VALUE];
    b.extend_from_slice(&(i ^ 0x8000_0000).to_be_bytes());
    Bytes::from(b)
}

/// The int that [`ck`] encoded.
pub fn ck_int(c: &[u8]) -> u32 {
    u32::from_be_bytes(c[1..5].try_into().expect("a 5-byte clustering")) ^ 0x8000_0000
}

/// A value of `len` bytes derived from `seed` (incompressible enough for sizes to be real).
pub fn value(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// An INSERT of one row (marker and one cell) at `timestamp`, with an optional `(ttl, now)`.
pub fn insert_update(c: u32, v: &[u8], timestamp: i64, ttl: Option<(u32, u32)>) -> Partition {
    let expiry = ttl.map(|(ttl, now)| Expiry::new(ttl, now + ttl));
    let cell = match expiry {
        Some(e) => Cell::expiring(timestamp, v.to_vec(), e.ttl, e.local_expiry),
        None => Cell::live(timestamp, v.to_vec()),
    };
    let mut row = Row {
        liveness: Some(LivenessInfo::new(timestamp, expiry)),
        ..Default::default()
    };
    row.cells.insert(CellKey::simple(VALUE_COLUMN), cell);
    let mut p = Partition::new();
    p.add_row(ck(c), row);
    p
}

pub fn insert(table: Uuid, key: u32, c: u32, v: &[u8], timestamp: i64) -> Mutation {
    Mutation::new(table, pk(key), insert_update(c, v, timestamp, None))
}

pub fn insert_ttl(
    table: Uuid,
    key: u32,
    c: u32,
    v: &[u8],
    timestamp: i64,
    ttl: u32,
    now: u32,
) -> Mutation {
    Mutation::new(
        table,
        pk(key),
        insert_update(c, v, timestamp, Some((ttl, now))),
    )
}

/// A row deletion at `timestamp`, made at local time `now`.
pub fn delete_row(table: Uuid, key: u32, c: u32, timestamp: i64, now: u32) -> Mutation {
    let mut p = Partition::new();
    p.add_row(
        ck(c),
        Row {
            deletion: Some(DeletionTime::new(timestamp, now)),
            ..Default::default()
        },
    );
    Mutation::new(table, pk(key), p)
}

/// A table's live content: (partition int, clustering int) -> value.
pub type Content = BTreeMap<(u32, u32), Bytes>;

/// The live rows of partition `key` in `p`, into `out`.
pub fn live_cells(p: &Partition, key: u32, now: u32, out: &mut Content) {
    for (c, row) in p.live_rows(now) {
        let v = row
            .cells
            .get(&CellKey::simple(VALUE_COLUMN))
            .and_then(|cell| cell.live_value(now))
            .cloned()
            .unwrap_or_default();
        out.insert((key, ck_int(c)), v);
    }
}

/// The live rows of one partition, read by key.
pub fn read_partition(engine: &Engine, table: Uuid, key: u32, now: u32) -> Content {
    try_read_partition(engine, table, key, now).expect("reading a partition")
}

pub fn try_read_partition(
    engine: &Engine,
    table: Uuid,
    key: u32,
    now: u32,
) -> khata_storage::Result<Content> {
    let (s, e) = full_range();
    let r = engine.read(table, &pk(key), &[(s, e)], false, None, now)?;
    let mut out = Content::new();
    live_cells(&r.partition, key, now, &mut out);
    Ok(out)
}

/// The whole live content of a table, by a paged full scan.
pub fn dump(engine: &Engine, table: Uuid, now: u32) -> Content {
    try_dump(engine, table, now).expect("scanning the table")
}

pub fn try_dump(engine: &Engine, table: Uuid, now: u32) -> khata_storage::Result<Content> {
    let mut out = Content::new();
    scan_pages(engine, table, 1000, now, |page| {
        for (k, p) in &page.partitions {
            live_cells(p, pk_int(k), now, &mut out);
        }
    })?;
    Ok(out)
}

/// A full scan of `table` in pages of `page_rows`, each page given to `each`.
pub fn scan_pages(
    engine: &Engine,
    table: Uuid,
    page_rows: usize,
    now: u32,
    mut each: impl FnMut(&ScanResult),
) -> khata_storage::Result<()> {
    let mut resume = None;
    loop {
        let page = engine.scan(
            table,
            Bound::Unbounded,
            Bound::Unbounded,
            resume.as_ref(),
            page_rows,
            now,
        )?;
        each(&page);
        match page.resume {
            Some(r) => resume = Some(r),
            None => return Ok(()),
        }
    }
}

/// The whole live content of a table, partition by partition through point reads.
pub fn read_keys(
    engine: &Engine,
    table: Uuid,
    keys: impl IntoIterator<Item = u32>,
    now: u32,
) -> Content {
    let mut out = Content::new();
    for k in keys {
        out.extend(read_partition(engine, table, k, now));
    }
    out
}

/// Kill the process that owns `engine` at a power cut: the disk falls back to what was synced,
/// and the dying engine's destructor can touch nothing (every file operation fails while it
/// runs), as a process that is gone could not.
pub fn power_cut(fs: &FaultFs, engine: Engine) {
    // The process dies first (nothing it still runs may touch the disk), then the power goes.
    let dead = fs.inject(FaultOp::ALL, PathFilter::Any, None);
    fs.crash();
    drop(engine);
    fs.remove_fault(dead);
}

/// Seconds of a clock.
pub fn now(clock: &ManualClock) -> u32 {
    clock.now_seconds()
}
