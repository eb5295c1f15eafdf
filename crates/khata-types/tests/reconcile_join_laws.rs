//! Reconciliation is a join (DESIGN.md §3): `Cell::reconcile`, `Row::merge` and
//! `Partition::merge` are commutative, associative and idempotent on canonical values, so
//! replicas converge whatever order writes reach them in. A deletion (partition, range, row) at
//! timestamp `T` removes exactly the cells written at or before `T`. The codec round-trips
//! partitions.
//!
//! Values are drawn from small domains (few timestamps, columns, paths and clustering keys) so
//! that ties and overlaps, where reconciliation rules matter, are common. Rows and partitions are
//! made canonical by merging them into an empty one, as the write path does.

use bytes::Bytes;
use khata_types::clustering::{encode_key, end_bound, start_bound};
use khata_types::codec::{Reader, decode_partition, encode_partition};
use khata_types::schema::{ClusteringOrder, CqlType};
use khata_types::{Cell, CellKey, DeletionTime, LivenessInfo, Partition, RangeTombstoneList, Row};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Generators.

fn timestamp() -> impl Strategy<Value = i64> {
    0i64..8
}

fn local_time() -> impl Strategy<Value = u32> {
    prop_oneof![Just(100u32), Just(200u32), Just(300u32)]
}

fn cell() -> impl Strategy<Value = Cell> {
    let value = proptest::sample::select(vec![&b""[..], b"a", b"b", b"ab"]);
    prop_oneof![
        (timestamp(), value.clone()).prop_map(|(t, v)| Cell::live(t, Bytes::from_static(v))),
        (
            timestamp(),
            value,
            prop_oneof![Just(10u32), Just(20u32)],
            local_time()
        )
            .prop_map(|(t, v, ttl, e)| Cell::expiring(t, Bytes::from_static(v), ttl, e)),
        (timestamp(), local_time()).prop_map(|(t, l)| Cell::tombstone(t, l)),
    ]
}

/// Cells from a tiny domain, so that pairs tie on everything but one field.
fn close_cell() -> impl Strategy<Value = Cell> {
    let value = proptest::sample::select(vec![&b""[..], b"a"]);
    let ts = 0i64..2;
    let at = prop_oneof![Just(100u32), Just(200u32)];
    prop_oneof![
        (ts.clone(), value.clone()).prop_map(|(t, v)| Cell::live(t, Bytes::from_static(v))),
        (
            ts.clone(),
            value,
            prop_oneof![Just(10u32), Just(20u32)],
            at.clone()
        )
            .prop_map(|(t, v, ttl, e)| Cell::expiring(t, Bytes::from_static(v), ttl, e)),
        (ts, at).prop_map(|(t, l)| Cell::tombstone(t, l)),
    ]
}

fn deletion() -> impl Strategy<Value = DeletionTime> {
    (timestamp(), local_time()).prop_map(|(t, l)| DeletionTime::new(t, l))
}

fn cell_key() -> impl Strategy<Value = CellKey> {
    // Columns 0 and 1 are simple, 2 and 3 collections with element paths.
    prop_oneof![
        (0u32..2).prop_map(CellKey::simple),
        (
            2u32..4,
            proptest::sample::select(vec![&b"x"[..], b"y", b"z"])
        )
            .prop_map(|(c, p)| CellKey::element(c, Bytes::from_static(p))),
    ]
}

fn liveness() -> impl Strategy<Value = LivenessInfo> {
    let expiry = proptest::option::of((prop_oneof![Just(10u32), Just(20u32)], local_time()));
    (timestamp(), expiry).prop_map(|(t, e)| {
        LivenessInfo::new(
            t,
            e.map(|(ttl, at)| khata_types::cell::Expiry::new(ttl, at)),
        )
    })
}

/// A row as written, not yet canonical.
fn raw_row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.5, liveness()),
        proptest::option::weighted(0.25, deletion()),
        proptest::collection::btree_map(2u32..4, deletion(), 0..2),
        proptest::collection::btree_map(cell_key(), cell(), 0..6),
    )
        .prop_map(|(liveness, deletion, column_deletions, cells)| Row {
            liveness,
            deletion,
            column_deletions,
            cells: cells.into_iter().collect(),
        })
}

fn canonical_row() -> impl Strategy<Value = Row> {
    raw_row().prop_map(|raw| {
        let mut row = Row::default();
        row.merge(raw);
        row
    })
}

/// The encoding of clustering key `(k)` with one `int` column.
fn clustering(k: i32) -> Bytes {
    encode_key(&[(CqlType::Int, ClusteringOrder::Asc)], &[&k.to_be_bytes()]).unwrap()
}

