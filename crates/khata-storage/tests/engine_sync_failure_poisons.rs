//! A failed fsync poisons the engine: the operation that met it fails, every later write fails
//! with `StorageError::Poisoned`, reads keep working, and once reopened (the disk healthy
//! again) the engine takes writes and has lost nothing it acknowledged. Covered: a sync failing
//! during a flush, during a commit-log sync in batch mode, and during a compaction.

mod engine_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use engine_support::*;
use khata_env::fault::{FaultOp, PathFilter};
use khata_env::{FaultFs, FileSystem, ManualClock};
use khata_storage::commitlog::SyncMode;
use khata_storage::{Engine, StorageError, TableSpec};
use khata_types::schema::CompactionStrategy;

fn data_dir() -> PathBuf {
    PathBuf::from("/node")
}

fn open_on(fs: &FaultFs, clock: &Arc<ManualClock>) -> Engine {
    let fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    open(&fs, &config(&data_dir(), clock, SyncMode::Batch))
}

fn write_rows(engine: &Engine, spec: &TableSpec, keys: std::ops::Range<u32>, model: &mut Content) {
    for k in keys {
        let v = value(u64::from(k), 200);
        engine
            .apply(insert(spec.id, k, 0, &v, START_MICROS + i64::from(k)))
            .unwrap();
        model.insert((k, 0), Bytes::from(v));
    }
}

fn assert_poisoned(engine: &Engine, spec: &TableSpec) {
    match engine.apply(insert(spec.id, 9999, 0, b"refused", START_MICROS)) {
        Err(StorageError::Poisoned(_)) => {}
        other => panic!("a write after a failed sync: {other:?}"),
    }
}

/// Generations with a TOC in the table's directory.
fn sstables_on_disk(fs: &FaultFs, spec: &TableSpec) -> Vec<u64> {
    let dir = table_dir(&data_dir(), spec);
    let mut out: Vec<u64> = fs
        .list_files()
        .iter()
        .filter(|p| p.parent() == Some(Path::new(&dir)))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            name.strip_prefix("khata-")?
                .strip_suffix("-TOC.db")?
                .parse()
                .ok()
        })
        .collect();
    out.sort_unstable();
    out
}

fn live_generations(engine: &Engine, spec: &TableSpec) -> Vec<u64> {
    let mut g: Vec<u64> = engine
        .sstables(spec.id)
        .unwrap()
        .iter()
        .map(|s| s.generation())
        .collect();
    g.sort_unstable();
    g
}

/// Reopen (after a clean drop or a power cut) with faults cleared, check the content, and
/// check that the engine takes writes, flushes and compacts again.
fn reopen_and_check(fs: &FaultFs, clock: &Arc<ManualClock>, spec: &TableSpec, model: &mut Content) {
    fs.clear_faults();
    let engine = open_on(fs, clock);
    let content = dump(&engine, spec.id, now(clock));
    for (k, v) in model.iter() {
        assert_eq!(content.get(k), Some(v), "acknowledged write {k:?} lost");
    }
    write_rows(&engine, spec, 5000..5010, model);
    engine.flush(spec.id).unwrap();
    engine.compact_major(spec.id).unwrap();
    let content = dump(&engine, spec.id, now(clock));
    for (k, v) in model.iter() {
        assert_eq!(content.get(k), Some(v), "acknowledged write {k:?} lost");
    }
}

#[test]
fn a_failed_flush_sync_poisons_until_reopened() {
    for power_cut_after in [false, true] {
        let fs = FaultFs::with_seed(7);
        let clock = manual_clock();
        let engine = open_on(&fs, &clock);
        let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
        let mut model = Content::new();
        write_rows(&engine, &spec, 0..50, &mut model);
        engine.flush(spec.id).unwrap();
        write_rows(&engine, &spec, 50..100, &mut model);

        fs.fail_next_syncs(1);
        let err = engine.flush(spec.id).unwrap_err();
        assert!(matches!(err, StorageError::Io { .. }), "{err:?}");
        assert_poisoned(&engine, &spec);
        assert_poisoned(&engine, &spec);
        // Reads still see everything acknowledged, the unflushed memtable included.
        assert_eq!(dump(&engine, spec.id, now(&clock)), model);
        assert_eq!(read_keys(&engine, spec.id, 0..100, now(&clock)), model);

        if power_cut_after {
            power_cut(&fs, engine);
        } else {
            drop(engine);
        }
        reopen_and_check(&fs, &clock, &spec, &mut model);
    }
}

#[test]
fn a_failed_commit_log_sync_poisons_until_reopened() {
    for power_cut_after in [false, true] {
        let fs = FaultFs::with_seed(8);
        let clock = manual_clock();
        let engine = open_on(&fs, &clock);
        let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
        let mut model = Content::new();
        write_rows(&engine, &spec, 0..20, &mut model);

        fs.fail_next_syncs(1);
        let err = engine
            .apply(insert(spec.id, 20, 0, b"unacknowledged", START_MICROS))
            .unwrap_err();
        assert!(
            matches!(err, StorageError::Poisoned(_) | StorageError::Io { .. }),
            "{err:?}"
        );
        assert_poisoned(&engine, &spec);
        // The failed write was not acknowledged, and reads do not show it.
        assert_eq!(dump(&engine, spec.id, now(&clock)), model);

        if power_cut_after {
            power_cut(&fs, engine);
        } else {
            drop(engine);
        }
        reopen_and_check(&fs, &clock, &spec, &mut model);
    }
}

#[test]
fn a_failed_compaction_sync_poisons_and_leaves_no_stray_sstables() {
    let fs = FaultFs::with_seed(9);
    let clock = manual_clock();
    let engine = open_on(&fs, &clock);
    let strategy = CompactionStrategy::Leveled {
        sstable_size_bytes: 16 * 1024,
        fanout_size: 10,
    };
    let spec = create_table(&engine, options(strategy, 864_000));
    let mut model = Content::new();
    for f in 0..3 {
        write_rows(&engine, &spec, f * 100..f * 100 + 100, &mut model);
        engine.flush(spec.id).unwrap();
    }
    let before = live_generations(&engine, &spec);
    assert_eq!(sstables_on_disk(&fs, &spec), before);
    // About 60 KiB into 16 KiB outputs: the third output's sync fails after two are finished.
    let third_output = before.iter().max().unwrap() + 3;
    let prefix = format!("khata-{third_output}-");
    fs.inject(
        FaultOp::SYNCS,
        PathFilter::matching(move |p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        }),
        None,
    );
    let err = engine.compact_major(spec.id).unwrap_err();
    assert!(matches!(err, StorageError::Io { .. }), "{err:?}");
    assert_poisoned(&engine, &spec);
    assert_eq!(live_generations(&engine, &spec), before);
    assert_eq!(dump(&engine, spec.id, now(&clock)), model);
    assert_eq!(
        sstables_on_disk(&fs, &spec),
        before,
        "outputs of the failed compaction were left on disk"
    );

    drop(engine);
    fs.clear_faults();
    let engine = open_on(&fs, &clock);
    assert_eq!(
        live_generations(&engine, &spec),
        before,
        "outputs of the failed compaction came back as live SSTables"
    );
    drop(engine);
    reopen_and_check(&fs, &clock, &spec, &mut model);
}
