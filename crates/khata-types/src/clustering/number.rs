//! Order-preserving encodings of arbitrary-precision numbers: `varint` and `decimal`.
//!
//! Both encodings are canonical: values that Cassandra's comparator finds equal (`IntegerType`
//! and `DecimalType` compare numbers, so `1.5` equals `1.50`, and `01` equals `00 01`) get one
//! encoding, and so are one clustering key, as in Cassandra; decoding gives the value's
//! canonical form (below).
//!
//! **varint** (a big-endian two's complement integer of any length, as CQL serializes it):
//! a class byte (`01` negative, `02` non-negative), the number of significant bytes `n` as an
//! ordered length (inverted for negatives, where more bytes means smaller), the `n` significant
//! bytes (which compare unsigned between numbers of equal sign and length), then a padding
//! count, always 0 (`00`): a varint decodes to its minimal bytes.
//!
//! **decimal** (a big-endian `int` scale, then the unscaled value as a varint; the value is
//! `unscaled * 10^-scale`): a class byte (`01` negative, `02` zero, `03` positive); for a
//! non-zero value the base-10 exponent `e` and significant digits `d1 d2 ...` such that
//! `|value| = 0.d1d2... * 10^e` with no trailing zero digit, as an ordered integer followed by the
//! digits packed two to a byte as nibbles `digit + 1` (a lone last digit is padded with a zero
//! nibble) and a `00` terminator, all inverted for negatives; then the scale and a padding
//! count (0), which are functions of the value: the canonical scale ([`canonical_scale`]) is
//! the number of fraction digits without trailing zeros (`1.50` is `1.5`, `0.00` is `0`), or 0
//! for an integer (`1.23E+3` is `1230`, `1E+2` is `100`), except that an integer of more than
//! [`MAX_PLAIN_INTEGER_DIGITS`] digits keeps the negative scale that makes its unscaled value
//! its significant digits (`1E+10000`), so that no canonical form outgrows
//! [`MAX_DECIMAL_UNSCALED_SIZE_BYTES`]. Computing the digits is a base conversion; the size
//! limit on decimals in keys keeps it cheap.
//!
//! **Keys written before the encodings were canonical.** The scale and the padding count were
//! once the input's own (a tie-break that kept `1.0` and `1.00` apart, ordered by scale, and
//! `01` and `00 01` by padding). The layout is unchanged, so such keys still decode, to the
//! form they were written in, and still sort among the others by value (next to the canonical
//! key of the same value, which is now the one every write and lookup makes); no format version
//! changed. A key never holds two encodings of one value unless it was written before.
//!
//! Ordered integers (used for lengths, exponents and scales) are prefix-free and `memcmp`
//! ordered: an unsigned one is its byte count then its minimal big-endian bytes; a signed one
//! is `0x80 + n` then the `n` minimal bytes for `v >= 0`, or `0x7F - n` then the low `n` bytes of
//! `v` (which has `n` significant bytes in `!v`) for `v < 0`.

use super::{Fault, KeyReader, MAX_CLUSTERING_VALUE_SIZE_BYTES, MAX_DECIMAL_UNSCALED_SIZE_BYTES};

/// Decimal digits a decimal in a key may expand to (the digits of the largest allowed unscaled
/// value, about 2.41 per byte, with room to spare). Bounds the work of decoding a corrupt key.
const MAX_DECIMAL_DIGITS: usize = MAX_DECIMAL_UNSCALED_SIZE_BYTES * 5 / 2 + 1;

/// The most digits of an integer-valued decimal whose canonical form has scale 0: every such
/// integer fits [`MAX_DECIMAL_UNSCALED_SIZE_BYTES`] (`10^9863 < 2^32767`), so the canonical
/// form of any decimal a key accepts is accepted too.
pub(super) const MAX_PLAIN_INTEGER_DIGITS: i64 = 9863;

