//! CQL values: the typed form of what a client binds or writes in a statement, and what the
//! executor stores and returns.
//!
//! A [`CqlValue`] is one value of a [`CqlType`]; the type is not stored in the value, it comes
//! from the schema (a column, a bind marker's specification). The layer gives the executor:
//!
//! - the native protocol v4 serialization (`doc/native_protocol_v4.spec` §6, apache/cassandra):
//!   [`CqlValue::serialize`] and [`CqlValue::deserialize`], with Cassandra's validation and its
//!   error messages (`Expected 4 or 0 byte int (3)`, `String didn't validate.`);
//! - Cassandra's order of values of a type ([`compare`]), which orders set elements and map
//!   keys, and the conversion to and from the order-preserving clustering-key encoding of
//!   `khata_types::clustering` ([`clustering_key`], [`clustering_values`]);
//! - the conversion of a literal term of a statement into a value of the receiving column's type
//!   ([`from_term`]), with Cassandra's assignment rules and messages, and `Display`, which writes
//!   a value as a CQL literal that converts back to the same value.
//!
//! # Invariants
//!
//! A value produced here (by deserialization or from a literal) *conforms* to its type
//! ([`CqlValue::conforms_to`]): the variant matches the type, `ascii` is ASCII, `time` is within
//! a day, a `timeuuid` is a version 1 UUID, a duration's parts share a sign, a vector has its
//! dimension and no empty element, a tuple or UDT has at most its type's fields. Sets are sorted by [`compare`] with
//! no two elements equal, maps likewise by key; deserialization and literal conversion
//! normalise them as Cassandra does (duplicates dropped, the last value of a repeated map key
//! kept). Nulls exist only as tuple and UDT fields; collections and vectors refuse them.
//!
//! The empty value: CQL lets a client bind zero bytes for most native types (`int`, `uuid`,
//! ...); it is neither null nor a value of the type, and sorts before every value. It is
//! [`CqlValue::Empty`]. For `text`, `ascii` and `blob` zero bytes are the empty string, for
//! tuples and UDTs a value with no fields.
//!
//! # Deliberate differences from Cassandra
//!
//! - `text` must be UTF-8 as Rust defines it: Cassandra also accepts modified UTF-8 (`C0 80`)
//!   and encoded surrogates, which cannot be held in a `String`.
//! - A duration followed by extra bytes is refused (Cassandra ignores them); a `time` outside
//!   `0..86399999999999` on the wire is refused (Cassandra checks only its length).
//! - Integers are normalised: a `varint` or `decimal` with redundant sign bytes, or a boolean
//!   byte other than 0 and 1, reads back as the same value and serializes minimally.
//! - Timestamps without a time zone are read as UTC (Cassandra uses the JVM's zone); named time
//!   zones other than UTC and GMT are refused; dates before the Gregorian reform are read in
//!   the proleptic Gregorian calendar (Cassandra's `SimpleDateFormat` uses the Julian one).
//! - An `inet` literal must be an IP address (Cassandra also resolves host names); `''` is not
//!   a `date` or `time` (Cassandra makes it an empty value its own validation then refuses).
//! - A JSON number for a `decimal` or `varint` keeps its own digits (Cassandra's Jackson reads
//!   a fraction as a double first, so `0.100000000000000000000000000001` becomes `0.1`); a JSON
//!   object's keys are read in name order, where messages show Java's `{k=v}` in the document's
//!   order.
//! - A vector element of zero bytes is refused for every element type (Cassandra reads an
//!   empty string as a value, other empty elements as nulls).
//!
//! Nothing here panics on any input bytes or literal text: deserialization and literal
//! conversion are fuzzed (`tests/value_wire_fuzz.rs`, `tests/value_literal_fuzz.rs`). Serializing a value against a type it does not conform to is a
//! bug in the caller, and is an assertion failure.

mod arith;
mod compare;
mod constant;
mod decimal_math;
pub(crate) use decimal_math::{exp as decimal_exp, ln as decimal_ln, log10 as decimal_log10};
mod display;
mod duration;
mod error;
pub mod json;
mod literal;
mod nested;
pub(crate) use arith::{
    NUMBER_TYPES, apply as apply_arithmetic, float_literal_type, negate as negate_number,
    negation_type, result_type as arithmetic_type, signature as arithmetic_signature,
};
mod numeric;
pub(crate) use constant::literal_accepts;
pub(crate) use literal::value_compatible;
pub(crate) use numeric::{cast_number, decimal_plain_string};
mod temporal;
mod vint;
mod wire;

