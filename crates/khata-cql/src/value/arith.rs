//! Arithmetic on values: the `+ - * / %` operations and negation Cassandra 4 evaluates in
//! terms (`WHERE c = ? - 1`, `time > ? - 5m`) and selectors (`SELECT a + b`), with the result
//! types and Java semantics of `cql3.functions.OperationFcts` and each type's `NumberType`
//! operations.
//!
//! Operands of two number types are converted to the wider one: the fixed-size integers to the
//! largest of them (a `counter` counts as `bigint`), a `float` with an integer up to `int` stays
//! `float` and with a `bigint` becomes `double`, `varint` with a floating type and anything with
//! a `decimal` become `decimal`. Fixed-size integers wrap around on overflow and refuse a
//! division by zero (`/ by zero`), floats follow IEEE 754, `varint` is exact, and `decimal`
//! follows Cassandra 4's `DecimalType` (since CASSANDRA-15232): `+`, `-` and `*` keep up to
//! 10,000 significant digits (rounded half up), `/` gives 32 digits past the quotient's first
//! significant one (at a scale of at least 32 and the operands' scales, at most 1000; half up;
//! trailing zeros stripped), `%` is exact. A number becomes a decimal through Java's
//! `BigDecimal.valueOf(double)`, so NaN and infinities are refused. Decimal work that would
//! need more than [`MAX_LITERAL_DIGITS`] digits (`1E+1000000 / 3`, aligning `1E+1000000 % 3`)
//! fails instead of building such a number. A `timestamp` or `date` plus or minus a `duration`
//! adds calendar months, then days, then the rest, in UTC.

use khata_types::calendar::{civil_from_days, days_from_civil};
use khata_types::schema::CqlType;
use num_bigint::{BigInt, Sign};

use super::duration::format_duration;
use super::numeric::{MAX_LITERAL_DIGITS, compare_decimal, parse_decimal};
use super::{CqlValue, Decimal, Duration, EPOCH_DATE};
use crate::language::ast::ArithmeticOp;

fn is_zero(x: &BigInt) -> bool {
    x.sign() == Sign::NoSign
}

/// Digits a `decimal` sum, difference or product keeps (Cassandra's `DecimalType` rounds them
/// with `new MathContext(10000)`, half up).
const MAX_PRECISION: u64 = 10_000;
/// A decimal quotient's scale is at least this, and at least this many digits past its
/// estimated first significant one (`DecimalType.MIN_SCALE`, `MIN_SIGNIFICANT_DIGITS`).
const MIN_DIVISION_SCALE: i64 = 32;
const MIN_SIGNIFICANT_DIGITS: i64 = 32;
/// A decimal quotient's scale is at most this (`DecimalType.MAX_SCALE`).
const MAX_DIVISION_SCALE: i64 = 1000;

/// The number types an operation takes, in the order of Cassandra's candidates.
pub const NUMBER_TYPES: [CqlType; 9] = [
    CqlType::Tinyint,
    CqlType::Smallint,
    CqlType::Int,
    CqlType::Bigint,
    CqlType::Counter,
    CqlType::Float,
    CqlType::Double,
    CqlType::Varint,
    CqlType::Decimal,
];

/// The width of a fixed-size integer type, in bytes.
fn int_width(ty: &CqlType) -> Option<u8> {
    Some(match ty {
        CqlType::Tinyint => 1,
        CqlType::Smallint => 2,
        CqlType::Int => 4,
        CqlType::Bigint | CqlType::Counter => 8,
        _ => return None,
    })
}

fn int_type(width: u8) -> CqlType {
    match width {
        1 => CqlType::Tinyint,
        2 => CqlType::Smallint,
        4 => CqlType::Int,
        _ => CqlType::Bigint,
    }
}

/// The type of `left op right` for two number types, or a temporal type and a duration
/// (`None`: no such operation).
pub fn result_type(op: ArithmeticOp, left: &CqlType, right: &CqlType) -> Option<CqlType> {
    use CqlType as T;
    if matches!(op, ArithmeticOp::Add | ArithmeticOp::Subtract) && *right == T::Duration {
        return match left {
            T::Timestamp => Some(T::Timestamp),
            T::Date => Some(T::Date),
            _ => None,
        };
    }
    let number = |t: &CqlType| NUMBER_TYPES.contains(t);
    if !number(left) || !number(right) {
        return None;
    }
    if *left == T::Decimal || *right == T::Decimal {
        return Some(T::Decimal);
    }
    let floating = |t: &CqlType| matches!(t, T::Float | T::Double);
    if *left == T::Varint || *right == T::Varint {
        return Some(if floating(left) || floating(right) {
            T::Decimal
        } else {
            T::Varint
        });
    }
    match (int_width(left), int_width(right)) {
        (Some(a), Some(b)) => Some(int_type(a.max(b))),
        (Some(w), None) | (None, Some(w)) => {
            // One float or double with an integer.
            let float = if floating(left) { left } else { right };
            Some(if *float == T::Float && w < 8 {
                T::Float
            } else {
                T::Double
            })
        }
        (None, None) => Some(if *left == T::Float && *right == T::Float {
            T::Float
        } else {
            T::Double
        }),
    }
}

