//! `Engine::sstable_tasks` lists a running compaction with its progress in bytes of its inputs
//! (Cassandra's `nodetool compactionstats` and `system_views.sstable_tasks`): seen while a
//! throttled major compaction runs, progress growing towards a total equal to the inputs'
//! uncompressed Data sizes (through a wide partition too, block by block), and gone once it
//! has finished. And `compaction_throughput` limits the bytes a compaction reads as they lie
//! on disk, as Cassandra's does: a compaction takes about its inputs' on-disk size over the
//! rate.

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
    // About 0.8 MB of partitions at 400 KiB/s: a compaction of some two seconds.
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

/// Run a major compaction of `table` on its own thread, sampling `sstable_tasks` every 20 ms
/// until it ends; returns the samples (progress, total) and how long the compaction took.
fn watch_major_compaction(
    engine: &Arc<khata_storage::Engine>,
    table: uuid::Uuid,
) -> (Vec<(u64, u64)>, Duration) {
    let started = Instant::now();
    let compacting = {
        let engine = engine.clone();
        std::thread::spawn(move || engine.compact_major(table).unwrap())
    };
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !compacting.is_finished() && Instant::now() < deadline {
        if let [task] = engine.sstable_tasks().as_slice() {
            seen.push((task.progress, task.total));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    compacting.join().unwrap();
    (seen, started.elapsed())
}

#[test]
fn progress_moves_through_a_wide_partition() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut config = EngineConfig::new(dir.path());
    config.background_threads = false;
    // One partition of 3 x 1,500 rows of ~200 bytes (0.9 MB, wide: its rows are merged as they
    // are read, not the partition whole) at 400 KiB/s: about two seconds. A fourth input holds
    // 20 rows of it: narrow there, counted whole by that input's scan, not again as read.
    config.compaction_throughput_bytes_per_second = 400 << 10;
    let engine = Arc::new(open(&fs, &config));
    let spec = create_table(&engine, options(CompactionStrategy::default(), 864_000));
    for rows in [0..1500u32, 1500..3000, 3000..4500, 4500..4520] {
        for c in rows {
            engine
                .apply(insert(spec.id, 7, c, &value(u64::from(c), 200), 1))
                .unwrap();
        }
        engine.flush(spec.id).unwrap();
    }
    let sstables = engine.sstables(spec.id).unwrap();
    let wide = |s: &Arc<khata_storage::sstable::SsTable>| {
        s.stats().uncompressed_data_size_bytes > config.wide_partitions.sstable_bytes
    };
    assert_eq!(
        sstables.iter().filter(|s| wide(s)).count(),
        3,
        "the partition is wide in three inputs"
    );
    let (seen, _) = watch_major_compaction(&engine, spec.id);
    let total = seen.first().map_or(0, |s| s.1);
    let inside: std::collections::BTreeSet<u64> = seen
        .iter()
        .map(|s| s.0)
        .filter(|&p| p > 0 && p < total)
        .collect();
    assert!(
        inside.len() >= 5,
        "progress took {} distinct values inside the one partition: {seen:?}",
        inside.len()
    );
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert!(seen.iter().all(|(p, t)| p <= t), "counted twice: {seen:?}");
}

#[test]
fn the_throughput_limit_counts_input_bytes_as_they_lie_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut config = EngineConfig::new(dir.path());
    config.background_threads = false;
    let engine = Arc::new(open(&fs, &config));
    let mut table_options = options(CompactionStrategy::default(), 864_000);
    table_options.compression = khata_types::schema::Compression::Lz4;
    let spec = create_table(&engine, table_options);
    // Values that compress several times over.
    for flush in 0..3u32 {
        for k in flush * 3000..(flush + 1) * 3000 {
            let v = format!("{k:08} the same words again and again, the same words again");
            engine
                .apply(insert(spec.id, k, 0, v.as_bytes(), 1))
                .unwrap();
        }
        engine.flush(spec.id).unwrap();
    }
    let sstables = engine.sstables(spec.id).unwrap();
    let on_disk: u64 = sstables.iter().map(|s| s.stats().data_size_bytes).sum();
    let uncompressed: u64 = sstables
        .iter()
        .map(|s| s.stats().uncompressed_data_size_bytes)
        .sum();
    assert!(
        uncompressed > 2 * on_disk,
        "{uncompressed} bytes compressed to {on_disk}"
    );
    // A rate at which the on-disk bytes take two seconds (the uncompressed ones would take
    // more than four).
    let rate = on_disk / 2;
    engine.set_compaction_throughput(rate);
    let (_, took) = watch_major_compaction(&engine, spec.id);
    let expected = Duration::from_secs_f64(on_disk as f64 / rate as f64);
    assert!(
        took >= expected.mul_f64(0.95),
        "{on_disk} bytes at {rate} bytes/s took {took:?}: faster than the limit"
    );
    // Counting the uncompressed bytes (what the throttle did before) would take over six
    // times as long; twice leaves room for a loaded machine.
    assert!(
        took <= expected.mul_f64(2.0),
        "{on_disk} bytes on disk ({uncompressed} uncompressed) at {rate} bytes/s took {took:?}"
    );
}

