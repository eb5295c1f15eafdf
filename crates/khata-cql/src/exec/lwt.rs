//! Conditional statements (lightweight transactions): `INSERT ... IF NOT EXISTS`,
//! `UPDATE/DELETE ... IF EXISTS` and `IF <conditions>`, with Cassandra's `[applied]` result.
//!
//! The statement's mutations are built as for a plain write, then handed to the coordinator's
//! compare-and-set with a check that runs on what the replica reads under the partition's
//! serialization. When the check fails nothing is written and the result carries the current
//! values: the whole row for `IF [NOT] EXISTS`, the conditioned columns otherwise.
//!
//! A conditional BATCH is one compare-and-set too: its statements' mutations (one table, one
//! partition) are merged, every condition must hold on the rows read, and a failure answers
//! with one row per checked row that exists, keyed by its primary key, as Cassandra does.

use std::cmp::Ordering;

use bytes::Bytes;
use khata_coordinator::catalog::{Mutation, ReadResult, TableSchema};
use khata_types::clustering::{end_bound, full_range, start_bound};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::{ColumnDef, ColumnKind, CqlType};

use super::bind::{self, Bound};
use super::cells::Deferred;
use super::error::{ExecError, coordinator_consistency};
use super::modify::{DeferredWrite, Planned, apply_deferred};
use super::select::{cell_value, wildcard_columns};
use super::types::column_type;
use super::{Executor, Run};
use crate::frame::{ColumnSpec, ColumnType, Consistency, ResultBody, Rows, RowsMetadata};
use crate::language::ast::{ComparisonOp, ConditionPredicate, ElementSelector, IfClause, InValues};
use crate::value::{CqlValue, compare};

/// What must hold for the write to happen.
#[derive(Clone, Debug)]
pub(crate) enum Check {
    /// `IF NOT EXISTS`
    NotExists,
    /// `IF EXISTS`
    Exists,
    /// `IF c1 op v1 AND ...`
    Conditions(Vec<ColumnCheck>),
}

/// One `IF` condition, with its values bound.
#[derive(Clone, Debug)]
pub(crate) struct ColumnCheck {
    column: ColumnDef,
    /// `m['k']`, `l[0]` (the serialized key or index) or `u.f`.
    element: Option<Element>,
    predicate: Predicate,
}

#[derive(Clone, Debug)]
enum Element {
    Key(Bytes),
    Field(String),
}

#[derive(Clone, Debug)]
enum Predicate {
    Compare(ComparisonOp, Option<Bytes>),
    In(Vec<Option<Bytes>>),
}

/// The type of what a condition looks at.
fn checked_type(c: &ColumnCheck) -> Result<CqlType, ExecError> {
    Ok(match (&c.element, &c.column.ty) {
        (None, ty) => ty.clone(),
        (Some(Element::Key(_)), CqlType::Map { value, .. }) => value.as_ref().clone(),
        (Some(Element::Key(_)), CqlType::List { element, .. }) => element.as_ref().clone(),
        (Some(Element::Field(f)), CqlType::Udt { fields, .. }) => fields
            .iter()
            .find(|(n, _)| n == f)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| ExecError::invalid(format!("Unknown field {f}")))?,
        _ => {
            return Err(ExecError::invalid(format!(
                "Invalid element access on column {}",
                c.column.name
            )));
        }
    })
}

