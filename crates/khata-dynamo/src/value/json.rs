//! DynamoDB's JSON form of attribute values, with DynamoDB's messages.
//!
//! A JSON shape that cannot be an attribute value (`{"S": 1}`, `{"N": 123}`, bad base64) is a
//! [`ValueError::Serialization`], as DynamoDB answers `SerializationException`; a well-shaped
//! value that breaks a rule is a [`ValueError::Validation`]. A member whose value is JSON
//! `null` counts as absent, as DynamoDB's deserializer treats it.

use std::collections::{BTreeMap, HashMap, HashSet};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map as JsonMap, Value as Json};

use super::{AttributeValue, Map, Number, ValidationError, ValueError};

/// Containers (M, L) deeper than this are refused.
pub const NESTING_LIMIT: usize = 32;

/// The longest attribute name (or map key) DynamoDB takes, in bytes: the "64 KB" of its guide,
/// 65536 itself refused.
pub const MAX_ATTRIBUTE_NAME_BYTES: usize = 65535;

/// Refuses an attribute name or map key longer than [`MAX_ATTRIBUTE_NAME_BYTES`], in
/// DynamoDB's words.
pub fn check_attribute_name(name: &str) -> Result<(), ValidationError> {
    if name.len() > MAX_ATTRIBUTE_NAME_BYTES {
        return Err(ValidationError(format!(
            "1 validation error detected: Attribute name is too large, must be less than {} bytes",
            MAX_ATTRIBUTE_NAME_BYTES + 1
        )));
    }
    Ok(())
}

const INVALID: &str = "One or more parameter values were invalid: ";

fn serialization(m: impl Into<String>) -> ValueError {
    ValueError::Serialization(m.into())
}

fn validation(m: impl Into<String>) -> ValueError {
    ValueError::Validation(ValidationError(m.into()))
}

fn json_kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "NULL_VALUE",
        Json::Bool(_) => "BOOLEAN_VALUE",
        Json::Number(_) => "NUMBER_VALUE",
        Json::String(_) => "STRING_VALUE",
        Json::Array(_) => "START_ARRAY",
        Json::Object(_) => "START_OBJECT",
    }
}

fn expect_str(j: &Json) -> Result<&str, ValueError> {
    match j {
        Json::String(s) => Ok(s),
        Json::Object(_) => Err(serialization(
            "Start of structure or map found where not expected.",
        )),
        Json::Array(_) => Err(serialization("Start of list found where not expected")),
        other => Err(serialization(format!(
            "{} can not be converted to a String",
            json_kind(other)
        ))),
    }
}

fn expect_array(j: &Json) -> Result<&Vec<Json>, ValueError> {
    match j {
        Json::Array(a) => Ok(a),
        Json::Object(_) => Err(serialization(
            "Start of structure or map found where not expected.",
        )),
        _ => Err(serialization("Expected list or null")),
    }
}

fn expect_object(j: &Json) -> Result<&JsonMap<String, Json>, ValueError> {
    match j {
        Json::Object(o) => Ok(o),
        Json::Array(_) => Err(serialization("Start of list found where not expected")),
        _ => Err(serialization("Expected map or null")),
    }
}

fn decode_base64(text: &str) -> Result<Vec<u8>, ValueError> {
    STANDARD
        .decode(text)
        .map_err(|e| serialization(format!("'{text}' can not be converted to a Blob: {e}")))
}

fn number(text: &str) -> Result<Number, ValueError> {
    Number::parse(text).map_err(ValueError::Validation)
}

