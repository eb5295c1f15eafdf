//! Parsing items straight from a request's bytes, for the common case of a well-formed one.
//!
//! [`ItemSeed`] reads an item (`{"name": {"S": "x"}, ...}`) from a `serde_json` deserializer
//! without building a `serde_json::Value` tree first: one allocation per name and value
//! instead of a map, a key and a value per attribute and then a copy of each.
//!
//! It is a fast path, not a second definition of DynamoDB's JSON: it accepts only the
//! canonical shape (each attribute value an object with exactly one known type member, no
//! repeated names, no `null`s) and refuses everything else, well-formed or not, with an error
//! that carries no message. The caller then parses the request the slow way
//! (`serde_json::Value`, then [`super::json`]), which gives DynamoDB's exact error for a bad
//! request and the same item for the unusual shapes it accepts. So whenever this parser
//! succeeds, its item is the one [`super::json`] makes of the same bytes.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::json::{MAX_ATTRIBUTE_NAME_BYTES, NESTING_LIMIT, has_duplicates};
use super::{AttributeValue, Item, Map, Number};

/// The error of every refusal: the slow path finds the real one.
fn refuse<E: de::Error>() -> E {
    E::custom("not in the canonical shape")
}

/// Reads an item: a JSON object of attribute name -> value.
#[derive(Clone, Copy, Debug)]
pub struct ItemSeed;

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Item, D::Error> {
        deserializer
            .deserialize_map(MapVisitor { depth: 1 })
            .map(Item)
    }
}

/// A map of named values whose values are at nesting depth `depth`.
struct MapVisitor {
    depth: usize,
}

impl<'de> Visitor<'de> for MapVisitor {
    type Value = Map;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of attribute values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Map, A::Error> {
        let mut map = Map::new();
        while let Some(name) = access.next_key::<String>()? {
            if name.len() > MAX_ATTRIBUTE_NAME_BYTES {
                return Err(refuse());
            }
            let value = access.next_value_seed(ValueSeed { depth: self.depth })?;
            if map.insert(name, value).is_some() {
                // A repeated name: the slow path keeps the last one, unchecked others.
                return Err(refuse());
            }
        }
        Ok(map)
    }
}

/// One attribute value at nesting depth `depth` (a top-level value is depth 1).
#[derive(Clone, Copy)]
struct ValueSeed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = AttributeValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AttributeValue, D::Error> {
        d.deserialize_map(self)
    }
}

/// The type member of an attribute value.
#[derive(Clone, Copy)]
enum Tag {
    S,
    N,
    B,
    Bool,
    Null,
    M,
    L,
    Ss,
    Ns,
    Bs,
}

impl<'de> serde::Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tag, D::Error> {
        struct TagVisitor;
        impl Visitor<'_> for TagVisitor {
            type Value = Tag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an attribute type")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag, E> {
                Ok(match v {
                    "S" => Tag::S,
                    "N" => Tag::N,
                    "B" => Tag::B,
                    "BOOL" => Tag::Bool,
                    "NULL" => Tag::Null,
                    "M" => Tag::M,
                    "L" => Tag::L,
                    "SS" => Tag::Ss,
                    "NS" => Tag::Ns,
                    "BS" => Tag::Bs,
                    _ => return Err(refuse()),
                })
            }
        }
        d.deserialize_str(TagVisitor)
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = AttributeValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an attribute value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<AttributeValue, A::Error> {
        let Some(tag) = access.next_key::<Tag>()? else {
            return Err(refuse());
        };
        let container = matches!(tag, Tag::M | Tag::L);
        if container && self.depth > NESTING_LIMIT {
            return Err(refuse());
        }
        let inner = self.depth + 1;
        let value = match tag {
            Tag::S => AttributeValue::S(access.next_value()?),
            Tag::N => AttributeValue::N(access.next_value_seed(NumberSeed)?),
            Tag::B => AttributeValue::B(access.next_value_seed(BytesSeed)?),
            Tag::Bool => AttributeValue::Bool(access.next_value()?),
            Tag::Null => match access.next_value()? {
                true => AttributeValue::Null,
                false => return Err(refuse()),
            },
            Tag::M => AttributeValue::M(access.next_value_seed(MapSeed { depth: inner })?),
            Tag::L => {
                AttributeValue::L(access.next_value_seed(ListSeed(ValueSeed { depth: inner }))?)
            }
            Tag::Ss => AttributeValue::Ss(
                set(access.next_value::<Vec<String>>()?).ok_or_else(refuse::<A::Error>)?,
            ),
            Tag::Ns => AttributeValue::Ns(
                set(access.next_value_seed(ListSeed(NumberSeed))?)
                    .ok_or_else(refuse::<A::Error>)?,
            ),
            Tag::Bs => AttributeValue::Bs(
                set(access.next_value_seed(ListSeed(BytesSeed))?).ok_or_else(refuse::<A::Error>)?,
            ),
        };
        if access.next_key::<de::IgnoredAny>()?.is_some() {
            // A second member: another type, an unknown or a null one; the slow path decides.
            return Err(refuse());
        }
        Ok(value)
    }
}

/// A set as DynamoDB takes it: not empty, no duplicates.
fn set<T: std::hash::Hash + Eq>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty() && !has_duplicates(&items)).then_some(items)
}