/// The canonical scale of a non-zero decimal with `digits` significant digits (no trailing
/// zero) and `|value| = 0.d1d2... * 10^exponent`: the number of fraction digits, or 0 for an
/// integer of at most [`MAX_PLAIN_INTEGER_DIGITS`] digits; a larger integer keeps the negative
/// scale that leaves no trailing zero in its unscaled value (as far as an `int` scale reaches).
/// Apart from an integer brought to scale 0, it is at most the scale of any form of the value,
/// so the canonical unscaled value is never longer than a given one.
fn canonical_scale(digits: usize, exponent: i64) -> i64 {
    let fraction = digits as i64 - exponent;
    if fraction > 0 {
        fraction
    } else if exponent <= MAX_PLAIN_INTEGER_DIGITS {
        0
    } else {
        fraction.max(i64::from(i32::MIN))
    }
}

fn significant_bytes(v: u64) -> usize {
    (64 - v.leading_zeros() as usize).div_ceil(8)
}

pub(super) fn put_ordered_u64(out: &mut Vec<u8>, v: u64) {
    let n = significant_bytes(v);
    out.push(n as u8);
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

pub(super) fn get_ordered_u64(r: &mut KeyReader<'_>) -> Result<u64, Fault> {
    let n = usize::from(r.u8()?);
    if n > 8 {
        return Err(r.malformed("ordered integer longer than 8 bytes"));
    }
    let mut v = 0u64;
    for i in 0..n {
        let b = r.u8()?;
        if i == 0 && b == 0 {
            return Err(r.malformed("ordered integer with a leading zero byte"));
        }
        v = (v << 8) | u64::from(b);
    }
    Ok(v)
}

pub(super) fn put_ordered_i64(out: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        let n = significant_bytes(v as u64);
        out.push(0x80 + n as u8);
        out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
    } else {
        let n = significant_bytes(!v as u64);
        out.push(0x7F - n as u8);
        out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
    }
}

pub(super) fn get_ordered_i64(r: &mut KeyReader<'_>) -> Result<i64, Fault> {
    let header = r.u8()?;
    let (negative, n) = if header >= 0x80 {
        (false, usize::from(header - 0x80))
    } else {
        (true, usize::from(0x7F - header))
    };
    if n > 8 {
        return Err(r.malformed("ordered integer longer than 8 bytes"));
    }
    let mut v: u64 = if negative { u64::MAX } else { 0 };
    for i in 0..n {
        let b = r.u8()?;
        if i == 0 && b == if negative { 0xFF } else { 0x00 } {
            return Err(r.malformed("ordered integer with a redundant leading byte"));
        }
        v = (v << 8) | u64::from(b);
    }
    let v = v as i64;
    if (v < 0) != negative {
        return Err(r.malformed("ordered integer overflows"));
    }
    Ok(v)
}

/// Where the significant bytes of a two's complement integer start: leading `00` before a
/// byte below `80`, or `FF` before a byte from `80`, only repeat the sign.
fn significant_start(v: &[u8]) -> usize {
    let mut start = 0;
    while start + 1 < v.len() {
        let (b, next) = (v[start], v[start + 1]);
        if (b == 0x00 && next < 0x80) || (b == 0xFF && next >= 0x80) {
            start += 1;
        } else {
            break;
        }
    }
    start
}

fn invert_from(out: &mut [u8], start: usize) {
    for b in &mut out[start..] {
        *b = !*b;
    }
}

/// Encode a non-empty varint.
pub(super) fn encode_varint(v: &[u8], out: &mut Vec<u8>) {
    let start = significant_start(v);
    let significant = &v[start..];
    let negative = significant[0] >= 0x80;
    out.push(if negative { 0x01 } else { 0x02 });
    let len_at = out.len();
    put_ordered_u64(out, significant.len() as u64);
    if negative {
        invert_from(out, len_at);
    }
    out.extend_from_slice(significant);
    // No padding: the redundant sign bytes of the input are not kept (module docs).
    put_ordered_u64(out, 0);
}

