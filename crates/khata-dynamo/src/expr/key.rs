//! Key conditions: DynamoDB parses a `KeyConditionExpression` with the condition parser, then
//! accepts only `hash = :v`, optionally ANDed with one range-key condition (`=`, `<`, `<=`,
//! `>`, `>=`, `BETWEEN`, `begins_with`), either operand order, parentheses allowed.

use std::cmp::Ordering;

use super::ast::{Comparator, Cond, Operand, Path};
use super::eval::compare_values;
use crate::value::{AttributeValue, Item, ValidationError};

/// The condition on the range key of a query.
#[derive(Debug, Clone, PartialEq)]
pub enum RangeCondition {
    /// `= v`
    Eq(AttributeValue),
    /// `< v`
    Lt(AttributeValue),
    /// `<= v`
    Le(AttributeValue),
    /// `> v`
    Gt(AttributeValue),
    /// `>= v`
    Ge(AttributeValue),
    /// `BETWEEN low AND high`
    Between(AttributeValue, AttributeValue),
    /// `begins_with(key, prefix)` (S or B)
    BeginsWith(AttributeValue),
}

impl RangeCondition {
    /// True if a range-key value satisfies the condition.
    pub fn matches(&self, v: &AttributeValue) -> bool {
        let cmp = |b: &AttributeValue| compare_values(v, b);
        match self {
            RangeCondition::Eq(b) => cmp(b) == Some(Ordering::Equal),
            RangeCondition::Lt(b) => cmp(b) == Some(Ordering::Less),
            RangeCondition::Le(b) => matches!(cmp(b), Some(Ordering::Less | Ordering::Equal)),
            RangeCondition::Gt(b) => cmp(b) == Some(Ordering::Greater),
            RangeCondition::Ge(b) => matches!(cmp(b), Some(Ordering::Greater | Ordering::Equal)),
            RangeCondition::Between(l, h) => {
                matches!(cmp(l), Some(Ordering::Greater | Ordering::Equal))
                    && matches!(cmp(h), Some(Ordering::Less | Ordering::Equal))
            }
            RangeCondition::BeginsWith(p) => match (v, p) {
                (AttributeValue::S(s), AttributeValue::S(p)) => s.starts_with(p.as_str()),
                (AttributeValue::B(s), AttributeValue::B(p)) => s.starts_with(p),
                _ => false,
            },
        }
    }

    /// The values the condition holds, for type checks against the key schema.
    pub fn values(&self) -> Vec<&AttributeValue> {
        match self {
            RangeCondition::Between(l, h) => vec![l, h],
            RangeCondition::Eq(v)
            | RangeCondition::Lt(v)
            | RangeCondition::Le(v)
            | RangeCondition::Gt(v)
            | RangeCondition::Ge(v)
            | RangeCondition::BeginsWith(v) => vec![v],
        }
    }
}

/// A parsed key condition: the partition to read and the range of sort keys in it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyCondition {
    /// The hash key attribute's name.
    pub hash_key: String,
    /// The partition's hash key value.
    pub hash_value: AttributeValue,
    /// The range key attribute's name and condition, if any.
    pub range: Option<(String, RangeCondition)>,
}

impl KeyCondition {
    /// True if `item`'s keys satisfy the condition.
    pub fn matches(&self, item: &Item) -> bool {
        item.get(&self.hash_key) == Some(&self.hash_value)
            && self
                .range
                .as_ref()
                .is_none_or(|(name, c)| item.get(name).is_some_and(|v| c.matches(v)))
    }
}

fn error(m: impl Into<String>) -> ValidationError {
    ValidationError(m.into())
}

fn invalid_operator(op: &str) -> ValidationError {
    error(format!(
        "Invalid operator used in KeyConditionExpression: {op}"
    ))
}

fn not_supported() -> ValidationError {
    error("Query key condition not supported")
}

fn flatten(cond: Cond, out: &mut Vec<Cond>) -> Result<(), ValidationError> {
    match cond {
        Cond::And(a, b) => {
            flatten(*a, out)?;
            flatten(*b, out)
        }
        Cond::Or(..) => Err(invalid_operator("OR")),
        Cond::Not(..) => Err(invalid_operator("NOT")),
        other => {
            out.push(other);
            Ok(())
        }
    }
}

