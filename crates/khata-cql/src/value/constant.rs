//! Constants of a statement (`'text'`, `42`, `1.5`, `NaN`, `true`, `1h30m`, a UUID, `0x...`)
//! read as values of a native type: Cassandra's `Constants.Literal`. A constant must first be of
//! a kind the type takes (`testAssignment`); then its text is read as the type's `fromString`
//! reads it, with that method's message on failure.

use std::net::IpAddr;

use khata_types::schema::CqlType;

use super::numeric::{parse_decimal, parse_varint};
use super::{CqlValue, LiteralError, duration, temporal, type_name};
use crate::language::ast::Literal;

/// Cassandra's name for the kind of a constant.
pub(super) fn kind(literal: &Literal) -> &'static str {
    match literal {
        Literal::String(_) => "STRING",
        Literal::Integer(_) => "INTEGER",
        Literal::Float(_) | Literal::NaN | Literal::Infinity | Literal::NegativeInfinity => "FLOAT",
        Literal::Boolean(_) => "BOOLEAN",
        Literal::Duration(_) => "DURATION",
        Literal::Uuid(_) => "UUID",
        Literal::Hex(_) => "HEX",
        Literal::Null => "NULL",
    }
}

/// The constant's text as Cassandra keeps it (strings unquoted, blobs with `0x`).
fn text(literal: &Literal) -> String {
    match literal {
        Literal::String(s) => s.clone(),
        Literal::Hex(digits) => format!("0x{digits}"),
        other => other.to_string(),
    }
}

/// `Constants.Literal.testAssignment`: the native types each kind of constant may be.
/// Whether a literal's kind is one a value of `ty` may be written as
/// (`Constants.Literal.testAssignment`'s weakly assignable cases).
pub(crate) fn literal_accepts(literal: &Literal, ty: &CqlType) -> bool {
    kind_accepts(kind(literal), ty)
}

pub(super) fn kind_accepts(kind: &str, ty: &CqlType) -> bool {
    use CqlType as T;
    match kind {
        "STRING" => matches!(
            ty,
            T::Ascii | T::Text | T::Inet | T::Date | T::Time | T::Timestamp
        ),
        "INTEGER" => matches!(
            ty,
            T::Bigint
                | T::Counter
                | T::Date
                | T::Decimal
                | T::Double
                | T::Duration
                | T::Float
                | T::Int
                | T::Smallint
                | T::Time
                | T::Timestamp
                | T::Tinyint
                | T::Varint
        ),
        "FLOAT" => matches!(ty, T::Decimal | T::Double | T::Float),
        "UUID" => matches!(ty, T::Uuid | T::Timeuuid),
        "BOOLEAN" => *ty == T::Boolean,
        "HEX" => *ty == T::Blob,
        "DURATION" => *ty == T::Duration,
        _ => false,
    }
}

/// A constant (not `null`) for a receiver of type `ty`.
pub(super) fn constant(
    literal: &Literal,
    receiver: &str,
    ty: &CqlType,
    now_millis: i64,
) -> Result<CqlValue, LiteralError> {
    let (kind, text) = (kind(literal), text(literal));
    if !kind_accepts(kind, ty) {
        return Err(LiteralError::NotAssignable {
            kind,
            text,
            receiver: receiver.to_string(),
            ty: type_name(ty),
        });
    }
    match literal {
        Literal::Hex(digits) => return hex(digits).map(CqlValue::Blob),
        Literal::Boolean(b) => return Ok(CqlValue::Boolean(*b)),
        Literal::Uuid(u) if *ty == CqlType::Uuid => return Ok(CqlValue::Uuid(*u)),
        Literal::Uuid(u) if u.get_version_num() == 1 => return Ok(CqlValue::Timeuuid(*u)),
        Literal::Uuid(_) => {
            return Err(LiteralError::InvalidConstant(
                "TimeUUID supports only version 1 UUIDs".to_string(),
            ));
        }
        _ => {}
    }
    from_string(ty, &text, now_millis)
}

/// The type's `fromString` for the text of a constant of an accepted kind.
pub(super) fn from_string(
    ty: &CqlType,
    text: &str,
    now_millis: i64,
) -> Result<CqlValue, LiteralError> {
    let fail = |what: &str| LiteralError::InvalidConstant(format!("{what} from '{text}'"));
    Ok(match ty {
        CqlType::Text => CqlValue::Text(text.to_string()),
        CqlType::Ascii if text.is_ascii() => CqlValue::Ascii(text.to_string()),
        CqlType::Ascii => {
            return Err(LiteralError::InvalidConstant(
                "Invalid ASCII character in string literal: \
                 java.nio.charset.UnmappableCharacterException: Input length = 1"
                    .to_string(),
            ));
        }
        CqlType::Inet if text.is_empty() => CqlValue::Empty,
        // Java's `InetAddress.getByName` makes an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`)
        // the IPv4 address, stored in 4 bytes.
        CqlType::Inet => CqlValue::Inet(
            text.parse::<IpAddr>()
                .map_err(|_| fail("Unable to make inet address"))?
                .to_canonical(),
        ),
        CqlType::Date => CqlValue::Date(temporal::parse_date(text)?),
        CqlType::Time => CqlValue::Time(temporal::parse_time(text)?),
        CqlType::Timestamp if text.is_empty() => CqlValue::Empty,
        CqlType::Timestamp => CqlValue::Timestamp(temporal::parse_timestamp(text, now_millis)?),
        CqlType::Duration => CqlValue::Duration(duration::parse_duration(text)?),
        CqlType::Tinyint => {
            CqlValue::Tinyint(text.parse().map_err(|_| fail("Unable to make byte"))?)
        }
        CqlType::Smallint => {
            CqlValue::Smallint(text.parse().map_err(|_| fail("Unable to make short"))?)
        }
        CqlType::Int => CqlValue::Int(text.parse().map_err(|_| fail("Unable to make int"))?),
        CqlType::Bigint => CqlValue::Bigint(text.parse().map_err(|_| fail("Unable to make long"))?),
        CqlType::Counter => {
            CqlValue::Counter(text.parse().map_err(|_| fail("Unable to make long"))?)
        }
        CqlType::Varint => {
            CqlValue::Varint(parse_varint(text).ok_or_else(|| fail("unable to make int"))?)
        }
        CqlType::Decimal => {
            CqlValue::Decimal(parse_decimal(text).ok_or_else(|| fail("unable to make BigDecimal"))?)
        }
        CqlType::Float => {
            CqlValue::Float(java_float(text).ok_or_else(|| fail("Unable to make float"))?)
        }
        CqlType::Double => {
            CqlValue::Double(java_float(text).ok_or_else(|| fail("Unable to make double"))?)
        }
        // Only reached for kinds `kind_accepts` refuses.
        _ => return Err(fail("Unable to make a value")),
    })
}

/// Java's `Float.parseFloat` / `Double.parseDouble` on the text of a CQL number (`NaN`,
/// `Infinity`, `-Infinity` included). Rust's parser also takes `inf` and `infinity` in any
/// case, which CQL's lexer never produces.
fn java_float<F: std::str::FromStr>(text: &str) -> Option<F> {
    text.parse().ok()
}

/// The bytes of a blob literal's hex digits (`BytesType.fromString`).
pub(super) fn hex(digits: &str) -> Result<Vec<u8>, LiteralError> {
    let bad = || LiteralError::InvalidConstant(format!("cannot parse '{digits}' as hex bytes"));
    if !digits.len().is_multiple_of(2) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    digits
        .as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            u8::from_str_radix(pair, 16).map_err(|_| bad())
        })
        .collect()
}
