//! `varint` and `decimal`: their literal text forms (Java's `BigInteger(String)` and
//! `BigDecimal(String)`, which Cassandra's `fromString` uses) and the numeric order of decimals.
//!
//! Decimal text is `[+-]digits[.digits][(e|E)[+-]digits]` (or `.digits`); the scale is the
//! number of fraction digits minus the exponent, and, as in Java, the exponent and the scale
//! must both fit an `int`. Converting between binary and decimal digits takes time quadratic in
//! the length, so literal numbers are limited to [`MAX_LITERAL_DIGITS`] digits.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};

use khata_types::schema::CqlType;

use super::Decimal;

/// The most digits a `varint` or `decimal` literal may have (larger ones are refused as
/// malformed): the conversion to binary is quadratic in the length.
pub const MAX_LITERAL_DIGITS: usize = 100_000;

/// The largest positive scale written with a decimal point (`0.000...1`); larger ones are
/// written with an exponent (`1E-100`) to keep the text short.
const MAX_PLAIN_SCALE: i32 = 64;

/// Java's `BigInteger(String)`: an optional sign, then decimal digits.
pub(super) fn parse_varint(text: &str) -> Option<BigInt> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty()
        || digits.len() > MAX_LITERAL_DIGITS
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let magnitude = BigUint::parse_bytes(digits.as_bytes(), 10)?;
    let sign = if text.starts_with('-') {
        Sign::Minus
    } else {
        Sign::Plus
    };
    Some(BigInt::from_biguint(sign, magnitude))
}

/// Java's `BigDecimal(String)`.
pub(super) fn parse_decimal(text: &str) -> Option<Decimal> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => {
            let exp = &text[at + 1..];
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (&text[..at], exp.parse::<i32>().ok()?)
        }
        None => (text, 0),
    };
    let unsigned = mantissa.strip_prefix(['+', '-']).unwrap_or(mantissa);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (integer.is_empty() && fraction.is_empty()) || !all_digits(integer) || !all_digits(fraction)
    {
        return None;
    }
    let scale = i64::try_from(fraction.len()).ok()? - i64::from(exponent);
    let scale = i32::try_from(scale).ok()?;
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let unscaled = parse_varint(&format!("{sign}{integer}{fraction}"))?;
    Some(Decimal { unscaled, scale })
}

/// A decimal as a literal that [`parse_decimal`] reads back to the same unscaled value and
/// scale: plain digits for scale 0, a decimal point for small positive scales, else an
/// exponent.
pub(super) fn format_decimal(d: &Decimal) -> String {
    let digits = d.unscaled.magnitude().to_string();
    let sign = if d.unscaled.sign() == Sign::Minus {
        "-"
    } else {
        ""
    };
    match d.scale {
        0 => format!("{sign}{digits}"),
        scale @ 1..=MAX_PLAIN_SCALE => {
            let scale = scale as usize;
            if digits.len() > scale {
                let (int, frac) = digits.split_at(digits.len() - scale);
                format!("{sign}{int}.{frac}")
            } else {
                format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
            }
        }
        scale => format!("{sign}{digits}E{}", -i64::from(scale)),
    }
}

/// A decimal as Java's `BigDecimal.toString()` writes it (Cassandra's JSON of a decimal):
/// plain when the scale is not negative and the adjusted exponent is -6 or more, else one
/// digit, a point, the rest, and `E+n`/`E-n`.
pub(crate) fn decimal_java_string(d: &Decimal) -> String {
    let digits = d.unscaled.magnitude().to_string();
    let sign = if d.unscaled.sign() == Sign::Minus {
        "-"
    } else {
        ""
    };
    let adjusted = -i64::from(d.scale) + (digits.len() as i64 - 1);
    if d.scale >= 0 && adjusted >= -6 {
        return decimal_plain_string(d);
    }
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    let exp_sign = if adjusted >= 0 { "+" } else { "" };
    format!("{sign}{first}{point}{rest}E{exp_sign}{adjusted}")
}

/// A decimal as Java's `BigDecimal.toPlainString()` writes it (Cassandra's CAST to text): no
/// exponent, zeros written out.
pub(crate) fn decimal_plain_string(d: &Decimal) -> String {
    let digits = d.unscaled.magnitude().to_string();
    let sign = if d.unscaled.sign() == Sign::Minus {
        "-"
    } else {
        ""
    };
    if d.scale <= 0 {
        let zeros = if d.unscaled.sign() == Sign::NoSign {
            0
        } else {
            d.scale.unsigned_abs() as usize
        };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = d.scale as usize;
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
    }
}

/// The low 128 bits of an integer, two's complement (Java's `intValue`/`longValue` keep the
/// low bits the same way).
fn low_bits(x: &BigInt) -> i128 {
    let mut digits = x.magnitude().iter_u64_digits();
    let low =
        u128::from(digits.next().unwrap_or(0)) | (u128::from(digits.next().unwrap_or(0)) << 64);
    if x.sign() == Sign::Minus {
        (low as i128).wrapping_neg()
    } else {
        low as i128
    }
}

