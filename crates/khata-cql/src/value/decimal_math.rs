//! `exp`, `log` and `log10` of a `decimal` as Cassandra 5.0's `DecimalType` computes them: to
//! as many significant digits as the argument has, at least 32 and at most 10,000, rounded half
//! to even (`BigDecimalMath` with `new MathContext(precision, HALF_EVEN)`).
//!
//! The work is in fixed point on big integers: a value `n` at `w` digits stands for
//! `n / 10^w`. Each function computes with 20 guard digits more than it returns, so the rounding
//! of the last digit is exact except for results within 10^-20 of a tie.

use num_bigint::{BigInt, Sign};

use super::Decimal;
use super::arith::digit_count;

/// The fewest significant digits a result has (`DecimalType.MIN_SIGNIFICANT_DIGITS`).
const MIN_DIGITS: u64 = 32;
/// The most (`DecimalType.MAX_PRECISION`).
const MAX_DIGITS: u64 = 10_000;
/// Digits computed beyond those returned.
const GUARD: u64 = 20;
/// The largest magnitude `exp` takes: its result's exponent must fit a Java `int` scale.
const EXP_LIMIT: i64 = 1_000_000_000;

fn ten_pow(n: u64) -> BigInt {
    BigInt::from(10u32).pow(n as u32)
}

/// Digits of the result for an argument of this precision.
fn result_digits(x: &Decimal) -> u64 {
    digit_count(&x.unscaled).clamp(MIN_DIGITS, MAX_DIGITS)
}

/// `atanh(1/k)` at `w` digits: the sum of `k^-(2i+1) / (2i+1)`.
fn atanh_inverse(k: u32, w: u64) -> BigInt {
    let k2 = BigInt::from(k) * k;
    let mut power = ten_pow(w) / k;
    let mut sum = power.clone();
    let mut i: u32 = 1;
    loop {
        power /= &k2;
        if power.sign() == Sign::NoSign {
            return sum;
        }
        sum += &power / (2 * i + 1);
        i += 1;
    }
}

/// `ln 2` and `ln 10` at `w` digits (`ln 2 = 2 atanh(1/3)`, `ln 1.25 = 2 atanh(1/9)`).
fn logs(w: u64) -> (BigInt, BigInt) {
    let extra = w + 10;
    let ln2 = atanh_inverse(3, extra) * 2;
    let ln10 = &ln2 * 3 + atanh_inverse(9, extra) * 2;
    let scale = ten_pow(10);
    (ln2 / &scale, ln10 / scale)
}

/// `n` (at `w` digits) rounded to `digits` significant digits, half to even, as a decimal.
fn round_to(n: BigInt, w: u64, digits: u64) -> Result<Decimal, String> {
    let have = digit_count(&n);
    let (mut unscaled, mut dropped) = if have > digits {
        let drop = have - digits;
        let divisor = ten_pow(drop);
        let (q, r) = (&n / &divisor, &n % &divisor);
        let twice = BigInt::from_biguint(Sign::Plus, r.magnitude().clone()) * 2u32;
        let divisor_mag = BigInt::from_biguint(Sign::Plus, divisor.magnitude().clone());
        let up = match twice.cmp(&divisor_mag) {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => (&q % 2u32).sign() != Sign::NoSign,
        };
        let q = if !up {
            q
        } else if n.sign() == Sign::Minus {
            q - 1
        } else {
            q + 1
        };
        (q, drop)
    } else {
        (n, 0)
    };
    // A carry (9.99.. to 10.0..) leaves one digit too many, a zero.
    if digit_count(&unscaled) > digits {
        unscaled /= 10;
        dropped += 1;
    }
    let scale = w as i64 - dropped as i64;
    let scale = i32::try_from(scale).map_err(|_| "Overflow".to_string())?;
    Ok(Decimal { unscaled, scale })
}

/// `x` at `w` digits, truncated.
fn fixed(x: &Decimal, w: u64) -> BigInt {
    let shift = w as i64 - i64::from(x.scale);
    if shift >= 0 {
        &x.unscaled * ten_pow(shift as u64)
    } else {
        &x.unscaled / ten_pow(shift.unsigned_abs())
    }
}

/// `e^x`.
pub(crate) fn exp(x: &Decimal) -> Result<Decimal, String> {
    if x.unscaled.sign() == Sign::NoSign {
        return Ok(Decimal {
            unscaled: BigInt::from(1),
            scale: 0,
        });
    }
    let digits = result_digits(x);
    // |x| beyond the limit: the result's exponent would leave a Java int.
    let whole = fixed(x, 0);
    if whole > BigInt::from(EXP_LIMIT) {
        return Err("Overflow".into());
    }
    if whole < BigInt::from(-EXP_LIMIT) {
        return Err("Underflow".into());
    }
    let w = digits + GUARD;
    let one = ten_pow(w);
    let (_, ln10) = logs(w);
    // x = k ln 10 + r with 0 <= r < ln 10, so e^x = 10^k e^r with 1 <= e^r < 10.
    let big_x = fixed(x, w);
    let (mut k, mut r) = (&big_x / &ln10, &big_x % &ln10);
    if r.sign() == Sign::Minus {
        k -= 1;
        r += &ln10;
    }
    // e^r = (e^(r / 2^m))^(2^m), the series on an argument under 0.001.
    let threshold = &one / 1000;
    let mut halvings = 0u32;
    while r > threshold {
        r /= 2;
        halvings += 1;
    }
    let mut sum = one.clone();
    let mut term = one.clone();
    let mut i: u32 = 1;
    loop {
        term = term * &r / &one / i;
        if term.sign() == Sign::NoSign {
            break;
        }
        sum += &term;
        i += 1;
    }
    for _ in 0..halvings {
        sum = &sum * &sum / &one;
    }
    let k = i64::try_from(k).map_err(|_| "Overflow".to_string())?;
    let mut result = round_to(sum, w, digits)?;
    result.scale = i32::try_from(i64::from(result.scale) - k).map_err(|_| {
        if k > 0 {
            "Overflow".to_string()
        } else {
            "Underflow".to_string()
        }
    })?;
    Ok(result)
}