/// The type of `-x` (`None`: not a number).
pub fn negation_type(ty: &CqlType) -> Option<CqlType> {
    match ty {
        CqlType::Counter => Some(CqlType::Bigint),
        t if NUMBER_TYPES.contains(t) => Some(t.clone()),
        _ => None,
    }
}

/// A number of any type, as the operation's result type computes with it.
enum Num {
    Int(i64),
    Float(f32),
    Double(f64),
    Big(BigInt),
    Dec(Decimal),
}

fn as_i64(v: &CqlValue) -> Option<i64> {
    Some(match v {
        CqlValue::Tinyint(x) => i64::from(*x),
        CqlValue::Smallint(x) => i64::from(*x),
        CqlValue::Int(x) => i64::from(*x),
        CqlValue::Bigint(x) | CqlValue::Counter(x) => *x,
        _ => return None,
    })
}

/// Java's `Number.doubleValue()`.
fn as_f64(v: &CqlValue) -> Option<f64> {
    Some(match v {
        CqlValue::Float(x) => f64::from(*x),
        CqlValue::Double(x) => *x,
        CqlValue::Varint(b) => b.to_string().parse().ok()?,
        CqlValue::Decimal(d) => super::numeric::format_decimal(d).parse().ok()?,
        other => as_i64(other)? as f64,
    })
}

/// Java's `Number.floatValue()`.
fn as_f32(v: &CqlValue) -> Option<f32> {
    Some(match v {
        CqlValue::Float(x) => *x,
        other => as_f64(other)? as f32,
    })
}

/// `v` converted to the computing form of `to`.
fn convert(v: &CqlValue, to: &CqlType) -> Result<Num, String> {
    let not_a_number = || "the value is not a number".to_string();
    Ok(match to {
        CqlType::Float => Num::Float(as_f32(v).ok_or_else(not_a_number)?),
        CqlType::Double => Num::Double(as_f64(v).ok_or_else(not_a_number)?),
        CqlType::Varint => Num::Big(match v {
            CqlValue::Varint(b) => b.clone(),
            other => BigInt::from(as_i64(other).ok_or_else(not_a_number)?),
        }),
        CqlType::Decimal => Num::Dec(match v {
            CqlValue::Decimal(d) => d.clone(),
            CqlValue::Varint(b) => Decimal {
                unscaled: b.clone(),
                scale: 0,
            },
            other => java_double_decimal(as_f64(other).ok_or_else(not_a_number)?)?,
        }),
        _ => Num::Int(as_i64(v).ok_or_else(not_a_number)?),
    })
}

/// Java's `BigDecimal.valueOf(double)`: the decimal `Double.toString` writes, which is the
/// shortest text that reads back to the same double, in plain notation from 10^-3 up to 10^7
/// and in scientific notation (`1.0E7`) outside, always with a digit after the point.
pub(crate) fn java_double_decimal(f: f64) -> Result<Decimal, String> {
    if f.is_nan() {
        return Err("A NaN cannot be converted into a decimal".into());
    }
    if f.is_infinite() {
        return Err("An infinite number cannot be converted into a decimal".into());
    }
    if f == 0.0 {
        // "0.0" (and "-0.0", which BigDecimal reads as 0.0).
        return Ok(Decimal {
            unscaled: BigInt::default(),
            scale: 1,
        });
    }
    let java = khata_types::java_text::java_double(f.abs());
    let negative = f < 0.0;
    let d = parse_decimal(&java).ok_or("bad float")?;
    Ok(if negative {
        Decimal {
            unscaled: -d.unscaled,
            scale: d.scale,
        }
    } else {
        d
    })
}

/// The preferred type of a floating-point literal (`Constants.Type.FLOAT`): `double` when the
/// double nearest to it is the same number, else `decimal`.
pub fn float_literal_type(text: &str) -> CqlType {
    let exact = parse_decimal(text);
    let double = text
        .parse::<f64>()
        .ok()
        .and_then(|f| java_double_decimal(f).ok());
    match (exact, double) {
        (Some(d), Some(j)) if compare_decimal(&d, &j).is_eq() => CqlType::Double,
        _ => CqlType::Decimal,
    }
}