pub(super) fn decode_varint(r: &mut KeyReader<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    let negative = match r.u8()? {
        0x01 => true,
        0x02 => false,
        _ => return Err(r.malformed("bad varint class")),
    };
    if negative {
        r.mask ^= 0xFF;
    }
    let len = get_ordered_u64(r);
    if negative {
        r.mask ^= 0xFF;
    }
    let len = usize::try_from(len?).map_err(|_| r.malformed("varint too long"))?;
    if len == 0 {
        return Err(r.malformed("varint without bytes"));
    }
    let mut significant = Vec::new();
    r.take_into(len, &mut significant)?;
    if significant_start(&significant) != 0 || (significant[0] >= 0x80) != negative {
        return Err(r.malformed("varint bytes not significant or of the wrong sign"));
    }
    let pad = get_ordered_u64(r)?;
    let pad = usize::try_from(pad)
        .ok()
        .filter(|p| *p <= MAX_CLUSTERING_VALUE_SIZE_BYTES)
        .ok_or_else(|| r.malformed("varint padding too long"))?;
    out.extend(std::iter::repeat_n(if negative { 0xFF } else { 0x00 }, pad));
    out.extend_from_slice(&significant);
    Ok(())
}

const DECIMAL_NEGATIVE: u8 = 0x01;
const DECIMAL_ZERO: u8 = 0x02;
const DECIMAL_POSITIVE: u8 = 0x03;

/// Encode a serialized decimal (`int` scale, then a non-empty varint).
pub(super) fn encode_decimal(v: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
    let (scale, unscaled) = v
        .split_first_chunk::<4>()
        .ok_or_else(|| Fault::invalid("shorter than its 4-byte scale"))?;
    let scale = i32::from_be_bytes(*scale);
    if unscaled.is_empty() {
        return Err(Fault::invalid("no unscaled value after the scale"));
    }
    let significant = &unscaled[significant_start(unscaled)..];
    let negative = significant[0] >= 0x80;
    let canonical = if significant == [0x00] {
        out.push(DECIMAL_ZERO);
        0
    } else {
        let magnitude = if negative {
            negate(significant)
        } else {
            significant.to_vec()
        };
        let mut digits = to_decimal_digits(&magnitude);
        let exponent = digits.len() as i64 - i64::from(scale);
        while digits.last() == Some(&0) {
            digits.pop();
        }
        out.push(if negative {
            DECIMAL_NEGATIVE
        } else {
            DECIMAL_POSITIVE
        });
        let body_at = out.len();
        put_ordered_i64(out, exponent);
        for pair in digits.chunks(2) {
            let low = pair.get(1).map_or(0, |d| d + 1);
            out.push(((pair[0] + 1) << 4) | low);
        }
        out.push(0x00);
        if negative {
            invert_from(out, body_at);
        }
        canonical_scale(digits.len(), exponent)
    };
    // The scale and padding of the canonical form, not the input's (module docs).
    put_ordered_i64(out, canonical);
    put_ordered_u64(out, 0);
    Ok(())
}

