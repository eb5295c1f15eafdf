//! Tombstone thresholds through the engine, with the queue anti-pattern (rows inserted, then
//! deleted from the head, then "the next row" read): a read that meets more than
//! `tombstone_warn_threshold` tombstones carries a warning, and one that meets more than
//! `tombstone_failure_threshold` fails with `TombstoneOverwhelm`, whether the tombstones are in
//! memtables or SSTables.

mod engine_support;

use std::ops::Bound;
use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, ManualClock, RealFs};
use khata_storage::{Engine, StorageError};
use khata_types::clustering::full_range;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const WARN: usize = 10;
const FAIL: usize = 50;
const QUEUE_LEN: u32 = 100;

#[derive(Clone, Copy, Debug)]
enum Where {
    /// Inserts and deletes in the memtable.
    Memtable,
    /// Inserts flushed, deletes in the memtable.
    Split,
    /// Everything flushed and compacted into one SSTable.
    Compacted,
}

fn engine(dir: &std::path::Path, clock: &Arc<ManualClock>) -> Engine {
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut cfg = config(dir, clock, periodic());
    cfg.tombstone_warn_threshold = WARN;
    cfg.tombstone_failure_threshold = FAIL;
    open(&fs, &cfg)
}

/// A queue in partition `key`: rows 0..QUEUE_LEN enqueued, the first `dequeued` deleted.
fn queue(engine: &Engine, table: Uuid, key: u32, dequeued: u32, place: Where, now: u32) {
    for c in 0..QUEUE_LEN {
        engine
            .apply(insert(table, key, c, &[c as u8], START_MICROS))
            .unwrap();
    }
    if !matches!(place, Where::Memtable) {
        engine.flush(table).unwrap();
    }
    for c in 0..dequeued {
        engine
            .apply(delete_row(table, key, c, START_MICROS + 1, now))
            .unwrap();
    }
    if matches!(place, Where::Compacted) {
        engine.compact_major(table).unwrap();
        assert_eq!(engine.sstables(table).unwrap().len(), 1);
    }
}

/// Read the head of the queue (the first live row).
fn head(
    engine: &Engine,
    table: Uuid,
    key: u32,
    now: u32,
) -> khata_storage::Result<khata_storage::ReadResult> {
    let (s, e) = full_range();
    engine.read(table, &pk(key), &[(s, e)], false, Some(1), now)
}

#[test]
fn reading_the_head_of_a_dequeued_queue_warns_then_fails() {
    for place in [Where::Memtable, Where::Split, Where::Compacted] {
        for (dequeued, outcome) in [
            (5, "ok"),
            (WARN as u32, "ok"),
            (WARN as u32 + 1, "warn"),
            (FAIL as u32, "warn"),
            (FAIL as u32 + 1, "fail"),
            (80, "fail"),
        ] {
            let context = format!("{place:?}, {dequeued} dequeued");
            let dir = tempfile::tempdir().unwrap();
            let clock = manual_clock();
            let engine = engine(dir.path(), &clock);
            let table =
                create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000)).id;
            let now = now(&clock);
            queue(&engine, table, 1, dequeued, place, now);
            match (outcome, head(&engine, table, 1, now)) {
                ("ok" | "warn", Ok(r)) => {
                    assert_eq!(r.tombstones_scanned, dequeued as usize, "{context}");
                    let rows: Vec<u32> = r.live_rows(now).map(|(c, _)| ck_int(c)).collect();
                    assert_eq!(rows, vec![dequeued], "{context}");
                    if outcome == "warn" {
                        assert_eq!(r.warnings.len(), 1, "{context}: {:?}", r.warnings);
                        assert!(
                            r.warnings[0].contains(&format!("{dequeued} tombstone")),
                            "{context}: {:?}",
                            r.warnings
                        );
                    } else {
                        assert!(r.warnings.is_empty(), "{context}: {:?}", r.warnings);
                    }
                }
                ("fail", Err(StorageError::TombstoneOverwhelm { scanned, threshold })) => {
                    assert_eq!(threshold, FAIL, "{context}");
                    assert_eq!(
                        scanned,
                        FAIL + 1,
                        "{context}: the read went on past the limit"
                    );
                }
                (want, got) => panic!("{context}: wanted {want}, got {got:?}"),
            }
        }
    }
}

#[test]
fn the_error_is_the_one_cassandra_returns() {
    let e = StorageError::TombstoneOverwhelm {
        scanned: 51,
        threshold: 50,
    };
    assert_eq!(
        e.to_string(),
        "Scanned over 51 tombstones during query (tombstone_failure_threshold is 50); query aborted"
    );
    assert!(!e.is_retryable());
}

#[test]
fn a_scan_over_too_many_tombstones_fails() {
    for (dequeued, fails) in [(FAIL as u32, false), (FAIL as u32 + 1, true)] {
        let dir = tempfile::tempdir().unwrap();
        let clock = manual_clock();
        let engine = engine(dir.path(), &clock);
        let table = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000)).id;
        let now = now(&clock);
        queue(&engine, table, 1, dequeued, Where::Split, now);
        let r = engine.scan(table, Bound::Unbounded, Bound::Unbounded, None, 1000, now);
        match r {
            Ok(page) if !fails => {
                assert_eq!(page.tombstones_scanned, dequeued as usize);
                assert_eq!(page.live_rows, (QUEUE_LEN - dequeued) as usize);
            }
            Err(StorageError::TombstoneOverwhelm { threshold, .. }) if fails => {
                assert_eq!(threshold, FAIL);
            }
            other => panic!("{dequeued} dequeued: {other:?}"),
        }
    }
}
