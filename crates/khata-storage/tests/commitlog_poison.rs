//! A failed fsync poisons the log: the append waiting on it and every later append return
//! StorageError::Poisoned; a reopened log works again.

mod commitlog_common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use commitlog_common::{SyncProbeFs, config, open, payload, payload_id};
use khata_env::FileSystem;
use khata_storage::StorageError;
use khata_storage::commitlog::SyncMode;

#[test]
fn failed_sync_poisons_group_and_batch_appends() {
    for mode in [
        SyncMode::Batch,
        SyncMode::Group {
            window: Duration::from_millis(1),
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let probe = Arc::new(SyncProbeFs::default());
        let fs: Arc<dyn FileSystem> = probe.clone();
        let (log, _) = open(&fs, dir.path(), config(mode, 8192));
        log.append(&payload(0, 10)).unwrap();
        probe.fail_syncs.store(true, Ordering::SeqCst);
        let err = log.append(&payload(1, 10)).unwrap_err();
        assert!(
            matches!(err, StorageError::Poisoned(ref r) if r.contains("injected")),
            "{err}"
        );
        probe.fail_syncs.store(false, Ordering::SeqCst);
        assert!(matches!(
            log.append(&payload(2, 10)),
            Err(StorageError::Poisoned(_))
        ));
        assert!(matches!(log.sync(), Err(StorageError::Poisoned(_))));
        assert!(matches!(log.close(), Err(StorageError::Poisoned(_))));
        drop(log);

        // Reopening replays what reached the file; the unacknowledged record may be there.
        let (log, replayed) = open(&fs, dir.path(), config(mode, 8192));
        let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
        assert!(ids == [0] || ids == [0, 1], "{ids:?}");
        log.append(&payload(3, 10)).unwrap();
    }
}

#[test]
fn failed_background_sync_poisons_periodic_appends() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SyncProbeFs::default());
    let fs: Arc<dyn FileSystem> = probe.clone();
    let cfg = config(
        SyncMode::Periodic {
            period: Duration::from_millis(10),
        },
        8192,
    );
    let (log, _) = open(&fs, dir.path(), cfg);
    probe.fail_syncs.store(true, Ordering::SeqCst);
    log.append(&payload(0, 10)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match log.append(&payload(1, 10)) {
            Err(StorageError::Poisoned(_)) => break,
            Ok(_) => assert!(
                Instant::now() < deadline,
                "the background sync never failed"
            ),
            Err(e) => panic!("unexpected {e}"),
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn injected_sync_failure_in_fault_fs_poisons_and_acknowledged_records_survive() {
    use khata_env::fault::FaultFs;

    let fault = FaultFs::with_seed(7);
    let fs: Arc<dyn FileSystem> = Arc::new(fault.clone());
    let cfg = config(
        SyncMode::Group {
            window: Duration::from_millis(1),
        },
        8192,
    );
    let dir = std::path::Path::new("/log");
    let (log, _) = open(&fs, dir, cfg);
    for id in 0..10 {
        log.append(&payload(id, 10)).unwrap();
    }
    fault.fail_next_syncs(1);
    assert!(matches!(
        log.append(&payload(10, 10)),
        Err(StorageError::Poisoned(_))
    ));
    // The disk recovered, but the log stays poisoned: the failed sync's data may be gone.
    assert!(matches!(
        log.append(&payload(11, 10)),
        Err(StorageError::Poisoned(_))
    ));
    fault.crash();
    drop(log);
    let (_log, replayed) = open(&fs, dir, cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (0..10).collect::<Vec<_>>());
}
