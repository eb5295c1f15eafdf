//! Aggregates of a SELECT: `count(*)`, `count(c)`, `min`, `max`, `sum`, `avg`, over the whole
//! result or per `GROUP BY` group (a prefix of the primary key, so groups arrive one after the
//! other and are folded as they come, in constant memory per group).
//!
//! As in Cassandra: a plain column next to aggregates shows its value in the group's first
//! row; `sum` and `avg` return the column's type (integer `avg` truncates, integer `sum`
//! wraps); without `GROUP BY` an empty result still gives one row (`count` 0, the others null).
//! `float` and `double` sums are Kahan-compensated, in doubles, as Cassandra's `FloatSumAggregate`
//! (seventeen tenths sum to 15.3, not 15.299999999999999), and their `avg` goes on exactly, in
//! decimal, once the sum overflows (three `Double.MAX_VALUE` average to it, not infinity).

use bytes::Bytes;
use khata_types::schema::CqlType;

use num_bigint::{BigInt, Sign};

use super::error::ExecError;
use crate::value::{CqlValue, Decimal, compare};

/// What one output column computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggKind {
    /// A plain value: the group's first.
    First,
    /// `count(*)`
    CountRows,
    /// `count(c)`: non-null values.
    Count,
    Min,
    Max,
    Sum,
    Avg,
}

impl AggKind {
    pub fn from_name(name: &str) -> Option<AggKind> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggKind::Count,
            "min" => AggKind::Min,
            "max" => AggKind::Max,
            "sum" => AggKind::Sum,
            "avg" => AggKind::Avg,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
enum Acc {
    First(Option<Option<Bytes>>),
    Count(i64),
    Extreme(Option<CqlValue>),
    Sum {
        int: i128,
        float: FloatSum,
        /// `varint` and `decimal`: exact, as `unscaled * 10^-scale`.
        big: BigInt,
        scale: i32,
        n: i64,
    },
}

/// A sum of `float` or `double` values as Cassandra's `FloatSumAggregate` and
/// `FloatAvgAggregate` make it: in doubles with Kahan's compensation; for `avg`, exactly (as
/// `BigDecimal.valueOf` of each value) from the value that overflows the double sum on.
#[derive(Clone, Debug, Default)]
struct FloatSum {
    sum: f64,
    compensation: f64,
    /// The plain sum, which is the total when the compensated one is NaN from adding infinities
    /// of one sign.
    simple: f64,
    /// After an overflow (`avg` only): the exact sum, `unscaled * 10^-scale`.
    exact: Option<(BigInt, i32)>,
}

impl FloatSum {
    fn add(&mut self, d: f64, exact_on_overflow: bool) -> Result<(), ExecError> {
        if let Some((big, scale)) = self.exact.take() {
            match decimal_of(d) {
                Some((u, s)) => self.exact = Some(add_scaled(big, scale, &u, s)?),
                // An infinity or NaN after the overflow (Cassandra fails on it): the double sum.
                None => {
                    *self = FloatSum {
                        sum: d,
                        simple: d,
                        ..FloatSum::default()
                    }
                }
            }
            return Ok(());
        }
        self.simple += d;
        let prev = self.sum;
        let tmp = d - self.compensation;
        let rounded = self.sum + tmp;
        self.compensation = (rounded - self.sum) - tmp;
        self.sum = rounded;
        if exact_on_overflow
            && self.sum.is_infinite()
            && !d.is_infinite()
            && let (Some((a, sa)), Some((b, sb))) = (decimal_of(prev), decimal_of(d))
        {
            self.exact = Some(add_scaled(a, sa, &b, sb)?);
        }
        Ok(())
    }

    /// The sum (Cassandra's `FloatSumAggregate.computeInternal`).
    fn total(&self) -> f64 {
        let tmp = self.sum + self.compensation;
        if tmp.is_nan() && self.simple.is_infinite() {
            self.simple
        } else {
            tmp
        }
    }