/// `ln x` at `w` digits, for `x > 0`.
fn ln_fixed(x: &Decimal, w: u64) -> BigInt {
    let one = ten_pow(w);
    let (ln2, ln10) = logs(w);
    // x = m 10^e with 1 <= m < 10.
    let d = digit_count(&x.unscaled) as i64;
    let e = d - 1 - i64::from(x.scale);
    let mut m = &x.unscaled * ten_pow(w) / ten_pow((d - 1) as u64);
    // m / 2^j in (0.625, 1.25].
    let limit = &one * 5 / 4;
    let mut halvings: u32 = 0;
    while m > limit {
        m /= 2;
        halvings += 1;
    }
    // ln m = 2 atanh(z), z = (m - 1) / (m + 1).
    let z = (&m - &one) * &one / (&m + &one);
    let z2 = &z * &z / &one;
    let mut power = z.clone();
    let mut sum = z;
    let mut i: u32 = 1;
    loop {
        power = power * &z2 / &one;
        if power.sign() == Sign::NoSign {
            break;
        }
        sum += &power / (2 * i + 1);
        i += 1;
    }
    sum * 2 + ln2 * halvings + ln10 * e
}

/// `ln x` or `log10 x` (`ten`), for `x > 0`, rounded to the result's digits.
fn log_of(x: &Decimal, ten: bool) -> Result<Decimal, String> {
    let digits = result_digits(x);
    let mut w = digits + GUARD;
    // Near x = 1 the result is small and needs more fraction digits for its significant ones.
    for _ in 0..8 {
        let mut l = ln_fixed(x, w);
        if ten {
            let (_, ln10) = logs(w);
            l = l * ten_pow(w) / ln10;
        }
        let have = digit_count(&l);
        if have >= digits + GUARD / 2 || w > MAX_DIGITS * 4 {
            return round_to(l, w, digits);
        }
        w += digits + GUARD - have;
    }
    Err("the logarithm needs more digits than khata computes with".into())
}

/// The natural logarithm; Cassandra refuses zero and less.
pub(crate) fn ln(x: &Decimal) -> Result<Decimal, String> {
    if x.unscaled.sign() != Sign::Plus {
        return Err("Natural log of number zero or less".into());
    }
    if let Some(k) = power_of_ten(x)
        && k == 0
    {
        return Ok(Decimal {
            unscaled: BigInt::from(0),
            scale: 0,
        });
    }
    log_of(x, false)
}

/// The base-10 logarithm; an exact power of ten gives its exponent.
pub(crate) fn log10(x: &Decimal) -> Result<Decimal, String> {
    if x.unscaled.sign() != Sign::Plus {
        return Err("Log10 of number zero or less".into());
    }
    if let Some(k) = power_of_ten(x) {
        return Ok(Decimal {
            unscaled: BigInt::from(k),
            scale: 0,
        });
    }
    log_of(x, true)
}

/// `k` when `x` is `10^k`.
fn power_of_ten(x: &Decimal) -> Option<i64> {
    let mut u = x.unscaled.clone();
    let mut k = -i64::from(x.scale);
    let ten = BigInt::from(10);
    while u > BigInt::from(1) {
        let (q, r) = (&u / &ten, &u % &ten);
        if r.sign() != Sign::NoSign {
            return None;
        }
        u = q;
        k += 1;
    }
    (u == BigInt::from(1)).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal {
        let (digits, scale) = match s.split_once('.') {
            Some((a, b)) => (format!("{a}{b}"), b.len() as i32),
            None => (s.to_string(), 0),
        };
        Decimal {
            unscaled: digits.parse().unwrap(),
            scale,
        }
    }

    fn text(d: &Decimal) -> String {
        super::super::decimal_plain_string(d)
    }

    #[test]
    fn exp_to_32_digits() {
        assert_eq!(
            text(&exp(&dec("1")).unwrap()),
            "2.7182818284590452353602874713527"
        );
        assert_eq!(text(&exp(&dec("0")).unwrap()), "1");
        assert_eq!(
            text(&exp(&dec("-1")).unwrap()),
            "0.36787944117144232159552377016146"
        );
        // e^10 = 22026.465794806716516957900645284...
        assert_eq!(
            text(&exp(&dec("10")).unwrap()),
            "22026.465794806716516957900645284"
        );
    }

    #[test]
    fn logs_to_32_digits() {
        assert_eq!(
            text(&ln(&dec("2")).unwrap()),
            "0.69314718055994530941723212145818"
        );
        assert_eq!(text(&ln(&dec("1")).unwrap()), "0");
        assert_eq!(text(&log10(&dec("100")).unwrap()), "2");
        assert_eq!(text(&log10(&dec("0.001")).unwrap()), "-3");
        assert_eq!(
            text(&log10(&dec("2")).unwrap()),
            "0.30102999566398119521373889472449"
        );
        // Near 1: ln(1.0000000001) = 9.9999999995000000000333333333308e-11.
        assert_eq!(
            text(&ln(&dec("1.0000000001")).unwrap()),
            "0.000000000099999999995000000000333333333308"
        );
        assert!(ln(&dec("0")).is_err());
        assert!(log10(&dec("-1")).is_err());
    }
}
