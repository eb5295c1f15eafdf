//! The native scalar functions Cassandra 5.0 added, in selections: the vector similarities
//! (`similarity_cosine`, `similarity_euclidean`, `similarity_dot_product`), the collection
//! functions (`map_keys`, `map_values`, `collection_count`, `collection_min`,
//! `collection_max`, `collection_sum`, `collection_avg`) and the math functions (`abs`, `exp`,
//! `log`, `log10`, `round`).
//!
//! Each is resolved against its arguments' types once per statement, with Cassandra's
//! refusals (`FunctionFactory`, `FunctionParameter`, `VectorFcts`), and computed per row with
//! Cassandra's arithmetic: the similarities in `float` as jvector scores them, the collection
//! aggregates by the same folds as `min`, `max`, `sum` and `avg` over rows, the math functions
//! as each type's `NumberType` does (`(int) Math.exp(x)` for an `int`, 32 significant digits
//! for a `decimal`).

use bytes::Bytes;
use khata_types::schema::CqlType;

use super::aggregate::{AggKind, Aggregator};
use super::error::ExecError;
use super::selector::Computed;
use crate::language::ast::{Selectable, Term};
use crate::value::{CqlValue, Decimal, decimal_exp, decimal_ln, decimal_log10};

/// How two vectors are scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Similarity {
    /// `(1 + cos) / 2`.
    Cosine,
    /// `1 / (1 + |a - b|^2)`.
    Euclidean,
    /// `(1 + a . b) / 2`.
    DotProduct,
}

/// The score of vectors `a` and `b` (of one dimension) under `kind`, as Cassandra's
/// `similarity_*` functions and its vector indexes compute it; none for cosine when either is
/// all zeros (no direction to compare).
pub(super) fn similarity_score(kind: Similarity, a: &[f32], b: &[f32]) -> Option<f32> {
    Some(match kind {
        Similarity::Cosine => {
            let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
            for (x, y) in a.iter().zip(b) {
                dot += x * y;
                na += x * x;
                nb += y * y;
            }
            if na == 0.0 || nb == 0.0 {
                return None;
            }
            (1.0 + dot / (na * nb).sqrt()) / 2.0
        }
        Similarity::Euclidean => {
            let d: f32 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
            1.0 / (1.0 + d)
        }
        Similarity::DotProduct => {
            let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            (1.0 + dot) / 2.0
        }
    })
}

/// A math function of `MathFcts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Math {
    Abs,
    Exp,
    Log,
    Log10,
    Round,
}

/// A function of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Native {
    Similarity(Similarity),
    MapKeys,
    MapValues,
    CollectionCount,
    /// `collection_min`, `_max`, `_sum`, `_avg`: the aggregate over the elements.
    Collection(AggKind),
    Math(Math),
    /// `floor(t, duration[, start])` (see `floor.rs`).
    Floor,
}

impl Native {
    /// Its name.
    fn name(self) -> &'static str {
        match self {
            Native::Similarity(Similarity::Cosine) => "similarity_cosine",
            Native::Similarity(Similarity::Euclidean) => "similarity_euclidean",
            Native::Similarity(Similarity::DotProduct) => "similarity_dot_product",
            Native::MapKeys => "map_keys",
            Native::MapValues => "map_values",
            Native::CollectionCount => "collection_count",
            Native::Collection(AggKind::Min) => "collection_min",
            Native::Collection(AggKind::Max) => "collection_max",
            Native::Collection(AggKind::Sum) => "collection_sum",
            Native::Collection(_) => "collection_avg",
            Native::Math(Math::Abs) => "abs",
            Native::Math(Math::Exp) => "exp",
            Native::Math(Math::Log) => "log",
            Native::Math(Math::Log10) => "log10",
            Native::Math(Math::Round) => "round",
            Native::Floor => "floor",
        }
    }
}

