//! Writing attribute values in DynamoDB's JSON form straight into a byte buffer.
//!
//! The answers that carry items (GetItem's `Item`, Query's and Scan's `Items`, `Attributes`)
//! are written here without building a `serde_json::Value` tree first: that tree cost an
//! allocation per name, per value and per map, and a second walk to print it. The bytes are
//! exactly those `serde_json` prints for [`AttributeValue::to_json`] (compact form, members in
//! name order, the same string escapes), which a test checks.

use std::io::Write as _;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::{AttributeValue, Map};

/// Append `s` as a JSON string, escaped as `serde_json` escapes it: `"` and `\`, the short
/// forms `\b \f \n \r \t`, other control characters as `\u00XX` (lower-case hex), everything
/// else (non-ASCII included) as it is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    /// Whether a byte is escaped: control characters, `"` and `\`.
    const ESCAPED: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 0x20 {
            table[b] = true;
            b += 1;
        }
        table[b'"' as usize] = true;
        table[b'\\' as usize] = true;
        table
    };
    out.reserve(s.len() + 2);
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut unicode = *b"\\u0000";
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time while none of them is escaped (most strings have none).
        while let Some(word) = bytes.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            if may_need_escape(u64::from_le_bytes(w)) {
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        i += 1;
        if !ESCAPED[b as usize] {
            continue;
        }
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1F => {
                unicode[4] = HEX[(b >> 4) as usize];
                unicode[5] = HEX[(b & 0xF) as usize];
                &unicode
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i - 1]);
        out.extend_from_slice(escape);
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any of the eight bytes of `w` may be one `write_str` escapes: a control
/// character, `"` or `\`. Never false when one is (the borrow of the subtractions only ever
/// adds positives above a byte that is one), so a word for which it is false is copied as is.
fn may_need_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = zero_byte(w ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(w ^ (ONES * u64::from(b'\\')));
    control | quote | backslash != 0
}

fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let at = out.len();
    out.resize(at + bytes.len().div_ceil(3) * 4, 0);
    let written = STANDARD
        .encode_slice(bytes, &mut out[at..])
        .unwrap_or_default();
    out.truncate(at + written);
    out.push(b'"');
}

fn write_number(out: &mut Vec<u8>, n: &super::Number) {
    out.push(b'"');
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{n}");
    out.push(b'"');
}

fn write_list<T>(out: &mut Vec<u8>, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, item);
    }
    out.push(b']');
}

/// Append one value (`{"S":"x"}`, ...).
pub fn write_value(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::S(s) => {
            out.extend_from_slice(b"{\"S\":");
            write_str(out, s);
        }
        AttributeValue::N(n) => {
            out.extend_from_slice(b"{\"N\":");
            write_number(out, n);
        }
        AttributeValue::B(b) => {
            out.extend_from_slice(b"{\"B\":");
            write_base64(out, b);
        }
        AttributeValue::Bool(b) => {
            out.extend_from_slice(if *b {
                b"{\"BOOL\":true"
            } else {
                b"{\"BOOL\":false"
            });
        }
        AttributeValue::Null => out.extend_from_slice(b"{\"NULL\":true"),
        AttributeValue::M(m) => {
            out.extend_from_slice(b"{\"M\":");
            write_map(out, m);
        }
        AttributeValue::L(l) => {
            out.extend_from_slice(b"{\"L\":");
            write_list(out, l, write_value);
        }
        AttributeValue::Ss(s) => {
            out.extend_from_slice(b"{\"SS\":");
            write_list(out, s, |out, s| write_str(out, s));
        }
        AttributeValue::Ns(s) => {
            out.extend_from_slice(b"{\"NS\":");
            write_list(out, s, write_number);
        }
        AttributeValue::Bs(s) => {
            out.extend_from_slice(b"{\"BS\":");
            write_list(out, s, |out, b| write_base64(out, b));
        }
    }
    out.push(b'}');
}

/// Append a map of named values (an item, or an `M`), members in name order.
pub fn write_map(out: &mut Vec<u8>, map: &Map) {
    out.push(b'{');
    for (i, (name, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, name);
        out.push(b':');
        write_value(out, value);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::value::Item;

    fn written(item: &Item) -> String {
        let mut out = Vec::new();
        write_map(&mut out, item);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_are_found_at_every_offset_of_long_strings() {
        for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', 'é'] {
            for len in [0usize, 7, 8, 9, 16, 17, 40] {
                for at in 0..=len {
                    let mut s: String = "abcdefgh".chars().cycle().take(len).collect();
                    s.insert(at, special);
                    let mut out = Vec::new();
                    write_str(&mut out, &s);
                    assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
                }
            }
        }
        for b in 0u8..=0x7f {
            let s = String::from(char::from(b)).repeat(9);
            let mut out = Vec::new();
            write_str(&mut out, &s);
            assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn every_type_prints_as_serde_json_prints_it() {
        let j = json!({"a": {"S": "x\"\\\n\u{1}\u{7f}é/"}, "b": {"N": "1.50"}, "c": {"B": "AAE="},
            "d": {"BOOL": true}, "d2": {"BOOL": false}, "e": {"NULL": true},
            "f": {"M": {"g": {"L": [{"N": "-0"}, {"SS": ["p", "q"]}]}, "empty": {"M": {}}}},
            "h": {"NS": ["1", "2E1"]}, "i": {"BS": ["AA==", "AQ==", "AQID"]}, "l": {"L": []},
            "\t": {"B": ""}});
        let item = Item::from_json(&j).unwrap();
        assert_eq!(written(&item), item.to_json().to_string());
    }

    proptest! {
        #[test]
        fn strings_escape_as_serde_json_escapes_them(s in "\\PC*|[\\x00-\\x7f]*") {
            let mut out = Vec::new();
            write_str(&mut out, &s);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::Value::String(s).to_string());
        }

        #[test]
        fn bytes_encode_as_serde_json_prints_base64(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut out = Vec::new();
            write_base64(&mut out, &b);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::Value::String(STANDARD.encode(&b)).to_string());
        }
    }
}