/// `left op right`, both of their types, computed in `result` (from [`result_type`]). An `Err`
/// is the reason the operation failed, as Java's exception gives it (`/ by zero`).
pub fn apply(
    op: ArithmeticOp,
    left: &CqlValue,
    right: &CqlValue,
    result: &CqlType,
) -> Result<CqlValue, String> {
    if *result == CqlType::Timestamp || *result == CqlType::Date {
        return temporal(op, left, right, result);
    }
    let (l, r) = (convert(left, result)?, convert(right, result)?);
    Ok(match (l, r) {
        (Num::Int(a), Num::Int(b)) => {
            let width = int_width(result).unwrap_or(8);
            let value = integer(op, a, b, width)?;
            match width {
                1 => CqlValue::Tinyint(value as i8),
                2 => CqlValue::Smallint(value as i16),
                4 => CqlValue::Int(value as i32),
                _ => CqlValue::Bigint(value),
            }
        }
        (Num::Float(a), Num::Float(b)) => CqlValue::Float(match op {
            ArithmeticOp::Add => a + b,
            ArithmeticOp::Subtract => a - b,
            ArithmeticOp::Multiply => a * b,
            ArithmeticOp::Divide => a / b,
            ArithmeticOp::Modulo => a % b,
        }),
        (Num::Double(a), Num::Double(b)) => CqlValue::Double(match op {
            ArithmeticOp::Add => a + b,
            ArithmeticOp::Subtract => a - b,
            ArithmeticOp::Multiply => a * b,
            ArithmeticOp::Divide => a / b,
            ArithmeticOp::Modulo => a % b,
        }),
        (Num::Big(a), Num::Big(b)) => CqlValue::Varint(match op {
            ArithmeticOp::Add => a + b,
            ArithmeticOp::Subtract => a - b,
            ArithmeticOp::Multiply => a * b,
            ArithmeticOp::Divide | ArithmeticOp::Modulo if is_zero(&b) => {
                return Err("BigInteger divide by zero".into());
            }
            ArithmeticOp::Divide => a / b,
            ArithmeticOp::Modulo => a % b,
        }),
        (Num::Dec(a), Num::Dec(b)) => CqlValue::Decimal(decimal(op, &a, &b)?),
        _ => return Err("the operands do not have the operation's type".into()),
    })
}

/// An operation on fixed-size integers of `width` bytes, wrapping as Java's `int` and `long`
/// arithmetic does (and as its casts back to `byte` and `short` do).
fn integer(op: ArithmeticOp, a: i64, b: i64, width: u8) -> Result<i64, String> {
    if matches!(op, ArithmeticOp::Divide | ArithmeticOp::Modulo) && b == 0 {
        return Err("/ by zero".into());
    }
    let wide = match op {
        ArithmeticOp::Add => a.wrapping_add(b),
        ArithmeticOp::Subtract => a.wrapping_sub(b),
        ArithmeticOp::Multiply => a.wrapping_mul(b),
        ArithmeticOp::Divide => a.wrapping_div(b),
        ArithmeticOp::Modulo => a.wrapping_rem(b),
    };
    Ok(match width {
        1 => i64::from(wide as i8),
        2 => i64::from(wide as i16),
        4 => i64::from(wide as i32),
        _ => wide,
    })
}

/// `-v`, of `v`'s type (a counter's as `bigint`).
pub fn negate(v: &CqlValue) -> Result<CqlValue, String> {
    Ok(match v {
        CqlValue::Tinyint(x) => CqlValue::Tinyint(x.wrapping_neg()),
        CqlValue::Smallint(x) => CqlValue::Smallint(x.wrapping_neg()),
        CqlValue::Int(x) => CqlValue::Int(x.wrapping_neg()),
        CqlValue::Bigint(x) | CqlValue::Counter(x) => CqlValue::Bigint(x.wrapping_neg()),
        CqlValue::Float(x) => CqlValue::Float(-x),
        CqlValue::Double(x) => CqlValue::Double(-x),
        CqlValue::Varint(b) => CqlValue::Varint(-b),
        CqlValue::Decimal(d) => CqlValue::Decimal(Decimal {
            unscaled: -&d.unscaled,
            scale: d.scale,
        }),
        _ => return Err("the value is not a number".into()),
    })
}

/// The number of decimal digits of `x` (1 for zero).
pub(super) fn digit_count(x: &BigInt) -> u64 {
    if is_zero(x) {
        return 1;
    }
    // An estimate from the bit length, then corrected.
    let bits = x.bits();
    let mut estimate = ((bits.saturating_sub(1)) as f64 * std::f64::consts::LOG10_2) as u64 + 1;
    let ten = BigInt::from(10);
    let magnitude = BigInt::from_biguint(Sign::Plus, x.magnitude().clone());
    while ten.pow(estimate as u32) <= magnitude {
        estimate += 1;
    }
    while estimate > 1 && ten.pow((estimate - 1) as u32) > magnitude {
        estimate -= 1;
    }
    estimate
}

/// Why a decimal operation is refused: its exact work or result would need more digits than
/// khata computes with (Java would try, and run out of time or memory).
fn too_many_digits() -> String {
    format!("the decimal result would need more than {MAX_LITERAL_DIGITS} digits")
}

fn pow10(n: u64) -> Result<BigInt, String> {
    if n > MAX_LITERAL_DIGITS as u64 {
        return Err(too_many_digits());
    }
    Ok(BigInt::from(10).pow(n as u32))
}

/// A decimal while it is computed: the scale may leave an `int` until the result is made.
#[derive(Clone, Debug)]
struct Wide {
    unscaled: BigInt,
    scale: i64,
}

