//! `kill -9` of the `khata` binary while writers are busy, in each commit-log mode: every
//! write the driver saw acknowledged is there, with its exact value, after a restart.
//!
//! Each mode runs [`ROUNDS`] rounds on one data directory. A round starts the binary, runs
//! [`WRITERS`] concurrent writers through the `scylla` driver (each inserts the rows of its
//! own partition in sequence, one write in flight at a time, and records the sequence numbers
//! that were acknowledged), sends SIGKILL while they are still writing, then restarts the node
//! on the same directory and reads back every partition written so far, this round's and the
//! earlier rounds'.
//!
//! What is asserted, in every mode: each acknowledged row is present with its value, and no
//! row is present that was not at least sent (a writer's rows are `0..=last acknowledged + 1`,
//! the one extra being the write in flight at the kill). In `periodic` mode Cassandra promises
//! only what the last fsync covered, but that is for a *machine* crash; a killed *process*
//! leaves its writes in the OS, and khata acknowledges a write only once its commit-log record
//! is handed to the OS (`crates/khata-storage/src/commitlog/mod.rs`), so the promise here is
//! the same in all three modes.
//!
//! The table has a secondary index on `n`, whose entries go into the same commit-log record as
//! the row: the first and the last acknowledged row of every partition must also be found
//! through the index after the restart.

use std::collections::BTreeMap;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;

/// Concurrent writers per round.
const WRITERS: i32 = 8;
/// Kill/restart rounds per commit-log mode.
const ROUNDS: i32 = 2;
/// How long the writers run before the kill, at least.
const WRITE_TIME: Duration = Duration::from_millis(700);
/// Acknowledged writes needed before the kill, so that a round tests something.
const MIN_ACKNOWLEDGED: usize = 40;
/// Longest wait for a node to listen, for the writers to reach [`MIN_ACKNOWLEDGED`], or for
/// them to notice the kill.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `khata server` child process, killed (SIGKILL) and reaped on drop so that a failing test
/// leaves no node behind.
struct NodeProcess {
    child: Option<Child>,
    address: SocketAddr,
    log: PathBuf,
}

