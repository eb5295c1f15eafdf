//! DynamoDB's number: an exact decimal of at most 38 significant digits whose magnitude lies
//! within 1E-130 ..= 9.9999999999999999999999999999999999999E+125 (or zero).
//!
//! A [`Number`] is kept canonical: its digits carry no leading or trailing zeros and zero has
//! no sign, so equal numbers are equal structurally (`{"NS": ["1", "1.0"]}` is a duplicate)
//! and [`Ord`] is numeric order. Text is read in the forms DynamoDB accepts (`+3`, `.123`,
//! `0001.23`, `-17.4E37`, `0e1000`) and written in plain notation without exponent, as
//! DynamoDB answers (`1E+2` -> `100`, `1.50` -> `1.5`, `-0` -> `0`).
//!
//! Why not `bigdecimal`: the rules that matter here (the digit and exponent limits, canonical
//! form, DynamoDB's text forms, the order-preserving key encoding) sit on the digits
//! themselves; a digit vector plus an exponent states them directly, and `num-bigint` does the
//! little arithmetic (`+`, `-`) needed.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::{BigInt, Sign};

use super::ValidationError;

/// The most significant digits a number may have.
pub const MAX_DIGITS: usize = 38;
/// The largest decimal exponent of a number's leading digit.
pub const MAX_EXPONENT: i32 = 125;
/// The smallest decimal exponent of a number's leading digit.
pub const MIN_EXPONENT: i32 = -130;
/// Longest number text accepted before parsing (far above any valid number's; bounds work).
const MAX_TEXT_BYTES: usize = 4096;

pub(crate) const OVERFLOW: &str =
    "Number overflow. Attempting to store a number with magnitude larger than supported range";
pub(crate) const UNDERFLOW: &str =
    "Number underflow. Attempting to store a number with magnitude smaller than supported range";
pub(crate) const TOO_MANY_DIGITS: &str =
    "Attempting to store more than 38 significant digits in a Number";

/// An exact DynamoDB number in canonical form.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number {
    negative: bool,
    /// Significant digits (0..=9), no leading or trailing zero; empty for zero.
    digits: Vec<u8>,
    /// The decimal exponent of the last digit: value = digits * 10^exponent.
    exponent: i32,
}

impl Number {
    /// Zero.
    pub fn zero() -> Number {
        Number {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        }
    }

