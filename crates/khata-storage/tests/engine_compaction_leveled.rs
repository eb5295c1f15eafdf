//! Leveled compaction through the engine: flushes land in level 0 and are moved up; every level
//! above 0 is a run of SSTables with disjoint key ranges, each about `sstable_size_bytes`, and
//! each level within its target size; the data reads the same throughout.

mod engine_support;

use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_storage::Engine;
use khata_storage::sstable::SsTable;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const SSTABLE_SIZE: u64 = 64 * 1024;
const FANOUT: u32 = 10;
/// Partitions per flush: about 100 KiB of data each.
const PER_FLUSH: u32 = 400;
const FLUSHES: u32 = 24;
const VALUE_LEN: usize = 240;

fn by_level(engine: &Engine, table: Uuid) -> Vec<Vec<Arc<SsTable>>> {
    let mut levels: Vec<Vec<Arc<SsTable>>> = Vec::new();
    for s in engine.sstables(table).unwrap() {
        let level = s.stats().level as usize;
        if levels.len() <= level {
            levels.resize(level + 1, Vec::new());
        }
        levels[level].push(s);
    }
    levels
}

fn target_bytes(level: usize) -> u64 {
    u64::from(FANOUT).pow(level as u32) * SSTABLE_SIZE
}

/// Every level above 0 is a run of SSTables with disjoint key ranges: true at every moment,
/// compactions running or not.
fn check_disjoint(levels: &[Vec<Arc<SsTable>>], context: &str) {
    for (level, sstables) in levels.iter().enumerate().skip(1) {
        let mut sorted = sstables.clone();
        sorted.sort_by(|a, b| a.stats().first_key.cmp(&b.stats().first_key));
        for pair in sorted.windows(2) {
            let (a, b) = (pair[0].stats(), pair[1].stats());
            assert!(
                a.last_key < b.first_key,
                "{context}: level {level}: generations {} and {} overlap ({:?}..{:?} vs {:?}..{:?})",
                pair[0].generation(),
                pair[1].generation(),
                a.first_key,
                a.last_key,
                b.first_key,
                b.last_key
            );
        }
    }
}

/// The leveled invariants that must hold whenever no compaction is pending.
fn check_levels(engine: &Engine, table: Uuid, context: &str) {
    let levels = by_level(engine, table);
    check_disjoint(&levels, context);
    for (level, sstables) in levels.iter().enumerate().skip(1) {
        for s in sstables {
            let st = s.stats();
            // An output is cut once it reaches the target size, so it exceeds it by at most
            // the last partition appended (and that partition's share of the index).
            let largest = st.largest_partitions.first().map_or(0, |(_, size)| *size);
            assert!(
                st.data_size_bytes <= SSTABLE_SIZE + largest + 64,
                "{context}: level {level} generation {} holds {} bytes",
                s.generation(),
                st.data_size_bytes
            );
        }
        let total: u64 = sstables.iter().map(|s| s.stats().data_size_bytes).sum();
        assert!(
            total as f64 <= target_bytes(level) as f64 * 1.001,
            "{context}: level {level} holds {total} bytes, target {}",
            target_bytes(level)
        );
    }
}

#[test]
fn levels_fill_up_without_overlap_and_within_targets() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let strategy = CompactionStrategy::Leveled {
        sstable_size_bytes: SSTABLE_SIZE,
        fanout_size: FANOUT,
    };
    let table = create_table(&engine, options(strategy, 864_000)).id;

    let mut model = Content::new();
    let mut compactions = 0;
    for f in 0..FLUSHES {
        // New partitions, plus overwrites of some old ones so that compaction has to merge.
        for i in 0..PER_FLUSH {
            let k = if i % 4 == 0 && f > 0 {
                (i * 7 + f * 13) % (f * PER_FLUSH)
            } else {
                f * PER_FLUSH + i
            };
            let v = value(u64::from(f * PER_FLUSH + i), VALUE_LEN);
            let ts = START_MICROS + i64::from(f * PER_FLUSH + i);
            engine.apply(insert(table, k, 0, &v, ts)).unwrap();
            model.insert((k, 0), v.into());
        }
        engine.flush(table).unwrap();
        compactions += engine.compact_pending(table).unwrap().len();
        let levels = by_level(&engine, table);
        assert!(
            levels.first().map_or(0, Vec::len) < 4,
            "after flush {f}: level 0 holds {} SSTables with nothing pending",
            levels[0].len()
        );
        check_levels(&engine, table, &format!("after flush {f}"));
        if f % 6 == 5 {
            assert_eq!(dump(&engine, table, now(&clock)), model, "after flush {f}");
        }
    }
    assert!(
        compactions >= FLUSHES as usize / 4,
        "only {compactions} compactions"
    );

    // Flushes come in fours, so the last four went up: level 0 is empty, and the table is
    // big enough (about 2.3 MiB) to need level 2 (level 1's target is 640 KiB).
    let levels = by_level(&engine, table);
    assert_eq!(levels[0].len(), 0, "level 0 did not empty");
    assert!(
        levels.len() >= 3,
        "no level 2: {:?}",
        levels.iter().map(Vec::len).collect::<Vec<_>>()
    );
    assert!(!levels[2].is_empty());
    assert!(levels[1].len() >= 2);
    let stats = engine.table_stats(table).unwrap();
    assert_eq!(stats.pending_compactions, 0);

    assert_eq!(dump(&engine, table, now(&clock)), model);
    let keys: std::collections::BTreeSet<u32> = model.keys().map(|(k, _)| *k).collect();
    assert_eq!(read_keys(&engine, table, keys, now(&clock)), model);

    // Levels survive a reopen (the level is in each SSTable's statistics).
    let before: Vec<usize> = levels.iter().map(Vec::len).collect();
    drop(engine);
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let after: Vec<usize> = by_level(&engine, table).iter().map(Vec::len).collect();
    assert_eq!(after[1..], before[1..]);
    check_levels(&engine, table, "after reopen");
    assert_eq!(dump(&engine, table, now(&clock)), model);
}

