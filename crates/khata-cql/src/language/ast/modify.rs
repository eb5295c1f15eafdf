//! `INSERT`, `UPDATE`, `DELETE` and `BATCH`.

use super::{ComparisonOp, InValues, IntValue, Name, QualifiedName, Relation, Term};

/// `USING TTL t AND TIMESTAMP ts`
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Using {
    /// `TTL`, in seconds.
    pub ttl: Option<IntValue>,
    /// `TIMESTAMP`, in microseconds.
    pub timestamp: Option<IntValue>,
}

impl Using {
    /// Whether neither is given.
    pub fn is_empty(&self) -> bool {
        self.ttl.is_none() && self.timestamp.is_none()
    }
}

/// `INSERT INTO t ... [IF NOT EXISTS] [USING ...]`
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    /// The table.
    pub table: QualifiedName,
    /// The row.
    pub values: InsertValues,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// `USING TTL/TIMESTAMP`
    pub using: Using,
}

/// What an `INSERT` writes.
#[derive(Clone, Debug, PartialEq)]
pub enum InsertValues {
    /// `(a, b) VALUES (x, y)`; the parser checks there are as many values as columns.
    Columns {
        /// The columns.
        columns: Vec<Name>,
        /// Their values.
        values: Vec<Term>,
    },
    /// `JSON '...' [DEFAULT NULL | DEFAULT UNSET]`
    Json {
        /// The JSON object: a string literal or a marker.
        value: Term,
        /// `DEFAULT UNSET`: columns missing from the object are left alone instead of nulled.
        default_unset: bool,
    },
}

/// `IF EXISTS` or `IF conditions` of an `UPDATE` or `DELETE`.
#[derive(Clone, Debug, PartialEq)]
pub enum IfClause {
    /// `IF EXISTS`
    Exists,
    /// `IF c1 AND c2 ...`
    Conditions(Vec<Condition>),
}

/// An element or field of a collection or user type column (`c[k]`, `c.f`).
#[derive(Clone, Debug, PartialEq)]
pub enum ElementSelector {
    /// `[key]`
    Element(Term),
    /// `.field`
    Field(Name),
}

/// What a condition tests.
#[derive(Clone, Debug, PartialEq)]
pub enum ConditionPredicate {
    /// `op value` (`CONTAINS [KEY]` only on a whole column).
    Compare(ComparisonOp, Term),
    /// `IN (...)` or `IN ?`
    In(InValues),
}

/// One condition of a lightweight transaction: `c = v`, `c[k] != v`, `c.f IN (...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The column.
    pub column: Name,
    /// The element or field tested, if not the whole column.
    pub selector: Option<ElementSelector>,
    /// The test.
    pub predicate: ConditionPredicate,
}

/// How an `UPDATE` changes a column.
#[derive(Clone, Debug, PartialEq)]
pub enum AssignmentOp {
    /// `c = v`
    Set(Term),
    /// `c = c + v` or `c += v`: append, add to a set or map, or increment a counter.
    Add(Term),
    /// `c = c - v` or `c -= v`: remove, or decrement a counter.
    Subtract(Term),
    /// `c = v + c`: prepend to a list.
    Prepend(Term),
    /// `c[k] = v`
    SetElement {
        /// The key or index.
        key: Term,
        /// The value.
        value: Term,
    },
    /// `c.field = v`
    SetField {
        /// The field.
        field: Name,
        /// The value.
        value: Term,
    },
}

/// One `SET` item of an `UPDATE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The column.
    pub column: Name,
    /// The change.
    pub op: AssignmentOp,
}

/// `UPDATE t [USING ...] SET ... WHERE ... [IF ...]`
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The table.
    pub table: QualifiedName,
    /// `USING TTL/TIMESTAMP`
    pub using: Using,
    /// The `SET` items.
    pub assignments: Vec<Assignment>,
    /// The `WHERE` relations.
    pub where_clause: Vec<Relation>,
    /// `IF EXISTS` / `IF conditions`
    pub if_clause: Option<IfClause>,
}

/// One item of a `DELETE`'s column list: `c`, `c[k]` or `c.f`.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteTarget {
    /// The column.
    pub column: Name,
    /// The element or field, if not the whole column.
    pub selector: Option<ElementSelector>,
}

/// `DELETE [targets] FROM t [USING TIMESTAMP ts] WHERE ... [IF ...]`
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// The columns to delete; empty deletes whole rows.
    pub targets: Vec<DeleteTarget>,
    /// The table.
    pub table: QualifiedName,
    /// `USING TIMESTAMP`
    pub timestamp: Option<IntValue>,
    /// The `WHERE` relations.
    pub where_clause: Vec<Relation>,
    /// `IF EXISTS` / `IF conditions`
    pub if_clause: Option<IfClause>,
}

/// The kind of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BatchKind {
    /// `BEGIN BATCH`: atomic through the batch log.
    #[default]
    Logged,
    /// `BEGIN UNLOGGED BATCH`
    Unlogged,
    /// `BEGIN COUNTER BATCH`
    Counter,
}

/// A statement inside a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum BatchStatement {
    /// `INSERT`
    Insert(Insert),
    /// `UPDATE`
    Update(Update),
    /// `DELETE`
    Delete(Delete),
}

/// `BEGIN [UNLOGGED | COUNTER] BATCH [USING ...] statements APPLY BATCH`
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The kind.
    pub kind: BatchKind,
    /// `USING TIMESTAMP` (and `TTL`, which the grammar accepts and execution refuses).
    pub using: Using,
    /// The statements.
    pub statements: Vec<BatchStatement>,
}
