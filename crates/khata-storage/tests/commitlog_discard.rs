//! `discard_before` deletes the segments whose records all lie before a position; they are not
//! replayed again, the active segment is kept, and segment ids still increase afterwards.

mod commitlog_common;

use commitlog_common::{config, open, payload, payload_id, real_fs, segment_files};
use khata_storage::commitlog::SyncMode;

#[test]
fn discarded_segments_are_deleted_and_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = config(SyncMode::Batch, 4096);
    let (log, _) = open(&fs, dir.path(), cfg);
    let positions: Vec<_> = (0..100)
        .map(|id| log.append(&payload(id, 100)).unwrap())
        .collect();
    let files_before = segment_files(dir.path());
    assert!(files_before.len() >= 3);

    // Flushed up to record 50: every segment ending at or before it goes.
    let flushed = positions[50];
    log.discard_before(flushed).unwrap();
    let files_after = segment_files(dir.path());
    let kept_from = positions
        .iter()
        .position(|p| p.segment_id == flushed.segment_id)
        .unwrap();
    assert!(files_after.len() < files_before.len());
    assert_eq!(
        files_after[0],
        files_before[files_before.len() - files_after.len()]
    );
    // Discarding again, or an older position, changes nothing.
    log.discard_before(flushed).unwrap();
    log.discard_before(positions[0]).unwrap();
    assert_eq!(segment_files(dir.path()), files_after);
    drop(log);

    let (log, replayed) = open(&fs, dir.path(), cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, (kept_from as u64..100).collect::<Vec<_>>());

    // Everything written is flushed: only the active segment stays, and it survives restarts.
    let end = log.current_position();
    log.discard_before(end).unwrap();
    assert_eq!(
        segment_files(dir.path()).len(),
        1,
        "the active segment is never deleted"
    );
    drop(log);
    let (log, replayed) = open(&fs, dir.path(), cfg);
    assert!(replayed.is_empty());
    assert!(
        log.current_position().segment_id > end.segment_id,
        "ids keep increasing"
    );
}

#[test]
fn a_finished_segment_goes_only_once_its_last_record_is_covered() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let (log, _) = open(&fs, dir.path(), config(SyncMode::Batch, 4096));
    let positions: Vec<_> = (0..40)
        .map(|id| log.append(&payload(id, 100)).unwrap())
        .collect();
    let first_segment = positions[0].segment_id;
    let last_of_first = *positions
        .iter()
        .rfind(|p| p.segment_id == first_segment)
        .unwrap();
    let files = segment_files(dir.path());
    let before_last = khata_storage::commitlog::CommitLogPosition {
        offset: last_of_first.offset - 1,
        ..last_of_first
    };
    log.discard_before(before_last).unwrap();
    assert_eq!(segment_files(dir.path()), files);
    log.discard_before(last_of_first).unwrap();
    assert_eq!(segment_files(dir.path()), files[1..]);
}