    /// The average of `n` values (`FloatAvgAggregate.computeInternal`): an exact sum is divided
    /// at its scale, rounding half to even, then made a double.
    fn average(&self, n: i64) -> f64 {
        if n == 0 {
            return 0.0;
        }
        match &self.exact {
            Some((big, scale)) => format!("{}e{}", divide_half_even(big, n), -i64::from(*scale))
                .parse()
                .unwrap_or(f64::NAN),
            None => self.total() / n as f64,
        }
    }
}

/// A finite double as a decimal `unscaled * 10^-scale` of its shortest digits, as Java's
/// `BigDecimal.valueOf(double)` (of `Double.toString`) takes it.
fn decimal_of(d: f64) -> Option<(BigInt, i32)> {
    if !d.is_finite() {
        return None;
    }
    // `{:e}` is the shortest representation that reads back as `d`: `-1.2345e-7`.
    let text = format!("{d:e}");
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let fraction = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    let unscaled: BigInt = mantissa.replace('.', "").parse().ok()?;
    Some((unscaled, fraction - exponent))
}

/// Decimal scales further apart than this are refused rather than aligned (aligning would
/// build a number of that many digits).
const MAX_SCALE_GAP: i64 = 10_000;

/// Folds rows into aggregate rows.
#[derive(Debug)]
pub(crate) struct Aggregator {
    kinds: Vec<AggKind>,
    types: Vec<CqlType>,
    grouped: bool,
    current: Option<(Bytes, Vec<Acc>)>,
    done: Vec<Vec<Option<Bytes>>>,
}

/// `a * 10^-sa + b * 10^-sb`, exactly, at the larger scale.
fn add_scaled(a: BigInt, sa: i32, b: &BigInt, sb: i32) -> Result<(BigInt, i32), ExecError> {
    if (i64::from(sa) - i64::from(sb)).abs() > MAX_SCALE_GAP {
        return Err(ExecError::invalid(
            "decimal values too far apart in scale to be summed",
        ));
    }
    let ten = BigInt::from(10);
    Ok(if sa >= sb {
        (a + b * ten.pow((sa - sb) as u32), sa)
    } else {
        (a * ten.pow((sb - sa) as u32) + b, sb)
    })
}

/// `x / n` rounded half to even, as Java's `BigDecimal.divide(n, HALF_EVEN)` at `x`'s scale.
fn divide_half_even(x: &BigInt, n: i64) -> BigInt {
    let d = BigInt::from(n);
    let q = x / &d;
    let r = x % &d;
    let twice: BigInt = BigInt::from_biguint(Sign::Plus, r.magnitude().clone()) * 2u32;
    let away = match twice.cmp(&BigInt::from(n.unsigned_abs())) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => &q % 2 != BigInt::default(),
        std::cmp::Ordering::Less => false,
    };
    if !away {
        return q;
    }
    if (x.sign() == Sign::Minus) != (n < 0) {
        q - 1
    } else {
        q + 1
    }
}

fn number(ty: &CqlType, v: &CqlValue) -> Result<(i128, f64, bool), ExecError> {
    Ok(match v {
        CqlValue::Tinyint(x) => (i128::from(*x), 0.0, false),
        CqlValue::Smallint(x) => (i128::from(*x), 0.0, false),
        CqlValue::Int(x) => (i128::from(*x), 0.0, false),
        CqlValue::Bigint(x) | CqlValue::Counter(x) => (i128::from(*x), 0.0, false),
        CqlValue::Float(x) => (0, f64::from(*x), true),
        CqlValue::Double(x) => (0, *x, true),
        CqlValue::Varint(_) | CqlValue::Decimal(_) => (0, 0.0, false),
        _ => {
            return Err(ExecError::invalid(format!(
                "sum/avg of {} is not supported by khata yet",
                khata_types::type_text::type_text(ty)
            )));
        }
    })
}