    /// Parses DynamoDB's text form of a number, checking precision and range.
    pub fn parse(text: &str) -> Result<Number, ValidationError> {
        let invalid = || {
            ValidationError(format!(
                "The parameter cannot be converted to a numeric value: {text}"
            ))
        };
        if text.is_empty() {
            return Err(ValidationError(
                "The parameter cannot be converted to a numeric value".into(),
            ));
        }
        if text.len() > MAX_TEXT_BYTES {
            return Err(invalid());
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if bytes[0] == b'+' || bytes[0] == b'-' {
            negative = bytes[0] == b'-';
            i = 1;
        }
        let mut digits = Vec::new();
        let mut fraction_digits: i64 = 0;
        let mut seen_digit = false;
        let mut seen_point = false;
        while i < bytes.len() {
            match bytes[i] {
                b @ b'0'..=b'9' => {
                    seen_digit = true;
                    digits.push(b - b'0');
                    if seen_point {
                        fraction_digits += 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if !seen_digit {
            return Err(invalid());
        }
        let mut exponent: i64 = 0;
        if i < bytes.len() {
            if bytes[i] != b'e' && bytes[i] != b'E' {
                return Err(invalid());
            }
            i += 1;
            let mut exp_negative = false;
            if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
                exp_negative = bytes[i] == b'-';
                i += 1;
            }
            if i == bytes.len() {
                return Err(invalid());
            }
            while i < bytes.len() {
                let b = bytes[i];
                if !b.is_ascii_digit() {
                    return Err(invalid());
                }
                // Saturate: anything this large is out of range anyway.
                exponent = (exponent * 10 + i64::from(b - b'0')).min(1_000_000_000);
                i += 1;
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        let exponent = exponent - fraction_digits;
        Number::from_parts(negative, digits, exponent)
    }

    /// Builds a canonical number from digits (0..=9) times 10^exponent, checking the limits.
    fn from_parts(
        negative: bool,
        mut digits: Vec<u8>,
        exponent: i64,
    ) -> Result<Number, ValidationError> {
        let leading = digits.iter().take_while(|d| **d == 0).count();
        digits.drain(..leading);
        if digits.is_empty() {
            return Ok(Number::zero());
        }
        let trailing = digits.iter().rev().take_while(|d| **d == 0).count();
        digits.truncate(digits.len() - trailing);
        let exponent = exponent + trailing as i64;
        let top = exponent + digits.len() as i64 - 1;
        if top > i64::from(MAX_EXPONENT) {
            return Err(ValidationError(OVERFLOW.into()));
        }
        if top < i64::from(MIN_EXPONENT) {
            return Err(ValidationError(UNDERFLOW.into()));
        }
        if digits.len() > MAX_DIGITS {
            return Err(ValidationError(TOO_MANY_DIGITS.into()));
        }
        // The range checks above bound `exponent` well within i32.
        Ok(Number {
            negative,
            digits,
            exponent: exponent as i32,
        })
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// True for numbers below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The significant digits (0..=9), without leading or trailing zeros; empty for zero.
    pub fn digits(&self) -> &[u8] {
        &self.digits
    }

    /// The decimal exponent of the leading digit (0 for zero): `123` -> 2, `0.05` -> -2.
    pub fn leading_exponent(&self) -> i32 {
        if self.is_zero() {
            0
        } else {
            self.exponent + self.digits.len() as i32 - 1
        }
    }

    fn to_bigint(&self) -> BigInt {
        let sign = if self.is_zero() {
            Sign::NoSign
        } else if self.negative {
            Sign::Minus
        } else {
            Sign::Plus
        };
        BigInt::from_radix_be(sign, &self.digits, 10).unwrap_or_default()
    }

    fn from_bigint(value: &BigInt, exponent: i64) -> Result<Number, ValidationError> {
        let (sign, digits) = value.to_radix_be(10);
        // A result DynamoDB cannot hold exactly is refused with the overflow message, as
        // DynamoDB does (e.g. 1E50 + 1).
        let mut number =
            Number::from_parts(sign == Sign::Minus, digits, exponent).map_err(|e| {
                if e.0 == TOO_MANY_DIGITS {
                    ValidationError(OVERFLOW.into())
                } else {
                    e
                }
            })?;
        if number.is_zero() {
            number.negative = false;
        }
        Ok(number)
    }

    /// Exact sum, refused when it leaves DynamoDB's range or precision.
    pub fn checked_add(&self, other: &Number) -> Result<Number, ValidationError> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        let low = self.exponent.min(other.exponent);
        let scale = |n: &Number| {
            // Exponents of valid numbers differ by at most about 300: small powers.
            n.to_bigint() * BigInt::from(10u8).pow((n.exponent - low) as u32)
        };
        Number::from_bigint(&(scale(self) + scale(other)), i64::from(low))
    }

    /// Exact difference, refused when it leaves DynamoDB's range or precision.
    pub fn checked_sub(&self, other: &Number) -> Result<Number, ValidationError> {
        self.checked_add(&other.negated())
    }

    /// The number with its sign flipped (zero stays zero).
    pub fn negated(&self) -> Number {
        let mut n = self.clone();
        n.negative = !n.is_zero() && !n.negative;
        n
    }

    /// DynamoDB's stored size of this number in bytes: one byte per two significant digits,
    /// plus one (the developer guide's "approximately" rule), plus one when negative.
    pub fn size_bytes(&self) -> usize {
        let digits = self.digits.len().max(1);
        digits.div_ceil(2) + 1 + usize::from(self.negative)
    }

    /// Compares magnitudes of two non-zero numbers.
    fn cmp_magnitude(&self, other: &Number) -> Ordering {
        self.leading_exponent()
            .cmp(&other.leading_exponent())
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        let class = |n: &Number| -> i8 {
            if n.is_zero() {
                0
            } else if n.negative {
                -1
            } else {
                1
            }
        };
        match class(self).cmp(&class(other)) {
            Ordering::Equal => match class(self) {
                0 => Ordering::Equal,
                1 => self.cmp_magnitude(other),
                _ => other.cmp_magnitude(self),
            },
            unequal => unequal,
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Number {
    /// Plain notation, as DynamoDB writes numbers back: `100`, `0.001`, `-1.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut out = String::with_capacity(self.digits.len() + 8);
        if self.negative {
            out.push('-');
        }
        let digit = |d: &u8| char::from(b'0' + d);
        let point = self.digits.len() as i64 + i64::from(self.exponent);
        if self.exponent >= 0 {
            out.extend(self.digits.iter().map(digit));
            out.extend(std::iter::repeat_n('0', self.exponent as usize));
        } else if point > 0 {
            let (int, frac) = self.digits.split_at(point as usize);
            out.extend(int.iter().map(digit));
            out.push('.');
            out.extend(frac.iter().map(digit));
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.extend(self.digits.iter().map(digit));
        }
        f.write_str(&out)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

impl std::str::FromStr for Number {
    type Err = ValidationError;
    fn from_str(text: &str) -> Result<Number, ValidationError> {
        Number::parse(text)
    }
}

impl From<i64> for Number {
    fn from(value: i64) -> Number {
        // An i64 has at most 19 digits: always within range.
        Number::parse(&value.to_string()).unwrap_or_else(|_| Number::zero())
    }
}

/// Builds a number from parts checked elsewhere (the binary decoders); `None` if not canonical
/// or out of range.
pub(crate) fn from_canonical_parts(
    negative: bool,
    digits: Vec<u8>,
    exponent: i32,
) -> Option<Number> {
    if digits.iter().any(|d| *d > 9) {
        return None;
    }
    let n = Number::from_parts(negative, digits.clone(), i64::from(exponent)).ok()?;
    (n.digits == digits && (n.is_zero() || n.exponent == exponent) && (n.negative == negative))
        .then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn normalizes_on_output() {
        for (input, out) in [
            ("1.50", "1.5"),
            ("0100", "100"),
            ("-0", "0"),
            ("+3", "3"),
            (".123", "0.123"),
            ("0001.23", "1.23"),
            ("1e+5", "100000"),
            ("1E2", "100"),
            ("-17.4E37", "-174000000000000000000000000000000000000"),
            ("0e1000", "0"),
            ("5.", "5"),
            ("1e-3", "0.001"),
            ("12.34e-1", "1.234"),
        ] {
            assert_eq!(n(input).to_string(), out, "{input}");
        }
    }

    #[test]
    fn refuses_bad_text() {
        for bad in [
            "NaN",
            "Infinity",
            "-Infinity",
            "dog",
            " 1",
            "1 ",
            "",
            ".",
            "1e",
            "e5",
            "1..2",
            "--1",
            "0x10",
            "1e+",
        ] {
            let err = Number::parse(bad).unwrap_err();
            assert!(err.0.contains("numeric"), "{bad}: {err}");
        }
    }

    #[test]
    fn limits() {
        n("3.1415926535897932384626433832795028841");
        n("31415926535897932384626433832795028841e30");
        n("9.9999999999999999999999999999999999999E+125");
        n("1e-130");
        assert_eq!(
            Number::parse("3.14159265358979323846264338327950288419")
                .unwrap_err()
                .0,
            TOO_MANY_DIGITS
        );
        assert_eq!(Number::parse("1e126").unwrap_err().0, OVERFLOW);
        assert_eq!(Number::parse("11e125").unwrap_err().0, OVERFLOW);
        assert_eq!(Number::parse("1e-131").unwrap_err().0, UNDERFLOW);
        assert_eq!(Number::parse("0.9e-130").unwrap_err().0, UNDERFLOW);
        assert_eq!(
            Number::parse("1e99999999999999999999999").unwrap_err().0,
            OVERFLOW
        );
    }

    #[test]
    fn arithmetic() {
        assert_eq!(
            n("1")
                .checked_add(&n("10000000000000000000000"))
                .unwrap()
                .to_string(),
            "10000000000000000000001"
        );
        assert_eq!(
            n("10000000000000000000000")
                .checked_sub(&n("1"))
                .unwrap()
                .to_string(),
            "9999999999999999999999"
        );
        assert_eq!(n("0.1").checked_add(&n("0.2")).unwrap(), n("0.3"));
        assert_eq!(n("5").checked_sub(&n("5")).unwrap().to_string(), "0");
        assert_eq!(n("9e125").checked_add(&n("9e125")).unwrap_err().0, OVERFLOW);
        assert_eq!(n("1e50").checked_add(&n("1")).unwrap_err().0, OVERFLOW);
    }

    #[test]
    fn order() {
        let mut v: Vec<Number> = ["3", "-1", "0", "-1.5", "2.25", "1e10", "-1e10", "0.001"]
            .iter()
            .map(|s| n(s))
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            s,
            [
                "-10000000000",
                "-1.5",
                "-1",
                "0",
                "0.001",
                "2.25",
                "3",
                "10000000000"
            ]
        );
        assert_eq!(n("1"), n("1.0"));
    }
}
