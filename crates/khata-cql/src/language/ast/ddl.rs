//! Schema statements: keyspaces, tables, user types, indexes, `TRUNCATE`.

use super::{Literal, Name, OrderDirection, QualifiedName, TypeExpr};

/// The value of a `WITH name = value` property.
#[derive(Clone, Debug, PartialEq)]
pub enum PropertyValue {
    /// A constant: `'text'`, `10`, `0.1`, `true`.
    Constant(Literal),
    /// An unreserved keyword or identifier, taken as its text (`WITH caching = keys`).
    Word(String),
    /// `{'key': constant, ...}`: keys and values are constants (Cassandra keeps their text).
    Map(Vec<(Literal, Literal)>),
}

/// `name = value` in a `WITH` clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// The property's name.
    pub name: Name,
    /// Its value.
    pub value: PropertyValue,
}

/// `CREATE KEYSPACE [IF NOT EXISTS] ks WITH replication = {...} [AND durable_writes = b]`
#[derive(Clone, Debug, PartialEq)]
pub struct CreateKeyspace {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The keyspace.
    pub name: Name,
    /// The properties, in order (the parser refuses duplicates).
    pub properties: Vec<Property>,
}

/// `ALTER KEYSPACE [IF EXISTS] ks WITH ...`
#[derive(Clone, Debug, PartialEq)]
pub struct AlterKeyspace {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The keyspace.
    pub name: Name,
    /// The properties.
    pub properties: Vec<Property>,
}

/// `DROP KEYSPACE [IF EXISTS] ks`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropKeyspace {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The keyspace.
    pub name: Name,
}

/// One column of a `CREATE TABLE` or `ALTER TABLE ADD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDefinition {
    /// The column.
    pub name: Name,
    /// Its type.
    pub ty: TypeExpr,
    /// `STATIC`
    pub is_static: bool,
}

/// A table's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimaryKey {
    /// The partition key columns (one or more).
    pub partition_key: Vec<Name>,
    /// The clustering columns, in order.
    pub clustering: Vec<Name>,
}

/// `CREATE TABLE [IF NOT EXISTS] t (columns, PRIMARY KEY (...)) [WITH ...]`
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The table.
    pub name: QualifiedName,
    /// The columns in the order written.
    pub columns: Vec<ColumnDefinition>,
    /// The primary key, inline (`k int PRIMARY KEY`) or as a clause; exactly one is given.
    pub primary_key: PrimaryKey,
    /// `CLUSTERING ORDER BY (c DESC, ...)`
    pub clustering_order: Vec<(Name, OrderDirection)>,
    /// The other `WITH` properties.
    pub properties: Vec<Property>,
}

/// What an `ALTER TABLE` does.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterTableAction {
    /// `ALTER c TYPE t` (accepted by the grammar; Cassandra 4 refuses it at execution).
    AlterColumnType {
        /// The column.
        column: Name,
        /// The new type.
        ty: TypeExpr,
    },
    /// `ADD [IF NOT EXISTS] c type [STATIC]` or `ADD (c type, ...)`
    Add {
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// The new columns.
        columns: Vec<ColumnDefinition>,
    },
    /// `DROP [IF EXISTS] c` or `DROP (c, ...)`, `[USING TIMESTAMP ts]`
    Drop {
        /// `IF EXISTS`
        if_exists: bool,
        /// The columns.
        columns: Vec<Name>,
        /// `USING TIMESTAMP`
        timestamp: Option<i64>,
    },
    /// `RENAME [IF EXISTS] a TO b [AND c TO d ...]`
    Rename {
        /// `IF EXISTS`
        if_exists: bool,
        /// The renames, from and to.
        renames: Vec<(Name, Name)>,
    },
    /// `DROP COMPACT STORAGE`
    DropCompactStorage,
    /// `WITH properties`
    With(Vec<Property>),
}

/// `ALTER TABLE [IF EXISTS] t action`
#[derive(Clone, Debug, PartialEq)]
pub struct AlterTable {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The table.
    pub table: QualifiedName,
    /// The change.
    pub action: AlterTableAction,
}

/// `DROP TABLE [IF EXISTS] t`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropTable {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The table.
    pub table: QualifiedName,
}

/// `TRUNCATE [TABLE] t`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncate {
    /// The table.
    pub table: QualifiedName,
}

/// `CREATE TYPE [IF NOT EXISTS] ut (field type, ...)`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateType {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The type.
    pub name: QualifiedName,
    /// The fields in order.
    pub fields: Vec<(Name, TypeExpr)>,
}

/// What an `ALTER TYPE` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AlterTypeAction {
    /// `ALTER f TYPE t`
    AlterField {
        /// The field.
        field: Name,
        /// The new type.
        ty: TypeExpr,
    },
    /// `ADD [IF NOT EXISTS] f t`
    Add {
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// The field.
        field: Name,
        /// Its type.
        ty: TypeExpr,
    },
    /// `RENAME [IF EXISTS] a TO b [AND ...]`
    Rename {
        /// `IF EXISTS`
        if_exists: bool,
        /// The renames, from and to.
        renames: Vec<(Name, Name)>,
    },
}

/// `ALTER TYPE [IF EXISTS] ut action`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlterType {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The type.
    pub name: QualifiedName,
    /// The change.
    pub action: AlterTypeAction,
}

/// `DROP TYPE [IF EXISTS] ut`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropType {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The type.
    pub name: QualifiedName,
}

/// What part of a column an index covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexTargetKind {
    /// `c`: the value (for a collection, its values).
    Simple,
    /// `KEYS(c)`
    Keys,
    /// `VALUES(c)`
    Values,
    /// `ENTRIES(c)`
    Entries,
    /// `FULL(c)`: a frozen collection as a whole.
    Full,
}

/// One indexed column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexTarget {
    /// The column.
    pub column: Name,
    /// Which part of it.
    pub kind: IndexTargetKind,
}

/// `CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (targets) [USING 'class'] [WITH ...]`
#[derive(Clone, Debug, PartialEq)]
pub struct CreateIndex {
    /// `CUSTOM`
    pub custom: bool,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The index name, if given.
    pub name: Option<Name>,
    /// The table.
    pub table: QualifiedName,
    /// The indexed columns.
    pub targets: Vec<IndexTarget>,
    /// `USING 'class'`
    pub using: Option<String>,
    /// `WITH` properties.
    pub properties: Vec<Property>,
}

/// `DROP INDEX [IF EXISTS] [ks.]name`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropIndex {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The index.
    pub name: QualifiedName,
}