pub(super) fn decode_decimal(r: &mut KeyReader<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
    let class = r.u8()?;
    let (negative, exponent_digits) = match class {
        DECIMAL_ZERO => (false, None),
        DECIMAL_NEGATIVE | DECIMAL_POSITIVE => {
            let negative = class == DECIMAL_NEGATIVE;
            if negative {
                r.mask ^= 0xFF;
            }
            let body = get_exponent_and_digits(r);
            if negative {
                r.mask ^= 0xFF;
            }
            (negative, Some(body?))
        }
        _ => return Err(r.malformed("bad decimal class")),
    };
    let scale = i32::try_from(get_ordered_i64(r)?).map_err(|_| r.malformed("scale overflows"))?;
    let pad = usize::try_from(get_ordered_u64(r)?)
        .ok()
        .filter(|p| *p <= MAX_DECIMAL_UNSCALED_SIZE_BYTES)
        .ok_or_else(|| r.malformed("decimal padding too long"))?;

    let significant = match exponent_digits {
        None => vec![0x00],
        Some((exponent, mut digits)) => {
            // |value| = 0.digits * 10^exponent = unscaled * 10^-scale, so the unscaled value is
            // the digits followed by `exponent + scale - len(digits)` zeros.
            let zeros = exponent
                .checked_add(i64::from(scale))
                .and_then(|e| e.checked_sub(digits.len() as i64))
                .and_then(|z| usize::try_from(z).ok())
                .filter(|z| digits.len() + z <= MAX_DECIMAL_DIGITS)
                .ok_or_else(|| r.malformed("decimal exponent inconsistent with its scale"))?;
            digits.extend(std::iter::repeat_n(0, zeros));
            let magnitude = from_decimal_digits(&digits);
            let mut twos = Vec::with_capacity(magnitude.len() + 1);
            twos.push(0x00);
            twos.extend_from_slice(&magnitude);
            if negative {
                twos = negate(&twos);
            }
            let start = significant_start(&twos);
            twos.split_off(start)
        }
    };
    if significant.len() + pad > MAX_DECIMAL_UNSCALED_SIZE_BYTES {
        return Err(r.malformed("decimal too large"));
    }
    out.extend_from_slice(&scale.to_be_bytes());
    out.extend(std::iter::repeat_n(if negative { 0xFF } else { 0x00 }, pad));
    out.extend_from_slice(&significant);
    Ok(())
}

fn get_exponent_and_digits(r: &mut KeyReader<'_>) -> Result<(i64, Vec<u8>), Fault> {
    let exponent = get_ordered_i64(r)?;
    let mut digits = Vec::new();
    loop {
        let b = r.u8()?;
        if b == 0x00 {
            break;
        }
        let (high, low) = (b >> 4, b & 0x0F);
        if !(1..=10).contains(&high) || low > 10 || digits.len() >= MAX_DECIMAL_DIGITS {
            return Err(r.malformed("bad decimal digits"));
        }
        digits.push(high - 1);
        if low == 0 {
            // A lone last digit: the terminator must follow.
            if r.u8()? != 0x00 {
                return Err(r.malformed("decimal digits after padding"));
            }
            break;
        }
        digits.push(low - 1);
    }
    if digits.last().is_none_or(|d| *d == 0) {
        return Err(r.malformed("decimal digits empty or with a trailing zero"));
    }
    // 0.05e3 is 0.5e2: a leading zero digit would give a value a second encoding.
    if digits[0] == 0 {
        return Err(r.malformed("decimal digits with a leading zero"));
    }
    Ok((exponent, digits))
}

/// Two's complement negation of a big-endian byte string (same width).
fn negate(v: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = v.iter().map(|b| !b).collect();
    for b in out.iter_mut().rev() {
        let (sum, carry) = b.overflowing_add(1);
        *b = sum;
        if !carry {
            break;
        }
    }
    out
}

const CHUNK: u64 = 1_000_000_000;
const CHUNK_DIGITS: usize = 9;

/// The decimal digits (most significant first, no leading zeros) of a non-zero unsigned
/// big-endian magnitude. Schoolbook division by 10^9, quadratic in the length.
fn to_decimal_digits(magnitude: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, most significant first.
    let padding = (4 - magnitude.len() % 4) % 4;
    let padded: Vec<u8> = std::iter::repeat_n(0u8, padding)
        .chain(magnitude.iter().copied())
        .collect();
    let mut limbs: Vec<u32> = padded
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut chunks = Vec::new(); // base 10^9, least significant first
    loop {
        let first = limbs.iter().position(|l| *l != 0).unwrap_or(limbs.len());
        limbs.drain(..first);
        if limbs.is_empty() {
            break;
        }
        let mut rem = 0u64;
        for limb in &mut limbs {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / CHUNK) as u32;
            rem = cur % CHUNK;
        }
        chunks.push(rem as u32);
    }
    let mut digits = Vec::with_capacity(chunks.len() * CHUNK_DIGITS);
    for (i, chunk) in chunks.iter().rev().enumerate() {
        let text = if i == 0 {
            chunk.to_string()
        } else {
            format!("{chunk:09}")
        };
        digits.extend(text.bytes().map(|b| b - b'0'));
    }
    digits
}

