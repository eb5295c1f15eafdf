//! Power cuts simulated with `FaultFs`: every record acknowledged in batch or group mode
//! survives `crash()`, torn unsynced bytes included, holes too (pages of the unsynced tail
//! lost while later ones reached the disk); in periodic mode only records written after the
//! last sync can be lost, and the log still opens.

mod commitlog_common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use commitlog_common::{config, payload, payload_id};
use khata_env::FileSystem;
use khata_env::fault::{FaultFs, FaultOp, PathFilter, TornWrites};
use khata_storage::commitlog::{CommitLog, CommitLogConfig, SyncMode};

const DIR: &str = "/data/commitlog";

fn open(fs: &FaultFs, cfg: CommitLogConfig) -> (Arc<CommitLog>, Vec<u64>) {
    let fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let (log, replayed) =
        CommitLog::open(fs, Path::new(DIR), cfg).expect("the log opens after a crash");
    (
        log,
        replayed.iter().map(|r| payload_id(&r.payload)).collect(),
    )
}

/// Several threads append until the plug is pulled; returns what each thread saw acknowledged.
///
/// The process dies before the power goes: every file operation fails from then on (a thread
/// that happened to be rotating to a new segment would otherwise open a fresh file after the
/// crash and append forever), and the threads stop when told.
fn append_until_crash(
    fs: &FaultFs,
    cfg: CommitLogConfig,
    round: u64,
    crash_after: Duration,
) -> Vec<u64> {
    let (log, _) = open(fs, cfg);
    let crashed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let log = log.clone();
            let crashed = crashed.clone();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for seq in 0.. {
                    if crashed.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    let id = round << 40 | t << 32 | seq;
                    match log.append(&payload(id, (seq % 300) as usize)) {
                        Ok(_) => acked.push(id),
                        Err(_) => break, // the crash killed the handles
                    }
                }
                acked
            })
        })
        .collect();
    std::thread::sleep(crash_after);
    let dead = fs.inject(FaultOp::ALL, PathFilter::Any, None);
    fs.crash();
    crashed.store(true, std::sync::atomic::Ordering::SeqCst);
    let acked = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    drop(log);
    fs.remove_fault(dead);
    acked
}

#[test]
fn acknowledged_records_survive_a_power_cut_in_batch_and_group_mode() {
    for (i, mode) in [
        SyncMode::Batch,
        SyncMode::Group {
            window: Duration::from_micros(200),
        },
    ]
    .into_iter()
    .enumerate()
    {
        for torn in [
            TornWrites::Off,
            TornWrites::Prefix,
            TornWrites::PrefixThenGarbage,
            TornWrites::Pages,
        ] {
            let fs = FaultFs::with_seed(0x5eed + i as u64);
            fs.set_torn_writes(torn);
            let cfg = config(mode, 16 << 10);
            let mut acked = Vec::new();
            for round in 0..5u64 {
                let crash_after = Duration::from_millis(5 + round * 7);
                acked.extend(append_until_crash(&fs, cfg, round, crash_after));
                let (log, replayed) = open(&fs, cfg);
                drop(log);
                let mut unique = replayed.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(
                    unique.len(),
                    replayed.len(),
                    "{mode:?} {torn:?}: replayed twice"
                );
                let lost: Vec<_> = acked
                    .iter()
                    .filter(|id| unique.binary_search(id).is_err())
                    .collect();
                assert!(
                    lost.is_empty(),
                    "{mode:?} {torn:?} round {round}: lost {lost:?}"
                );
            }
            assert!(
                acked.len() > 100,
                "{mode:?}: the test appended too little ({})",
                acked.len()
            );
        }
    }
}

#[test]
fn periodic_mode_loses_only_unsynced_records() {
    let cfg = config(
        SyncMode::Periodic {
            period: Duration::from_secs(3600),
        },
        16 << 10,
    );
    for seed in 0..20u64 {
        let fs = FaultFs::with_seed(seed);
        fs.set_torn_writes(match seed % 3 {
            0 => TornWrites::Prefix,
            1 => TornWrites::PrefixThenGarbage,
            _ => TornWrites::Pages,
        });
        let mut expected: Vec<u64> = Vec::new(); // every record ever appended, in order
        let mut synced = 0; // how many of them are known durable
        for round in 0..3u64 {
            let (log, replayed) = open(&fs, cfg);
            // The replay is a prefix of what was appended, covering at least what was synced.
            assert!(replayed.len() >= synced, "seed {seed}: lost synced records");
            assert_eq!(
                replayed[..],
                expected[..replayed.len()],
                "seed {seed}: not a prefix"
            );
            expected.truncate(replayed.len());
            for i in 0..300u64 {
                let id = round << 32 | i;
                log.append(&payload(id, ((seed * 31 + i * 7) % 200) as usize))
                    .unwrap();
                expected.push(id);
                if i == 100 + seed * 5 {
                    log.sync().unwrap();
                    synced = expected.len();
                }
            }
            fs.crash();
            drop(log);
        }
    }
}
