//! Model-based test of the storage engine.
//!
//! Random sequences of writes (with explicit timestamps and TTLs), cell, row, range and
//! partition deletions, flushes, compactions under each strategy, clock advances and
//! reopenings run against the engine and against a deliberately naive reference model; after
//! every step, reads of every partition (whole, sliced forwards and reversed with limits) and a
//! paged full scan must agree with the model.
//!
//! The model keeps every write as a fact and computes what is visible at `now` from first
//! principles: for each cell the greatest version by the reconciliation order wins, unless a
//! deletion at a timestamp >= its own shadows it, and it is visible if live at `now`. It shares
//! no code with the engine's merge and purge paths, so purging a tombstone too early (a zombie)
//! or losing a write on flush, compaction or replay shows up as a difference.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use khata_env::{Clock, ManualClock, RealFs};
use khata_storage::commitlog::{CommitLogConfig, SyncMode};
use khata_storage::{Engine, EngineConfig, Mutation, TableSpec, WidePartitions};
use khata_types::cell::{Cell, DeletionTime, Expiry, LivenessInfo};
use khata_types::clustering::{end_bound, full_range, start_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{CompactionStrategy, TableOptions};
use khata_types::token::DecoratedKey;
use proptest::prelude::*;

const STATIC_COL: u32 = 9;
const LIST_COL: u32 = 3;
/// The regular columns: two simple ones (1, 2) and the list.
const REGULAR_COLS: [u32; 3] = [1, 2, LIST_COL];

fn ck(v: u8) -> Bytes {
    // An order-preserving encoding of one int clustering component: header, then the
    // big-endian value with the sign bit flipped.
    let mut b = vec![khata_types::clustering::VALUE];
    b.extend_from_slice(&((i32::from(v)) as u32 ^ 0x8000_0000).to_be_bytes());
    Bytes::from(b)
}

fn pk(v: u8) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&i32::from(v).to_be_bytes()))
}

#[derive(Clone, Debug)]
enum Op {
    Insert {
        key: u8,
        ck: u8,
        cols: Vec<(u32, u8)>,
        ttl: Option<u8>,
        jitter: u16,
    },
    Update {
        key: u8,
        ck: u8,
        col: u32,
        value: u8,
        ttl: Option<u8>,
        jitter: u16,
    },
    ListAppend {
        key: u8,
        ck: u8,
        elem: u8,
        value: u8,
        jitter: u16,
    },
    ListOverwrite {
        key: u8,
        ck: u8,
        elems: Vec<u8>,
        jitter: u16,
    },
    Static {
        key: u8,
        value: u8,
        jitter: u16,
    },
    DeleteCell {
        key: u8,
        ck: u8,
        col: u32,
        jitter: u16,
    },
    DeleteRow {
        key: u8,
        ck: u8,
        jitter: u16,
    },
    DeleteRange {
        key: u8,
        lo: u8,
        hi: u8,
        lo_incl: bool,
        hi_incl: bool,
        jitter: u16,
    },
    DeletePartition {
        key: u8,
        jitter: u16,
    },
    Flush,
    CompactPending,
    CompactMajor,
    Advance {
        seconds: u8,
    },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u8..6;
    let ckv = 0u8..12;
    let jitter = 0u16..3000;
    prop_oneof![
        8 => (key.clone(), ckv.clone(), prop::collection::vec((1u32..3, any::<u8>()), 0..3), prop::option::weighted(0.3, 1u8..8), jitter.clone())
            .prop_map(|(key, ck, cols, ttl, jitter)| Op::Insert { key, ck, cols, ttl, jitter }),
        6 => (key.clone(), ckv.clone(), 1u32..3, any::<u8>(), prop::option::weighted(0.3, 1u8..8), jitter.clone())
            .prop_map(|(key, ck, col, value, ttl, jitter)| Op::Update { key, ck, col, value, ttl, jitter }),
        2 => (key.clone(), ckv.clone(), 0u8..4, any::<u8>(), jitter.clone())
            .prop_map(|(key, ck, elem, value, jitter)| Op::ListAppend { key, ck, elem, value, jitter }),
        1 => (key.clone(), ckv.clone(), prop::collection::vec(0u8..4, 0..3), jitter.clone())
            .prop_map(|(key, ck, elems, jitter)| Op::ListOverwrite { key, ck, elems, jitter }),
        2 => (key.clone(), any::<u8>(), jitter.clone()).prop_map(|(key, value, jitter)| Op::Static { key, value, jitter }),
        2 => (key.clone(), ckv.clone(), 1u32..3, jitter.clone()).prop_map(|(key, ck, col, jitter)| Op::DeleteCell { key, ck, col, jitter }),
        3 => (key.clone(), ckv.clone(), jitter.clone()).prop_map(|(key, ck, jitter)| Op::DeleteRow { key, ck, jitter }),
        2 => (key.clone(), ckv.clone(), ckv.clone(), any::<bool>(), any::<bool>(), jitter.clone())
            .prop_map(|(key, lo, hi, lo_incl, hi_incl, jitter)| Op::DeleteRange { key, lo: lo.min(hi), hi: lo.max(hi), lo_incl, hi_incl, jitter }),
        1 => (key, jitter).prop_map(|(key, jitter)| Op::DeletePartition { key, jitter }),
        3 => Just(Op::Flush),
        2 => Just(Op::CompactPending),
        1 => Just(Op::CompactMajor),
        2 => (1u8..30).prop_map(|seconds| Op::Advance { seconds }),
        1 => Just(Op::Reopen),
    ]
}

