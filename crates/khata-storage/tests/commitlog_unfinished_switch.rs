//! A segment switch moves appends to the next segment (the spare, still under its temporary
//! name) at once, and leaves syncing the old segment and renaming the new one to the background
//! thread. These tests hold that second half back, by blocking the old segment's fsync, and
//! stop the process in between:
//!
//! - killed (the page cache survives): every record is replayed, those in the successor
//!   included, and the successor is renamed into place;
//! - a power cut: replay returns a prefix of what was appended (the successor is dropped when
//!   its predecessor lost its unsynced tail), and leaves no temporary file behind;
//! - a sync asked for meanwhile waits for the old segment: what it covered survives a power cut.

mod commitlog_common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use commitlog_common::{Gate, SyncProbeFs, config, payload, payload_id, segment_files};
use khata_env::fault::{FaultFs, TornWrites};
use khata_env::{FileSystem, RealFs};
use khata_storage::commitlog::{CommitLog, CommitLogConfig, SyncMode};

const SEGMENT_BYTES: u64 = 8192;
/// The first segment's name, whatever its suffix.
const FIRST_SEGMENT: &str = "CommitLog-00000000000000000001.log";

fn periodic() -> CommitLogConfig {
    config(
        SyncMode::Periodic {
            period: Duration::from_secs(3600),
        },
        SEGMENT_BYTES,
    )
}

/// Appends to `log` until a few records are in its second segment, with the first segment's
/// fsync held back (so the switch stays unfinished); returns the ids appended.
fn append_into_second_segment(log: &CommitLog, gate: &Gate) -> Vec<u64> {
    // The spare is made (and its header synced) once the first segment is half full; wait
    // for it, then close the gate on the first segment only.
    let mut ids = Vec::new();
    while log.current_position().offset < SEGMENT_BYTES / 2 + 1 {
        log.append(&payload(ids.len() as u64, 100)).unwrap();
        ids.push(ids.len() as u64);
    }
    std::thread::sleep(Duration::from_millis(200));
    gate.close(FIRST_SEGMENT);
    while log.current_position().segment_id == 1 {
        log.append(&payload(ids.len() as u64, 100)).unwrap();
        ids.push(ids.len() as u64);
    }
    for _ in 0..5 {
        log.append(&payload(ids.len() as u64, 100)).unwrap();
        ids.push(ids.len() as u64);
    }
    ids
}

fn names(fs: &dyn FileSystem, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs
        .list_dir(dir)
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_killed_process_replays_the_successor_of_an_unfinished_switch() {
    let dir = tempfile::tempdir().unwrap();
    let probe = SyncProbeFs::over(Arc::new(RealFs));
    let gate = probe.gate.clone();
    let fs: Arc<dyn FileSystem> = Arc::new(probe);
    let (log, _) = CommitLog::open(fs, dir.path(), periodic()).unwrap();
    let ids = append_into_second_segment(&log, &gate);
    // The directory as a killed process leaves it: segment 1 named, segment 2 not yet.
    let crashed = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, crashed.path().join(path.file_name().unwrap())).unwrap();
    }
    let left = names(&RealFs, crashed.path());
    assert!(
        left.iter()
            .any(|n| n.ends_with("00000000000000000002.log.tmp")),
        "the switch was not left unfinished: {left:?}"
    );
    gate.open();
    drop(log);

    let (log, replayed) = CommitLog::open(Arc::new(RealFs), crashed.path(), periodic()).unwrap();
    let got: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(got, ids, "every record, the successor's included");
    assert_eq!(
        replayed.last().unwrap().position.segment_id,
        2,
        "the last records came from the successor"
    );
    let left = names(&RealFs, crashed.path());
    assert!(
        left.iter().all(|n| !n.ends_with(".tmp")),
        "a temporary file survived open: {left:?}"
    );
    assert_eq!(segment_files(crashed.path()).len(), 3, "{left:?}");
    // The next segment is above the successor, which kept its id.
    assert_eq!(log.current_position().segment_id, 3);
    drop(log);

    // And it reads back the same once more (the successor is a plain segment now).
    let (_log, again) = CommitLog::open(Arc::new(RealFs), crashed.path(), periodic()).unwrap();
    let got: Vec<u64> = again.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(got, ids);
}

