//! Records appended across several segments come back from replay in order, with the positions
//! `append` returned, and segment ids keep increasing across restarts.

mod commitlog_common;

use commitlog_common::{config, open, payload, real_fs, segment_files};
use khata_storage::StorageError;
use khata_storage::commitlog::{CommitLogPosition, SyncMode};

#[test]
fn replay_returns_every_record_across_segments_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = config(SyncMode::Batch, 4096);
    let mut expected: Vec<(CommitLogPosition, Vec<u8>)> = Vec::new();

    for run in 0..3u64 {
        let (log, replayed) = open(&fs, dir.path(), cfg);
        let got: Vec<_> = replayed
            .iter()
            .map(|r| (r.position, r.payload.to_vec()))
            .collect();
        assert_eq!(
            got, expected,
            "run {run}: replay differs from what was appended"
        );
        let start = log.current_position();
        if let Some((last, _)) = expected.last() {
            assert!(
                start.segment_id > last.segment_id,
                "a restart starts a new, higher segment"
            );
        }
        for i in 0..200u64 {
            let id = run * 1000 + i;
            // Sizes from 8 bytes to a few hundred.
            let p = payload(id, (i as usize * 7) % 300);
            let pos = log.append(&p).unwrap();
            if let Some((prev, _)) = expected.last() {
                assert!(pos > *prev, "positions increase");
            }
            assert_eq!(log.current_position(), pos);
            expected.push((pos, p));
        }
        log.close().unwrap();
        log.close().unwrap(); // idempotent
        assert!(matches!(log.append(b"late"), Err(StorageError::Closed)));
    }
    let segments = expected
        .iter()
        .map(|(p, _)| p.segment_id)
        .collect::<std::collections::BTreeSet<_>>();
    assert!(
        segments.len() >= 9,
        "records should span many segments, got {segments:?}"
    );
    assert!(segment_files(dir.path()).len() >= segments.len());
    // No record spans a segment: every position lies within the configured segment size.
    assert!(expected.iter().all(|(p, _)| p.offset <= 4096));
}

#[test]
fn empty_payload_is_invalid_argument() {
    // A zero length field marks where a preallocated segment's records end.
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = open(&real_fs(), dir.path(), config(SyncMode::Batch, 4096));
    assert!(matches!(
        log.append(b""),
        Err(StorageError::InvalidArgument(_))
    ));
    log.append(b"x").unwrap();
    drop(log);
    let (_log, replayed) = open(&real_fs(), dir.path(), config(SyncMode::Batch, 4096));
    assert_eq!(replayed.len(), 1);
}

#[test]
fn oversized_payload_is_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = open(&real_fs(), dir.path(), config(SyncMode::Batch, 4096));
    assert!(matches!(
        log.append(&vec![0u8; 2049]),
        Err(StorageError::InvalidArgument(_))
    ));
    log.append(&vec![7u8; 2048]).unwrap(); // exactly max_record_size_bytes is fine
    drop(log);
    let (_log, replayed) = open(&real_fs(), dir.path(), config(SyncMode::Batch, 4096));
    assert_eq!(replayed.len(), 1);
    assert_eq!(replayed[0].payload.len(), 2048);
}

#[test]
fn config_that_cannot_hold_a_maximal_record_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(SyncMode::Batch, 4096);
    cfg.max_record_size_bytes = 4096;
    let err = khata_storage::commitlog::CommitLog::open(real_fs(), dir.path(), cfg).unwrap_err();
    assert!(matches!(err, StorageError::InvalidArgument(_)), "{err}");
}