/// Every version of one cell, and every deletion, as facts.
#[derive(Default, Clone, Debug)]
struct ModelPartition {
    cells: BTreeMap<(Option<Bytes>, CellKey), Vec<Cell>>, // None clustering = static row
    markers: BTreeMap<Bytes, Vec<LivenessInfo>>,
    row_deletions: Vec<(Bytes, DeletionTime)>,
    column_deletions: Vec<(Bytes, u32, DeletionTime)>,
    range_deletions: Vec<(Bytes, Bytes, DeletionTime)>,
    partition_deletions: Vec<DeletionTime>,
}

type LiveRow = BTreeMap<CellKey, Bytes>;

#[derive(Debug, PartialEq, Eq, Default)]
struct LiveView {
    static_cells: LiveRow,
    rows: BTreeMap<Bytes, LiveRow>,
}

impl ModelPartition {
    fn shadow_ts(&self, clustering: Option<&Bytes>, column: Option<u32>) -> Option<i64> {
        let mut d: Option<i64> = self
            .partition_deletions
            .iter()
            .map(|d| d.marked_for_delete_at)
            .max();
        let mut bump = |t: i64| d = Some(d.map_or(t, |x| x.max(t)));
        if let Some(c) = clustering {
            for (k, del) in &self.row_deletions {
                if k == c {
                    bump(del.marked_for_delete_at);
                }
            }
            for (s, e, del) in &self.range_deletions {
                if s <= c && c < e {
                    bump(del.marked_for_delete_at);
                }
            }
            if let Some(col) = column {
                for (k, cc, del) in &self.column_deletions {
                    if k == c && *cc == col {
                        bump(del.marked_for_delete_at);
                    }
                }
            }
        }
        d
    }

    fn live(&self, now: u32) -> LiveView {
        let mut view = LiveView::default();
        for ((clustering, key), versions) in &self.cells {
            let Some(winner) = versions.iter().max() else {
                continue;
            };
            let shadow = self.shadow_ts(clustering.as_ref(), Some(key.column));
            if shadow.is_some_and(|d| winner.timestamp <= d) {
                continue;
            }
            if let Some(v) = winner.live_value(now) {
                match clustering {
                    None => {
                        view.static_cells.insert(key.clone(), v.clone());
                    }
                    Some(c) => {
                        view.rows
                            .entry(c.clone())
                            .or_default()
                            .insert(key.clone(), v.clone());
                    }
                }
            }
        }
        for (c, markers) in &self.markers {
            let Some(m) = markers.iter().max() else {
                continue;
            };
            let shadow = self.shadow_ts(Some(c), None);
            if shadow.is_some_and(|d| m.timestamp <= d) || !m.is_live(now) {
                continue;
            }
            view.rows.entry(c.clone()).or_default();
        }
        view
    }
}

fn live_of(p: &Partition, now: u32) -> LiveView {
    let cells = |r: &Row| -> LiveRow {
        r.cells
            .iter()
            .filter_map(|(k, c)| c.live_value(now).map(|v| (k.clone(), v.clone())))
            .collect()
    };
    LiveView {
        static_cells: cells(&p.static_row),
        rows: p
            .live_rows(now)
            .map(|(k, r)| (k.clone(), cells(r)))
            .collect(),
    }
}

