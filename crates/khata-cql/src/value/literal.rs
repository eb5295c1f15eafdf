//! Literal terms of a statement converted to values of the receiving column's type, with
//! Cassandra's rules (`cql3.Constants.Literal.testAssignment` and `fromString` of each type;
//! `Lists`, `Sets`, `Maps`, `Tuples`, `UserTypes`, `Vectors` `.Literal.prepare`).
//!
//! A constant must be of a kind the type takes before its text is read: strings for `ascii`,
//! `text`, `inet`, `date`, `time`, `timestamp`; integers for every number type and `date`,
//! `time`, `timestamp`, `duration`; floats (and `NaN`, `Infinity`) for `float`, `double`,
//! `decimal`; UUIDs for `uuid`, `timeuuid`; `0x` blobs for `blob`; booleans and durations for
//! their types. Anything else is `Invalid INTEGER constant (1) for "c" of type text`. Then the
//! text is read as the type reads it, with its message on failure (`Unable to make byte from
//! '300'`).
//!
//! Collection literals check that every element could be assigned before converting any
//! (`Invalid list literal for l: value 'a' is not of type int`); sets are sorted and deduplicated,
//! maps sorted by key with the last of repeated keys winning; `{}` is an empty set or map; a
//! UDT literal's missing fields are null and an unknown field is refused; a tuple literal may
//! have fewer elements than its type, and is also a UDT's fields in order. Elements are named as Cassandra names them in messages:
//! `value(l)`, `key(m)`, `t[0]`, `u.field`.
//!
//! Terms that are not literals (bind markers, function calls, arithmetic, casts) are handed to
//! the caller's evaluator ([`from_term_with`]); [`from_term`] refuses them.

use khata_types::schema::CqlType;

use super::constant::{constant, from_string, hex, kind, kind_accepts};
use super::nested::{normalize_map, normalize_set};
use super::{CqlValue, LiteralError, type_name};
use crate::language::ast::{Literal, Name, Term};

/// Converts a term that is not a literal (a marker, a function call, arithmetic) for a receiver
/// named `&str` of type `&CqlType`: `Ok(None)` is null.
pub type Evaluator<'a> =
    dyn FnMut(&Term, &str, &CqlType) -> Result<Option<CqlValue>, LiteralError> + 'a;

/// The value of a literal `term` for the receiver `receiver` (a column name, for messages) of
/// type `ty`; `Ok(None)` for `null`. `now_millis` is the coordinator's clock, for the
/// `'now'` timestamp. Terms that are not literals, anywhere inside `term`, are refused with
/// [`LiteralError::NotALiteral`].
pub fn from_term(
    term: &Term,
    receiver: &str,
    ty: &CqlType,
    now_millis: i64,
) -> Result<Option<CqlValue>, LiteralError> {
    let mut refuse = |t: &Term, _: &str, _: &CqlType| Err(LiteralError::NotALiteral(t.to_string()));
    from_term_with(term, receiver, ty, now_millis, &mut refuse)
}

/// [`from_term`], with `evaluate` converting the terms that are not literals (for example
/// `[?, now()]`): it is called with the term, the receiver's name and its type.
pub fn from_term_with(
    term: &Term,
    receiver: &str,
    ty: &CqlType,
    now_millis: i64,
    evaluate: &mut Evaluator<'_>,
) -> Result<Option<CqlValue>, LiteralError> {
    Converter {
        now_millis,
        evaluate,
    }
    .convert(term, receiver, ty)
}

struct Converter<'e, 'a> {
    now_millis: i64,
    evaluate: &'e mut Evaluator<'a>,
}