struct MapSeed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for MapSeed {
    type Value = Map;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Map, D::Error> {
        d.deserialize_map(MapVisitor { depth: self.depth })
    }
}

/// A JSON array, each element read by the seed `S`.
struct ListSeed<S>(S);

impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for ListSeed<S> {
    type Value = Vec<S::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for ListSeed<S> {
    type Value = Vec<S::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
        while let Some(v) = access.next_element_seed(self.0)? {
            out.push(v);
        }
        Ok(out)
    }
}

/// A number given as a JSON string (`"1.5"`).
#[derive(Clone, Copy)]
struct NumberSeed;

impl<'de> DeserializeSeed<'de> for NumberSeed {
    type Value = Number;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Number, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for NumberSeed {
    type Value = Number;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number as a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Number, E> {
        Number::parse(v).map_err(|_| refuse())
    }
}

/// Bytes given as a base64 JSON string.
#[derive(Clone, Copy)]
struct BytesSeed;

impl<'de> DeserializeSeed<'de> for BytesSeed {
    type Value = Vec<u8>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for BytesSeed {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("base64 bytes as a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
        STANDARD.decode(v).map_err(|_| refuse())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn fast(text: &str) -> Option<Item> {
        let mut de = serde_json::Deserializer::from_str(text);
        let item = ItemSeed.deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(item)
    }

    fn slow(text: &str) -> Option<Item> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        Item::from_json(&v).ok()
    }

    #[test]
    fn the_canonical_shape_reads_as_the_slow_path_reads_it() {
        let j = json!({"a": {"S": "x\"\\\n\u{1}é"}, "b": {"N": "1.50"}, "c": {"B": "AAE="},
            "d": {"BOOL": true}, "e": {"NULL": true},
            "f": {"M": {"g": {"L": [{"N": "-0"}, {"SS": ["p", "q"]}]}, "empty": {"M": {}}}},
            "h": {"NS": ["1", "2E1"]}, "i": {"BS": ["AA==", "AQ=="]}, "l": {"L": []}});
        let text = j.to_string();
        let item = fast(&text).expect("canonical");
        assert_eq!(Some(&item), slow(&text).as_ref());
        assert_eq!(item.to_json(), slow(&text).unwrap().to_json());
    }

    #[test]
    fn every_other_shape_is_left_to_the_slow_path() {
        for text in [
            r#"{"a": {}}"#,
            r#"{"a": {"S": "x", "N": "1"}}"#,
            r#"{"a": {"S": null, "N": "1"}}"#,
            r#"{"a": {"S": "x", "other": 1}}"#,
            r#"{"a": {"S": 1}}"#,
            r#"{"a": {"N": "x"}}"#,
            r#"{"a": {"B": "!!"}}"#,
            r#"{"a": {"NULL": false}}"#,
            r#"{"a": {"SS": []}}"#,
            r#"{"a": {"SS": ["x", "x"]}}"#,
            r#"{"a": {"NS": ["1", "1.0"]}}"#,
            r#"{"a": {"S": "x"}, "a": {"S": "y"}}"#,
            r#"{"a": null}"#,
            r#"[]"#,
            r#"{"a": {"S": "x"}} x"#,
        ] {
            assert_eq!(fast(text), None, "{text}");
        }
        let mut deep = json!({"S": "x"});
        for _ in 0..NESTING_LIMIT {
            deep = json!({"L": [deep]});
        }
        assert!(fast(&json!({ "a": deep }).to_string()).is_some());
        let deeper = json!({"a": {"M": {"b": deep}}}).to_string();
        assert_eq!(fast(&deeper), None);
        assert_eq!(slow(&deeper), None);
    }

    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            "[a-z\\\\\"]{0,4}".prop_map(|s| json!({"S": s})),
            prop_oneof![Just("1"), Just("1.0"), Just("-0"), Just("x"), Just("1e200")]
                .prop_map(|n| json!({"N": n})),
            prop_oneof![Just("AAE="), Just("!!"), Just("")].prop_map(|b| json!({"B": b})),
            any::<bool>().prop_map(|b| json!({"NULL": b})),
            any::<bool>().prop_map(|b| json!({"BOOL": b})),
            proptest::collection::vec("[ab]", 0..3).prop_map(|s| json!({"SS": s})),
            proptest::collection::vec(prop_oneof![Just("1"), Just("2"), Just("1.0")], 0..3)
                .prop_map(|s| json!({"NS": s})),
            Just(json!({})),
            Just(json!({"S": "x", "N": "1"})),
            Just(json!({"S": null})),
        ];
        leaf.prop_recursive(4, 16, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(|l| json!({"L": l})),
                proptest::collection::btree_map("[ab]", inner, 0..3).prop_map(|m| json!({"M": m})),
            ]
        })
    }

    proptest! {
        #[test]
        fn what_the_fast_path_accepts_the_slow_path_reads_alike(
            item in proptest::collection::btree_map("[a-c]", value(), 0..4)
        ) {
            let text = serde_json::to_string(&item).unwrap();
            if let Some(fast) = fast(&text) {
                let slow = slow(&text);
                prop_assert_eq!(Some(fast.to_json()), slow.map(|s| s.to_json()));
            }
        }
    }
}