/// A key attribute named by a top-level path.
fn key_path(op: &Operand) -> Option<&Path> {
    match op {
        Operand::Path(p) => Some(p),
        _ => None,
    }
}

fn literal(op: Operand) -> Result<AttributeValue, ValidationError> {
    match op {
        Operand::Value(v) => Ok(v),
        Operand::Size(_) => Err(invalid_operator("size")),
        Operand::Path(_) => Err(not_supported()),
    }
}

pub(crate) fn from_condition(
    cond: Cond,
    hash_key: &str,
    range_key: Option<&str>,
) -> Result<KeyCondition, ValidationError> {
    let mut parts = Vec::new();
    flatten(cond, &mut parts)?;
    let mut hash_value = None;
    let mut range = None;
    let mut other_attribute = false;
    for part in parts {
        let (path, condition) = match part {
            Cond::Compare(c, a, b) => {
                let (c, path, value) = match (key_path(&a).is_some(), key_path(&b).is_some()) {
                    (true, false) => (c, a, b),
                    (false, true) => (c.swapped(), b, a),
                    _ => return Err(not_supported()),
                };
                let Operand::Path(path) = path else {
                    unreachable!()
                };
                let value = literal(value)?;
                let rc = match c {
                    Comparator::Eq => RangeCondition::Eq(value),
                    Comparator::Lt => RangeCondition::Lt(value),
                    Comparator::Le => RangeCondition::Le(value),
                    Comparator::Gt => RangeCondition::Gt(value),
                    Comparator::Ge => RangeCondition::Ge(value),
                    Comparator::Ne => return Err(invalid_operator("<>")),
                };
                (path, rc)
            }
            Cond::Between(x, l, h) => {
                let Operand::Path(path) = x else {
                    return Err(not_supported());
                };
                (path, RangeCondition::Between(literal(l)?, literal(h)?))
            }
            Cond::BeginsWith(x, p) => {
                let Operand::Path(path) = x else {
                    return Err(not_supported());
                };
                (path, RangeCondition::BeginsWith(literal(p)?))
            }
            Cond::In(..) => return Err(invalid_operator("IN")),
            Cond::Exists(_) => return Err(invalid_operator("attribute_exists")),
            Cond::NotExists(_) => return Err(invalid_operator("attribute_not_exists")),
            Cond::AttributeType(..) => return Err(invalid_operator("attribute_type")),
            Cond::Contains(..) => return Err(invalid_operator("contains")),
            Cond::True | Cond::And(..) | Cond::Or(..) | Cond::Not(..) => {
                return Err(not_supported());
            }
        };
        if !path.is_top_level() {
            return Err(error(format!(
                "Invalid KeyConditionExpression: Key condition may not be on a nested attribute; path: {path}"
            )));
        }
        let name = path.top();
        if name == hash_key {
            if hash_value.is_some() {
                return Err(error(
                    "KeyConditionExpressions must only contain one condition per key",
                ));
            }
            let RangeCondition::Eq(v) = condition else {
                return Err(not_supported());
            };
            hash_value = Some(v);
        } else if Some(name) == range_key {
            if range.is_some() {
                return Err(error(
                    "KeyConditionExpressions must only contain one condition per key",
                ));
            }
            range = Some((name.to_owned(), condition));
        } else {
            // Named once every condition is seen: the hash key if it has none, else the
            // range key (DynamoDB names the sort key when the hash key is there).
            other_attribute = true;
        }
    }
    let Some(hash_value) = hash_value else {
        return Err(error(format!(
            "Query condition missed key schema element: {hash_key}"
        )));
    };
    if other_attribute {
        return Err(error(format!(
            "Query condition missed key schema element: {}",
            range_key.unwrap_or(hash_key)
        )));
    }
    Ok(KeyCondition {
        hash_key: hash_key.to_owned(),
        hash_value,
        range,
    })
}
