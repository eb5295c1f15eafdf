//! Compare-and-set across partitions (`Replica::cas_many`): all or nothing, reads in request
//! order, a held lock answered as a conflict after the wait bound, and no deadlock or lost
//! update when many transactions and single-partition `cas` calls run at once.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use khata_replica::rows::{ReadRowExt, RowWriter, SysValue, read_rows};
use khata_replica::storage::{Mutation, ReadResult};
use khata_replica::{CasManyOutcome, CasRead, Replica, TableSchema};
use khata_types::clustering::full_range;
use khata_types::schema::{ColumnKind, CqlType};
use khata_types::token::DecoratedKey;

mod support;
use support::column;

/// `ks.accounts (k int PRIMARY KEY, balance int)`.
fn create_table(replica: &Replica) -> TableSchema {
    support::keyspace(replica);
    support::create_table(
        replica,
        "accounts",
        vec![
            column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
            column("balance", CqlType::Int, ColumnKind::Regular),
        ],
    )
}

fn key(k: i32) -> DecoratedKey {
    DecoratedKey::new(bytes::Bytes::copy_from_slice(&k.to_be_bytes()))
}

fn set(table: &TableSchema, k: i32, balance: i32, ts: i64) -> Mutation {
    let (key, update) = RowWriter::new(&table.def)
        .set("k", SysValue::Int(k))
        .set("balance", SysValue::Int(balance))
        .build(ts, 0)
        .unwrap();
    Mutation::new(table.def.id, key, update)
}

fn balance(table: &TableSchema, k: i32, read: &ReadResult) -> Option<i32> {
    let rows = read_rows(&table.def, &key(k), &read.partition, 0).unwrap();
    rows.first().and_then(|r| r.int_opt("balance").unwrap())
}

fn reads(table: &TableSchema, keys: &[i32]) -> Vec<CasRead> {
    keys.iter()
        .map(|k| CasRead {
            table: table.def.id,
            key: key(*k),
            ranges: vec![full_range()],
        })
        .collect()
}

fn read_balance(replica: &Replica, table: &TableSchema, k: i32) -> Option<i32> {
    let read = replica
        .read(table.def.id, &key(k), &[full_range()], false, None, 0)
        .unwrap();
    balance(table, k, &read)
}

#[test]
fn writes_to_several_partitions_apply_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let replica = support::open_single(dir.path());
    let table = create_table(&replica);
    replica
        .apply(vec![set(&table, 1, 100, 1), set(&table, 2, 5, 1)], true)
        .unwrap();

    // Reads come back in request order, the same partition twice included.
    let t = table.clone();
    let out = replica
        .cas_many(&reads(&table, &[2, 1, 2]), 0, None, move |reads| {
            assert_eq!(balance(&t, 2, &reads[0]), Some(5));
            assert_eq!(balance(&t, 1, &reads[1]), Some(100));
            assert_eq!(balance(&t, 2, &reads[2]), Some(5));
            Some(vec![set(&t, 1, 70, 2), set(&t, 2, 35, 2), set(&t, 3, 0, 2)])
        })
        .unwrap();
    assert!(matches!(out, CasManyOutcome::Decided { applied: true, .. }));
    assert_eq!(read_balance(&replica, &table, 1), Some(70));
    assert_eq!(read_balance(&replica, &table, 2), Some(35));
    assert_eq!(read_balance(&replica, &table, 3), Some(0));

    // A decision not to write writes nothing.
    let out = replica
        .cas_many(&reads(&table, &[1, 2]), 0, None, |_| None)
        .unwrap();
    assert!(matches!(
        out,
        CasManyOutcome::Decided { applied: false, .. }
    ));
    assert_eq!(read_balance(&replica, &table, 1), Some(70));

    // Both writes are one commit-log record: they survive a restart together.
    replica.close().unwrap();
    drop(replica);
    let replica = support::open_single(dir.path());
    assert_eq!(read_balance(&replica, &table, 1), Some(70));
    assert_eq!(read_balance(&replica, &table, 2), Some(35));
}