impl Converter<'_, '_> {
    fn convert(
        &mut self,
        term: &Term,
        receiver: &str,
        ty: &CqlType,
    ) -> Result<Option<CqlValue>, LiteralError> {
        match term {
            Term::Literal(Literal::Null) if *ty == CqlType::Counter => {
                Err(LiteralError::NullCounter)
            }
            Term::Literal(Literal::Null) => Ok(None),
            // Constants.Literal.testAssignment takes any constant for a tuple, which
            // TupleType.fromString reads.
            Term::Literal(literal) if matches!(ty, CqlType::Tuple(_)) => {
                tuple_constant(literal, ty, self.now_millis).map(Some)
            }
            Term::Literal(literal) => constant(literal, receiver, ty, self.now_millis).map(Some),
            Term::List(items) => self.list(items, receiver, ty).map(Some),
            Term::Set(items) => self.set(items, receiver, ty).map(Some),
            Term::Map(entries) => self.map(entries, receiver, ty).map(Some),
            Term::Tuple(items) => self.tuple(items, receiver, ty).map(Some),
            Term::UserType(fields) => self.udt(fields, receiver, ty).map(Some),
            Term::TypeHint {
                ty: hint,
                term: inner,
            } => {
                // TypeCast.prepare: the term must be a value of the hinted type, and that
                // type one the receiver reads; the term is then read as the receiver's type.
                if let Ok(hinted) = hint_type(hint)
                    && !assignable(inner, &hinted)
                {
                    return Err(invalid(format!("Cannot cast value {inner} to type {hint}")));
                }
                if !hint_matches(hint, ty) {
                    return Err(LiteralError::TypeHint {
                        // TypeCast.toString: no space after the hint.
                        term: format!("({hint}){inner}"),
                        receiver: receiver.to_string(),
                        ty: type_name(ty),
                    });
                }
                self.convert(inner, receiver, ty)
            }
            other => (self.evaluate)(other, receiver, ty),
        }
    }

    /// An element of a collection or vector: never null.
    fn element(
        &mut self,
        term: &Term,
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        self.convert(term, receiver, ty)?
            .ok_or(LiteralError::NullInCollection)
    }

    fn list(
        &mut self,
        items: &[Term],
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        let (element, vector) = match ty {
            CqlType::List { element, .. } => (&**element, None),
            CqlType::Vector { element, dimension } => (&**element, Some(*dimension)),
            _ => {
                return Err(invalid(format!(
                    "Invalid list literal for {receiver} of type {}",
                    type_name(ty)
                )));
            }
        };
        let what = if vector.is_some() { "vector" } else { "list" };
        if let Some(dimension) = vector
            && usize::try_from(dimension) != Ok(items.len())
        {
            return Err(invalid(format!(
                "Invalid vector literal for {receiver} of type {}; expected {dimension} elements, \
                 but given {}",
                type_name(ty),
                items.len()
            )));
        }
        check_elements(items, element, |t| {
            format!(
                "Invalid {what} literal for {receiver}: value {t} is not of type {}",
                type_name(element)
            )
        })?;
        let name = format!("value({receiver})");
        let values = items
            .iter()
            .map(|t| self.element(t, &name, element))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(match vector {
            Some(_) => CqlValue::Vector(values),
            None => CqlValue::List(values),
        })
    }

