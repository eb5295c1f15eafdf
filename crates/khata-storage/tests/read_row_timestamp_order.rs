//! A one-row read (`Engine::read_row`) reads its sources newest first and stops at the first
//! SSTable that can no longer change the row, as Cassandra reads named columns of one row in
//! timestamp order. Each case writes versions of one row into separate SSTables (and the
//! memtable), then checks both the answer, against a whole-partition read, and how many
//! SSTables the read opened (the table's "SSTables per read" counts).
//!
//! The model-based test (`engine_model.rs`) checks the answers on random histories; these
//! cases pin down when skipping is allowed: a marker and every column newer than an older
//! SSTable, or a row deletion newer than it, and not when a column, the marker or a whole
//! collection's deletion is missing from the newer sources.

mod engine_support;

use std::sync::Arc;

use bytes::Bytes;
use engine_support::{START_MICROS, ck, config, create_table, manual_clock, open, options, pk};
use khata_env::{FileSystem, RealFs};
use khata_storage::{Engine, Mutation};
use khata_types::cell::{Cell, DeletionTime, LivenessInfo};
use khata_types::clustering::{end_bound, full_range, start_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, ColumnId, Row};
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const A: ColumnId = 1;
const B: ColumnId = 2;
/// A non-frozen list: element cells, and a whole-column deletion when it is overwritten.
const LIST: ColumnId = 3;
const SIMPLE: [ColumnId; 2] = [A, B];
const WITH_LIST: [ColumnId; 3] = [A, B, LIST];
const NOW: u32 = (START_MICROS / 1_000_000) as u32;

