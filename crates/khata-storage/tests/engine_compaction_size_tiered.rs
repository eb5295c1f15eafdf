//! Size-tiered compaction through the engine: four flushes of similar size become one SSTable,
//! SSTables of very different sizes are not merged together, and the data reads the same
//! before and after.

mod engine_support;

use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_storage::Engine;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

fn stcs() -> CompactionStrategy {
    CompactionStrategy::SizeTiered {
        min_threshold: 4,
        max_threshold: 32,
        bucket_low: 0.5,
        bucket_high: 1.5,
        // No "small SSTables all tier together" rule: only the size ratios decide.
        min_sstable_size_bytes: 0,
    }
}

/// Write `count` new partitions (`first..first + count`) of one 200-byte row each, then flush.
fn flush_batch(engine: &Engine, table: Uuid, first: u32, count: u32, ts: i64) {
    for k in first..first + count {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 200), ts))
            .unwrap();
    }
    engine.flush(table).unwrap();
}

fn generations(engine: &Engine, table: Uuid) -> Vec<u64> {
    let mut g: Vec<u64> = engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.generation())
        .collect();
    g.sort_unstable();
    g
}

#[test]
fn four_similar_flushes_compact_into_one_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let table = create_table(&engine, options(stcs(), 864_000)).id;

    // Three similar SSTables are below min_threshold: nothing to do.
    for i in 0..3 {
        flush_batch(&engine, table, i * 100, 100, START_MICROS + i64::from(i));
        assert!(engine.compact_pending(table).unwrap().is_empty());
    }
    assert_eq!(engine.sstables(table).unwrap().len(), 3);
    flush_batch(&engine, table, 300, 100, START_MICROS + 3);
    let inputs = generations(&engine, table);
    assert_eq!(inputs.len(), 4);
    let before = dump(&engine, table, now(&clock));
    assert_eq!(before.len(), 400);

    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].inputs, inputs);
    assert_eq!(outcomes[0].outputs.len(), 1);
    assert!(!outcomes[0].dropped_whole);
    assert_eq!(generations(&engine, table), outcomes[0].outputs);
    let stats = engine.sstables(table).unwrap()[0].stats().clone();
    assert_eq!(stats.partition_count, 400);
    assert_eq!(stats.level, 0);

    assert_eq!(dump(&engine, table, now(&clock)), before);
    assert_eq!(read_keys(&engine, table, 0..400, now(&clock)), before);
}

#[test]
fn sstables_of_very_different_sizes_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let table = create_table(&engine, options(stcs(), 864_000)).id;

    // One SSTable twenty times the size of the others.
    flush_batch(&engine, table, 0, 2000, START_MICROS);
    let big = generations(&engine, table);
    // Three small ones: with the big one that would be four, but they are not alike.
    for i in 0..3 {
        flush_batch(&engine, table, 10_000 + i * 100, 100, START_MICROS + 1);
        assert!(
            engine.compact_pending(table).unwrap().is_empty(),
            "the big SSTable was merged with small ones"
        );
    }
    assert_eq!(engine.sstables(table).unwrap().len(), 4);

    // A fourth small one: the four small SSTables merge, the big one is left alone.
    flush_batch(&engine, table, 10_300, 100, START_MICROS + 2);
    let small: Vec<u64> = generations(&engine, table)
        .into_iter()
        .filter(|g| !big.contains(g))
        .collect();
    assert_eq!(small.len(), 4);
    let before = dump(&engine, table, now(&clock));
    assert_eq!(before.len(), 2400);

    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].inputs, small);
    assert_eq!(outcomes[0].outputs.len(), 1);
    let mut expected = big.clone();
    expected.extend(&outcomes[0].outputs);
    assert_eq!(generations(&engine, table), expected);

    // Now a big and a medium SSTable: still unlike, still two.
    assert!(engine.compact_pending(table).unwrap().is_empty());
    assert_eq!(dump(&engine, table, now(&clock)), before);
    assert_eq!(
        read_keys(&engine, table, (0..2000).chain(10_000..10_400), now(&clock)),
        before
    );
}

/// Rows written as DynamoDB's PutItem writes them: a row deletion one microsecond before the
/// row, so a third of what the SSTable counts (row, cell, row deletion) is a tombstone.
fn flush_replacements(engine: &Engine, table: Uuid, count: u32, ts: i64, now: u32) {
    for k in 0..count {
        let mut update = insert_update(0, &value(u64::from(k), 200), ts, None);
        let row = update.rows.values_mut().next().unwrap();
        row.deletion = Some(khata_types::DeletionTime::new(ts - 1, now));
        engine
            .apply(khata_storage::Mutation::new(table, pk(k), update))
            .unwrap();
    }
    engine.flush(table).unwrap();
}

#[test]
fn tombstones_within_gc_grace_do_not_make_an_sstable_worth_rewriting_alone() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let gc_grace = 3600;
    let table = create_table(&engine, options(stcs(), gc_grace)).id;
    flush_replacements(&engine, table, 300, START_MICROS, now(&clock));
    let stats = engine.sstables(table).unwrap()[0].stats().clone();
    assert_eq!(stats.row_tombstones, 300);
    assert!(stats.tombstone_count() as f64 / (stats.cell_count + stats.row_count) as f64 > 0.2);

    // Not one of the tombstones is past gc_grace: a rewrite would purge nothing (it used to
    // run here, again and again, a thousand times per round).
    assert!(engine.compact_pending(table).unwrap().is_empty());
    clock.advance_micros(i64::from(gc_grace - 1) * MICROS_PER_SECOND);
    assert!(engine.compact_pending(table).unwrap().is_empty());

    // Past gc_grace, one rewrite purges them all, and that is the end of it.
    let before = dump(&engine, table, now(&clock));
    clock.advance_micros(2 * MICROS_PER_SECOND);
    let outcomes = engine.compact_pending(table).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].tombstones_purged, 300);
    assert_eq!(
        engine.sstables(table).unwrap()[0].stats().tombstone_count(),
        0
    );
    assert!(engine.compact_pending(table).unwrap().is_empty());
    assert_eq!(dump(&engine, table, now(&clock)), before);
}