/// The minimal unsigned big-endian magnitude (at least one byte) of a decimal digit string.
fn from_decimal_digits(digits: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, least significant first.
    let mut limbs: Vec<u32> = Vec::new();
    let first = digits.len() % CHUNK_DIGITS;
    let groups = (first > 0)
        .then(|| &digits[..first])
        .into_iter()
        .chain(digits[first..].chunks(CHUNK_DIGITS));
    for group in groups {
        let multiplier = 10u64.pow(group.len() as u32);
        let mut carry = group.iter().fold(0u64, |acc, d| acc * 10 + u64::from(*d));
        for limb in &mut limbs {
            let cur = u64::from(*limb) * multiplier + carry;
            *limb = cur as u32;
            carry = cur >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let bytes: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    match bytes.iter().position(|b| *b != 0) {
        Some(first_nonzero) => bytes[first_nonzero..].to_vec(),
        None => vec![0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_round_trip() {
        for n in [
            1u128,
            9,
            10,
            255,
            256,
            999_999_999,
            1_000_000_000,
            u64::MAX as u128,
            u128::MAX,
        ] {
            let bytes = n.to_be_bytes();
            let magnitude = &bytes[bytes.iter().position(|b| *b != 0).unwrap_or(15)..];
            let digits = to_decimal_digits(magnitude);
            let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
            assert_eq!(text, n.to_string());
            assert_eq!(from_decimal_digits(&digits), magnitude);
        }
    }

    /// 5 is 0.5e1: class, exponent 1, the digit pair (5, none), end, scale 0, no padding.
    /// The same value as 0.05e2 (digits 0 and 5) must not decode: it would be a second
    /// encoding of one key (found by `only_canonical_encodings_decode`).
    #[test]
    fn a_decimal_with_a_leading_zero_digit_does_not_decode() {
        let encoded = |exponent: i64, digit_bytes: &[u8]| {
            let mut out = vec![DECIMAL_POSITIVE];
            put_ordered_i64(&mut out, exponent);
            out.extend_from_slice(digit_bytes);
            out.push(0x00);
            put_ordered_i64(&mut out, 0);
            put_ordered_u64(&mut out, 0);
            out
        };
        let mut canonical = Vec::new();
        encode_decimal(&[0, 0, 0, 0, 5], &mut canonical).unwrap();
        assert_eq!(canonical, encoded(1, &[0x60]));
        let mut out = Vec::new();
        decode_decimal(&mut KeyReader::new(&canonical), &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0, 5]);
        let leading_zero = encoded(2, &[0x16]);
        let decoded = decode_decimal(&mut KeyReader::new(&leading_zero), &mut Vec::new());
        assert!(decoded.is_err(), "{decoded:?}");
    }

    #[test]
    fn ordered_integers_round_trip_in_order() {
        let values = [i64::MIN, -257, -256, -255, -2, -1, 0, 1, 255, 256, i64::MAX];
        let mut previous: Option<Vec<u8>> = None;
        for v in values {
            let mut out = Vec::new();
            put_ordered_i64(&mut out, v);
            let mut r = KeyReader::new(&out);
            assert_eq!(get_ordered_i64(&mut r).unwrap(), v);
            assert!(r.is_empty());
            if let Some(p) = previous {
                assert!(p < out, "{v}");
            }
            previous = Some(out);
        }
    }
}
