//! Compaction merges a partition wider than `wide_partitions.sstable_bytes` row by row, so its
//! memory does not grow with the partition. Three SSTables hold a partition of 20,000 rows
//! of 1,200 bytes (about 24 MiB: overwrites, row deletions and a range tombstone spread over
//! them) beside 40 small partitions; a major compaction leaves one SSTable that reads back
//! the same, leaves no scratch file, and grows the heap by less than 8 MiB while it runs
//! (the block cache is at its default 128 MiB: the compaction's reads do not fill it). With
//! the threshold above the partition, so that it is merged whole as before, the same
//! compaction grows the heap by more than the partition: which shows what the bound measures.
//!
//! `KHATA_WIDE_ROWS=<n>` runs it with another number of rows (docs/benchmarks.md quotes the
//! growth for larger partitions), `--nocapture` prints the figures.

// The one unsafe thing here is a global allocator that counts bytes and forwards every call
// to the system allocator unchanged.
#![allow(unsafe_code)]

mod engine_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use engine_support::*;
use khata_env::{FileSystem, ManualClock, RealFs};
use khata_storage::{Engine, Mutation, WidePartitions};
use khata_types::cell::DeletionTime;
use khata_types::partition::Partition;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

/// Bytes allocated now, and the most since the last [`peak_during`] began.
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Counting;

fn grew(n: usize) {
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract for `realloc` is passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Run `f`; return its result and how far the heap grew above where it was when `f` began.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

const WIDE: u32 = 7;
/// Rows of the wide partition: 20,000 unless `KHATA_WIDE_ROWS` says otherwise.
fn rows() -> u32 {
    std::env::var("KHATA_WIDE_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}
const VALUE_BYTES: usize = 1200;
const MIB: usize = 1 << 20;

fn stcs() -> CompactionStrategy {
    CompactionStrategy::SizeTiered {
        min_threshold: 4,
        max_threshold: 32,
        bucket_low: 0.5,
        bucket_high: 1.5,
        min_sstable_size_bytes: 0,
    }
}

/// Three SSTables: the wide partition's rows and 40 small partitions; every third row
/// overwritten and every tenth deleted; then a range tombstone over rows 1000..2000.
fn load(engine: &Engine, table: Uuid, clock: &ManualClock) {
    let ts = START_MICROS;
    for c in 0..rows() {
        let v = value(u64::from(c), VALUE_BYTES);
        engine.apply(insert(table, WIDE, c, &v, ts)).unwrap();
    }
    for k in 100..140 {
        engine
            .apply(insert(table, k, 0, &value(k.into(), 100), ts))
            .unwrap();
    }
    engine.flush(table).unwrap();
    for c in (0..rows()).step_by(3) {
        let v = value(u64::from(c) + 1_000_000, VALUE_BYTES);
        engine.apply(insert(table, WIDE, c, &v, ts + 10)).unwrap();
    }
    for c in (5..rows()).step_by(10) {
        engine
            .apply(delete_row(table, WIDE, c, ts + 10, now(clock)))
            .unwrap();
    }
    engine.flush(table).unwrap();
    let mut p = Partition::new();
    p.range_tombstones
        .add(ck(1000), ck(2000), DeletionTime::new(ts + 20, now(clock)));
    engine.apply(Mutation::new(table, pk(WIDE), p)).unwrap();
    engine.flush(table).unwrap();
}

/// Load a table, compact it whole; return the heap growth during the compaction.
fn compact(dir: &Path, wide: WidePartitions) -> usize {
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let mut cfg = config(dir, &clock, periodic());
    cfg.wide_partitions = wide;
    let engine = open(&fs, &cfg);
    let table = create_table(&engine, options(stcs(), 864_000));
    load(&engine, table.id, &clock);
    // Three flushes (more when the memtable fills on its own, for larger partitions).
    assert!(engine.sstables(table.id).unwrap().len() >= 3);
    let before = read_partition(&engine, table.id, WIDE, now(&clock));
    let expected_rows = (0..rows())
        .filter(|c| c % 10 != 5 && !(1000..2000).contains(c))
        .count();
    assert_eq!(before.len(), expected_rows);
    let small_before = dump(&engine, table.id, now(&clock));
    // Reopened, so that the reads above left nothing in the block cache: chunks a
    // compaction admitted to it, or kept alive, count as growth.
    engine.close().unwrap();
    drop(engine);
    let engine = open(&fs, &cfg);

    let started = std::time::Instant::now();
    let (outcome, grown) = peak_during(|| engine.compact_major(table.id).unwrap());
    eprintln!(
        "compaction with {wide:?}: {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    assert_eq!(outcome.len(), 1, "{outcome:?}");
    assert_eq!(engine.sstables(table.id).unwrap().len(), 1);
    assert_eq!(read_partition(&engine, table.id, WIDE, now(&clock)), before);
    assert_eq!(dump(&engine, table.id, now(&clock)), small_before);
    let stats = engine.sstables(table.id).unwrap()[0].stats().clone();
    assert_eq!(stats.partition_count, 41);
    // The deleted rows' tombstones are within gc_grace_seconds, so they stay.
    assert_eq!(stats.range_tombstones, 1);
    let table_dir = table_dir(dir, &table);
    for entry in std::fs::read_dir(&table_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains("Rows"), "scratch file left: {name}");
    }
    engine.close().unwrap();
    grown
}

#[test]
fn a_wide_partition_is_compacted_in_bounded_memory() {
    let streamed = tempfile::tempdir().unwrap();
    let grown = compact(streamed.path(), WidePartitions::default());
    let whole = tempfile::tempdir().unwrap();
    let grown_whole = compact(
        whole.path(),
        WidePartitions {
            sstable_bytes: u64::MAX,
            ..WidePartitions::default()
        },
    );
    eprintln!(
        "heap growth while compacting: row by row {:.1} MiB, whole {:.1} MiB",
        grown as f64 / MIB as f64,
        grown_whole as f64 / MIB as f64
    );
    assert!(
        grown < 8 * MIB,
        "row by row the compaction grew the heap by {grown} bytes"
    );
    assert!(
        grown_whole > 24 * MIB,
        "merged whole the compaction grew the heap by only {grown_whole} bytes"
    );
}
