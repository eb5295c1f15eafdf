//! A scan returns whole partitions in key order from any start key, present or not.

mod sstable_support;

use bytes::Bytes;
use khata_storage::sstable::WriterOptions;
use khata_types::Partition;
use khata_types::token::{DecoratedKey, Token};
use sstable_support::{simple_row, write};

#[test]
fn scan_starts_at_the_first_key_at_or_after_from() {
    let dir = tempfile::tempdir().unwrap();
    // Tokens 0, 10, 20, ...: a gap between each pair of keys to start scans from.
    let mut list: Vec<(DecoratedKey, Partition)> = (0..1000i64)
        .map(|i| {
            let key = DecoratedKey {
                token: Token(i * 10),
                key: Bytes::from(format!("k{i}")),
            };
            let mut p = Partition::new();
            for r in 0..(i % 4) {
                p.add_row(
                    Bytes::from(vec![r as u8]),
                    simple_row(i, Bytes::from(format!("v{i}-{r}"))),
                );
            }
            if i % 4 == 0 {
                p.deletion = Some(khata_types::DeletionTime::new(i, 1));
            }
            (key, p)
        })
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    let options = WriterOptions {
        chunk_length_bytes: 512,
        ..WriterOptions::default()
    };
    let table = write(dir.path(), 1, &list, options);

    let all: Vec<_> = table.scan(None).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(all, list);

    for start in [0i64, 1, 9, 10, 11, 1279, 1280, 1281, 5555, 9990, 9991, -5] {
        let from = DecoratedKey {
            token: Token(start),
            key: Bytes::new(),
        };
        let got: Vec<_> = table
            .scan(Some(&from))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<_> = list.iter().filter(|(k, _)| *k >= from).cloned().collect();
        assert_eq!(got.len(), want.len(), "from token {start}");
        assert_eq!(got, want, "from token {start}");
    }
    // Starting exactly at a present key includes it.
    let (key, _) = &list[517];
    let got: Vec<_> = table
        .scan(Some(key))
        .unwrap()
        .take(2)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got, list[517..519].to_vec());
}