/// The function of a (lower case) name, if this module has it.
pub(super) fn lookup(name: &str) -> Option<Native> {
    Some(match name {
        "similarity_cosine" => Native::Similarity(Similarity::Cosine),
        "similarity_euclidean" => Native::Similarity(Similarity::Euclidean),
        "similarity_dot_product" => Native::Similarity(Similarity::DotProduct),
        "map_keys" => Native::MapKeys,
        "map_values" => Native::MapValues,
        "collection_count" => Native::CollectionCount,
        "collection_min" => Native::Collection(AggKind::Min),
        "collection_max" => Native::Collection(AggKind::Max),
        "collection_sum" => Native::Collection(AggKind::Sum),
        "collection_avg" => Native::Collection(AggKind::Avg),
        "abs" => Native::Math(Math::Abs),
        "exp" => Native::Math(Math::Exp),
        "log" => Native::Math(Math::Log),
        "log10" => Native::Math(Math::Log10),
        "round" => Native::Math(Math::Round),
        "floor" => Native::Floor,
        _ => return None,
    })
}

/// The numeric types, in the order Cassandra lists the math functions' overloads.
const NUMBERS: [CqlType; 9] = [
    CqlType::Tinyint,
    CqlType::Smallint,
    CqlType::Int,
    CqlType::Float,
    CqlType::Bigint,
    CqlType::Double,
    CqlType::Varint,
    CqlType::Decimal,
    CqlType::Counter,
];

fn type_text(ty: &CqlType) -> String {
    khata_types::type_text::type_text(ty)
}

/// The text Cassandra shows for an argument in its messages.
fn arg_text(s: &Selectable) -> String {
    match s {
        Selectable::Term(Term::Literal(crate::language::ast::Literal::Null)) => "NULL".into(),
        other => other.to_string(),
    }
}

/// What compiles an argument, where a value of the given type is wanted (a literal or marker
/// takes it).
pub(super) type CompileArg<'a> =
    dyn FnMut(&Selectable, Option<&CqlType>) -> Result<Computed, ExecError> + 'a;