#[test]
fn a_lock_held_past_the_bound_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let replica = Arc::new(support::open_single(dir.path()));
    let table = create_table(&replica);
    replica.apply(vec![set(&table, 1, 10, 1)], true).unwrap();

    // A single-partition cas on key 1 holds its lock until told to finish.
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = {
        let replica = replica.clone();
        let id = table.def.id;
        std::thread::spawn(move || {
            replica
                .cas(id, &key(1), &[full_range()], 0, move |_| {
                    entered_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    None
                })
                .unwrap();
        })
    };
    entered_rx.recv().unwrap();
    let t = table.clone();
    let out = replica
        .cas_many(
            &reads(&table, &[7, 1]),
            0,
            Some(Duration::from_millis(20)),
            move |_| Some(vec![set(&t, 7, 1, 2)]),
        )
        .unwrap();
    match out {
        CasManyOutcome::Conflict(items) => assert_eq!(items, vec![1]),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(read_balance(&replica, &table, 7), None, "nothing written");

    release_tx.send(()).unwrap();
    holder.join().unwrap();
    let t = table.clone();
    let out = replica
        .cas_many(
            &reads(&table, &[7, 1]),
            0,
            Some(Duration::from_millis(20)),
            move |_| Some(vec![set(&t, 7, 1, 2)]),
        )
        .unwrap();
    assert!(matches!(out, CasManyOutcome::Decided { applied: true, .. }));
    assert_eq!(read_balance(&replica, &table, 7), Some(1));
}

#[test]
fn concurrent_transfers_neither_deadlock_nor_lose_updates() {
    const ACCOUNTS: i32 = 8;
    const THREADS: usize = 8;
    const TRANSFERS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let replica = Arc::new(support::open_single(dir.path()));
    let table = create_table(&replica);
    let initial: Vec<Mutation> = (0..ACCOUNTS).map(|k| set(&table, k, 1000, 1)).collect();
    replica.apply(initial, true).unwrap();
    let clock = Arc::new(std::sync::atomic::AtomicI64::new(10));

    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let replica = replica.clone();
            let table = table.clone();
            let clock = clock.clone();
            std::thread::spawn(move || {
                for i in 0..TRANSFERS {
                    let from = ((t * 7 + i * 3) % ACCOUNTS as usize) as i32;
                    let to = ((t * 5 + i * 11 + 1) % ACCOUNTS as usize) as i32;
                    if from == to {
                        continue;
                    }
                    // Timestamps are taken under the locks, so they follow the order in
                    // which writes to an account are serialized.
                    let stamp = {
                        let clock = clock.clone();
                        move || clock.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                    };
                    if i % 5 == 0 {
                        // A single-partition read-modify-write on the same locks.
                        let tb = table.clone();
                        replica
                            .cas(table.def.id, &key(from), &[full_range()], 0, move |r| {
                                let b = balance(&tb, from, r).unwrap();
                                Some(vec![set(&tb, from, b, stamp())])
                            })
                            .unwrap();
                        continue;
                    }
                    let tb = table.clone();
                    // No bound: ordered locking alone must rule out deadlock.
                    let out = replica
                        .cas_many(&reads(&table, &[from, to]), 0, None, move |r| {
                            let ts = stamp();
                            let a = balance(&tb, from, &r[0]).unwrap();
                            let b = balance(&tb, to, &r[1]).unwrap();
                            Some(vec![set(&tb, from, a - 1, ts), set(&tb, to, b + 1, ts)])
                        })
                        .unwrap();
                    assert!(matches!(out, CasManyOutcome::Decided { applied: true, .. }));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let total: i32 = (0..ACCOUNTS)
        .map(|k| read_balance(&replica, &table, k).unwrap())
        .sum();
    assert_eq!(total, 1000 * ACCOUNTS);
}
