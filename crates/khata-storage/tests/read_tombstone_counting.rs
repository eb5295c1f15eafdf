//! What a read counts as tombstones, as Cassandra's read metrics count them (`ReadCommand`'s
//! metric-recording transformation): each cell not live (a cell tombstone, an expired cell),
//! and a row's deletion only when nothing of the row is live and no cell was counted. A row
//! written over its own deletion (an INSERT of a collection, DynamoDB's PutItem) or over a
//! collection deletion counts none. And a read given a `tombstone_page_limit` (DynamoDB's
//! Query) stops after the row with which it met that many, instead of failing past
//! `tombstone_failure_threshold`.

mod engine_support;

use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, ManualClock, RealFs};
use khata_storage::{Engine, Mutation, StorageError};
use khata_types::cell::{Cell, DeletionTime};
use khata_types::clustering::full_range;
use khata_types::row::CellKey;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const FAIL: usize = 20;
const COLLECTION_COLUMN: u32 = 2;

fn engine(dir: &std::path::Path, clock: &Arc<ManualClock>) -> Engine {
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut cfg = config(dir, clock, periodic());
    cfg.tombstone_warn_threshold = 10;
    cfg.tombstone_failure_threshold = FAIL;
    open(&fs, &cfg)
}

fn setup() -> (tempfile::TempDir, Arc<ManualClock>, Engine, Uuid) {
    let dir = tempfile::tempdir().unwrap();
    let clock = manual_clock();
    let engine = engine(dir.path(), &clock);
    let table = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000)).id;
    (dir, clock, engine, table)
}

/// A row written as an INSERT of a collection writes it: its deletion just below the write,
/// a collection deletion, the row marker and cells.
fn put_over_deletion(table: Uuid, c: u32, timestamp: i64, now: u32) -> Mutation {
    let mut m = insert(table, 1, c, b"v", timestamp);
    let row = m.update.rows.get_mut(&ck(c)).unwrap();
    row.deletion = Some(DeletionTime::new(timestamp - 1, now));
    row.column_deletions
        .insert(COLLECTION_COLUMN, DeletionTime::new(timestamp - 1, now));
    row.cells.insert(
        CellKey::element(COLLECTION_COLUMN, b"k".to_vec()),
        Cell::live(timestamp, b"x".to_vec()),
    );
    m
}

fn read(
    engine: &Engine,
    table: Uuid,
    row_limit: Option<usize>,
    page_limit: Option<usize>,
    now: u32,
) -> khata_storage::Result<khata_storage::ReadResult> {
    let (s, e) = full_range();
    engine.read_paged(table, &pk(1), &[(s, e)], false, row_limit, page_limit, now)
}

#[test]
fn a_row_written_over_its_deletion_is_no_tombstone() {
    for flushed in [false, true] {
        let (_dir, clock, engine, table) = setup();
        let now = now(&clock);
        for c in 0..30 {
            engine
                .apply(put_over_deletion(table, c, START_MICROS, now))
                .unwrap();
        }
        if flushed {
            engine.flush(table).unwrap();
        }
        let r = read(&engine, table, None, None, now).unwrap();
        assert_eq!((r.live_rows, r.tombstones_scanned), (30, 0), "{flushed}");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }
}

#[test]
fn deleted_rows_count_one_and_dead_cells_each_count() {
    let (_dir, clock, engine, table) = setup();
    let now = now(&clock);
    // Rows 0..5 deleted: one tombstone each.
    for c in 0..5 {
        engine
            .apply(insert(table, 1, c, b"v", START_MICROS))
            .unwrap();
        engine
            .apply(delete_row(table, 1, c, START_MICROS + 1, now))
            .unwrap();
    }
    // Rows 5..8 expired (marker and cell): the expired cell counts, the row not again.
    for c in 5..8 {
        engine
            .apply(insert_ttl(table, 1, c, b"v", START_MICROS, 1, now))
            .unwrap();
    }
    // Row 8 live, with a cell tombstone in a collection: that cell counts.
    let mut m = put_over_deletion(table, 8, START_MICROS, now);
    m.update.rows.get_mut(&ck(8)).unwrap().cells.insert(
        CellKey::element(COLLECTION_COLUMN, b"gone".to_vec()),
        Cell::tombstone(START_MICROS, now),
    );
    engine.apply(m).unwrap();
    let later = now + 10;
    let r = read(&engine, table, None, None, later).unwrap();
    assert_eq!((r.live_rows, r.tombstones_scanned), (1, 5 + 3 + 1));
}

