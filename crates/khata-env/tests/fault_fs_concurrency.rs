//! FaultFs under threads: appenders and syncers racing a crash never panic, every call after
//! the crash fails, and what survives is a synced prefix of what was written.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use khata_env::{FaultFs, FileSystem, create_dir_all_durably};

#[test]
fn crash_during_concurrent_appends() {
    let fs = FaultFs::with_seed(9);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let paths: Vec<PathBuf> = (0..4).map(|i| PathBuf::from(format!("/db/f{i}"))).collect();
    let files: Vec<_> = paths.iter().map(|p| fs.create(p).unwrap()).collect();
    fs.sync_dir(Path::new("/db")).unwrap();
    let crashed = Arc::new(AtomicBool::new(false));

    let workers: Vec<_> = files
        .into_iter()
        .map(|w| {
            let crashed = Arc::clone(&crashed);
            thread::spawn(move || {
                let mut i: u32 = 0;
                loop {
                    let seen_crash = crashed.load(Ordering::SeqCst);
                    let ok = w.append(&i.to_le_bytes()).is_ok()
                        && (!i.is_multiple_of(8) || w.sync().is_ok());
                    if seen_crash {
                        assert!(!ok, "a handle must fail once the crash has happened");
                        return;
                    }
                    i += 1;
                }
            })
        })
        .collect();
    thread::sleep(std::time::Duration::from_millis(20));
    fs.crash();
    crashed.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.join().unwrap();
    }
    for path in &paths {
        let data = fs.contents(path).unwrap();
        assert_eq!(data.len() % 4, 0);
        for (i, chunk) in data.chunks(4).enumerate() {
            assert_eq!(chunk, (i as u32).to_le_bytes());
        }
    }
}