/// Resolve `f` called with `args`: the compiled arguments and the result
/// type.
pub(super) fn compile(
    f: Native,
    args: &[Selectable],
    compile_arg: &mut CompileArg<'_>,
) -> Result<(Vec<Computed>, CqlType), ExecError> {
    let qualified = format!("system.{}", f.name());
    if f == Native::Floor {
        return compile_floor(&qualified, args, compile_arg);
    }
    let parameters = match f {
        Native::Similarity(_) => "any, same",
        Native::MapKeys | Native::MapValues => "map",
        Native::CollectionCount => "collection",
        Native::Collection(_) | Native::Math(_) | Native::Floor => "numeric_set_or_list",
    };
    let expected_args = if matches!(f, Native::Similarity(_)) {
        2
    } else {
        1
    };
    if let Native::Math(_) = f {
        if args.len() != 1 {
            return Err(ExecError::invalid(format!(
                "Invalid number of arguments in call to function {qualified}: 1 required but {} provided",
                args.len()
            )));
        }
    } else if args.len() != expected_args {
        return Err(ExecError::invalid(format!(
            "Invalid number of arguments for function {qualified}({parameters})"
        )));
    }
    let cannot_infer = |a: &Selectable| {
        ExecError::invalid(format!(
            "Cannot infer type of argument {} in call to function {qualified}({parameters}): use type casts to disambiguate",
            arg_text(a)
        ))
    };
    // Arguments that have a type of their own (columns, functions, hinted terms). A column
    // (or a selection of one) that does not compile is the statement's error, as an undefined
    // column is; an expression over terms may just need the function's type.
    let typed =
        |a: &Selectable, compile_arg: &mut CompileArg<'_>| -> Result<Option<Computed>, ExecError> {
            match a {
                Selectable::Term(_)
                | Selectable::List(_)
                | Selectable::Set(_)
                | Selectable::Map(_)
                | Selectable::Tuple(_) => Ok(None),
                Selectable::Negation(_) | Selectable::Arithmetic { .. } => {
                    Ok(compile_arg(a, None).ok())
                }
                _ => compile_arg(a, None).map(Some),
            }
        };
    match f {
        Native::Similarity(_) => {
            let refuse = |a: &Selectable, ty: &CqlType| {
                ExecError::invalid(format!(
                    "Function {qualified} requires a float vector argument, but found argument {} of type {}",
                    arg_text(a),
                    type_text(ty)
                ))
            };
            let known = args
                .iter()
                .map(|a| typed(a, compile_arg))
                .collect::<Result<Vec<Option<Computed>>, ExecError>>()?;
            for (a, c) in args.iter().zip(&known) {
                if let Some(c) = c
                    && !matches!(&c.ty, CqlType::Vector { element, .. } if **element == CqlType::Float)
                {
                    return Err(refuse(a, &c.ty));
                }
            }
            // The vector type: an argument's own, else a list literal's length of floats.
            let ty = match known.iter().flatten().next() {
                Some(c) => c.ty.clone(),
                None => match args.iter().find_map(|a| match a {
                    Selectable::List(items) => Some(items.len()),
                    _ => None,
                }) {
                    Some(n) => CqlType::Vector {
                        element: Box::new(CqlType::Float),
                        dimension: n as u32,
                    },
                    None => return Err(cannot_infer(&args[0])),
                },
            };
            let CqlType::Vector { dimension, .. } = &ty else {
                return Err(refuse(&args[0], &ty));
            };
            let mut compiled = Vec::with_capacity(2);
            for (i, (a, c)) in args.iter().zip(known).enumerate() {
                let c = match c {
                    Some(c) => c,
                    None => {
                        if let Selectable::List(items) = a
                            && items.len() != *dimension as usize
                        {
                            return Err(ExecError::invalid(
                                "All arguments must have the same vector dimensions",
                            ));
                        }
                        compile_arg(a, Some(&ty)).map_err(|_| {
                            ExecError::invalid(format!(
                                "Type error: {} cannot be passed as argument {i} of function {qualified} of type {}",
                                arg_text(a),
                                type_text(&ty)
                            ))
                        })?
                    }
                };
                if c.ty != ty {
                    return Err(ExecError::invalid(
                        "All arguments must have the same vector dimensions",
                    ));
                }
                compiled.push(c);
            }
            Ok((compiled, CqlType::Float))
        }
        _ => {
            let a = &args[0];
            let Some(c) = typed(a, compile_arg)? else {
                if let Native::Math(_) = f
                    && matches!(a, Selectable::Term(Term::Literal(_)))
                {
                    return Err(ExecError::invalid(format!(
                        "Ambiguous call to function {qualified}: use type casts to disambiguate"
                    )));
                }
                return Err(cannot_infer(a));
            };
            let element = match &c.ty {
                CqlType::List { element, .. } | CqlType::Set { element, .. } => Some(element),
                _ => None,
            };
            let wrong = |what: &str| {
                ExecError::invalid(format!(
                    "Function {qualified} requires a {what} argument, but found argument {} of type {}",
                    arg_text(a),
                    type_text(&c.ty)
                ))
            };
            let result = match f {
                Native::MapKeys | Native::MapValues => match &c.ty {
                    CqlType::Map { key, value, .. } => {
                        if f == Native::MapKeys {
                            CqlType::Set {
                                element: key.clone(),
                                frozen: true,
                            }
                        } else {
                            CqlType::List {
                                element: value.clone(),
                                frozen: true,
                            }
                        }
                    }
                    _ => return Err(wrong("map")),
                },
                Native::CollectionCount => match &c.ty {
                    CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. } => {
                        CqlType::Int
                    }
                    _ => return Err(wrong("collection")),
                },
                Native::Collection(AggKind::Min | AggKind::Max) => match element {
                    Some(e) => e.as_ref().clone(),
                    None => return Err(wrong("set or list")),
                },
                Native::Collection(_) => match element {
                    Some(e) if NUMBERS[..8].contains(e) => e.as_ref().clone(),
                    _ => return Err(wrong("numeric set/list")),
                },
                Native::Math(_) => {
                    if !NUMBERS.contains(&c.ty) {
                        let signatures: Vec<String> = NUMBERS
                            .iter()
                            .map(|t| format!("{qualified} : ({0}) -> {0}", type_text(t)))
                            .collect();
                        return Err(ExecError::invalid(format!(
                            "Invalid call to function {qualified}, none of its type signatures match (known type signatures: {})",
                            signatures.join(", ")
                        )));
                    }
                    c.ty.clone()
                }
                Native::Similarity(_) | Native::Floor => unreachable!("handled above"),
            };
            Ok((vec![c], result))
        }
    }
}

