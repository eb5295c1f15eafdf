//! A whole engine killed with SIGKILL loses no acknowledged write, in batch and in group mode.
//!
//! The test re-executes its own binary (`current_exe`) with `KHATA_ENGINE_KILL_CHILD` set. The
//! child opens an [`Engine`] on the real file system with background flushing and compaction
//! on, a small memtable (so flushes and compactions run while it writes) and small commit-log
//! segments (so segments are discarded behind flushes), and writes from several threads:
//! new rows, overwrites of earlier rows (of this round or of earlier ones) with newer values,
//! and row deletions. Around each `Engine::apply` it prints `try <ts> <id> put|del` (flushed
//! before the apply starts) and `ack <ts>` (after it returns). The parent kills it with
//! `Child::kill` (SIGKILL on Unix) once a seeded number of writes is acknowledged, reads what
//! is left in the pipe, opens the engine on the same directory (commit-log replay, SSTables
//! left mid-flush or mid-compaction) and checks every row it knows of.
//!
//! The check is exact, not just "acknowledged writes are there". Timestamps are unique, so for
//! each row the newest acknowledged operation must be visible unless a newer operation that
//! was tried but not acknowledged (in flight at the kill) replaced it; nothing else may be
//! visible: not an older value (a lost write or a resurrected deletion) and not a row that was
//! never written. The outcome observed for each row becomes the starting point of the next
//! round, so an in-flight write that was lost must stay lost. Each directory sees three kills,
//! and every round after the first starts from the SSTables its predecessors' recoveries left.
//!
//! A panic on any thread of the child (a background flush or compaction thread dies quietly
//! otherwise, and the engine stops flushing or compacting for good) fails the round.
//!
//! The batch-mode table uses the default LZ4 compression and the group-mode table none, so
//! both SSTable encodings go through crash recovery. (LZ4 once exposed an underflow in the
//! compactor's throttling, which killed the compaction thread silently; that is fixed and
//! this test is what found it.)
//!
//! Seeds are printed; `KHATA_ENGINE_KILL_SEED=<n>` replays one (the kill points and the
//! operation mix; thread interleavings are up to the OS).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{BufRead, BufReader, Write};
use std::ops::Bound;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use khata_env::{Clock, RealFs, SystemClock};
use khata_storage::commitlog::{CommitLogConfig, SyncMode};
use khata_storage::{Engine, EngineConfig, Mutation, TableSpec};
use khata_types::cell::{DeletionTime, LivenessInfo};
use khata_types::clustering::full_range;
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{CompactionStrategy, Compression, TableOptions};
use khata_types::token::DecoratedKey;
use uuid::Uuid;

const CHILD_ENV: &str = "KHATA_ENGINE_KILL_CHILD";
const SEED_ENV: &str = "KHATA_ENGINE_KILL_SEED";
const ROUNDS: u64 = 3;
const CHILD_THREADS: u64 = 8;
/// The child is killed after this many acknowledged writes (inclusive range, seeded).
const KILL_AFTER_ACKS_MIN: u64 = 200;
const KILL_AFTER_ACKS_MAX: u64 = 5000;
/// A child that prints nothing for this long is stuck (a deadlock is a finding too).
const CHILD_SILENCE_LIMIT: Duration = Duration::from_secs(30);
/// A child whose parent is gone stops by itself after this long.
const CHILD_LIFETIME_LIMIT: Duration = Duration::from_secs(120);
/// Rows per partition: row `id` lives in partition `id / ROWS_PER_PARTITION`.
const ROWS_PER_PARTITION: u64 = 8;
/// The one regular column written.
const VALUE_COLUMN: u32 = 1;
/// Padding after the 16-byte value header, up to this many bytes.
const VALUE_PADDING_MAX_BYTES: u64 = 400;
/// Timestamps of round `r` start at `TS_BASE + r * TS_ROUND_STRIDE`; a round writes far fewer.
const TS_BASE: i64 = 1_700_000_000_000_000;
const TS_ROUND_STRIDE: i64 = 10_000_000_000;
/// Live rows per page of the verifying scan.
const SCAN_PAGE_ROWS: usize = 1000;
/// The child prints engine statistics every this many acknowledgements.
const STATS_EVERY_ACKS: u64 = 256;