use std::net::IpAddr;

use khata_types::schema::CqlType;
use num_bigint::BigInt;
use uuid::Uuid;

pub use compare::{clustering_key, clustering_values, compare, equal_serialized};
pub use error::{LiteralError, ValueError};
pub use literal::{Evaluator, from_term, from_term_with};
pub use wire::valid_as_is;

/// The `date` of the Unix epoch: dates are days as an unsigned 32-bit integer with the epoch
/// at 2^31 (so that byte order is date order).
pub const EPOCH_DATE: u32 = 1 << 31;

/// Nanoseconds in a day: a `time` is in `0..NANOS_PER_DAY`.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// A value of a CQL type. See the module documentation for the invariants.
#[derive(Clone, Debug, PartialEq)]
pub enum CqlValue {
    /// The empty value (zero bytes) of a type that has other values: see the module docs.
    Empty,
    /// `ascii`: ASCII characters only.
    Ascii(String),
    /// `bigint`
    Bigint(i64),
    /// `blob`
    Blob(Vec<u8>),
    /// `boolean`
    Boolean(bool),
    /// `counter` (a counter's value as read or bound; updates are `c = c + n`).
    Counter(i64),
    /// `date`: days with [`EPOCH_DATE`] the Unix epoch.
    Date(u32),
    /// `decimal`
    Decimal(Decimal),
    /// `double`
    Double(f64),
    /// `duration`
    Duration(Duration),
    /// `float`
    Float(f32),
    /// `inet`
    Inet(IpAddr),
    /// `int`
    Int(i32),
    /// `smallint`
    Smallint(i16),
    /// `text` (and `varchar`)
    Text(String),
    /// `time`: nanoseconds since midnight, `0..NANOS_PER_DAY`.
    Time(i64),
    /// `timestamp`: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// `timeuuid`: a version 1 UUID.
    Timeuuid(Uuid),
    /// `tinyint`
    Tinyint(i8),
    /// `uuid`
    Uuid(Uuid),
    /// `varint`
    Varint(BigInt),
    /// `list<t>`
    List(Vec<CqlValue>),
    /// `set<t>`: sorted by [`compare`], no two elements equal.
    Set(Vec<CqlValue>),
    /// `map<k, v>`: sorted by key, no two keys equal.
    Map(Vec<(CqlValue, CqlValue)>),
    /// `tuple<...>`: at most the type's fields, each possibly null (`None`).
    Tuple(Vec<Option<CqlValue>>),
    /// A user-defined type's value: the first fields of the type, by name, each possibly null.
    /// Trailing fields may be missing (a value written before the type gained them).
    Udt(Vec<(String, Option<CqlValue>)>),
    /// `vector<t, n>`: exactly `n` elements.
    Vector(Vec<CqlValue>),
}

/// A `decimal`: `unscaled * 10^-scale`, as Java's `BigDecimal`. `1.0` and `1.00` are different
/// values that [`compare`] finds equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The digits.
    pub unscaled: BigInt,
    /// The number of digits after the decimal point (negative: zeros before it).
    pub scale: i32,
}

/// A `duration`: months, days and nanoseconds, all of the same sign (a day is not always 24
/// hours, nor a month 30 days, so the three are kept apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Duration {
    pub months: i32,
    pub days: i32,
    pub nanos: i64,
}

impl Duration {
    /// Whether the three parts share a sign (zeros fit either), as CQL requires.
    pub fn has_consistent_sign(&self) -> bool {
        (self.months >= 0 && self.days >= 0 && self.nanos >= 0)
            || (self.months <= 0 && self.days <= 0 && self.nanos <= 0)
    }
}

impl CqlValue {
    /// A `date` from days since the Unix epoch (negative before it); `None` outside the
    /// type's range.
    pub fn date_from_epoch_days(days: i64) -> Option<CqlValue> {
        let shifted = days.checked_add(i64::from(EPOCH_DATE))?;
        u32::try_from(shifted).ok().map(CqlValue::Date)
    }

