//! Binary encodings of attribute values.
//!
//! **One value in one engine cell** ([`encode_value`], [`decode_value`]), little-endian where
//! integers are fixed-size, lengths and counts as LEB128 varints:
//!
//! ```text
//! cell   = version:u8 (= 1) value
//! value  = tag:u8 body
//!   1 S     len:varint utf8-bytes          7 M   count:varint (len:varint name value)*
//!   2 N     number                         8 L   count:varint value*
//!   3 B     len:varint bytes               9 SS  count:varint (len:varint utf8)*
//!   4 BOOL false   5 BOOL true   6 NULL    10 NS count:varint number*
//!                                          11 BS count:varint (len:varint bytes)*
//! number = flags:u8 (bit 0: negative) exponent:i16 (of the last digit) count:u8 (0..=38)
//!          digits packed two per byte, high nibble first (a lone last digit in the high nibble)
//! ```
//!
//! The decoder checks everything a client could not have sent (bad UTF-8, numbers that are
//! not canonical or out of range, empty sets, duplicates, nesting beyond 32, trailing bytes)
//! and never allocates more than the input could hold.
//!
//! **Key values in sort order** ([`encode_key`], [`decode_key`]): byte strings whose unsigned
//! lexicographic order is DynamoDB's order of the key values, self-delimiting so they can be
//! followed by other components:
//!
//! ```text
//! S, B   bytes with 0x00 written as 0x00 0xFF, then 0x00 0x00
//! N      zero: 0x02
//!        positive: 0x03, (leading exponent + 130):u8, each digit as d+1, 0x00
//!        negative: 0x01, then the positive form's bytes after its first, each inverted
//! ```
//!
//! A positive number's digits start at its leading digit, so equal leading exponents compare
//! digit by digit, and the 0x00 terminator sorts a shorter digit string (a smaller mantissa)
//! first; inverting every byte reverses that order for negatives.

use std::fmt;

use super::json::NESTING_LIMIT;
use super::number::from_canonical_parts;
use super::{AttributeValue, Map, Number};

/// The first byte of every encoded cell value.
pub const VALUE_FORMAT_VERSION: u8 = 1;

const TAG_S: u8 = 1;
const TAG_N: u8 = 2;
const TAG_B: u8 = 3;
const TAG_FALSE: u8 = 4;
const TAG_TRUE: u8 = 5;
const TAG_NULL: u8 = 6;
const TAG_M: u8 = 7;
const TAG_L: u8 = 8;
const TAG_SS: u8 = 9;
const TAG_NS: u8 = 10;
const TAG_BS: u8 = 11;

/// Bytes that do not decode as a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad encoded attribute value: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Encodes one value for one engine cell.
pub fn encode_value(value: &AttributeValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.push(VALUE_FORMAT_VERSION);
    put_value(&mut out, value);
    out
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_number(out: &mut Vec<u8>, n: &Number) {
    out.push(u8::from(n.is_negative()));
    let digits = n.digits();
    let exponent = if n.is_zero() {
        0
    } else {
        n.leading_exponent() - digits.len() as i32 + 1
    };
    // Valid exponents lie within -167..=125: an i16 holds them.
    out.extend_from_slice(&(exponent as i16).to_le_bytes());
    out.push(digits.len() as u8);
    for pair in digits.chunks(2) {
        out.push(pair[0] << 4 | pair.get(1).copied().unwrap_or(0));
    }
}

fn put_value(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::S(s) => {
            out.push(TAG_S);
            put_bytes(out, s.as_bytes());
        }
        AttributeValue::N(n) => {
            out.push(TAG_N);
            put_number(out, n);
        }
        AttributeValue::B(b) => {
            out.push(TAG_B);
            put_bytes(out, b);
        }
        AttributeValue::Bool(b) => out.push(if *b { TAG_TRUE } else { TAG_FALSE }),
        AttributeValue::Null => out.push(TAG_NULL),
        AttributeValue::M(m) => {
            out.push(TAG_M);
            put_varint(out, m.len() as u64);
            for (name, v) in m {
                put_bytes(out, name.as_bytes());
                put_value(out, v);
            }
        }
        AttributeValue::L(l) => {
            out.push(TAG_L);
            put_varint(out, l.len() as u64);
            for v in l {
                put_value(out, v);
            }
        }
        AttributeValue::Ss(s) => {
            out.push(TAG_SS);
            put_varint(out, s.len() as u64);
            for x in s {
                put_bytes(out, x.as_bytes());
            }
        }
        AttributeValue::Ns(s) => {
            out.push(TAG_NS);
            put_varint(out, s.len() as u64);
            for x in s {
                put_number(out, x);
            }
        }
        AttributeValue::Bs(s) => {
            out.push(TAG_BS);
            put_varint(out, s.len() as u64);
            for x in s {
                put_bytes(out, x);
            }
        }
    }
}

/// Decodes a cell value written by [`encode_value`]; refuses anything else.
pub fn decode_value(bytes: &[u8]) -> Result<AttributeValue, DecodeError> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.u8()? != VALUE_FORMAT_VERSION {
        return Err(DecodeError("unknown format version"));
    }
    let value = reader.value(1)?;
    if reader.at != bytes.len() {
        return Err(DecodeError("trailing bytes"));
    }
    Ok(value)
}

