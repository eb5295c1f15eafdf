//! `Display` for the syntax tree: canonical CQL that parses back to the same tree.
//!
//! Canonical means: keywords in upper case, names quoted only when they must be (not a plain
//! lower-case word, or a keyword, or `true`/`false`), one space between clauses, the primary
//! key always as a `PRIMARY KEY (...)` clause, `c += v` as `c = c + v`.

mod ddl;
mod modify;
mod select;

use std::fmt::{self, Display, Formatter};

use super::ast::{
    BindMarker, IntValue, Literal, Name, NativeType, QualifiedName, Statement, Term, TypeExpr,
};
use super::keyword::Keyword;

/// Writes `items` separated by `, `.
pub(crate) fn comma_separated<T: Display>(f: &mut Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

/// Whether `name` reads back as itself unquoted.
fn is_plain_word(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name != "true"
        && name != "false"
}

/// Writes `name` double-quoted, doubling inner quotes.
fn write_quoted(f: &mut Formatter<'_>, name: &str) -> fmt::Result {
    write!(f, "\"{}\"", name.replace('"', "\"\""))
}

impl Display for Name {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let name = self.as_str();
        if is_plain_word(name) && Keyword::from_lowercase(name).is_none() {
            f.write_str(name)
        } else {
            write_quoted(f, name)
        }
    }
}

impl Display for QualifiedName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(keyspace) = &self.keyspace {
            write!(f, "{keyspace}.")?;
        }
        self.name.fmt(f)
    }
}

/// A function name: keywords that may name functions (`token`, `count`, `int`) stay bare.
pub(crate) struct FunctionNameDisplay<'a>(&'a QualifiedName);

impl Display for FunctionNameDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(keyspace) = &self.0.keyspace {
            write!(f, "{keyspace}.")?;
        }
        let name = self.0.name.as_str();
        let keyword_ok = Keyword::from_lowercase(name).is_none_or(|k| k.is_function_name());
        if is_plain_word(name) && keyword_ok {
            f.write_str(name)
        } else {
            write_quoted(f, name)
        }
    }
}

/// A user type name: never a keyword other than the allowed ones, nor a reserved type name.
pub(crate) struct UserTypeNameDisplay<'a>(&'a QualifiedName);

impl Display for UserTypeNameDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(keyspace) = &self.0.keyspace {
            write!(f, "{keyspace}.")?;
        }
        let name = self.0.name.as_str();
        let reserved = matches!(
            name,
            "byte" | "complex" | "enum" | "date" | "interval" | "macaddr" | "bitstring"
        );
        if is_plain_word(name) && !reserved && Keyword::from_lowercase(name).is_none() {
            f.write_str(name)
        } else {
            write_quoted(f, name)
        }
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Integer(s) | Literal::Float(s) | Literal::Duration(s) => f.write_str(s),
            Literal::NaN => f.write_str("NaN"),
            Literal::Infinity => f.write_str("Infinity"),
            Literal::NegativeInfinity => f.write_str("-Infinity"),
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Uuid(u) => write!(f, "{}", u.hyphenated()),
            Literal::Hex(digits) => write!(f, "0x{digits}"),
            Literal::Null => f.write_str("null"),
        }
    }
}

impl Display for BindMarker {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, ":{name}"),
            None => f.write_str("?"),
        }
    }
}

impl Display for IntValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            IntValue::Literal(n) => write!(f, "{n}"),
            IntValue::Marker(m) => m.fmt(f),
        }
    }
}

/// Writes `-` then `inner`, with a space if `inner` starts with `-` (`--` starts a comment).
pub(crate) fn write_negation(f: &mut Formatter<'_>, inner: &dyn Display) -> fmt::Result {
    let text = inner.to_string();
    if text.starts_with('-') {
        write!(f, "- {text}")
    } else {
        write!(f, "-{text}")
    }
}

impl Display for Term {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Term::Literal(literal) => literal.fmt(f),
            Term::Marker(marker) => marker.fmt(f),
            Term::List(items) => {
                f.write_str("[")?;
                comma_separated(f, items)?;
                f.write_str("]")
            }
            Term::Set(items) => {
                f.write_str("{")?;
                comma_separated(f, items)?;
                f.write_str("}")
            }
            Term::Map(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key}: {value}")?;
                }
                f.write_str("}")
            }
            Term::UserType(fields) => {
                f.write_str("{")?;
                for (i, (field, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}: {value}")?;
                }
                f.write_str("}")
            }
            Term::Tuple(items) => {
                f.write_str("(")?;
                comma_separated(f, items)?;
                f.write_str(")")
            }
            Term::FunctionCall { name, args } => {
                write!(f, "{}(", FunctionNameDisplay(name))?;
                comma_separated(f, args)?;
                f.write_str(")")
            }
            Term::TypeHint { ty, term } => write!(f, "({ty}){term}"),
            Term::Cast { term, ty } => write!(f, "CAST({term} AS {ty})"),
            Term::Negation(inner) => write_negation(f, inner),
            Term::Arithmetic { op, left, right } => {
                write!(f, "{left} {} {right}", op.symbol())
            }
        }
    }
}

impl Display for NativeType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Display for TypeExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TypeExpr::Native(n) => n.fmt(f),
            TypeExpr::List(e) => write!(f, "list<{e}>"),
            TypeExpr::Set(e) => write!(f, "set<{e}>"),
            TypeExpr::Map(k, v) => write!(f, "map<{k}, {v}>"),
            TypeExpr::Tuple(items) => {
                f.write_str("tuple<")?;
                comma_separated(f, items)?;
                f.write_str(">")
            }
            TypeExpr::Vector { element, dimension } => write!(f, "vector<{element}, {dimension}>"),
            TypeExpr::Frozen(inner) => write!(f, "frozen<{inner}>"),
            TypeExpr::UserType(name) => UserTypeNameDisplay(name).fmt(f),
            TypeExpr::Custom(class) => write!(f, "'{}'", class.replace('\'', "''")),
        }
    }
}

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Use(keyspace) => write!(f, "USE {keyspace}"),
            Statement::Select(s) => s.fmt(f),
            Statement::Insert(s) => s.fmt(f),
            Statement::Update(s) => s.fmt(f),
            Statement::Delete(s) => s.fmt(f),
            Statement::Batch(s) => s.fmt(f),
            Statement::Truncate(s) => s.fmt(f),
            Statement::CreateKeyspace(s) => s.fmt(f),
            Statement::AlterKeyspace(s) => s.fmt(f),
            Statement::DropKeyspace(s) => s.fmt(f),
            Statement::CreateTable(s) => s.fmt(f),
            Statement::AlterTable(s) => s.fmt(f),
            Statement::DropTable(s) => s.fmt(f),
            Statement::CreateType(s) => s.fmt(f),
            Statement::AlterType(s) => s.fmt(f),
            Statement::DropType(s) => s.fmt(f),
            Statement::CreateIndex(s) => s.fmt(f),
            Statement::DropIndex(s) => s.fmt(f),
            Statement::Describe(s) => s.fmt(f),
        }
    }
}
