//! A partition written row by row (`SsTableWriter::start_partition`, as compaction writes a
//! wide one) is written exactly as the same partition appended whole: the same bytes in every
//! component, whether its rows stayed in memory or went through the scratch file, which is
//! gone afterwards. Empty partitions are skipped both ways, and misuse is an error.

mod sstable_support;

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use khata_storage::sstable::{SsTableWriter, WriterOptions};
use khata_types::Partition;
use khata_types::schema::Compression;
use khata_types::token::DecoratedKey;
use proptest::prelude::*;
use sstable_support::{cache, fs, partition, simple_row, write};

const COMPONENTS: [&str; 6] = [
    "Data",
    "CompressionInfo",
    "Index",
    "Summary",
    "Filter",
    "Statistics",
];

fn options(compressed: bool, chunk: u32, interval: u32, buffer: usize) -> WriterOptions {
    WriterOptions {
        compression: if compressed {
            Compression::Lz4
        } else {
            Compression::None
        },
        chunk_length_bytes: chunk,
        row_index_interval_bytes: interval,
        expected_partitions: 16,
        row_buffer_bytes: buffer,
        ..WriterOptions::default()
    }
}

/// The partition-level parts of `p`, without its rows.
fn level(p: &Partition) -> Partition {
    Partition {
        deletion: p.deletion,
        static_row: p.static_row.clone(),
        range_tombstones: p.range_tombstones.clone(),
        rows: BTreeMap::new(),
    }
}

fn write_row_by_row(
    dir: &Path,
    generation: u64,
    partitions: &BTreeMap<DecoratedKey, Partition>,
    options: WriterOptions,
) {
    let mut w = SsTableWriter::create(fs(), dir, generation, options).unwrap();
    for (key, p) in partitions {
        w.start_partition(key, level(p)).unwrap();
        for (c, row) in &p.rows {
            w.append_row(c, row).unwrap();
        }
        w.finish_partition().unwrap();
    }
    w.finish(cache()).unwrap();
}

fn component(dir: &Path, generation: u64, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(format!("khata-{generation}-{name}.db"))).unwrap()
}

fn file_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn row_by_row_writes_what_whole_partitions_write(
        input in prop::collection::btree_map(prop::collection::vec(any::<u8>(), 0..6), partition(), 1..8),
        compressed in any::<bool>(),
        chunk in 256u32..2048,
        interval in 32u32..600,
        buffer in 1usize..2048,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let partitions: BTreeMap<DecoratedKey, Partition> = input
            .into_iter()
            .map(|(k, p)| (DecoratedKey::new(k), p))
            .collect();
        let list: Vec<_> = partitions.clone().into_iter().collect();
        let opts = options(compressed, chunk, interval, buffer);
        write(dir.path(), 1, &list, opts.clone());
        write_row_by_row(dir.path(), 2, &partitions, opts);
        for name in COMPONENTS {
            let whole = component(dir.path(), 1, name);
            let rows = component(dir.path(), 2, name);
            prop_assert!(whole == rows, "{} differs: {} bytes whole, {} row by row", name, whole.len(), rows.len());
        }
        let names = file_names(dir.path());
        prop_assert!(!names.iter().any(|n| n.contains("Rows")), "{:?}", names);
    }
}

/// A partition of 3,000 rows of 200 bytes goes through the scratch file (1 KiB buffer) and
/// reads back whole and in slices through its row index.
#[test]
fn a_partition_larger_than_the_buffer_goes_through_the_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Partition::new();
    for i in 0u32..3000 {
        let mut c = vec![0x40];
        c.extend_from_slice(&i.to_be_bytes());
        p.rows
            .insert(Bytes::from(c), simple_row(i64::from(i), vec![i as u8; 200]));
    }
    let key = DecoratedKey::new(Bytes::from_static(b"wide"));
    let partitions = BTreeMap::from([(key.clone(), p.clone())]);
    let opts = options(true, 16 << 10, 4 << 10, 1 << 10);
    write(dir.path(), 1, &[(key.clone(), p.clone())], opts.clone());
    write_row_by_row(dir.path(), 2, &partitions, opts);
    for name in COMPONENTS {
        assert_eq!(
            component(dir.path(), 1, name),
            component(dir.path(), 2, name),
            "{name}"
        );
    }
    let table = khata_storage::sstable::SsTable::open(fs(), dir.path(), 2, cache()).unwrap();
    let (got, _) = sstable_support::collect(
        table
            .read(&key, &[khata_types::clustering::full_range()], true)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(got, p);
    assert_eq!(table.stats().row_count, 3000);
    assert!(!file_names(dir.path()).iter().any(|n| n.contains("Rows")));
}

#[test]
fn misuse_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SsTableWriter::create(fs(), dir.path(), 1, WriterOptions::default()).unwrap();
    let a = DecoratedKey::new(Bytes::from_static(b"a"));
    let b = DecoratedKey::new(Bytes::from_static(b"b"));
    let c1 = Bytes::from_static(&[0x40, 1]);
    let c2 = Bytes::from_static(&[0x40, 2]);
    // A row with no partition started.
    assert!(w.append_row(&c1, &simple_row(1, "x")).is_err());
    assert!(w.finish_partition().is_err());
    // A level with rows.
    let mut with_rows = Partition::new();
    with_rows.rows.insert(c1.clone(), simple_row(1, "x"));
    let (first, second) = if a < b { (a, b) } else { (b, a) };
    assert!(w.start_partition(&first, with_rows).is_err());
    w.start_partition(&second, Partition::new()).unwrap();
    w.append_row(&c2, &simple_row(1, "x")).unwrap();
    // Rows out of order, and a partition started while one is open.
    assert!(w.append_row(&c1, &simple_row(1, "x")).is_err());
    assert!(w.append(&second, &Partition::new()).is_err());
    w.finish_partition().unwrap();
    // Nothing but an empty partition: skipped.
    let table = w.finish(cache()).unwrap();
    assert_eq!(table.stats().partition_count, 1);
    assert_eq!(table.stats().row_count, 1);
}
