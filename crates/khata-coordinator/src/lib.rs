//! khata's coordinator layer: the only door from the front ends (CQL, DynamoDB) to the data.
//!
//! [`Coordinator`] decides which replicas serve a request, enforces consistency levels and
//! timeouts, hands out write timestamps and applies schema changes. The front ends see the
//! schema and storage vocabulary through the re-exports below and never reach past this
//! crate (checked by `crates/khata-env/tests/workspace_layering.rs`).

pub mod cas;
pub mod consistency;
pub mod coordinator;
pub mod error;
pub mod metrics;
pub mod trace;

pub use consistency::Consistency;
pub use coordinator::{
    Coordinator, CoordinatorConfig, ReadCommand, ScanCommand, TableEstimate, TimestampSource,
};
pub use error::{CoordinatorError, Result, WriteType};

/// Schema and storage types the front ends use, re-exported from the layers below.
pub mod catalog {
    pub use khata_replica::index::{
        check_indexable_vector, check_name as check_index_name, check_target,
        max_name_len as max_index_name_len, target_text,
    };
    pub use khata_replica::replica::{CQL_VERSION, PARTITIONER, RELEASE_VERSION};
    pub use khata_replica::rows;
    pub use khata_replica::schema::column_id;
    pub use khata_replica::storage::{Mutation, ReadResult, ScanPosition, ScanResult};
    pub use khata_replica::system_tables;
    pub use khata_replica::virtual_tables::ClientInfo;
    pub use khata_replica::{
        CasManyOutcome, CasRead, ChangeKind, ChangeTarget, CustomIndex, DroppedColumn, IndexDef,
        IndexKind, IndexQuery, IndexResult, KeyspaceSchema, NodeInfo, ReplicaError, Schema,
        SchemaChange, SchemaEvent, TableSchema, UserType, entry_value,
    };
}