/// The string of a cell value written by [`encode_value`] for an S, borrowed from `bytes`:
/// `None` when `bytes` hold another type or do not decode (then [`decode_value`] says what
/// they are). Reading an item's strings this way skips a copy per attribute.
pub fn decode_str(bytes: &[u8]) -> Option<&str> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.u8().ok()? != VALUE_FORMAT_VERSION || reader.u8().ok()? != TAG_S {
        return None;
    }
    let n = reader.varint().ok()?;
    if n != reader.remaining() as u64 {
        return None;
    }
    std::str::from_utf8(reader.take(n as usize).ok()?).ok()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = *self.bytes.get(self.at).ok_or(DecodeError("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError("truncated"));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError("varint too long"))
    }

    /// A count of items, each at least one byte: never more than the bytes left.
    fn count(&mut self) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(DecodeError("count larger than the input"));
        }
        Ok(n as usize)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, DecodeError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(DecodeError("truncated"));
        }
        Ok(self.take(n as usize)?.to_vec())
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        String::from_utf8(self.bytes()?).map_err(|_| DecodeError("invalid UTF-8"))
    }

    fn number(&mut self) -> Result<Number, DecodeError> {
        let flags = self.u8()?;
        if flags > 1 {
            return Err(DecodeError("bad number flags"));
        }
        let exponent = i16::from_le_bytes([self.u8()?, self.u8()?]);
        let count = usize::from(self.u8()?);
        let packed = self.take(count.div_ceil(2))?;
        let mut digits = Vec::with_capacity(count);
        for b in packed {
            digits.push(b >> 4);
            digits.push(b & 0x0f);
        }
        if count % 2 == 1 && digits.pop() != Some(0) {
            return Err(DecodeError("bad number padding"));
        }
        from_canonical_parts(flags == 1, digits, i32::from(exponent))
            .ok_or(DecodeError("bad number"))
    }

    fn value(&mut self, depth: usize) -> Result<AttributeValue, DecodeError> {
        let tag = self.u8()?;
        if (tag == TAG_M || tag == TAG_L) && depth > NESTING_LIMIT {
            return Err(DecodeError("nested too deep"));
        }
        Ok(match tag {
            TAG_S => AttributeValue::S(self.string()?),
            TAG_N => AttributeValue::N(self.number()?),
            TAG_B => AttributeValue::B(self.bytes()?),
            TAG_FALSE => AttributeValue::Bool(false),
            TAG_TRUE => AttributeValue::Bool(true),
            TAG_NULL => AttributeValue::Null,
            TAG_M => {
                let n = self.count()?;
                let mut m = Map::new();
                for _ in 0..n {
                    let name = self.string()?;
                    let v = self.value(depth + 1)?;
                    if m.insert(name, v).is_some() {
                        return Err(DecodeError("duplicate map key"));
                    }
                }
                AttributeValue::M(m)
            }
            TAG_L => {
                let n = self.count()?;
                let mut l = Vec::with_capacity(n);
                for _ in 0..n {
                    l.push(self.value(depth + 1)?);
                }
                AttributeValue::L(l)
            }
            TAG_SS => AttributeValue::Ss(self.set(Reader::string)?),
            TAG_NS => AttributeValue::Ns(self.set(Reader::number)?),
            TAG_BS => AttributeValue::Bs(self.set(Reader::bytes)?),
            _ => return Err(DecodeError("unknown type tag")),
        })
    }

    fn set<T: Ord + Clone>(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let n = self.count()?;
        if n == 0 {
            return Err(DecodeError("empty set"));
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(read(self)?);
        }
        let mut sorted = items.clone();
        sorted.sort();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(DecodeError("duplicate set member"));
        }
        Ok(items)
    }
}

/// The type of a key attribute: DynamoDB keys are strings, numbers or binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// `S`
    S,
    /// `N`
    N,
    /// `B`
    B,
}