#[test]
fn batch_mode_sigkill_keeps_acknowledged_writes() {
    run("batch", "batch_mode_sigkill_keeps_acknowledged_writes");
}

#[test]
fn group_mode_sigkill_keeps_acknowledged_writes() {
    run("group", "group_mode_sigkill_keeps_acknowledged_writes");
}

fn run(mode: &str, test_name: &str) {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        run_child(&ChildSpec::parse(&spec));
        return;
    }
    let seed = match std::env::var(SEED_ENV) {
        Ok(s) => s.parse().expect("KHATA_ENGINE_KILL_SEED must be a u64"),
        Err(_) => RandomState::new().hash_one(mode),
    };
    println!("{mode}: seed {seed} (replay with {SEED_ENV}={seed})");
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    create_table(dir.path(), mode);

    let mut rng = SplitMix64::new(seed ^ u64::from(mode == "group"));
    let mut model = Model::default();
    for round in 0..ROUNDS {
        let spec = ChildSpec {
            mode: mode.to_string(),
            seed: rng.next_u64(),
            round,
            base_ts: TS_BASE + round as i64 * TS_ROUND_STRIDE,
            first_id: model.next_id,
            dir: dir.path().display().to_string(),
        };
        let kill_after =
            KILL_AFTER_ACKS_MIN + rng.below(KILL_AFTER_ACKS_MAX - KILL_AFTER_ACKS_MIN + 1);
        let stderr_path = logs.path().join(format!("child-{round}.stderr"));
        let report = kill_child_after(test_name, &spec, kill_after, &stderr_path);
        let stderr = read_lossy(&stderr_path);
        assert!(
            !stderr.contains("panicked"),
            "{mode} round {round} (seed {seed}): a thread of the child panicked before the kill \
             (a background thread that dies stops flushing or compacting for good):\n{stderr}"
        );
        let in_flight = model.record(&report.events);

        let engine = Engine::open(Arc::new(RealFs), engine_config(dir.path(), mode, false))
            .unwrap_or_else(|e| {
                panic!("{mode} round {round} (seed {seed}): reopening after the kill failed: {e}")
            });
        let table = table_id(&engine);
        let observed = observe(&engine, table, &model);
        let failures = model.check_and_settle(&observed);
        let sstables = engine.sstables(table).unwrap().len();
        engine.close().unwrap();
        assert!(
            failures.is_empty(),
            "{mode} round {round} (seed {seed}, killed after {} acks): {} rows wrong, first ones:\n{}",
            report.acks,
            failures.len(),
            failures
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        println!(
            "{mode} round {round}: killed after {} acks (target {kill_after}), {in_flight} in flight; \
             child saw {} compactions and up to {} sstables; {} rows live of {} known after \
             recovery, {sstables} sstables",
            report.acks,
            report.compactions,
            report.max_sstables,
            observed
                .values()
                .filter(|s| matches!(s, Ok(Seen::Put(_))))
                .count(),
            model.rows.len(),
        );
    }
    println!("{mode}: {ROUNDS} rounds in {:?}", started.elapsed());
}

/// What the parent tells a child to do.
#[derive(Debug)]
struct ChildSpec {
    mode: String,
    seed: u64,
    round: u64,
    base_ts: i64,
    first_id: u64,
    dir: String,
}

impl ChildSpec {
    fn render(&self) -> String {
        format!(
            "{}:{}:{}:{}:{}:{}",
            self.mode, self.seed, self.round, self.base_ts, self.first_id, self.dir
        )
    }

    fn parse(s: &str) -> ChildSpec {
        let mut p = s.splitn(6, ':');
        let mut next = || p.next().expect("a complete child spec");
        ChildSpec {
            mode: next().to_string(),
            seed: next().parse().unwrap(),
            round: next().parse().unwrap(),
            base_ts: next().parse().unwrap(),
            first_id: next().parse().unwrap(),
            dir: next().to_string(),
        }
    }
}

fn sync_mode(mode: &str) -> SyncMode {
    match mode {
        "batch" => SyncMode::Batch,
        "group" => SyncMode::Group {
            window: Duration::from_millis(2),
        },
        other => panic!("unknown mode {other}"),
    }
}