/// Parses one attribute value at nesting depth `depth` (a top-level value is depth 1).
pub(super) fn value_from_json(json: &Json, depth: usize) -> Result<AttributeValue, ValueError> {
    let object = expect_object(json)?;
    let mut found: Option<(&str, &Json)> = None;
    for (key, member) in object {
        if member.is_null() {
            continue;
        }
        let known = matches!(
            key.as_str(),
            "S" | "N" | "B" | "BOOL" | "NULL" | "M" | "L" | "SS" | "NS" | "BS"
        );
        if !known {
            // DynamoDB's deserializer ignores unknown members.
            continue;
        }
        if found.is_some() {
            return Err(validation(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ));
        }
        found = Some((key, member));
    }
    let Some((kind, member)) = found else {
        return Err(validation(
            "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
        ));
    };
    Ok(match kind {
        "S" => AttributeValue::S(expect_str(member)?.to_owned()),
        "N" => AttributeValue::N(number(expect_str(member)?)?),
        "B" => AttributeValue::B(decode_base64(expect_str(member)?)?),
        "BOOL" => match member {
            Json::Bool(b) => AttributeValue::Bool(*b),
            other => {
                return Err(serialization(format!(
                    "{} can not be converted to an Boolean",
                    json_kind(other)
                )));
            }
        },
        "NULL" => match member {
            Json::Bool(true) => AttributeValue::Null,
            Json::Bool(false) => {
                return Err(validation(format!(
                    "{INVALID}Null attribute value types must have the value of true"
                )));
            }
            other => {
                return Err(serialization(format!(
                    "{} can not be converted to an Boolean",
                    json_kind(other)
                )));
            }
        },
        "M" | "L" if depth > NESTING_LIMIT => {
            return Err(validation(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
            ));
        }
        "M" => {
            let mut map = Map::new();
            for (name, v) in expect_object(member)? {
                check_attribute_name(name)?;
                map.insert(name.clone(), value_from_json(v, depth + 1)?);
            }
            AttributeValue::M(map)
        }
        "L" => {
            let items = expect_array(member)?;
            let mut list = Vec::with_capacity(items.len());
            for v in items {
                list.push(value_from_json(v, depth + 1)?);
            }
            AttributeValue::L(list)
        }
        "SS" => {
            let items = expect_array(member)?;
            if items.is_empty() {
                return Err(validation(format!(
                    "{INVALID}An string set  may not be empty"
                )));
            }
            let set: Vec<String> = items
                .iter()
                .map(|j| expect_str(j).map(str::to_owned))
                .collect::<Result<_, _>>()?;
            if has_duplicates(&set) {
                return Err(validation(format!(
                    "{INVALID}Input collection [{}] contains duplicates.",
                    set.join(", ")
                )));
            }
            AttributeValue::Ss(set)
        }
        "NS" => {
            let items = expect_array(member)?;
            if items.is_empty() {
                return Err(validation(format!(
                    "{INVALID}An number set  may not be empty"
                )));
            }
            let texts: Vec<&str> = items.iter().map(expect_str).collect::<Result<_, _>>()?;
            let set: Vec<Number> = texts.iter().map(|t| number(t)).collect::<Result<_, _>>()?;
            if has_duplicates(&set) {
                return Err(validation(format!(
                    "{INVALID}Input collection contains duplicates"
                )));
            }
            AttributeValue::Ns(set)
        }
        "BS" => {
            let items = expect_array(member)?;
            if items.is_empty() {
                return Err(validation(format!(
                    "{INVALID}Binary sets should not be empty"
                )));
            }
            let texts: Vec<&str> = items.iter().map(expect_str).collect::<Result<_, _>>()?;
            let set: Vec<Vec<u8>> = texts
                .iter()
                .map(|t| decode_base64(t))
                .collect::<Result<_, _>>()?;
            if has_duplicates(&set) {
                return Err(validation(format!(
                    "{INVALID}Input collection [{}]of type BS contains duplicates.",
                    texts.join(", ")
                )));
            }
            AttributeValue::Bs(set)
        }
        _ => unreachable!("kinds are filtered above"),
    })
}

pub(super) fn has_duplicates<T: std::hash::Hash + Eq>(items: &[T]) -> bool {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().any(|x| !seen.insert(x))
}

/// Parses an item: a JSON object of attribute name -> value.
pub(super) fn item_from_json(json: &Json) -> Result<Map, ValueError> {
    let mut map = BTreeMap::new();
    for (name, v) in expect_object(json)? {
        check_attribute_name(name)?;
        map.insert(name.clone(), value_from_json(v, 1)?);
    }
    Ok(map)
}

/// Parses a map of placeholder -> value, as `ExpressionAttributeValues` is sent.
pub fn values_from_json(json: &Json) -> Result<HashMap<String, AttributeValue>, ValueError> {
    let mut map = HashMap::new();
    for (name, v) in expect_object(json)? {
        map.insert(name.clone(), value_from_json(v, 1)?);
    }
    Ok(map)
}

