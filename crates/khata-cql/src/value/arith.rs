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
//! rounds to 34 significant digits, half to even (Java's `MathContext.DECIMAL128`); a number
//! becomes a decimal through Java's `BigDecimal.valueOf(double)`, so NaN and infinities are
//! refused. A `timestamp` or `date` plus or minus a `duration` adds calendar months, then days,
//! then the rest, in UTC.

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

/// Digits a `decimal` result keeps (`MathContext.DECIMAL128`).
const DECIMAL_PRECISION: u64 = 34;

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
    let java = super::numeric::java_double_string(f.abs());
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
fn digit_count(x: &BigInt) -> u64 {
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

fn pow10(n: u64) -> Result<BigInt, String> {
    if n as usize > MAX_LITERAL_DIGITS {
        return Err("Overflow".into());
    }
    Ok(BigInt::from(10).pow(n as u32))
}

/// `x / 10^n`, rounded half to even.
fn shed_digits(x: &BigInt, n: u64) -> Result<(BigInt, bool), String> {
    let divisor = pow10(n)?;
    let (q, r) = (x / &divisor, x % &divisor);
    if is_zero(&r) {
        return Ok((q, true));
    }
    let twice: BigInt = BigInt::from_biguint(Sign::Plus, r.magnitude().clone()) * 2;
    let up = match twice.cmp(&divisor) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => q.magnitude().iter_u32_digits().next().unwrap_or(0) % 2 == 1,
    };
    let q = if up {
        if x.sign() == Sign::Minus {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    };
    Ok((q, false))
}

/// `d` rounded to [`DECIMAL_PRECISION`] digits (`BigDecimal.round(DECIMAL128)`).
fn round(d: Decimal) -> Result<Decimal, String> {
    let digits = digit_count(&d.unscaled);
    if digits <= DECIMAL_PRECISION {
        return Ok(d);
    }
    let drop = digits - DECIMAL_PRECISION;
    let (mut unscaled, _) = shed_digits(&d.unscaled, drop)?;
    let mut scale = i64::from(d.scale) - drop as i64;
    // Rounding up may carry into one more digit (999.. -> 1000..).
    if digit_count(&unscaled) > DECIMAL_PRECISION {
        unscaled /= 10;
        scale -= 1;
    }
    Ok(Decimal {
        unscaled,
        scale: i32::try_from(scale).map_err(|_| "Underflow")?,
    })
}

/// Both operands' unscaled values at the larger scale.
fn aligned(a: &Decimal, b: &Decimal) -> Result<(BigInt, BigInt, i32), String> {
    let scale = a.scale.max(b.scale);
    let up = |d: &Decimal| -> Result<BigInt, String> {
        Ok(&d.unscaled * pow10(u64::from((scale - d.scale).unsigned_abs()))?)
    };
    Ok((up(a)?, up(b)?, scale))
}

fn decimal(op: ArithmeticOp, a: &Decimal, b: &Decimal) -> Result<Decimal, String> {
    match op {
        ArithmeticOp::Add | ArithmeticOp::Subtract => {
            let (x, y, scale) = aligned(a, b)?;
            let unscaled = if op == ArithmeticOp::Add {
                x + y
            } else {
                x - y
            };
            round(Decimal { unscaled, scale })
        }
        ArithmeticOp::Multiply => {
            let scale =
                i32::try_from(i64::from(a.scale) + i64::from(b.scale)).map_err(|_| "Overflow")?;
            round(Decimal {
                unscaled: &a.unscaled * &b.unscaled,
                scale,
            })
        }
        ArithmeticOp::Divide => divide(a, b),
        ArithmeticOp::Modulo => {
            if is_zero(&b.unscaled) {
                return Err("Division by zero".into());
            }
            let (x, y, scale) = aligned(a, b)?;
            round(Decimal {
                unscaled: x % y,
                scale,
            })
        }
    }
}

/// `BigDecimal.divide(b, DECIMAL128)`: the quotient to 34 digits, half to even; an exact
/// quotient loses its trailing zeros down to the preferred scale `a.scale - b.scale`.
fn divide(a: &Decimal, b: &Decimal) -> Result<Decimal, String> {
    if is_zero(&b.unscaled) {
        return Err(if is_zero(&a.unscaled) {
            "Division undefined".into()
        } else {
            "Division by zero".into()
        });
    }
    let preferred = i64::from(a.scale) - i64::from(b.scale);
    if is_zero(&a.unscaled) {
        return Ok(Decimal {
            unscaled: BigInt::default(),
            scale: preferred.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        });
    }
    // Enough digits in the dividend for a quotient of at least 35 digits.
    let (da, db) = (digit_count(&a.unscaled), digit_count(&b.unscaled));
    let extra = (DECIMAL_PRECISION + 1 + db).saturating_sub(da);
    let dividend = &a.unscaled * pow10(extra)?;
    let (q, r) = (&dividend / &b.unscaled, &dividend % &b.unscaled);
    let mut scale = preferred + extra as i64;
    let exact_so_far = is_zero(&r);
    // Round to 34 digits; a nonzero remainder breaks a tie upwards.
    let digits = digit_count(&q);
    let (mut unscaled, mut exact) = (q, exact_so_far);
    if digits > DECIMAL_PRECISION {
        let drop = digits - DECIMAL_PRECISION;
        let divisor = pow10(drop)?;
        let (hi, lo) = (&unscaled / &divisor, &unscaled % &divisor);
        let twice: BigInt = BigInt::from_biguint(Sign::Plus, lo.magnitude().clone()) * 2;
        let up = match twice.cmp(&divisor) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => {
                !exact_so_far || hi.magnitude().iter_u32_digits().next().unwrap_or(0) % 2 == 1
            }
        };
        exact = exact_so_far && is_zero(&lo);
        unscaled = if up {
            if unscaled.sign() == Sign::Minus {
                hi - 1
            } else {
                hi + 1
            }
        } else {
            hi
        };
        scale -= drop as i64;
        if digit_count(&unscaled) > DECIMAL_PRECISION {
            unscaled /= 10;
            scale -= 1;
        }
    }
    if exact {
        let ten = BigInt::from(10);
        while scale > preferred && is_zero(&(&unscaled % &ten)) && !is_zero(&unscaled) {
            unscaled /= &ten;
            scale -= 1;
        }
    }
    Ok(Decimal {
        unscaled,
        scale: i32::try_from(scale).map_err(|_| "Underflow")?,
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
            "2.833333333333333333333333333333333"
        );
        assert_eq!(op(ArithmeticOp::Divide, &d("8.5"), &d("8.5")), "1");
        assert_eq!(
            op(ArithmeticOp::Divide, &d("8.5"), &CqlValue::Smallint(2)),
            "4.25"
        );
        assert_eq!(
            op(ArithmeticOp::Divide, &CqlValue::Tinyint(1), &d("8.5")),
            "0.1176470588235294117647058823529412"
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
            "1.076923076923076923076923076923077"
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
        assert_eq!(r, Err("Division by zero".to_string()));
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
