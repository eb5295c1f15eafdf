//! FaultFs torn writes: a crash keeps the durable bytes and, when tearing, a prefix of the
//! unsynced tail, optionally followed by garbage, or a random subset of its pages (holes);
//! never more than was written; replayable from the seed.

use std::path::Path;

use khata_env::{FaultFs, FileSystem, TornWrites, create_dir_all_durably};
use proptest::prelude::*;

const PATH: &str = "/db/commitlog";

/// Write `chunks` (syncing after those marked), crash, and return (durable, full, survivor).
fn write_and_crash(
    seed: u64,
    torn: TornWrites,
    chunks: &[(Vec<u8>, bool)],
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let fs = FaultFs::with_seed(seed);
    fs.set_torn_writes(torn);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let w = fs.create(Path::new(PATH)).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    let (mut durable, mut full) = (Vec::new(), Vec::new());
    for (bytes, sync) in chunks {
        w.append(bytes).unwrap();
        full.extend_from_slice(bytes);
        if *sync {
            w.sync().unwrap();
            durable.clone_from(&full);
        }
    }
    fs.crash();
    let survivor = fs.contents(Path::new(PATH)).unwrap();
    (durable, full, survivor)
}

fn chunks() -> impl Strategy<Value = Vec<(Vec<u8>, bool)>> {
    prop::collection::vec(
        (prop::collection::vec(any::<u8>(), 0..64), any::<bool>()),
        0..20,
    )
}