pub(super) fn value_to_json(value: &AttributeValue) -> Json {
    let (kind, member) = match value {
        AttributeValue::S(s) => ("S", Json::String(s.clone())),
        AttributeValue::N(n) => ("N", Json::String(n.to_string())),
        AttributeValue::B(b) => ("B", Json::String(STANDARD.encode(b))),
        AttributeValue::Bool(b) => ("BOOL", Json::Bool(*b)),
        AttributeValue::Null => ("NULL", Json::Bool(true)),
        AttributeValue::M(m) => ("M", map_to_json(m)),
        AttributeValue::L(l) => ("L", Json::Array(l.iter().map(value_to_json).collect())),
        AttributeValue::Ss(s) => (
            "SS",
            Json::Array(s.iter().cloned().map(Json::String).collect()),
        ),
        AttributeValue::Ns(s) => (
            "NS",
            Json::Array(s.iter().map(|n| Json::String(n.to_string())).collect()),
        ),
        AttributeValue::Bs(s) => (
            "BS",
            Json::Array(s.iter().map(|b| Json::String(STANDARD.encode(b))).collect()),
        ),
    };
    let mut object = JsonMap::new();
    object.insert(kind.to_owned(), member);
    Json::Object(object)
}

pub(super) fn map_to_json(map: &Map) -> Json {
    Json::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn err(j: Json) -> String {
        AttributeValue::from_json(&j).unwrap_err().to_string()
    }

    #[test]
    fn messages() {
        assert_eq!(
            err(json!({})),
            "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
        );
        assert_eq!(
            err(json!({"S": "a", "N": "1"})),
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
        );
        assert_eq!(
            err(json!({"SS": []})),
            "One or more parameter values were invalid: An string set  may not be empty"
        );
        assert_eq!(
            err(json!({"NS": []})),
            "One or more parameter values were invalid: An number set  may not be empty"
        );
        assert_eq!(
            err(json!({"BS": []})),
            "One or more parameter values were invalid: Binary sets should not be empty"
        );
        assert_eq!(
            err(json!({"SS": ["a", "a"]})),
            "One or more parameter values were invalid: Input collection [a, a] contains duplicates."
        );
        assert_eq!(
            err(json!({"NS": ["1", "1.0"]})),
            "One or more parameter values were invalid: Input collection contains duplicates"
        );
        assert_eq!(
            err(json!({"BS": ["Yg==", "Yg=="]})),
            "One or more parameter values were invalid: Input collection [Yg==, Yg==]of type BS contains duplicates."
        );
        assert_eq!(
            err(json!({"NULL": false})),
            "One or more parameter values were invalid: Null attribute value types must have the value of true"
        );
        assert!(matches!(
            AttributeValue::from_json(&json!({"N": 123})),
            Err(ValueError::Serialization(_))
        ));
        assert!(matches!(
            AttributeValue::from_json(&json!({"B": "!!"})),
            Err(ValueError::Serialization(_))
        ));
    }

    #[test]
    fn nesting_limit() {
        let mut j = json!({"S": "x"});
        for _ in 0..NESTING_LIMIT {
            j = json!({"L": [j]});
        }
        assert!(AttributeValue::from_json(&j).is_ok());
        let j = json!({"M": {"a": j}});
        assert!(err(j).starts_with("Nesting Levels have exceeded supported limits"));
    }

    #[test]
    fn round_trip() {
        let j = json!({"a": {"S": "x"}, "b": {"N": "1.50"}, "c": {"B": "AAE="}, "d": {"BOOL": true}, "e": {"NULL": true},
            "f": {"M": {"g": {"L": [{"N": "-0"}, {"SS": ["p", "q"]}]}}}, "h": {"NS": ["1", "2E1"]}, "i": {"BS": ["AA==", "AQ=="]}});
        let item = super::super::Item::from_json(&j).unwrap();
        let out = item.to_json();
        assert_eq!(out["b"], json!({"N": "1.5"}));
        assert_eq!(out["f"]["M"]["g"]["L"][0], json!({"N": "0"}));
        assert_eq!(out["h"], json!({"NS": ["1", "20"]}));
        assert_eq!(super::super::Item::from_json(&out).unwrap(), item);
    }
}
