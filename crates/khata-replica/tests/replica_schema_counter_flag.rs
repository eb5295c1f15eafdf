//! The counter flag of a table (`system_schema.tables.flags`) is stored and read back: a counter
//! table whose last counter column was dropped is still a counter table after a restart.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use khata_env::RealFs;
use khata_replica::schema::column_id;
use khata_replica::{DroppedColumn, NodeInfo, Replica, ReplicaConfig, SchemaChange, TableSchema};
use khata_storage::EngineConfig;
use khata_types::schema::{
    ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef, TableOptions,
};
use khata_types::token::Token;
use uuid::Uuid;

fn open(dir: &std::path::Path, host: Uuid) -> Replica {
    let mut engine = EngineConfig::new(dir);
    engine.background_threads = false;
    Replica::open(
        Arc::new(RealFs),
        ReplicaConfig {
            engine,
            node: NodeInfo {
                cluster_name: "Test Cluster".into(),
                data_center: "datacenter1".into(),
                rack: "rack1".into(),
                listen_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
                internode_port: 7000,
                rpc_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
                native_port: 9042,
            },
            new_host_id: host,
            new_tokens: vec![Token(-5), Token(7)],
        },
    )
    .unwrap()
}

fn column(name: &str, ty: CqlType, kind: ColumnKind) -> ColumnDef {
    ColumnDef {
        id: column_id(name),
        name: name.into(),
        ty,
        kind,
    }
}

fn keyspace(replica: &Replica) {
    replica
        .change_schema(SchemaChange::CreateKeyspace(KeyspaceDef {
            name: "ks".into(),
            replication: Replication::Simple {
                replication_factor: 1,
            },
            durable_writes: true,
        }))
        .unwrap();
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