/// Small memtables and segments, so that a few thousand writes flush, compact and discard
/// commit-log segments several times.
fn engine_config(dir: &Path, mode: &str, background_threads: bool) -> EngineConfig {
    let mut config = EngineConfig::new(dir);
    config.commitlog = CommitLogConfig {
        sync: sync_mode(mode),
        segment_size_bytes: 512 << 10,
        max_record_size_bytes: 64 << 10,
    };
    config.memtable_flush_size_bytes = 128 << 10;
    config.memtable_space_bytes = 2 << 20;
    config.block_cache_bytes = 4 << 20;
    config.compaction_throughput_bytes_per_second = 0;
    config.background_threads = background_threads;
    config
}

/// Batch mode runs size-tiered compaction, group mode leveled, both eager.
fn compaction_strategy(mode: &str) -> CompactionStrategy {
    match mode {
        "batch" => CompactionStrategy::SizeTiered {
            min_threshold: 2,
            max_threshold: 4,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_sstable_size_bytes: 1 << 20,
        },
        _ => CompactionStrategy::Leveled {
            sstable_size_bytes: 128 << 10,
            fanout_size: 4,
        },
    }
}

fn create_table(dir: &Path, mode: &str) {
    let engine = Engine::open(Arc::new(RealFs), engine_config(dir, mode, false)).unwrap();
    let lz4 = mode == "batch";
    let options = TableOptions {
        compaction: compaction_strategy(mode),
        compression: if lz4 {
            Compression::Lz4
        } else {
            Compression::None
        },
        ..TableOptions::default()
    };
    engine
        .create_table(TableSpec::new("ks", "kill", options))
        .unwrap();
    engine.close().unwrap();
}

fn table_id(engine: &Engine) -> Uuid {
    let tables = engine.tables();
    assert_eq!(tables.len(), 1, "the engine holds exactly the test's table");
    tables[0].id
}

fn partition_key(id: u64) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(
        &(id / ROWS_PER_PARTITION).to_be_bytes(),
    ))
}

/// The clustering key of row `id`: an order-preserving encoding of one int component.
fn clustering(id: u64) -> Bytes {
    let mut b = vec![khata_types::clustering::VALUE];
    b.extend_from_slice(&((id % ROWS_PER_PARTITION) as u32 ^ 0x8000_0000).to_be_bytes());
    Bytes::from(b)
}

/// A value that names its row and write: `id` and `ts` little-endian, then padding whose
/// length and bytes follow from both, so a value from another row, another write or a corrupt
/// block is recognised.
fn value(id: u64, ts: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + VALUE_PADDING_MAX_BYTES as usize);
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&ts.to_le_bytes());
    let mut rng = SplitMix64::new(id.rotate_left(32) ^ ts as u64);
    let pad = rng.below(VALUE_PADDING_MAX_BYTES + 1);
    v.extend((0..pad).map(|_| rng.next_u64() as u8));
    v
}

fn mutation(table: Uuid, id: u64, ts: i64, kind: Kind, now: u32) -> Mutation {
    let row = match kind {
        Kind::Put => {
            let mut row = Row {
                liveness: Some(LivenessInfo::new(ts, None)),
                ..Row::default()
            };
            row.cells.insert(
                CellKey::simple(VALUE_COLUMN),
                khata_types::cell::Cell::live(ts, value(id, ts)),
            );
            row
        }
        Kind::Delete => Row {
            deletion: Some(DeletionTime::new(ts, now)),
            ..Row::default()
        },
    };
    let mut p = Partition::new();
    p.add_row(clustering(id), row);
    Mutation::new(table, partition_key(id), p)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Put,
    Delete,
}

/// A line of the child's output.
#[derive(Debug)]
enum Event {
    Try { ts: i64, id: u64, kind: Kind },
    Ack { ts: i64 },
}

fn parse_line(line: &str) -> Option<Event> {
    let mut words = line.split(' ');
    match words.next()? {
        "try" => {
            let ts = words.next()?.parse().ok()?;
            let id = words.next()?.parse().ok()?;
            let kind = match words.next()? {
                "put" => Kind::Put,
                "del" => Kind::Delete,
                _ => return None,
            };
            Some(Event::Try { ts, id, kind })
        }
        "ack" => Some(Event::Ack {
            ts: words.next()?.parse().ok()?,
        }),
        _ => None,
    }
}

