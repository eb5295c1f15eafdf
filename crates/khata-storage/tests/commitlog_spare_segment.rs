//! The next segment is prepared in the background and the switch uses it; a spare left by a
//! crash is never replayed; in periodic mode the log syncs ahead of the period once
//! `SYNC_AHEAD_BYTES` have been written, so a segment switch has little left to sync.

mod commitlog_common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use commitlog_common::{SyncProbeFs, config, open, payload, payload_id, real_fs, segment_files};
use khata_env::FileSystem;
use khata_storage::commitlog::{SYNC_AHEAD_BYTES, SyncMode};

const SEGMENT_BYTES: u64 = 8192;

fn periodic() -> SyncMode {
    SyncMode::Periodic {
        period: Duration::from_secs(10),
    }
}

/// The spare segment's temporary file in `dir`, once the background thread has made it.
fn wait_for_spare(dir: &Path) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let spare = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".log.tmp"));
        if let Some(spare) = spare {
            return spare;
        }
        assert!(Instant::now() < deadline, "no spare segment was prepared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_switch_uses_the_segment_prepared_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = config(periodic(), SEGMENT_BYTES);
    let (log, _) = open(&fs, dir.path(), cfg);
    // Past half of the first segment: the background thread is asked for the next one.
    let mut id = 0;
    while log.current_position().offset < SEGMENT_BYTES / 2 + 1 {
        log.append(&payload(id, 100)).unwrap();
        id += 1;
    }
    let spare = wait_for_spare(dir.path());
    let spare_inode = std::fs::metadata(&spare).unwrap().ino();
    assert_eq!(
        segment_files(dir.path()).len(),
        1,
        "a spare is not a segment yet"
    );
    let first = log.current_position().segment_id;
    while log.current_position().segment_id == first {
        log.append(&payload(id, 100)).unwrap();
        id += 1;
    }
    // Appends moved to the spare at once; the background thread syncs the old segment and
    // then renames the spare into place.
    let deadline = Instant::now() + Duration::from_secs(5);
    let files = loop {
        let files = segment_files(dir.path());
        if files.len() == 2 {
            break files;
        }
        assert!(
            Instant::now() < deadline,
            "the switch never finished: {files:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(
        std::fs::metadata(&files[1]).unwrap().ino(),
        spare_inode,
        "the switch made a new file instead of using the spare"
    );
    drop(log);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "close left {leftovers:?}");

    let (_log, replayed) = open(&fs, dir.path(), cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (0..id).collect::<Vec<_>>());
}

#[test]
fn a_spare_left_by_a_crash_is_removed_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = config(periodic(), SEGMENT_BYTES);
    let (log, _) = open(&fs, dir.path(), cfg);
    let mut id = 0;
    while log.current_position().offset < SEGMENT_BYTES / 2 + 1 {
        log.append(&payload(id, 100)).unwrap();
        id += 1;
    }
    wait_for_spare(dir.path());
    // The directory as a killed process leaves it: every record written, the spare still there.
    let crashed = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, crashed.path().join(path.file_name().unwrap())).unwrap();
    }
    drop(log);

    let (log, replayed) = open(&fs, crashed.path(), cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (0..id).collect::<Vec<_>>());
    let names: Vec<_> = std::fs::read_dir(crashed.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".tmp")),
        "the spare survived open: {names:?}"
    );
    // Ids keep increasing past the spare's: the new active segment is above the replayed one.
    assert_eq!(log.current_position().segment_id, 2);
}

#[test]
fn periodic_mode_syncs_ahead_of_the_period() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SyncProbeFs::default());
    let fs: Arc<dyn FileSystem> = probe.clone();
    let (log, _) = open(&fs, dir.path(), config(periodic(), 32 << 20));
    let before = probe.syncs.load(Ordering::SeqCst);
    let record = 1000;
    for id in 0..(SYNC_AHEAD_BYTES / record + 2) {
        log.append(&payload(id, record as usize)).unwrap();
    }
    // Long before the 10 s period is up.
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.syncs.load(Ordering::SeqCst) == before {
        assert!(
            Instant::now() < deadline,
            "{SYNC_AHEAD_BYTES} bytes written and no sync ahead of the period"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    log.close().unwrap();
}