#[test]
fn major_compaction_puts_everything_in_one_level_without_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let strategy = CompactionStrategy::Leveled {
        sstable_size_bytes: SSTABLE_SIZE,
        fanout_size: FANOUT,
    };
    let table = create_table(&engine, options(strategy, 864_000)).id;
    let mut model = Content::new();
    for f in 0..3 {
        for i in 0..PER_FLUSH {
            let k = f * PER_FLUSH + i;
            let v = value(u64::from(k), VALUE_LEN);
            engine
                .apply(insert(table, k, 0, &v, START_MICROS + i64::from(k)))
                .unwrap();
            model.insert((k, 0), v.into());
        }
        engine.flush(table).unwrap();
    }
    let outcomes = engine.compact_major(table).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].outputs.len() >= 4, "{:?}", outcomes[0]);
    let levels = by_level(&engine, table);
    // About 300 KiB: level 1 (640 KiB) holds it all.
    assert_eq!(levels.len(), 2);
    assert!(levels[0].is_empty());
    assert_eq!(levels[1].len(), outcomes[0].outputs.len());
    check_levels(&engine, table, "after major compaction");
    assert_eq!(dump(&engine, table, now(&clock)), model);
}

/// Two compaction threads compacting one leveled table in the background, while it is
/// written and flushed: every level above 0 stays a disjoint run at every moment seen (the
/// pickers see each other's inputs as compacting, and a task is picked and its inputs marked
/// in one step), the levels settle within their targets, and the data reads the same.
#[test]
fn two_compaction_threads_keep_the_levels_disjoint() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let mut config = config(dir.path(), &clock, periodic());
    config.background_threads = true;
    config.concurrent_compactors = 2;
    let engine = open(&fs, &config);
    let strategy = CompactionStrategy::Leveled {
        sstable_size_bytes: SSTABLE_SIZE,
        fanout_size: FANOUT,
    };
    let table = create_table(&engine, options(strategy, 864_000)).id;

    let mut model = Content::new();
    let mut most_at_once = 0;
    for f in 0..FLUSHES {
        for i in 0..PER_FLUSH {
            // Mostly new partitions in ascending runs (so that higher levels can take
            // non-overlapping compactions side by side), some overwrites of old ones.
            let k = if i % 8 == 0 && f > 0 {
                (i * 7 + f * 13) % (f * PER_FLUSH)
            } else {
                f * PER_FLUSH + i
            };
            let v = value(u64::from(f * PER_FLUSH + i), VALUE_LEN);
            let ts = START_MICROS + i64::from(f * PER_FLUSH + i);
            engine.apply(insert(table, k, 0, &v, ts)).unwrap();
            model.insert((k, 0), v.into());
            if i % 50 == 0 {
                most_at_once = most_at_once.max(engine.sstable_tasks().len());
                check_disjoint(&by_level(&engine, table), &format!("flush {f}, row {i}"));
            }
        }
        engine.flush(table).unwrap();
        check_disjoint(&by_level(&engine, table), &format!("after flush {f}"));
    }
    // Whatever is still pending, run by this thread beside the background ones.
    engine.compact_pending(table).unwrap();
    assert!(
        engine.sstable_tasks().is_empty(),
        "compactions still running"
    );
    check_levels(&engine, table, "settled");
    assert_eq!(engine.table_stats(table).unwrap().pending_compactions, 0);
    assert_eq!(dump(&engine, table, now(&clock)), model);
    let keys: std::collections::BTreeSet<u32> = model.keys().map(|(k, _)| *k).collect();
    assert_eq!(read_keys(&engine, table, keys, now(&clock)), model);
    println!("most compactions at once: {most_at_once}");
    engine.close().unwrap();
}