impl Wide {
    fn of(d: &Decimal) -> Wide {
        Wide {
            unscaled: d.unscaled.clone(),
            scale: i64::from(d.scale),
        }
    }

    /// Java's `precision()`: the digits of the unscaled value (1 for zero).
    fn precision(&self) -> i64 {
        digit_count(&self.unscaled) as i64
    }

    /// The result, or Java's `ArithmeticException` for a scale beyond an `int`.
    fn finish(self) -> Result<Decimal, String> {
        let scale = i32::try_from(self.scale).map_err(|_| {
            if self.scale > 0 {
                "Underflow"
            } else {
                "Overflow"
            }
        })?;
        Ok(Decimal {
            unscaled: self.unscaled,
            scale,
        })
    }
}

/// `x / divisor` rounded half up (away from zero on a tie), the quotient's sign from both.
fn divide_half_up(x: &BigInt, divisor: &BigInt) -> BigInt {
    let (q, r) = (x / divisor, x % divisor);
    if is_zero(&r) {
        return q;
    }
    let twice = r.magnitude() * 2u32;
    if &twice < divisor.magnitude() {
        q
    } else if (x.sign() == Sign::Minus) != (divisor.sign() == Sign::Minus) {
        q - 1
    } else {
        q + 1
    }
}

/// `d` rounded to `precision` digits, half up (`BigDecimal.round(new MathContext(precision))`).
fn round(d: Wide, precision: u64) -> Result<Wide, String> {
    let digits = digit_count(&d.unscaled);
    if digits <= precision {
        return Ok(d);
    }
    let drop = digits - precision;
    let mut unscaled = divide_half_up(&d.unscaled, &pow10(drop)?);
    let mut scale = d.scale - drop as i64;
    // Rounding up may carry into one more digit (999.. -> 1000..).
    if digit_count(&unscaled) > precision {
        unscaled /= 10;
        scale -= 1;
    }
    Ok(Wide { unscaled, scale })
}

/// Both operands' unscaled values at the larger scale.
fn aligned(a: &Wide, b: &Wide) -> Result<(BigInt, BigInt, i64), String> {
    let scale = a.scale.max(b.scale);
    let up = |d: &Wide| -> Result<BigInt, String> {
        Ok(&d.unscaled * pow10((scale - d.scale).unsigned_abs())?)
    };
    Ok((up(a)?, up(b)?, scale))
}

fn decimal(op: ArithmeticOp, a: &Decimal, b: &Decimal) -> Result<Decimal, String> {
    let (a, b) = (Wide::of(a), Wide::of(b));
    match op {
        ArithmeticOp::Add => add(a, b),
        ArithmeticOp::Subtract => add(
            a,
            Wide {
                unscaled: -b.unscaled,
                scale: b.scale,
            },
        ),
        ArithmeticOp::Multiply => round(
            Wide {
                unscaled: &a.unscaled * &b.unscaled,
                scale: a.scale + b.scale,
            },
            MAX_PRECISION,
        ),
        ArithmeticOp::Divide => divide(a, b),
        ArithmeticOp::Modulo => remainder(a, b),
    }?
    .finish()
}

/// `a.add(b, new MathContext(10000))`: the exact sum at the larger scale, rounded to
/// [`MAX_PRECISION`] digits half up. An operand wholly below both the other's last digit and
/// the rounding position (by more than two places) changes the rounded sum only through its
/// sign, so it is replaced by a lone unit three places below both: the work stays near
/// [`MAX_PRECISION`] digits however far apart the scales are (`1E+1000000000 + 1`).
fn add(a: Wide, b: Wide) -> Result<Wide, String> {
    let preferred = a.scale.max(b.scale);
    match (is_zero(&a.unscaled), is_zero(&b.unscaled)) {
        (true, true) => {
            return Ok(Wide {
                unscaled: BigInt::default(),
                scale: preferred,
            });
        }
        // The other operand, rounded, then given zeros up to the preferred scale as far as
        // the precision allows.
        (true, false) | (false, true) => {
            let other = if is_zero(&a.unscaled) { b } else { a };
            let mut result = round(other, MAX_PRECISION)?;
            let room = MAX_PRECISION as i64 - result.precision();
            let pad = (preferred - result.scale).min(room).max(0);
            result.unscaled *= pow10(pad as u64)?;
            result.scale += pad;
            return Ok(result);
        }
        (false, false) => {}
    }
    let (big, small) = if a.scale <= b.scale { (a, b) } else { (b, a) };
    let rounding_scale = big.scale - big.precision() + MAX_PRECISION as i64;
    let small_top = small.scale - small.precision() + 1;
    let small = if small_top > big.scale + 2 && small_top > rounding_scale + 2 {
        Wide {
            unscaled: BigInt::from(if small.unscaled.sign() == Sign::Minus {
                -1
            } else {
                1
            }),
            scale: big.scale.max(rounding_scale) + 3,
        }
    } else {
        small
    };
    let (x, y, scale) = aligned(&big, &small)?;
    round(
        Wide {
            unscaled: x + y,
            scale,
        },
        MAX_PRECISION,
    )
}

