//! `SELECT` and the parts other statements share with it: relations of a `WHERE` clause.

use super::{ArithmeticOp, BindMarker, FunctionName, IntValue, Name, NativeType, QualifiedName};
use super::{Term, TypeExpr};

/// `SELECT [JSON] [DISTINCT] selection FROM table [WHERE ...] [GROUP BY ...] [ORDER BY ...]
/// [PER PARTITION LIMIT n] [LIMIT n] [ALLOW FILTERING]`
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    /// `SELECT JSON`
    pub json: bool,
    /// `SELECT DISTINCT`
    pub distinct: bool,
    /// What to return.
    pub selection: Selection,
    /// The table (or view).
    pub table: QualifiedName,
    /// The `WHERE` relations, joined by `AND`.
    pub where_clause: Vec<Relation>,
    /// `GROUP BY` selectors.
    pub group_by: Vec<Selectable>,
    /// `ORDER BY` columns.
    pub order_by: Vec<Ordering>,
    /// `PER PARTITION LIMIT`
    pub per_partition_limit: Option<IntValue>,
    /// `LIMIT`
    pub limit: Option<IntValue>,
    /// `ALLOW FILTERING`
    pub allow_filtering: bool,
}

/// The selection of a `SELECT`.
#[derive(Clone, Debug, PartialEq)]
pub enum Selection {
    /// `*`
    Wildcard,
    /// A list of selectors.
    Selectors(Vec<Selector>),
}

/// One selector with its alias: `expr [AS alias]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    /// What is selected.
    pub selectable: Selectable,
    /// `AS alias`
    pub alias: Option<Name>,
}

/// Which write metadata a `WRITETIME`-like selector returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WritetimeKind {
    /// `WRITETIME(c)`
    Writetime,
    /// `MAXWRITETIME(c)`
    MaxWritetime,
    /// `TTL(c)`
    Ttl,
}

impl WritetimeKind {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            WritetimeKind::Writetime => "WRITETIME",
            WritetimeKind::MaxWritetime => "MAXWRITETIME",
            WritetimeKind::Ttl => "TTL",
        }
    }
}

/// Something a `SELECT` computes per row (Parser.g's `unaliasedSelector`).
#[derive(Clone, Debug, PartialEq)]
pub enum Selectable {
    /// A column.
    Column(Name),
    /// A literal, `null` or a bind marker.
    Term(Term),
    /// `count(*)`
    CountRows,
    /// `WRITETIME(c)`, `MAXWRITETIME(c)`, `TTL(c)`: the argument is a column, possibly with
    /// element or field selection.
    Writetime {
        /// Which metadata.
        kind: WritetimeKind,
        /// The column (with selection).
        column: Box<Selectable>,
    },
    /// `f(a, b)`, including `token(k)`, `count(c)`, `now()`, aggregates.
    FunctionCall {
        /// The function.
        name: FunctionName,
        /// Its arguments.
        args: Vec<Selectable>,
    },
    /// `CAST(s AS type)`
    Cast {
        /// What to convert.
        selectable: Box<Selectable>,
        /// The native type to convert to.
        ty: NativeType,
    },
    /// `s.field`
    Field {
        /// A user type value.
        selectable: Box<Selectable>,
        /// The field.
        field: Name,
    },
    /// `s[key]`
    Element {
        /// A collection.
        selectable: Box<Selectable>,
        /// The element's key or index.
        key: Term,
    },
    /// `s[from..to]`, either bound optional.
    Slice {
        /// A collection.
        selectable: Box<Selectable>,
        /// The first element, inclusive.
        from: Option<Term>,
        /// The last element, inclusive.
        to: Option<Term>,
    },
    /// `(type) s`
    TypeHint {
        /// The type.
        ty: TypeExpr,
        /// The hinted selector.
        selectable: Box<Selectable>,
    },
    /// `(a, b)`; one element in parentheses is `(a)`.
    Tuple(Vec<Selectable>),
    /// `[a, b]`
    List(Vec<Selectable>),
    /// `{a, b}`
    Set(Vec<Selectable>),
    /// `{k: v}`: a map or user type value.
    Map(Vec<(Selectable, Selectable)>),
    /// `-s`
    Negation(Box<Selectable>),
    /// `a op b`
    Arithmetic {
        /// The operator.
        op: ArithmeticOp,
        /// The left operand.
        left: Box<Selectable>,
        /// The right operand.
        right: Box<Selectable>,
    },
}