/// Bind the conditions of an `IF` clause.
pub(crate) fn bind_check(
    t: &TableSchema,
    run: &Run<'_>,
    clause: &IfClause,
) -> Result<Check, ExecError> {
    let IfClause::Conditions(conditions) = clause else {
        return Ok(Check::Exists);
    };
    let mut out = Vec::new();
    for cond in conditions {
        let column = t
            .def
            .column(&cond.column.0)
            .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", cond.column.0)))?
            .clone();
        if matches!(
            column.kind,
            ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
        ) {
            return Err(ExecError::invalid(format!(
                "PRIMARY KEY column '{}' cannot have IF conditions",
                column.name
            )));
        }
        let element = match &cond.selector {
            None => None,
            Some(ElementSelector::Field(f)) => Some(Element::Field(f.0.clone())),
            Some(ElementSelector::Element(term)) => {
                let key_ty = match &column.ty {
                    CqlType::Map { key, .. } => key.as_ref().clone(),
                    CqlType::List { .. } => CqlType::Int,
                    _ => {
                        return Err(ExecError::invalid(format!(
                            "Invalid element access on column {}",
                            column.name
                        )));
                    }
                };
                let list = matches!(column.ty, CqlType::List { .. });
                let what = if list { "list" } else { "map" };
                let key = match bind::value(run, term, &key_ty, &column.name)? {
                    Bound::Value(b) => b,
                    Bound::Null => {
                        return Err(ExecError::invalid(format!(
                            "Invalid null value for {what} element access"
                        )));
                    }
                    Bound::Unset => {
                        return Err(ExecError::invalid(format!(
                            "Invalid unset value for {what} element access"
                        )));
                    }
                };
                if list
                    && let Ok(index) = <[u8; 4]>::try_from(&key[..]).map(i32::from_be_bytes)
                    && index < 0
                {
                    return Err(ExecError::invalid(format!(
                        "Invalid negative list index {index}"
                    )));
                }
                Some(Element::Key(key))
            }
        };
        let mut check = ColumnCheck {
            column,
            element,
            predicate: Predicate::In(Vec::new()),
        };
        let ty = checked_type(&check)?;
        // `None` for unset: an unset value in an IN list is left out, anywhere else refused.
        let value = |term| -> Result<Option<Option<Bytes>>, ExecError> {
            Ok(match bind::value(run, term, &ty, &check.column.name)? {
                Bound::Value(b) => Some(Some(b)),
                Bound::Null => Some(None),
                Bound::Unset => None,
            })
        };
        let unset = || ExecError::invalid("Invalid 'unset' value in condition");
        check.predicate = match &cond.predicate {
            ConditionPredicate::Compare(
                op @ (ComparisonOp::Contains | ComparisonOp::ContainsKey),
                term,
            ) if check.element.is_none() => {
                // `IF c CONTAINS v` / `IF m CONTAINS KEY k` (Cassandra 5.0's conditions on a
                // whole collection, frozen or not).
                let name = &check.column.name;
                let member = match (op, &ty) {
                    (ComparisonOp::Contains, CqlType::List { element, .. })
                    | (ComparisonOp::Contains, CqlType::Set { element, .. }) => element.as_ref(),
                    (ComparisonOp::Contains, CqlType::Map { value, .. }) => value.as_ref(),
                    (ComparisonOp::ContainsKey, CqlType::Map { key, .. }) => key.as_ref(),
                    (ComparisonOp::Contains, _) => {
                        return Err(ExecError::invalid(format!(
                            "Cannot use CONTAINS on non-collection column {name}"
                        )));
                    }
                    _ => {
                        return Err(ExecError::invalid(format!(
                            "Cannot use CONTAINS KEY on non-map column {name}"
                        )));
                    }
                };
                match bind::value(run, term, member, name)? {
                    Bound::Value(b) => Predicate::Compare(*op, Some(b)),
                    Bound::Null => {
                        return Err(ExecError::invalid(format!(
                            "Invalid comparison with null for operator \"{}\"",
                            op.symbol()
                        )));
                    }
                    // Cassandra compares the unset marker's empty value with the elements:
                    // the condition does not hold (an `IN` of nothing never does).
                    Bound::Unset => Predicate::In(Vec::new()),
                }
            }
            ConditionPredicate::Compare(
                op @ (ComparisonOp::Contains
                | ComparisonOp::ContainsKey
                | ComparisonOp::NotContains
                | ComparisonOp::NotContainsKey
                | ComparisonOp::Like),
                _,
            ) => {
                return Err(ExecError::invalid(format!(
                    "Unsupported \"{}\" condition on {}",
                    op.symbol(),
                    check.column.name
                )));
            }
            ConditionPredicate::Compare(op, term) => {
                if matches!(
                    op,
                    ComparisonOp::Less
                        | ComparisonOp::LessEqual
                        | ComparisonOp::Greater
                        | ComparisonOp::GreaterEqual
                ) {
                    refuse_duration_slice(&ty, op.symbol())?;
                }
                let v = value(term)?.ok_or_else(unset)?;
                if v.is_none() && !matches!(op, ComparisonOp::Equal | ComparisonOp::NotEqual) {
                    return Err(ExecError::invalid(format!(
                        "Invalid comparison with null for operator \"{}\"",
                        op.symbol()
                    )));
                }
                Predicate::Compare(*op, v)
            }
            ConditionPredicate::In(InValues::Terms(terms)) => {
                let mut values = Vec::new();
                for term in terms {
                    if let Some(v) = value(term)? {
                        values.push(v);
                    }
                }
                Predicate::In(values)
            }
            ConditionPredicate::In(values @ InValues::Marker(m)) => {
                // A bound list that is null or unset, in Cassandra's words for a condition.
                match run.values.get(m.index) {
                    Some(crate::frame::Value::Null) => {
                        return Err(ExecError::invalid("Invalid null list in IN condition"));
                    }
                    Some(crate::frame::Value::NotSet) => {
                        return Err(ExecError::invalid("Invalid 'unset' value in condition"));
                    }
                    _ => {}
                }
                Predicate::In(
                    super::restrictions::in_values(run, values, &ty, &check.column.name)?
                        .into_iter()
                        .map(Some)
                        .collect(),
                )
            }
        };
        out.push(check);
    }
    Ok(Check::Conditions(out))
}