impl NodeProcess {
    /// Starts the binary on a free loopback port with `data_dir`, its log going to `log`, and
    /// waits until it has started ("node started" in its log) and listens. A free port can be
    /// taken by another test's node between the probe and the bind (tests run in parallel);
    /// then the node exits, and it is started again on another port. Accepting a connection
    /// alone proves nothing: the port may belong to that other node.
    fn start(data_dir: &Path, log: PathBuf, settings: &[&str]) -> NodeProcess {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            let mut node = NodeProcess::spawn(data_dir, log.clone(), settings);
            let deadline = Instant::now() + PATIENCE;
            loop {
                let started = std::fs::read_to_string(&node.log)
                    .is_ok_and(|text| text.contains("node started"));
                if started && std::net::TcpStream::connect(node.address).is_ok() {
                    return node;
                }
                if let Some(exit) = node.child_mut().try_wait().expect("poll khata") {
                    node.child = None;
                    assert!(
                        attempt < ATTEMPTS,
                        "khata exited before listening ({exit}); log:\n{}",
                        node.log_tail()
                    );
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "khata did not start on {}; log:\n{}",
                    node.address,
                    node.log_tail()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        unreachable!("every attempt returns or panics")
    }

    /// Spawns the binary on a free loopback port, without waiting for it.
    fn spawn(data_dir: &Path, log: PathBuf, settings: &[&str]) -> NodeProcess {
        let port = free_port();
        let log_file = File::create(&log).expect("create the node's log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_khata"));
        command
            .args(["server", "--data-dir"])
            .arg(data_dir)
            .args(["--cql-port", &port.to_string()])
            .args([
                "--admin-port",
                "0",
                "--dynamo-port",
                "0",
                "--internode-port",
                "0",
            ]);
        for setting in settings {
            command.args(["--set", setting]);
        }
        let child = command
            .env("RUST_LOG", "info")
            .env_remove("KHATA_CHECK_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("spawn khata");
        NodeProcess {
            child: Some(child),
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            log,
        }
    }

    fn child_mut(&mut self) -> &mut Child {
        self.child.as_mut().expect("the node is running")
    }

    /// `kill -9 <pid>`, then reap the process. It must still have been running.
    fn kill9(&mut self) {
        let mut child = self.child.take().expect("the node is running");
        assert!(
            child.try_wait().expect("poll khata").is_none(),
            "khata died before the kill; log:\n{}",
            self.log_tail()
        );
        let status = Command::new("kill")
            .args(["-9", &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -9 failed: {status}");
        let exit = child.wait().expect("reap khata");
        assert!(!exit.success(), "khata was killed, yet exited with {exit}");
    }

    /// The last lines of the node's log, for failure messages.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A free loopback port (bound, then released for the node to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local address")
        .port()
}

async fn connect(node: &NodeProcess) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.address)
        .build()
        .await
        .unwrap_or_else(|e| panic!("driver connects: {e}; log:\n{}", node.log_tail()))
}

/// The partition of writer `writer` in round `round`.
fn partition(round: i32, writer: i32) -> i32 {
    round * 1000 + writer
}

/// The row a writer inserts at `seq`: a body of varying length (so records of different sizes
/// are torn at the kill) and a number, both derived from the key so that a read can check
/// them exactly.
fn row_value(partition: i32, seq: i64) -> (String, i64) {
    let body = format!("partition {partition} seq {seq} ").repeat(1 + (seq % 7) as usize);
    (body, seq * 1_000_003 + i64::from(partition))
}

/// What one writer managed: the last acknowledged sequence number (`None`: none), and whether
/// it stopped on an error after the kill (it writes until one, so this says it was writing at
/// the kill). An error before the kill is a failure of its own.
#[derive(Debug, Clone)]
struct WriterOutcome {
    last_acknowledged: Option<i64>,
    stopped_by_kill: bool,
    error_before_kill: Option<String>,
}

/// Runs the writers until the node is killed under them; returns each partition's outcome.
async fn write_until_killed(
    node: &mut NodeProcess,
    session: Arc<Session>,
    round: i32,
) -> BTreeMap<i32, WriterOutcome> {
    let insert = session
        .prepare("INSERT INTO kill9.rows (writer, seq, body, n) VALUES (?, ?, ?, ?)")
        .await
        .expect("prepare the insert");
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let session = session.clone();
        let insert = insert.clone();
        let acknowledged = acknowledged.clone();
        let killed = killed.clone();
        let partition = partition(round, writer);
        tasks.push(tokio::spawn(async move {
            let mut outcome = WriterOutcome {
                last_acknowledged: None,
                stopped_by_kill: false,
                error_before_kill: None,
            };
            for seq in 0i64.. {
                let (body, n) = row_value(partition, seq);
                match session
                    .execute_unpaged(&insert, (partition, seq, body, n))
                    .await
                {
                    Ok(_) => {
                        outcome.last_acknowledged = Some(seq);
                        acknowledged.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        if killed.load(Ordering::SeqCst) {
                            outcome.stopped_by_kill = true;
                        } else {
                            outcome.error_before_kill = Some(format!("seq {seq}: {e}"));
                        }
                        break;
                    }
                }
            }
            (partition, outcome)
        }));
    }
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let done = acknowledged.load(Ordering::Relaxed);
        if started.elapsed() >= WRITE_TIME && done >= MIN_ACKNOWLEDGED {
            break;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "only {done} writes acknowledged in {PATIENCE:?}; log:\n{}",
            node.log_tail()
        );
    }
    killed.store(true, Ordering::SeqCst);
    node.kill9();
    let mut outcomes = BTreeMap::new();
    for task in tasks {
        let (partition, outcome) = tokio::time::timeout(PATIENCE, task)
            .await
            .expect("a writer noticed the kill")
            .expect("a writer task panicked");
        outcomes.insert(partition, outcome);
    }
    outcomes
}

