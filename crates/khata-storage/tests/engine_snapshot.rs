//! Snapshots: `snapshot(name)` flushes, then hard-links every live SSTable component and
//! `table.options` into `<table dir>/snapshots/<name>/`. The snapshot keeps the data after
//! compaction deletes the originals, and a table directory rebuilt from it opens with exactly
//! the data of the moment it was taken. Bad names are refused.

mod engine_support;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use engine_support::*;
use khata_env::{FileSystem, RealFs};
use khata_storage::StorageError;
use khata_storage::engine::TABLE_OPTIONS_FILE;
use khata_types::schema::CompactionStrategy;

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn snapshot_links_every_component_and_outlives_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let cfg = config(dir.path(), &clock, periodic());
    let engine = open(&fs, &cfg);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    let table = spec.id;
    let tdir = table_dir(dir.path(), &spec);

    // Two flushed SSTables and unflushed writes: the snapshot must hold all of them.
    for f in 0..2 {
        for k in f * 50..f * 50 + 50 {
            engine
                .apply(insert(table, k, 0, &value(u64::from(k), 64), START_MICROS))
                .unwrap();
        }
        engine.flush(table).unwrap();
    }
    for k in 100..120 {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 64), START_MICROS))
            .unwrap();
    }
    let at_snapshot = dump(&engine, table, now(&clock));
    assert_eq!(at_snapshot.len(), 120);

    let dirs = engine.snapshot("before-compaction").unwrap();
    let snap = tdir.join("snapshots").join("before-compaction");
    assert_eq!(dirs, vec![snap.clone()]);
    let live = engine.sstables(table).unwrap();
    assert_eq!(live.len(), 3, "the snapshot did not flush first");
    let mut expected: Vec<String> = live
        .iter()
        .flat_map(|s| s.component_paths())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    expected.push(TABLE_OPTIONS_FILE.to_owned());
    expected.sort();
    assert_eq!(files(&snap), expected);
    for name in &expected {
        let original = std::fs::metadata(tdir.join(name)).unwrap();
        let link = std::fs::metadata(snap.join(name)).unwrap();
        assert_eq!(
            original.ino(),
            link.ino(),
            "{name} is a copy, not a hard link"
        );
    }

    // Later writes, a major compaction, and a reopen: the originals are gone...
    for k in 200..210 {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 64), START_MICROS))
            .unwrap();
    }
    engine.compact_major(table).unwrap();
    assert_eq!(engine.sstables(table).unwrap().len(), 1);
    let originals: Vec<_> = live.iter().flat_map(|s| s.component_paths()).collect();
    drop(live);
    for p in &originals {
        assert!(!p.exists(), "{} outlived its compaction", p.display());
    }
    drop(engine);
    let engine = open(&fs, &cfg);
    assert_eq!(dump(&engine, table, now(&clock)).len(), 130);
    drop(engine);
    // ...and the snapshot still holds every file.
    assert_eq!(files(&snap), expected);

    // A table directory rebuilt from the snapshot opens with the data of the snapshot.
    let restored = tempfile::tempdir().unwrap();
    let rdir = table_dir(restored.path(), &spec);
    std::fs::create_dir_all(&rdir).unwrap();
    for name in &expected {
        std::fs::copy(snap.join(name), rdir.join(name)).unwrap();
    }
    let engine = open(&fs, &config(restored.path(), &clock, periodic()));
    assert_eq!(engine.tables(), vec![spec.clone()]);
    assert_eq!(engine.sstables(table).unwrap().len(), 3);
    assert_eq!(dump(&engine, table, now(&clock)), at_snapshot);
    assert_eq!(read_keys(&engine, table, 0..210, now(&clock)), at_snapshot);
}

#[test]
fn bad_snapshot_names_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    for name in ["", "a/b", "..", "../escape", "/abs", "x/../../y"] {
        match engine.snapshot(name) {
            Err(StorageError::InvalidArgument(_)) => {}
            other => panic!("snapshot({name:?}): {other:?}"),
        }
    }
    // Nothing was created for them.
    let snapshots = table_dir(dir.path(), &spec).join("snapshots");
    assert!(!snapshots.exists());
    // A good name works.
    engine.snapshot("ok-1").unwrap();
    assert!(snapshots.join("ok-1").join(TABLE_OPTIONS_FILE).exists());
}

/// A restored table's `table.options` comes from another commit-log history; writes made
/// after the restore must still be replayed after a crash.
#[test]
fn writes_after_a_restore_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let clock = manual_clock();
    let engine = open(&fs, &config(dir.path(), &clock, batch()));
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    let table = spec.id;
    for k in 0..200 {
        engine
            .apply(insert(table, k, 0, &value(u64::from(k), 64), START_MICROS))
            .unwrap();
    }
    engine.snapshot("s").unwrap();
    let snap = table_dir(dir.path(), &spec).join("snapshots").join("s");
    drop(engine);

    let restored = tempfile::tempdir().unwrap();
    let rdir = table_dir(restored.path(), &spec);
    std::fs::create_dir_all(&rdir).unwrap();
    for name in files(&snap) {
        std::fs::copy(snap.join(&name), rdir.join(&name)).unwrap();
    }
    let cfg = config(restored.path(), &clock, batch());
    let engine = open(&fs, &cfg);
    for k in 1000..1010 {
        engine
            .apply(insert(table, k, 0, b"after restore", START_MICROS + 1))
            .unwrap();
    }
    // The process dies: nothing is flushed, the commit log (batch mode: synced) has it all.
    std::mem::forget(engine);
    let engine = open(&fs, &cfg);
    let content = dump(&engine, table, now(&clock));
    assert_eq!(
        content.len(),
        210,
        "acknowledged writes made after a restore were lost"
    );
}