/// A decimal's integer part (truncated toward zero), or `None` when it would have more than
/// [`MAX_LITERAL_DIGITS`] digits.
fn decimal_integer(d: &Decimal) -> Option<BigInt> {
    let ten = BigInt::from(10);
    if d.scale >= 0 {
        if d.scale as usize > MAX_LITERAL_DIGITS {
            return Some(BigInt::default());
        }
        Some(&d.unscaled / ten.pow(d.scale as u32))
    } else {
        let zeros = d.scale.unsigned_abs();
        if zeros as usize > MAX_LITERAL_DIGITS {
            return None;
        }
        Some(&d.unscaled * ten.pow(zeros))
    }
}

/// `CAST` between numeric types, as Cassandra's `CastFcts` converts: through Java's `Number`
/// methods of the value. To an integer type, `intValue()`/`longValue()` (integers and decimals
/// keep the low bits of their integer part, floats saturate, NaN is 0) and for `tinyint` and
/// `smallint` the low bits of the `int`; to `float`/`double` the nearest; to `varint`
/// `BigInteger.valueOf(longValue())`; to `decimal` exactly for integers and varints
/// (`BigDecimal.valueOf(longValue())`, `new BigDecimal(BigInteger)`: `CAST(1 AS decimal)` is
/// `1`), through `Double.toString` for doubles and `Float.toString` for floats (`5.2f` is
/// `5.2`). `None` when the value has no such number (NaN or infinity to a decimal). A cast to the value's own type never comes here.
pub(crate) fn cast_number(v: &super::CqlValue, to: &CqlType) -> Option<super::CqlValue> {
    use super::CqlValue as V;
    enum N {
        Int(i64),
        Float(f64),
        Big(BigInt),
        Dec(Decimal),
    }
    let n = match v {
        V::Tinyint(x) => N::Int(i64::from(*x)),
        V::Smallint(x) => N::Int(i64::from(*x)),
        V::Int(x) => N::Int(i64::from(*x)),
        V::Bigint(x) | V::Counter(x) => N::Int(*x),
        V::Float(x) => N::Float(f64::from(*x)),
        V::Double(x) => N::Float(*x),
        V::Varint(x) => N::Big(x.clone()),
        V::Decimal(d) => N::Dec(d.clone()),
        _ => return None,
    };
    // `longValue()`, and `intValue()`: a float's saturates at its own width.
    let long = |n: &N| -> Option<i64> {
        Some(match n {
            N::Int(i) => *i,
            N::Float(f) => *f as i64,
            N::Big(b) => low_bits(b) as i64,
            N::Dec(d) => low_bits(&decimal_integer(d)?) as i64,
        })
    };
    let int = |n: &N| -> Option<i32> {
        Some(match n {
            N::Float(f) => *f as i32,
            n => long(n)? as i32,
        })
    };
    let text = |n: &N| match n {
        N::Big(b) => Some(b.to_string()),
        N::Dec(d) => Some(format_decimal(d)),
        _ => None,
    };
    let double = |n: &N| -> Option<f64> {
        Some(match n {
            N::Int(i) => *i as f64,
            N::Float(f) => *f,
            n => text(n)?.parse().ok()?,
        })
    };
    Some(match to {
        CqlType::Tinyint => V::Tinyint(int(&n)? as i8),
        CqlType::Smallint => V::Smallint(int(&n)? as i16),
        CqlType::Int => V::Int(int(&n)?),
        CqlType::Bigint => V::Bigint(long(&n)?),
        CqlType::Float => V::Float(match &n {
            N::Int(i) => *i as f32,
            N::Float(f) => *f as f32,
            n => text(n)?.parse().ok()?,
        }),
        CqlType::Double => V::Double(double(&n)?),
        CqlType::Varint => V::Varint(BigInt::from(long(&n)?)),
        CqlType::Decimal => V::Decimal(match (&n, v) {
            // `new BigDecimal(Float.toString(f))`: the float's own digits, not its double's.
            (_, V::Float(f)) if f.is_finite() => {
                parse_decimal(&khata_types::java_text::java_float(*f))?
            }
            (N::Float(f), _) => super::arith::java_double_decimal(*f).ok()?,
            // `BigDecimal.valueOf(longValue())` and `new BigDecimal(BigInteger)`: exact.
            (N::Int(i), _) => Decimal {
                unscaled: BigInt::from(*i),
                scale: 0,
            },
            (N::Big(b), _) => Decimal {
                unscaled: b.clone(),
                scale: 0,
            },
            (N::Dec(d), _) => d.clone(),
        }),
        _ => return None,
    })
}

