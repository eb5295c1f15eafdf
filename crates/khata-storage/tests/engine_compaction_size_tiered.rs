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
