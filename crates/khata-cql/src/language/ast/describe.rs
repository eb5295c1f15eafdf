//! `DESCRIBE` statements, as cqlsh 6 sends them to the server (Cassandra 4's
//! `DescribeStatement`).

use super::{Name, QualifiedName};

/// What a `DESCRIBE` describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescribeTarget {
    /// `DESCRIBE CLUSTER`
    Cluster,
    /// `DESCRIBE [FULL] SCHEMA`
    Schema {
        /// `FULL`: system keyspaces too.
        full: bool,
    },
    /// `DESCRIBE KEYSPACES`
    Keyspaces,
    /// `DESCRIBE [ONLY] KEYSPACE [ks]` (no name: the current keyspace).
    Keyspace {
        /// `ONLY`: the keyspace without its tables and types.
        only: bool,
        /// The keyspace.
        name: Option<Name>,
    },
    /// `DESCRIBE TABLES`
    Tables,
    /// `DESCRIBE TABLE t`
    Table(QualifiedName),
    /// `DESCRIBE INDEX i`
    Index(QualifiedName),
    /// `DESCRIBE MATERIALIZED VIEW v`
    MaterializedView(QualifiedName),
    /// `DESCRIBE TYPES`
    Types,
    /// `DESCRIBE TYPE t`
    Type(QualifiedName),
    /// `DESCRIBE FUNCTIONS`
    Functions,
    /// `DESCRIBE FUNCTION f`
    Function(QualifiedName),
    /// `DESCRIBE AGGREGATES`
    Aggregates,
    /// `DESCRIBE AGGREGATE a`
    Aggregate(QualifiedName),
    /// `DESCRIBE name` or `DESCRIBE ks.name`: whatever the name is (keyspace, table, index,
    /// view, type, function or aggregate).
    Generic(QualifiedName),
}

/// `DESCRIBE target [WITH INTERNALS]` (or `DESC`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Describe {
    /// What to describe.
    pub target: DescribeTarget,
    /// `WITH INTERNALS`
    pub with_internals: bool,
}