/// Encodes a key value so that byte order is DynamoDB's order; `None` for non-key types.
pub fn encode_key(value: &AttributeValue) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match value {
        AttributeValue::S(s) => put_escaped(&mut out, s.as_bytes()),
        AttributeValue::B(b) => put_escaped(&mut out, b),
        AttributeValue::N(n) => {
            if n.is_zero() {
                out.push(0x02);
            } else {
                let start = out.len();
                out.push(0x03);
                // -130..=125 maps onto 0..=255.
                out.push((n.leading_exponent() - super::MIN_EXPONENT) as u8);
                out.extend(n.digits().iter().map(|d| d + 1));
                out.push(0x00);
                if n.is_negative() {
                    out[start] = 0x01;
                    for b in &mut out[start + 1..] {
                        *b = !*b;
                    }
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

fn put_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Decodes a key value of type `key_type` from the front of `bytes`, returning it and the
/// number of bytes it took.
pub fn decode_key(key_type: KeyType, bytes: &[u8]) -> Result<(AttributeValue, usize), DecodeError> {
    match key_type {
        KeyType::S | KeyType::B => {
            let mut raw = Vec::new();
            let mut i = 0;
            loop {
                let b = *bytes.get(i).ok_or(DecodeError("truncated key"))?;
                if b == 0 {
                    match bytes.get(i + 1) {
                        Some(0) => break,
                        Some(0xff) => {
                            raw.push(0);
                            i += 2;
                        }
                        _ => return Err(DecodeError("bad key escape")),
                    }
                } else {
                    raw.push(b);
                    i += 1;
                }
            }
            let value = if key_type == KeyType::S {
                AttributeValue::S(String::from_utf8(raw).map_err(|_| DecodeError("invalid UTF-8"))?)
            } else {
                AttributeValue::B(raw)
            };
            Ok((value, i + 2))
        }
        KeyType::N => {
            let first = *bytes.first().ok_or(DecodeError("truncated key"))?;
            if first == 0x02 {
                return Ok((AttributeValue::N(Number::zero()), 1));
            }
            let negative = match first {
                0x01 => true,
                0x03 => false,
                _ => return Err(DecodeError("bad number key")),
            };
            let flip = |b: u8| if negative { !b } else { b };
            let exponent_byte = flip(*bytes.get(1).ok_or(DecodeError("truncated key"))?);
            let mut digits = Vec::new();
            let mut i = 2;
            loop {
                let b = flip(*bytes.get(i).ok_or(DecodeError("truncated key"))?);
                i += 1;
                if b == 0 {
                    break;
                }
                if !(1..=10).contains(&b) || digits.len() >= super::MAX_DIGITS {
                    return Err(DecodeError("bad number key"));
                }
                digits.push(b - 1);
            }
            let leading = i32::from(exponent_byte) + super::MIN_EXPONENT;
            let exponent = leading - digits.len() as i32 + 1;
            let n = from_canonical_parts(negative, digits, exponent)
                .ok_or(DecodeError("bad number key"))?;
            if n.is_zero() {
                return Err(DecodeError("bad number key"));
            }
            Ok((AttributeValue::N(n), i))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_read_in_place_and_nothing_else_is() {
        for s in ["", "x", "héllo \u{0} \"q\"", &"long ".repeat(100)] {
            let bytes = encode_value(&AttributeValue::S(s.to_string()));
            assert_eq!(decode_str(&bytes), Some(s));
        }
        let others = [
            AttributeValue::N(Number::zero()),
            AttributeValue::B(b"x".to_vec()),
            AttributeValue::Null,
            AttributeValue::Ss(vec!["a".into()]),
        ];
        for v in others {
            assert_eq!(decode_str(&encode_value(&v)), None, "{v:?}");
        }
        let good = encode_value(&AttributeValue::S("ab".into()));
        // Truncated, trailing bytes, another version, bad UTF-8.
        assert_eq!(decode_str(&good[..good.len() - 1]), None);
        assert_eq!(decode_str(&[&good[..], b"z"].concat()), None);
        assert_eq!(decode_str(&[&[9][..], &good[1..]].concat()), None);
        assert_eq!(
            decode_str(&[VALUE_FORMAT_VERSION, TAG_S, 2, 0xff, 0xfe]),
            None
        );
        assert!(decode_value(&[VALUE_FORMAT_VERSION, TAG_S, 2, 0xff, 0xfe]).is_err());
    }

    #[test]
    fn value_layout_is_stable() {
        // A fixture of format version 1: changing the layout must change the version.
        let v = AttributeValue::L(vec![
            AttributeValue::S("a".into()),
            AttributeValue::N(Number::parse("-12.5").unwrap()),
            AttributeValue::Bool(true),
        ]);
        let bytes = encode_value(&v);
        assert_eq!(
            bytes,
            [
                1, TAG_L, 3, TAG_S, 1, b'a', TAG_N, 1, 0xff, 0xff, 3, 0x12, 0x50, TAG_TRUE
            ]
        );
        assert_eq!(decode_value(&bytes).unwrap(), v);
    }

    #[test]
    fn refuses_bad_bytes() {
        assert!(decode_value(&[]).is_err());
        assert!(decode_value(&[2, TAG_NULL]).is_err());
        assert!(decode_value(&[1, TAG_NULL, 0]).is_err());
        assert!(decode_value(&[1, TAG_SS, 0]).is_err());
        assert!(decode_value(&[1, TAG_SS, 2, 1, b'a', 1, b'a']).is_err());
        assert!(decode_value(&[1, TAG_L, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        // Non-canonical number: a trailing zero digit.
        assert!(decode_value(&[1, TAG_N, 0, 0, 0, 2, 0x10]).is_err());
    }

    #[test]
    fn number_keys_sort() {
        let keys: Vec<Vec<u8>> = ["-1e10", "-1.5", "-1", "0", "0.001", "1", "1.5", "2", "1e10"]
            .iter()
            .map(|s| encode_key(&AttributeValue::N(Number::parse(s).unwrap())).unwrap())
            .collect();
        for w in keys.windows(2) {
            assert!(w[0] < w[1]);
        }
    }
}
