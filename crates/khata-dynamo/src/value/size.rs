//! Item size as DynamoDB computes it (developer guide, "Item sizes and formats"): the UTF-8
//! length of each attribute name plus the size of its value, where strings count their UTF-8
//! bytes, binaries their raw bytes, numbers about one byte per two significant digits plus
//! one, BOOL and NULL one byte, M and L three bytes plus one byte per element plus the
//! elements (with their names, for maps), and sets the sum of their members.

use super::{AttributeValue, Map};

/// The largest item DynamoDB stores: 400 KB, names included.
pub const MAX_ITEM_SIZE_BYTES: usize = 400 * 1024;

/// Overhead of a map or list, whatever it holds.
const CONTAINER_OVERHEAD_BYTES: usize = 3;
/// Per element of a map or list.
const ELEMENT_OVERHEAD_BYTES: usize = 1;

pub(super) fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => n.size_bytes(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Bool(_) | AttributeValue::Null => 1,
        AttributeValue::M(m) => {
            CONTAINER_OVERHEAD_BYTES + m.len() * ELEMENT_OVERHEAD_BYTES + map_entries_size(m)
        }
        AttributeValue::L(l) => {
            CONTAINER_OVERHEAD_BYTES
                + l.len() * ELEMENT_OVERHEAD_BYTES
                + l.iter().map(value_size).sum::<usize>()
        }
        AttributeValue::Ss(s) => s.iter().map(String::len).sum(),
        AttributeValue::Ns(s) => s.iter().map(|n| n.size_bytes()).sum(),
        AttributeValue::Bs(s) => s.iter().map(Vec::len).sum(),
    }
}

pub(super) fn map_entries_size(map: &Map) -> usize {
    map.iter().map(|(name, v)| name.len() + value_size(v)).sum()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::value::Item;

    fn size(j: serde_json::Value) -> usize {
        Item::from_json(&j).unwrap().size_bytes()
    }

    #[test]
    fn developer_guide_examples() {
        // A string attribute: name bytes plus UTF-8 bytes ("shirt-color" is 11, "R" is 1).
        assert_eq!(size(json!({"shirt-color": {"S": "R"}})), 12);
        // Multi-byte UTF-8 counts bytes, not characters.
        assert_eq!(size(json!({"a": {"S": "é"}})), 3);
        // Numbers: 1 byte per 2 significant digits, plus 1; leading/trailing zeros trimmed.
        assert_eq!(size(json!({"n": {"N": "12345"}})), 1 + 4);
        assert_eq!(size(json!({"n": {"N": "1000"}})), 1 + 2);
        assert_eq!(size(json!({"n": {"N": "-1.5"}})), 1 + 3);
        // BOOL and NULL: one byte.
        assert_eq!(size(json!({"b": {"BOOL": true}, "z": {"NULL": true}})), 4);
        // An empty map or list is 3 bytes; each element adds 1 plus its size.
        assert_eq!(size(json!({"m": {"M": {}}})), 4);
        assert_eq!(
            size(json!({"l": {"L": [{"S": "ab"}, {"BOOL": false}]}})),
            1 + 3 + 2 + 2 + 1
        );
        assert_eq!(
            size(json!({"m": {"M": {"k": {"S": "v"}}}})),
            1 + 3 + 1 + 1 + 1
        );
        // Sets: the sum of their members.
        assert_eq!(size(json!({"s": {"SS": ["ab", "c"]}})), 4);
        assert_eq!(size(json!({"b": {"B": "AAEC"}})), 4);
    }
}
