//! `Display` for values: a CQL literal that the parser reads back and [`super::from_term`]
//! converts to the same value for the same type.
//!
//! Forms: strings and `inet`, `date`, `time`, `timestamp` quoted (`'it''s'`, `'::1'`,
//! `'2024-01-31'`, `'08:12:54.123000000'`, `'2024-01-31T08:12:54.123Z'`); a `date` outside years
//! 0 to 9999 and a `timestamp` outside 1583 to 9999 as their raw integers; blobs as `0x...`;
//! floats as Java writes them (`1.5`, `1.0E300`: Cassandra's `CAST(d AS text)`), with `NaN`,
//! `Infinity`, `-Infinity`; `inet` as Java writes it (`'0:0:0:0:0:0:0:1'`); decimals
//! with their exact scale (`1.50`, `15E3`); durations in units (`1y2mo3d4h`); collections,
//! tuples and UDTs in their literal syntax, UDT field names quoted when they must be.
//!
//! Three values have no literal that converts back: the empty value (written `''`, which only
//! an `inet` or `timestamp` reads as empty), a tuple and a UDT without fields (written `()` and
//! `{}`). A UDT value missing its trailing fields reads back with them null.

use khata_types::java_text;
use std::fmt::{self, Display, Formatter, Write};

use super::{CqlValue, duration, numeric, temporal};
use crate::language::ast::Name;

impl Display for CqlValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        use CqlValue as V;
        match self {
            V::Empty => f.write_str("''"),
            V::Ascii(s) | V::Text(s) => write_quoted(f, s),
            V::Blob(b) => {
                f.write_str("0x")?;
                b.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
            }
            V::Boolean(b) => write!(f, "{b}"),
            V::Bigint(n) | V::Counter(n) => write!(f, "{n}"),
            V::Int(n) => write!(f, "{n}"),
            V::Smallint(n) => write!(f, "{n}"),
            V::Tinyint(n) => write!(f, "{n}"),
            V::Varint(n) => write!(f, "{n}"),
            V::Decimal(d) => f.write_str(&numeric::format_decimal(d)),
            V::Float(x) => f.write_str(&java_text::java_float(*x)),
            V::Double(x) => f.write_str(&java_text::java_double(*x)),
            V::Date(d) => write_quoted(f, &temporal::format_date(*d)),
            V::Time(t) => write_quoted(f, &temporal::format_time(*t)),
            V::Timestamp(ms) => match temporal::format_timestamp(*ms) {
                Some(text) => write_quoted(f, &text),
                None => write!(f, "{ms}"),
            },
            V::Duration(d) => f.write_str(&duration::format_duration(d)),
            V::Inet(ip) => write_quoted(f, &java_host_address(ip)),
            V::Uuid(u) | V::Timeuuid(u) => write!(f, "{}", u.hyphenated()),
            V::List(items) | V::Vector(items) => {
                f.write_char('[')?;
                write_separated(f, items, |f, v| v.fmt(f))?;
                f.write_char(']')
            }
            V::Set(items) => {
                f.write_char('{')?;
                write_separated(f, items, |f, v| v.fmt(f))?;
                f.write_char('}')
            }
            V::Map(entries) => {
                f.write_char('{')?;
                write_separated(f, entries, |f, (k, v)| write!(f, "{k}: {v}"))?;
                f.write_char('}')
            }
            V::Tuple(fields) => {
                f.write_char('(')?;
                write_separated(f, fields, write_field)?;
                f.write_char(')')
            }
            V::Udt(fields) => {
                f.write_char('{')?;
                write_separated(f, fields, |f, (name, v)| {
                    write!(f, "{}: ", Name(name.clone()))?;
                    write_field(f, v)
                })?;
                f.write_char('}')
            }
        }
    }
}

fn write_quoted(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    write!(f, "'{}'", s.replace('\'', "''"))
}

/// An address as Java's `InetAddress.getHostAddress` writes it: IPv6 as eight hexadecimal
/// groups without `::` shortening (`0:0:0:0:0:0:0:1`), an IPv4-mapped one as the IPv4 address
/// (`InetAddress.getByAddress` makes it an `Inet4Address`).
pub(crate) fn java_host_address(ip: &std::net::IpAddr) -> String {
    match ip.to_canonical() {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => v6
            .segments()
            .iter()
            .map(|s| format!("{s:x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

fn write_field(f: &mut Formatter<'_>, field: &Option<CqlValue>) -> fmt::Result {
    match field {
        Some(v) => v.fmt(f),
        None => f.write_str("null"),
    }
}

fn write_separated<T>(
    f: &mut Formatter<'_>,
    items: &[T],
    mut each: impl FnMut(&mut Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        each(f, item)?;
    }
    Ok(())
}
