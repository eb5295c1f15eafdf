//! Which operation an arithmetic expression names, as Cassandra's `FunctionResolver` picks
//! among `OperationFcts`' overloads, and the value of an arithmetic term.
//!
//! Every operator has one overload per pair of number types (and `timestamp`/`date` with a
//! `duration` for `+` and `-`), returning the wider type (`value::arith`). An operand fits a
//! parameter type exactly (a column or a result of that type, a literal whose preferred type it
//! is: `int` for `1` when it fits, `double` for `1.5`, `ascii` for `'a'`), weakly (a literal of
//! a kind the type accepts, a bind marker, `null`) or not at all. The overloads whose result
//! the receiver takes (when there is a receiver: a column, a WHERE value) are tried: one whose
//! operands all fit exactly wins; else the only one that fits at all; else, for a receiver and
//! no bind markers, the one taking the receiver's type on both sides; else the expression is
//! ambiguous (`Ambiguous '+' operation: use type casts to disambiguate`) or unsupported (`the
//! '+' operation is not supported between a and b`).

use khata_types::schema::CqlType;

use super::Run;
use crate::language::ast::{ArithmeticOp, Literal, Term, TypeExpr};
use crate::value::{
    CqlValue, LiteralError, NUMBER_TYPES, apply_arithmetic, arithmetic_signature, arithmetic_type,
    float_literal_type, negate_number, negation_type,
};

/// How well an operand fits a parameter type (Cassandra's `AssignmentTestable.TestResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fit {
    Exact,
    Weak,
    No,
}

/// An operand of an operation, as resolution sees it.
pub(super) struct Side<'a> {
    /// As the statement writes it, for messages.
    pub text: String,
    /// Whether it is a bind marker.
    pub marker: bool,
    /// How it fits a parameter type.
    pub fit: Box<dyn Fn(&CqlType) -> Fit + 'a>,
}

impl<'a> Side<'a> {
    /// An operand of a known type.
    pub fn typed(text: String, ty: CqlType) -> Side<'a> {
        Side {
            text,
            marker: false,
            fit: Box::new(move |p| if *p == ty { Fit::Exact } else { Fit::No }),
        }
    }
}

/// The name Cassandra gives an operator's functions (`system._add`), for its markers' names.
pub(super) fn function_name(op: Option<ArithmeticOp>) -> &'static str {
    match op {
        Some(ArithmeticOp::Add) => "system._add",
        Some(ArithmeticOp::Subtract) => "system._substract",
        Some(ArithmeticOp::Multiply) => "system._multiply",
        Some(ArithmeticOp::Divide) => "system._divide",
        Some(ArithmeticOp::Modulo) => "system._modulo",
        None => "system._negate",
    }
}

/// The preferred type of a literal (`Constants.Type.getPreferedTypeFor`), `None` for `null`.
fn preferred(lit: &Literal) -> Option<CqlType> {
    Some(match lit {
        Literal::Integer(text) => {
            if text.parse::<i32>().is_ok() {
                CqlType::Int
            } else if text.parse::<i64>().is_ok() {
                CqlType::Bigint
            } else {
                CqlType::Varint
            }
        }
        Literal::Float(text) => float_literal_type(text),
        Literal::NaN | Literal::Infinity | Literal::NegativeInfinity => CqlType::Double,
        Literal::String(s) if s.is_ascii() => CqlType::Ascii,
        Literal::String(_) => CqlType::Text,
        Literal::Boolean(_) => CqlType::Boolean,
        Literal::Duration(_) => CqlType::Duration,
        Literal::Uuid(u) if u.get_version_num() == 1 => CqlType::Timeuuid,
        Literal::Uuid(_) => CqlType::Uuid,
        // Cassandra's choice, odd as it is.
        Literal::Hex(_) => CqlType::Tinyint,
        Literal::Null => return None,
    })
}

/// How a literal fits a parameter type (`Constants.Literal.testAssignment`).
pub(super) fn literal_fit(lit: &Literal, p: &CqlType) -> Fit {
    if let Literal::Null = lit {
        return if *p == CqlType::Counter {
            Fit::No
        } else {
            Fit::Weak
        };
    }
    if preferred(lit).as_ref() == Some(p) {
        return Fit::Exact;
    }
    let weak = crate::value::literal_accepts(lit, p);
    if weak { Fit::Weak } else { Fit::No }
}

