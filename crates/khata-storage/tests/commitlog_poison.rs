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