struct Harness {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    options: TableOptions,
    spec: Option<TableSpec>,
    engine: Option<Engine>,
    model: BTreeMap<u8, ModelPartition>,
    counter: i64,
    /// Which partitions scans read a page at a time: the default (none of this test's), or
    /// thresholds that make most of them wide, so that scans take both paths.
    wide: WidePartitions,
}

impl Harness {
    fn new(strategy: CompactionStrategy, gc_grace_seconds: u32, wide: WidePartitions) -> Self {
        let mut h = Harness {
            dir: tempfile::tempdir().unwrap(),
            clock: Arc::new(ManualClock::new(1_700_000_000_000_000)),
            options: TableOptions {
                compaction: strategy,
                gc_grace_seconds,
                ..Default::default()
            },
            spec: None,
            engine: None,
            model: BTreeMap::new(),
            counter: 0,
            wide,
        };
        h.open();
        let spec = TableSpec::new("ks", "t", h.options.clone());
        h.engine().create_table(spec.clone()).unwrap();
        h.spec = Some(spec);
        h
    }

    fn open(&mut self) {
        let mut config = EngineConfig::new(self.dir.path());
        config.background_threads = false;
        config.clock = self.clock.clone();
        config.commitlog = CommitLogConfig {
            sync: SyncMode::Periodic {
                period: std::time::Duration::from_secs(10),
            },
            ..CommitLogConfig::default()
        };
        config.compaction_throughput_bytes_per_second = 0;
        config.wide_partitions = self.wide;
        self.engine = Some(Engine::open(Arc::new(RealFs), config).unwrap());
    }

    fn engine(&self) -> &Engine {
        self.engine.as_ref().unwrap()
    }

    fn table(&self) -> uuid::Uuid {
        self.spec.as_ref().unwrap().id
    }

    fn now(&self) -> u32 {
        self.clock.now_seconds()
    }

    fn ts(&mut self, jitter: u16) -> i64 {
        self.counter += 1;
        self.clock.now_micros() + self.counter * 5 + i64::from(jitter)
    }

    fn write(&mut self, key: u8, update: Partition) {
        self.engine()
            .apply(Mutation::new(self.table(), pk(key), update))
            .unwrap();
    }

