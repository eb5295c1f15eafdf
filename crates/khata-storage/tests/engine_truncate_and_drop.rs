//! Truncating and dropping tables: truncate removes every row, memtables and SSTables alike, and
//! the rows stay gone after a power cut replays the commit log (and after clean restarts);
//! rows written after the truncate survive. Dropping a table removes its directory, and it
//! stays dropped across a replay. Writes, reads and DDL on a table the engine does not know are
//! `UnknownTable`.

mod engine_support;

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use engine_support::*;
use khata_env::{FaultFs, FileSystem, ManualClock};
use khata_storage::commitlog::SyncMode;
use khata_storage::{Engine, StorageError, TableSpec};
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

fn data_dir() -> PathBuf {
    PathBuf::from("/node")
}

fn open_on(fs: &FaultFs, clock: &Arc<ManualClock>) -> Engine {
    let fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    open(&fs, &config(&data_dir(), clock, SyncMode::Batch))
}

fn write(engine: &Engine, table: Uuid, keys: std::ops::Range<u32>, model: &mut Content) {
    for k in keys {
        let v = value(u64::from(k), 100);
        engine
            .apply(insert(table, k, 0, &v, START_MICROS + i64::from(k)))
            .unwrap();
        model.insert((k, 0), Bytes::from(v));
    }
}

fn files_in(fs: &FaultFs, spec: &TableSpec) -> Vec<PathBuf> {
    let dir = table_dir(&data_dir(), spec);
    fs.list_files()
        .into_iter()
        .filter(|p| p.starts_with(&dir))
        .collect()
}

fn is_unknown<T: std::fmt::Debug>(r: khata_storage::Result<T>) -> bool {
    matches!(r, Err(StorageError::UnknownTable(_)))
}

#[test]
fn truncated_rows_stay_gone_after_replay_and_restarts() {
    let fs = FaultFs::with_seed(1);
    let clock = manual_clock();
    let engine = open_on(&fs, &clock);
    let spec = create_table(&engine, options(CompactionStrategy::size_tiered(), 864_000));
    let table = spec.id;
    let mut gone = Content::new();
    write(&engine, table, 0..50, &mut gone);
    engine.flush(table).unwrap();
    write(&engine, table, 50..80, &mut gone);
    assert_eq!(dump(&engine, table, now(&clock)), gone);

    engine.truncate(table).unwrap();
    assert!(dump(&engine, table, now(&clock)).is_empty());
    assert!(read_keys(&engine, table, 0..80, now(&clock)).is_empty());
    assert!(engine.sstables(table).unwrap().is_empty());
    assert_eq!(
        files_in(&fs, &spec),
        vec![table_dir(&data_dir(), &spec).join("table.options")],
        "SSTable files outlived the truncate"
    );

    let mut model = Content::new();
    write(&engine, table, 100..110, &mut model);
    assert_eq!(dump(&engine, table, now(&clock)), model);

    // A power cut: the commit log (batch mode, all synced) holds the truncated rows too.
    power_cut(&fs, engine);
    let engine = open_on(&fs, &clock);
    assert_eq!(
        dump(&engine, table, now(&clock)),
        model,
        "truncated rows came back from the commit log"
    );
    // Clean restarts, then more writes and another power cut.
    drop(engine);
    let engine = open_on(&fs, &clock);
    drop(engine);
    let engine = open_on(&fs, &clock);
    write(&engine, table, 200..205, &mut model);
    power_cut(&fs, engine);
    let engine = open_on(&fs, &clock);
    assert_eq!(dump(&engine, table, now(&clock)), model);

    // Truncating again, with everything flushed, and writing again.
    engine.flush(table).unwrap();
    engine.truncate(table).unwrap();
    write(&engine, table, 300..302, &mut Content::new());
    power_cut(&fs, engine);
    let engine = open_on(&fs, &clock);
    let want: Content = (300..302)
        .map(|k| ((k, 0), Bytes::from(value(u64::from(k), 100))))
        .collect();
    assert_eq!(dump(&engine, table, now(&clock)), want);

    assert!(is_unknown(engine.truncate(Uuid::new_v4())));
}

#[test]
fn a_dropped_table_is_gone_for_good_and_unknown_tables_are_refused() {
    let fs = FaultFs::with_seed(2);
    let clock = manual_clock();
    let engine = open_on(&fs, &clock);
    let a = TableSpec::new(
        "ks",
        "a",
        options(CompactionStrategy::size_tiered(), 864_000),
    );
    let b = TableSpec::new(
        "ks",
        "b",
        options(CompactionStrategy::size_tiered(), 864_000),
    );
    engine.create_table(a.clone()).unwrap();
    engine.create_table(b.clone()).unwrap();
    let mut model_b = Content::new();
    write(&engine, a.id, 0..30, &mut Content::new());
    engine.flush(a.id).unwrap();
    write(&engine, a.id, 30..40, &mut Content::new());
    write(&engine, b.id, 0..20, &mut model_b);

    engine.drop_table(a.id).unwrap();
    assert!(files_in(&fs, &a).is_empty(), "{:?}", files_in(&fs, &a));
    assert!(!fs.exists(&table_dir(&data_dir(), &a)));
    assert!(is_unknown(engine.apply(insert(
        a.id,
        1,
        0,
        b"x",
        START_MICROS
    ))));
    assert!(is_unknown(try_read_partition(
        &engine,
        a.id,
        1,
        now(&clock)
    )));
    assert!(is_unknown(try_dump(&engine, a.id, now(&clock))));
    assert!(is_unknown(engine.flush(a.id)));
    assert!(is_unknown(engine.compact_major(a.id)));
    assert!(is_unknown(engine.drop_table(a.id)));
    assert_eq!(engine.tables(), vec![b.clone()]);
    assert_eq!(dump(&engine, b.id, now(&clock)), model_b);

    // A batch naming an unknown table is refused whole: nothing of it is applied.
    let batch = vec![
        insert(b.id, 500, 0, b"part of a bad batch", START_MICROS),
        insert(Uuid::new_v4(), 1, 0, b"x", START_MICROS),
    ];
    assert!(is_unknown(engine.apply_batch(batch, true)));
    assert_eq!(dump(&engine, b.id, now(&clock)), model_b);

    // The commit log still holds a's records: replay must skip them, not recreate a.
    power_cut(&fs, engine);
    let engine = open_on(&fs, &clock);
    assert_eq!(engine.tables(), vec![b.clone()]);
    assert!(!fs.exists(&table_dir(&data_dir(), &a)));
    assert!(is_unknown(engine.apply(insert(
        a.id,
        1,
        0,
        b"x",
        START_MICROS
    ))));
    assert_eq!(dump(&engine, b.id, now(&clock)), model_b);
}