/// Reads every partition in `expected` and checks it against what its writer was told.
async fn check_acknowledged(
    session: &Session,
    expected: &BTreeMap<i32, WriterOutcome>,
    node: &NodeProcess,
    mode: &str,
) {
    let mut select = session
        .prepare("SELECT seq, body, n FROM kill9.rows WHERE writer = ?")
        .await
        .expect("prepare the select");
    select.set_page_size(500);
    let by_index = session
        .prepare("SELECT writer, seq FROM kill9.rows WHERE n = ?")
        .await
        .expect("prepare the index query");
    for (&partition, outcome) in expected {
        let rows: Vec<(i64, String, i64)> = session
            .execute_iter(select.clone(), (partition,))
            .await
            .expect("read a partition")
            .rows_stream::<(i64, String, i64)>()
            .expect("row types")
            .try_collect()
            .await
            .expect("read a partition's rows");
        let present: BTreeMap<i64, (String, i64)> = rows
            .into_iter()
            .map(|(seq, body, n)| (seq, (body, n)))
            .collect();
        let acknowledged = outcome.last_acknowledged.map_or(0, |last| last + 1);
        for seq in 0..acknowledged {
            let got = present.get(&seq);
            assert_eq!(
                got,
                Some(&row_value(partition, seq)),
                "{mode}: partition {partition}: acknowledged row {seq} (of 0..{acknowledged}) \
                 lost or wrong after kill -9; log:\n{}",
                node.log_tail()
            );
        }
        for seq in [0, acknowledged - 1].into_iter().filter(|s| *s >= 0) {
            let (_, n) = row_value(partition, seq);
            let found: Vec<(i32, i64)> = session
                .execute_unpaged(&by_index, (n,))
                .await
                .expect("query the index")
                .into_rows_result()
                .expect("rows")
                .rows::<(i32, i64)>()
                .expect("row types")
                .map(|r| r.expect("a row"))
                .collect();
            assert_eq!(
                found,
                vec![(partition, seq)],
                "{mode}: partition {partition}: acknowledged row {seq} not found through the index \
                 after kill -9; log:\n{}",
                node.log_tail()
            );
        }
        // Anything else must be the one write in flight at the kill, with its own value.
        for (seq, value) in present.range(acknowledged..) {
            assert_eq!(
                *seq, acknowledged,
                "{mode}: partition {partition}: row {seq} was never sent"
            );
            assert_eq!(value, &row_value(partition, *seq), "{mode}: in-flight row");
        }
    }
}

async fn acknowledged_writes_survive_kill9(mode: &str, settings: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let data_dir = dir.path().join("data");
    let mut expected: BTreeMap<i32, WriterOutcome> = BTreeMap::new();
    let mut node = NodeProcess::start(&data_dir, dir.path().join("node-0.log"), settings);
    let mut session = Arc::new(connect(&node).await);
    session
        .query_unpaged(
            "CREATE KEYSPACE kill9 WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await
        .expect("create the keyspace");
    session
        .query_unpaged(
            "CREATE TABLE kill9.rows (writer int, seq bigint, body text, n bigint, \
             PRIMARY KEY (writer, seq))",
            &[],
        )
        .await
        .expect("create the table");
    session
        .query_unpaged("CREATE INDEX rows_by_n ON kill9.rows (n)", &[])
        .await
        .expect("create the index");
    for round in 0..ROUNDS {
        let outcomes = write_until_killed(&mut node, session.clone(), round).await;
        drop(session);
        for (partition, outcome) in &outcomes {
            assert_eq!(
                outcome.error_before_kill, None,
                "{mode}: a write to partition {partition} failed before the kill"
            );
            assert!(
                outcome.stopped_by_kill,
                "{mode}: writer of partition {partition} was not writing at the kill"
            );
        }
        expected.extend(outcomes);
        node = NodeProcess::start(
            &data_dir,
            dir.path().join(format!("node-{}.log", round + 1)),
            settings,
        );
        session = Arc::new(connect(&node).await);
        check_acknowledged(&session, &expected, &node, mode).await;
    }
    let total: i64 = expected
        .values()
        .map(|o| o.last_acknowledged.map_or(0, |last| last + 1))
        .sum();
    assert!(total >= (MIN_ACKNOWLEDGED as i64) * i64::from(ROUNDS));
    eprintln!("{mode}: {total} acknowledged writes over {ROUNDS} kill -9 rounds, all present");
    drop(session);
    drop(node);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill9_in_batch_mode() {
    acknowledged_writes_survive_kill9("batch", &["commitlog_sync=batch"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill9_in_group_mode() {
    acknowledged_writes_survive_kill9(
        "group",
        &["commitlog_sync=group", "commitlog_sync_group_window=1ms"],
    )
    .await;
}

/// The period is far longer than the test: every acknowledged write is still unsynced when the
/// process is killed, so this checks "handed to the OS" and nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill9_in_periodic_mode() {
    acknowledged_writes_survive_kill9(
        "periodic",
        &["commitlog_sync=periodic", "commitlog_sync_period=10s"],
    )
    .await;
}