    /// Whether this value is one of `ty` and keeps the invariants in the module documentation
    /// (except the order of sets and maps, which costs comparisons to check).
    pub fn conforms_to(&self, ty: &CqlType) -> bool {
        use CqlValue as V;
        match (self, ty) {
            (V::Empty, ty) => accepts_empty(ty),
            (V::Ascii(s), CqlType::Ascii) => s.is_ascii(),
            (V::Bigint(_), CqlType::Bigint)
            | (V::Blob(_), CqlType::Blob)
            | (V::Boolean(_), CqlType::Boolean)
            | (V::Counter(_), CqlType::Counter)
            | (V::Date(_), CqlType::Date)
            | (V::Decimal(_), CqlType::Decimal)
            | (V::Double(_), CqlType::Double)
            | (V::Float(_), CqlType::Float)
            | (V::Inet(_), CqlType::Inet)
            | (V::Int(_), CqlType::Int)
            | (V::Smallint(_), CqlType::Smallint)
            | (V::Text(_), CqlType::Text)
            | (V::Timestamp(_), CqlType::Timestamp)
            | (V::Tinyint(_), CqlType::Tinyint)
            | (V::Uuid(_), CqlType::Uuid)
            | (V::Varint(_), CqlType::Varint) => true,
            (V::Duration(d), CqlType::Duration) => d.has_consistent_sign(),
            (V::Time(t), CqlType::Time) => (0..NANOS_PER_DAY).contains(t),
            (V::Timeuuid(u), CqlType::Timeuuid) => u.get_version_num() == 1,
            (V::List(items), CqlType::List { element, .. })
            | (V::Set(items), CqlType::Set { element, .. }) => {
                items.iter().all(|v| v.conforms_to(element))
            }
            (V::Map(entries), CqlType::Map { key, value, .. }) => entries
                .iter()
                .all(|(k, v)| k.conforms_to(key) && v.conforms_to(value)),
            (V::Tuple(fields), CqlType::Tuple(types)) => {
                fields.len() <= types.len()
                    && fields
                        .iter()
                        .zip(types)
                        .all(|(f, t)| f.as_ref().is_none_or(|v| v.conforms_to(t)))
            }
            (V::Udt(fields), CqlType::Udt { fields: types, .. }) => {
                fields.len() <= types.len()
                    && fields.iter().zip(types).all(|((name, f), (field, t))| {
                        name == field && f.as_ref().is_none_or(|v| v.conforms_to(t))
                    })
            }
            (V::Vector(items), CqlType::Vector { element, dimension }) => {
                usize::try_from(*dimension) == Ok(items.len())
                    && items
                        .iter()
                        .all(|v| *v != V::Empty && v.conforms_to(element))
            }
            _ => false,
        }
    }
}

/// Whether `ty` has an [`CqlValue::Empty`] value: Cassandra accepts zero bytes for it (and they
/// are not simply the empty string or a tuple without fields).
pub fn accepts_empty(ty: &CqlType) -> bool {
    matches!(
        ty,
        CqlType::Bigint
            | CqlType::Boolean
            | CqlType::Counter
            | CqlType::Decimal
            | CqlType::Double
            | CqlType::Float
            | CqlType::Inet
            | CqlType::Int
            | CqlType::Timestamp
            | CqlType::Timeuuid
            | CqlType::Uuid
            | CqlType::Varint
            | CqlType::Vector { .. }
    )
}

/// A type as Cassandra names it in error messages: `int`, `frozen<list<int>>`,
/// `map<text, int>`, `frozen<tuple<int, text>>`, `frozen<address>`, `vector<float, 3>`.
pub fn type_name(ty: &CqlType) -> String {
    let frozen = |f: bool, s: String| if f { format!("frozen<{s}>") } else { s };
    match ty {
        CqlType::List { element, frozen: f } => frozen(*f, format!("list<{}>", type_name(element))),
        CqlType::Set { element, frozen: f } => frozen(*f, format!("set<{}>", type_name(element))),
        CqlType::Map {
            key,
            value,
            frozen: f,
        } => frozen(*f, format!("map<{}, {}>", type_name(key), type_name(value))),
        CqlType::Tuple(types) => {
            let names: Vec<String> = types.iter().map(type_name).collect();
            format!("frozen<tuple<{}>>", names.join(", "))
        }
        CqlType::Udt {
            name, frozen: f, ..
        } => {
            let name = crate::language::ast::Name(name.clone()).to_string();
            frozen(*f, name)
        }
        CqlType::Vector { element, dimension } => {
            format!("vector<{}, {dimension}>", type_name(element))
        }
        native => native_name(native).to_string(),
    }
}

fn native_name(ty: &CqlType) -> &'static str {
    match ty {
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
        _ => "?",
    }
}
