//! CQL types as text, the way Cassandra writes them in `system_schema.columns.type` and in
//! `DESCRIBE` output: `int`, `frozen<list<int>>`, `map<text, frozen<address>>`,
//! `tuple<int, text>`, `vector<float, 3>`.
//!
//! User-defined types are written by name only (`address`, quoted when needed), as Cassandra
//! does; parsing one back needs the keyspace's types, which the caller supplies through a
//! resolver. Every frozen type is written with `frozen<...>`, nested ones too, as Cassandra
//! does; tuples are always frozen, so `tuple<...>` reads as `frozen<tuple<...>>`.

use std::fmt;

use crate::schema::CqlType;

/// Why a type text did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad CQL type {text:?}: {reason}")]
pub struct TypeTextError {
    pub text: String,
    pub reason: String,
}

/// A CQL type as Cassandra writes it.
pub struct TypeText<'a>(pub &'a CqlType);

impl fmt::Display for TypeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(f, self.0, false)
    }
}

impl fmt::Debug for TypeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The type's text, for example `frozen<list<int>>`.
pub fn type_text(ty: &CqlType) -> String {
    TypeText(ty).to_string()
}

/// The name of a native type, or `None` for collections, tuples, UDTs and vectors.
pub fn native_name(ty: &CqlType) -> Option<&'static str> {
    Some(match ty {
        CqlType::Ascii => "ascii",
        CqlType::Bigint => "bigint",
        CqlType::Blob => "blob",
        CqlType::Boolean => "boolean",
        CqlType::Counter => "counter",
        CqlType::Date => "date",
        CqlType::Decimal => "decimal",
        CqlType::Double => "double",
        CqlType::Duration => "duration",
        CqlType::Float => "float",
        CqlType::Inet => "inet",
        CqlType::Int => "int",
        CqlType::Smallint => "smallint",
        CqlType::Text => "text",
        CqlType::Time => "time",
        CqlType::Timestamp => "timestamp",
        CqlType::Timeuuid => "timeuuid",
        CqlType::Tinyint => "tinyint",
        CqlType::Uuid => "uuid",
        CqlType::Varint => "varint",
        _ => return None,
    })
}

fn native_from_name(name: &str) -> Option<CqlType> {
    Some(match name {
        "ascii" => CqlType::Ascii,
        "bigint" => CqlType::Bigint,
        "blob" => CqlType::Blob,
        "boolean" => CqlType::Boolean,
        "counter" => CqlType::Counter,
        "date" => CqlType::Date,
        "decimal" => CqlType::Decimal,
        "double" => CqlType::Double,
        "duration" => CqlType::Duration,
        "float" => CqlType::Float,
        "inet" => CqlType::Inet,
        "int" => CqlType::Int,
        "smallint" => CqlType::Smallint,
        "text" | "varchar" => CqlType::Text,
        "time" => CqlType::Time,
        "timestamp" => CqlType::Timestamp,
        "timeuuid" => CqlType::Timeuuid,
        "tinyint" => CqlType::Tinyint,
        "uuid" => CqlType::Uuid,
        "varint" => CqlType::Varint,
        _ => return None,
    })
}

/// CQL's reserved keywords (`Parser.g`), which name nothing unless double-quoted; sorted.
/// khata-cql's keyword table is checked against this list by a test.
pub const RESERVED_KEYWORDS: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "columnfamily",
    "create",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "limit",
    "materialized",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "truncate",
    "unlogged",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