/// A native type named by a type hint (`(int) ?`); `None` for the others.
pub(super) fn hint_type(ty: &TypeExpr) -> Option<CqlType> {
    match ty {
        TypeExpr::Native(n) => Some(n.cql_type()),
        _ => None,
    }
}

/// The type a native function call returns, for the calls a term may hold.
fn function_type(name: &str) -> Option<CqlType> {
    Some(match super::functions::native_name(name).as_str() {
        "now" | "currenttimeuuid" | "mintimeuuid" | "maxtimeuuid" => CqlType::Timeuuid,
        "uuid" => CqlType::Uuid,
        "currenttimestamp" | "totimestamp" | "dateof" => CqlType::Timestamp,
        "currentdate" | "todate" => CqlType::Date,
        "currenttime" => CqlType::Time,
        "tounixtimestamp" | "unixtimestampof" => CqlType::Bigint,
        _ => return None,
    })
}

/// A term as an operand: how it fits a parameter type, resolving nested operations against
/// that type as Cassandra's `FunctionCall.Raw.testAssignment` does.
pub(super) fn term_side(term: &Term) -> Side<'_> {
    Side {
        text: term.to_string(),
        marker: matches!(term, Term::Marker(_)),
        fit: Box::new(move |p| term_fit(term, p)),
    }
}

fn term_fit(term: &Term, p: &CqlType) -> Fit {
    match term {
        Term::Literal(lit) => literal_fit(lit, p),
        Term::Marker(_) => Fit::Weak,
        Term::TypeHint { ty, .. } => match hint_type(ty) {
            Some(t) if t == *p => Fit::Exact,
            _ => Fit::No,
        },
        Term::Cast { ty, .. } if ty.cql_type() == *p => Fit::Exact,
        Term::FunctionCall { name, .. } => match function_type(&name.name.0) {
            Some(t) if t == *p => Fit::Exact,
            _ => Fit::No,
        },
        Term::Arithmetic { op, left, right } => {
            match resolve(*op, &term_side(left), &term_side(right), Some(p)) {
                Ok(sig) if sig.result == *p => Fit::Exact,
                _ => Fit::No,
            }
        }
        Term::Negation(inner) => match resolve_negation(&term_side(inner), Some(p)) {
            Ok((_, result)) if result == *p => Fit::Exact,
            _ => Fit::No,
        },
        // `(a)`: parentheses around one term.
        Term::Tuple(items) if items.len() == 1 => term_fit(&items[0], p),
        _ => Fit::No,
    }
}

/// The overload an operation resolved to.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Signature {
    pub left: CqlType,
    pub right: CqlType,
    pub result: CqlType,
}

/// Every overload of `op`, in Cassandra's order: the number pairs, then the temporal ones.
fn overloads(op: ArithmeticOp) -> impl Iterator<Item = Signature> {
    let lefts = NUMBER_TYPES
        .iter()
        .chain([CqlType::Timestamp, CqlType::Date].iter());
    lefts.flat_map(move |l| {
        NUMBER_TYPES
            .iter()
            .chain(std::iter::once(&CqlType::Duration))
            .filter_map(move |r| {
                arithmetic_type(op, l, r).map(|result| Signature {
                    left: l.clone(),
                    right: r.clone(),
                    result,
                })
            })
    })
}

/// The overload of `left op right` for a receiver of type `receiver` (`None` in a selection).
pub(super) fn resolve(
    op: ArithmeticOp,
    left: &Side<'_>,
    right: &Side<'_>,
    receiver: Option<&CqlType>,
) -> Result<Signature, String> {
    let mut compatible = Vec::new();
    for sig in overloads(op) {
        if receiver.is_some_and(|r| *r != sig.result) {
            continue;
        }
        match ((left.fit)(&sig.left), (right.fit)(&sig.right)) {
            (Fit::No, _) | (_, Fit::No) => {}
            (Fit::Exact, Fit::Exact) => return Ok(sig),
            _ => compatible.push(sig),
        }
    }
    match compatible.len() {
        0 => Err(format!(
            "the '{}' operation is not supported between {} and {}",
            op.symbol(),
            left.text,
            right.text
        )),
        1 => Ok(compatible.remove(0)),
        _ => {
            if let Some(r) = receiver
                && !left.marker
                && !right.marker
                && let Some(sig) = compatible
                    .into_iter()
                    .find(|s| s.left == *r && s.right == *r)
            {
                return Ok(sig);
            }
            Err(format!(
                "Ambiguous '{}' operation: use type casts to disambiguate",
                op.symbol()
            ))
        }
    }
}