/// `floor(t, duration[, start])`: `t` a `timestamp`, `timeuuid`, `date` or `time` of a type
/// of its own (a column, a function), the duration and the start taking the types the first
/// argument gives them.
fn compile_floor(
    qualified: &str,
    args: &[Selectable],
    compile_arg: &mut CompileArg<'_>,
) -> Result<(Vec<Computed>, CqlType), ExecError> {
    if !(2..=3).contains(&args.len()) {
        return Err(ExecError::invalid(format!(
            "Invalid number of arguments in call to function {qualified}: 2 required but {} provided",
            args.len()
        )));
    }
    let first = match &args[0] {
        Selectable::Term(_) => None,
        a => compile_arg(a, None).ok(),
    };
    let Some(first) = first else {
        return Err(ExecError::invalid(format!(
            "Ambiguous call to function {qualified}: use type casts to disambiguate"
        )));
    };
    let Some((result, start)) = super::floor::types(&first.ty) else {
        return Err(ExecError::invalid(format!(
            "Invalid call to function {qualified}, none of its type signatures match (known type signatures: {qualified} : (timestamp, duration) -> timestamp, {qualified} : (timestamp, duration, timestamp) -> timestamp, {qualified} : (timeuuid, duration) -> timestamp, {qualified} : (timeuuid, duration, timestamp) -> timestamp, {qualified} : (date, duration) -> date, {qualified} : (date, duration, date) -> date, {qualified} : (time, duration) -> time, {qualified} : (time, duration, time) -> time)"
        )));
    };
    let mut compiled = vec![first];
    for (i, (a, ty)) in args[1..].iter().zip([CqlType::Duration, start]).enumerate() {
        let c = compile_arg(a, Some(&ty)).map_err(|_| {
            ExecError::invalid(format!(
                "Type error: {} cannot be passed as argument {} of function {qualified} of type {}",
                arg_text(a),
                i + 1,
                type_text(&ty)
            ))
        })?;
        if c.ty != ty {
            return Err(ExecError::invalid(format!(
                "Type error: {} cannot be passed as argument {} of function {qualified} of type {}",
                arg_text(a),
                i + 1,
                type_text(&ty)
            )));
        }
        compiled.push(c);
    }
    Ok((compiled, result))
}

/// A value of `ty` from its bytes, or a server-side refusal of bytes that are not one.
fn decode(ty: &CqlType, bytes: &[u8]) -> Result<CqlValue, ExecError> {
    CqlValue::deserialize(ty, bytes)
        .map_err(|e| ExecError::invalid(format!("Invalid value for {}: {e}", type_text(ty))))
}

/// Cassandra's `FunctionExecutionException` for a function of one argument of type `ty`.
fn failure(name: &str, ty: &CqlType, reason: &str) -> ExecError {
    super::selector::operation_failed(format!(
        "execution of 'system.{name}[{}]' failed: java.lang.ArithmeticException: {reason}",
        type_text(ty)
    ))
}

