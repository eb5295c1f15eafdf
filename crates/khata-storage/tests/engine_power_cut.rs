//! Power cuts with the fault-injecting file system: the engine writes, flushes and compacts,
//! the plug is pulled (unsynced bytes lost, or torn: a prefix kept, perhaps followed by
//! garbage), and a new engine opens on what the disk kept.
//!
//! - `batch` mode: every acknowledged write (inserts and deletions) is there after the cut.
//! - `periodic` mode: the engine reopens cleanly and shows a prefix of the writes, in order,
//!   with the right values, including every write made before the last flush.
//!
//! Each case runs with several seeds, which drive both the workload and the torn lengths.

mod engine_support;

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use engine_support::*;
use khata_env::{FaultFs, FileSystem, ManualClock, TornWrites};
use khata_storage::Engine;
use khata_storage::commitlog::SyncMode;
use khata_types::schema::CompactionStrategy;
use uuid::Uuid;

const SEEDS: u64 = 6;
const TORN: [TornWrites; 4] = [
    TornWrites::Off,
    TornWrites::Prefix,
    TornWrites::PrefixThenGarbage,
    TornWrites::Pages,
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

struct Node {
    fs: FaultFs,
    clock: Arc<ManualClock>,
    sync: SyncMode,
    engine: Option<Engine>,
    table: Uuid,
}

impl Node {
    fn new(seed: u64, torn: TornWrites, sync: SyncMode) -> Self {
        let fs = FaultFs::with_seed(seed);
        fs.set_torn_writes(torn);
        let clock = manual_clock();
        let mut node = Node {
            fs,
            clock,
            sync,
            engine: None,
            table: Uuid::nil(),
        };
        node.open();
        let strategy = CompactionStrategy::SizeTiered {
            min_threshold: 3,
            max_threshold: 8,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_sstable_size_bytes: 1 << 20,
        };
        node.table = create_table(node.engine(), options(strategy, 864_000)).id;
        node
    }

    fn open(&mut self) {
        let fs: Arc<dyn FileSystem> = Arc::new(self.fs.clone());
        let cfg = config(&PathBuf::from("/node"), &self.clock, self.sync);
        self.engine = Some(Engine::open(fs, cfg).expect("reopening after a power cut"));
    }

    fn engine(&self) -> &Engine {
        self.engine.as_ref().unwrap()
    }

    fn power_cut_and_reopen(&mut self) {
        power_cut(&self.fs, self.engine.take().unwrap());
        self.open();
    }

    fn content(&self) -> Content {
        dump(self.engine(), self.table, now(&self.clock))
    }
}

#[test]
fn batch_mode_keeps_every_acknowledged_write() {
    for torn in TORN {
        for seed in 1..=SEEDS {
            let context = format!("{torn:?}, seed {seed}");
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
            let mut node = Node::new(seed, torn, SyncMode::Batch);
            let mut model = Content::new();
            let mut ts = START_MICROS;
            for step in 0..400 {
                ts += 1;
                let (k, c) = (rng.below(30) as u32, rng.below(4) as u32);
                match rng.below(100) {
                    0..=74 => {
                        let v = value(ts as u64, 1 + rng.below(300) as usize);
                        node.engine()
                            .apply(insert(node.table, k, c, &v, ts))
                            .unwrap();
                        model.insert((k, c), Bytes::from(v));
                    }
                    75..=84 => {
                        let m = delete_row(node.table, k, c, ts, now(&node.clock));
                        node.engine().apply(m).unwrap();
                        model.remove(&(k, c));
                    }
                    85..=91 => node.engine().flush(node.table).unwrap(),
                    92..=96 => {
                        node.engine().flush(node.table).unwrap();
                        node.engine().compact_pending(node.table).unwrap();
                    }
                    _ => {
                        node.power_cut_and_reopen();
                        assert_eq!(
                            node.content(),
                            model,
                            "{context}: after a cut at step {step}"
                        );
                    }
                }
            }
            node.power_cut_and_reopen();
            assert_eq!(node.content(), model, "{context}: after the final cut");
            // And the engine is usable afterwards.
            node.engine()
                .apply(insert(node.table, 99, 0, b"after", ts + 1))
                .unwrap();
            node.power_cut_and_reopen();
            model.insert((99, 0), Bytes::from_static(b"after"));
            assert_eq!(
                node.content(),
                model,
                "{context}: after a write and another cut"
            );
        }
    }
}

#[test]
fn periodic_mode_reopens_with_a_prefix_of_the_writes() {
    for torn in TORN {
        for seed in 1..=SEEDS {
            let context = format!("{torn:?}, seed {seed}");
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut node = Node::new(seed, torn, periodic());
            // Write i puts row (i % 25, i) = value(i); writes never overwrite each other, so
            // what survives shows exactly which writes did.
            let mut written: u32 = 0;
            let mut durable: u32 = 0;
            for round in 0..6 {
                for _ in 0..(20 + rng.below(80)) {
                    let i = written;
                    node.engine()
                        .apply(insert(
                            node.table,
                            i % 25,
                            i,
                            &value(u64::from(i), 1 + (i % 97) as usize),
                            START_MICROS + i64::from(i),
                        ))
                        .unwrap();
                    written += 1;
                    match rng.below(40) {
                        0 => {
                            node.engine().flush(node.table).unwrap();
                            durable = written;
                        }
                        1 => {
                            node.engine().flush(node.table).unwrap();
                            node.engine().compact_pending(node.table).unwrap();
                            durable = written;
                        }
                        _ => {}
                    }
                }
                node.power_cut_and_reopen();
                let content = node.content();
                let survived = content.len() as u32;
                let expected: Content = (0..survived)
                    .map(|i| {
                        (
                            (i % 25, i),
                            Bytes::from(value(u64::from(i), 1 + (i % 97) as usize)),
                        )
                    })
                    .collect();
                assert_eq!(
                    content, expected,
                    "{context}, round {round}: not a prefix of the writes, or wrong values"
                );
                assert!(
                    survived >= durable,
                    "{context}, round {round}: {survived} writes survived, but {durable} were \
                     flushed before the cut"
                );
                assert!(survived <= written);
                // Carry on from what survived (the lost writes were never durable).
                written = survived;
                durable = survived;
            }
        }
    }
}