    fn set(
        &mut self,
        items: &[Term],
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        let element = match ty {
            CqlType::Set { element, .. } => &**element,
            // `{}` is parsed as a set; it is also the empty map.
            CqlType::Map { .. } if items.is_empty() => return Ok(CqlValue::Map(Vec::new())),
            _ => {
                return Err(invalid(format!(
                    "Invalid set literal for {receiver} of type {}",
                    type_name(ty)
                )));
            }
        };
        check_elements(items, element, |t| {
            format!(
                "Invalid set literal for {receiver}: value {t} is not of type {}",
                type_name(element)
            )
        })?;
        let name = format!("value({receiver})");
        let values = items
            .iter()
            .map(|t| self.element(t, &name, element))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CqlValue::Set(normalize_set(element, values)))
    }

    fn map(
        &mut self,
        entries: &[(Term, Term)],
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        let CqlType::Map { key, value, .. } = ty else {
            return Err(invalid(format!(
                "Invalid map literal for {receiver} of type {}",
                type_name(ty)
            )));
        };
        for (k, v) in entries {
            for (term, t, what) in [(k, key, "key"), (v, value, "value")] {
                if !assignable(term, t) {
                    return Err(invalid(format!(
                        "Invalid map literal for {receiver}: {what} {term} is not of type {}",
                        type_name(t)
                    )));
                }
            }
        }
        let (key_name, value_name) = (format!("key({receiver})"), format!("value({receiver})"));
        let mut values = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            values.push((
                self.element(k, &key_name, key)?,
                self.element(v, &value_name, value)?,
            ));
        }
        Ok(CqlValue::Map(normalize_map(key, values)))
    }

    fn tuple(
        &mut self,
        items: &[Term],
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        // A user type is a tuple of its fields to Cassandra (`UserType extends TupleType`):
        // `(1, 2)` is a value of `frozen<ut>`, its fields in order, the missing ones null.
        let field_types: Vec<CqlType>;
        let types: &[CqlType] = match ty {
            CqlType::Tuple(types) => types,
            CqlType::Udt { fields, .. } => {
                field_types = fields.iter().map(|(_, t)| t.clone()).collect();
                &field_types
            }
            _ => {
                return Err(invalid(format!(
                    "Invalid tuple type literal for {receiver} of type {}",
                    type_name(ty)
                )));
            }
        };
        if items.len() > types.len() {
            return Err(invalid(format!(
                "Invalid tuple literal for {receiver}: too many elements. Type {} expects {} but \
                 got {}",
                type_name(ty),
                types.len(),
                items.len()
            )));
        }
        for (i, (term, t)) in items.iter().zip(types).enumerate() {
            if !assignable(term, t) {
                return Err(invalid(format!(
                    "Invalid tuple literal for {receiver}: component {i} is not of type {}",
                    type_name(t)
                )));
            }
        }
        let values = items
            .iter()
            .zip(types)
            .enumerate()
            .map(|(i, (term, t))| {
                self.convert(term, &format!("{receiver}[{i}]"), t)
                    .map_err(|e| match e {
                        LiteralError::Unset(_) => {
                            invalid(format!("Invalid unset value for tuple field number {i}"))
                        }
                        e => e,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(tuple_or_udt(ty, values))
    }

    fn udt(
        &mut self,
        given: &[(Name, Term)],
        receiver: &str,
        ty: &CqlType,
    ) -> Result<CqlValue, LiteralError> {
        let CqlType::Udt { name, fields, .. } = ty else {
            return Err(invalid(format!(
                "Invalid user type literal for {receiver} of type {}",
                type_name(ty)
            )));
        };
        // The last of a repeated field wins, as in Cassandra's parser.
        let term_of = |field: &str| given.iter().rev().find(|(n, _)| n.as_str() == field);
        for (field, t) in fields {
            if let Some((_, term)) = term_of(field)
                && !assignable(term, t)
            {
                return Err(invalid(format!(
                    "Invalid user type literal for {receiver}: field {} is not of type {}",
                    Name(field.clone()),
                    type_name(t)
                )));
            }
        }
        let mut values = Vec::with_capacity(fields.len());
        for (field, t) in fields {
            let value = match term_of(field) {
                Some((_, term)) => self
                    .convert(term, &format!("{receiver}.{field}"), t)
                    .map_err(|e| match e {
                        LiteralError::Unset(_) => invalid(format!(
                            "Invalid unset value for field '{field}' of user defined type {name}"
                        )),
                        e => e,
                    })?,
                None => None,
            };
            values.push((field.clone(), value));
        }
        if let Some((unknown, _)) = given
            .iter()
            .find(|(n, _)| !fields.iter().any(|(f, _)| f == n.as_str()))
        {
            return Err(invalid(format!(
                "Unknown field '{}' in value of user defined type {name}",
                unknown.as_str()
            )));
        }
        Ok(CqlValue::Udt(values))
    }
}

/// A constant (not `null`) for a tuple: a blob's bytes are the tuple's serialized value
/// (`BytesType.fromString`); any other constant's text is read by [`tuple_from_string`].
fn tuple_constant(
    literal: &Literal,
    ty: &CqlType,
    now_millis: i64,
) -> Result<CqlValue, LiteralError> {
    match literal {
        Literal::Hex(digits) => {
            let bytes = hex(digits)?;
            CqlValue::deserialize(ty, &bytes)
                .map_err(|e| LiteralError::InvalidConstant(e.to_string()))
        }
        Literal::String(text) => tuple_from_string(text, ty, now_millis),
        other => tuple_from_string(&other.to_string(), ty, now_millis),
    }
}

/// Cassandra's `TupleType.fromString` (and `UserType`'s, a user type being a tuple of its
/// fields): the fields are separated by `:` not preceded by `\`, `@` alone is null, `\:` and
/// `\@` stand for `:` and `@`, and each field is read by its type's `fromString`. Fewer fields
/// than the type has leave the rest out (null).
fn tuple_from_string(text: &str, ty: &CqlType, now_millis: i64) -> Result<CqlValue, LiteralError> {
    let field_types: Vec<CqlType> = match ty {
        CqlType::Tuple(types) => types.clone(),
        CqlType::Udt { fields, .. } => fields.iter().map(|(_, t)| t.clone()).collect(),
        _ => return field_from_string(text, ty, now_millis),
    };
    // AbstractCompositeType.split: an empty text has no fields.
    let mut parts: Vec<&str> = Vec::new();
    if !text.is_empty() {
        let bytes = text.as_bytes();
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b':' && (i == 0 || bytes[i - 1] != b'\\') {
                parts.push(&text[start..i]);
                start = i + 1;
            }
        }
        parts.push(&text[start..]);
    }
    if parts.len() > field_types.len() {
        return Err(LiteralError::InvalidConstant(format!(
            "Invalid tuple literal: too many elements. Type {} expects {} but got {}",
            type_name(ty),
            field_types.len(),
            parts.len()
        )));
    }
    let mut values = Vec::with_capacity(parts.len());
    for (part, field_ty) in parts.iter().zip(&field_types) {
        if *part == "@" {
            values.push(None);
            continue;
        }
        let unescaped = part.replace("\\:", ":").replace("\\@", "@");
        values.push(Some(field_from_string(&unescaped, field_ty, now_millis)?));
    }
    Ok(tuple_or_udt(ty, values))
}

/// The value of a tuple or UDT type `ty` made of its fields' values in order: a UDT's fields
/// not given are null.
fn tuple_or_udt(ty: &CqlType, mut values: Vec<Option<CqlValue>>) -> CqlValue {
    match ty {
        CqlType::Udt { fields, .. } => {
            values.resize(fields.len(), None);
            CqlValue::Udt(
                fields
                    .iter()
                    .map(|(name, _)| name.clone())
                    .zip(values)
                    .collect(),
            )
        }
        _ => CqlValue::Tuple(values),
    }
}

/// A tuple field's text read as its type's `fromString` reads it: the empty text is the empty
/// value of the types that have one.
fn field_from_string(text: &str, ty: &CqlType, now_millis: i64) -> Result<CqlValue, LiteralError> {
    let fail = |what: &str| LiteralError::InvalidConstant(format!("{what} from '{text}'"));
    match ty {
        CqlType::Tuple(_) | CqlType::Udt { .. } => tuple_from_string(text, ty, now_millis),
        CqlType::Text | CqlType::Ascii => from_string(ty, text, now_millis),
        CqlType::Blob => hex(text).map(CqlValue::Blob),
        _ if text.is_empty() && super::accepts_empty(ty) => Ok(CqlValue::Empty),
        // BooleanType.fromString: the empty text is false.
        CqlType::Boolean if text.is_empty() || text.eq_ignore_ascii_case("false") => {
            Ok(CqlValue::Boolean(false))
        }
        CqlType::Boolean if text.eq_ignore_ascii_case("true") => Ok(CqlValue::Boolean(true)),
        CqlType::Boolean => Err(fail("Unable to make boolean")),
        CqlType::Uuid => uuid::Uuid::parse_str(text)
            .map(CqlValue::Uuid)
            .map_err(|_| fail("Unable to make UUID")),
        CqlType::Timeuuid => {
            let u = uuid::Uuid::parse_str(text).map_err(|_| {
                LiteralError::InvalidConstant(format!("Unknown timeuuid representation: {text}"))
            })?;
            if u.get_version_num() != 1 {
                return Err(LiteralError::InvalidConstant(
                    "TimeUUID supports only version 1 UUIDs".to_string(),
                ));
            }
            Ok(CqlValue::Timeuuid(u))
        }
        CqlType::List { .. }
        | CqlType::Set { .. }
        | CqlType::Map { .. }
        | CqlType::Vector { .. } => Err(fail(&format!("Unable to make {}", type_name(ty)))),
        _ => from_string(ty, text, now_millis),
    }
}

fn invalid(message: String) -> LiteralError {
    LiteralError::InvalidLiteral(message)
}

fn check_elements(
    items: &[Term],
    element: &CqlType,
    message: impl Fn(&Term) -> String,
) -> Result<(), LiteralError> {
    match items.iter().find(|t| !assignable(t, element)) {
        Some(t) => Err(invalid(message(t))),
        None => Ok(()),
    }
}

/// Cassandra's `testAssignment`, shallowly: whether `term` could be a value of `ty` (its
/// text may still fail to read). Terms that are not literals are decided when evaluated.
fn assignable(term: &Term, ty: &CqlType) -> bool {
    match term {
        Term::Literal(Literal::Null) => *ty != CqlType::Counter,
        Term::Literal(_) if matches!(ty, CqlType::Tuple(_)) => true,
        Term::Literal(literal) => kind_accepts(kind(literal), ty),
        Term::List(items) => match ty {
            CqlType::List { element, .. } | CqlType::Vector { element, .. } => {
                items.iter().all(|t| assignable(t, element))
            }
            _ => false,
        },
        Term::Set(items) => match ty {
            CqlType::Set { element, .. } => items.iter().all(|t| assignable(t, element)),
            CqlType::Map { .. } => items.is_empty(),
            _ => false,
        },
        Term::Map(entries) => match ty {
            CqlType::Map { key, value, .. } => entries
                .iter()
                .all(|(k, v)| assignable(k, key) && assignable(v, value)),
            _ => false,
        },
        Term::Tuple(items) => match ty {
            CqlType::Tuple(types) => {
                items.len() <= types.len()
                    && items.iter().zip(types).all(|(t, ty)| assignable(t, ty))
            }
            CqlType::Udt { fields, .. } => {
                items.len() <= fields.len()
                    && items
                        .iter()
                        .zip(fields)
                        .all(|(t, (_, ty))| assignable(t, ty))
            }
            _ => false,
        },
        Term::UserType(given) => match ty {
            CqlType::Udt { fields, .. } => fields.iter().all(|(field, t)| {
                given
                    .iter()
                    .rev()
                    .find(|(n, _)| n.as_str() == field)
                    .is_none_or(|(_, term)| assignable(term, t))
            }),
            _ => false,
        },
        Term::TypeHint { ty: hint, .. } => hint_matches(hint, ty),
        _ => true,
    }
}

/// The type a hint names. User types in hints are not resolved here.
fn hint_type(
    hint: &crate::language::ast::TypeExpr,
) -> Result<CqlType, crate::language::ast::TypeError> {
    hint.to_cql_type(&|_, _| None)
}

/// Whether a type hint names a type whose values the receiver's type takes (`TypeCast
/// .testAssignment`): the receiver's type itself (frozen or not), or one it is value-compatible
/// with ([`value_compatible`]). User types in hints never match.
fn hint_matches(hint: &crate::language::ast::TypeExpr, ty: &CqlType) -> bool {
    hint_type(hint).is_ok_and(|hinted| {
        thawed(&hinted) == thawed(ty) || value_compatible(&thawed(ty), &thawed(&hinted))
    })
}

/// Whether values of type `other` read as values of `receiver`, which differs from it:
/// Cassandra 4.1's `isValueCompatibleWith` overrides. A blob reads anything; text reads ascii;
/// bigint and timestamp read each other; varint reads int, bigint and timestamp (through
/// bigint); date reads int; time reads bigint; uuid reads timeuuid. Type hints
/// ([`hint_matches`]) and function results going to a receiver of another type follow it.
pub(crate) fn value_compatible(receiver: &CqlType, other: &CqlType) -> bool {
    use CqlType as T;
    matches!(
        (receiver, other),
        (T::Blob, _)
            | (T::Text, T::Ascii)
            | (T::Bigint, T::Timestamp)
            | (T::Timestamp, T::Bigint)
            | (T::Varint, T::Int | T::Bigint | T::Timestamp)
            | (T::Date, T::Int)
            | (T::Time, T::Bigint)
            | (T::Uuid, T::Timeuuid)
    )
}

/// `ty` with every frozen flag cleared.
fn thawed(ty: &CqlType) -> CqlType {
    match ty {
        CqlType::List { element, .. } => CqlType::List {
            element: Box::new(thawed(element)),
            frozen: false,
        },
        CqlType::Set { element, .. } => CqlType::Set {
            element: Box::new(thawed(element)),
            frozen: false,
        },
        CqlType::Map { key, value, .. } => CqlType::Map {
            key: Box::new(thawed(key)),
            value: Box::new(thawed(value)),
            frozen: false,
        },
        CqlType::Tuple(types) => CqlType::Tuple(types.iter().map(thawed).collect()),
        other => other.clone(),
    }
}
