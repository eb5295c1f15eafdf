//! The typed syntax tree of CQL statements.
//!
//! The tree says what was written, normalised only where CQL itself says two spellings are the
//! same: unquoted names are lower-cased, `c += x` is `c = c + x`, `varchar` is `text`,
//! `COLUMNFAMILY` is `TABLE`. It is not yet checked against a schema: column names, types of
//! values and the shape of a primary key restriction are the next layer's business.
//!
//! Every node implements `Display` as canonical CQL, and parsing that text gives the same tree
//! back.

mod ddl;
mod describe;
mod modify;
mod select;
mod term;
mod types;

pub use ddl::{
    AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, ColumnDefinition,
    CreateIndex, CreateKeyspace, CreateTable, CreateType, DropIndex, DropKeyspace, DropTable,
    DropType, IndexTarget, IndexTargetKind, PrimaryKey, Property, PropertyValue, Truncate,
};
pub use describe::{Describe, DescribeTarget};
pub use modify::{
    Assignment, AssignmentOp, Batch, BatchKind, BatchStatement, Condition, ConditionPredicate,
    Delete, DeleteTarget, ElementSelector, IfClause, Insert, InsertValues, Update, Using,
};
pub use select::{
    ComparisonOp, InValues, OrderDirection, Ordering, Relation, Select, Selectable, Selection,
    Selector, WritetimeKind,
};
pub use term::{ArithmeticOp, BindMarker, FunctionName, IntValue, Literal, Term};
pub use types::{NativeType, NonFrozenNested, TypeError, TypeExpr, UserTypeResolver};

/// A name: of a keyspace, table, column, field, type, index or function. Unquoted names are
/// stored lower-cased, quoted names as written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(pub String);

impl Name {
    /// The name's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Self {
        Name(name.to_string())
    }
}

/// A name that may be qualified by its keyspace: `ks.t` or `t`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    /// The keyspace, when written.
    pub keyspace: Option<Name>,
    /// The object's own name.
    pub name: Name,
}

impl QualifiedName {
    /// An unqualified name.
    pub fn new(name: &str) -> Self {
        QualifiedName {
            keyspace: None,
            name: Name::from(name),
        }
    }

    /// A name qualified by `keyspace`.
    pub fn qualified(keyspace: &str, name: &str) -> Self {
        QualifiedName {
            keyspace: Some(Name::from(keyspace)),
            name: Name::from(name),
        }
    }
}

/// One CQL statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `USE ks`
    Use(Name),
    /// `SELECT ...`
    Select(Box<Select>),
    /// `INSERT INTO ...`
    Insert(Box<Insert>),
    /// `UPDATE ...`
    Update(Box<Update>),
    /// `DELETE ... FROM ...`
    Delete(Box<Delete>),
    /// `BEGIN BATCH ... APPLY BATCH`
    Batch(Box<Batch>),
    /// `TRUNCATE [TABLE] t`
    Truncate(Truncate),
    /// `CREATE KEYSPACE ...`
    CreateKeyspace(CreateKeyspace),
    /// `ALTER KEYSPACE ...`
    AlterKeyspace(AlterKeyspace),
    /// `DROP KEYSPACE ...`
    DropKeyspace(DropKeyspace),
    /// `CREATE TABLE ...`
    CreateTable(Box<CreateTable>),
    /// `ALTER TABLE ...`
    AlterTable(AlterTable),
    /// `DROP TABLE ...`
    DropTable(DropTable),
    /// `CREATE TYPE ...`
    CreateType(CreateType),
    /// `ALTER TYPE ...`
    AlterType(AlterType),
    /// `DROP TYPE ...`
    DropType(DropType),
    /// `CREATE [CUSTOM] INDEX ...`
    CreateIndex(CreateIndex),
    /// `DROP INDEX ...`
    DropIndex(DropIndex),
    /// `DESCRIBE ...` / `DESC ...`
    Describe(Describe),
}

/// A statement with what the parser learned about it besides its tree.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedStatement {
    /// The statement.
    pub statement: Statement,
    /// The bind markers in order of appearance: `None` for `?`, the name for `:name`. A
    /// marker's [`BindMarker::index`] is its place in this list.
    pub bind_markers: Vec<Option<Name>>,
    /// The statement's bytes in the input, without the `;` that ends it.
    pub source: std::ops::Range<usize>,
}