/// The overload of `-arg`: its parameter and result types.
pub(super) fn resolve_negation(
    arg: &Side<'_>,
    receiver: Option<&CqlType>,
) -> Result<(CqlType, CqlType), String> {
    let mut compatible = Vec::new();
    for p in NUMBER_TYPES.iter() {
        let Some(result) = negation_type(p) else {
            continue;
        };
        if receiver.is_some_and(|r| *r != result) {
            continue;
        }
        match (arg.fit)(p) {
            Fit::Exact => return Ok((p.clone(), result)),
            Fit::Weak => compatible.push((p.clone(), result)),
            Fit::No => {}
        }
    }
    match compatible.len() {
        0 => Err(format!(
            "Invalid call to function system._negate, none of its type signatures match (the argument is {})",
            arg.text
        )),
        1 => Ok(compatible.remove(0)),
        _ => Err("Ambiguous negation: use type casts to disambiguate".to_string()),
    }
}

/// The message of an operation that failed on its values (Cassandra's
/// `OperationExecutionException`).
pub(super) fn failure(op: ArithmeticOp, left: &CqlType, right: &CqlType, reason: &str) -> String {
    format!(
        "the operation '{}' failed: {reason}",
        arithmetic_signature(op, left, right)
    )
}

/// The value of an arithmetic term (or a negation) for a receiver of type `ty`: its operands
/// are read as the types of the overload it resolves to; a null operand makes it null.
pub(super) fn evaluate_term(
    run: &Run<'_>,
    term: &Term,
    ty: &CqlType,
) -> Result<Option<CqlValue>, LiteralError> {
    match term {
        Term::Arithmetic { op, left, right } => {
            let sig = resolve(*op, &term_side(left), &term_side(right), Some(ty))
                .map_err(LiteralError::InvalidLiteral)?;
            let name = function_name(Some(*op));
            let l = super::bind::term_value(run, left, &format!("arg0({name})"), &sig.left)?;
            let r = super::bind::term_value(run, right, &format!("arg1({name})"), &sig.right)?;
            let (Some(l), Some(r)) = (l, r) else {
                return Ok(None);
            };
            apply_arithmetic(*op, &l, &r, &sig.result)
                .map(Some)
                .map_err(|reason| {
                    LiteralError::OperationFailed(failure(*op, &sig.left, &sig.right, &reason))
                })
        }
        Term::Negation(inner) => {
            let (p, _) = resolve_negation(&term_side(inner), Some(ty))
                .map_err(LiteralError::InvalidLiteral)?;
            let name = function_name(None);
            match super::bind::term_value(run, inner, &format!("arg0({name})"), &p)? {
                Some(v) => negate_number(&v)
                    .map(Some)
                    .map_err(LiteralError::InvalidLiteral),
                None => Ok(None),
            }
        }
        other => Err(LiteralError::NotALiteral(other.to_string())),
    }
}

/// The types of the operands' bind markers of an arithmetic term for a receiver of type `ty`:
/// each operand with its parameter type and the name Cassandra gives it (`arg0(system._add)`),
/// for the prepared metadata; `Err` when the term does not resolve.
pub(super) fn operand_types<'t>(
    term: &'t Term,
    ty: &CqlType,
) -> Result<Vec<(&'t Term, String, CqlType)>, String> {
    match term {
        Term::Arithmetic { op, left, right } => {
            let sig = resolve(*op, &term_side(left), &term_side(right), Some(ty))?;
            let name = function_name(Some(*op));
            Ok(vec![
                (left.as_ref(), format!("arg0({name})"), sig.left),
                (right.as_ref(), format!("arg1({name})"), sig.right),
            ])
        }
        Term::Negation(inner) => {
            let (p, _) = resolve_negation(&term_side(inner), Some(ty))?;
            Ok(vec![(
                inner.as_ref(),
                format!("arg0({})", function_name(None)),
                p,
            )])
        }
        _ => Ok(Vec::new()),
    }
}