/// The numeric order of two decimals (`BigDecimal.compareTo`): `1.0` equals `1.00`.
pub(super) fn compare_decimal(a: &Decimal, b: &Decimal) -> Ordering {
    let rank = |s: Sign| match s {
        Sign::Minus => 0,
        Sign::NoSign => 1,
        Sign::Plus => 2,
    };
    let (sa, sb) = (a.unscaled.sign(), b.unscaled.sign());
    if sa != sb {
        return rank(sa).cmp(&rank(sb));
    }
    let magnitudes = compare_magnitudes(a, b);
    match sa {
        Sign::NoSign => Ordering::Equal,
        Sign::Minus => magnitudes.reverse(),
        Sign::Plus => magnitudes,
    }
}

/// Compare `|a| = ua * 10^-sa` with `|b| = ub * 10^-sb`, that is `ua * 10^(sb - sa)` with
/// `ub`. Their base-10 logarithms are bracketed from the bit lengths first; only when the
/// brackets overlap is the power of ten computed, and then it is no longer than `ub`, so the
/// work is bounded by the inputs' sizes whatever the scales.
fn compare_magnitudes(a: &Decimal, b: &Decimal) -> Ordering {
    const LOG10_2: f64 = std::f64::consts::LOG10_2;
    let (ua, ub) = (a.unscaled.magnitude(), b.unscaled.magnitude());
    let shift = i64::from(b.scale) - i64::from(a.scale);
    let (bits_a, bits_b) = (ua.bits() as f64, ub.bits() as f64);
    // log10(ua) is in [(bits_a - 1) * LOG10_2, bits_a * LOG10_2); half a decade of slack
    // absorbs rounding.
    let (low_a, high_a) = (
        (bits_a - 1.0) * LOG10_2 + shift as f64,
        bits_a * LOG10_2 + shift as f64,
    );
    let (low_b, high_b) = ((bits_b - 1.0) * LOG10_2, bits_b * LOG10_2);
    if high_a + 0.5 <= low_b {
        return Ordering::Less;
    }
    if high_b + 0.5 <= low_a {
        return Ordering::Greater;
    }
    let ten = BigUint::from(10u32);
    let power = |n: i64| ten.pow(u32::try_from(n.unsigned_abs()).unwrap_or(u32::MAX));
    if shift >= 0 {
        (ua * power(shift)).cmp(ub)
    } else {
        ua.cmp(&(ub * power(shift)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn decimals_parse_like_big_decimal() {
        let d = dec("1.50");
        assert_eq!((d.unscaled, d.scale), (BigInt::from(150), 2));
        let d = dec("-1.5e10");
        assert_eq!((d.unscaled, d.scale), (BigInt::from(-15), -9));
        let d = dec("15E-3");
        assert_eq!((d.unscaled, d.scale), (BigInt::from(15), 3));
        let d = dec(".5");
        assert_eq!((d.unscaled, d.scale), (BigInt::from(5), 1));
        let d = dec("1.");
        assert_eq!((d.unscaled, d.scale), (BigInt::from(1), 0));
        for bad in [
            "",
            ".",
            "e5",
            "1e",
            "1.2.3",
            "NaN",
            "1e2147483648",
            "--1",
            "1_0",
        ] {
            assert!(parse_decimal(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn decimals_format_and_parse_back() {
        for text in [
            "0",
            "1.5",
            "-0.001",
            "0.000",
            "15E3",
            "-15E-100",
            "123456789.987654321",
        ] {
            let d = dec(text);
            assert_eq!(dec(&format_decimal(&d)), d, "{text}");
        }
        assert_eq!(format_decimal(&dec("1.50")), "1.50");
        assert_eq!(format_decimal(&dec("15E3")), "15E3");
        assert_eq!(format_decimal(&dec("0.05")), "0.05");
    }

    #[test]
    fn decimals_compare_by_value() {
        let ordered = [
            "-1e100", "-1.5", "-1.4999", "-0.0001", "0", "0.00", "1e-100", "0.5", "1", "1.0",
            "1.00001", "9.99", "10", "1e100",
        ];
        for (i, x) in ordered.iter().enumerate() {
            for (j, y) in ordered.iter().enumerate() {
                let expected = match (*x, *y) {
                    ("0", "0.00") | ("0.00", "0") | ("1", "1.0") | ("1.0", "1") => Ordering::Equal,
                    _ => i.cmp(&j),
                };
                assert_eq!(compare_decimal(&dec(x), &dec(y)), expected, "{x} vs {y}");
            }
        }
    }

    #[test]
    fn extreme_scales_compare_without_huge_powers() {
        let tiny = Decimal {
            unscaled: BigInt::from(1),
            scale: i32::MAX,
        };
        let huge = Decimal {
            unscaled: BigInt::from(1),
            scale: i32::MIN,
        };
        assert_eq!(compare_decimal(&tiny, &huge), Ordering::Less);
        assert_eq!(compare_decimal(&huge, &tiny), Ordering::Greater);
    }
}