/// Cassandra's refusal of `<`, `<=`, `>`, `>=` on durations, which have no order
/// (`ColumnCondition.Raw.validateOperationOnDurations`).
fn refuse_duration_slice(ty: &CqlType, op: &str) -> Result<(), ExecError> {
    let has_duration = super::ddl::references_duration;
    let message = match ty {
        CqlType::Duration => format!("Slice conditions ( {op} ) are not supported on durations"),
        CqlType::List { .. }
        | CqlType::Set { .. }
        | CqlType::Map { .. }
        | CqlType::Vector { .. }
            if has_duration(ty) =>
        {
            "Slice conditions are not supported on collections containing durations".to_string()
        }
        CqlType::Tuple(_) if has_duration(ty) => {
            "Slice conditions are not supported on tuples containing durations".to_string()
        }
        CqlType::Udt { .. } if has_duration(ty) => {
            "Slice conditions are not supported on UDTs containing durations".to_string()
        }
        _ => return Ok(()),
    };
    Err(ExecError::invalid(message))
}

/// The current value a condition looks at.
fn current(c: &ColumnCheck, row: &Row, statics: &Row, now: u32) -> Option<Bytes> {
    let source = if c.column.kind == ColumnKind::Static {
        statics
    } else {
        row
    };
    match &c.element {
        None => cell_value(&c.column, source, now),
        Some(Element::Key(key)) if c.column.ty.is_multi_cell() => match &c.column.ty {
            CqlType::Map { .. } => source
                .cells
                .get(&CellKey::element(c.column.id, key.clone()))
                .and_then(|cell| cell.live_value(now).cloned()),
            _ => {
                let index = <[u8; 4]>::try_from(&key[..]).ok().map(i32::from_be_bytes)?;
                let live: Vec<Bytes> = source
                    .cells
                    .iter()
                    .filter(|(k, _)| k.column == c.column.id && k.path.is_some())
                    .filter_map(|(_, cell)| cell.live_value(now).cloned())
                    .collect();
                usize::try_from(index)
                    .ok()
                    .and_then(|i| live.get(i).cloned())
            }
        },
        Some(Element::Key(key)) => {
            // A frozen map or list: look inside the value.
            let whole = cell_value(&c.column, source, now)?;
            let value = CqlValue::deserialize(&c.column.ty, &whole).ok()?;
            match (value, &c.column.ty) {
                (
                    CqlValue::Map(entries),
                    CqlType::Map {
                        key: kt, value: vt, ..
                    },
                ) => {
                    let k = CqlValue::deserialize(kt, key).ok()?;
                    entries
                        .into_iter()
                        .find(|(ek, _)| compare(kt, ek, &k) == Ordering::Equal)
                        .map(|(_, v)| Bytes::from(v.to_bytes(vt)))
                }
                (CqlValue::List(items), CqlType::List { element, .. }) => {
                    let index = <[u8; 4]>::try_from(&key[..]).ok().map(i32::from_be_bytes)?;
                    let item = items.into_iter().nth(usize::try_from(index).ok()?)?;
                    Some(Bytes::from(item.to_bytes(element)))
                }
                _ => None,
            }
        }
        Some(Element::Field(f)) => {
            let whole = cell_value(&c.column, source, now)?;
            let CqlValue::Udt(fields) = CqlValue::deserialize(&c.column.ty, &whole).ok()? else {
                return None;
            };
            let CqlType::Udt { fields: types, .. } = &c.column.ty else {
                return None;
            };
            let (_, ty) = types.iter().find(|(n, _)| n == f)?;
            fields
                .into_iter()
                .find(|(n, _)| n == f)
                .and_then(|(_, v)| v)
                .map(|v| Bytes::from(v.to_bytes(ty)))
        }
    }
}