/// Cassandra's `DecimalType.divide` (CASSANDRA-15232): the quotient at a scale of 32 digits
/// past its estimated first significant digit, at least either operand's scale and 32, at most
/// 1000; rounded half up, then without trailing zeros (Java's `stripTrailingZeros`, which
/// makes 0 plain `0` and `100` `1E+2`).
fn divide(a: Wide, b: Wide) -> Result<Wide, String> {
    if is_zero(&b.unscaled) {
        return Err("BigInteger divide by zero".into());
    }
    let first_digit = (a.precision() - a.scale) - (b.precision() - b.scale);
    let scale = (MIN_SIGNIFICANT_DIGITS - first_digit)
        .max(a.scale)
        .max(b.scale)
        .clamp(MIN_DIVISION_SCALE, MAX_DIVISION_SCALE);
    // The quotient has about `first_digit + scale` digits.
    if first_digit.saturating_add(scale) > MAX_LITERAL_DIGITS as i64 {
        return Err(too_many_digits());
    }
    // quotient * 10^-scale = (a.unscaled * 10^-a.scale) / (b.unscaled * 10^-b.scale)
    let shift = scale - a.scale + b.scale;
    let quotient = if shift >= 0 {
        divide_half_up(&(&a.unscaled * pow10(shift as u64)?), &b.unscaled)
    } else if -shift > a.precision() - b.precision() + 1 {
        // The quotient is below a tenth of a unit at `scale`: it rounds to zero.
        BigInt::default()
    } else {
        divide_half_up(&a.unscaled, &(&b.unscaled * pow10(shift.unsigned_abs())?))
    };
    Ok(strip_trailing_zeros(Wide {
        unscaled: quotient,
        scale,
    }))
}

/// Java's `stripTrailingZeros`: zero becomes plain `0`.
fn strip_trailing_zeros(mut d: Wide) -> Wide {
    if is_zero(&d.unscaled) {
        return Wide {
            unscaled: d.unscaled,
            scale: 0,
        };
    }
    // Whole runs of zeros first: a long quotient of a round number has many.
    for run in [256u32, 16, 1] {
        let divisor = BigInt::from(10).pow(run);
        loop {
            let (q, r) = (&d.unscaled / &divisor, &d.unscaled % &divisor);
            if !is_zero(&r) {
                break;
            }
            d.unscaled = q;
            d.scale -= i64::from(run);
        }
    }
    d
}

/// Java's `a.remainder(b)`: `a - b * q` with `q` the quotient truncated to an integer
/// (`divideToIntegralValue`, whose scale is `a.scale - b.scale` or as near it as `q`'s
/// trailing zeros allow, never below it), so the remainder's scale is `a`'s, or more when
/// `q` cannot reach that scale (`7 % 8.5` is `7`, `1000 % 0.5` is `0`, `7.5 % 2` is `1.5`,
/// `1 % 0.3` is `0.1`).
fn remainder(a: Wide, b: Wide) -> Result<Wide, String> {
    if is_zero(&b.unscaled) {
        return Err(if is_zero(&a.unscaled) {
            "Division undefined".into()
        } else {
            "Division by zero".into()
        });
    }
    let (x, y, scale) = aligned(&a, &b)?;
    let quotient = &x / &y;
    if is_zero(&quotient) {
        // |a| < |b|: the remainder is `a` itself.
        return Ok(a);
    }
    let preferred = a.scale - b.scale;
    let quotient_scale = if preferred >= 0 {
        preferred
    } else {
        let ten = BigInt::from(10);
        let mut zeros = 0;
        let mut q = quotient;
        while zeros < -preferred && is_zero(&(&q % &ten)) {
            q /= &ten;
            zeros += 1;
        }
        -zeros
    };
    let result_scale = a.scale.max(quotient_scale + b.scale);
    // The remainder at the aligned scale has zeros down to `result_scale` (both `a` and
    // `b * q` are multiples of its unit).
    Ok(Wide {
        unscaled: (x % y) / pow10((scale - result_scale) as u64)?,
        scale: result_scale,
    })
}

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Java's `Calendar.add(MONTH, n)` then `add(DAY_OF_MONTH, d)` in UTC on a time in
/// milliseconds: the day of the month is kept, or the month's last day when it is shorter.
fn add_months_days(millis: i64, months: i64, days: i64) -> Option<i64> {
    let day = millis.div_euclid(MILLIS_PER_DAY);
    let within = millis.rem_euclid(MILLIS_PER_DAY);
    let (year, month, dom) = civil_from_days(day);
    let total = year.checked_mul(12)? + i64::from(month) - 1 + months;
    let (year, month) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let last = {
        let next = if month == 12 {
            days_from_civil(year + 1, 1, 1)
        } else {
            days_from_civil(year, month + 1, 1)
        };
        (next - days_from_civil(year, month, 1)) as u32
    };
    let day = days_from_civil(year, month, dom.min(last)) + days;
    day.checked_mul(MILLIS_PER_DAY)?.checked_add(within)
}