proptest! {
    #[test]
    fn torn_prefix_is_durable_plus_prefix_of_unsynced(seed: u64, chunks in chunks()) {
        let (durable, full, survivor) = write_and_crash(seed, TornWrites::Prefix, &chunks);
        prop_assert!(survivor.len() >= durable.len());
        prop_assert!(full.starts_with(&survivor), "survivor must be a prefix of what was written");
    }

    #[test]
    fn torn_garbage_never_outgrows_the_write(seed: u64, chunks in chunks()) {
        let (durable, full, survivor) = write_and_crash(seed, TornWrites::PrefixThenGarbage, &chunks);
        prop_assert!(survivor.starts_with(&durable));
        prop_assert!(survivor.len() <= full.len());
    }

    #[test]
    fn without_tearing_exactly_the_synced_bytes_survive(seed: u64, chunks in chunks()) {
        let (durable, _, survivor) = write_and_crash(seed, TornWrites::Off, &chunks);
        prop_assert_eq!(survivor, durable);
    }

    #[test]
    fn same_seed_same_tear(seed: u64, chunks in chunks()) {
        let a = write_and_crash(seed, TornWrites::PrefixThenGarbage, &chunks);
        let b = write_and_crash(seed, TornWrites::PrefixThenGarbage, &chunks);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn tearing_produces_partial_tails_and_garbage() {
    let chunks = vec![(b"synced|".to_vec(), true), (vec![7u8; 100], false)];
    let (mut partial, mut garbage) = (0, 0);
    for seed in 0..200 {
        let (durable, full, survivor) =
            write_and_crash(seed, TornWrites::PrefixThenGarbage, &chunks);
        assert!(survivor.starts_with(&durable));
        if survivor.len() > durable.len() && survivor.len() < full.len() {
            partial += 1;
        }
        if !full.starts_with(&survivor) {
            garbage += 1;
        }
    }
    assert!(partial > 20, "expected many partial tails, got {partial}");
    assert!(
        garbage > 20,
        "expected garbage after some tails, got {garbage}"
    );
}

#[test]
fn survivor_of_a_tear_is_durable() {
    let fs = FaultFs::with_seed(3);
    fs.set_torn_writes(TornWrites::Prefix);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let w = fs.create(Path::new(PATH)).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    w.append(&[1u8; 1000]).unwrap();
    fs.crash();
    let first = fs.contents(Path::new(PATH)).unwrap();
    assert_eq!(fs.unsynced_len(Path::new(PATH)), Some(0));
    fs.crash();
    assert_eq!(fs.contents(Path::new(PATH)).unwrap(), first);
}

/// Write `(offset, bytes, sync)` steps in place into a preallocated file of `len` bytes
/// (synced once, empty, first), crash, and return (durable, full, survivor).
fn write_in_place_and_crash(
    seed: u64,
    torn: TornWrites,
    len: usize,
    steps: &[(usize, Vec<u8>, bool)],
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let fs = FaultFs::with_seed(seed);
    fs.set_torn_writes(torn);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let f = fs.create_preallocated(Path::new(PATH), len as u64).unwrap();
    f.sync(0).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    let (mut durable, mut full) = (vec![0u8; len], vec![0u8; len]);
    for (offset, bytes, sync) in steps {
        let offset = offset % len;
        let end = (offset + bytes.len()).min(len);
        f.write_at(offset as u64, &bytes[..end - offset]).unwrap();
        full[offset..end].copy_from_slice(&bytes[..end - offset]);
        if *sync {
            f.sync(len as u64).unwrap();
            durable.clone_from(&full);
        }
    }
    fs.crash();
    let survivor = fs.contents(Path::new(PATH)).unwrap();
    (durable, full, survivor)
}

fn steps() -> impl Strategy<Value = Vec<(usize, Vec<u8>, bool)>> {
    prop::collection::vec(
        (
            0usize..256,
            prop::collection::vec(any::<u8>(), 0..64),
            any::<bool>(),
        ),
        0..20,
    )
}

proptest! {
    #[test]
    fn in_place_without_tearing_exactly_the_synced_bytes_survive(seed: u64, steps in steps()) {
        let (durable, _, survivor) = write_in_place_and_crash(seed, TornWrites::Off, 256, &steps);
        prop_assert_eq!(survivor, durable);
    }

    #[test]
    fn in_place_tearing_keeps_each_byte_old_or_new(seed: u64, steps in steps()) {
        let (durable, full, survivor) = write_in_place_and_crash(seed, TornWrites::Prefix, 256, &steps);
        prop_assert_eq!(survivor.len(), 256);
        for i in 0..256 {
            prop_assert!(survivor[i] == durable[i] || survivor[i] == full[i], "byte {} is neither", i);
        }
    }

    #[test]
    fn in_place_garbage_stays_inside_the_file(seed: u64, steps in steps()) {
        let (_, _, survivor) = write_in_place_and_crash(seed, TornWrites::PrefixThenGarbage, 256, &steps);
        prop_assert_eq!(survivor.len(), 256);
    }
}

#[test]
fn in_place_tearing_keeps_a_prefix_of_the_unsynced_span() {
    let steps = vec![(0, b"synced|".to_vec(), true), (7, vec![7u8; 100], false)];
    let (mut none, mut partial, mut all) = (0, 0, 0);
    for seed in 0..200 {
        let (durable, full, survivor) =
            write_in_place_and_crash(seed, TornWrites::Prefix, 4096, &steps);
        assert!(survivor.starts_with(b"synced|"));
        let kept = survivor[7..107].iter().take_while(|&&b| b == 7).count();
        assert!(
            survivor[7 + kept..].iter().all(|&b| b == 0),
            "seed {seed}: not a prefix"
        );
        match kept {
            0 => none += 1,
            100 => all += 1,
            _ => partial += 1,
        }
        assert_eq!(survivor.len(), durable.len());
        assert_eq!(full.len(), 4096);
    }
    assert!(none > 0 && partial > 0 && all > 0, "{none} {partial} {all}");
}

#[test]
fn a_preallocated_file_never_synced_is_empty_after_a_crash() {
    let fs = FaultFs::with_seed(3);
    create_dir_all_durably(&fs, Path::new("/db")).unwrap();
    let f = fs.create_preallocated(Path::new(PATH), 64).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    f.write_at(0, b"lost").unwrap();
    fs.crash();
    assert_eq!(fs.contents(Path::new(PATH)).unwrap(), Vec::<u8>::new());
    assert!(f.write_at(0, b"x").is_err(), "handles die with the process");
}

/// With `TornWrites::Pages` every 4 KiB page of the unsynced bytes is all old or all new, each
/// on its own, so a later page survives an earlier lost one: a hole.
#[test]
fn pages_survive_one_by_one_leaving_holes() {
    const LEN: usize = 5 * 4096;
    // Synced: the first 100 bytes. Unsynced: bytes 100 to 4.5 pages, in place.
    let steps = vec![
        (0, vec![1u8; 100], true),
        (100, vec![2u8; 4 * 4096 + 2048 - 100], false),
    ];
    let (mut holes, mut whole, mut none) = (0, 0, 0);
    for seed in 0..100 {
        let (durable, full, survivor) =
            write_in_place_and_crash(seed, TornWrites::Pages, LEN, &steps);
        assert_eq!(survivor.len(), LEN);
        let kept: Vec<bool> = (0..5)
            .map(|p| {
                let page = p * 4096..(p + 1) * 4096;
                if survivor[page.clone()] == full[page.clone()] {
                    true
                } else {
                    assert_eq!(
                        survivor[page.clone()],
                        durable[page],
                        "seed {seed} page {p}"
                    );
                    false
                }
            })
            .collect();
        if kept.windows(2).any(|w| !w[0] && w[1]) {
            holes += 1;
        }
        match kept.iter().filter(|&&k| k).count() {
            5 => whole += 1,
            0 => none += 1,
            _ => {}
        }
    }
    assert!(
        holes > 30 && whole > 0 && none > 0,
        "{holes} {whole} {none}"
    );
}

#[test]
fn appended_pages_survive_one_by_one_with_zeros_in_the_holes() {
    let chunks = vec![(vec![1u8; 100], true), (vec![2u8; 3 * 4096], false)];
    let mut holes = 0;
    for seed in 0..100 {
        let (durable, full, survivor) = write_and_crash(seed, TornWrites::Pages, &chunks);
        assert!(survivor.starts_with(&durable) && survivor.len() <= full.len());
        for (i, &b) in survivor.iter().enumerate().skip(durable.len()) {
            assert!(b == full[i] || b == 0, "seed {seed}: byte {i}");
        }
        let first_page_end = 4096.min(survivor.len());
        if survivor[100..first_page_end].contains(&0) && survivor.len() > 4096 {
            holes += 1;
        }
    }
    assert!(holes > 10, "{holes}");
}
