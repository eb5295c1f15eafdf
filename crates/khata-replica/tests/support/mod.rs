//! What the replica's tests share: a replica opened on a directory, columns, a keyspace, a
//! table.
#![allow(dead_code)] // each test binary uses its own part

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::Arc;

use khata_env::RealFs;
use khata_replica::schema::column_id;
use khata_replica::{NodeInfo, Replica, ReplicaConfig, SchemaChange, TableSchema};
use khata_storage::EngineConfig;
use khata_types::schema::{
    ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef, TableOptions,
};
use khata_types::token::Token;
use uuid::Uuid;

/// A replica on `dir` (without background threads), its host id and tokens `host` and
/// `tokens` when the directory is new.
pub fn open(dir: &Path, host: Uuid, tokens: Vec<Token>) -> Replica {
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
            new_tokens: tokens,
        },
    )
    .unwrap()
}

/// A replica on `dir` of a node alone in its ring: a new host id and the one token 0 when the
/// directory is new.
pub fn open_single(dir: &Path) -> Replica {
    open(dir, Uuid::new_v4(), vec![Token(0)])
}

/// A column with its name-derived id.
pub fn column(name: &str, ty: CqlType, kind: ColumnKind) -> ColumnDef {
    ColumnDef {
        id: column_id(name),
        name: name.into(),
        ty,
        kind,
    }
}

/// Keyspace `ks`, SimpleStrategy with one replica.
pub fn keyspace(replica: &Replica) {
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

/// Table `ks.<name>` with `columns` and the default options, created in `replica` (whose
/// keyspace `ks` must exist).
pub fn create_table(replica: &Replica, name: &str, columns: Vec<ColumnDef>) -> TableSchema {
    let table = TableSchema {
        def: TableDef {
            id: Uuid::new_v4(),
            keyspace: "ks".into(),
            name: name.into(),
            columns,
            options: TableOptions::default(),
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    };
    replica
        .change_schema(SchemaChange::CreateTable(table.clone()))
        .unwrap();
    table
}
