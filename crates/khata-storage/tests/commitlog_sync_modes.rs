//! Each sync mode acknowledges appends and replays them; group and batch fsync before
//! acknowledging, periodic fsyncs in the background.

mod commitlog_common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use commitlog_common::{MODES, SyncProbeFs, config, open, payload, payload_id};
use khata_env::FileSystem;
use khata_storage::commitlog::SyncMode;

#[test]
fn every_mode_acknowledges_and_replays() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let probe = Arc::new(SyncProbeFs::default());
        let fs: Arc<dyn FileSystem> = probe.clone();
        let (log, replayed) = open(&fs, dir.path(), config(mode, 8192));
        assert!(replayed.is_empty());
        let syncs_at_start = probe.syncs.load(Ordering::SeqCst);
        for id in 0..50 {
            log.append(&payload(id, 100)).unwrap();
        }
        let syncs = probe.syncs.load(Ordering::SeqCst) - syncs_at_start;
        match mode {
            // Single-threaded: every acknowledgement needed its own fsync.
            SyncMode::Batch | SyncMode::Group { .. } => assert!(syncs >= 50, "{mode:?}: {syncs}"),
            SyncMode::Periodic { .. } => {}
        }
        drop(log);
        let (log, replayed) = open(&fs, dir.path(), config(mode, 8192));
        let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
        assert_eq!(ids, (0..50).collect::<Vec<_>>(), "{mode:?}");
        log.close().unwrap();
    }
}

#[test]
fn periodic_mode_syncs_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SyncProbeFs::default());
    let fs: Arc<dyn FileSystem> = probe.clone();
    let period = Duration::from_millis(30);
    let (log, _) = open(
        &fs,
        dir.path(),
        config(SyncMode::Periodic { period }, 1 << 20),
    );
    let before = probe.syncs.load(Ordering::SeqCst);
    let started = Instant::now();
    for id in 0..20 {
        log.append(&payload(id, 10)).unwrap();
    }
    if started.elapsed() < period {
        assert_eq!(
            probe.syncs.load(Ordering::SeqCst),
            before,
            "appends do not fsync"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.syncs.load(Ordering::SeqCst) == before {
        assert!(
            Instant::now() < deadline,
            "the periodic thread never synced"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // With nothing new written, the thread does not keep fsyncing.
    let settled = probe.syncs.load(Ordering::SeqCst);
    std::thread::sleep(period * 4);
    assert_eq!(probe.syncs.load(Ordering::SeqCst), settled);
    log.close().unwrap();
}
