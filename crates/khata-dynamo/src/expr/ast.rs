//! The expression tree: document paths, operands, conditions and update actions, with the
//! placeholders already substituted.

use std::fmt;

use crate::value::AttributeValue;

/// One step of a document path: a map key (or top-level attribute name) or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathElement {
    /// `name` or `#placeholder`, substituted.
    Name(String),
    /// `[n]`
    Index(u32),
}

/// A document path such as `a.b[2].c`; its first element is always a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A path of one top-level attribute.
    pub fn attribute(name: impl Into<String>) -> Path {
        Path(vec![PathElement::Name(name.into())])
    }

    /// The top-level attribute this path starts at.
    pub fn top(&self) -> &str {
        match self.0.first() {
            Some(PathElement::Name(n)) => n,
            _ => "",
        }
    }

    /// True for a path of one top-level attribute.
    pub fn is_top_level(&self) -> bool {
        self.0.len() == 1
    }
}

impl fmt::Display for Path {
    /// DynamoDB's form in messages: `[a, b, [2]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match e {
                PathElement::Name(n) => f.write_str(n)?,
                PathElement::Index(n) => write!(f, "[{n}]")?,
            }
        }
        f.write_str("]")
    }
}

/// An operand of a condition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    Path(Path),
    Value(AttributeValue),
    /// `size(path)`
    Size(Path),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparator {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Comparator {
    /// How an expression writes it.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Comparator::Eq => "=",
            Comparator::Ne => "<>",
            Comparator::Lt => "<",
            Comparator::Le => "<=",
            Comparator::Gt => ">",
            Comparator::Ge => ">=",
        }
    }

    /// The comparator with its operands swapped (`:v < a` is `a > :v`).
    pub(crate) fn swapped(self) -> Comparator {
        match self {
            Comparator::Lt => Comparator::Gt,
            Comparator::Le => Comparator::Ge,
            Comparator::Gt => Comparator::Lt,
            Comparator::Ge => Comparator::Le,
            other => other,
        }
    }
}

/// A condition tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cond {
    True,
    Compare(Comparator, Operand, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    Exists(Path),
    NotExists(Path),
    /// `attribute_type(operand, :type)`: DynamoDB takes a value as well as a path first.
    AttributeType(Operand, Operand),
    BeginsWith(Operand, Operand),
    Contains(Operand, Operand),
}

/// The right-hand side of a SET action.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SetValue {
    Path(Path),
    Value(AttributeValue),
    IfNotExists(Path, Box<SetValue>),
    ListAppend(Box<SetValue>, Box<SetValue>),
    Plus(Box<SetValue>, Box<SetValue>),
    Minus(Box<SetValue>, Box<SetValue>),
}

/// One action of an update expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Set(Path, SetValue),
    Remove(Path),
    Add(Path, AttributeValue),
    Delete(Path, AttributeValue),
}

impl Action {
    pub(crate) fn path(&self) -> &Path {
        match self {
            Action::Set(p, _) | Action::Remove(p) | Action::Add(p, _) | Action::Delete(p, _) => p,
        }
    }
}
