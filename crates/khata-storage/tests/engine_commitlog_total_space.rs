//! `commitlog_total_space`: a memtable that never fills (a quiet table, or a busy one whose
//! rows are rewritten in place, which the memtable counts as no new memory) must not keep
//! every commit-log segment since its first write. Once the segments take more than the limit,
//! the tables with unflushed data in the oldest segment are flushed and the segments go.

mod commitlog_common;
mod engine_support;

use std::path::Path;
use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_storage::commitlog::CommitLogConfig;
use khata_storage::table_spec::TableSpec;
use khata_types::schema::CompactionStrategy;

const SEGMENT: u64 = 64 << 10;
const SEGMENTS_ALLOWED: u64 = 4;

/// Commit-log segment files in the data directory (spares under their temporary names not
/// counted).
fn segments(data_dir: &Path) -> usize {
    commitlog_common::segment_files(&data_dir.join("commitlog")).len()
}

#[test]
fn the_tables_in_the_oldest_segment_are_flushed_when_the_log_passes_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let mut cfg = config(dir.path(), &clock, periodic());
    cfg.commitlog = CommitLogConfig {
        segment_size_bytes: SEGMENT,
        max_record_size_bytes: 16 << 10,
        ..cfg.commitlog
    };
    cfg.commitlog_total_space_bytes = SEGMENTS_ALLOWED * SEGMENT;
    // Memtables never fill on their own here.
    cfg.memtable_flush_size_bytes = 1 << 30;
    let engine = open(&fs, &cfg);
    let opts = options(CompactionStrategy::size_tiered(), 60);
    let quiet = TableSpec::new("ks", "quiet", opts.clone());
    let busy = TableSpec::new("ks", "busy", opts);
    engine.create_table(quiet.clone()).unwrap();
    engine.create_table(busy.clone()).unwrap();

    // One write to the quiet table, then 2 MiB of rewrites of ten rows of the busy one: 32
    // segments' worth of log, while the busy memtable stays at ten rows.
    engine
        .apply(insert(quiet.id, 7, 0, b"quiet", START_MICROS))
        .unwrap();
    let mut most = 0;
    for i in 0..2_000u32 {
        let v = value(u64::from(i), 1024);
        engine
            .apply(insert(busy.id, i % 10, 0, &v, START_MICROS + i64::from(i)))
            .unwrap();
        most = most.max(segments(dir.path()));
    }
    // The limit, the segment being written, and the one the check runs in.
    assert!(
        most as u64 <= SEGMENTS_ALLOWED + 2,
        "the commit log grew to {most} segments of {SEGMENT} bytes with a limit of {SEGMENTS_ALLOWED}"
    );
    assert!(
        !engine.sstables(quiet.id).unwrap().is_empty(),
        "the quiet table's memtable, in the oldest segment, was flushed"
    );
    assert!(!engine.sstables(busy.id).unwrap().is_empty());

    // Nothing is lost, before and after a reopen (which replays what was not flushed).
    let check = |engine: &khata_storage::Engine| {
        assert!(!read_partition(engine, quiet.id, 7, now(&clock)).is_empty());
        for k in 0..10u32 {
            let last = 1_990 + k;
            let got = read_partition(engine, busy.id, k, now(&clock));
            assert_eq!(
                got.get(&(k, 0)).map(|v| v.to_vec()),
                Some(value(u64::from(last), 1024)),
                "row {k}"
            );
        }
    };
    check(&engine);
    drop(engine);
    let engine = open(&fs, &cfg);
    check(&engine);
}

/// A configuration whose log would grow without bound but for the flushes of the busy table:
/// small segments, a limit far away, memtables flushed at 256 KiB.
fn flushing_config(dir: &Path, clock: &Arc<khata_env::ManualClock>) -> khata_storage::EngineConfig {
    let mut cfg = config(dir, clock, periodic());
    cfg.commitlog = CommitLogConfig {
        segment_size_bytes: SEGMENT,
        max_record_size_bytes: 16 << 10,
        ..cfg.commitlog
    };
    cfg.commitlog_total_space_bytes = 1 << 40;
    cfg.memtable_flush_size_bytes = 256 << 10;
    cfg
}

/// Writes 2 MiB to `busy` (distinct rows, so its memtable fills and is flushed every 256 KiB);
/// returns the most segment files seen at once.
fn write_busy(engine: &khata_storage::Engine, busy: uuid::Uuid, dir: &Path, from: u32) -> usize {
    let mut most = 0;
    for i in from..from + 2_000 {
        let v = value(u64::from(i), 1024);
        engine
            .apply(insert(busy, i, 0, &v, START_MICROS + i64::from(i)))
            .unwrap();
        most = most.max(segments(dir));
    }
    most
}

/// A memtable keeps the log only from its earliest record: a table flushed long ago (its
/// memtable started then) whose next write comes now keeps the segments from now on, and
/// writes that skip the log (a keyspace without durable writes) keep none.
#[test]
fn a_memtable_keeps_the_log_from_its_first_record_only() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let cfg = flushing_config(dir.path(), &clock);
    let engine = open(&fs, &cfg);
    let opts = options(CompactionStrategy::size_tiered(), 60);
    let quiet = TableSpec::new("ks", "quiet", opts.clone());
    let not_durable = TableSpec::new("ks", "not_durable", opts.clone());
    let busy = TableSpec::new("ks", "busy", opts);
    for t in [&quiet, &not_durable, &busy] {
        engine.create_table(t.clone()).unwrap();
    }
    // The quiet table's memtable starts here, empty; the other one gets a write that skips
    // the log.
    engine
        .apply_batch(
            vec![insert(not_durable.id, 1, 0, b"volatile", START_MICROS)],
            false,
        )
        .unwrap();
    let most = write_busy(&engine, busy.id, dir.path(), 0);
    assert!(
        most <= 4,
        "the log grew to {most} segments while only the busy table held records"
    );
    // Now the quiet table's first write: the log keeps the segments from here on only.
    engine
        .apply(insert(quiet.id, 7, 0, b"quiet", START_MICROS))
        .unwrap();
    let before = segments(dir.path());
    let most = write_busy(&engine, busy.id, dir.path(), 2_000);
    assert!(
        most > before + 20,
        "the quiet table's record keeps the segments from its write on ({before} -> {most})"
    );
    engine.flush(quiet.id).unwrap();
    engine.flush(busy.id).unwrap();
    assert!(
        segments(dir.path()) <= 2,
        "once flushed, every segment but the active one goes ({} left)",
        segments(dir.path())
    );
    // Nothing durable is lost across a reopen.
    drop(engine);
    let engine = open(&fs, &cfg);
    assert!(!read_partition(&engine, quiet.id, 7, now(&clock)).is_empty());
    assert!(!read_partition(&engine, busy.id, 3_999, now(&clock)).is_empty());
}