/// What one child did before it was killed.
#[derive(Debug, Default)]
struct ChildReport {
    events: Vec<Event>,
    acks: u64,
    compactions: u64,
    max_sstables: u64,
}

/// Start a child, kill it once `kill_after` writes are acknowledged, and return everything it
/// printed (the pipe keeps what was written before the kill).
fn kill_child_after(
    test_name: &str,
    spec: &ChildSpec,
    kill_after: u64,
    stderr_path: &Path,
) -> ChildReport {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, spec.render())
        .stdout(Stdio::piped())
        .stderr(File::create(stderr_path).unwrap())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            // A line cut short by the kill has no newline: it says nothing.
            if let Some(complete) = line.strip_suffix('\n')
                && tx.send(complete.to_string()).is_err()
            {
                return;
            }
            line.clear();
        }
    });
    let mut report = ChildReport::default();
    let mut killed = false;
    loop {
        let line = match rx.recv_timeout(CHILD_SILENCE_LIMIT) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill(&mut child);
                panic!(
                    "{} round {} (child seed {}): the child printed nothing for {:?} after {} \
                     acks (stuck engine?); stderr:\n{}",
                    spec.mode,
                    spec.round,
                    spec.seed,
                    CHILD_SILENCE_LIMIT,
                    report.acks,
                    read_lossy(stderr_path)
                );
            }
        };
        if let Some(stats) = line.strip_prefix("stats ") {
            let mut words = stats.split(' ').map(|w| w.parse::<u64>().unwrap_or(0));
            report.compactions = words.next().unwrap_or(0);
            report.max_sstables = report.max_sstables.max(words.next().unwrap_or(0));
            continue;
        }
        let Some(event) = parse_line(&line) else {
            continue;
        };
        if let Event::Ack { .. } = event {
            report.acks += 1;
        }
        report.events.push(event);
        if !killed && report.acks >= kill_after {
            kill(&mut child);
            killed = true;
        }
    }
    reader.join().unwrap();
    let status = child.wait().unwrap();
    assert!(
        killed,
        "{} round {}: the child exited ({status}) after {} acks, before the kill; stderr:\n{}",
        spec.mode,
        spec.round,
        report.acks,
        read_lossy(stderr_path)
    );
    report
}

fn kill(child: &mut Child) {
    // SIGKILL on Unix; an error means the child is already gone, which `wait` reports.
    let _ = child.kill();
}