/// `temporal ± duration` as Cassandra's `Duration.addTo`/`substractFrom`.
fn shift(millis: i64, d: &Duration, sign: i64) -> Option<i64> {
    let nanos_millis = d.nanos / 1_000_000 * sign;
    if d.months == 0 {
        let span = (i64::from(d.days) * sign)
            .checked_mul(MILLIS_PER_DAY)?
            .checked_add(nanos_millis)?;
        return millis.checked_add(span);
    }
    add_months_days(millis, i64::from(d.months) * sign, i64::from(d.days) * sign)?
        .checked_add(nanos_millis)
}

fn temporal(
    op: ArithmeticOp,
    left: &CqlValue,
    right: &CqlValue,
    result: &CqlType,
) -> Result<CqlValue, String> {
    let CqlValue::Duration(d) = right else {
        return Err("the second operand is not a duration".into());
    };
    let sign = if op == ArithmeticOp::Subtract { -1 } else { 1 };
    let overflow = || "the result is out of the type's range".to_string();
    match (left, result) {
        (CqlValue::Timestamp(millis), CqlType::Timestamp) => {
            if d.nanos % 1_000_000 != 0 {
                return Err(format!(
                    "The duration must have a millisecond precision. Was: {}",
                    format_duration(d)
                ));
            }
            Ok(CqlValue::Timestamp(
                shift(*millis, d, sign).ok_or_else(overflow)?,
            ))
        }
        (CqlValue::Date(days), CqlType::Date) => {
            if d.nanos != 0 {
                return Err(format!(
                    "The duration must have a day precision. Was: {}",
                    format_duration(d)
                ));
            }
            let millis = (i64::from(*days) - i64::from(EPOCH_DATE)) * MILLIS_PER_DAY;
            let shifted = shift(millis, d, sign).ok_or_else(overflow)?;
            CqlValue::date_from_epoch_days(shifted.div_euclid(MILLIS_PER_DAY)).ok_or_else(overflow)
        }
        _ => Err("the first operand is not a timestamp or a date".into()),
    }
}

