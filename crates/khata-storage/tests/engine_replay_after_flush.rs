//! Reopening replays only what was not flushed: commit-log records whose data is already in
//! SSTables must not be applied again, or data that compaction has since purged (a row and the
//! tombstone that deleted it) comes back: a zombie.

mod engine_support;

use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_types::schema::CompactionStrategy;

const GC_GRACE: u32 = 60;

#[test]
fn a_purged_row_does_not_come_back_from_the_commit_log_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let cfg = config(dir.path(), &clock, periodic());
    let engine = open(&fs, &cfg);
    let table = create_table(
        &engine,
        options(CompactionStrategy::size_tiered(), GC_GRACE),
    )
    .id;

    // A row deletion, flushed, and its commit-log segment long gone (a reopen replays it,
    // flushes it and discards the segment).
    engine
        .apply(delete_row(table, 5, 0, START_MICROS + 10, now(&clock)))
        .unwrap();
    engine.flush(table).unwrap();
    drop(engine);
    let engine = open(&fs, &cfg);

    // A late write older than the deletion (a hint, a repair): shadowed, so invisible.
    engine
        .apply(insert(table, 5, 0, b"late", START_MICROS))
        .unwrap();
    engine.flush(table).unwrap();
    assert!(read_partition(&engine, table, 5, now(&clock)).is_empty());

    // After gc grace, a major compaction drops both the write and the tombstone.
    clock.advance_micros(i64::from(GC_GRACE + 1) * MICROS_PER_SECOND);
    let outcomes = engine.compact_major(table).unwrap();
    assert_eq!(outcomes[0].tombstones_purged, 1);
    assert!(engine.sstables(table).unwrap().is_empty());
    assert!(read_partition(&engine, table, 5, now(&clock)).is_empty());

    // A clean restart must not bring the late write back.
    drop(engine);
    let engine = open(&fs, &cfg);
    assert!(
        read_partition(&engine, table, 5, now(&clock)).is_empty(),
        "a purged row came back from the commit log"
    );
}

#[test]
fn a_clean_reopen_writes_no_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let cfg = config(dir.path(), &clock, periodic());
    let engine = open(&fs, &cfg);
    let table = create_table(
        &engine,
        options(CompactionStrategy::size_tiered(), GC_GRACE),
    )
    .id;
    for k in 0..100 {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 50), START_MICROS))
            .unwrap();
    }
    engine.flush(table).unwrap();
    let before: Vec<u64> = engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.generation())
        .collect();
    let content = dump(&engine, table, now(&clock));
    drop(engine);
    for _ in 0..3 {
        let engine = open(&fs, &cfg);
        let after: Vec<u64> = engine
            .sstables(table)
            .unwrap()
            .iter()
            .map(|s| s.generation())
            .collect();
        assert_eq!(after, before, "a reopen flushed already-flushed data again");
        assert_eq!(dump(&engine, table, now(&clock)), content);
    }
}
