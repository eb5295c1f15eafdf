//! The counter flag of a table (`system_schema.tables.flags`) is stored and read back: a counter
//! table whose last counter column was dropped is still a counter table after a restart.

use khata_replica::{DroppedColumn, Replica, SchemaChange, TableSchema};
use khata_types::schema::{ColumnKind, CqlType, TableDef, TableOptions};
use khata_types::token::Token;
use uuid::Uuid;

mod support;
use support::{column, keyspace};

fn open(dir: &std::path::Path, host: Uuid) -> Replica {
    support::open(dir, host, vec![Token(-5), Token(7)])
}

#[test]
fn a_counter_table_stays_one_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let host = Uuid::new_v4();
    let replica = open(dir.path(), host);
    keyspace(&replica);
    let table = TableSchema {
        def: TableDef {
            id: Uuid::new_v4(),
            keyspace: "ks".into(),
            name: "c".into(),
            columns: vec![
                column("k", CqlType::Int, ColumnKind::PartitionKey { position: 0 }),
                column("n", CqlType::Counter, ColumnKind::Regular),
            ],
            options: TableOptions {
                counter: true,
                ..TableOptions::default()
            },
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    };
    replica
        .change_schema(SchemaChange::CreateTable(table.clone()))
        .unwrap();
    let mut next = table.clone();
    next.def.columns.truncate(1);
    next.dropped.push(DroppedColumn {
        name: "n".into(),
        ty: CqlType::Counter,
        dropped_time: 1,
        is_static: false,
    });
    replica
        .change_schema(SchemaChange::AlterTable(next))
        .unwrap();
    replica.close().unwrap();
    drop(replica);

    let replica = open(dir.path(), host);
    let schema = replica.schema();
    let t = schema.table("ks", "c").unwrap();
    assert!(t.def.options.counter);
    assert!(t.def.column("n").is_none());
    replica.close().unwrap();
}
