//! A memtable keeps its partitions in a hash map and makes order only when asked: the flush
//! (`try_for_each`) sorts the keys, a scan (`scan_from`) reads an ordered view that first takes
//! in every partition created since the last scan. Whatever the interleaving of writes and
//! scans, both must see every partition written before them, in token order, exactly once.

mod engine_support;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use engine_support::{insert_update, pk, value};
use khata_storage::memtable::Memtable;
use khata_storage::read::Scanned;
use khata_types::partition::Partition;
use khata_types::token::DecoratedKey;
use proptest::prelude::*;

fn flushed(m: &Memtable) -> Vec<(DecoratedKey, Partition)> {
    let mut out = Vec::new();
    m.try_for_each(|k, p| {
        out.push((k.clone(), p.to_partition()));
        Ok::<_, ()>(())
    })
    .unwrap();
    out
}

/// The partitions a scan from `from` gives, all whole (no partition counts as wide).
fn scanned(m: &Memtable, from: Bound<&DecoratedKey>) -> Vec<(DecoratedKey, Partition)> {
    m.scan_from(from, usize::MAX)
        .map(|(k, s)| match s {
            Scanned::Whole(p) => (k, p),
            Scanned::Wide => panic!("no partition is wide under usize::MAX rows"),
        })
        .collect()
}

proptest! {
    /// Writes (key, clustering) with scans from random keys in between; every scan and the
    /// final flush equal a BTreeMap model.
    #[test]
    fn scans_and_flush_see_every_partition_in_order(
        steps in proptest::collection::vec((0u32..60, 0u32..4, any::<bool>()), 1..120),
    ) {
        let m = Memtable::new();
        let mut model: BTreeMap<DecoratedKey, Partition> = BTreeMap::new();
        for (i, (k, c, scan)) in steps.into_iter().enumerate() {
            let key = pk(k);
            let update = insert_update(c, &value(i as u64, 4), 10 + i as i64, None);
            model.entry(key.clone()).or_default().merge(update.clone());
            m.apply(&key, update);
            prop_assert_eq!(m.partition_count(), model.len());
            if scan {
                let from = pk(k.wrapping_mul(7) % 60);
                let expected: Vec<_> = model
                    .range((Bound::Included(&from), Bound::Unbounded))
                    .map(|(k, p)| (k.clone(), p.clone()))
                    .collect();
                prop_assert_eq!(scanned(&m, Bound::Included(&from)), expected);
                let all: Vec<_> = model.iter().map(|(k, p)| (k.clone(), p.clone())).collect();
                prop_assert_eq!(scanned(&m, Bound::Unbounded), all);
            }
        }
        let all: Vec<_> = model.into_iter().collect();
        prop_assert_eq!(flushed(&m), all);
    }
}

#[test]
fn concurrent_writers_and_scanners_lose_nothing() {
    let m = Arc::new(Memtable::new());
    let writers: Vec<_> = (0..4u32)
        .map(|w| {
            let m = m.clone();
            std::thread::spawn(move || {
                for i in 0..2_000u32 {
                    // Writers overlap on half of their keys, so new keys race.
                    let k = if i % 2 == 0 { i } else { w * 10_000 + i };
                    m.apply(&pk(k), insert_update(0, &value(u64::from(i), 4), 1, None));
                }
            })
        })
        .collect();
    let scanner = {
        let m = m.clone();
        std::thread::spawn(move || {
            let mut seen_max = 0;
            for _ in 0..200 {
                let keys: Vec<DecoratedKey> = m
                    .scan_from(Bound::Unbounded, usize::MAX)
                    .map(|(k, _)| k)
                    .collect();
                assert!(keys.windows(2).all(|w| w[0] < w[1]), "a scan out of order");
                assert!(keys.len() >= seen_max, "a later scan saw fewer partitions");
                seen_max = keys.len();
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    scanner.join().unwrap();
    // Keys 0, 2, ..., 1998 shared, and each writer's odd keys.
    let expected = 1_000 + 4 * 1_000;
    assert_eq!(m.partition_count(), expected);
    assert_eq!(scanned(&m, Bound::Unbounded).len(), expected);
    let flushed = flushed(&m);
    assert_eq!(flushed.len(), expected);
    assert!(flushed.windows(2).all(|w| w[0].0 < w[1].0));
}
