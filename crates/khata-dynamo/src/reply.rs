//! An operation's answer body: a JSON value, or JSON already written as bytes.
//!
//! Most operations answer a `serde_json::Value`. The item operations, whose answers are mostly
//! items, write them straight into bytes ([`crate::value::write_map`]) and assemble the
//! answer's object with [`Body`], so an item is never turned into a `Value` tree. Either way
//! the bytes are those `serde_json` would print for the same answer: compact, members in name
//! order.

use serde_json::Value;

use crate::value::{Item, write_map};

/// What an operation answers.
#[derive(Debug)]
pub enum Reply {
    /// A JSON value, printed by the endpoint.
    Json(Value),
    /// A JSON object already printed.
    Bytes(Vec<u8>),
}

impl From<Value> for Reply {
    fn from(value: Value) -> Reply {
        Reply::Json(value)
    }
}

impl From<Body> for Reply {
    fn from(body: Body) -> Reply {
        Reply::Bytes(body.finish())
    }
}

impl Reply {
    /// The answer's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Reply::Json(value) => value.to_string().into_bytes(),
            Reply::Bytes(bytes) => bytes,
        }
    }
}

/// A JSON object being assembled from members printed one by one.
#[derive(Debug, Default)]
pub struct Body {
    /// Each member's name (a constant, printed without escaping) and its printed value.
    members: Vec<(&'static str, Vec<u8>)>,
}

impl Body {
    pub fn new() -> Body {
        Body::default()
    }

    /// A member whose value is already printed JSON.
    pub fn raw(&mut self, name: &'static str, json: Vec<u8>) {
        self.members.push((name, json));
    }

    /// A member holding a JSON value.
    pub fn value(&mut self, name: &'static str, value: &Value) {
        self.raw(name, value.to_string().into_bytes());
    }

    /// A member holding an item (or any map of attribute values).
    pub fn item(&mut self, name: &'static str, item: &Item) {
        let mut out = Vec::with_capacity(64);
        write_map(&mut out, item);
        self.raw(name, out);
    }

    /// The object's bytes, members in name order as `serde_json` prints a map.
    pub fn finish(mut self) -> Vec<u8> {
        self.members.sort_by_key(|(name, _)| *name);
        let len: usize = self
            .members
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        let mut out = Vec::with_capacity(len + 2);
        out.push(b'{');
        for (i, (name, value)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            out.extend_from_slice(value);
        }
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn members_come_out_in_name_order_as_serde_json_prints_them() {
        let item = Item::from_json(&json!({"b": {"S": "x"}, "a": {"N": "1"}})).unwrap();
        let mut body = Body::new();
        body.value("ScannedCount", &json!(3));
        body.item("Item", &item);
        body.value(
            "ConsumedCapacity",
            &json!({"TableName": "t", "CapacityUnits": 0.5}),
        );
        let expected = json!({"ScannedCount": 3, "Item": item.to_json(),
            "ConsumedCapacity": {"TableName": "t", "CapacityUnits": 0.5}});
        assert_eq!(
            String::from_utf8(body.finish()).unwrap(),
            expected.to_string()
        );
        assert_eq!(String::from_utf8(Body::new().finish()).unwrap(), "{}");
    }
}