/// Whether the collection `current` (of type `ty`) holds `v` among its elements or values
/// (`CONTAINS`), or its keys (`CONTAINS KEY`); an absent collection holds nothing.
fn contains(ty: &CqlType, op: ComparisonOp, current: Option<&Bytes>, v: &Bytes) -> bool {
    let Some(current) = current.and_then(|c| CqlValue::deserialize(ty, c).ok()) else {
        return false;
    };
    let same = |member_ty: &CqlType, member: &CqlValue| {
        CqlValue::deserialize(member_ty, v)
            .is_ok_and(|wanted| compare(member_ty, member, &wanted) == Ordering::Equal)
    };
    match (current, ty) {
        (CqlValue::List(items), CqlType::List { element, .. })
        | (CqlValue::Set(items), CqlType::Set { element, .. }) => {
            items.iter().any(|item| same(element, item))
        }
        (CqlValue::Map(entries), CqlType::Map { key, value, .. }) => {
            entries.iter().any(|(k, x)| {
                if op == ComparisonOp::ContainsKey {
                    same(key, k)
                } else {
                    same(value, x)
                }
            })
        }
        _ => false,
    }
}

fn holds(c: &ColumnCheck, current: Option<&Bytes>) -> bool {
    let Ok(ty) = checked_type(c) else {
        return false;
    };
    // A non-frozen collection has no empty value: an absent one is the empty collection, and
    // `null` or an empty collection in the condition both stand for it (Cassandra's
    // `MultiCellCollectionBound`: `IF l = []` holds on a row without `l`, `IF l != []` does
    // not, `IF l < [1]` does).
    let empty = (c.element.is_none()
        && c.column.ty.is_multi_cell()
        && matches!(
            ty,
            CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }
        ))
    .then(|| {
        let value = match ty {
            CqlType::Map { .. } => CqlValue::Map(Vec::new()),
            CqlType::Set { .. } => CqlValue::Set(Vec::new()),
            _ => CqlValue::List(Vec::new()),
        };
        Bytes::from(value.to_bytes(&ty))
    });
    let or_empty = |v: Option<&Bytes>| -> Option<Bytes> { v.cloned().or_else(|| empty.clone()) };
    let current_value = or_empty(current);
    let current = current_value.as_ref();
    let cmp = |a: &Bytes, b: &Bytes| -> Option<Ordering> {
        let a = CqlValue::deserialize(&ty, a).ok()?;
        let b = CqlValue::deserialize(&ty, b).ok()?;
        Some(compare(&ty, &a, &b))
    };
    let equal = |expected: Option<&Bytes>| match (current, or_empty(expected).as_ref()) {
        (None, None) => true,
        (Some(a), Some(b)) => cmp(a, b) == Some(Ordering::Equal),
        _ => false,
    };
    match &c.predicate {
        Predicate::Compare(op @ (ComparisonOp::Contains | ComparisonOp::ContainsKey), Some(v)) => {
            contains(&ty, *op, current, v)
        }
        Predicate::In(values) => values.iter().any(|v| equal(v.as_ref())),
        Predicate::Compare(ComparisonOp::Equal, v) => equal(v.as_ref()),
        Predicate::Compare(ComparisonOp::NotEqual, v) => !equal(v.as_ref()),
        Predicate::Compare(op, Some(v)) => {
            let Some(current) = current else {
                return false;
            };
            match (op, cmp(current, v)) {
                (ComparisonOp::Less, Some(o)) => o == Ordering::Less,
                (ComparisonOp::LessEqual, Some(o)) => o != Ordering::Greater,
                (ComparisonOp::Greater, Some(o)) => o == Ordering::Greater,
                (ComparisonOp::GreaterEqual, Some(o)) => o != Ordering::Less,
                _ => false,
            }
        }
        Predicate::Compare(_, None) => false,
    }
}

