//! Tombstone purging through the engine: a tombstone survives compaction while younger than
//! `gc_grace_seconds`, is purged by a compaction after that, but never while data it shadows
//! may still exist outside the compaction (another SSTable, a memtable). The deleted row never
//! comes back.

mod engine_support;

use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, ManualClock, RealFs};
use khata_storage::Engine;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const GC_GRACE: u32 = 3600;
const VICTIM: u32 = 5;

fn stcs() -> CompactionStrategy {
    CompactionStrategy::SizeTiered {
        min_threshold: 4,
        max_threshold: 32,
        bucket_low: 0.5,
        bucket_high: 1.5,
        min_sstable_size_bytes: 0,
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    engine: Engine,
    table: Uuid,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let table = create_table(&engine, options(stcs(), GC_GRACE)).id;
    Setup {
        _dir: dir,
        clock,
        engine,
        table,
    }
}

fn advance(clock: &ManualClock, seconds: u32) {
    clock.advance_micros(i64::from(seconds) * MICROS_PER_SECOND);
}

fn row_tombstones(engine: &Engine, table: Uuid) -> u64 {
    engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.stats().row_tombstones)
        .sum()
}

fn victim_rows(s: &Setup) -> Content {
    read_partition(&s.engine, s.table, VICTIM, now(&s.clock))
}

/// `count` partitions from `first`, one row each, then a flush.
fn flush_filler(s: &Setup, first: u32, count: u32) {
    for k in first..first + count {
        s.engine
            .apply(insert(
                s.table,
                k,
                0,
                &value(u64::from(k), 100),
                START_MICROS,
            ))
            .unwrap();
    }
    s.engine.flush(s.table).unwrap();
}

#[test]
fn tombstone_survives_within_gc_grace_and_is_purged_after() {
    let s = setup();
    let t0 = now(&s.clock);
    s.engine
        .apply(insert(s.table, VICTIM, 0, b"old", START_MICROS))
        .unwrap();
    s.engine
        .apply(insert(s.table, 6, 0, b"kept", START_MICROS))
        .unwrap();
    s.engine.flush(s.table).unwrap();
    s.engine
        .apply(delete_row(s.table, VICTIM, 0, START_MICROS + 10, t0))
        .unwrap();
    s.engine.flush(s.table).unwrap();
    assert!(victim_rows(&s).is_empty());

    // Within gc grace: the merge drops the shadowed data but keeps the tombstone.
    let outcomes = s.engine.compact_major(s.table).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].tombstones_purged, 0);
    assert_eq!(s.engine.sstables(s.table).unwrap().len(), 1);
    assert_eq!(row_tombstones(&s.engine, s.table), 1);
    assert!(victim_rows(&s).is_empty());

    // Exactly gc_grace_seconds later it is still too early (the deletion time must be before
    // now - gc_grace).
    advance(&s.clock, GC_GRACE);
    let outcomes = s.engine.compact_major(s.table).unwrap();
    assert_eq!(outcomes[0].tombstones_purged, 0);
    assert_eq!(row_tombstones(&s.engine, s.table), 1);

    advance(&s.clock, 1);
    let outcomes = s.engine.compact_major(s.table).unwrap();
    assert_eq!(outcomes[0].tombstones_purged, 1);
    assert_eq!(row_tombstones(&s.engine, s.table), 0);
    assert_eq!(s.engine.table_stats(s.table).unwrap().tombstones, 0);
    assert!(victim_rows(&s).is_empty(), "zombie after the purge");
    assert_eq!(
        read_partition(&s.engine, s.table, 6, now(&s.clock)),
        Content::from([((6, 0), bytes::Bytes::from_static(b"kept"))])
    );
}

#[test]
fn tombstone_is_kept_while_an_sstable_outside_the_compaction_holds_what_it_shadows() {
    let s = setup();
    let t0 = now(&s.clock);
    // SSTable A: large, and holds the victim row.
    s.engine
        .apply(insert(s.table, VICTIM, 0, b"old", START_MICROS))
        .unwrap();
    flush_filler(&s, 10_000, 2000);
    let a = s.engine.sstables(s.table).unwrap()[0].generation();
    // SSTable B deletes the victim; three more of B's size make a size-tiered bucket without A.
    s.engine
        .apply(delete_row(s.table, VICTIM, 0, START_MICROS + 10, t0))
        .unwrap();
    flush_filler(&s, 20_000, 100);
    for i in 1..4 {
        flush_filler(&s, 20_000 + i * 100, 100);
    }
    assert_eq!(s.engine.sstables(s.table).unwrap().len(), 5);
    assert!(victim_rows(&s).is_empty());

    advance(&s.clock, GC_GRACE + 10);
    let outcomes = s.engine.compact_pending(s.table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(
        !outcomes[0].inputs.contains(&a),
        "the large SSTable was merged with the small ones"
    );
    assert_eq!(outcomes[0].inputs.len(), 4);
    assert_eq!(
        outcomes[0].tombstones_purged, 0,
        "purged a tombstone whose shadowed data is in an SSTable outside the compaction"
    );
    assert_eq!(row_tombstones(&s.engine, s.table), 1);
    assert!(victim_rows(&s).is_empty(), "zombie");

    // With A in the compaction, the tombstone and what it shadows go together.
    let outcomes = s.engine.compact_major(s.table).unwrap();
    assert_eq!(outcomes[0].tombstones_purged, 1);
    assert_eq!(row_tombstones(&s.engine, s.table), 0);
    assert!(victim_rows(&s).is_empty(), "zombie");
    assert_eq!(dump(&s.engine, s.table, now(&s.clock)).len(), 2400);
}

#[test]
fn tombstone_is_kept_while_a_memtable_holds_older_data() {
    let s = setup();
    let t0 = now(&s.clock);
    s.engine
        .apply(delete_row(s.table, VICTIM, 0, START_MICROS + 10, t0))
        .unwrap();
    for i in 0..4 {
        flush_filler(&s, 20_000 + i * 100, 100);
    }
    // A late write with an older timestamp (a hint, a repair) sits in the memtable.
    s.engine
        .apply(insert(s.table, VICTIM, 0, b"late", START_MICROS))
        .unwrap();
    assert!(victim_rows(&s).is_empty());

    advance(&s.clock, GC_GRACE + 10);
    let outcomes = s.engine.compact_pending(s.table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(
        outcomes[0].tombstones_purged, 0,
        "purged a tombstone whose shadowed data is in a memtable"
    );
    assert!(victim_rows(&s).is_empty(), "zombie");
    s.engine.flush(s.table).unwrap();
    assert!(victim_rows(&s).is_empty(), "zombie after the flush");

    let outcomes = s.engine.compact_major(s.table).unwrap();
    assert_eq!(outcomes[0].tombstones_purged, 1);
    assert_eq!(row_tombstones(&s.engine, s.table), 0);
    assert!(victim_rows(&s).is_empty(), "zombie");
}