#[test]
fn a_power_cut_during_an_unfinished_switch_replays_a_prefix() {
    let dir = Path::new("/log");
    let mut shortened = 0;
    for seed in 0..12u64 {
        let fault = FaultFs::with_seed(seed);
        fault.set_torn_writes(if seed % 2 == 0 {
            TornWrites::Prefix
        } else {
            TornWrites::PrefixThenGarbage
        });
        let probe = SyncProbeFs::over(Arc::new(fault.clone()));
        let gate = probe.gate.clone();
        let fs: Arc<dyn FileSystem> = Arc::new(probe);
        let (log, _) = CommitLog::open(fs, dir, periodic()).unwrap();
        let ids = append_into_second_segment(&log, &gate);
        // The kernel may have written the directory back on its own: the successor's name
        // survives the power cut with whatever part of its records reached the disk.
        fault.sync_dir(dir).unwrap();
        fault.crash();
        gate.open();
        drop(log);

        let (_log, replayed) = CommitLog::open(Arc::new(fault.clone()), dir, periodic())
            .unwrap_or_else(|e| panic!("seed {seed}: the log does not open: {e}"));
        let got: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
        assert_eq!(got[..], ids[..got.len()], "seed {seed}: not a prefix");
        if got.len() < ids.len() {
            shortened += 1;
        }
        let left = names(&fault, dir);
        assert!(
            left.iter().all(|n| !n.ends_with(".tmp")),
            "seed {seed}: a temporary file survived open: {left:?}"
        );
    }
    assert!(shortened > 0, "no crash lost the unsynced records");
}

#[test]
fn a_sync_during_an_unfinished_switch_makes_the_old_segment_durable_first() {
    let dir = Path::new("/log");
    for seed in 0..4u64 {
        let fault = FaultFs::with_seed(seed);
        fault.set_torn_writes(TornWrites::PrefixThenGarbage);
        let probe = SyncProbeFs::over(Arc::new(fault.clone()));
        let gate = probe.gate.clone();
        let fs: Arc<dyn FileSystem> = Arc::new(probe);
        let (log, _) = CommitLog::open(fs, dir, periodic()).unwrap();
        let log = Arc::new(log);
        let ids = append_into_second_segment(&log, &gate);
        // The sync has to wait for the held-back fsync of the first segment.
        let syncer = {
            let log = log.clone();
            std::thread::spawn(move || log.sync())
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !syncer.is_finished(),
            "the sync did not wait for the old segment"
        );
        gate.open();
        syncer.join().unwrap().unwrap();
        fault.crash();
        drop(log);

        let (_log, replayed) = CommitLog::open(Arc::new(fault.clone()), dir, periodic()).unwrap();
        let got: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
        assert_eq!(got, ids, "seed {seed}: a synced record was lost");
    }
}

#[test]
fn a_spare_killed_while_being_made_is_removed() {
    // A process killed between creating the next segment's file and writing its header
    // leaves a temporary file of zeros with the successor's id: not a successor (a spare
    // becomes active only with its header synced), so open removes it and carries on.
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = CommitLog::open(Arc::new(RealFs), dir.path(), periodic()).unwrap();
    let ids: Vec<u64> = (0..10).collect();
    for id in &ids {
        log.append(&payload(*id, 100)).unwrap();
    }
    drop(log);
    let spare = dir.path().join("CommitLog-00000000000000000002.log.tmp");
    std::fs::write(&spare, vec![0u8; SEGMENT_BYTES as usize]).unwrap();

    let (log, replayed) = CommitLog::open(Arc::new(RealFs), dir.path(), periodic())
        .expect("a half-made spare does not stop the log from opening");
    let got: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(got, ids);
    assert!(!spare.exists(), "the half-made spare survived open");
    assert_eq!(log.current_position().segment_id, 2);
}