    fn step(&mut self, op: &Op) {
        let now = self.now();
        match op.clone() {
            Op::Insert {
                key,
                ck: c,
                cols,
                ttl,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let expiry = ttl.map(|t| Expiry::new(u32::from(t), now + u32::from(t)));
                let mut row = Row {
                    liveness: Some(LivenessInfo::new(ts, expiry)),
                    ..Default::default()
                };
                let m = self.model.entry(key).or_default();
                m.markers
                    .entry(ck(c))
                    .or_default()
                    .push(LivenessInfo::new(ts, expiry));
                // One value per column (the last one given), as a CQL INSERT would have.
                let cols: BTreeMap<u32, u8> = cols.into_iter().collect();
                for (col, v) in cols {
                    let cell = match expiry {
                        Some(e) => Cell::expiring(ts, vec![v], e.ttl, e.local_expiry),
                        None => Cell::live(ts, vec![v]),
                    };
                    m.cells
                        .entry((Some(ck(c)), CellKey::simple(col)))
                        .or_default()
                        .push(cell.clone());
                    row.cells.insert(CellKey::simple(col), cell);
                }
                let mut p = Partition::new();
                p.add_row(ck(c), row);
                self.write(key, p);
            }
            Op::Update {
                key,
                ck: c,
                col,
                value,
                ttl,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let cell = match ttl {
                    Some(t) => Cell::expiring(ts, vec![value], u32::from(t), now + u32::from(t)),
                    None => Cell::live(ts, vec![value]),
                };
                self.model
                    .entry(key)
                    .or_default()
                    .cells
                    .entry((Some(ck(c)), CellKey::simple(col)))
                    .or_default()
                    .push(cell.clone());
                let mut row = Row::default();
                row.cells.insert(CellKey::simple(col), cell);
                let mut p = Partition::new();
                p.add_row(ck(c), row);
                self.write(key, p);
            }
            Op::ListAppend {
                key,
                ck: c,
                elem,
                value,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let k = CellKey::element(LIST_COL, vec![elem]);
                let cell = Cell::live(ts, vec![value]);
                self.model
                    .entry(key)
                    .or_default()
                    .cells
                    .entry((Some(ck(c)), k.clone()))
                    .or_default()
                    .push(cell.clone());
                let mut row = Row::default();
                row.cells.insert(k, cell);
                let mut p = Partition::new();
                p.add_row(ck(c), row);
                self.write(key, p);
            }
            Op::ListOverwrite {
                key,
                ck: c,
                elems,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let del = DeletionTime::new(ts - 1, now);
                let m = self.model.entry(key).or_default();
                m.column_deletions.push((ck(c), LIST_COL, del));
                let mut row = Row::default();
                row.column_deletions.insert(LIST_COL, del);
                for e in elems {
                    let k = CellKey::element(LIST_COL, vec![e]);
                    let cell = Cell::live(ts, vec![e, e]);
                    m.cells
                        .entry((Some(ck(c)), k.clone()))
                        .or_default()
                        .push(cell.clone());
                    row.cells.insert(k, cell);
                }
                let mut p = Partition::new();
                p.add_row(ck(c), row);
                self.write(key, p);
            }
            Op::Static { key, value, jitter } => {
                let ts = self.ts(jitter);
                let cell = Cell::live(ts, vec![value]);
                self.model
                    .entry(key)
                    .or_default()
                    .cells
                    .entry((None, CellKey::simple(STATIC_COL)))
                    .or_default()
                    .push(cell.clone());
                let mut p = Partition::new();
                p.static_row.cells.insert(CellKey::simple(STATIC_COL), cell);
                self.write(key, p);
            }
            Op::DeleteCell {
                key,
                ck: c,
                col,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let cell = Cell::tombstone(ts, now);
                self.model
                    .entry(key)
                    .or_default()
                    .cells
                    .entry((Some(ck(c)), CellKey::simple(col)))
                    .or_default()
                    .push(cell.clone());
                let mut row = Row::default();
                row.cells.insert(CellKey::simple(col), cell);
                let mut p = Partition::new();
                p.add_row(ck(c), row);
                self.write(key, p);
            }
            Op::DeleteRow { key, ck: c, jitter } => {
                let ts = self.ts(jitter);
                let del = DeletionTime::new(ts, now);
                self.model
                    .entry(key)
                    .or_default()
                    .row_deletions
                    .push((ck(c), del));
                let mut p = Partition::new();
                p.add_row(
                    ck(c),
                    Row {
                        deletion: Some(del),
                        ..Default::default()
                    },
                );
                self.write(key, p);
            }
            Op::DeleteRange {
                key,
                lo,
                hi,
                lo_incl,
                hi_incl,
                jitter,
            } => {
                let ts = self.ts(jitter);
                let del = DeletionTime::new(ts, now);
                let (s, e) = (start_bound(&ck(lo), lo_incl), end_bound(&ck(hi), hi_incl));
                self.model.entry(key).or_default().range_deletions.push((
                    s.clone(),
                    e.clone(),
                    del,
                ));
                let mut p = Partition::new();
                p.range_tombstones.add(s, e, del);
                self.write(key, p);
            }
            Op::DeletePartition { key, jitter } => {
                let ts = self.ts(jitter);
                let del = DeletionTime::new(ts, now);
                self.model
                    .entry(key)
                    .or_default()
                    .partition_deletions
                    .push(del);
                self.write(
                    key,
                    Partition {
                        deletion: Some(del),
                        ..Default::default()
                    },
                );
            }
            Op::Flush => self.engine().flush(self.table()).unwrap(),
            Op::CompactPending => {
                self.engine().flush(self.table()).unwrap();
                self.engine().compact_pending(self.table()).unwrap();
            }
            Op::CompactMajor => {
                self.engine().compact_major(self.table()).unwrap();
            }
            Op::Advance { seconds } => self.clock.advance_micros(i64::from(seconds) * 1_000_000),
            Op::Reopen => {
                self.engine.take().unwrap().close().unwrap();
                self.open();
            }
        }
    }

