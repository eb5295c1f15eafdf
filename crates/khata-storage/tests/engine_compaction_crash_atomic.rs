//! The SSTables a compaction replaces go whole or not at all across a crash. A compaction
//! that purged tombstones (past gc grace) leaves no trace of them; if a crash then kept some
//! of its inputs (the data the tombstones shadowed) and lost others (the tombstones), the
//! deleted rows would come back. The inputs are named in a durable obsolescence log before
//! any is deleted, and start-up finishes the deletions. A truncate's SSTables likewise.

mod engine_support;

use std::path::PathBuf;
use std::sync::Arc;

use engine_support::*;
use khata_env::{FaultFs, FaultOp, FileSystem, ManualClock, PathFilter};
use khata_storage::Engine;
use khata_storage::commitlog::SyncMode;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const KEYS: u32 = 20;

fn stcs() -> CompactionStrategy {
    CompactionStrategy::SizeTiered {
        min_threshold: 4,
        max_threshold: 32,
        bucket_low: 0.5,
        bucket_high: 1.5,
        min_sstable_size_bytes: 0,
    }
}

fn open_on(fs: &FaultFs, clock: &Arc<ManualClock>) -> Engine {
    let fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    Engine::open(fs, config(&PathBuf::from("/node"), clock, SyncMode::Batch)).unwrap()
}

/// Two SSTables: the older holds tombstones of every key (gc grace 0), the newer the rows
/// they shadow (written with older timestamps). Returns their generations.
fn shadowed(engine: &Engine, clock: &ManualClock, table: Uuid) -> (u64, u64) {
    let t0 = now(clock);
    for k in 0..KEYS {
        engine
            .apply(delete_row(table, k, 0, START_MICROS + 10, t0))
            .unwrap();
    }
    engine.flush(table).unwrap();
    for k in 0..KEYS {
        engine
            .apply(insert(table, k, 0, b"deleted", START_MICROS))
            .unwrap();
    }
    engine.flush(table).unwrap();
    let mut generations: Vec<u64> = engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.generation())
        .collect();
    generations.sort_unstable();
    assert_eq!(generations.len(), 2);
    assert!(dump(engine, table, now(clock)).is_empty());
    (generations[0], generations[1])
}

#[test]
fn a_crash_among_a_compactions_deletions_does_not_bring_purged_deletes_back() {
    let fs = FaultFs::new();
    let clock = manual_clock();
    let engine = open_on(&fs, &clock);
    let table = create_table(&engine, options(stcs(), 0)).id;
    let (tombstones, data) = shadowed(&engine, &clock, table);
    clock.advance_micros(2 * MICROS_PER_SECOND);
    // The data SSTable's files cannot be deleted: the process "dies" with the tombstones'
    // SSTable gone and the data's still there.
    let stuck = fs.inject(
        &[FaultOp::RemoveFile],
        PathFilter::contains(format!("khata-{data}-")),
        None,
    );
    let outcomes = engine.compact_major(table).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].tombstones_purged as u64, u64::from(KEYS));
    assert!(dump(&engine, table, now(&clock)).is_empty());
    let files = fs.list_files();
    let has = |g: u64| {
        files
            .iter()
            .any(|p| p.display().to_string().contains(&format!("khata-{g}-TOC")))
    };
    assert!(!has(tombstones), "the tombstones' SSTable is deleted");
    assert!(has(data), "the data's SSTable could not be");
    power_cut(&fs, engine);
    fs.remove_fault(stuck);

    let engine = open_on(&fs, &clock);
    assert!(
        dump(&engine, table, now(&clock)).is_empty(),
        "deleted rows came back after the crash"
    );
    assert!(
        engine.sstables(table).unwrap().is_empty(),
        "start-up finished the deletion"
    );
    assert!(
        !fs.list_files()
            .iter()
            .any(|p| p.display().to_string().contains("obsolete-")),
        "the log is gone once it is done"
    );
}

#[test]
fn a_completed_compaction_leaves_no_log_and_a_truncate_is_logged_too() {
    let fs = FaultFs::new();
    let clock = manual_clock();
    let engine = open_on(&fs, &clock);
    let table = create_table(&engine, options(stcs(), 0)).id;
    shadowed(&engine, &clock, table);
    clock.advance_micros(2 * MICROS_PER_SECOND);
    engine.compact_major(table).unwrap();
    let logs = |fs: &FaultFs| {
        fs.list_files()
            .iter()
            .filter(|p| p.display().to_string().contains("obsolete-"))
            .count()
    };
    assert_eq!(logs(&fs), 0);

    // A truncate whose deletions are cut short by a crash: none of its SSTables come back.
    for k in 0..KEYS {
        engine
            .apply(insert(table, k, 0, b"truncated", START_MICROS + 100))
            .unwrap();
        if k % 5 == 4 {
            engine.flush(table).unwrap();
        }
    }
    let generations: Vec<u64> = engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.generation())
        .collect();
    assert_eq!(generations.len(), 4);
    let last = *generations.iter().max().unwrap();
    let stuck = fs.inject(
        &[FaultOp::RemoveFile],
        PathFilter::contains(format!("khata-{last}-")),
        None,
    );
    engine.truncate(table).unwrap();
    assert_eq!(logs(&fs), 1);
    power_cut(&fs, engine);
    fs.remove_fault(stuck);
    let engine = open_on(&fs, &clock);
    assert!(dump(&engine, table, now(&clock)).is_empty());
    assert_eq!(logs(&fs), 0);
}
