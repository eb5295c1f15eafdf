//! Applying an update expression to an item.
//!
//! As DynamoDB does: every right-hand side is evaluated on the item as it was before the
//! update; then the actions are applied. REMOVEs of list elements use the old indexes (they
//! are applied from the highest index down). SET past the end of a list appends; several such
//! SETs append in index order, whatever their order in the expression. A SET whose parent path
//! does not exist, or crosses a value of the wrong type, is refused; so is a REMOVE or DELETE,
//! except on an item that does not exist, where DynamoDB lets it through as removing nothing. A
//! REMOVE of a map key or list index the parent lacks removes nothing.

use std::collections::BTreeSet;

use super::ast::{Action, Path, PathElement, SetValue};
use super::eval::resolve;
use crate::value::{AttributeValue, Map, ValidationError};

pub(super) const BAD_TYPE: &str = "An operand in the update expression has an incorrect data type";
/// What DynamoDB says instead of [`BAD_TYPE`] for `AttributeUpdates` (an ADD or DELETE whose
/// value's type is not the attribute's).
pub(super) const LEGACY_TYPE_MISMATCH: &str = "Type mismatch for attribute to update";
const BAD_PATH: &str = "The document path provided in the update expression is invalid for update";
const MISSING: &str =
    "The provided expression refers to an attribute that does not exist in the item";

fn error(m: &str) -> ValidationError {
    ValidationError(m.to_owned())
}

fn evaluate(item: &Map, v: &SetValue) -> Result<AttributeValue, ValidationError> {
    match v {
        SetValue::Value(v) => Ok(v.clone()),
        SetValue::Path(p) => resolve(item, p).cloned().ok_or_else(|| error(MISSING)),
        SetValue::IfNotExists(p, default) => match resolve(item, p) {
            Some(v) => Ok(v.clone()),
            None => evaluate(item, default),
        },
        SetValue::ListAppend(a, b) => match (evaluate(item, a)?, evaluate(item, b)?) {
            (AttributeValue::L(mut a), AttributeValue::L(b)) => {
                a.extend(b);
                Ok(AttributeValue::L(a))
            }
            _ => Err(error(BAD_TYPE)),
        },
        SetValue::Plus(a, b) | SetValue::Minus(a, b) => {
            match (evaluate(item, a)?, evaluate(item, b)?) {
                (AttributeValue::N(a), AttributeValue::N(b)) => {
                    let r = if matches!(v, SetValue::Plus(..)) {
                        a.checked_add(&b)?
                    } else {
                        a.checked_sub(&b)?
                    };
                    Ok(AttributeValue::N(r))
                }
                _ => Err(error(BAD_TYPE)),
            }
        }
    }
}

/// The container holding the last element of `path`, created nowhere: it must exist.
fn parent_mut<'i>(
    item: &'i mut Map,
    path: &Path,
) -> Result<Option<&'i mut AttributeValue>, ValidationError> {
    let elements = &path.0;
    if elements.len() == 1 {
        return Ok(None);
    }
    let Some(PathElement::Name(top)) = elements.first() else {
        return Err(error(BAD_PATH));
    };
    let mut current = item.get_mut(top).ok_or_else(|| error(BAD_PATH))?;
    for e in &elements[1..elements.len() - 1] {
        current = match (e, current) {
            (PathElement::Name(n), AttributeValue::M(m)) => {
                m.get_mut(n).ok_or_else(|| error(BAD_PATH))?
            }
            (PathElement::Index(i), AttributeValue::L(l)) => {
                l.get_mut(*i as usize).ok_or_else(|| error(BAD_PATH))?
            }
            _ => return Err(error(BAD_PATH)),
        };
    }
    Ok(Some(current))
}

fn set_at(item: &mut Map, path: &Path, value: AttributeValue) -> Result<(), ValidationError> {
    let last = path.0.last().ok_or_else(|| error(BAD_PATH))?;
    match (parent_mut(item, path)?, last) {
        (None, PathElement::Name(n)) => {
            item.insert(n.clone(), value);
        }
        (Some(AttributeValue::M(m)), PathElement::Name(n)) => {
            m.insert(n.clone(), value);
        }
        (Some(AttributeValue::L(l)), PathElement::Index(i)) => {
            let i = *i as usize;
            if i < l.len() {
                l[i] = value;
            } else {
                l.push(value);
            }
        }
        _ => return Err(error(BAD_PATH)),
    }
    Ok(())
}

/// Whether the container `path`'s last element belongs in is there: a map for a name, a list
/// for an index (the item itself for a top-level attribute).
fn parent_exists(item: &Map, path: &Path) -> bool {
    let Some((last, parent)) = path.0.split_last() else {
        return false;
    };
    if parent.is_empty() {
        return matches!(last, PathElement::Name(_));
    }
    matches!(
        (resolve(item, &Path(parent.to_vec())), last),
        (Some(AttributeValue::M(_)), PathElement::Name(_))
            | (Some(AttributeValue::L(_)), PathElement::Index(_))
    )
}