/// A version of row `ck(1)` of partition `pk(1)`: a marker or not, and simple cells (None: a
/// cell tombstone).
struct Version {
    ts: i64,
    marker: bool,
    cells: Vec<(ColumnId, Option<&'static str>)>,
    row_deleted: bool,
    list: List,
}

/// What a version does to the list column.
enum List {
    Untouched,
    /// An element added (`l = l + [v]`): its cell only.
    Appended(&'static str),
    /// `l = [v]`: a deletion of the whole column just before the new element.
    Overwritten(&'static str),
}

impl Version {
    fn at(ts: i64) -> Self {
        Version {
            ts,
            marker: false,
            cells: Vec::new(),
            row_deleted: false,
            list: List::Untouched,
        }
    }

    fn insert(ts: i64, a: &'static str, b: &'static str) -> Self {
        Version {
            marker: true,
            cells: vec![(A, Some(a)), (B, Some(b))],
            ..Version::at(ts)
        }
    }

    fn row(&self) -> Row {
        let mut row = Row::default();
        if self.marker {
            row.liveness = Some(LivenessInfo::new(self.ts, None));
        }
        if self.row_deleted {
            row.deletion = Some(DeletionTime::new(self.ts, NOW));
        }
        for (c, v) in &self.cells {
            let cell = match v {
                Some(v) => Cell::live(self.ts, Bytes::from_static(v.as_bytes())),
                None => Cell::tombstone(self.ts, NOW),
            };
            row.cells.insert(CellKey::simple(*c), cell);
        }
        let element = match self.list {
            List::Untouched => None,
            List::Appended(v) => Some(v),
            List::Overwritten(v) => {
                row.column_deletions
                    .insert(LIST, DeletionTime::new(self.ts - 1, NOW));
                Some(v)
            }
        };
        if let Some(v) = element {
            // Elements are keyed by when they were added, so later ones come after.
            row.cells.insert(
                CellKey::element(LIST, Bytes::from(self.ts.to_be_bytes().to_vec())),
                Cell::live(self.ts, Bytes::from_static(v.as_bytes())),
            );
        }
        row
    }
}

struct Case {
    _dir: tempfile::TempDir,
    engine: Engine,
    table: Uuid,
}

impl Case {
    /// Each inner list of versions is flushed as one SSTable, oldest first; `memtable` stays
    /// in the memtable.
    fn new(sstables: &[Vec<Version>], memtable: &[Version]) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let clock = manual_clock();
        let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
        let engine = open(&fs, &config(dir.path(), &clock, engine_support::batch()));
        // No compaction merges the SSTables behind the test's back.
        let strategy = CompactionStrategy::SizeTiered {
            min_threshold: 32,
            max_threshold: 32,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_sstable_size_bytes: 1 << 20,
        };
        let table = create_table(&engine, options(strategy, 864_000)).id;
        let case = Case {
            _dir: dir,
            engine,
            table,
        };
        for versions in sstables {
            for v in versions {
                case.write(v);
            }
            case.engine.flush(table).unwrap();
        }
        for v in memtable {
            case.write(v);
        }
        case
    }

    fn write(&self, v: &Version) {
        let mut p = Partition::default();
        p.add_row(ck(1), v.row());
        self.engine
            .apply(Mutation::new(self.table, pk(1), p))
            .unwrap();
    }

    /// Read the row alone with `columns` as the table's regular columns: what it holds live,
    /// checked against a read of the whole partition, and how many SSTables it read.
    fn read_row(&self, columns: &[ColumnId]) -> (Option<Vec<(CellKey, Bytes)>>, u64) {
        let before = self.engine.table_stats(self.table).unwrap().sstables_read;
        let point = (start_bound(&ck(1), true), end_bound(&ck(1), true));
        let got = self
            .engine
            .read_row(self.table, &pk(1), &[point], columns.iter().copied(), NOW)
            .unwrap();
        let after = self.engine.table_stats(self.table).unwrap().sstables_read;
        let whole = self
            .engine
            .read(self.table, &pk(1), &[full_range()], false, None, NOW)
            .unwrap();
        let live = |p: &Partition| {
            p.live_rows(NOW).next().map(|(_, r)| {
                r.cells
                    .iter()
                    .filter_map(|(k, c)| c.live_value(NOW).map(|v| (k.clone(), v.clone())))
                    .collect::<Vec<_>>()
            })
        };
        let answer = live(&got.partition);
        assert_eq!(answer, live(&whole.partition), "the one-row read's answer");
        (answer, after - before)
    }
}

fn values(answer: &Option<Vec<(CellKey, Bytes)>>) -> Option<Vec<(ColumnId, String)>> {
    answer.as_ref().map(|cells| {
        cells
            .iter()
            .map(|(k, v)| (k.column, String::from_utf8(v.to_vec()).unwrap()))
            .collect()
    })
}

#[test]
fn a_row_rewritten_whole_reads_only_the_newest_sstable() {
    let case = Case::new(
        &[
            vec![Version::insert(10, "a1", "b1")],
            vec![Version::insert(20, "a2", "b2")],
            vec![Version::insert(30, "a3", "b3")],
        ],
        &[],
    );
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(
        values(&answer),
        Some(vec![(A, "a3".into()), (B, "b3".into())])
    );
    assert_eq!(read, 1, "the two older SSTables are not read");
}

#[test]
fn a_row_rewritten_whole_in_the_memtable_reads_no_sstable() {
    let case = Case::new(
        &[
            vec![Version::insert(10, "a1", "b1")],
            vec![Version::insert(20, "a2", "b2")],
        ],
        &[Version::insert(30, "a3", "b3")],
    );
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(
        values(&answer),
        Some(vec![(A, "a3".into()), (B, "b3".into())])
    );
    assert_eq!(read, 0);
}

#[test]
fn a_column_the_newer_sources_lack_is_read_from_older_ones() {
    // The newest version sets only A: B's newest value is in the oldest SSTable.
    let mut newer = Version::at(30);
    newer.marker = true;
    newer.cells = vec![(A, Some("a3"))];
    let case = Case::new(
        &[
            vec![Version::insert(10, "a1", "b1")],
            vec![Version::insert(20, "a2", "b2")],
        ],
        &[newer],
    );
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(
        values(&answer),
        Some(vec![(A, "a3".into()), (B, "b2".into())])
    );
    // The SSTable at 20 settles B; the one at 10 is skipped.
    assert_eq!(read, 1);
}

#[test]
fn an_older_marker_keeps_a_row_of_null_columns_alive() {
    // UPDATE ... SET a = null, b = null (no marker) over an INSERT: the row still exists,
    // because the INSERT's marker does, and only an older SSTable holds it.
    let mut nulls = Version::at(30);
    nulls.cells = vec![(A, None), (B, None)];
    let case = Case::new(&[vec![Version::insert(10, "a1", "b1")]], &[nulls]);
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(
        values(&answer),
        Some(vec![]),
        "the row exists with no values"
    );
    assert_eq!(read, 1);
}

#[test]
fn a_newer_row_deletion_settles_the_row() {
    let mut deleted = Version::at(30);
    deleted.row_deleted = true;
    let case = Case::new(
        &[
            vec![Version::insert(10, "a1", "b1")],
            vec![Version::insert(20, "a2", "b2")],
        ],
        &[deleted],
    );
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(answer, None);
    assert_eq!(read, 0);
}

#[test]
fn a_collection_is_settled_only_by_its_whole_deletion() {
    let old = || Version {
        list: List::Overwritten("old element"),
        ..Version::insert(10, "a1", "b1")
    };
    // An appended element does not hide the list's older elements: the older SSTable is read.
    let appended = Version {
        list: List::Appended("new element"),
        ..Version::insert(30, "a3", "b3")
    };
    let case = Case::new(&[vec![old()]], &[appended]);
    let (answer, read) = case.read_row(&WITH_LIST);
    assert_eq!(
        values(&answer),
        Some(vec![
            (A, "a3".into()),
            (B, "b3".into()),
            (LIST, "old element".into()),
            (LIST, "new element".into()),
        ])
    );
    assert_eq!(read, 1);
    // An overwrite deletes the whole column first: nothing older can add to the list.
    let overwritten = Version {
        list: List::Overwritten("new element"),
        ..Version::insert(30, "a3", "b3")
    };
    let case = Case::new(&[vec![old()]], &[overwritten]);
    let (answer, read) = case.read_row(&WITH_LIST);
    assert_eq!(
        values(&answer),
        Some(vec![
            (A, "a3".into()),
            (B, "b3".into()),
            (LIST, "new element".into())
        ])
    );
    assert_eq!(read, 0);
}

#[test]
fn a_write_with_an_older_timestamp_in_a_newer_sstable_is_not_missed() {
    // USING TIMESTAMP: the newest SSTable by flush order holds the oldest write, and the
    // SSTable holding ts 40 was flushed first. Sources go by their newest write, not by age.
    let case = Case::new(
        &[
            vec![Version::insert(40, "a4", "b4")],
            vec![Version::insert(5, "a0", "b0")],
        ],
        &[],
    );
    let (answer, read) = case.read_row(&SIMPLE);
    assert_eq!(
        values(&answer),
        Some(vec![(A, "a4".into()), (B, "b4".into())])
    );
    assert_eq!(read, 1);
}
