//! DynamoDB's attribute values and items.
//!
//! - [`AttributeValue`]: the ten types (S, N, B, BOOL, NULL, M, L, SS, NS, BS); numbers are
//!   exact decimals ([`Number`]), sets keep the client's order but compare as sets.
//! - [`Item`]: attribute name -> value, ordered by name.
//! - `json.rs`: DynamoDB's JSON wire form (`{"S": "x"}`, `{"N": "1.5"}`, base64 for B/BS)
//!   with DynamoDB's validation messages (empty sets, duplicates, `NULL: false`, more than 32
//!   levels of nesting, bad numbers).
//! - `size.rs`: item size as DynamoDB counts it, for the 400 KB limit and capacity units.
//! - `codec.rs`: a versioned binary encoding of one value (one engine cell per attribute),
//!   whose decoder refuses bad bytes without panicking, and the order-preserving encoding of
//!   key values (S, N, B) for the clustering key.
//!
//! Deliberately not here: key-schema checks (key types, empty keys, key sizes) and the
//! request-level limits; the operations check those with the table's schema at hand.

mod codec;
mod json;
mod json_read;
mod json_write;
mod number;
mod size;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};

pub use codec::{
    DecodeError, KeyType, VALUE_FORMAT_VERSION, decode_key, decode_str, decode_value, encode_key,
    encode_value,
};
pub use json::{MAX_ATTRIBUTE_NAME_BYTES, NESTING_LIMIT, check_attribute_name, values_from_json};
pub use json_read::ItemSeed;
pub use json_write::{write_map, write_str, write_value};
pub use number::{MAX_DIGITS, MAX_EXPONENT, MIN_EXPONENT, Number};
pub use size::MAX_ITEM_SIZE_BYTES;

/// A request is invalid; DynamoDB answers `ValidationException` with this message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError(pub String);

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValidationError {}

/// Why a JSON attribute value was refused: its JSON shape is wrong (DynamoDB answers
/// `SerializationException`), or its content breaks a rule (`ValidationException`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// The JSON is not shaped as an attribute value (`{"N": 123}`, bad base64).
    Serialization(String),
    /// The value breaks one of DynamoDB's rules (empty set, duplicates, bad number, ...).
    Validation(ValidationError),
}

impl From<ValidationError> for ValueError {
    fn from(e: ValidationError) -> ValueError {
        ValueError::Validation(e)
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Serialization(m) => f.write_str(m),
            ValueError::Validation(e) => f.write_str(&e.0),
        }
    }
}

impl std::error::Error for ValueError {}

/// A DynamoDB map: attribute name -> value.
pub type Map = BTreeMap<String, AttributeValue>;

/// One DynamoDB attribute value.
#[derive(Clone, Debug)]
pub enum AttributeValue {
    /// `S`: a UTF-8 string.
    S(String),
    /// `N`: an exact decimal number.
    N(Number),
    /// `B`: bytes (base64 on the wire).
    B(Vec<u8>),
    /// `BOOL`.
    Bool(bool),
    /// `NULL` (always `true` on the wire).
    Null,
    /// `M`: a map of named values.
    M(Map),
    /// `L`: a list of values.
    L(Vec<AttributeValue>),
    /// `SS`: a non-empty set of distinct strings, in the order given.
    Ss(Vec<String>),
    /// `NS`: a non-empty set of numerically distinct numbers, in the order given.
    Ns(Vec<Number>),
    /// `BS`: a non-empty set of distinct byte strings, in the order given.
    Bs(Vec<Vec<u8>>),
}

impl AttributeValue {
    /// DynamoDB's name of this value's type: `S`, `N`, `B`, `BOOL`, `NULL`, `M`, `L`, `SS`,
    /// `NS`, `BS` (as in `attribute_type` and error messages).
    pub fn type_name(&self) -> &'static str {
        match self {
            AttributeValue::S(_) => "S",
            AttributeValue::N(_) => "N",
            AttributeValue::B(_) => "B",
            AttributeValue::Bool(_) => "BOOL",
            AttributeValue::Null => "NULL",
            AttributeValue::M(_) => "M",
            AttributeValue::L(_) => "L",
            AttributeValue::Ss(_) => "SS",
            AttributeValue::Ns(_) => "NS",
            AttributeValue::Bs(_) => "BS",
        }
    }

    /// Parses one value from DynamoDB's JSON form.
    pub fn from_json(json: &serde_json::Value) -> Result<AttributeValue, ValueError> {
        json::value_from_json(json, 1)
    }

    /// Writes this value in DynamoDB's JSON form.
    pub fn to_json(&self) -> serde_json::Value {
        json::value_to_json(self)
    }

    /// Size in bytes as DynamoDB counts it (without any attribute name).
    pub fn size_bytes(&self) -> usize {
        size::value_size(self)
    }
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort();
    v
}

impl PartialEq for AttributeValue {
    /// Equality as DynamoDB's `=`: same type and value; sets equal as sets, numbers
    /// numerically.
    fn eq(&self, other: &AttributeValue) -> bool {
        use AttributeValue::*;
        match (self, other) {
            (S(a), S(b)) => a == b,
            (N(a), N(b)) => a == b,
            (B(a), B(b)) => a == b,
            (Bool(a), Bool(b)) => a == b,
            (Null, Null) => true,
            (M(a), M(b)) => a == b,
            (L(a), L(b)) => a == b,
            (Ss(a), Ss(b)) => a.len() == b.len() && sorted(a) == sorted(b),
            (Ns(a), Ns(b)) => a.len() == b.len() && sorted(a) == sorted(b),
            (Bs(a), Bs(b)) => a.len() == b.len() && sorted(a) == sorted(b),
            _ => false,
        }
    }
}

impl Eq for AttributeValue {}

/// An item: its attributes by name (ordered by name, so output is deterministic).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item(pub Map);

impl Item {
    /// An empty item.
    pub fn new() -> Item {
        Item(Map::new())
    }

    /// Parses an item (`{"name": {"S": "x"}, ...}`) from DynamoDB's JSON form.
    pub fn from_json(json: &serde_json::Value) -> Result<Item, ValueError> {
        json::item_from_json(json).map(Item)
    }

    /// Writes the item in DynamoDB's JSON form.
    pub fn to_json(&self) -> serde_json::Value {
        json::map_to_json(&self.0)
    }

    /// Size in bytes as DynamoDB counts it: names' UTF-8 lengths plus values' sizes.
    pub fn size_bytes(&self) -> usize {
        size::map_entries_size(&self.0)
    }
}

impl Deref for Item {
    type Target = Map;
    fn deref(&self) -> &Map {
        &self.0
    }
}

impl DerefMut for Item {
    fn deref_mut(&mut self) -> &mut Map {
        &mut self.0
    }
}

impl From<Map> for Item {
    fn from(map: Map) -> Item {
        Item(map)
    }
}

impl FromIterator<(String, AttributeValue)> for Item {
    fn from_iter<I: IntoIterator<Item = (String, AttributeValue)>>(iter: I) -> Item {
        Item(iter.into_iter().collect())
    }
}
