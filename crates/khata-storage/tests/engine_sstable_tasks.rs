//! `Engine::sstable_tasks` lists a running compaction with its progress in bytes of its inputs
//! (Cassandra's `nodetool compactionstats` and `system_views.sstable_tasks`): seen while a
//! throttled major compaction runs, progress growing towards a total equal to the inputs'
//! uncompressed Data sizes, and gone once it has finished.

mod engine_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_storage::EngineConfig;
use khata_types::schema::CompactionStrategy;

#[test]
fn a_running_compaction_is_listed_with_its_progress() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut config = EngineConfig::new(dir.path());
    config.background_threads = false;
    // About 0.8 MB of partitions (some 2 MB as the throttle counts them) at 400 KiB/s: a
    // compaction of some five seconds.
    config.compaction_throughput_bytes_per_second = 400 << 10;
    let engine = Arc::new(open(&fs, &config));
    let spec = create_table(&engine, options(CompactionStrategy::default(), 864_000));
    for batch in 0..3u32 {
        for k in batch * 1200..(batch + 1) * 1200 {
            engine
                .apply(insert(spec.id, k, 0, &value(u64::from(k), 200), 1))
                .unwrap();
        }
        engine.flush(spec.id).unwrap();
    }
    let total: u64 = engine
        .sstables(spec.id)
        .unwrap()
        .iter()
        .map(|s| s.stats().uncompressed_data_size_bytes)
        .sum();
    assert!(engine.sstable_tasks().is_empty());

    let compacting = {
        let engine = engine.clone();
        let id = spec.id;
        std::thread::spawn(move || engine.compact_major(id).unwrap())
    };
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !compacting.is_finished() && Instant::now() < deadline {
        if let [task] = engine.sstable_tasks().as_slice() {
            assert_eq!(
                (task.keyspace.as_str(), task.table_name.as_str()),
                ("ks", "t")
            );
            assert_eq!(
                (task.table, task.kind, task.unit),
                (spec.id, "compaction", "bytes")
            );
            assert_eq!(task.total, total, "the inputs' uncompressed Data");
            assert!(task.progress <= task.total);
            seen.push((task.id, task.progress));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let outcomes = compacting.join().unwrap();
    assert_eq!(outcomes.iter().map(|o| o.inputs.len()).sum::<usize>(), 3);
    assert!(seen.len() >= 5, "the task was seen {} times", seen.len());
    assert!(
        seen.iter().all(|(id, _)| *id == seen[0].0),
        "one task, one id"
    );
    assert!(
        seen.windows(2).all(|w| w[0].1 <= w[1].1),
        "progress only grows: {seen:?}"
    );
    assert!(
        seen.first().unwrap().1 < seen.last().unwrap().1,
        "progress moved: {seen:?}"
    );
    assert!(engine.sstable_tasks().is_empty(), "a finished task is gone");
}
