//! Helpers shared by the SSTable tests: random partitions, an in-memory slice oracle, and
//! writing and reading back whole SSTables.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use khata_env::{FileSystem, RealFs};
use khata_storage::sstable::{BlockCache, PartitionReader, SsTable, SsTableWriter, WriterOptions};
use khata_types::cell::Cell;
use khata_types::token::DecoratedKey;
use khata_types::{CellKey, DeletionTime, LivenessInfo, Partition, RangeTombstoneList, Row};
use proptest::prelude::*;

pub fn fs() -> Arc<dyn FileSystem> {
    Arc::new(RealFs)
}

pub fn cache() -> Arc<BlockCache> {
    Arc::new(BlockCache::new(64 << 20))
}

/// Write `partitions` (sorted here) as generation `generation` in `dir`.
pub fn write(
    dir: &Path,
    generation: u64,
    partitions: &[(DecoratedKey, Partition)],
    options: WriterOptions,
) -> Arc<SsTable> {
    let mut sorted: Vec<&(DecoratedKey, Partition)> = partitions.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut writer = SsTableWriter::create(fs(), dir, generation, options).unwrap();
    for (key, partition) in sorted {
        writer.append(key, partition).unwrap();
    }
    writer.finish(cache()).unwrap()
}

/// Drain a partition reader into a partition (rows reversed back when `reversed`).
pub fn collect(reader: PartitionReader) -> khata_storage::Result<(Partition, Vec<Bytes>)> {
    let mut partition = Partition {
        deletion: reader.deletion,
        static_row: reader.static_row,
        range_tombstones: reader.range_tombstones,
        ..Partition::default()
    };
    let mut order = Vec::new();
    for row in reader.rows {
        let (clustering, row) = row?;
        order.push(clustering.clone());
        partition.rows.insert(clustering, row);
    }
    Ok((partition, order))
}

/// What a read of `ranges` must return: the oracle.
pub fn slice(partition: &Partition, ranges: &[(Bytes, Bytes)]) -> Partition {
    let mut rts = Vec::new();
    for (start, end) in ranges {
        rts.extend(partition.range_tombstones.slice(start, end));
    }
    Partition {
        deletion: partition.deletion,
        static_row: partition.static_row.clone(),
        range_tombstones: RangeTombstoneList::from_sorted(rts).unwrap(),
        rows: partition
            .rows
            .iter()
            .filter(|(c, _)| ranges.iter().any(|(s, e)| s <= *c && *c < e))
            .map(|(c, r)| (c.clone(), r.clone()))
            .collect(),
    }
}

/// Byte strings over a small alphabet, so that bounds and keys collide often.
fn bound() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(
        prop::sample::select(vec![0x00u8, 0x01, 0x02, 0x7f, 0xff]),
        0..4,
    )
    .prop_map(Bytes::from)
}

/// A clustering key: like the real encoding, it starts with a component header (0x01 or
/// 0x02), so it sorts below the `[0xFF]` end of the full range.
fn clustering() -> impl Strategy<Value = Bytes> {
    (1u8..3, bound()).prop_map(|(header, rest)| {
        let mut key = vec![header];
        key.extend_from_slice(&rest);
        Bytes::from(key)
    })
}

fn cell() -> impl Strategy<Value = Cell> {
    (0i64..100, 0u8..3, prop::collection::vec(any::<u8>(), 0..24)).prop_map(|(ts, kind, v)| {
        match kind {
            0 => Cell::live(ts, v),
            1 => Cell::expiring(ts, v, 60, 1_000 + ts as u32),
            _ => Cell::tombstone(ts, 500 + ts as u32),
        }
    })
}

fn row() -> impl Strategy<Value = Row> {
    (
        prop::option::of(0i64..100),
        prop::option::of(0i64..100),
        prop::collection::btree_map((0u32..4, prop::option::of(clustering())), cell(), 0..5),
    )
        .prop_map(|(liveness, deletion, cells)| Row {
            liveness: liveness.map(|t| LivenessInfo::new(t, None)),
            deletion: deletion.map(|t| DeletionTime::new(t, 700)),
            column_deletions: Default::default(),
            cells: cells
                .into_iter()
                .map(|((column, path), cell)| (CellKey { column, path }, cell))
                .collect(),
        })
}

/// A random canonical partition.
pub fn partition() -> impl Strategy<Value = Partition> {
    (
        prop::option::of(0i64..30),
        prop::option::of(row()),
        prop::collection::vec((bound(), bound(), 0i64..100), 0..3),
        prop::collection::btree_map(clustering(), row(), 0..40),
    )
        .prop_map(|(deletion, static_row, rts, rows)| {
            let mut p = Partition::new();
            p.merge(Partition {
                deletion: deletion.map(|t| DeletionTime::new(t, 10)),
                ..Default::default()
            });
            if let Some(s) = static_row {
                p.merge(Partition {
                    static_row: s,
                    ..Default::default()
                });
            }
            for (a, b, t) in rts {
                let mut list = RangeTombstoneList::new();
                list.add(a.clone().min(b.clone()), a.max(b), DeletionTime::new(t, 20));
                p.merge(Partition {
                    range_tombstones: list,
                    ..Default::default()
                });
            }
            for (c, r) in rows {
                p.add_row(c, r);
            }
            p
        })
}

/// Sorted, disjoint, non-empty byte ranges.
pub fn ranges() -> impl Strategy<Value = Vec<(Bytes, Bytes)>> {
    prop::collection::vec(bound(), 0..7).prop_map(|mut bounds| {
        bounds.sort();
        bounds.dedup();
        bounds
            .chunks_exact(2)
            .map(|w| (w[0].clone(), w[1].clone()))
            .collect()
    })
}

/// A tiny deterministic generator for bulk test data.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A row with one live cell.
pub fn simple_row(ts: i64, value: impl Into<Bytes>) -> Row {
    let mut row = Row {
        liveness: Some(LivenessInfo::new(ts, None)),
        ..Row::default()
    };
    row.cells
        .insert(CellKey::simple(1), Cell::live(ts, value.into()));
    row
}