/// Write `flushes` SSTables of 400 partitions (~200 bytes each) to `table`.
fn fill(engine: &khata_storage::Engine, table: uuid::Uuid, flushes: u32) {
    for flush in 0..flushes {
        for k in flush * 400..(flush + 1) * 400 {
            engine
                .apply(insert(table, k, 0, &value(u64::from(k), 200), 1))
                .unwrap();
        }
        engine.flush(table).unwrap();
    }
}

/// The most compactions seen running at once while the background threads compact two
/// tables of four SSTables each (size-tiered picks the four) under a shared throttle.
fn most_at_once(concurrent_compactors: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut config = EngineConfig::new(dir.path());
    config.concurrent_compactors = concurrent_compactors;
    // Some 330 KB per table at 256 KiB/s shared: a few seconds in all.
    config.compaction_throughput_bytes_per_second = 256 << 10;
    let engine = Arc::new(open(&fs, &config));
    let mut tables = Vec::new();
    for name in ["a", "b"] {
        let spec = khata_storage::TableSpec::new(
            "ks",
            name,
            options(CompactionStrategy::size_tiered(), 864_000),
        );
        engine.create_table(spec.clone()).unwrap();
        tables.push(spec.id);
    }
    // Three SSTables each first (below the strategy's four), then the fourth of each at once.
    for &t in &tables {
        fill(&engine, t, 3);
    }
    for &t in &tables {
        fill(&engine, t, 1);
    }
    let mut most = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let running = engine.sstable_tasks();
        most = most.max(running.len());
        let compacted = tables
            .iter()
            .all(|&t| engine.sstables(t).unwrap().len() == 1);
        if running.is_empty() && compacted {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for &t in &tables {
        assert_eq!(engine.sstables(t).unwrap().len(), 1, "compacted");
    }
    engine.close().unwrap();
    most
}

#[test]
fn concurrent_compactors_compact_tables_at_the_same_time() {
    assert_eq!(most_at_once(2), 2, "two threads, two tables at once");
    assert_eq!(most_at_once(1), 1, "one thread, one compaction at a time");
}

/// Write SSTables of `per_sstable` partitions (~200 bytes each) to `table`, keys from `first`.
fn fill_from(engine: &khata_storage::Engine, table: uuid::Uuid, first: u32, per_sstable: u32) {
    for k in first..first + per_sstable {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 200), 1))
            .unwrap();
    }
    engine.flush(table).unwrap();
}

/// Two compaction threads compact one table's two size-tiered buckets at the same time (on
/// disjoint inputs, as Cassandra's compactors do), and the table ends with every row.
#[test]
fn two_compaction_threads_compact_one_table_at_the_same_time() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let mut config = EngineConfig::new(dir.path());
    config.concurrent_compactors = 2;
    // Some 1.4 MB of inputs at 384 KiB/s shared: a few seconds in all.
    config.compaction_throughput_bytes_per_second = 384 << 10;
    let engine = Arc::new(open(&fs, &config));
    // Buckets by size (Cassandra's 50 MiB floor would put every SSTable here in one bucket).
    let strategy = CompactionStrategy::SizeTiered {
        min_threshold: 4,
        max_threshold: 32,
        bucket_low: 0.5,
        bucket_high: 1.5,
        min_sstable_size_bytes: 1,
    };
    let spec = khata_storage::TableSpec::new("ks", "t", options(strategy, 864_000));
    engine.create_table(spec.clone()).unwrap();
    let table = spec.id;
    // Three small SSTables (300 partitions) and three three times larger (900): no bucket of
    // four yet. Then the fourth large one (the large bucket starts compacting) and the fourth
    // small one (the small bucket can start beside it).
    let (small, large) = (300, 900);
    let mut next = 0;
    for _ in 0..3 {
        fill_from(&engine, table, next, small);
        next += small;
        fill_from(&engine, table, next, large);
        next += large;
    }
    assert!(engine.sstable_tasks().is_empty(), "nothing to compact yet");
    fill_from(&engine, table, next, large);
    next += large;
    fill_from(&engine, table, next, small);
    next += small;

    let mut most = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let running = engine.sstable_tasks();
        assert!(running.iter().all(|r| r.table == table));
        most = most.max(running.len());
        if running.is_empty() && engine.sstables(table).unwrap().len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(most, 2, "both buckets compacting at once");
    // The small bucket's output is as large as a large input, but those were compacting.
    assert_eq!(engine.sstables(table).unwrap().len(), 2);
    let rows = dump(&engine, table, 1);
    assert_eq!(rows.len(), next as usize, "every partition is still there");
    engine.close().unwrap();
}