/// A comparison operator of a relation or condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComparisonOp {
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `CONTAINS`
    Contains,
    /// `CONTAINS KEY`
    ContainsKey,
    /// `NOT CONTAINS`
    NotContains,
    /// `NOT CONTAINS KEY`
    NotContainsKey,
    /// `LIKE`
    Like,
}

impl ComparisonOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            ComparisonOp::Equal => "=",
            ComparisonOp::NotEqual => "!=",
            ComparisonOp::Less => "<",
            ComparisonOp::LessEqual => "<=",
            ComparisonOp::Greater => ">",
            ComparisonOp::GreaterEqual => ">=",
            ComparisonOp::Contains => "CONTAINS",
            ComparisonOp::ContainsKey => "CONTAINS KEY",
            ComparisonOp::NotContains => "NOT CONTAINS",
            ComparisonOp::NotContainsKey => "NOT CONTAINS KEY",
            ComparisonOp::Like => "LIKE",
        }
    }
}

/// The values of an `IN`.
#[derive(Clone, Debug, PartialEq)]
pub enum InValues {
    /// `IN (a, b, ...)`; for a multi-column relation each is a tuple or a marker.
    Terms(Vec<Term>),
    /// `IN ?` or `IN :name`: the whole list is bound.
    Marker(BindMarker),
}

/// One relation of a `WHERE` clause.
#[derive(Clone, Debug, PartialEq)]
pub enum Relation {
    /// `c op value`, `c CONTAINS v`, `c LIKE v`
    Column {
        /// The column.
        column: Name,
        /// The operator.
        op: ComparisonOp,
        /// The value.
        value: Term,
    },
    /// `c [NOT] IN values`
    In {
        /// The column.
        column: Name,
        /// `NOT IN`
        negated: bool,
        /// The values.
        values: InValues,
    },
    /// `c BETWEEN low AND high`
    Between {
        /// The column.
        column: Name,
        /// The lower bound, inclusive.
        low: Term,
        /// The upper bound, inclusive.
        high: Term,
    },
    /// `c IS NOT NULL`
    IsNotNull {
        /// The column.
        column: Name,
    },
    /// `c[key] op value`
    MapElement {
        /// The map column.
        column: Name,
        /// The key.
        key: Term,
        /// The operator.
        op: ComparisonOp,
        /// The value.
        value: Term,
    },
    /// `token(a, b) op value` (the value is often `token(?, ?)` or a bare marker).
    Token {
        /// The partition key columns.
        columns: Vec<Name>,
        /// The operator.
        op: ComparisonOp,
        /// The value.
        value: Term,
    },
    /// `(a, b) op (x, y)` or `(a, b) op ?`
    MultiColumn {
        /// The columns.
        columns: Vec<Name>,
        /// The operator.
        op: ComparisonOp,
        /// A tuple or a marker.
        value: Term,
    },
    /// `(a, b) [NOT] IN ((x, y), ...)`, `(a, b) IN (?, ?)`, `(a, b) IN ?`
    MultiColumnIn {
        /// The columns.
        columns: Vec<Name>,
        /// `NOT IN`
        negated: bool,
        /// The tuples.
        values: InValues,
    },
}

/// Sort direction of an `ORDER BY` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OrderDirection {
    /// Ascending (the default).
    #[default]
    Asc,
    /// Descending.
    Desc,
}

/// One `ORDER BY` column: `c [ANN OF v] [ASC|DESC]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ordering {
    /// The column.
    pub column: Name,
    /// `ANN OF vector`: order by similarity to the vector.
    pub ann_of: Option<Term>,
    /// The direction.
    pub direction: OrderDirection,
}