/// The value of `f` for its arguments' values (`None` for null), of type `ty`.
pub(super) fn eval(
    f: Native,
    args: &[Computed],
    values: Vec<Option<Bytes>>,
    ty: &CqlType,
) -> Result<Option<Bytes>, ExecError> {
    if values.iter().any(Option::is_none) {
        return Ok(None);
    }
    let name = f.name();
    let values: Vec<Bytes> = values.into_iter().flatten().collect();
    let arg_ty = &args[0].ty;
    let out = |v: CqlValue| Ok(Some(Bytes::from(v.to_bytes(ty))));
    match f {
        Native::Similarity(kind) => {
            let floats = |b: &[u8]| -> Result<Vec<f32>, ExecError> {
                match decode(arg_ty, b)? {
                    CqlValue::Vector(items) => Ok(items
                        .into_iter()
                        .map(|v| match v {
                            CqlValue::Float(x) => x,
                            _ => f32::NAN,
                        })
                        .collect()),
                    _ => Err(ExecError::invalid("a vector was expected")),
                }
            };
            let (a, b) = (floats(&values[0])?, floats(&values[1])?);
            let score = similarity_score(kind, &a, &b).ok_or_else(|| {
                ExecError::invalid(format!(
                    "Function system.{name} doesn't support all-zero vectors"
                ))
            })?;
            out(CqlValue::Float(score))
        }
        Native::MapKeys | Native::MapValues | Native::CollectionCount | Native::Collection(_) => {
            let items: Vec<CqlValue> = match decode(arg_ty, &values[0])? {
                CqlValue::Map(entries) => match f {
                    Native::MapKeys => entries.into_iter().map(|(k, _)| k).collect(),
                    _ => entries.into_iter().map(|(_, v)| v).collect(),
                },
                CqlValue::List(items) | CqlValue::Set(items) => items,
                _ => return Err(ExecError::invalid("a collection was expected")),
            };
            match f {
                Native::MapKeys => out(CqlValue::Set(items)),
                Native::MapValues => out(CqlValue::List(items)),
                Native::CollectionCount => out(CqlValue::Int(items.len() as i32)),
                Native::Collection(kind) => {
                    // The same fold as the aggregate over rows, one element per row.
                    let mut fold = Aggregator::new(vec![kind], vec![ty.clone()], false);
                    for item in items {
                        fold.add(Bytes::new(), vec![Some(Bytes::from(item.to_bytes(ty)))])?;
                    }
                    Ok(fold
                        .finish()
                        .into_iter()
                        .next()
                        .and_then(|row| row.into_iter().next())
                        .flatten())
                }
                _ => unreachable!("matched above"),
            }
        }
        Native::Math(m) => {
            let v = decode(arg_ty, &values[0])?;
            out(math(m, name, v)?)
        }
        Native::Floor => {
            let value = decode(arg_ty, &values[0])?;
            let CqlValue::Duration(duration) = decode(&args[1].ty, &values[1])? else {
                return Err(ExecError::invalid("a duration was expected"));
            };
            let start = match values.get(2) {
                Some(b) => Some(decode(&args[2].ty, b)?),
                None => None,
            };
            match super::floor::floor(&value, &duration, start.as_ref())? {
                Some(v) => out(v),
                None => Ok(None),
            }
        }
    }
}

/// Java's `Math.round` of a double: the nearest long, ties toward positive infinity.
fn java_round(x: f64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    (x + 0.5).floor() as i64
}

/// One math function of a value, as its type's `NumberType` computes it.
fn math(m: Math, name: &str, v: CqlValue) -> Result<CqlValue, ExecError> {
    let ty = match &v {
        CqlValue::Varint(_) => CqlType::Varint,
        _ => CqlType::Decimal,
    };
    // `(T) Math.f(x)` for the integer types: Java's narrowing of a double, NaN to 0,
    // saturating to `int` (`long` for bigint), then wrapping to the type.
    let real = |x: f64| -> f64 {
        match m {
            Math::Exp => x.exp(),
            Math::Log => x.ln(),
            Math::Log10 => x.log10(),
            Math::Abs => x.abs(),
            Math::Round => x,
        }
    };
    Ok(match v {
        CqlValue::Tinyint(x) => CqlValue::Tinyint(match m {
            Math::Abs => x.wrapping_abs(),
            Math::Round => x,
            _ => real(f64::from(x)) as i32 as i8,
        }),
        CqlValue::Smallint(x) => CqlValue::Smallint(match m {
            Math::Abs => x.wrapping_abs(),
            Math::Round => x,
            _ => real(f64::from(x)) as i32 as i16,
        }),
        CqlValue::Int(x) => CqlValue::Int(match m {
            Math::Abs => x.wrapping_abs(),
            Math::Round => x,
            _ => real(f64::from(x)) as i32,
        }),
        CqlValue::Bigint(x) | CqlValue::Counter(x) => {
            let r = match m {
                Math::Abs => x.wrapping_abs(),
                Math::Round => x,
                _ => real(x as f64) as i64,
            };
            if matches!(v, CqlValue::Counter(_)) {
                CqlValue::Counter(r)
            } else {
                CqlValue::Bigint(r)
            }
        }
        CqlValue::Float(x) => CqlValue::Float(match m {
            // `(float) Math.round(x)`: the nearest int, saturating.
            Math::Round => {
                if x.is_nan() {
                    0.0
                } else {
                    (f64::from(x) + 0.5)
                        .floor()
                        .clamp(i32::MIN as f64, i32::MAX as f64) as i32 as f32
                }
            }
            _ => real(f64::from(x)) as f32,
        }),
        CqlValue::Double(x) => CqlValue::Double(match m {
            Math::Round => java_round(x) as f64,
            _ => real(x),
        }),
        CqlValue::Varint(x) => {
            let as_decimal = Decimal {
                unscaled: x.clone(),
                scale: 0,
            };
            let whole = |d: Decimal| -> num_bigint::BigInt {
                if d.scale <= 0 {
                    d.unscaled * num_bigint::BigInt::from(10u32).pow(d.scale.unsigned_abs())
                } else {
                    d.unscaled / num_bigint::BigInt::from(10u32).pow(d.scale as u32)
                }
            };
            CqlValue::Varint(match m {
                Math::Abs => {
                    num_bigint::BigInt::from_biguint(num_bigint::Sign::Plus, x.magnitude().clone())
                }
                Math::Round => x,
                Math::Exp => whole(decimal_exp(&as_decimal).map_err(|e| failure(name, &ty, &e))?),
                Math::Log => whole(decimal_ln(&as_decimal).map_err(|e| failure(name, &ty, &e))?),
                Math::Log10 => {
                    whole(decimal_log10(&as_decimal).map_err(|e| failure(name, &ty, &e))?)
                }
            })
        }
        CqlValue::Decimal(d) => CqlValue::Decimal(match m {
            Math::Abs => Decimal {
                unscaled: num_bigint::BigInt::from_biguint(
                    num_bigint::Sign::Plus,
                    d.unscaled.magnitude().clone(),
                ),
                scale: d.scale,
            },
            Math::Round => round_half_up(&d),
            Math::Exp => decimal_exp(&d).map_err(|e| failure(name, &ty, &e))?,
            Math::Log => decimal_ln(&d).map_err(|e| failure(name, &ty, &e))?,
            Math::Log10 => decimal_log10(&d).map_err(|e| failure(name, &ty, &e))?,
        }),
        other => {
            return Err(ExecError::invalid(format!(
                "system.{name} takes a number, not {other:?}"
            )));
        }
    })
}