/// The row the statement targets, as read (`None` when it does not exist). The empty
/// clustering of a table with clustering columns is a statement on static columns alone: its
/// row is the partition's static row, which exists while it has a live cell (Cassandra's
/// `IF [NOT] EXISTS` on a static-only update checks the static row).
fn target_row<'p>(
    clustered: bool,
    partition: &'p Partition,
    clustering: &Bytes,
    now: u32,
) -> Option<&'p Row> {
    let row = if clustering.is_empty() && clustered {
        &partition.static_row
    } else {
        partition.rows.get(clustering)?
    };
    Some(row).filter(|r| r.is_live(now))
}

/// Whether the check holds on what was read.
fn check_holds(
    clustered: bool,
    check: &Check,
    partition: &Partition,
    clustering: &Bytes,
    now: u32,
) -> bool {
    let row = target_row(clustered, partition, clustering, now);
    match check {
        Check::NotExists => row.is_none(),
        Check::Exists => row.is_some(),
        Check::Conditions(conditions) => {
            let empty = Row::default();
            let row = row.unwrap_or(&empty);
            conditions
                .iter()
                .all(|c| holds(c, current(c, row, &partition.static_row, now).as_ref()))
        }
    }
}

/// The row a conditional statement's check looks at: the one its mutation writes (the empty
/// key for a table without clustering columns, or for conditions on static columns only).
pub(crate) fn checked_clustering(
    t: &TableSchema,
    mutation: &Mutation,
    planned: &super::modify::Planned,
    check: &Check,
) -> Result<Bytes, ExecError> {
    let deferred = &planned.deferred;
    if let Some(row) = &planned.named_row {
        return Ok(row.clone());
    }
    // The row written, or the row whose lists are changed by index or value.
    let row = mutation.update.rows.keys().next().or_else(|| {
        deferred
            .iter()
            .map(|d| &d.clustering)
            .find(|c| !c.is_empty())
    });
    Ok(match row {
        Some(k) => k.clone(),
        None if t.def.clustering().is_empty() => Bytes::new(),
        None => {
            let statics = match check {
                Check::Conditions(cs) => cs.iter().all(|c| c.column.kind == ColumnKind::Static),
                // A write of the static row alone: existence is the static row's.
                Check::Exists | Check::NotExists => !mutation.update.static_row.is_empty(),
            };
            if statics {
                Bytes::new()
            } else {
                // Only a DELETE of more than one row gets here (an UPDATE or INSERT without
                // its whole key is refused before).
                return Err(ExecError::invalid(
                    "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns",
                ));
            }
        }
    })
}

/// Run a conditional statement whose mutations (one partition) are already built.
pub(crate) async fn run(
    exec: &Executor,
    t: &TableSchema,
    run: &Run<'_>,
    planned: Planned,
    check: Check,
) -> Result<ResultBody, ExecError> {
    let mut planned = planned;
    let [mutation] =
        <[Mutation; 1]>::try_from(std::mem::take(&mut planned.mutations)).map_err(|_| {
            ExecError::invalid("IN on the partition key is not supported with conditional updates")
        })?;
    let clustering = checked_clustering(t, &mutation, &planned, &check)?;
    run_checks(
        exec,
        t,
        run,
        mutation,
        planned.deferred,
        vec![(check, clustering)],
        false,
    )
    .await
}

/// Refuse what Cassandra refuses in a conditional statement: counter updates.
pub(crate) fn conditional_deferred(deferred: &[DeferredWrite]) -> Result<(), ExecError> {
    if deferred
        .iter()
        .flat_map(|d| &d.ops)
        .any(|o| matches!(o, Deferred::CounterAdd { .. }))
    {
        return Err(ExecError::invalid(
            "Conditional updates are not supported on counter tables",
        ));
    }
    Ok(())
}

