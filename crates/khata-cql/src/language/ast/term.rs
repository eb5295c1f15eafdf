//! Terms: the values a statement writes or compares with (Parser.g's `term`).

use super::{Name, TypeExpr};

/// A constant as written. Numbers keep their text: their CQL type, and so their range, is
/// known only once the column they meet is.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `'text'` or `$$text$$`, unescaped.
    String(String),
    /// An integer, with its sign (`42`, `-7`).
    Integer(String),
    /// A floating-point number, with its sign (`1.5`, `-2e10`).
    Float(String),
    /// `NaN` (`-NaN` is the same value).
    NaN,
    /// `Infinity`
    Infinity,
    /// `-Infinity`
    NegativeInfinity,
    /// `true` / `false`
    Boolean(bool),
    /// A duration, with its sign (`1h30m`, `-P1D`).
    Duration(String),
    /// A UUID.
    Uuid(uuid::Uuid),
    /// A blob: the hex digits after `0x`, as written (possibly an odd number of them, which
    /// the next layer refuses).
    Hex(String),
    /// `null`
    Null,
}

/// A bind marker: `?` or `:name`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindMarker {
    /// Its place among the statement's markers, from 0 (a batch numbers across its statements).
    pub index: usize,
    /// The name of a `:name` marker.
    pub name: Option<Name>,
}

/// A function's name, possibly qualified by its keyspace (`system.now`).
pub type FunctionName = super::QualifiedName;

/// An arithmetic operator between terms or selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithmeticOp {
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
}

impl ArithmeticOp {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithmeticOp::Add => "+",
            ArithmeticOp::Subtract => "-",
            ArithmeticOp::Multiply => "*",
            ArithmeticOp::Divide => "/",
            ArithmeticOp::Modulo => "%",
        }
    }
}

/// A value in a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// A constant.
    Literal(Literal),
    /// A bind marker.
    Marker(BindMarker),
    /// `[a, b]`
    List(Vec<Term>),
    /// `{a, b}`; `{}` is an empty set (which a map column also accepts).
    Set(Vec<Term>),
    /// `{k: v, ...}`
    Map(Vec<(Term, Term)>),
    /// `{field: v, ...}`: a user type value.
    UserType(Vec<(Name, Term)>),
    /// `(a, b)`: a tuple (one element is a one-element tuple, as in Cassandra).
    Tuple(Vec<Term>),
    /// `f(a, b)`, `token(?)`, `now()`.
    FunctionCall {
        /// The function.
        name: FunctionName,
        /// Its arguments.
        args: Vec<Term>,
    },
    /// `(type) term`: a type hint.
    TypeHint {
        /// The hinted type.
        ty: TypeExpr,
        /// The term it applies to.
        term: Box<Term>,
    },
    /// `CAST(term AS type)`.
    Cast {
        /// The term to convert.
        term: Box<Term>,
        /// The native type to convert to.
        ty: super::NativeType,
    },
    /// `-term`, when the term is not a literal (a literal takes the sign itself).
    Negation(Box<Term>),
    /// `left op right` (Cassandra 4 arithmetic).
    Arithmetic {
        /// The operator.
        op: ArithmeticOp,
        /// The left operand.
        left: Box<Term>,
        /// The right operand.
        right: Box<Term>,
    },
}

/// An integer that is given literally or bound later (`LIMIT 10`, `USING TTL ?`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntValue {
    /// A literal integer.
    Literal(i64),
    /// A bind marker.
    Marker(BindMarker),
}
