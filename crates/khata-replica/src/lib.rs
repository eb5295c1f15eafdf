//! khata's replica layer: what one node keeps and serves locally, below the coordinator.
//!
//! - [`replica::Replica`] owns the storage engine and the schema catalog; it applies and reads
//!   data for the coordinator and applies schema changes, writing them to the `system_schema`
//!   tables exactly as Cassandra keeps them, so that a restart reloads the schema and drivers
//!   read it with ordinary queries.
//! - [`schema`] is the catalog snapshot; [`system_tables`] the definitions of the system
//!   keyspaces and their tables (`system`, `system_schema`, `system_traces`, `system_auth`,
//!   `system_distributed`); [`schema_tables`] the mapping between the two; [`rows`] the
//!   small row codec the replica uses to write and read its own tables; [`virtual_tables`] the
//!   `system_views` and `system_virtual_schema` tables, made when read.
//! - [`transaction`]: compare-and-set across partitions (`Replica::cas_many`), all locks in one
//!   order, one commit-log record: DynamoDB's transactions on one node.
//!
//! The replica knows nothing of networks or of other nodes: the cluster and coordinator layers
//! above decide which replicas to ask.

pub mod error;
pub mod index;
mod paged_read;
pub mod replica;
mod replicated_system_tables;
pub mod rows;
pub mod schema;
pub mod schema_tables;
pub mod system_tables;
pub mod transaction;
pub mod virtual_tables;

pub use error::{ReplicaError, Result};
pub use index::{IndexKind, IndexQuery, IndexResult, entry_value};
pub use replica::{
    ChangeKind, ChangeTarget, NodeInfo, Replica, ReplicaConfig, SchemaChange, SchemaEvent,
};
pub use schema::{
    CustomIndex, DroppedColumn, IndexDef, KeyspaceSchema, Schema, TableSchema, UserType,
};
pub use transaction::{CasManyOutcome, CasRead};

/// The storage types the layers above see through the replica.
pub mod storage {
    pub use khata_storage::commitlog::SyncMode;
    pub use khata_storage::{
        Mutation, ReadResult, ScanPosition, ScanResult, StorageError, TableStats,
    };
}
