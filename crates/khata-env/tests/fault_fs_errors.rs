//! FaultFs error injection: rules fail chosen operations on chosen paths, a set number of
//! times or forever, with an error `is_injected` recognises, and change nothing.

use std::io::ErrorKind;
use std::path::Path;

use khata_env::{FaultFs, FaultOp, FileSystem, PathFilter, create_dir_all_durably, is_injected};

fn fs_with_db() -> FaultFs {
    let fs = FaultFs::new();
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    fs
}

#[test]
fn injected_sync_failure_makes_nothing_durable() {
    let fs = fs_with_db();
    let path = Path::new("/db/log");
    let w = fs.create(path).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    w.append(b"record").unwrap();
    fs.fail_next_syncs(1);
    let err = w.sync().unwrap_err();
    assert!(is_injected(&err), "{err}");
    assert_eq!(fs.unsynced_len(path), Some(6));
    // The next sync is not failed any more.
    w.sync().unwrap();
    assert_eq!(fs.unsynced_len(path), Some(0));
    assert_eq!(fs.injected_count(), 1);
}

#[test]
fn fail_next_n_syncs_counts_file_and_dir_syncs() {
    let fs = fs_with_db();
    let w = fs.create(Path::new("/db/f")).unwrap();
    fs.fail_next_syncs(3);
    assert!(w.sync().is_err());
    assert!(fs.sync_dir(Path::new("/db")).is_err());
    assert!(fs.truncate(Path::new("/db/f"), 0).is_err());
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
}

#[test]
fn fail_all_syncs_until_removed() {
    let fs = fs_with_db();
    let w = fs.create(Path::new("/db/f")).unwrap();
    let id = fs.fail_all_syncs();
    for _ in 0..10 {
        assert!(is_injected(&w.sync().unwrap_err()));
    }
    assert!(fs.remove_fault(id));
    assert!(!fs.remove_fault(id));
    w.sync().unwrap();
}

#[test]
fn failed_sync_data_is_lost_in_crash() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    let w = fs.create(path).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    w.append(b"never durable").unwrap();
    fs.fail_all_syncs();
    assert!(w.sync().is_err());
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"");
}

#[test]
fn writes_fail_on_matching_paths_only() {
    let fs = fs_with_db();
    let log = fs.create(Path::new("/db/commitlog-1.log")).unwrap();
    fs.fail_writes_containing("commitlog");
    assert!(is_injected(&log.append(b"x").unwrap_err()));
    assert!(fs.create(Path::new("/db/commitlog-2.log")).is_err());
    assert!(fs.open_append(Path::new("/db/commitlog-1.log")).is_err());
    assert_eq!(
        fs.contents(Path::new("/db/commitlog-1.log")).unwrap(),
        b"",
        "a failed append appends nothing"
    );
    let other = fs.create(Path::new("/db/sstable-1.db")).unwrap();
    other.append(b"fine").unwrap();
}

#[test]
fn writes_fail_by_predicate() {
    let fs = fs_with_db();
    fs.fail_writes_matching(|p| p.extension().is_some_and(|e| e == "db"));
    assert!(fs.create(Path::new("/db/a.db")).is_err());
    fs.create(Path::new("/db/a.idx")).unwrap();
}

#[test]
fn reads_fail_but_opens_succeed() {
    let fs = fs_with_db();
    fs.create(Path::new("/db/a.db"))
        .unwrap()
        .append(b"abc")
        .unwrap();
    fs.fail_reads_containing("a.db");
    let r = fs.open_read(Path::new("/db/a.db")).unwrap();
    assert!(is_injected(&r.read_vec(0, 3).unwrap_err()));
    fs.clear_faults();
    assert_eq!(r.read_vec(0, 3).unwrap(), b"abc");
}

#[test]
fn next_n_reads_fail() {
    let fs = fs_with_db();
    fs.create(Path::new("/db/a"))
        .unwrap()
        .append(b"abc")
        .unwrap();
    let r = fs.open_read(Path::new("/db/a")).unwrap();
    fs.fail_next_reads(2);
    assert!(r.read_vec(0, 1).is_err());
    assert!(r.read_vec(0, 1).is_err());
    assert_eq!(r.read_vec(0, 1).unwrap(), b"a");
}

#[test]
fn generic_rule_on_rename_matches_either_path() {
    let fs = fs_with_db();
    fs.create(Path::new("/db/a.tmp")).unwrap();
    fs.inject(&[FaultOp::Rename], PathFilter::contains("final"), Some(1));
    let err = fs
        .rename(Path::new("/db/a.tmp"), Path::new("/db/final"))
        .unwrap_err();
    assert!(is_injected(&err));
    assert!(
        fs.exists(Path::new("/db/a.tmp")),
        "a failed rename renames nothing"
    );
    fs.rename(Path::new("/db/a.tmp"), Path::new("/db/final"))
        .unwrap();
}

#[test]
fn genuine_errors_are_not_injected() {
    let fs = fs_with_db();
    let err = fs.open_read(Path::new("/db/missing")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(!is_injected(&err));
}

#[test]
fn rules_survive_a_crash() {
    let fs = fs_with_db();
    fs.fail_all_syncs();
    fs.crash();
    assert!(fs.sync_dir(Path::new("/db")).is_err());
}
