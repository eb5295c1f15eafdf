//! Discarded segments are recycled: later segments are written over their files (format
//! version 3), and replay still returns exactly the records not discarded, in order: never a
//! record of a file's earlier use, never a torn tail after a clean close, and after a power cut
//! a prefix of what was appended that holds every acknowledged record.

mod commitlog_common;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use commitlog_common::{config, open, payload, payload_id, real_fs, segment_files};
use khata_env::FileSystem;
use khata_env::fault::{FaultFs, TornWrites};
use khata_storage::commitlog::{CommitLog, CommitLogConfig, CommitLogPosition, SyncMode};

const SEGMENT: u64 = 4096;

fn free_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".log.free"))
        .collect()
}

/// Appends `count` records (ids from `first`), discarding up to the record 20 back every 25
/// records as flushes would; notes the inode of every segment file seen. Returns every
/// position, by id.
fn append_and_discard(
    log: &CommitLog,
    dir: &Path,
    first: u64,
    count: u64,
    inodes: &mut BTreeMap<PathBuf, u64>,
) -> Vec<(u64, CommitLogPosition)> {
    let mut positions = Vec::new();
    for id in first..first + count {
        let at = log.append(&payload(id, (id * 37 % 160) as usize)).unwrap();
        positions.push((id, at));
        if positions.len() % 25 == 0 && positions.len() > 20 {
            log.discard_before(positions[positions.len() - 21].1)
                .unwrap();
        }
        for path in segment_files(dir) {
            if let Ok(meta) = std::fs::metadata(&path) {
                inodes.insert(path, meta.ino());
            }
        }
        assert!(free_files(dir).len() <= 2, "at most two segments are kept");
    }
    positions
}

/// The ids replay should return: those in segments not discarded, i.e. from the first record
/// of the oldest segment still on disk.
fn expected_after(positions: &[(u64, CommitLogPosition)], dir: &Path) -> Vec<u64> {
    let oldest: u64 = segment_files(dir)
        .first()
        .and_then(|p| {
            let name = p.file_name()?.to_str()?;
            name.strip_prefix("CommitLog-")?
                .strip_suffix(".log")?
                .parse()
                .ok()
        })
        .unwrap();
    positions
        .iter()
        .filter(|(_, at)| at.segment_id >= oldest)
        .map(|(id, _)| *id)
        .collect()
}

#[test]
fn later_segments_are_written_over_discarded_ones_and_replay_stays_exact() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = config(SyncMode::Batch, SEGMENT);
    let mut inodes = BTreeMap::new();
    let (log, _) = open(&fs, dir.path(), cfg);
    let positions = append_and_discard(&log, dir.path(), 0, 2000, &mut inodes);
    let segments = inodes.len();
    let files: BTreeSet<u64> = inodes.values().copied().collect();
    assert!(segments > 20, "the test spans many segments ({segments})");
    assert!(
        files.len() * 2 < segments,
        "{segments} segments were written in only {} files when recycled",
        files.len()
    );
    let expected = expected_after(&positions, dir.path());
    log.close().unwrap();
    drop(log);

    // A clean close ends the recycled active segment with a marker: nothing is taken for a
    // torn tail and cut, and no record of a file's earlier use comes back.
    let (log, replayed) = open(&fs, dir.path(), cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, expected);
    for path in segment_files(dir.path()) {
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            SEGMENT,
            "{} was cut",
            path.display()
        );
    }

    // Once more, from the replayed state.
    let more = append_and_discard(&log, dir.path(), 10_000, 300, &mut inodes);
    let mut all = positions;
    all.extend(more);
    let expected = expected_after(&all, dir.path());
    drop(log);
    let (_log, replayed) = open(&fs, dir.path(), cfg);
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, expected);
}

#[test]
fn with_recycling_off_discarded_segments_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    let cfg = CommitLogConfig {
        recycle_segments: 0,
        ..config(SyncMode::Batch, SEGMENT)
    };
    let mut inodes = BTreeMap::new();
    let (log, _) = open(&fs, dir.path(), cfg);
    append_and_discard(&log, dir.path(), 0, 300, &mut inodes);
    assert!(free_files(dir.path()).is_empty());
    drop(log);

    // Free files left by a run that recycled are deleted by one that does not.
    let (log, _) = open(&fs, dir.path(), config(SyncMode::Batch, SEGMENT));
    append_and_discard(&log, dir.path(), 1000, 300, &mut inodes);
    assert!(!free_files(dir.path()).is_empty());
    drop(log);
    let (_log, _) = open(&fs, dir.path(), cfg);
    assert!(free_files(dir.path()).is_empty());
}