#[test]
fn a_paged_read_ends_at_its_tombstone_limit_instead_of_failing() {
    for flushed in [false, true] {
        let (_dir, clock, engine, table) = setup();
        let now = now(&clock);
        for c in 0..100 {
            engine
                .apply(put_over_deletion(table, c, START_MICROS, now))
                .unwrap();
        }
        if flushed {
            engine.flush(table).unwrap();
        }
        for c in 0..60 {
            engine
                .apply(delete_row(table, 1, c, START_MICROS + 1, now))
                .unwrap();
        }
        // Without a page limit: past the failure threshold, the read fails.
        assert!(matches!(
            read(&engine, table, Some(1), None, now),
            Err(StorageError::TombstoneOverwhelm { .. })
        ));
        // With one: the read stops after the row that reached it, the last row it returns.
        let r = read(&engine, table, Some(1), Some(25), now).unwrap();
        assert!(r.limit_reached, "{flushed}");
        assert_eq!((r.live_rows, r.tombstones_scanned), (0, 25));
        let last = r.partition.rows.keys().next_back().unwrap();
        assert_eq!(ck_int(last), 24);
        // A page limit above the failure threshold replaces it: no failure.
        let r = read(&engine, table, Some(1), Some(1000), now).unwrap();
        assert_eq!((r.live_rows, r.tombstones_scanned), (1, 60));
        let live: Vec<u32> = r.live_rows(now).map(|(c, _)| ck_int(c)).collect();
        assert_eq!(live, vec![60]);
    }
}

#[test]
fn a_paged_scan_ends_its_page_at_the_tombstone_limit_and_resumes() {
    use std::ops::Bound;
    for wide in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let clock = manual_clock();
        let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
        let mut cfg = config(dir.path(), &clock, periodic());
        cfg.tombstone_failure_threshold = FAIL;
        if wide {
            cfg.wide_partitions = khata_storage::WidePartitions {
                memtable_rows: 0,
                sstable_bytes: 0,
            };
        }
        let engine = open(&fs, &cfg);
        let table = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000)).id;
        let now = now(&clock);
        // Partitions 1..=3: 100 rows each, the first 60 deleted.
        for key in 1..=3 {
            for c in 0..100 {
                engine
                    .apply(insert(table, key, c, b"v", START_MICROS))
                    .unwrap();
            }
            for c in 0..60 {
                engine
                    .apply(delete_row(table, key, c, START_MICROS + 1, now))
                    .unwrap();
            }
        }
        engine.flush(table).unwrap();
        // Without a page limit the scan fails past the threshold.
        assert!(matches!(
            engine.scan(table, Bound::Unbounded, Bound::Unbounded, None, 1000, now),
            Err(StorageError::TombstoneOverwhelm { .. })
        ));
        let mut resume = None;
        let mut live = 0;
        let mut pages = 0;
        loop {
            let page = engine
                .scan_paged(
                    table,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    resume.as_ref(),
                    1000,
                    25,
                    now,
                )
                .unwrap();
            pages += 1;
            live += page.live_rows;
            assert!(pages < 100, "{wide}: the scan does not end");
            match page.resume {
                Some(r) => resume = Some(r),
                None => break,
            }
        }
        assert_eq!(live, 3 * 40, "{wide}");
        assert!(pages >= 3, "{wide}: {pages} pages");
    }
}