/// Apply `mutation` (one partition of `t`) if every check holds on the row it names; `batch`
/// picks the shape of a failure's result.
pub(crate) async fn run_checks(
    exec: &Executor,
    t: &TableSchema,
    run: &Run<'_>,
    mutation: Mutation,
    deferred: Vec<DeferredWrite>,
    checks: Vec<(Check, Bytes)>,
    batch: bool,
) -> Result<ResultBody, ExecError> {
    conditional_deferred(&deferred)?;
    let mut rows: Vec<Bytes> = checks.iter().map(|(_, c)| c.clone()).collect();
    rows.sort();
    rows.dedup();
    // List operations by index or value also need their rows' current lists.
    let mut read_rows = rows.clone();
    read_rows.extend(deferred.iter().map(|d| d.clustering.clone()));
    read_rows.sort();
    read_rows.dedup();
    let ranges = if read_rows.iter().any(|c| c.is_empty()) {
        vec![full_range()]
    } else {
        read_rows
            .iter()
            .map(|c| (start_bound(c, true), end_bound(c, true)))
            .collect()
    };
    let now = exec.coordinator().now_seconds();
    let serial =
        coordinator_consistency(run.params.serial_consistency.unwrap_or(Consistency::Serial));
    let commit = coordinator_consistency(run.params.consistency);
    let key = mutation.key.clone();
    let decide_checks = checks.clone();
    let clustered = !t.def.clustering().is_empty();
    let failure = std::sync::Arc::new(parking_lot::Mutex::new(None::<String>));
    let failed = failure.clone();
    let (read, applied) = exec
        .coordinator()
        .cas(
            t.def.id,
            key.clone(),
            ranges,
            now,
            serial,
            commit,
            move |read: &ReadResult| {
                let holds = decide_checks.iter().all(|(check, clustering)| {
                    check_holds(clustered, check, &read.partition, clustering, now)
                });
                if !holds {
                    return None;
                }
                // The conditions hold: resolve the list operations on the lists just read.
                let mut mutation = mutation;
                for d in &deferred {
                    match apply_deferred(d, mutation, &read.partition, now) {
                        Ok(m) => mutation = m,
                        Err(e) => {
                            *failed.lock() = Some(e);
                            return None;
                        }
                    }
                }
                Some(vec![mutation])
            },
        )
        .await?;
    if let Some(e) = failure.lock().take() {
        return Err(ExecError::invalid(e));
    }
    if batch {
        return batch_result(t, &key, &read, &checks, &rows, applied, now);
    }
    let (check, clustering) = &checks[0];
    result(t, &key, &read, clustering, check, applied, now)
}

/// A conditional batch's result: `[applied]` true; or false with, for each row a condition
/// looked at that exists, its primary key and the conditioned columns (every column when a
/// statement has `IF [NOT] EXISTS`).
fn batch_result(
    t: &TableSchema,
    key: &khata_types::token::DecoratedKey,
    read: &ReadResult,
    checks: &[(Check, Bytes)],
    rows: &[Bytes],
    applied: bool,
    now: u32,
) -> Result<ResultBody, ExecError> {
    let flag = |b: bool| Some(Bytes::copy_from_slice(&[u8::from(b)]));
    let partition = &read.partition;
    let mut existing: Vec<(&Bytes, &Row)> = if applied {
        Vec::new()
    } else {
        rows.iter()
            .filter_map(|c| {
                let clustered = !t.def.clustering().is_empty();
                target_row(clustered, partition, c, now)
                    // A static condition on a partition with rows but no static values: the
                    // partition's first row stands for it (below).
                    .or_else(|| {
                        (clustered && c.is_empty())
                            .then(|| partition.live_rows(now).next().map(|(_, r)| r))
                            .flatten()
                    })
                    .map(|r| (c, r))
            })
            .collect()
    };
    // A static condition's "row" is the partition's (Cassandra's CAS result is made of CQL
    // rows, each with the static values): beside rows of their own it adds none, alone it
    // shows the partition's first row (InsertUpdateIfConditionStaticsTest.testStaticColumnsCas).
    if !t.def.clustering().is_empty() {
        if existing.iter().any(|(c, _)| !c.is_empty()) {
            existing.retain(|(c, _)| !c.is_empty());
        } else if let Some(slot) = existing.iter_mut().find(|(c, _)| c.is_empty())
            && let Some(first) = partition.live_rows(now).next()
        {
            *slot = first;
        }
    }
    if existing.is_empty() {
        let rows = Rows::from_cells(
            RowsMetadata::new(vec![applied_spec(t)]),
            &[vec![flag(applied)]],
        )
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
        return Ok(ResultBody::Rows(rows));
    }
    let wildcard = checks
        .iter()
        .any(|(c, _)| matches!(c, Check::Exists | Check::NotExists));
    let columns: Vec<ColumnDef> = if wildcard {
        wildcard_columns(&t.def)
    } else {
        let mut columns: Vec<ColumnDef> = t
            .def
            .partition_key()
            .into_iter()
            .chain(t.def.clustering().into_iter().map(|(c, _)| c))
            .cloned()
            .collect();
        for (check, _) in checks {
            if let Check::Conditions(conditions) = check {
                for cond in conditions {
                    if !columns.iter().any(|c| c.name == cond.column.name) {
                        columns.push(cond.column.clone());
                    }
                }
            }
        }
        columns
    };
    let mut specs = vec![applied_spec(t)];
    specs.extend(columns.iter().map(|c| spec_of(t, c)));
    let out: Vec<Vec<Option<Bytes>>> = existing
        .into_iter()
        .map(|(clustering, row)| {
            std::iter::once(flag(false))
                .chain(columns.iter().map(|c| {
                    super::select::column_value(
                        t,
                        c,
                        key,
                        clustering,
                        row,
                        &partition.static_row,
                        now,
                    )
                }))
                .collect()
        })
        .collect();
    let rows = Rows::from_cells(RowsMetadata::new(specs), &out)
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
    Ok(ResultBody::Rows(rows))
}