fn read_lossy(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

/// The child: write from several threads until killed, reporting each write before and after.
fn run_child(spec: &ChildSpec) {
    // libtest has printed `test <name> ... ` without a newline; end that line first.
    report("child started");
    let engine = Arc::new(
        Engine::open(
            Arc::new(RealFs),
            engine_config(Path::new(&spec.dir), &spec.mode, true),
        )
        .expect("the child opens the engine"),
    );
    let table = table_id(&engine);
    let next_ts = Arc::new(AtomicI64::new(spec.base_ts));
    let next_id = Arc::new(AtomicU64::new(spec.first_id));
    let acks = Arc::new(AtomicU64::new(0));
    let stop_at = Instant::now() + CHILD_LIFETIME_LIMIT;
    let threads: Vec<_> = (0..CHILD_THREADS)
        .map(|t| {
            let (engine, next_ts, next_id, acks) = (
                engine.clone(),
                next_ts.clone(),
                next_id.clone(),
                acks.clone(),
            );
            let mut rng = SplitMix64::new(spec.seed ^ (t + 1).wrapping_mul(0xA076_1D64_78BD_642F));
            std::thread::spawn(move || {
                let clock = SystemClock;
                while Instant::now() < stop_at {
                    let ts = next_ts.fetch_add(1, Ordering::SeqCst);
                    let written = next_id.load(Ordering::SeqCst);
                    let roll = rng.below(100);
                    // 60% new rows, 25% overwrites, 15% deletions of any row written so far.
                    let (id, kind) = if roll < 60 || written == 0 {
                        (next_id.fetch_add(1, Ordering::SeqCst), Kind::Put)
                    } else if roll < 85 {
                        (rng.below(written), Kind::Put)
                    } else {
                        (rng.below(written), Kind::Delete)
                    };
                    let word = if kind == Kind::Put { "put" } else { "del" };
                    report(&format!("try {ts} {id} {word}"));
                    if let Err(e) = engine.apply(mutation(table, id, ts, kind, clock.now_seconds()))
                    {
                        panic!("apply of ts {ts} failed: {e}");
                    }
                    report(&format!("ack {ts}"));
                    let n = acks.fetch_add(1, Ordering::SeqCst) + 1;
                    if n % STATS_EVERY_ACKS == 0 {
                        let sstables = engine.sstables(table).map_or(0, |s| s.len());
                        report(&format!(
                            "stats {} {sstables}",
                            engine.compactions_completed()
                        ));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Print one line and flush it before returning; the stdout lock keeps lines whole.
fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        // The parent is gone: nobody is listening, stop.
        std::process::exit(1);
    }
}

/// What a read shows for one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Absent,
    Put(i64),
}

/// One operation of the current round on a row.
#[derive(Clone, Copy, Debug)]
struct Op {
    ts: i64,
    kind: Kind,
    acked: bool,
}

#[derive(Debug)]
struct RowState {
    /// What the last check saw (or `Absent` before any).
    floor: Seen,
    /// Operations of the round since.
    ops: Vec<Op>,
}

/// Every row the children touched.
#[derive(Debug, Default)]
struct Model {
    rows: BTreeMap<u64, RowState>,
    /// One past the greatest id any child tried.
    next_id: u64,
}

impl Model {
    /// Take in a round's events; return how many writes were tried but not acknowledged.
    fn record(&mut self, events: &[Event]) -> usize {
        let mut tried: HashMap<i64, (u64, Kind)> = HashMap::new();
        let mut acked: Vec<i64> = Vec::new();
        for e in events {
            match *e {
                Event::Try { ts, id, kind } => {
                    tried.insert(ts, (id, kind));
                }
                Event::Ack { ts } => acked.push(ts),
            }
        }
        let acked_set: std::collections::HashSet<i64> = acked.iter().copied().collect();
        for ts in &acked {
            assert!(tried.contains_key(ts), "ack {ts} without a try");
        }
        let in_flight = tried.len() - acked_set.len();
        for (ts, (id, kind)) in tried {
            self.next_id = self.next_id.max(id + 1);
            self.rows
                .entry(id)
                .or_insert(RowState {
                    floor: Seen::Absent,
                    ops: Vec::new(),
                })
                .ops
                .push(Op {
                    ts,
                    kind,
                    acked: acked_set.contains(&ts),
                });
        }
        in_flight
    }

    /// Compare what the engine shows with what each row may show; then make what it shows
    /// the starting point of the next round. Returns one message per wrong row.
    fn check_and_settle(&mut self, observed: &BTreeMap<u64, Result<Seen, String>>) -> Vec<String> {
        let mut failures = Vec::new();
        for (id, state) in &mut self.rows {
            let seen = match observed.get(id) {
                Some(Ok(s)) => *s,
                Some(Err(why)) => {
                    failures.push(format!("row {id}: {why}"));
                    continue;
                }
                None => Seen::Absent,
            };
            let last_acked = state.ops.iter().filter(|o| o.acked).max_by_key(|o| o.ts);
            let newest = last_acked.map_or(state.floor, |o| seen_after(*o));
            let after = last_acked.map_or(i64::MIN, |o| o.ts);
            let allowed: Vec<Seen> = std::iter::once(newest)
                .chain(
                    state
                        .ops
                        .iter()
                        .filter(|o| !o.acked && o.ts > after)
                        .map(|o| seen_after(*o)),
                )
                .collect();
            if !allowed.contains(&seen) {
                let mut ops = state.ops.clone();
                ops.sort_by_key(|o| o.ts);
                failures.push(format!(
                    "row {id}: engine shows {seen:?}; allowed {allowed:?} (before this round: \
                     {:?}; this round: {ops:?})",
                    state.floor
                ));
            }
            state.floor = seen;
            state.ops.clear();
        }
        for (id, s) in observed {
            if !self.rows.contains_key(id) {
                failures.push(format!("row {id} was never written but shows {s:?}"));
            }
        }
        failures
    }
}

fn seen_after(op: Op) -> Seen {
    match op.kind {
        Kind::Put => Seen::Put(op.ts),
        Kind::Delete => Seen::Absent,
    }
}

/// Every live row of the table, found by a paged full scan and confirmed by a point read of
/// every partition the model knows of (two read paths: scan and key lookup).
fn observe(engine: &Engine, table: Uuid, model: &Model) -> BTreeMap<u64, Result<Seen, String>> {
    let now = SystemClock.now_seconds();
    let mut scanned = BTreeMap::new();
    let mut resume = None;
    loop {
        let page = engine
            .scan(
                table,
                Bound::Unbounded,
                Bound::Unbounded,
                resume.as_ref(),
                SCAN_PAGE_ROWS,
                now,
            )
            .expect("a full scan after recovery");
        for (key, p) in &page.partitions {
            rows_of(key, p, now, &mut scanned);
        }
        match page.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
    }
    let (start, end) = full_range();
    let mut partitions: Vec<u64> = model
        .rows
        .keys()
        .map(|id| id / ROWS_PER_PARTITION)
        .collect();
    partitions.dedup();
    for p in partitions {
        let key = partition_key(p * ROWS_PER_PARTITION);
        let got = engine
            .read(
                table,
                &key,
                &[(start.clone(), end.clone())],
                false,
                None,
                now,
            )
            .expect("a partition read after recovery");
        let mut read = BTreeMap::new();
        rows_of(&key, &got.partition, now, &mut read);
        for id in p * ROWS_PER_PARTITION..(p + 1) * ROWS_PER_PARTITION {
            let (by_scan, by_read) = (scanned.get(&id), read.get(&id));
            if by_scan != by_read {
                scanned.insert(
                    id,
                    Err(format!(
                        "the scan shows {by_scan:?} but a read of its partition {by_read:?}"
                    )),
                );
            }
        }
    }
    scanned
}

/// Decode the live rows of one partition into `out`, keyed by row id.
fn rows_of(
    key: &DecoratedKey,
    p: &Partition,
    now: u32,
    out: &mut BTreeMap<u64, Result<Seen, String>>,
) {
    let Ok(pid) = <[u8; 8]>::try_from(&key.key[..]) else {
        out.insert(
            u64::MAX,
            Err(format!("a partition key of {} bytes", key.key.len())),
        );
        return;
    };
    let pid = u64::from_be_bytes(pid);
    for (c, row) in p.live_rows(now) {
        let Some(index) = (c.len() == 5)
            .then(|| u64::from(u32::from_be_bytes([c[1], c[2], c[3], c[4]]) ^ 0x8000_0000))
        else {
            out.insert(u64::MAX, Err(format!("a clustering key {c:?}")));
            continue;
        };
        let id = pid * ROWS_PER_PARTITION + index;
        out.insert(id, decode_row(id, row, now));
    }
}

fn decode_row(id: u64, row: &Row, now: u32) -> Result<Seen, String> {
    let cell = row
        .cells
        .get(&CellKey::simple(VALUE_COLUMN))
        .ok_or_else(|| format!("a live row without its value cell: {row:?}"))?;
    let v = cell
        .live_value(now)
        .ok_or_else(|| format!("a live row whose value cell is dead: {cell:?}"))?;
    if v.len() < 16 || v[..] != value(id, cell.timestamp)[..] {
        return Err(format!(
            "a value that is not row {id}'s write at {}: {} bytes starting {:?}",
            cell.timestamp,
            v.len(),
            &v[..v.len().min(16)]
        ));
    }
    let marker = row.liveness.map(|l| l.timestamp);
    if marker != Some(cell.timestamp) {
        return Err(format!(
            "row marker {marker:?} differs from the value's timestamp {}",
            cell.timestamp
        ));
    }
    Ok(Seen::Put(cell.timestamp))
}

/// A small seeded generator (splitmix64): the kill points and operation mix of a seed.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform enough in `0..n` for a test (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
