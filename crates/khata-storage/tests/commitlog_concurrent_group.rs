//! Many threads appending in group mode: every acknowledged record is replayed exactly once, in
//! each thread's order, and concurrent appenders share fsyncs.

mod commitlog_common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use commitlog_common::{SyncProbeFs, config, open, payload_id};
use khata_env::FileSystem;
use khata_storage::commitlog::SyncMode;

const THREADS: u64 = 64;
const PER_THREAD: u64 = 300;

#[test]
fn concurrent_group_appends_replay_exactly_once_in_thread_order() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(SyncProbeFs::default());
    let fs: Arc<dyn FileSystem> = probe.clone();
    // Small segments so rotation happens under contention too.
    let cfg = config(
        SyncMode::Group {
            window: Duration::from_micros(500),
        },
        64 << 10,
    );
    let (log, _) = open(&fs, dir.path(), cfg);
    let syncs_before = probe.syncs.load(Ordering::SeqCst);
    let started = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut last = None;
                for seq in 0..PER_THREAD {
                    let mut p = (t << 32 | seq).to_le_bytes().to_vec();
                    p.resize(8 + (seq as usize % 64), t as u8);
                    let pos = log.append(&p).unwrap();
                    assert!(Some(pos) > last, "a thread's positions increase");
                    last = Some(pos);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let elapsed = started.elapsed();
    let total = THREADS * PER_THREAD;
    let syncs = probe.syncs.load(Ordering::SeqCst) - syncs_before;
    println!(
        "group mode: {total} appends by {THREADS} threads in {elapsed:?} = {:.0}/s, {syncs} fsyncs",
        total as f64 / elapsed.as_secs_f64()
    );
    assert!(
        syncs < total / 4,
        "fsyncs are shared: {syncs} for {total} appends"
    );
    drop(log);

    let (_log, replayed) = open(&fs, dir.path(), cfg);
    assert_eq!(replayed.len() as u64, total);
    let mut next: HashMap<u64, u64> = HashMap::new();
    for r in &replayed {
        let id = payload_id(&r.payload);
        let (t, seq) = (id >> 32, id & 0xffff_ffff);
        let expected = next.entry(t).or_insert(0);
        assert_eq!(
            seq, *expected,
            "thread {t}: records replayed once, in order"
        );
        *expected += 1;
    }
    assert!(next.values().all(|n| *n == PER_THREAD));
    assert!(replayed.windows(2).all(|w| w[0].position < w[1].position));
}