/// Whether an identifier must be double-quoted to read back as itself: anything but lower
/// case letters, digits and `_` starting with a letter, and the reserved keywords.
pub fn needs_quotes(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    !(starts_well
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        || RESERVED_KEYWORDS.binary_search(&name).is_ok()
}

/// An identifier as CQL text: bare when it can be, double-quoted otherwise.
pub fn quote_identifier(name: &str) -> String {
    if needs_quotes(name) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

fn write_frozen(
    f: &mut fmt::Formatter<'_>,
    frozen: bool,
    inside_frozen: bool,
    body: impl FnOnce(&mut fmt::Formatter<'_>) -> fmt::Result,
) -> fmt::Result {
    // Cassandra writes `frozen<...>` on every frozen type, nested ones included.
    let _ = inside_frozen;
    if frozen {
        f.write_str("frozen<")?;
        body(f)?;
        f.write_str(">")
    } else {
        body(f)
    }
}

fn write_type(f: &mut fmt::Formatter<'_>, ty: &CqlType, inside_frozen: bool) -> fmt::Result {
    if let Some(name) = native_name(ty) {
        return f.write_str(name);
    }
    match ty {
        CqlType::List { element, frozen } => write_frozen(f, *frozen, inside_frozen, |f| {
            f.write_str("list<")?;
            write_type(f, element, inside_frozen || *frozen)?;
            f.write_str(">")
        }),
        CqlType::Set { element, frozen } => write_frozen(f, *frozen, inside_frozen, |f| {
            f.write_str("set<")?;
            write_type(f, element, inside_frozen || *frozen)?;
            f.write_str(">")
        }),
        CqlType::Map { key, value, frozen } => write_frozen(f, *frozen, inside_frozen, |f| {
            f.write_str("map<")?;
            write_type(f, key, inside_frozen || *frozen)?;
            f.write_str(", ")?;
            write_type(f, value, inside_frozen || *frozen)?;
            f.write_str(">")
        }),
        CqlType::Tuple(elements) => write_frozen(f, true, inside_frozen, |f| {
            f.write_str("tuple<")?;
            for (i, e) in elements.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_type(f, e, true)?;
            }
            f.write_str(">")
        }),
        CqlType::Udt { name, frozen, .. } => write_frozen(f, *frozen, inside_frozen, |f| {
            f.write_str(&quote_identifier(name))
        }),
        CqlType::Vector { element, dimension } => {
            f.write_str("vector<")?;
            write_type(f, element, true)?;
            write!(f, ", {dimension}>")
        }
        _ => unreachable!("native types are written above"),
    }
}

/// Parse a type text. `udt` resolves a user-defined type's name (unquoted) to its fields.
/// Types inside `frozen<...>` and inside collections of a frozen type come back frozen; a
/// UDT or collection nested in a non-frozen collection must be frozen, as CQL requires.
pub fn parse_type_text(
    text: &str,
    udt: &dyn Fn(&str) -> Option<CqlType>,
) -> Result<CqlType, TypeTextError> {
    let mut p = TypeParser { text, pos: 0, udt };
    let ty = p.parse(false)?;
    p.skip_spaces();
    if p.pos != text.len() {
        return Err(p.error("text after the type"));
    }
    Ok(ty)
}

struct TypeParser<'a> {
    text: &'a str,
    pos: usize,
    udt: &'a dyn Fn(&str) -> Option<CqlType>,
}

impl TypeParser<'_> {
    fn error(&self, reason: &str) -> TypeTextError {
        TypeTextError {
            text: self.text.to_string(),
            reason: format!("{reason} at {}", self.pos),
        }
    }

    fn skip_spaces(&mut self) {
        while self.text[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: char) -> Result<(), TypeTextError> {
        self.skip_spaces();
        if self.text[self.pos..].starts_with(c) {
            self.pos += c.len_utf8();
            Ok(())
        } else {
            Err(self.error(&format!("expected {c:?}")))
        }
    }

    fn name(&mut self) -> Result<String, TypeTextError> {
        self.skip_spaces();
        let rest = &self.text[self.pos..];
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    if quoted[i + 1..].starts_with('"') {
                        out.push('"');
                        chars.next();
                    } else {
                        self.pos += 1 + i + 1;
                        return Ok(out);
                    }
                } else {
                    out.push(c);
                }
            }
            return Err(self.error("unterminated quoted name"));
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected a type"));
        }
        self.pos += len;
        Ok(rest[..len].to_ascii_lowercase())
    }

    fn parse(&mut self, frozen: bool) -> Result<CqlType, TypeTextError> {
        let name = self.name()?;
        if let Some(native) = native_from_name(&name) {
            return Ok(native);
        }
        let ty = match name.as_str() {
            "frozen" => {
                self.expect('<')?;
                let inner = self.parse(true)?;
                self.expect('>')?;
                return Ok(inner);
            }
            "list" | "set" => {
                self.expect('<')?;
                let element = Box::new(self.parse_nested(frozen)?);
                self.expect('>')?;
                if name == "list" {
                    CqlType::List { element, frozen }
                } else {
                    CqlType::Set { element, frozen }
                }
            }
            "map" => {
                self.expect('<')?;
                let key = Box::new(self.parse_nested(frozen)?);
                self.expect(',')?;
                let value = Box::new(self.parse_nested(frozen)?);
                self.expect('>')?;
                CqlType::Map { key, value, frozen }
            }
            "tuple" => {
                self.expect('<')?;
                let mut elements = vec![self.parse(true)?];
                loop {
                    self.skip_spaces();
                    if self.text[self.pos..].starts_with(',') {
                        self.pos += 1;
                        elements.push(self.parse(true)?);
                    } else {
                        break;
                    }
                }
                self.expect('>')?;
                CqlType::Tuple(elements)
            }
            "vector" => {
                self.expect('<')?;
                let element = Box::new(self.parse(true)?);
                self.expect(',')?;
                self.skip_spaces();
                let rest = &self.text[self.pos..];
                let len = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                let dimension: u32 = rest[..len]
                    .parse()
                    .map_err(|_| self.error("expected a vector dimension"))?;
                self.pos += len;
                self.expect('>')?;
                CqlType::Vector { element, dimension }
            }
            _ => match (self.udt)(&name) {
                Some(CqlType::Udt {
                    keyspace,
                    name,
                    fields,
                    ..
                }) => CqlType::Udt {
                    keyspace,
                    name,
                    fields,
                    frozen,
                },
                _ => return Err(self.error(&format!("unknown type {name}"))),
            },
        };
        Ok(ty)
    }

    /// An element of a collection: frozen if the collection is, and otherwise it must be a
    /// type that needs no freezing (or say `frozen<...>` itself).
    fn parse_nested(&mut self, frozen: bool) -> Result<CqlType, TypeTextError> {
        let ty = self.parse(frozen)?;
        if ty.is_multi_cell() {
            return Err(self.error("non-frozen collections and UDTs cannot be nested"));
        }
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address() -> CqlType {
        CqlType::Udt {
            keyspace: "ks".into(),
            name: "address".into(),
            fields: vec![("street".into(), CqlType::Text)],
            frozen: true,
        }
    }

    fn parse(text: &str) -> CqlType {
        parse_type_text(text, &|n| (n == "address").then(address)).unwrap()
    }

    #[test]
    fn round_trips() {
        for text in [
            "int",
            "text",
            "frozen<list<int>>",
            "list<int>",
            "set<text>",
            "map<text, frozen<list<int>>>",
            "frozen<map<text, frozen<list<int>>>>",
            "frozen<tuple<int, text, frozen<set<uuid>>>>",
            "frozen<list<frozen<set<int>>>>",
            "frozen<address>",
            "address",
            "list<frozen<address>>",
            "vector<float, 3>",
        ] {
            assert_eq!(type_text(&parse(text)), text, "{text}");
        }
        assert_eq!(parse("varchar"), CqlType::Text);
        assert_eq!(
            type_text(&parse("tuple<int, int>")),
            "frozen<tuple<int, int>>"
        );
    }

    #[test]
    fn reserved_and_mixed_case_type_names_are_quoted() {
        let named = |name: &str| CqlType::Udt {
            keyspace: "ks".into(),
            name: name.into(),
            fields: vec![("f".into(), CqlType::Int)],
            frozen: true,
        };
        assert_eq!(type_text(&named("select")), "frozen<\"select\">");
        assert_eq!(type_text(&named("Address")), "frozen<\"Address\">");
        assert_eq!(type_text(&named("selection")), "frozen<selection>");
        assert!(RESERVED_KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn refuses_bad_text() {
        let none = |_: &str| None;
        for bad in [
            "",
            "list<int",
            "list<list<int>>",
            "unknown",
            "int int",
            "vector<float, x>",
        ] {
            assert!(parse_type_text(bad, &none).is_err(), "{bad}");
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_identifier("abc_1"), "abc_1");
        assert_eq!(quote_identifier("Abc"), "\"Abc\"");
        assert_eq!(quote_identifier("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_identifier("1a"), "\"1a\"");
    }
}
