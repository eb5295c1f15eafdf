//! Evaluating conditions on an item, as DynamoDB does: a path that leads nowhere, or
//! operands of different types, make a comparison false (never an error); numbers compare
//! numerically, strings and binaries bytewise.

use std::cmp::Ordering;

use super::ast::{Comparator, Cond, Operand, Path, PathElement};
use crate::value::{AttributeValue, Map, Number};

/// The value at `path` in `item`, if there is one.
pub(crate) fn resolve<'i>(item: &'i Map, path: &Path) -> Option<&'i AttributeValue> {
    let mut elements = path.0.iter();
    let Some(PathElement::Name(top)) = elements.next() else {
        return None;
    };
    let mut current = item.get(top)?;
    for e in elements {
        current = match (e, current) {
            (PathElement::Name(n), AttributeValue::M(m)) => m.get(n)?,
            (PathElement::Index(i), AttributeValue::L(l)) => l.get(*i as usize)?,
            _ => return None,
        };
    }
    Some(current)
}

/// The order of two values of the same scalar type (N, S, B); `None` if not comparable.
pub(crate) fn compare_values(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    match (a, b) {
        (AttributeValue::N(x), AttributeValue::N(y)) => Some(x.cmp(y)),
        (AttributeValue::S(x), AttributeValue::S(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (AttributeValue::B(x), AttributeValue::B(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// `size()` of a value: string bytes, binary bytes, set members, map or list entries.
pub(crate) fn size_of(v: &AttributeValue) -> Option<AttributeValue> {
    let n = match v {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Ss(s) => s.len(),
        AttributeValue::Ns(s) => s.len(),
        AttributeValue::Bs(s) => s.len(),
        AttributeValue::M(m) => m.len(),
        AttributeValue::L(l) => l.len(),
        _ => return None,
    };
    Some(AttributeValue::N(Number::from(n as i64)))
}

fn operand<'i>(item: &'i Map, op: &'i Operand) -> Option<std::borrow::Cow<'i, AttributeValue>> {
    use std::borrow::Cow;
    match op {
        Operand::Value(v) => Some(Cow::Borrowed(v)),
        Operand::Path(p) => resolve(item, p).map(Cow::Borrowed),
        Operand::Size(p) => resolve(item, p).and_then(size_of).map(Cow::Owned),
    }
}

fn compare(c: Comparator, a: Option<&AttributeValue>, b: Option<&AttributeValue>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        // A missing operand is unequal to everything, and orders with nothing.
        return c == Comparator::Ne;
    };
    match c {
        Comparator::Eq => a == b,
        Comparator::Ne => a != b,
        _ => match compare_values(a, b) {
            None => false,
            Some(o) => match c {
                Comparator::Lt => o == Ordering::Less,
                Comparator::Le => o != Ordering::Greater,
                Comparator::Gt => o == Ordering::Greater,
                Comparator::Ge => o != Ordering::Less,
                Comparator::Eq | Comparator::Ne => unreachable!("handled above"),
            },
        },
    }
}

fn contains(haystack: &AttributeValue, needle: &AttributeValue) -> bool {
    match (haystack, needle) {
        (AttributeValue::S(h), AttributeValue::S(n)) => h.contains(n.as_str()),
        (AttributeValue::B(h), AttributeValue::B(n)) => {
            n.is_empty() || h.windows(n.len()).any(|w| w == n.as_slice())
        }
        (AttributeValue::Ss(h), AttributeValue::S(n)) => h.contains(n),
        (AttributeValue::Ns(h), AttributeValue::N(n)) => h.contains(n),
        (AttributeValue::Bs(h), AttributeValue::B(n)) => h.contains(n),
        (AttributeValue::L(h), n) => h.contains(n),
        _ => false,
    }
}

fn begins_with(a: &AttributeValue, prefix: &AttributeValue) -> bool {
    match (a, prefix) {
        (AttributeValue::S(s), AttributeValue::S(p)) => s.starts_with(p.as_str()),
        (AttributeValue::B(s), AttributeValue::B(p)) => s.starts_with(p),
        _ => false,
    }
}

/// Evaluates a condition on an item.
pub(crate) fn eval(cond: &Cond, item: &Map) -> bool {
    match cond {
        Cond::True => true,
        Cond::Compare(c, a, b) => {
            compare(*c, operand(item, a).as_deref(), operand(item, b).as_deref())
        }
        Cond::Between(x, low, high) => {
            let (Some(x), Some(l), Some(h)) =
                (operand(item, x), operand(item, low), operand(item, high))
            else {
                return false;
            };
            matches!(
                compare_values(&x, &l),
                Some(Ordering::Greater | Ordering::Equal)
            ) && matches!(
                compare_values(&x, &h),
                Some(Ordering::Less | Ordering::Equal)
            )
        }
        Cond::In(x, list) => {
            let Some(x) = operand(item, x) else {
                return false;
            };
            list.iter()
                .any(|o| operand(item, o).is_some_and(|v| *v == *x))
        }
        Cond::And(a, b) => eval(a, item) && eval(b, item),
        Cond::Or(a, b) => eval(a, item) || eval(b, item),
        Cond::Not(a) => !eval(a, item),
        Cond::Exists(p) => resolve(item, p).is_some(),
        Cond::NotExists(p) => resolve(item, p).is_none(),
        Cond::AttributeType(a, t) => match (operand(item, a), operand(item, t).as_deref()) {
            (Some(v), Some(AttributeValue::S(t))) => v.type_name() == t,
            _ => false,
        },
        Cond::BeginsWith(a, b) => match (operand(item, a), operand(item, b)) {
            (Some(a), Some(b)) => begins_with(&a, &b),
            _ => false,
        },
        Cond::Contains(a, b) => match (operand(item, a), operand(item, b)) {
            (Some(a), Some(b)) => contains(&a, &b),
            _ => false,
        },
    }
}