fn applied_spec(t: &TableSchema) -> ColumnSpec {
    ColumnSpec {
        keyspace: t.def.keyspace.clone(),
        table: t.def.name.clone(),
        name: "[applied]".into(),
        column_type: ColumnType::Boolean,
    }
}

fn spec_of(t: &TableSchema, c: &ColumnDef) -> ColumnSpec {
    ColumnSpec {
        keyspace: t.def.keyspace.clone(),
        table: t.def.name.clone(),
        name: c.name.clone(),
        column_type: column_type(&c.ty),
    }
}

/// The `[applied]` result: just `true`, or `false` with the current values.
fn result(
    t: &TableSchema,
    key: &khata_types::token::DecoratedKey,
    read: &ReadResult,
    clustering: &Bytes,
    check: &Check,
    applied: bool,
    now: u32,
) -> Result<ResultBody, ExecError> {
    let flag = |b: bool| Some(Bytes::copy_from_slice(&[u8::from(b)]));
    let mut specs = vec![applied_spec(t)];
    let mut row = vec![flag(applied)];
    if !applied {
        let partition = &read.partition;
        let existing = target_row(!t.def.clustering().is_empty(), partition, clustering, now);
        let empty = Row::default();
        match check {
            Check::NotExists | Check::Exists => {
                if let Some(r) = existing {
                    for c in wildcard_columns(&t.def) {
                        specs.push(spec_of(t, &c));
                        row.push(super::select::column_value(
                            t,
                            &c,
                            key,
                            clustering,
                            r,
                            &partition.static_row,
                            now,
                        ));
                    }
                }
            }
            Check::Conditions(conditions) => {
                // Cassandra reads the static row only for conditions on static columns: with
                // neither the row nor a live partition (static values or rows) there is
                // nothing to show but `[applied]`; a partition with rows and no static values
                // shows the static columns as null.
                let statics_read = conditions
                    .iter()
                    .any(|c| c.column.kind == ColumnKind::Static)
                    && (partition.static_row.is_live(now)
                        || partition.live_rows(now).next().is_some());
                let r = existing.unwrap_or(&empty);
                let mut seen = Vec::new();
                // The regular columns' conditions, then the static ones' (Cassandra's
                // `ColumnConditions.getColumns` order).
                let ordered = conditions
                    .iter()
                    .filter(|c| c.column.kind != ColumnKind::Static)
                    .chain(
                        conditions
                            .iter()
                            .filter(|c| c.column.kind == ColumnKind::Static),
                    )
                    .filter(|_| existing.is_some() || statics_read);
                for cond in ordered {
                    if seen.contains(&cond.column.name) {
                        continue;
                    }
                    seen.push(cond.column.name.clone());
                    specs.push(spec_of(t, &cond.column));
                    let source = if cond.column.kind == ColumnKind::Static {
                        &partition.static_row
                    } else {
                        r
                    };
                    row.push(cell_value(&cond.column, source, now));
                }
            }
        }
    }
    let rows = Rows::from_cells(RowsMetadata::new(specs), &[row])
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
    Ok(ResultBody::Rows(rows))
}
