//! FaultFs power cut: synced data and synced names survive, everything else is lost, and the
//! dead process's handles stop working.

use std::path::Path;

use khata_env::{FaultFs, FileSystem, create_dir_all_durably};

/// A file system with a durable `/db` directory.
fn fs_with_db() -> FaultFs {
    let fs = FaultFs::with_seed(1);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    fs
}

#[test]
fn synced_data_survives_crash() {
    let fs = fs_with_db();
    let path = Path::new("/db/log");
    let w = fs.create(path).unwrap();
    w.append(b"committed").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"committed");
}

#[test]
fn unsynced_appends_are_lost() {
    let fs = fs_with_db();
    let path = Path::new("/db/log");
    let w = fs.create(path).unwrap();
    w.append(b"committed").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    w.append(b" and then some").unwrap();
    assert_eq!(fs.unsynced_len(path), Some(14));
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"committed");
    assert_eq!(fs.unsynced_len(path), Some(0));
}

#[test]
fn new_file_without_dir_sync_vanishes() {
    let fs = fs_with_db();
    let path = Path::new("/db/sstable-1");
    let w = fs.create(path).unwrap();
    w.append(b"data").unwrap();
    w.sync().unwrap();
    fs.crash();
    assert!(!fs.exists(path));
    assert!(fs.list_dir(Path::new("/db")).unwrap().is_empty());
}

#[test]
fn dir_sync_without_data_sync_leaves_empty_file() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    fs.create(path).unwrap().append(b"data").unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"");
}

#[test]
fn new_directory_needs_its_parent_synced() {
    let fs = FaultFs::new();
    fs.create_dir_all(Path::new("/plain/dir")).unwrap();
    fs.sync_dir(Path::new("/plain/dir")).unwrap();
    create_dir_all_durably(&fs, Path::new("/durable/dir")).unwrap();
    fs.crash();
    // Syncing `/` for `/durable` also made `/plain` durable, but nothing synced `/plain`.
    assert!(fs.exists(Path::new("/plain")));
    assert!(!fs.exists(Path::new("/plain/dir")));
    assert!(fs.exists(Path::new("/durable/dir")));
}

#[test]
fn removal_is_undone_until_dir_sync() {
    let fs = fs_with_db();
    let (a, b) = (Path::new("/db/a"), Path::new("/db/b"));
    for path in [a, b] {
        let w = fs.create(path).unwrap();
        w.append(b"x").unwrap();
        w.sync().unwrap();
    }
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.remove_file(a).unwrap();
    fs.remove_file(b).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.create(a).unwrap();
    fs.remove_file(a).unwrap();
    fs.crash();
    assert!(!fs.exists(b), "synced removal stays removed");
    assert!(
        !fs.exists(a),
        "a was removed durably before being re-created and removed again"
    );

    let c = Path::new("/db/c");
    let w = fs.create(c).unwrap();
    w.append(b"keep").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.remove_file(c).unwrap();
    fs.crash();
    assert_eq!(
        fs.contents(c).unwrap(),
        b"keep",
        "unsynced removal is undone"
    );
}

#[test]
fn hard_link_is_undone_until_dir_sync() {
    let fs = fs_with_db();
    create_dir_all_durably(&fs, Path::new("/db/snapshots")).unwrap();
    let path = Path::new("/db/sstable");
    let w = fs.create(path).unwrap();
    w.append(b"rows").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.hard_link(path, Path::new("/db/snapshots/s1")).unwrap();
    fs.hard_link(path, Path::new("/db/snapshots/s2")).unwrap();
    fs.sync_dir(Path::new("/db/snapshots")).unwrap();
    fs.hard_link(path, Path::new("/db/snapshots/s3")).unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new("/db/snapshots/s2")).unwrap(), b"rows");
    assert!(!fs.exists(Path::new("/db/snapshots/s3")));
}

#[test]
fn truncation_by_create_is_undone_until_sync() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    let w = fs.create(path).unwrap();
    w.append(b"old").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.create(path).unwrap().append(b"new, unsynced").unwrap();
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"old");
}

#[test]
fn explicit_truncate_is_durable() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    let w = fs.create(path).unwrap();
    w.append(b"good|torn").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.truncate(path, 4).unwrap();
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"good");
}

#[test]
fn handles_from_before_crash_fail() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    let w = fs.create(path).unwrap();
    w.append(b"abc").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    let r = fs.open_read(path).unwrap();
    fs.crash();
    assert_eq!(fs.crashes(), 1);
    assert!(w.append(b"more").is_err());
    assert!(w.sync().is_err());
    assert!(r.read_vec(0, 3).is_err());
    drop((w, r));
    // The restarted process opens the file afresh.
    let r = fs.open_read(path).unwrap();
    assert_eq!(r.read_vec(0, 3).unwrap(), b"abc");
    let w = fs.open_append(path).unwrap();
    w.append(b"d").unwrap();
    assert_eq!(fs.contents(path).unwrap(), b"abcd");
}

#[test]
fn sync_through_any_handle_covers_all_appends() {
    let fs = fs_with_db();
    let path = Path::new("/db/f");
    let a = fs.create(path).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    let b = fs.open_append(path).unwrap();
    a.append(b"1").unwrap();
    b.append(b"2").unwrap();
    b.sync().unwrap();
    fs.crash();
    assert_eq!(fs.contents(path).unwrap(), b"12");
}

#[test]
fn snapshot_shows_both_views() {
    let fs = fs_with_db();
    let w = fs.create(Path::new("/db/f")).unwrap();
    w.append(b"ab").unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    w.append(b"cd").unwrap();
    fs.create(Path::new("/db/g")).unwrap();
    let snap = fs.snapshot_state();
    assert_eq!(snap.visible_file("/db/f"), Some(&b"abcd"[..]));
    assert_eq!(snap.durable_file("/db/f"), Some(&b"ab"[..]));
    assert!(snap.visible_file("/db/g").is_some());
    assert!(snap.durable_file("/db/g").is_none());
    assert_eq!(
        fs.list_files(),
        vec![
            Path::new("/db/f").to_path_buf(),
            Path::new("/db/g").to_path_buf()
        ]
    );
    assert_eq!(fs.durable_contents(Path::new("/db/f")).unwrap(), b"ab");
    fs.crash();
    let after = fs.snapshot_state();
    assert_eq!(after.visible, snap.durable);
    assert_eq!(after.durable, snap.durable);
}