fn from_number(ty: &CqlType, int: i128, float: f64, big: BigInt, scale: i32) -> Option<Bytes> {
    let v = match ty {
        CqlType::Varint => CqlValue::Varint(big),
        CqlType::Decimal => CqlValue::Decimal(Decimal {
            unscaled: big,
            scale,
        }),
        CqlType::Tinyint => CqlValue::Tinyint(int as i8),
        CqlType::Smallint => CqlValue::Smallint(int as i16),
        CqlType::Int => CqlValue::Int(int as i32),
        CqlType::Bigint => CqlValue::Bigint(int as i64),
        CqlType::Counter => CqlValue::Counter(int as i64),
        CqlType::Float => CqlValue::Float(float as f32),
        CqlType::Double => CqlValue::Double(float),
        _ => return None,
    };
    Some(Bytes::from(v.to_bytes(ty)))
}

impl Aggregator {
    /// `kinds[i]` over values of `types[i]`; `grouped` when there is a GROUP BY.
    pub fn new(kinds: Vec<AggKind>, types: Vec<CqlType>, grouped: bool) -> Self {
        Aggregator {
            kinds,
            types,
            grouped,
            current: None,
            done: Vec::new(),
        }
    }

    fn fresh(&self) -> Vec<Acc> {
        self.kinds
            .iter()
            .map(|k| match k {
                AggKind::First => Acc::First(None),
                AggKind::CountRows | AggKind::Count => Acc::Count(0),
                AggKind::Min | AggKind::Max => Acc::Extreme(None),
                AggKind::Sum | AggKind::Avg => Acc::Sum {
                    int: 0,
                    float: FloatSum::default(),
                    big: BigInt::default(),
                    scale: 0,
                    n: 0,
                },
            })
            .collect()
    }

    /// Add a row (its output values) of group `group`.
    pub fn add(&mut self, group: Bytes, row: Vec<Option<Bytes>>) -> Result<(), ExecError> {
        if self.current.as_ref().is_some_and(|(g, _)| *g != group) {
            self.close();
        }
        if self.current.is_none() {
            self.current = Some((group, self.fresh()));
        }
        let Some((_, accs)) = self.current.as_mut() else {
            return Ok(());
        };
        for (i, (acc, value)) in accs.iter_mut().zip(row).enumerate() {
            let ty = &self.types[i];
            match (self.kinds[i], acc) {
                (AggKind::First, Acc::First(first)) if first.is_none() => *first = Some(value),
                (AggKind::CountRows, Acc::Count(n)) => *n += 1,
                (AggKind::Count, Acc::Count(n)) => *n += i64::from(value.is_some()),
                (kind @ (AggKind::Min | AggKind::Max), Acc::Extreme(best)) => {
                    let Some(bytes) = value else { continue };
                    let Ok(v) = CqlValue::deserialize(ty, &bytes) else {
                        continue;
                    };
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let o = compare(ty, &v, b);
                            if kind == AggKind::Min {
                                o.is_lt()
                            } else {
                                o.is_gt()
                            }
                        }
                    };
                    if better {
                        *best = Some(v);
                    }
                }
                (
                    kind @ (AggKind::Sum | AggKind::Avg),
                    Acc::Sum {
                        int,
                        float,
                        big,
                        scale,
                        n,
                    },
                ) => {
                    let Some(bytes) = value else { continue };
                    let v = CqlValue::deserialize(ty, &bytes)
                        .map_err(|e| ExecError::invalid(e.to_string()))?;
                    match &v {
                        CqlValue::Varint(x) => *big += x,
                        CqlValue::Decimal(d) => {
                            let (sum, s) =
                                add_scaled(std::mem::take(big), *scale, &d.unscaled, d.scale)?;
                            *big = sum;
                            *scale = s;
                        }
                        _ => {
                            let (i, f, is_float) = number(ty, &v)?;
                            *int = int.wrapping_add(i);
                            if is_float {
                                float.add(f, kind == AggKind::Avg)?;
                            }
                        }
                    }
                    *n += 1;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn close(&mut self) {
        let Some((_, accs)) = self.current.take() else {
            return;
        };
        let row = accs
            .into_iter()
            .enumerate()
            .map(|(i, acc)| {
                let ty = &self.types[i];
                match (self.kinds[i], acc) {
                    (_, Acc::First(v)) => v.flatten(),
                    (_, Acc::Count(n)) => Some(Bytes::copy_from_slice(&n.to_be_bytes())),
                    (_, Acc::Extreme(v)) => v.map(|v| Bytes::from(v.to_bytes(ty))),
                    (
                        AggKind::Avg,
                        Acc::Sum {
                            int,
                            float,
                            big,
                            scale,
                            n,
                        },
                    ) => {
                        if n == 0 {
                            from_number(ty, 0, 0.0, BigInt::default(), 0)
                        } else {
                            // varint truncates as BigInteger.divide; decimal keeps the sum's
                            // scale and rounds half to even, as Cassandra's avg does.
                            let big = if *ty == CqlType::Decimal {
                                divide_half_even(&big, n)
                            } else {
                                big / n
                            };
                            from_number(ty, int / i128::from(n), float.average(n), big, scale)
                        }
                    }
                    (
                        _,
                        Acc::Sum {
                            int,
                            float,
                            big,
                            scale,
                            ..
                        },
                    ) => from_number(ty, int, float.total(), big, scale),
                }
            })
            .collect();
        self.done.push(row);
    }

    /// The aggregate rows.
    pub fn finish(mut self) -> Vec<Vec<Option<Bytes>>> {
        if self.current.is_none() && self.done.is_empty() && !self.grouped {
            // No rows and no groups: one row of empty aggregates.
            self.current = Some((Bytes::new(), self.fresh()));
        }
        self.close();
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i32) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(&v.to_be_bytes()))
    }

