//! Key conditions: DynamoDB parses a `KeyConditionExpression` with the condition parser, then
//! accepts only `hash = :v`, optionally ANDed with one range-key condition (`=`, `<`, `<=`,
//! `>`, `>=`, `BETWEEN`, `begins_with`), either operand order, parentheses allowed.
//!
//! A GSI with a multi-attribute key ([`from_composite_condition`]) takes `=` on every HASH
//! attribute and conditions on a left-hand prefix of its RANGE attributes: `=` on each but the
//! last given, any range-key condition on that one. A RANGE attribute skipped before one that
//! has a condition is "missed", as a missing hash key is; a comparison before the last is not
//! supported.

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

/// One term of a key condition: the key attribute it is on and what it asks of it.
fn term(part: Cond) -> Result<(String, RangeCondition), ValidationError> {
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
    Ok((path.top().to_owned(), condition))
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
        let (name, condition) = term(part)?;
        let name = name.as_str();
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

/// A key condition on a GSI with a multi-attribute key, or any key condition put in that form
/// ([`KeyCondition::composite`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeKeyCondition {
    /// One value per HASH attribute, in key schema order.
    pub hash: Vec<AttributeValue>,
    /// The conditions on the first `range.len()` RANGE attributes, in key schema order: each
    /// but the last is [`RangeCondition::Eq`].
    pub range: Vec<RangeCondition>,
}

impl KeyCondition {
    /// The same condition on a key of one HASH and at most one RANGE attribute.
    pub fn composite(self) -> CompositeKeyCondition {
        CompositeKeyCondition {
            hash: vec![self.hash_value],
            range: self.range.map(|(_, c)| c).into_iter().collect(),
        }
    }
}

/// The key condition `cond` on a key of HASH attributes `hashes` and RANGE attributes
/// `ranges` (module docs for the rules).
pub(crate) fn from_composite_condition(
    cond: Cond,
    hashes: &[&str],
    ranges: &[&str],
) -> Result<CompositeKeyCondition, ValidationError> {
    let mut parts = Vec::new();
    flatten(cond, &mut parts)?;
    let mut hash: Vec<Option<AttributeValue>> = vec![None; hashes.len()];
    let mut range: Vec<Option<RangeCondition>> = vec![None; ranges.len()];
    let mut other_attribute = false;
    let once = || error("KeyConditionExpressions must only contain one condition per key");
    for part in parts {
        let (name, condition) = term(part)?;
        if let Some(i) = hashes.iter().position(|h| *h == name) {
            if hash[i].is_some() {
                return Err(once());
            }
            let RangeCondition::Eq(v) = condition else {
                return Err(not_supported());
            };
            hash[i] = Some(v);
        } else if let Some(i) = ranges.iter().position(|r| *r == name) {
            if range[i].is_some() {
                return Err(once());
            }
            range[i] = Some(condition);
        } else {
            other_attribute = true;
        }
    }
    let missed = |name: &str| error(format!("Query condition missed key schema element: {name}"));
    if let Some(i) = hash.iter().position(Option::is_none) {
        return Err(missed(hashes[i]));
    }
    // The RANGE attributes given must be a prefix: the first one skipped before a given one
    // is missed (as is the first RANGE attribute when a condition names a non-key attribute).
    let given = range.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    if let Some(i) = range[..given].iter().position(Option::is_none) {
        return Err(missed(ranges[i]));
    }
    if other_attribute {
        let name = ranges
            .get(given)
            .or(ranges.first())
            .or(hashes.last())
            .copied()
            .unwrap_or_default();
        return Err(missed(name));
    }
    let range: Vec<RangeCondition> = range.into_iter().flatten().collect();
    if range
        .iter()
        .rev()
        .skip(1)
        .any(|c| !matches!(c, RangeCondition::Eq(_)))
    {
        return Err(not_supported());
    }
    Ok(CompositeKeyCondition {
        hash: hash.into_iter().flatten().collect(),
        range,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::expr::Expressions;

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    /// `text` as a key condition on HASH attributes (t, r) and RANGE attributes (a, b, c), with
    /// `:x` and `:y` the strings "x" and "y".
    fn parse(text: &str) -> Result<CompositeKeyCondition, String> {
        let names = HashMap::new();
        let values = HashMap::from([(":x".to_string(), s("x")), (":y".to_string(), s("y"))]);
        let mut ex = Expressions::new(&names, &values);
        ex.composite_key_condition(text, &["t", "r"], &["a", "b", "c"])
            .map_err(|e| e.0)
    }

    #[test]
    fn composite_conditions_take_every_hash_and_a_range_prefix() {
        let c = parse("r = :y AND t = :x").unwrap();
        assert_eq!(c.hash, [s("x"), s("y")]);
        assert!(c.range.is_empty());
        let c = parse("t = :x AND r = :y AND b > :y AND a = :x").unwrap();
        assert_eq!(
            c.range,
            [RangeCondition::Eq(s("x")), RangeCondition::Gt(s("y"))]
        );
        let c = parse("t = :x AND r = :y AND begins_with(a, :x)").unwrap();
        assert_eq!(c.range, [RangeCondition::BeginsWith(s("x"))]);
        parse("t = :x AND r = :y AND a = :x AND b = :x AND c BETWEEN :x AND :y").unwrap();
    }

    #[test]
    fn composite_conditions_refuse_gaps_and_early_comparisons() {
        let missed = "Query condition missed key schema element: ";
        assert_eq!(parse("t = :x").unwrap_err(), format!("{missed}r"));
        assert_eq!(
            parse("t = :x AND r = :y AND b = :x").unwrap_err(),
            format!("{missed}a")
        );
        assert_eq!(
            parse("t = :x AND r = :y AND a = :x AND c = :x").unwrap_err(),
            format!("{missed}b")
        );
        assert_eq!(
            parse("t = :x AND r = :y AND z = :x").unwrap_err(),
            format!("{missed}a")
        );
        assert_eq!(
            parse("t = :x AND r = :y AND a > :x AND b = :x").unwrap_err(),
            "Query key condition not supported"
        );
        assert_eq!(
            parse("t > :x AND r = :y").unwrap_err(),
            "Query key condition not supported"
        );
        assert_eq!(
            parse("t = :x AND r = :y AND a = :x AND a = :y").unwrap_err(),
            "KeyConditionExpressions must only contain one condition per key"
        );
    }
}