/// Removes what `path` names; its parent was checked on the old item, and no other action can
/// have replaced it (overlapping paths are refused), so a missing parent here is an error.
fn remove_at(item: &mut Map, path: &Path) -> Result<(), ValidationError> {
    let last = path.0.last().ok_or_else(|| error(BAD_PATH))?;
    match (parent_mut(item, path)?, last) {
        (None, PathElement::Name(n)) => {
            item.remove(n);
        }
        (Some(AttributeValue::M(m)), PathElement::Name(n)) => {
            m.remove(n);
        }
        (Some(AttributeValue::L(l)), PathElement::Index(i)) => {
            if (*i as usize) < l.len() {
                l.remove(*i as usize);
            }
        }
        (Some(_), _) => return Err(error(BAD_PATH)),
        (None, PathElement::Index(_)) => return Err(error(BAD_PATH)),
    }
    Ok(())
}

fn add(
    old: Option<&AttributeValue>,
    v: &AttributeValue,
) -> Result<AttributeValue, ValidationError> {
    fn union<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<T> {
        let mut out = a.to_vec();
        out.extend(b.iter().filter(|x| !a.contains(x)).cloned());
        out
    }
    Ok(match (old, v) {
        (None, v) => v.clone(),
        (Some(AttributeValue::N(a)), AttributeValue::N(b)) => AttributeValue::N(a.checked_add(b)?),
        (Some(AttributeValue::Ss(a)), AttributeValue::Ss(b)) => AttributeValue::Ss(union(a, b)),
        (Some(AttributeValue::Ns(a)), AttributeValue::Ns(b)) => AttributeValue::Ns(union(a, b)),
        (Some(AttributeValue::Bs(a)), AttributeValue::Bs(b)) => AttributeValue::Bs(union(a, b)),
        _ => return Err(error(BAD_TYPE)),
    })
}

/// The set left after DELETE, or `None` when it is empty (the attribute goes).
fn delete(
    old: &AttributeValue,
    v: &AttributeValue,
) -> Result<Option<AttributeValue>, ValidationError> {
    fn minus<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<T> {
        a.iter().filter(|x| !b.contains(x)).cloned().collect()
    }
    let left = match (old, v) {
        (AttributeValue::Ss(a), AttributeValue::Ss(b)) => AttributeValue::Ss(minus(a, b)),
        (AttributeValue::Ns(a), AttributeValue::Ns(b)) => AttributeValue::Ns(minus(a, b)),
        (AttributeValue::Bs(a), AttributeValue::Bs(b)) => AttributeValue::Bs(minus(a, b)),
        _ => return Err(error(BAD_TYPE)),
    };
    let empty = match &left {
        AttributeValue::Ss(s) => s.is_empty(),
        AttributeValue::Ns(s) => s.is_empty(),
        AttributeValue::Bs(s) => s.is_empty(),
        _ => false,
    };
    Ok((!empty).then_some(left))
}

/// What one action does to its path, decided on the old item.
enum Step {
    Write(AttributeValue),
    Remove,
    Nothing,
}

/// Applies `actions` to `old`, returning the new item and the top-level attributes touched.
/// `exists` is false when there is no stored item (`old` is then its key alone).
pub(crate) fn apply(
    actions: &[Action],
    old: &Map,
    exists: bool,
) -> Result<(Map, BTreeSet<String>), ValidationError> {
    // Right-hand sides and removals first, all on the old item.
    let mut planned = Vec::with_capacity(actions.len());
    for action in actions {
        let step = match action {
            Action::Set(_, v) => Step::Write(evaluate(old, v)?),
            Action::Add(p, v) => Step::Write(add(resolve(old, p), v)?),
            Action::Remove(p) | Action::Delete(p, _) if !parent_exists(old, p) => {
                // `REMOVE a.b` where `a` is no map (or absent) names nothing that could be
                // there: DynamoDB refuses it, and applies no action of the update. Only on an
                // item that does not exist does it let it through, removing nothing.
                if exists {
                    return Err(error(BAD_PATH));
                }
                Step::Nothing
            }
            Action::Remove(_) => Step::Remove,
            Action::Delete(p, v) => match resolve(old, p) {
                None => Step::Nothing,
                Some(existing) => match delete(existing, v)? {
                    Some(left) => Step::Write(left),
                    None => Step::Remove,
                },
            },
        };
        planned.push(step);
    }
    let mut item = old.clone();
    let mut changed = BTreeSet::new();
    let mut writes: Vec<(&Path, AttributeValue)> = Vec::new();
    let mut removals: Vec<&Path> = Vec::new();
    for (action, step) in actions.iter().zip(planned) {
        changed.insert(action.path().top().to_owned());
        match step {
            Step::Write(v) => writes.push((action.path(), v)),
            Step::Remove => removals.push(action.path()),
            Step::Nothing => {}
        }
    }
    // In path order, as DynamoDB applies them: the paths do not overlap, so the order only
    // shows where several SETs past a list's end append, which is by index, not as written
    // (`SET a[84] = :x, a[17] = :y` appends :y then :x).
    writes.sort_by(|a, b| a.0.cmp(b.0));
    for (path, v) in writes {
        set_at(&mut item, path, v)?;
    }
    // Highest list indexes first, so earlier removals do not shift later ones.
    removals.sort_by(|a, b| b.cmp(a));
    for p in removals {
        remove_at(&mut item, p)?;
    }
    Ok((item, changed))
}
