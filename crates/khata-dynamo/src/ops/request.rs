//! A request body as the operations take it: its members as JSON, and, for the item
//! operations, the item they name (PutItem's `Item`, the `Key` of GetItem, DeleteItem and
//! UpdateItem) parsed straight from the bytes.
//!
//! [`Request::parse`] reads the body once. For an item operation it reads the item member
//! with [`ItemSeed`] (no `serde_json::Value` tree for the item) and every other member as a
//! `Value`. That fast path accepts only the canonical shape of a request; anything else (bad
//! JSON, a repeated member, an item in an unusual or invalid shape) is parsed again the one
//! way every request used to be, so DynamoDB's error messages and the treatment of odd shapes
//! do not depend on the path. See [`crate::value`]'s `json_read.rs`.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::input::Object;
use crate::error::DynamoError;
use crate::value::{Item, ItemSeed};

/// A request body.
#[derive(Debug, Default)]
pub struct Request {
    /// The members (without the item member when [`Request::item`] holds it).
    pub object: Object,
    /// The operation's item member, when the fast path read it.
    pub item: Option<Item>,
}

/// The member of an operation that the fast path reads as an item.
fn item_member(operation: &str) -> Option<&'static str> {
    match operation {
        "PutItem" => Some("Item"),
        "GetItem" | "DeleteItem" | "UpdateItem" => Some("Key"),
        _ => None,
    }
}

impl Request {
    /// The body of a request for `operation`, or the `SerializationException` DynamoDB answers
    /// for a body that is not one JSON object.
    pub fn parse(operation: &str, bytes: &[u8]) -> Result<Request, DynamoError> {
        if let Some(member) = item_member(operation)
            && let Some(request) = fast(member, bytes)
        {
            return Ok(request);
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(object)) => Ok(Request { object, item: None }),
            Ok(_) => Err(DynamoError::serialization(
                "Start of structure or map found where not expected",
            )),
            Err(e) => Err(DynamoError::serialization(format!(
                "The request body is not valid JSON: {e}"
            ))),
        }
    }
}

/// The fast path: `None` for anything but the canonical shape.
fn fast(member: &'static str, bytes: &[u8]) -> Option<Request> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let request = de.deserialize_map(BodyVisitor { member }).ok()?;
    de.end().ok()?;
    Some(request)
}

struct BodyVisitor {
    member: &'static str,
}

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Request;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Request, A::Error> {
        let mut request = Request::default();
        while let Some(name) = access.next_key::<String>()? {
            if name == self.member {
                if request.item.is_some() {
                    return Err(de::Error::custom("repeated member"));
                }
                request.item = Some(access.next_value_seed(ItemSeed)?);
            } else {
                let value = access.next_value::<Value>()?;
                if request.object.insert(name, value).is_some() {
                    return Err(de::Error::custom("repeated member"));
                }
            }
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(e: DynamoError) -> String {
        e.message.unwrap_or_default()
    }

    #[test]
    fn the_item_member_is_read_apart_from_the_others() {
        let r = Request::parse(
            "PutItem",
            br#"{"TableName":"t","Item":{"k":{"S":"x"}},"ReturnValues":"NONE"}"#,
        )
        .unwrap();
        assert!(r.item.is_some());
        assert!(r.object.get("Item").is_none());
        assert_eq!(r.object.len(), 2);
        let r = Request::parse("Query", br#"{"TableName":"t"}"#).unwrap();
        assert!(r.item.is_none());
    }

    #[test]
    fn odd_shapes_take_the_slow_path_and_its_messages() {
        let r = Request::parse(
            "PutItem",
            br#"{"TableName":"t","Item":{"k":{"S":"x","N":"1"}}}"#,
        )
        .unwrap();
        assert!(r.item.is_none());
        assert!(r.object.get("Item").is_some());
        let r = Request::parse("GetItem", br#"{"Key":{"k":{"S":"x"}},"Key":null}"#).unwrap();
        assert!(r.item.is_none());
        assert_eq!(r.object.get("Key"), Some(&Value::Null));
        assert_eq!(
            message(Request::parse("PutItem", b"[]").unwrap_err()),
            "Start of structure or map found where not expected"
        );
        assert!(
            message(Request::parse("PutItem", br#"{"Item":{}"#).unwrap_err())
                .starts_with("The request body is not valid JSON: ")
        );
    }
}