/// `setScale(0, HALF_UP)`: the nearest integer, ties away from zero, at scale 0.
fn round_half_up(d: &Decimal) -> Decimal {
    use num_bigint::{BigInt, Sign};
    if d.scale <= 0 {
        return Decimal {
            unscaled: &d.unscaled * BigInt::from(10u32).pow(d.scale.unsigned_abs()),
            scale: 0,
        };
    }
    let divisor = BigInt::from(10u32).pow(d.scale as u32);
    let (q, r) = (&d.unscaled / &divisor, &d.unscaled % &divisor);
    let twice = BigInt::from_biguint(Sign::Plus, r.magnitude().clone()) * 2u32;
    let unscaled = if twice >= divisor {
        if d.unscaled.sign() == Sign::Minus {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    };
    Decimal { unscaled, scale: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_math_narrows_as_java_does() {
        let f = |m, v| math(m, "f", v).unwrap();
        assert_eq!(
            f(Math::Abs, CqlValue::Tinyint(-128)),
            CqlValue::Tinyint(-128)
        );
        assert_eq!(f(Math::Exp, CqlValue::Int(1)), CqlValue::Int(2));
        assert_eq!(f(Math::Exp, CqlValue::Int(100)), CqlValue::Int(i32::MAX));
        assert_eq!(f(Math::Log, CqlValue::Int(0)), CqlValue::Int(i32::MIN));
        assert_eq!(f(Math::Log, CqlValue::Tinyint(0)), CqlValue::Tinyint(0));
        assert_eq!(f(Math::Log10, CqlValue::Bigint(1000)), CqlValue::Bigint(3));
        assert_eq!(
            f(Math::Round, CqlValue::Double(-2.5)),
            CqlValue::Double(-2.0)
        );
        assert_eq!(f(Math::Round, CqlValue::Double(2.5)), CqlValue::Double(3.0));
        assert_eq!(
            f(Math::Round, CqlValue::Float(1e20)),
            CqlValue::Float(i32::MAX as f32)
        );
    }

    #[test]
    fn decimal_round_is_half_up_at_scale_zero() {
        let d = |u: i64, scale: i32| Decimal {
            unscaled: u.into(),
            scale,
        };
        assert_eq!(round_half_up(&d(-15, 1)), d(-2, 0));
        assert_eq!(round_half_up(&d(14, 1)), d(1, 0));
        assert_eq!(round_half_up(&d(123, -2)), d(12300, 0));
    }
}