#[test]
fn a_free_file_of_another_size_is_not_recycled() {
    let dir = tempfile::tempdir().unwrap();
    let fs = real_fs();
    // Segments of 8 KiB are discarded and kept; the next run's segments are 4 KiB.
    let big = config(SyncMode::Batch, 2 * SEGMENT);
    let mut inodes = BTreeMap::new();
    let (log, _) = open(&fs, dir.path(), big);
    append_and_discard(&log, dir.path(), 0, 300, &mut inodes);
    drop(log);
    let old_free: Vec<PathBuf> = free_files(dir.path());
    assert!(!old_free.is_empty());

    let (log, _) = open(&fs, dir.path(), config(SyncMode::Batch, SEGMENT));
    let positions = append_and_discard(&log, dir.path(), 1000, 300, &mut inodes);
    for path in segment_files(dir.path()) {
        assert_eq!(std::fs::metadata(&path).unwrap().len(), SEGMENT);
    }
    assert!(old_free.iter().all(|p| !p.exists()));
    let expected = expected_after(&positions, dir.path());
    drop(log);
    let (_log, replayed) = open(&fs, dir.path(), config(SyncMode::Batch, SEGMENT));
    let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
    assert_eq!(ids, expected);
}

/// Power cuts while segments are discarded and recycled, in periodic mode (unsynced records
/// may go) and batch mode (every acknowledged record stays): what replay returns is always a
/// run of consecutive appended records, starting no later than the oldest segment not
/// discarded and ending no earlier than the last sync.
#[test]
fn power_cuts_with_recycled_segments_lose_nothing_synced_and_replay_nothing_stale() {
    const DIR: &str = "/data/commitlog";
    let mut recycled_files = 0;
    for seed in 0..24u64 {
        let fs = FaultFs::with_seed(seed);
        fs.set_torn_writes(match seed % 3 {
            0 => TornWrites::Off,
            1 => TornWrites::Prefix,
            _ => TornWrites::PrefixThenGarbage,
        });
        let sync = if seed % 2 == 0 {
            SyncMode::Batch
        } else {
            SyncMode::Periodic {
                period: Duration::from_secs(3600),
            }
        };
        let cfg = config(sync, SEGMENT);
        let dyn_fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
        // Every record appended and still possibly on disk, in order, with its position;
        // how many of them are durable; where replay may start at the latest (`hi`: discarding
        // removes at most the segment a discard position is in and those before it).
        let mut appended: Vec<u64> = Vec::new();
        let mut positions: Vec<CommitLogPosition> = Vec::new();
        let mut synced = 0usize;
        let mut hi = 0usize;
        for round in 0..4u64 {
            let (log, replayed) = CommitLog::open(dyn_fs.clone(), Path::new(DIR), cfg)
                .unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
            let ids: Vec<u64> = replayed.iter().map(|r| payload_id(&r.payload)).collect();
            let kept = match ids.first() {
                Some(first) => {
                    let s = appended
                        .iter()
                        .position(|id| id == first)
                        .unwrap_or_else(|| {
                            panic!("seed {seed} round {round}: replayed {first}, never appended")
                        });
                    // (It may start earlier than the discards suggest: a segment whose switch was still being
                    // finished when a discard came is not discarded.)
                    assert!(
                        s <= hi,
                        "seed {seed} round {round}: replay starts at {s}, after {hi}, the \
                         first record no discard could remove"
                    );
                    assert_eq!(
                        ids[..],
                        appended[s..(s + ids.len()).min(appended.len())],
                        "seed {seed} round {round}: not consecutive appended records"
                    );
                    assert!(
                        s + ids.len() >= synced,
                        "seed {seed} round {round}: lost synced records ({} < {synced})",
                        s + ids.len()
                    );
                    s + ids.len()
                }
                None => {
                    assert!(
                        synced <= hi,
                        "seed {seed} round {round}: replayed nothing, {synced} were synced"
                    );
                    hi
                }
            };
            // What was not replayed was never durable (or was discarded): gone for good.
            appended.truncate(kept);
            positions.truncate(kept);
            synced = kept;
            hi = kept - ids.len();
            let cut_after = 150 + ((seed * 53 + round * 31) % 200) as usize;
            for i in 0..cut_after {
                let id = round << 32 | i as u64;
                let at = log
                    .append(&payload(id, ((seed * 13 + i as u64 * 7) % 170) as usize))
                    .unwrap();
                appended.push(id);
                positions.push(at);
                if matches!(sync, SyncMode::Batch) {
                    synced = appended.len();
                } else if i % 60 == 59 {
                    log.sync().unwrap();
                    synced = appended.len();
                }
                if i % 20 == 19 {
                    // A flush covered everything up to 15 records back.
                    let upto = positions[appended.len() - 16];
                    log.discard_before(upto).unwrap();
                    let first_at = |segment: u64| {
                        positions
                            .iter()
                            .position(|p| p.segment_id >= segment)
                            .unwrap_or(positions.len())
                    };
                    hi = hi.max(first_at(upto.segment_id + 1));
                    recycled_files += fs
                        .list_files()
                        .iter()
                        .filter(|p| p.to_string_lossy().ends_with(".free"))
                        .count();
                }
            }
            fs.crash();
            drop(log);
        }
    }
    assert!(
        recycled_files > 0,
        "the test never kept a segment to recycle"
    );
}