/// The text of the operation's signature for its failure: `int / int`.
pub fn signature(op: ArithmeticOp, left: &CqlType, right: &CqlType) -> String {
    format!(
        "{} {} {}",
        khata_types::type_text::type_text(left),
        op.symbol(),
        khata_types::type_text::type_text(right)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap_or_else(|| panic!("{text}"))
    }

    fn dec_text(d: &CqlValue) -> String {
        match d {
            CqlValue::Decimal(d) => super::super::numeric::decimal_java_string(d),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn result_types_follow_cassandra() {
        use CqlType as T;
        let add = ArithmeticOp::Add;
        assert_eq!(result_type(add, &T::Tinyint, &T::Tinyint), Some(T::Tinyint));
        assert_eq!(
            result_type(add, &T::Tinyint, &T::Smallint),
            Some(T::Smallint)
        );
        assert_eq!(result_type(add, &T::Counter, &T::Counter), Some(T::Bigint));
        assert_eq!(result_type(add, &T::Int, &T::Float), Some(T::Float));
        assert_eq!(result_type(add, &T::Bigint, &T::Float), Some(T::Double));
        assert_eq!(result_type(add, &T::Float, &T::Double), Some(T::Double));
        assert_eq!(result_type(add, &T::Varint, &T::Float), Some(T::Decimal));
        assert_eq!(result_type(add, &T::Varint, &T::Bigint), Some(T::Varint));
        assert_eq!(result_type(add, &T::Decimal, &T::Tinyint), Some(T::Decimal));
        assert_eq!(
            result_type(add, &T::Timestamp, &T::Duration),
            Some(T::Timestamp)
        );
        assert_eq!(
            result_type(ArithmeticOp::Multiply, &T::Timestamp, &T::Duration),
            None
        );
        assert_eq!(result_type(add, &T::Boolean, &T::Int), None);
    }

    #[test]
    fn integers_wrap_and_refuse_division_by_zero() {
        let r = apply(
            ArithmeticOp::Add,
            &CqlValue::Tinyint(127),
            &CqlValue::Tinyint(1),
            &CqlType::Tinyint,
        );
        assert_eq!(r, Ok(CqlValue::Tinyint(-128)));
        let r = apply(
            ArithmeticOp::Add,
            &CqlValue::Int(i32::MAX),
            &CqlValue::Int(1),
            &CqlType::Int,
        );
        assert_eq!(r, Ok(CqlValue::Int(i32::MIN)));
        let r = apply(
            ArithmeticOp::Divide,
            &CqlValue::Int(3),
            &CqlValue::Tinyint(0),
            &CqlType::Int,
        );
        assert_eq!(r, Err("/ by zero".to_string()));
        let r = apply(
            ArithmeticOp::Modulo,
            &CqlValue::Int(-7),
            &CqlValue::Int(3),
            &CqlType::Int,
        );
        assert_eq!(r, Ok(CqlValue::Int(-1)));
    }

    #[test]
    fn decimals_as_java_computes_them() {
        let d = |t: &str| CqlValue::Decimal(dec(t));
        let op =
            |op, a: &CqlValue, b: &CqlValue| dec_text(&apply(op, a, b, &CqlType::Decimal).unwrap());
        // OperationFctsTest: h = 8.5, integers become decimals through doubles ("3.0").
        assert_eq!(
            op(ArithmeticOp::Multiply, &d("8.5"), &CqlValue::Int(3)),
            "25.50"
        );
        assert_eq!(
            op(ArithmeticOp::Divide, &d("8.5"), &CqlValue::Int(3)),
            "2.83333333333333333333333333333333"
        );
        assert_eq!(op(ArithmeticOp::Divide, &d("8.5"), &d("8.5")), "1");
        assert_eq!(
            op(ArithmeticOp::Divide, &d("8.5"), &CqlValue::Smallint(2)),
            "4.25"
        );
        assert_eq!(
            op(ArithmeticOp::Divide, &CqlValue::Tinyint(1), &d("8.5")),
            "0.11764705882352941176470588235294"
        );
        assert_eq!(op(ArithmeticOp::Modulo, &d("8.5"), &d("8.5")), "0.0");
        assert_eq!(
            op(ArithmeticOp::Modulo, &CqlValue::Tinyint(1), &d("8.5")),
            "1.0"
        );
        assert_eq!(
            op(ArithmeticOp::Add, &d("8.5"), &CqlValue::Float(5.5)),
            "14.0"
        );
        assert_eq!(
            op(
                ArithmeticOp::Divide,
                &CqlValue::Varint(7.into()),
                &CqlValue::Double(6.5)
            ),
            "1.07692307692307692307692307692308"
        );
        assert_eq!(
            op(
                ArithmeticOp::Multiply,
                &d("8.5"),
                &CqlValue::Varint(7.into())
            ),
            "59.5"
        );
        let r = apply(
            ArithmeticOp::Divide,
            &d("8.5"),
            &CqlValue::Tinyint(0),
            &CqlType::Decimal,
        );
        assert_eq!(r, Err("BigInteger divide by zero".to_string()));
        let r = apply(
            ArithmeticOp::Add,
            &d("1"),
            &CqlValue::Double(f64::NAN),
            &CqlType::Decimal,
        );
        assert_eq!(
            r,
            Err("A NaN cannot be converted into a decimal".to_string())
        );
    }

    fn decimal_op(op: ArithmeticOp, a: &str, b: &str) -> Result<String, String> {
        apply(
            op,
            &CqlValue::Decimal(dec(a)),
            &CqlValue::Decimal(dec(b)),
            &CqlType::Decimal,
        )
        .map(|v| dec_text(&v))
    }

    /// `+`, `-` and `*` keep 10,000 digits, rounded half up (Cassandra's `MathContext(10000)`;
    /// ScyllaDB's test_decimal_add_precision states it).
    #[test]
    fn decimal_sums_keep_ten_thousand_digits() {
        use ArithmeticOp::{Add, Multiply, Subtract};
        let plain = |v: Result<String, String>| {
            super::super::numeric::decimal_plain_string(&dec(&v.unwrap()))
        };
        let exact = format!("1{}1", "0".repeat(9998));
        assert_eq!(plain(decimal_op(Add, "1e9999", "1")), exact);
        // 10^10000 + 1 has 10,001 digits: the last is rounded away.
        let sum = dec(&decimal_op(Add, "1e10000", "1").unwrap());
        assert_eq!(
            compare_decimal(&sum, &dec("1e10000")),
            std::cmp::Ordering::Equal
        );
        // Half up: 10^10000 + 5 rounds to 10^10000 + 10, and away from zero when negative.
        let up = format!("1{}10", "0".repeat(9998));
        assert_eq!(plain(decimal_op(Add, "1e10000", "5")), up);
        assert_eq!(plain(decimal_op(Add, "-1e10000", "-5")), format!("-{up}"));
        assert_eq!(
            decimal_op(Add, "1e40", "1").unwrap(),
            format!("1{}1", "0".repeat(39))
        );
        assert_eq!(decimal_op(Subtract, "1.50", "0.5").unwrap(), "1.00");
        assert_eq!(decimal_op(Multiply, "1.5", "1.50").unwrap(), "2.250");
        // Far apart scales do not build the exact sum.
        assert_eq!(
            decimal_op(Add, "1e1000000000", "1").unwrap(),
            format!("1.{}E+1000000000", "0".repeat(9999))
        );
        let less = dec(&decimal_op(Subtract, "1e1000000000", "1").unwrap());
        assert_eq!(
            compare_decimal(&less, &dec("1e1000000000")),
            std::cmp::Ordering::Equal
        );
        assert_eq!(decimal_op(Add, "0.000", "1").unwrap(), "1.000");
        assert_eq!(decimal_op(Add, "0e-20", "0").unwrap(), "0E-20");
    }

    /// `/` as Cassandra's `DecimalType.divide`, the cases of ScyllaDB's
    /// test_decimal_division_precision.
    #[test]
    fn decimal_quotients_have_32_digits_past_the_first() {
        use ArithmeticOp::Divide;
        let quotient = |a: &str, b: &str| decimal_op(Divide, a, b).unwrap();
        assert_eq!(quotient("1", "3"), format!("0.{}", "3".repeat(32)));
        assert_eq!(quotient("1", "6"), format!("0.1{}7", "6".repeat(30)));
        assert_eq!(quotient("1", "30"), format!("0.0{}", "3".repeat(32)));
        assert_eq!(quotient("10", "3"), format!("3.{}", "3".repeat(32)));
        let forty = format!("1.{}", "0".repeat(40));
        assert_eq!(quotient(&forty, "3"), format!("0.{}", "3".repeat(40)));
        let capped = format!("1.{}", "0".repeat(1001));
        assert_eq!(quotient(&capped, "3"), format!("0.{}", "3".repeat(1000)));
        assert_eq!(quotient("1", "4"), "0.25");
        assert_eq!(quotient("100", "1"), "1E+2");
        assert_eq!(quotient("0.00", "7"), "0");
        assert_eq!(quotient("-1", "6"), format!("-0.1{}7", "6".repeat(30)));
        assert_eq!(quotient("1e-1000000000", "3"), "0");
        assert_eq!(
            decimal_op(Divide, "1", "0"),
            Err("BigInteger divide by zero".to_string())
        );
        assert_eq!(
            decimal_op(Divide, "1e1000000", "3"),
            Err("the decimal result would need more than 100000 digits".to_string())
        );
    }

    /// `%` as Java's `BigDecimal.remainder` (ScyllaDB's test_decimal_modulo, Cassandra's
    /// OperationFctsTest).
    #[test]
    fn decimal_remainders_are_exact() {
        use ArithmeticOp::Modulo;
        let rem = |a: &str, b: &str| decimal_op(Modulo, a, b).unwrap();
        assert_eq!(rem("7", "3"), "1");
        assert_eq!(rem("7.5", "2"), "1.5");
        assert_eq!(rem("-7", "3"), "-1");
        assert_eq!(rem("7", "-3"), "1");
        assert_eq!(rem("1e35", "3"), "1");
        assert_eq!(rem("1.7", "0.5"), "0.2");
        assert_eq!(rem("7", "8.5"), "7");
        assert_eq!(rem("123456789112345678921234567893123456", "2"), "0");
        assert_eq!(rem("123456789112345678921234567893123456", "2.0"), "0.0");
        assert_eq!(rem("1000", "0.5"), "0");
        assert_eq!(rem("1", "0.3"), "0.1");
        assert_eq!(
            decimal_op(Modulo, "1", "0"),
            Err("Division by zero".to_string())
        );
        assert_eq!(
            decimal_op(Modulo, "0", "0"),
            Err("Division undefined".to_string())
        );
        assert_eq!(
            decimal_op(Modulo, "1e1000000", "3"),
            Err("the decimal result would need more than 100000 digits".to_string())
        );
    }

    #[test]
    fn doubles_become_decimals_as_java_writes_them() {
        let text =
            |f: f64| super::super::numeric::decimal_java_string(&java_double_decimal(f).unwrap());
        assert_eq!(text(4.0), "4.0");
        assert_eq!(text(8.5), "8.5");
        assert_eq!(text(1e7), "1.0E+7");
        assert_eq!(text(0.001), "0.001");
        assert_eq!(text(0.0001), "0.00010");
        assert_eq!(text(-2147483657.0), "-2147483657");
        assert_eq!(text(0.0), "0.0");
    }

    #[test]
    fn timestamps_and_dates_move_by_durations() {
        let ts = CqlValue::Timestamp(1_475_000_000_000);
        let ten_minutes = CqlValue::Duration(Duration {
            months: 0,
            days: 0,
            nanos: 600_000_000_000,
        });
        assert_eq!(
            apply(
                ArithmeticOp::Subtract,
                &ts,
                &ten_minutes,
                &CqlType::Timestamp
            ),
            Ok(CqlValue::Timestamp(1_475_000_000_000 - 600_000))
        );
        let micro = CqlValue::Duration(Duration {
            months: 0,
            days: 0,
            nanos: 10_000,
        });
        assert_eq!(
            apply(ArithmeticOp::Subtract, &ts, &micro, &CqlType::Timestamp),
            Err("The duration must have a millisecond precision. Was: 10us".to_string())
        );
        // 2016-01-31 + 1 month = 2016-02-29.
        let jan31 = days_from_civil(2016, 1, 31);
        let month = CqlValue::Duration(Duration {
            months: 1,
            days: 0,
            nanos: 0,
        });
        let date = CqlValue::Date((jan31 + i64::from(EPOCH_DATE)) as u32);
        let feb29 = days_from_civil(2016, 2, 29);
        assert_eq!(
            apply(ArithmeticOp::Add, &date, &month, &CqlType::Date),
            Ok(CqlValue::Date((feb29 + i64::from(EPOCH_DATE)) as u32))
        );
    }
}