    #[test]
    fn folds_groups_in_order() {
        let mut a = Aggregator::new(
            vec![
                AggKind::First,
                AggKind::CountRows,
                AggKind::Min,
                AggKind::Max,
                AggKind::Sum,
                AggKind::Avg,
            ],
            vec![CqlType::Int; 6],
            true,
        );
        for (g, v) in [(1u8, 5), (1, 3), (2, 10)] {
            let row = vec![int(v), None, int(v), int(v), int(v), int(v)];
            a.add(Bytes::copy_from_slice(&[g]), row).unwrap();
        }
        let rows = a.finish();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][0], int(5));
        assert_eq!(
            rows[0][1],
            Some(Bytes::copy_from_slice(&2i64.to_be_bytes()))
        );
        assert_eq!(rows[0][2], int(3));
        assert_eq!(rows[0][3], int(5));
        assert_eq!(rows[0][4], int(8));
        assert_eq!(rows[0][5], int(4));
        assert_eq!(rows[1][4], int(10));
    }

    fn double(v: f64) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(&v.to_be_bytes()))
    }

    #[test]
    fn double_sums_are_compensated_and_averages_survive_overflow() {
        let mut a = Aggregator::new(
            vec![AggKind::Sum, AggKind::Avg],
            vec![CqlType::Double; 2],
            false,
        );
        for i in 1..=17 {
            let v = f64::from(i) / 10.0;
            a.add(Bytes::new(), vec![double(v), double(v)]).unwrap();
        }
        assert_eq!(a.finish()[0][0], double(15.3));
        let mut a = Aggregator::new(
            vec![AggKind::Avg, AggKind::Sum],
            vec![CqlType::Double; 2],
            false,
        );
        for _ in 0..3 {
            a.add(Bytes::new(), vec![double(f64::MAX), double(f64::MAX)])
                .unwrap();
        }
        let row = a.finish();
        assert_eq!(row[0][0], double(f64::MAX));
        assert_eq!(row[0][1], double(f64::INFINITY));
        assert_eq!(decimal_of(-1.25e-7), Some((BigInt::from(-125), 9)));
        assert_eq!(decimal_of(1e300), Some((BigInt::from(1), -300)));
    }

    #[test]
    fn no_rows_gives_one_empty_row_without_group_by() {
        let a = Aggregator::new(
            vec![AggKind::CountRows, AggKind::Max],
            vec![CqlType::Int; 2],
            false,
        );
        let rows = a.finish();
        assert_eq!(
            rows,
            vec![vec![
                Some(Bytes::copy_from_slice(&0i64.to_be_bytes())),
                None
            ]]
        );
        let grouped = Aggregator::new(vec![AggKind::CountRows], vec![CqlType::Int], true);
        assert!(grouped.finish().is_empty());
    }
}