/// A range deletion between two of the small keys, with random inclusivity.
fn range() -> impl Strategy<Value = (Bytes, Bytes)> {
    (0i32..5, any::<bool>(), 0i32..5, any::<bool>()).prop_map(|(a, ai, b, bi)| {
        (
            start_bound(&clustering(a), ai),
            end_bound(&clustering(b.max(a)), bi),
        )
    })
}

fn partition() -> impl Strategy<Value = Partition> {
    (
        proptest::option::weighted(0.2, deletion()),
        proptest::option::weighted(0.3, raw_row()),
        proptest::collection::vec((range(), deletion()), 0..3),
        proptest::collection::vec((0i32..5, raw_row()), 0..5),
    )
        .prop_map(|(deletion, static_row, ranges, rows)| {
            let mut range_tombstones = RangeTombstoneList::new();
            for ((start, end), d) in ranges {
                range_tombstones.add(start, end, d);
            }
            let mut p = Partition::new();
            p.merge(Partition {
                deletion,
                static_row: Row {
                    liveness: None,
                    deletion: None,
                    ..static_row.unwrap_or_default()
                },
                range_tombstones,
                rows: Default::default(),
            });
            for (k, row) in rows {
                p.add_row(clustering(k), row);
            }
            p
        })
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn merge_rows(a: &Row, b: &Row) -> Row {
    let mut m = a.clone();
    m.merge(b.clone());
    m
}

fn merge_partitions(a: &Partition, b: &Partition) -> Partition {
    let mut m = a.clone();
    m.merge(b.clone());
    m
}

/// Every cell of a partition with where it is: `(clustering, None)` for the static row.
fn cells(p: &Partition) -> Vec<(Option<Bytes>, CellKey, Cell)> {
    let mut out: Vec<_> = p
        .static_row
        .cells
        .iter()
        .map(|(k, c)| (None, k.clone(), c.clone()))
        .collect();
    for (clustering, row) in &p.rows {
        out.extend(
            row.cells
                .iter()
                .map(|(k, c)| (Some(clustering.clone()), k.clone(), c.clone())),
        );
    }
    out
}

fn markers(p: &Partition) -> Vec<(Bytes, LivenessInfo)> {
    p.rows
        .iter()
        .filter_map(|(k, r)| r.liveness.map(|l| (k.clone(), l)))
        .collect()
}

/// Checks that `after` holds exactly the cells and row markers of `before` that `deletes`
/// (given a cell's clustering, `None` for the static row) does not remove.
fn check_deletion(
    before: &Partition,
    after: &Partition,
    removes: impl Fn(Option<&Bytes>, i64) -> bool,
) -> Result<(), TestCaseError> {
    let expected: Vec<_> = cells(before)
        .into_iter()
        .filter(|(k, _, c)| !removes(k.as_ref(), c.timestamp))
        .collect();
    prop_assert_eq!(cells(after), expected);
    let expected: Vec<_> = markers(before)
        .into_iter()
        .filter(|(k, l)| !removes(Some(k), l.timestamp))
        .collect();
    prop_assert_eq!(markers(after), expected);
    Ok(())
}

/// The canonical form of `partition.rs`: nothing is kept that a deletion shadows or that
/// says less than another deletion already does, and no row is empty.
fn check_canonical(p: &Partition) -> Result<(), TestCaseError> {
    use khata_types::cell::max_deletion;
    for rt in p.range_tombstones.iter() {
        prop_assert!(
            p.deletion.is_none_or(|d| rt.deletion > d),
            "range tombstone under deletion"
        );
    }
    let mut rows: Vec<(Option<DeletionTime>, &Row)> = vec![(p.deletion, &p.static_row)];
    for (k, row) in &p.rows {
        prop_assert!(!row.is_empty(), "empty row kept");
        rows.push((p.outer_deletion(k), row));
    }
    for (outer, row) in rows {
        if let (Some(own), Some(outer)) = (row.deletion, outer) {
            prop_assert!(own > outer, "row deletion under an outer deletion");
        }
        let effective = max_deletion(row.deletion, outer);
        if let (Some(l), Some(d)) = (row.liveness, effective) {
            prop_assert!(!d.deletes(l.timestamp), "row marker under a deletion");
        }
        for cd in row.column_deletions.values() {
            prop_assert!(
                effective.is_none_or(|d| *cd > d),
                "column deletion under a deletion"
            );
        }
        for (key, cell) in &row.cells {
            let d = max_deletion(effective, row.column_deletions.get(&key.column).copied());
            prop_assert!(
                !d.is_some_and(|d| d.deletes(cell.timestamp)),
                "shadowed cell kept"
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn cell_reconcile_is_a_join(a in cell(), b in cell(), c in cell()) {
        let r = Cell::reconcile;
        prop_assert_eq!(r(a.clone(), b.clone()), r(b.clone(), a.clone()));
        prop_assert_eq!(
            r(r(a.clone(), b.clone()), c.clone()),
            r(a.clone(), r(b.clone(), c.clone()))
        );
        prop_assert_eq!(r(a.clone(), a.clone()), a.clone());
        // The winner is one of the two, and dominates both.
        let w = r(a.clone(), b.clone());
        prop_assert!(w == a || w == b);
        prop_assert!(w >= a && w >= b);
    }

    #[test]
    fn cell_reconcile_is_a_join_on_close_cells(
        a in close_cell(),
        b in close_cell(),
        c in close_cell(),
    ) {
        let r = Cell::reconcile;
        prop_assert_eq!(r(a.clone(), b.clone()), r(b.clone(), a.clone()));
        prop_assert_eq!(
            r(r(a.clone(), b.clone()), c.clone()),
            r(a.clone(), r(b.clone(), c.clone()))
        );
    }

    #[test]
    fn merged_partitions_are_canonical(a in partition(), b in partition()) {
        check_canonical(&merge_partitions(&a, &b))?;
        check_canonical(&a)?;
    }

    #[test]
    fn row_merge_is_a_join(a in canonical_row(), b in canonical_row(), c in canonical_row()) {
        prop_assert_eq!(merge_rows(&a, &b), merge_rows(&b, &a));
        prop_assert_eq!(merge_rows(&merge_rows(&a, &b), &c), merge_rows(&a, &merge_rows(&b, &c)));
        prop_assert_eq!(merge_rows(&a, &a), a.clone());
    }

    #[test]
    fn partition_merge_is_a_join(a in partition(), b in partition(), c in partition()) {
        prop_assert_eq!(merge_partitions(&a, &b), merge_partitions(&b, &a));
        prop_assert_eq!(
            merge_partitions(&merge_partitions(&a, &b), &c),
            merge_partitions(&a, &merge_partitions(&b, &c))
        );
        prop_assert_eq!(merge_partitions(&a, &a), a.clone());
        prop_assert_eq!(merge_partitions(&a, &Partition::new()), a.clone());
    }

    #[test]
    fn partition_deletion_removes_exactly_cells_at_or_before_it(p in partition(), d in deletion()) {
        let after = merge_partitions(&p, &Partition { deletion: Some(d), ..Default::default() });
        check_deletion(&p, &after, |_, ts| ts <= d.marked_for_delete_at)?;
    }

    #[test]
    fn range_deletion_removes_exactly_cells_at_or_before_it_in_range(
        p in partition(),
        (start, end) in range(),
        d in deletion(),
    ) {
        let mut update = Partition::new();
        update.range_tombstones.add(start.clone(), end.clone(), d);
        let after = merge_partitions(&p, &update);
        check_deletion(&p, &after, |k, ts| {
            k.is_some_and(|k| start <= *k && *k < end) && ts <= d.marked_for_delete_at
        })?;
    }

    #[test]
    fn row_deletion_removes_exactly_cells_at_or_before_it_in_the_row(
        p in partition(),
        k in 0i32..5,
        d in deletion(),
    ) {
        let key = clustering(k);
        let mut update = Partition::new();
        update.add_row(key.clone(), Row { deletion: Some(d), ..Default::default() });
        let after = merge_partitions(&p, &update);
        check_deletion(&p, &after, |c, ts| c == Some(&key) && ts <= d.marked_for_delete_at)?;
    }

    #[test]
    fn column_deletion_removes_exactly_its_cells_at_or_before_it(
        p in partition(),
        k in 0i32..5,
        column in 2u32..4,
        d in deletion(),
    ) {
        let key = clustering(k);
        let mut row = Row::default();
        row.column_deletions.insert(column, d);
        let mut update = Partition::new();
        update.add_row(key.clone(), row);
        let after = merge_partitions(&p, &update);
        let expected: Vec<_> = cells(&p)
            .into_iter()
            .filter(|(c, ck, cell)| {
                !(c.as_ref() == Some(&key) && ck.column == column
                    && cell.timestamp <= d.marked_for_delete_at)
            })
            .collect();
        prop_assert_eq!(cells(&after), expected);
    }

    /// Data written before a deletion stays invisible when it arrives after it.
    #[test]
    fn late_data_under_a_deletion_stays_deleted(p in partition(), d in deletion()) {
        let deleted = Partition { deletion: Some(d), ..Default::default() };
        let after = merge_partitions(&deleted, &p);
        for (_, _, c) in cells(&after) {
            prop_assert!(c.timestamp > d.marked_for_delete_at);
        }
        for (_, l) in markers(&after) {
            prop_assert!(l.timestamp > d.marked_for_delete_at);
        }
    }

    #[test]
    fn codec_round_trips_partitions(p in partition()) {
        let mut buf = Vec::new();
        encode_partition(&mut buf, &p);
        let decoded = decode_partition(&mut Reader::new(Bytes::from(buf))).unwrap();
        prop_assert_eq!(decoded, p);
    }
}
