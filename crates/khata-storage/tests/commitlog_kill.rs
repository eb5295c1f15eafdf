//! A process killed with SIGKILL loses no acknowledged record, in batch and in group mode.
//!
//! The test re-executes its own binary (`current_exe`) with `KHATA_COMMITLOG_KILL_CHILD` set;
//! the child appends from several threads and prints `ack <id>` after each acknowledged
//! append. The parent kills it at a random moment (`Child::kill` is SIGKILL on Unix), opens the
//! log and checks that every acknowledged id is replayed, exactly once. Several rounds share a
//! directory, so later rounds replay logs that earlier kills left behind.

mod commitlog_common;

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use commitlog_common::{config, open, payload, payload_id, real_fs};
use khata_storage::commitlog::{CommitLogConfig, SyncMode};

const CHILD_ENV: &str = "KHATA_COMMITLOG_KILL_CHILD";
const TEST_NAME: &str = "sigkill_loses_no_acknowledged_record";
const ROUNDS: u64 = 4;
const CHILD_THREADS: u64 = 8;

fn mode_config(mode: &str) -> CommitLogConfig {
    let sync = match mode {
        "batch" => SyncMode::Batch,
        "group" => SyncMode::Group {
            window: Duration::from_millis(1),
        },
        other => panic!("unknown mode {other}"),
    };
    config(sync, 256 << 10)
}

#[test]
fn sigkill_loses_no_acknowledged_record() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        run_child(&spec);
        return;
    }
    let seed = RandomState::new().hash_one(0u8);
    println!("seed {seed}");
    let mut rng = seed | 1;
    for mode in ["batch", "group"] {
        let dir = tempfile::tempdir().unwrap();
        let mut acked: Vec<u64> = Vec::new();
        for round in 0..ROUNDS {
            // xorshift: a kill after 0..=300 ms of acknowledged appends.
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let delay = Duration::from_millis(rng % 301);
            acked.extend(kill_child_after(dir.path(), mode, round, delay));

            let (log, replayed) = open(&real_fs(), dir.path(), mode_config(mode));
            drop(log);
            let mut seen = HashSet::new();
            for r in &replayed {
                assert!(
                    seen.insert(payload_id(&r.payload)),
                    "{mode}: a record replayed twice"
                );
            }
            let lost: Vec<_> = acked.iter().filter(|id| !seen.contains(id)).collect();
            assert!(
                lost.is_empty(),
                "{mode} round {round} (seed {seed}): acknowledged but not replayed: {lost:?}"
            );
            println!(
                "{mode} round {round}: killed after {delay:?}, {} acked, {} replayed",
                acked.len(),
                replayed.len()
            );
        }
    }
}

/// Start a child writing in `mode`, kill it `delay` after its first acknowledgement, and
/// return every id it acknowledged.
fn kill_child_after(dir: &Path, mode: &str, round: u64, delay: Duration) -> Vec<u64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{mode}:{round}:{}", dir.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (first_ack, first_ack_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut ids = Vec::new();
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            // A line cut short by the kill has no newline and is not an acknowledgement.
            if let Some(id) = line.strip_prefix("ack ").and_then(|l| l.strip_suffix('\n')) {
                ids.push(id.parse::<u64>().unwrap());
                let _ = first_ack.send(());
            }
            line.clear();
        }
        ids
    });
    first_ack_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("child never acknowledged");
    std::thread::sleep(delay);
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap()
}

/// The child: append until killed (or a minute passes), printing each acknowledged id.
fn run_child(spec: &str) {
    let mut parts = spec.splitn(3, ':');
    let (mode, round, dir) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let round: u64 = round.parse().unwrap();
    let (log, _) = open(&real_fs(), Path::new(dir), mode_config(mode));
    let next = Arc::new(AtomicU64::new(round * 1_000_000_000));
    let stop_at = Instant::now() + Duration::from_secs(60);
    let threads: Vec<_> = (0..CHILD_THREADS)
        .map(|_| {
            let (log, next) = (log.clone(), next.clone());
            std::thread::spawn(move || {
                while Instant::now() < stop_at {
                    let id = next.fetch_add(1, Ordering::SeqCst);
                    log.append(&payload(id, (id % 500) as usize)).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {id}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
