//! A truncate that lands while a compaction of the table is running wins: when the compaction
//! finishes, its outputs (made of truncated data) must not be installed.
//!
//! The compaction is slowed by `compaction_throughput` (the manual clock does not move, so the
//! throttle makes it sleep) and runs on its own thread; the test truncates once the
//! compaction's first output file exists. If the truncate ever came too late, the test would
//! pass without proving anything; it cannot fail spuriously.

mod engine_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine_support::*;
use khata_env::{FaultFs, FileSystem};
use khata_storage::commitlog::SyncMode;
use khata_types::schema::CompactionStrategy;

#[test]
fn compaction_outputs_do_not_resurrect_truncated_rows() {
    let fs = FaultFs::with_seed(1);
    let clock = manual_clock();
    let dyn_fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let mut cfg = config(&PathBuf::from("/node"), &clock, SyncMode::Batch);
    // About 150 partitions of ~120 bytes at 1 MB/s with a clock that stands still: the
    // throttle's waits add up to about a second.
    cfg.compaction_throughput_bytes_per_second = 1 << 20;
    let engine = open(&dyn_fs, &cfg);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    let table = spec.id;
    for f in 0..2 {
        for k in f * 75..f * 75 + 75 {
            engine
                .apply(insert(table, k, 0, &value(u64::from(k), 100), START_MICROS))
                .unwrap();
        }
        engine.flush(table).unwrap();
    }
    let dir = table_dir(&PathBuf::from("/node"), &spec);

    std::thread::scope(|s| {
        let compaction = s.spawn(|| engine.compact_major(table));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let writing = fs
                .list_files()
                .iter()
                .any(|p| p.starts_with(&dir) && p.to_string_lossy().ends_with(".tmp"));
            if writing || compaction.is_finished() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            !compaction.is_finished(),
            "the compaction was too quick to race"
        );
        engine.truncate(table).unwrap();
        // Whatever the compaction reports, it must not bring the rows back.
        let _ = compaction.join().unwrap();
    });
    assert!(
        dump(&engine, table, now(&clock)).is_empty(),
        "a compaction that finished after a truncate installed truncated rows"
    );
    assert!(engine.sstables(table).unwrap().is_empty());
    drop(engine);
    let engine = open(&dyn_fs, &cfg);
    assert!(dump(&engine, table, now(&clock)).is_empty());
}