    fn check(&self, context: &str) {
        let now = self.now();
        let (all_s, all_e) = full_range();
        for key in 0u8..6 {
            let expect = self
                .model
                .get(&key)
                .map(|m| m.live(now))
                .unwrap_or_default();
            let got = self
                .engine()
                .read(
                    self.table(),
                    &pk(key),
                    &[(all_s.clone(), all_e.clone())],
                    false,
                    None,
                    now,
                )
                .unwrap();
            assert_eq!(
                live_of(&got.partition, now),
                expect,
                "{context}: partition {key} at now={now}"
            );
            // Reversed, limited to 3 rows: the newest three rows of the model.
            let got = self
                .engine()
                .read(
                    self.table(),
                    &pk(key),
                    &[(all_s.clone(), all_e.clone())],
                    true,
                    Some(3),
                    now,
                )
                .unwrap();
            let want: Vec<_> = expect
                .rows
                .iter()
                .rev()
                .take(3)
                .map(|(k, _)| k.clone())
                .collect();
            let have: Vec<_> = got
                .partition
                .live_rows(now)
                .rev()
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(have, want, "{context}: reversed limit 3 of partition {key}");
            // A slice [3, 8).
            let (s, e) = (start_bound(&ck(3), true), end_bound(&ck(8), false));
            let got = self
                .engine()
                .read(
                    self.table(),
                    &pk(key),
                    &[(s.clone(), e.clone())],
                    false,
                    Some(2),
                    now,
                )
                .unwrap();
            let want: Vec<_> = expect
                .rows
                .keys()
                .filter(|k| **k >= s && **k < e)
                .take(2)
                .cloned()
                .collect();
            let have: Vec<_> = got
                .partition
                .live_rows(now)
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(have, want, "{context}: slice of partition {key}");
            // Each row read alone, newest sources first, stopping early where they settle it
            // (the static row is not compared: a one-row read is only for tables without one).
            for c in 0u8..12 {
                let point = (start_bound(&ck(c), true), end_bound(&ck(c), true));
                let got = self
                    .engine()
                    .read_row(self.table(), &pk(key), &[point], REGULAR_COLS, now)
                    .unwrap();
                assert_eq!(
                    live_of(&got.partition, now).rows.get(&ck(c)),
                    expect.rows.get(&ck(c)),
                    "{context}: row {c} of partition {key} read alone"
                );
            }
        }
        // A full scan in pages of 4 live rows returns every live row exactly once, in order.
        let mut seen: Vec<(u8, Bytes)> = Vec::new();
        let mut resume = None;
        for _ in 0..200 {
            let page = self
                .engine()
                .scan(
                    self.table(),
                    std::ops::Bound::Unbounded,
                    std::ops::Bound::Unbounded,
                    resume.as_ref(),
                    4,
                    now,
                )
                .unwrap();
            for (k, p) in &page.partitions {
                let key = k.key[3];
                for (c, _) in p.live_rows(now) {
                    seen.push((key, c.clone()));
                }
            }
            match page.resume {
                Some(r) => resume = Some(r),
                None => break,
            }
        }
        let mut want: Vec<(DecoratedKey, u8, Bytes)> = Vec::new();
        for key in 0u8..6 {
            if let Some(m) = self.model.get(&key) {
                for c in m.live(now).rows.keys() {
                    want.push((pk(key), key, c.clone()));
                }
            }
        }
        want.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2)));
        let want: Vec<(u8, Bytes)> = want.into_iter().map(|(_, k, c)| (k, c)).collect();
        assert_eq!(seen, want, "{context}: paged scan");
    }
}

fn run(strategy: CompactionStrategy, gc_grace: u32, wide: WidePartitions, ops: &[Op]) {
    let mut h = Harness::new(strategy, gc_grace, wide);
    for (i, op) in ops.iter().enumerate() {
        h.step(op);
        h.check(&format!("after step {i} {op:?}"));
    }
    h.engine.take().unwrap().close().unwrap();
}

fn strategies() -> impl Strategy<Value = CompactionStrategy> {
    prop_oneof![
        Just(CompactionStrategy::SizeTiered {
            min_threshold: 2,
            max_threshold: 4,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_sstable_size_bytes: 1 << 20,
        }),
        Just(CompactionStrategy::Leveled {
            sstable_size_bytes: 2048,
            fanout_size: 2
        }),
        Just(CompactionStrategy::TimeWindow {
            window_size_seconds: 20
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn engine_agrees_with_model(
        strategy in strategies(),
        gc_grace in prop_oneof![Just(0u32), Just(10u32), Just(864_000u32)],
        wide in prop_oneof![
            Just(WidePartitions::default()),
            Just(WidePartitions { memtable_rows: 2, sstable_bytes: 60 }),
        ],
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run(strategy, gc_grace, wide, &ops);
    }
}
