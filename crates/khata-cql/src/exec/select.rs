//! SELECT: restrictions to partition reads or token-range scans, rows to result cells, and
//! paging.
//!
//! Supported so far: partition key `=` and `IN`; clustering `=` on a prefix then one slice;
//! `token(pk)` ranges and full scans; regular-column `=` through a secondary index, or with
//! ALLOW FILTERING; `*`, columns,
//! `WRITETIME`/`TTL`, `count(*)`; ORDER BY on the clustering order or its reverse; LIMIT and
//! PER PARTITION LIMIT; paging with `result_page_size` and a paging state.

use std::ops::Bound as RangeBound;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use khata_coordinator::catalog::{IndexKind, IndexQuery, ScanPosition, TableSchema, entry_value};
use khata_coordinator::{ReadCommand, ScanCommand};
use khata_types::clustering::{end_bound, start_bound};
use khata_types::partition::Partition;
use khata_types::row::Row;
use khata_types::schema::{ClusteringOrder, ColumnDef, ColumnKind, CqlType, TableDef};
use khata_types::token::{DecoratedKey, Token, split_partition_key};

use super::aggregate::{AggKind, Aggregator};
use super::bind::{self};
use super::error::{ExecError, coordinator_consistency};
use super::restrictions::{FILTERING, Filter, PointKey, Restrictions};
use super::types::column_type;
use super::{Executor, Run};
use crate::frame::{ColumnSpec, ColumnType, ResultBody, Rows, RowsMetadata};
use crate::language::ast::{ComparisonOp, Relation, Term};
use crate::language::ast::{OrderDirection, Select, Selectable, Selection, WritetimeKind};
use crate::value::CqlValue;

mod ann;

/// One output column.
#[derive(Clone, Debug)]
enum Output {
    Column(ColumnDef),
    Writetime(ColumnDef),
    /// `MAXWRITETIME(c)`: the newest timestamp of the column's live cells (every element of
    /// a non-frozen collection or UDT).
    MaxWritetime(ColumnDef),
    /// `WRITETIME(c)` (false) or `TTL(c)` (true) of a non-frozen collection or UDT: a list,
    /// one per element or field (Cassandra 5.0).
    Metas(ColumnDef, bool),
    /// `WRITETIME(s[k])`, `MAXWRITETIME(m[k])`, `TTL(s[k])` of a set's or map's element (its
    /// key bound per execution, as [`Output::Element`]'s), Cassandra 5.0.
    ElementMeta(ColumnDef, WritetimeKind, Term, Option<Bytes>),
    /// `WRITETIME(u.f)` and the like of field `usize` of a user type value, Cassandra 5.0.
    FieldMeta(ColumnDef, WritetimeKind, usize),
    Ttl(ColumnDef),
    /// `count(*)`, and `count`, `min`, `max`, `sum` or `avg` of a selector that reads rows.
    Aggregate(AggKind, Option<Box<Output>>),
    /// `token(pk...)`: the partition's token.
    Token,
    /// `toTimestamp(c)`, `toDate(c)`, `toUnixTimestamp(c)` (and the older `dateOf`,
    /// `unixTimestampOf`) of a timeuuid, timestamp or date column.
    Time(TimeFn, ColumnDef),
    /// `m['k']` or `s['e']`: one element of a collection, and the key once bound for an
    /// execution ([`Output::bind`]).
    Element(ColumnDef, Term, Option<Bytes>),
    /// `CAST(c AS type)`.
    Cast(ColumnDef, CqlType),
    /// Scalar functions and field selections, nested (`selector.rs`).
    Computed(super::selector::Computed),
    /// A computation over a row's `WRITETIME`/`TTL` values (`writetime(v) / 1000`), and
    /// those outputs, its inputs ([`over_row_metadata`]).
    OverRow(super::selector::Computed, Vec<Output>),
    /// A computation over a group's aggregates (`toDate(min(b))`), and its inputs: each an
    /// aggregate of what its output reads, or (`AggKind::First`) a value of the group's first
    /// row ([`over_aggregates`]).
    OverAggregates(super::selector::Computed, Vec<(AggKind, Option<Output>)>),
}

impl Output {
    /// Whether the output folds rows: an aggregate or a computation over aggregates.
    fn aggregates(&self) -> bool {
        matches!(self, Output::Aggregate(..) | Output::OverAggregates(..))
    }

    /// Whether the output has terms to bind for each execution (element keys, slice bounds,
    /// literals and markers of computations).
    fn has_args(&self) -> bool {
        match self {
            Output::Element(..) | Output::ElementMeta(..) => true,
            Output::Computed(c) | Output::OverRow(c, _) => c.has_args(),
            Output::Aggregate(_, arg) => arg.as_ref().is_some_and(|a| a.has_args()),
            Output::OverAggregates(c, inputs) => {
                c.has_args() || inputs.iter().flat_map(|(_, o)| o).any(Output::has_args)
            }
            _ => false,
        }
    }

    /// A copy with its terms bound for one execution.
    fn bind(&self, run: &Run<'_>) -> Result<Output, ExecError> {
        let computed = |c: &super::selector::Computed| {
            c.bind(&mut |term, ty, receiver| bind::value(run, term, ty, receiver))
        };
        Ok(match self {
            Output::Element(c, key, _) => {
                let key_ty = match &c.ty {
                    CqlType::Map { key, .. } => key.as_ref().clone(),
                    CqlType::Set { element, .. } => element.as_ref().clone(),
                    other => other.clone(),
                };
                let bound = bind::required(run, key, &key_ty, &c.name)?;
                Output::Element(c.clone(), key.clone(), Some(bound))
            }
            Output::ElementMeta(c, kind, key, _) => {
                let key_ty = match &c.ty {
                    CqlType::Map { key, .. } => key.as_ref().clone(),
                    CqlType::Set { element, .. } => element.as_ref().clone(),
                    other => other.clone(),
                };
                let bound = bind::required(run, key, &key_ty, &c.name)?;
                Output::ElementMeta(c.clone(), *kind, key.clone(), Some(bound))
            }
            Output::Computed(c) => Output::Computed(computed(c)?),
            Output::OverRow(c, inputs) => Output::OverRow(computed(c)?, inputs.clone()),
            Output::Aggregate(kind, Some(arg)) => {
                Output::Aggregate(*kind, Some(Box::new(arg.bind(run)?)))
            }
            Output::OverAggregates(c, inputs) => Output::OverAggregates(
                computed(c)?,
                inputs
                    .iter()
                    .map(|(k, o)| Ok((*k, o.as_ref().map(|o| o.bind(run)).transpose()?)))
                    .collect::<Result<_, ExecError>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// The time conversions usable as selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeFn {
    Timestamp,
    Date,
    UnixTimestamp,
}

/// The columns of `SELECT *`, in Cassandra's order: partition key, clustering, then static
/// and regular columns by name.
pub(crate) fn wildcard_columns(def: &TableDef) -> Vec<ColumnDef> {
    let mut cols: Vec<ColumnDef> = def.partition_key().into_iter().cloned().collect();
    cols.extend(def.clustering().into_iter().map(|(c, _)| c.clone()));
    let mut rest: Vec<ColumnDef> = def
        .columns
        .iter()
        .filter(|c| matches!(c.kind, ColumnKind::Static | ColumnKind::Regular))
        .cloned()
        .collect();
    rest.sort_by(|a, b| {
        (matches!(a.kind, ColumnKind::Regular), &a.name)
            .cmp(&(matches!(b.kind, ColumnKind::Regular), &b.name))
    });
    cols.extend(rest);
    cols
}

/// A column's value in a row of a partition (key columns from the keys).
pub(crate) fn column_value(
    t: &TableSchema,
    c: &ColumnDef,
    key: &DecoratedKey,
    clustering: &Bytes,
    row: &Row,
    statics: &Row,
    now: u32,
) -> Option<Bytes> {
    match c.kind {
        ColumnKind::PartitionKey { position } => split_key(t, key).get(position as usize).cloned(),
        ColumnKind::Clustering { position, .. } => {
            let types: Vec<(CqlType, ClusteringOrder)> = t
                .def
                .clustering()
                .iter()
                .map(|(c, o)| (c.ty.clone(), *o))
                .collect();
            khata_types::clustering::decode_key(&types, clustering)
                .ok()?
                .get(position as usize)
                .cloned()
        }
        ColumnKind::Static => cell_value(c, statics, now),
        ColumnKind::Regular => cell_value(c, row, now),
    }
}

fn outputs(t: &TableSchema, s: &Select) -> Result<Vec<(String, Output)>, ExecError> {
    match &s.selection {
        Selection::Wildcard => Ok(wildcard_columns(&t.def)
            .into_iter()
            .map(|c| (c.name.clone(), Output::Column(c)))
            .collect()),
        Selection::Selectors(selectors) => selectors
            .iter()
            .map(|sel| {
                let (name, output) = output(t, &sel.selectable)?;
                Ok((sel.alias.as_ref().map_or(name, |a| a.0.clone()), output))
            })
            .collect(),
    }
}

/// Whether `s` calls an aggregate: `count(*)` or a call of `count`, `min`, `max`, `sum` or
/// `avg` with one argument.
fn is_aggregate(s: &Selectable) -> bool {
    match s {
        Selectable::CountRows => true,
        Selectable::FunctionCall { name, args } => {
            args.len() == 1 && AggKind::from_name(&name.name.0).is_some()
        }
        _ => false,
    }
}

/// Whether `s` is or holds an aggregate.
fn contains_aggregate(s: &Selectable) -> bool {
    contains(s, &is_aggregate)
}

/// Whether `s` is or holds (under functions, casts, fields, elements, operators, collections)
/// a selector for which `found` holds.
fn contains(s: &Selectable, found: &dyn Fn(&Selectable) -> bool) -> bool {
    found(s)
        || match s {
            Selectable::FunctionCall { args, .. } => args.iter().any(|a| contains(a, found)),
            Selectable::Cast { selectable, .. }
            | Selectable::Field { selectable, .. }
            | Selectable::Element { selectable, .. }
            | Selectable::Slice { selectable, .. }
            | Selectable::TypeHint { selectable, .. } => contains(selectable, found),
            Selectable::Negation(inner) => contains(inner, found),
            Selectable::Arithmetic { left, right, .. } => {
                contains(left, found) || contains(right, found)
            }
            Selectable::Tuple(items) | Selectable::List(items) | Selectable::Set(items) => {
                items.iter().any(|i| contains(i, found))
            }
            Selectable::Map(pairs) => pairs
                .iter()
                .any(|(k, v)| contains(k, found) || contains(v, found)),
            _ => false,
        }
}

/// A computation over a row's `WRITETIME`/`TTL` values
/// (`blobAsBigint(bigintAsBlob(writetime(c)))`, `writetime(c) / 1000`): they become inputs of
/// the tree, read from the row before it is computed.
fn over_row_metadata(t: &TableSchema, s: &Selectable) -> Result<Output, ExecError> {
    let mut inputs: Vec<(String, Output)> = Vec::new();
    let tree = super::selector::compile_over(&t.def, s, &mut |s: &Selectable| {
        if !matches!(s, Selectable::Writetime { .. }) {
            return Ok(None);
        }
        let (name, output) = output(t, s)?;
        let ty = output_type(&output);
        let index = match inputs.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                inputs.push((name, output));
                inputs.len() - 1
            }
        };
        Ok(Some((index, ty)))
    })?;
    Ok(Output::OverRow(
        tree,
        inputs.into_iter().map(|(_, o)| o).collect(),
    ))
}

/// An aggregate call (`count(*)`, or `f(arg)` with [`is_aggregate`]): its result column name
/// and output. Its argument is any selector that is not itself an aggregate.
fn aggregate_output(t: &TableSchema, s: &Selectable) -> Result<(String, Output), ExecError> {
    let Selectable::FunctionCall { name, args } = s else {
        return Ok((
            "count".to_string(),
            Output::Aggregate(AggKind::CountRows, None),
        ));
    };
    let kind = AggKind::from_name(&name.name.0).unwrap_or(AggKind::Count);
    let fname = name.name.0.to_ascii_lowercase();
    match &args[0] {
        // count(1)
        Selectable::Term(Term::Literal(_)) if kind == AggKind::Count => Ok((
            "count".to_string(),
            Output::Aggregate(AggKind::CountRows, None),
        )),
        arg if contains_aggregate(arg) => Err(ExecError::invalid(
            "aggregate functions cannot be used as arguments of aggregate functions",
        )),
        arg => {
            let (arg_name, arg) = output(t, arg)?;
            Ok((
                format!("system.{fname}({arg_name})"),
                Output::Aggregate(kind, Some(Box::new(arg))),
            ))
        }
    }
}

/// A selector over aggregates (`toDate(min(b))`, `CAST(sum(v) AS text)`, `max(v) - min(v)`):
/// its aggregates and the columns it reads outside them become the inputs of a computation
/// made once per group (a column's input is its value in the group's first row, as a plain
/// column beside aggregates is). An aggregate written twice is one input.
fn over_aggregates(t: &TableSchema, s: &Selectable) -> Result<Output, ExecError> {
    let mut inputs: Vec<(String, AggKind, Option<Output>)> = Vec::new();
    let tree = super::selector::compile_over(&t.def, s, &mut |s: &Selectable| {
        let (name, output) = if is_aggregate(s) {
            aggregate_output(t, s)?
        } else if matches!(s, Selectable::Column(_) | Selectable::Writetime { .. }) {
            output(t, s)?
        } else {
            return Ok(None);
        };
        let ty = output_type(&output);
        let (kind, arg) = match output {
            Output::Aggregate(kind, arg) => (kind, arg.map(|a| *a)),
            plain => (AggKind::First, Some(plain)),
        };
        let index = match inputs.iter().position(|(n, k, _)| *n == name && *k == kind) {
            Some(i) => i,
            None => {
                inputs.push((name, kind, arg));
                inputs.len() - 1
            }
        };
        Ok(Some((index, ty)))
    })?;
    Ok(Output::OverAggregates(
        tree,
        inputs.into_iter().map(|(_, k, o)| (k, o)).collect(),
    ))
}

/// One selector's result column name and output.
fn output(t: &TableSchema, selectable: &Selectable) -> Result<(String, Output), ExecError> {
    let def = &t.def;
    let column = |name: &str| {
        def.column(name)
            .cloned()
            .ok_or_else(|| ExecError::invalid(format!("Undefined column name {name}")))
    };
    Ok(match selectable {
        Selectable::Column(n) => (n.0.clone(), Output::Column(column(&n.0)?)),
        s if is_aggregate(s) => aggregate_output(t, s)?,
        s if contains_aggregate(s) => (super::selector::column_name(s), over_aggregates(t, s)?),
        Selectable::FunctionCall { name, args }
            if args.len() == 1
                && matches!(args[0], Selectable::Column(_))
                && matches!(
                    super::functions::native_name(&name.name.0).as_str(),
                    "totimestamp" | "dateof" | "todate" | "tounixtimestamp" | "unixtimestampof"
                ) =>
        {
            let lower = super::functions::native_name(&name.name.0);
            let f = match lower.as_str() {
                "totimestamp" | "dateof" => TimeFn::Timestamp,
                "todate" => TimeFn::Date,
                _ => TimeFn::UnixTimestamp,
            };
            let Selectable::Column(n) = &args[0] else {
                return Err(ExecError::invalid(format!(
                    "{lower}() takes a column, here"
                )));
            };
            let c = column(&n.0)?;
            // Cassandra's `TimeFcts` overloads of each function.
            let takes: &[CqlType] = match lower.as_str() {
                "dateof" | "unixtimestampof" => &[CqlType::Timeuuid],
                "totimestamp" => &[CqlType::Timeuuid, CqlType::Date],
                "todate" => &[CqlType::Timeuuid, CqlType::Timestamp],
                _ => &[CqlType::Timeuuid, CqlType::Timestamp, CqlType::Date],
            };
            if !takes.contains(&c.ty) {
                return Err(ExecError::invalid(time_fn_refusal(&lower, takes, &c.name)));
            }
            let written = name.name.0.to_ascii_lowercase();
            (format!("system.{written}({})", c.name), Output::Time(f, c))
        }
        Selectable::Cast { selectable, ty }
            if matches!(selectable.as_ref(), Selectable::Column(_)) =>
        {
            let Selectable::Column(n) = selectable.as_ref() else {
                unreachable!("matched as a column")
            };
            let c = column(&n.0)?;
            let to = ty.cql_type();
            if !castable(&c.ty, &to) {
                return Err(ExecError::invalid(format!(
                    "{} cannot be cast to {}",
                    c.name,
                    khata_types::type_text::type_text(&to)
                )));
            }
            if c.ty == to {
                // A cast to the column's own type is the column, name included
                // (Cassandra's `Selectable.WithCast` returns the column's selector).
                (c.name.clone(), Output::Column(c))
            } else {
                (
                    format!(
                        "cast({} as {})",
                        c.name,
                        khata_types::type_text::type_text(&to)
                    ),
                    Output::Cast(c, to),
                )
            }
        }
        Selectable::Element { selectable, key }
            if matches!(selectable.as_ref(), Selectable::Column(_)) =>
        {
            let Selectable::Column(n) = selectable.as_ref() else {
                unreachable!("matched as a column")
            };
            let c = column(&n.0)?;
            super::selector::element_key(selectable, &c.ty, "Element")?;
            (
                format!("{}[{key}]", c.name),
                Output::Element(c, key.clone(), None),
            )
        }
        // The row's own token; `token()` of other values is computed (`selector.rs`).
        Selectable::FunctionCall { name, args }
            if name.name.0.eq_ignore_ascii_case("token")
                && args.iter().all(|a| matches!(a, Selectable::Column(_))) =>
        {
            let key = def.partition_key();
            let pk: Vec<&str> = key.iter().map(|c| c.name.as_str()).collect();
            let given = args
                .iter()
                .map(|a| match a {
                    Selectable::Column(n) => column(&n.0),
                    _ => Err(ExecError::invalid(
                        "token() takes the partition key columns",
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Cassandra's `system.token` takes the partition key's types, in its order.
            if given.len() != key.len() {
                return Err(ExecError::invalid(format!(
                    "Invalid number of arguments in call to function system.token: {} required but {} provided",
                    key.len(),
                    given.len()
                )));
            }
            for (i, (c, k)) in given.iter().zip(&key).enumerate() {
                if c.ty != k.ty && !crate::value::value_compatible(&k.ty, &c.ty) {
                    return Err(ExecError::invalid(format!(
                        "Type error: {} cannot be passed as argument {i} of function system.token of type {}",
                        c.name,
                        khata_types::type_text::type_text(&k.ty)
                    )));
                }
            }
            if given.iter().map(|c| c.name.as_str()).ne(pk.iter().copied()) {
                return Err(ExecError::invalid(format!(
                    "Invalid arguments for function token: the partition key is ({})",
                    pk.join(", ")
                )));
            }
            (format!("system.token({})", pk.join(", ")), Output::Token)
        }
        Selectable::Writetime { kind, column: c } => {
            let n = match c.as_ref() {
                Selectable::Column(n) => n,
                Selectable::Element { selectable, .. }
                | Selectable::Slice { selectable, .. }
                | Selectable::Field { selectable, .. } => match selectable.as_ref() {
                    Selectable::Column(n) => n,
                    _ => return Err(ExecError::invalid("WRITETIME/TTL take a column")),
                },
                _ => return Err(ExecError::invalid("WRITETIME/TTL take a column")),
            };
            let col = column(&n.0)?;
            let fname = match kind {
                WritetimeKind::Ttl => "ttl",
                WritetimeKind::MaxWritetime => "maxwritetime",
                WritetimeKind::Writetime => "writeTime",
            };
            if matches!(
                col.kind,
                ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
            ) {
                return Err(ExecError::invalid(format!(
                    "Cannot use selection function {fname} on PRIMARY KEY part {}",
                    col.name
                )));
            }
            let lower = match kind {
                WritetimeKind::Ttl => "ttl",
                WritetimeKind::MaxWritetime => "maxwritetime",
                WritetimeKind::Writetime => "writetime",
            };
            // Cassandra 5.0: the metadata of one element of a set or map, or one field.
            match c.as_ref() {
                Selectable::Element { selectable, key } => {
                    super::selector::element_key(selectable, &col.ty, "Element")?;
                    let name = format!("{lower}({}[{key}])", n.0);
                    return Ok((name, Output::ElementMeta(col, *kind, key.clone(), None)));
                }
                Selectable::Slice { selectable, .. } => {
                    super::selector::element_key(selectable, &col.ty, "Slice")?;
                    return Err(ExecError::invalid(format!(
                        "selector {c} is not supported by khata yet"
                    )));
                }
                Selectable::Field { field, .. } => {
                    let CqlType::Udt { fields, .. } = &col.ty else {
                        return Err(ExecError::invalid(format!(
                            "Invalid field selection: {} of type {} is not a user type",
                            n.0,
                            khata_types::type_text::type_text(&col.ty)
                        )));
                    };
                    let Some(index) = fields.iter().position(|(f, _)| *f == field.0) else {
                        return Err(ExecError::invalid(format!(
                            "{} of type {} has no field {}",
                            n.0,
                            khata_types::type_text::type_text(&col.ty),
                            field.0
                        )));
                    };
                    let name = format!("{lower}({}.{})", n.0, field.0);
                    return Ok((name, Output::FieldMeta(col, *kind, index)));
                }
                _ => {}
            }
            // Cassandra 5.0: MAXWRITETIME takes the newest of a non-frozen value's cells,
            // WRITETIME and TTL list them.
            if col.ty.is_multi_cell() && *kind != WritetimeKind::MaxWritetime {
                let ttl = *kind == WritetimeKind::Ttl;
                let name = format!("{}({})", if ttl { "ttl" } else { "writetime" }, n.0);
                return Ok((name, Output::Metas(col, ttl)));
            }
            match kind {
                WritetimeKind::Ttl => (format!("ttl({})", n.0), Output::Ttl(col)),
                WritetimeKind::MaxWritetime => {
                    (format!("maxwritetime({})", n.0), Output::MaxWritetime(col))
                }
                WritetimeKind::Writetime => (format!("writetime({})", n.0), Output::Writetime(col)),
            }
        }
        other if contains(other, &|s| matches!(s, Selectable::Writetime { .. })) => (
            super::selector::column_name(other),
            over_row_metadata(t, other)?,
        ),
        other if super::selector::handles(other) => (
            super::selector::column_name(other),
            Output::Computed(super::selector::compile(def, other)?),
        ),
        other => {
            return Err(ExecError::invalid(format!(
                "selector {other} is not supported by khata yet"
            )));
        }
    })
}

/// The result columns of a SELECT.
pub(crate) fn result_columns(
    t: &Arc<TableSchema>,
    s: &Select,
) -> Result<Vec<ColumnSpec>, ExecError> {
    let outs = outputs(t, s)?;
    Ok(specs_of(
        t,
        s,
        outs.iter().map(|(name, o)| (name.clone(), o)),
    ))
}

/// What a SELECT needs of its table's schema: looked up and worked out once per schema
/// snapshot for a prepared statement (the executor's plan cache), or per run otherwise.
#[derive(Debug)]
pub(crate) struct SelectShape {
    table: Arc<TableSchema>,
    outs: Vec<(String, Output)>,
    specs: Vec<ColumnSpec>,
    /// The GROUP BY columns; only filled (and DISTINCT only checked) by [`SelectShape::checked`].
    group_by: Vec<ColumnDef>,
    /// The clustering columns' types and orders, to decode clustering keys.
    clustering_types: Vec<(CqlType, ClusteringOrder)>,
    /// The v5 result metadata id of `specs`.
    pub metadata_id: Bytes,
    /// The WHERE clause, when it names one row by its whole primary key (only filled by
    /// [`SelectShape::checked`]).
    point: Option<PointKey>,
    /// The selection queries the static row ([`queries_static_row`]).
    static_selected: bool,
    /// The selection reads static and partition key columns only, a static one among them
    /// (Cassandra's `Selection.containsOnlyStaticColumns`).
    only_static: bool,
}

impl SelectShape {
    /// The table and result columns, failing as an unplanned run fails first.
    fn unchecked(
        schema: &khata_coordinator::catalog::Schema,
        run: &Run<'_>,
        s: &Select,
    ) -> Result<SelectShape, ExecError> {
        let table = run.table(schema, &s.table)?.clone();
        let outs = outputs(&table, s)?;
        let specs = specs_of(&table, s, outs.iter().map(|(name, o)| (name.clone(), o)));
        let clustering_types = table
            .def
            .clustering()
            .iter()
            .map(|(c, o)| (c.ty.clone(), *o))
            .collect();
        let metadata_id = super::result_metadata_id(Some(&specs));
        let static_selected = queries_static_row(&table, &outs);
        let only_static = selects_only_static_columns(&table, &outs);
        Ok(SelectShape {
            table,
            outs,
            specs,
            group_by: Vec::new(),
            clustering_types,
            metadata_id,
            point: None,
            static_selected,
            only_static,
        })
    }

    /// Everything a run would check of the schema alone, done: a shape a prepared statement
    /// can keep for as long as the schema snapshot it was made from is the current one.
    pub(crate) fn checked(
        schema: &khata_coordinator::catalog::Schema,
        run: &Run<'_>,
        s: &Select,
    ) -> Result<SelectShape, ExecError> {
        let mut shape = SelectShape::unchecked(schema, run, s)?;
        shape.group_by = group_by_columns(&shape.table, s)?;
        check_selection(&shape.table, s, &shape.outs, !shape.group_by.is_empty())?;
        shape.point = PointKey::of(&shape.table, &s.where_clause);
        Ok(shape)
    }
}

/// The column specs of `outs`.
fn specs_of<'o>(
    t: &TableSchema,
    s: &Select,
    outs: impl ExactSizeIterator<Item = (String, &'o Output)>,
) -> Vec<ColumnSpec> {
    if s.json {
        // SELECT JSON: one text column holding each row as a JSON object.
        return vec![ColumnSpec {
            keyspace: t.def.keyspace.clone(),
            table: t.def.name.clone(),
            name: "[json]".into(),
            column_type: ColumnType::Varchar,
        }];
    }
    outs.map(|(name, o)| ColumnSpec {
        keyspace: t.def.keyspace.clone(),
        table: t.def.name.clone(),
        name,
        column_type: column_type(&output_type(o)),
    })
    .collect()
}

/// The CQL type of an output column.
fn output_type(o: &Output) -> CqlType {
    match o {
        Output::Column(c) => c.ty.clone(),
        Output::Writetime(_) | Output::MaxWritetime(_) | Output::Token => CqlType::Bigint,
        Output::ElementMeta(_, WritetimeKind::Ttl, ..)
        | Output::FieldMeta(_, WritetimeKind::Ttl, _) => CqlType::Int,
        Output::ElementMeta(..) | Output::FieldMeta(..) => CqlType::Bigint,
        Output::Metas(_, ttl) => CqlType::List {
            element: Box::new(if *ttl { CqlType::Int } else { CqlType::Bigint }),
            frozen: false,
        },
        Output::Aggregate(AggKind::CountRows | AggKind::Count, _) => CqlType::Bigint,
        Output::Aggregate(_, arg) => arg.as_deref().map_or(CqlType::Bigint, output_type),
        Output::Ttl(_) => CqlType::Int,
        Output::Time(TimeFn::Timestamp, _) => CqlType::Timestamp,
        Output::Time(TimeFn::Date, _) => CqlType::Date,
        Output::Time(TimeFn::UnixTimestamp, _) => CqlType::Bigint,
        Output::Element(c, ..) => match &c.ty {
            CqlType::Map { value, .. } => value.as_ref().clone(),
            CqlType::Set { element, .. } => element.as_ref().clone(),
            other => other.clone(),
        },
        Output::Cast(_, to) => to.clone(),
        Output::Computed(c) | Output::OverRow(c, _) | Output::OverAggregates(c, _) => c.ty.clone(),
    }
}

fn numeric(ty: &CqlType) -> bool {
    matches!(
        ty,
        CqlType::Tinyint
            | CqlType::Smallint
            | CqlType::Int
            | CqlType::Bigint
            | CqlType::Counter
            | CqlType::Float
            | CqlType::Double
            | CqlType::Varint
            | CqlType::Decimal
    )
}

/// The conversions `CAST` supports: Cassandra's `CastFcts` (numbers to numbers, and to text;
/// ascii, inet, boolean, uuid, timeuuid, timestamp, date and time to text; the time types to
/// each other as `toDate`/`toTimestamp` convert them), and a cast to a value's own type.
pub(super) fn castable(from: &CqlType, to: &CqlType) -> bool {
    let to_text = matches!(to, CqlType::Text | CqlType::Ascii);
    from == to
        || numeric(from) && (to_text || numeric(to) && *to != CqlType::Counter)
        || *from == CqlType::Ascii && *to == CqlType::Text
        || to_text
            && matches!(
                from,
                CqlType::Inet
                    | CqlType::Boolean
                    | CqlType::Uuid
                    | CqlType::Timeuuid
                    | CqlType::Timestamp
                    | CqlType::Date
                    | CqlType::Time
            )
        || matches!(
            (from, to),
            (CqlType::Timeuuid | CqlType::Date, CqlType::Timestamp)
                | (CqlType::Timeuuid | CqlType::Timestamp, CqlType::Date)
        )
}

/// Cassandra's refusal of a time function's argument: with one overload, the type error of
/// that overload; with several, the list of them (`FunctionResolver`).
fn time_fn_refusal(function: &str, takes: &[CqlType], column: &str) -> String {
    let returns = match function {
        "dateof" | "totimestamp" => "timestamp",
        "todate" => "date",
        _ => "bigint",
    };
    match takes {
        [only] => format!(
            "Type error: {column} cannot be passed as argument 0 of function system.{function} of type {}",
            khata_types::type_text::type_text(only)
        ),
        _ => {
            let signatures: Vec<String> = takes
                .iter()
                .map(|t| {
                    format!(
                        "system.{function} : ({}) -> {returns}",
                        khata_types::type_text::type_text(t)
                    )
                })
                .collect();
            format!(
                "Invalid call to function {function}, none of its type signatures match (known type signatures: {})",
                signatures.join(", ")
            )
        }
    }
}

/// `CAST` of a stored value.
pub(super) fn cast(from: &CqlType, to: &CqlType, value: &Bytes) -> Option<Bytes> {
    use crate::value::CqlValue as V;
    if from == to {
        return Some(value.clone());
    }
    match to {
        CqlType::Timestamp => return time_fn(TimeFn::Timestamp, from, value),
        CqlType::Date => return time_fn(TimeFn::Date, from, value),
        _ => {}
    }
    let v = V::deserialize(from, value).ok()?;
    let out = match to {
        CqlType::Text | CqlType::Ascii => {
            // The value's text without the quotes of its literal form; a decimal's plain
            // digits (Cassandra's CastAsTextFunction reads `BigDecimal.toPlainString()`).
            let literal = match &v {
                V::Decimal(d) => crate::value::decimal_plain_string(d),
                _ => v.to_string(),
            };
            let text = match literal
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
            {
                Some(inner) => inner.replace("''", "'"),
                None => literal,
            };
            if *to == CqlType::Ascii {
                V::Ascii(text)
            } else {
                V::Text(text)
            }
        }
        _ => crate::value::cast_number(&v, to)?,
    };
    Some(Bytes::from(out.to_bytes(to)))
}

/// A result row as Cassandra's `SELECT JSON` writes it: `{"name": value, ...}` in selection
/// order.
fn json_row(outs: &[(String, Output)], row: &[Option<Bytes>]) -> Option<Bytes> {
    let mut text = String::from("{");
    for (i, ((name, o), cell)) in outs.iter().zip(row).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        // As Cassandra: names as in the result metadata (`ttl(b)`, `system.sum(v)`), quoted
        // only when they have upper-case letters, as INSERT JSON would need them.
        let key = if name.chars().any(char::is_uppercase) {
            khata_types::type_text::quote_identifier(name)
        } else {
            name.clone()
        };
        text.push_str(&serde_json::Value::String(key).to_string());
        text.push_str(": ");
        let ty = output_type(o);
        match cell
            .as_ref()
            .and_then(|b| crate::value::CqlValue::deserialize(&ty, b).ok())
        {
            Some(v) => crate::value::json::write_value(&ty, &v, &mut text),
            None => text.push_str("null"),
        }
    }
    text.push('}');
    Some(Bytes::from(text))
}

/// Where the rows come from.
enum Source {
    Partitions(Vec<DecoratedKey>),
    Scan(RangeBound<Token>, RangeBound<Token>),
    /// The rows a secondary index has under a value, in a token range.
    Index {
        index: String,
        value: Bytes,
        low: RangeBound<Token>,
        high: RangeBound<Token>,
    },
}

/// The index that serves one of the restrictions, with the value to look up in it: `=` on a
/// column with a simple (or `full()`) index, `CONTAINS` with a `values()` index, `CONTAINS KEY`
/// with a `keys()` index, `m[key] = value` with an `entries()` index; the first restriction
/// with one, as Cassandra picks among equally selective indexes.
fn usable_index(t: &TableSchema, r: &Restrictions) -> Option<(String, Bytes)> {
    let find = |column: &str, kinds: &[IndexKind]| {
        t.indexes
            .iter()
            .filter(|i| i.has_storage(&t.def) && !super::sai::compares_decimals(t, i))
            .find_map(|i| {
                let (c, kind) = i.column();
                (c == column && kinds.contains(&kind)).then(|| i.name.clone())
            })
    };
    let simple = [IndexKind::Simple, IndexKind::Full];
    let from_filters = r.filters.iter().find_map(|f| {
        let name = f.column.name.as_str();
        let (index, value) = match (f.op, f.any_of.as_deref(), &f.element) {
            (ComparisonOp::Equal, None, None) => (find(name, &simple)?, f.value.clone()),
            // A key column's `=` moved into the filters.
            (ComparisonOp::Equal, Some([one]), None) => (find(name, &simple)?, one.clone()),
            (ComparisonOp::Equal, None, Some(key)) => (
                find(name, &[IndexKind::Entries])?,
                entry_value(key, &f.value),
            ),
            (ComparisonOp::Contains, None, None) => {
                (find(name, &[IndexKind::Values])?, f.value.clone())
            }
            (ComparisonOp::ContainsKey, None, None) => {
                (find(name, &[IndexKind::Keys])?, f.value.clone())
            }
            _ => return None,
        };
        Some((index, value))
    });
    from_filters.or_else(|| {
        let clustering = t.def.clustering();
        r.clustering_equalities()
            .into_iter()
            .find_map(|(position, value)| {
                let column = clustering.get(position)?.0;
                Some((find(&column.name, &simple)?, value))
            })
    })
}

/// Whether the WHERE clause restricts by `=` a partition key or clustering column that has an
/// index: then a partial partition key or a clustering restriction after a gap may be served
/// by that index rather than need ALLOW FILTERING (and get Cassandra's refusals otherwise).
/// Whether some relation of `clause` is on a partition key column or its token.
fn restricts_partition_key(t: &TableSchema, clause: &[Relation]) -> bool {
    let key = |name: &str| {
        t.def
            .column(name)
            .is_some_and(|c| matches!(c.kind, ColumnKind::PartitionKey { .. }))
    };
    clause.iter().any(|r| match r {
        Relation::Token { .. } => true,
        Relation::Column { column, .. }
        | Relation::In { column, .. }
        | Relation::Between { column, .. } => key(&column.0),
        _ => false,
    })
}

/// An SAI's slice of a key column counts too.
fn restricts_indexed_key_column(t: &TableSchema, clause: &[Relation]) -> bool {
    !t.indexes.is_empty()
        && clause.iter().any(|relation| {
            let Relation::Column { column, op, .. } = relation else {
                return false;
            };
            t.def.column(&column.0).is_some_and(|c| {
                matches!(
                    c.kind,
                    ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
                ) && (*op == ComparisonOp::Equal
                    && t.indexes
                        .iter()
                        .any(|i| i.has_storage(&t.def) && i.column().0 == c.name)
                    || super::sai::serves(t, c, *op, false))
            })
        })
}

struct Plan {
    source: Source,
    /// Clustering byte ranges, sorted and disjoint.
    ranges: Vec<(Bytes, Bytes)>,
    reversed: bool,
    /// `ranges` name one whole row (every clustering column by `=`, one value each).
    one_row: bool,
    filters: Vec<Filter>,
    /// A partition with only static content is one row: no clustering or regular column is
    /// restricted (Cassandra's `queriesFullPartitions`) and the selection or a filter queries
    /// the static row ([`queries_static_row`]); otherwise such a partition has none.
    static_rows: bool,
    /// A partition key column is restricted by `IN` ([`Restrictions::key_in`]).
    key_in: bool,
}

/// `static_selected`: the selection queries the static row ([`queries_static_row`]);
/// `only_static`: it reads static columns only (`SelectShape::only_static`).
fn plan(
    t: &TableSchema,
    s: &Select,
    run: &Run<'_>,
    point: Option<&PointKey>,
    (static_selected, only_static): (bool, bool),
) -> Result<Plan, ExecError> {
    if let Some(point) = point {
        // One row (or one partition) by its whole key: what the general path below gives for
        // such a clause, without its restrictions.
        let (components, range) = point.bind(run)?;
        let reversed = reversed(t, s, |_| true)?;
        let key = PointKey::partition_key(&components)?;
        return Ok(Plan {
            source: Source::Partitions(vec![key]),
            ranges: vec![range],
            reversed,
            one_row: true,
            filters: Vec::new(),
            static_rows: point.names_partition() && static_selected,
            key_in: false,
        });
    }
    // Cassandra's `StatementRestrictions`: a vector index serves ANN OF only.
    if s.where_clause.iter().any(|r| match r {
        Relation::Column { column, .. } | Relation::In { column, .. } => t
            .indexes
            .iter()
            .any(|i| !i.has_storage(&t.def) && i.column().0 == column.0),
        _ => false,
    }) {
        return Err(ExecError::invalid(
            "Vector indexes only support ANN queries",
        ));
    }
    let mut r = Restrictions::for_select(t, run, &s.where_clause, s.allow_filtering)?;
    if !s.allow_filtering && restricts_indexed_key_column(t, &s.where_clause) {
        r.filter_key_columns(t);
    }
    if r.partial_partition_key() && !s.allow_filtering {
        return Err(ExecError::invalid(FILTERING));
    }
    // Cassandra's `usesSecondaryIndexing` (an index serves a restriction and a column outside
    // the primary key is restricted) refuses a partition key `IN`, even with ALLOW FILTERING.
    let non_key_filter = r
        .filters
        .iter()
        .any(|f| matches!(f.column.kind, ColumnKind::Regular | ColumnKind::Static));
    let uses_index = (non_key_filter || !r.has_partition_keys()) && r.restricts_indexed_column(t);
    if r.key_in && uses_index {
        return Err(ExecError::invalid(
            "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported",
        ));
    }
    // Cassandra's `validateSecondaryIndexSelections`: an index finds rows, not static rows.
    if only_static && uses_index {
        return Err(ExecError::invalid(
            "Queries using 2ndary indexes don't support selecting only static columns",
        ));
    }
    if s.distinct
        && (r.has_clustering()
            || r.filters.iter().any(|f| {
                matches!(
                    f.column.kind,
                    ColumnKind::Clustering { .. } | ColumnKind::Regular
                )
            }))
    {
        return Err(ExecError::invalid(
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ));
    }
    let index = usable_index(t, &r);
    // The table's SAIs serve the query together, ranges included: no ALLOW FILTERING needed.
    let sai = r.sai_serves_all(t, !r.has_partition_keys() || r.clustering_needs_filtering());
    // As Cassandra's `verifyOrderingIsAllowed`, before the ORDER BY's columns are looked at.
    if !s.order_by.is_empty() {
        if index.is_some() || (sai && !r.filters.is_empty()) {
            return Err(ExecError::invalid(
                "ORDER BY with 2ndary indexes is not supported.",
            ));
        }
        if !r.has_partition_keys() {
            return Err(ExecError::invalid(
                "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
            ));
        }
    }
    let needs_filtering = !sai && r.needs_filtering(t);
    if needs_filtering && !s.allow_filtering {
        return Err(ExecError::invalid(FILTERING));
    }
    let ranges = r.clustering_ranges(t)?;
    let equalities = r.clustering_equalities();
    let single_tuple = single_tuple_in_positions(t, &s.where_clause);
    let reversed = reversed(t, s, |position| {
        equalities.iter().any(|(p, _)| *p == position) || single_tuple.contains(&position)
    })?;
    let source = if r.has_partition_keys() {
        Source::Partitions(in_key_order(t, r.partition_keys()?))
    } else {
        match index {
            Some((index, value)) => Source::Index {
                index,
                value,
                low: r.token_low,
                high: r.token_high,
            },
            None => Source::Scan(r.token_low, r.token_high),
        }
    };
    let full_partitions = !r.has_clustering()
        && !r.filters.iter().any(|f| {
            matches!(
                f.column.kind,
                ColumnKind::Regular | ColumnKind::Clustering { .. }
            )
        });
    // A restricted static column is fetched and queried, as a selected one is.
    let static_rows = full_partitions
        && (static_selected
            || r.filters
                .iter()
                .any(|f| f.column.kind == ColumnKind::Static));
    let one_row = ranges.len() == 1 && r.names_rows(t);
    Ok(Plan {
        source,
        ranges,
        reversed,
        one_row,
        filters: r.filters,
        static_rows,
        key_in: r.key_in,
    })
}

/// What PREPARE checks of a SELECT, as Cassandra builds its restrictions when it prepares: the
/// selection, GROUP BY and the WHERE clause's restrictions, with `run`'s sample values bound.
pub(crate) fn check(exec: &Executor, s: &Select, run: &Run<'_>) -> Result<(), ExecError> {
    let shape = SelectShape::checked(&exec.coordinator().schema(), run, s)?;
    if ann::is_ann(s) {
        return ann::check(&shape, s, run);
    }
    if shape.point.is_none() {
        plan(
            &shape.table,
            s,
            run,
            None,
            (shape.static_selected, shape.only_static),
        )?;
    }
    Ok(())
}

/// The clustering positions of the columns of a multi-column `IN` of one tuple (`(b, c) IN
/// ((1, 1))`), which Cassandra makes an equality, so ORDER BY may skip them.
fn single_tuple_in_positions(t: &TableSchema, clause: &[Relation]) -> Vec<usize> {
    clause
        .iter()
        .filter_map(|r| match r {
            Relation::MultiColumnIn {
                columns,
                negated: false,
                values: crate::language::ast::InValues::Terms(terms),
            } if terms.len() == 1 => Some(columns),
            _ => None,
        })
        .flatten()
        .filter_map(|n| match t.def.column(&n.0)?.kind {
            ColumnKind::Clustering { position, .. } => Some(position as usize),
            _ => None,
        })
        .collect()
}

/// Whether the ORDER BY asks for the reverse of the table's clustering order, checked as
/// Cassandra checks it: clustering columns only, in their declared order, skipping only columns
/// `restricted_by_eq`, all in the clustering order or all in its reverse.
fn reversed(
    t: &TableSchema,
    s: &Select,
    restricted_by_eq: impl Fn(usize) -> bool,
) -> Result<bool, ExecError> {
    let clustering = t.def.clustering();
    let mut next = 0;
    let mut reversed: Option<bool> = None;
    for o in &s.order_by {
        let c = t
            .def
            .column(&o.column.0)
            .ok_or_else(|| ExecError::invalid(format!("Undefined column name {}", o.column.0)))?;
        let ColumnKind::Clustering { position, .. } = c.kind else {
            return Err(ExecError::invalid(format!(
                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {}",
                c.name
            )));
        };
        let position = position as usize;
        while next != position {
            if next > position || !restricted_by_eq(next) {
                return Err(ExecError::invalid(
                    "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
                ));
            }
            next += 1;
        }
        next = position + 1;
        let this = (o.direction == OrderDirection::Desc)
            != (clustering[position].1 == ClusteringOrder::Desc);
        if reversed.is_some_and(|r| r != this) {
            return Err(ExecError::invalid("Unsupported order by relation"));
        }
        reversed = Some(this);
    }
    Ok(reversed.unwrap_or(false))
}

/// Paging state: which partition (index or scan position) and the last row returned.
#[derive(Debug, Default)]
struct PagingState {
    partition_index: u32,
    key: Option<Bytes>,
    last_clustering: Option<Bytes>,
    returned: u64,
    /// Rows already returned from the partition the page stopped in (for PER PARTITION LIMIT
    /// and DISTINCT, which count per partition across pages). Absent (0) in states written
    /// before it was added.
    partition_returned: u32,
    /// A query through an index: the key of the partition `partition_returned` counts
    /// (its scans carry the key in `key`). Absent in states written before it was added.
    counted_key: Option<Bytes>,
}

fn encode_paging(p: &PagingState) -> Bytes {
    let mut b = BytesMut::new();
    b.put_u8(1);
    b.put_u32(p.partition_index);
    for part in [&p.key, &p.last_clustering] {
        match part {
            Some(v) => {
                b.put_u8(1);
                b.put_u32(v.len() as u32);
                b.put_slice(v);
            }
            None => b.put_u8(0),
        }
    }
    b.put_u64(p.returned);
    b.put_u32(p.partition_returned);
    if let Some(k) = &p.counted_key {
        b.put_u32(k.len() as u32);
        b.put_slice(k);
    }
    b.freeze()
}

fn decode_paging(bytes: &[u8]) -> Result<PagingState, ExecError> {
    let bad = || ExecError::invalid("Invalid value for the paging state");
    let mut r = bytes;
    let take = |r: &mut &[u8], n: usize| -> Result<Vec<u8>, ExecError> {
        if r.len() < n {
            return Err(bad());
        }
        let (a, b) = r.split_at(n);
        *r = b;
        Ok(a.to_vec())
    };
    if take(&mut r, 1)? != [1] {
        return Err(bad());
    }
    let index = u32::from_be_bytes(take(&mut r, 4)?.try_into().map_err(|_| bad())?);
    let mut parts = [None, None];
    for part in &mut parts {
        if take(&mut r, 1)? == [1] {
            let len = u32::from_be_bytes(take(&mut r, 4)?.try_into().map_err(|_| bad())?);
            *part = Some(Bytes::from(take(&mut r, len as usize)?));
        }
    }
    let returned = u64::from_be_bytes(take(&mut r, 8)?.try_into().map_err(|_| bad())?);
    let partition_returned = if r.is_empty() {
        0
    } else {
        u32::from_be_bytes(take(&mut r, 4)?.try_into().map_err(|_| bad())?)
    };
    let counted_key = if r.is_empty() {
        None
    } else {
        let len = u32::from_be_bytes(take(&mut r, 4)?.try_into().map_err(|_| bad())?);
        Some(Bytes::from(take(&mut r, len as usize)?))
    };
    if !r.is_empty() {
        return Err(bad());
    }
    let [key, last_clustering] = parts;
    Ok(PagingState {
        partition_index: index,
        key,
        last_clustering,
        returned,
        partition_returned,
        counted_key,
    })
}

/// The partitions of an `IN` in the order Cassandra reads them: sorted by the partition key's
/// values (its `MultiCBuilder` builds a set ordered by the key's type), not as written nor by
/// token, so `LIMIT` keeps the rows of the smallest keys. The components are compared as
/// clustering keys are, through their order-preserving encoding.
fn in_key_order(t: &TableSchema, mut keys: Vec<DecoratedKey>) -> Vec<DecoratedKey> {
    if keys.len() > 1 {
        let types: Vec<(CqlType, ClusteringOrder)> = t
            .def
            .partition_key()
            .iter()
            .map(|c| (c.ty.clone(), ClusteringOrder::Asc))
            .collect();
        keys.sort_by_cached_key(|k| {
            let parts = split_key(t, k);
            let parts: Vec<&[u8]> = parts.iter().map(|b| &b[..]).collect();
            khata_types::clustering::encode_key(&types, &parts).unwrap_or_else(|_| k.key.clone())
        });
    }
    keys
}

fn split_key(t: &TableSchema, key: &DecoratedKey) -> Vec<Bytes> {
    split_partition_key(&key.key, t.def.partition_key().len()).unwrap_or_default()
}

/// A column's value in a row: a simple cell, or a non-frozen collection assembled.
pub(crate) fn cell_value(c: &ColumnDef, row: &Row, now: u32) -> Option<Bytes> {
    if !c.ty.is_multi_cell() {
        return row
            .cells
            .get(&khata_types::row::CellKey::simple(c.id))
            .and_then(|cell| cell.live_value(now).cloned());
    }
    if let CqlType::Udt { fields, .. } = &c.ty {
        // One cell per field, the path being the field's position; absent fields are null.
        let mut out = BytesMut::new();
        let mut any = false;
        for i in 0..fields.len() {
            let key = khata_types::row::CellKey::element(
                c.id,
                Bytes::copy_from_slice(&(i as u16).to_be_bytes()),
            );
            match row.cells.get(&key).and_then(|cell| cell.live_value(now)) {
                Some(v) => {
                    any = true;
                    out.put_i32(v.len() as i32);
                    out.put_slice(v);
                }
                None => out.put_i32(-1),
            }
        }
        return any.then(|| out.freeze());
    }
    let items: Vec<(&Bytes, &Bytes)> = live_elements(c, row, now)
        .into_iter()
        .filter_map(|(path, cell)| Some((path, cell.live_value(now)?)))
        .collect();
    if items.is_empty() {
        return None;
    }
    let mut out = BytesMut::new();
    out.put_i32(items.len() as i32);
    for (path, value) in items {
        match &c.ty {
            CqlType::Set { .. } => {
                out.put_i32(path.len() as i32);
                out.put_slice(path);
            }
            CqlType::Map { .. } => {
                out.put_i32(path.len() as i32);
                out.put_slice(path);
                out.put_i32(value.len() as i32);
                out.put_slice(value);
            }
            _ => {
                out.put_i32(value.len() as i32);
                out.put_slice(value);
            }
        }
    }
    Some(out.freeze())
}

/// The live cells of a non-frozen collection column, each with its path, in the order
/// Cassandra answers the collection: a list's in its order, a set's elements and a map's keys
/// in the order of their type (`-1` before `0`; the cells are kept in the byte order of their
/// paths, which drivers that keep the wire's order would show).
fn live_elements<'r>(
    c: &ColumnDef,
    row: &'r Row,
    now: u32,
) -> Vec<(&'r Bytes, &'r khata_types::cell::Cell)> {
    let mut items: Vec<(&Bytes, &khata_types::cell::Cell)> = row
        .cells
        .iter()
        .filter(|(k, cell)| k.column == c.id && cell.live_value(now).is_some())
        .filter_map(|(k, cell)| Some((k.path.as_ref()?, cell)))
        .collect();
    if let CqlType::Set { element: key, .. } | CqlType::Map { key, .. } = &c.ty
        && !matches!(
            key.as_ref(),
            CqlType::Text | CqlType::Ascii | CqlType::Blob | CqlType::Boolean | CqlType::Inet
        )
    {
        let mut decoded: Vec<_> = items
            .into_iter()
            .map(|item| (crate::value::CqlValue::deserialize(key, item.0).ok(), item))
            .collect();
        decoded.sort_by(|(a, x), (b, y)| match (a, b) {
            (Some(a), Some(b)) => crate::value::compare(key, a, b),
            _ => x.0.cmp(y.0),
        });
        items = decoded.into_iter().map(|(_, item)| item).collect();
    }
    items
}

/// Cassandra 5.0's `WRITETIME(c)` (`ttl`: `TTL(c)`) of a non-frozen collection or UDT: the
/// list of its elements' timestamps (or remaining TTLs, null for an element without one), in
/// the collection's order; for a UDT one per field of the type, null for a field not set.
/// Null when nothing of the column is live.
fn cell_metas(c: &ColumnDef, row: &Row, now: u32, ttl: bool) -> Option<Bytes> {
    let meta = |cell: &khata_types::cell::Cell| -> Option<Vec<u8>> {
        if ttl {
            match &cell.kind {
                khata_types::cell::CellKind::Expiring { expiry, .. } => Some(
                    (expiry.local_expiry.saturating_sub(now) as i32)
                        .to_be_bytes()
                        .to_vec(),
                ),
                _ => None,
            }
        } else {
            Some(cell.timestamp.to_be_bytes().to_vec())
        }
    };
    let metas: Vec<Option<Vec<u8>>> = if let CqlType::Udt { fields, .. } = &c.ty {
        let cells: Vec<Option<&khata_types::cell::Cell>> = (0..fields.len())
            .map(|i| {
                let key = khata_types::row::CellKey::element(
                    c.id,
                    Bytes::copy_from_slice(&(i as u16).to_be_bytes()),
                );
                row.cells
                    .get(&key)
                    .filter(|cell| cell.live_value(now).is_some())
            })
            .collect();
        if cells.iter().all(Option::is_none) {
            return None;
        }
        cells.into_iter().map(|cell| cell.and_then(meta)).collect()
    } else {
        let cells = live_elements(c, row, now);
        if cells.is_empty() {
            return None;
        }
        cells.into_iter().map(|(_, cell)| meta(cell)).collect()
    };
    let mut out = BytesMut::new();
    out.put_i32(metas.len() as i32);
    for m in metas {
        match m {
            Some(v) => {
                out.put_i32(v.len() as i32);
                out.put_slice(&v);
            }
            None => out.put_i32(-1),
        }
    }
    Some(out.freeze())
}

fn cell_meta(c: &ColumnDef, row: &Row, now: u32, ttl: bool) -> Option<Bytes> {
    let cell = row.cells.get(&khata_types::row::CellKey::simple(c.id))?;
    cell.live_value(now)?;
    if ttl {
        match &cell.kind {
            khata_types::cell::CellKind::Expiring { expiry, .. } => {
                let left = expiry.local_expiry.saturating_sub(now) as i32;
                Some(Bytes::copy_from_slice(&left.to_be_bytes()))
            }
            _ => None,
        }
    } else {
        Some(Bytes::copy_from_slice(&cell.timestamp.to_be_bytes()))
    }
}

/// What `kind` reads of one live cell: its timestamp, or its remaining TTL (none without one).
fn meta_of(cell: &khata_types::cell::Cell, kind: WritetimeKind, now: u32) -> Option<Bytes> {
    cell.live_value(now)?;
    match kind {
        WritetimeKind::Ttl => match &cell.kind {
            khata_types::cell::CellKind::Expiring { expiry, .. } => Some(Bytes::copy_from_slice(
                &(expiry.local_expiry.saturating_sub(now) as i32).to_be_bytes(),
            )),
            _ => None,
        },
        _ => Some(Bytes::copy_from_slice(&cell.timestamp.to_be_bytes())),
    }
}

/// `WRITETIME(s[k])` and the like: the element's own cell in a non-frozen set or map; in a
/// frozen one, the whole value's cell if the element is in it.
fn element_meta(
    c: &ColumnDef,
    row: &Row,
    key: Option<&Bytes>,
    now: u32,
    kind: WritetimeKind,
) -> Option<Bytes> {
    let key = key?;
    if c.ty.is_multi_cell() {
        let cell = row
            .cells
            .get(&khata_types::row::CellKey::element(c.id, key.clone()))?;
        return meta_of(cell, kind, now);
    }
    element_value(c, row, Some(key), now)?;
    meta_of(
        row.cells.get(&khata_types::row::CellKey::simple(c.id))?,
        kind,
        now,
    )
}

/// `WRITETIME(u.f)` and the like: the field's own cell in a non-frozen user type value; in a
/// frozen one, the whole value's cell if the field is set.
fn field_meta(
    c: &ColumnDef,
    row: &Row,
    index: usize,
    now: u32,
    kind: WritetimeKind,
) -> Option<Bytes> {
    if c.ty.is_multi_cell() {
        let key = khata_types::row::CellKey::element(
            c.id,
            Bytes::copy_from_slice(&(index as u16).to_be_bytes()),
        );
        return meta_of(row.cells.get(&key)?, kind, now);
    }
    let cell = row.cells.get(&khata_types::row::CellKey::simple(c.id))?;
    // The serialized fields: each an `int` length (-1 for null) and its bytes.
    let mut rest = &cell.live_value(now)?[..];
    for i in 0.. {
        let len = i32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        rest = &rest[4..];
        if i == index {
            return (len >= 0).then(|| meta_of(cell, kind, now)).flatten();
        }
        rest = rest.get(usize::try_from(len).unwrap_or(0)..)?;
    }
    None
}

/// The newest write timestamp of the live cells of column `c` (its one cell, or each element
/// or field of a non-frozen collection or UDT).
fn newest_timestamp(c: &ColumnDef, row: &Row, now: u32) -> Option<Bytes> {
    row.cells
        .iter()
        .filter(|(k, cell)| k.column == c.id && cell.live_value(now).is_some())
        .map(|(_, cell)| cell.timestamp)
        .max()
        .map(|ts| Bytes::copy_from_slice(&ts.to_be_bytes()))
}

/// Run a SELECT.
///
/// `shape` is a prepared statement's [`SelectShape::checked`] for the current schema snapshot;
/// without one, the shape is worked out here.
pub(crate) async fn run(
    exec: &Executor,
    s: &Select,
    run: &mut Run<'_>,
    shape: Option<&SelectShape>,
) -> Result<ResultBody, ExecError> {
    let checked = shape.is_some();
    let unplanned;
    let shape = match shape {
        Some(shape) => shape,
        None => {
            unplanned = SelectShape::unchecked(&exec.coordinator().schema(), run, s)?;
            &unplanned
        }
    };
    if ann::is_ann(s) {
        return ann::run(exec, s, run, shape).await;
    }
    let t = &shape.table;
    let outs = &shape.outs;
    // Cassandra's ConsistencyLevel.validateForRead, and StorageProxy.readWithPaxos: a serial
    // read of several partitions by key is refused; a range or index read at SERIAL reads as
    // QUORUM does (StorageProxy.getRangeSlice has no Paxos round).
    if run.params.consistency == crate::frame::Consistency::Any {
        return Err(ExecError::invalid(
            "ANY ConsistencyLevel is only supported for writes",
        ));
    }
    let plan = plan(
        t,
        s,
        run,
        shape.point.as_ref(),
        (shape.static_selected, shape.only_static),
    )?;
    if matches!(
        run.params.consistency,
        crate::frame::Consistency::Serial | crate::frame::Consistency::LocalSerial
    ) && matches!(&plan.source, Source::Partitions(keys) if keys.len() > 1)
    {
        return Err(ExecError::invalid(
            "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time",
        ));
    }
    let cl = coordinator_consistency(run.params.consistency);
    let now = match run.params.now_in_seconds {
        Some(n) if n > 0 => n as u32,
        _ => exec.coordinator().now_seconds(),
    };
    let mut limit = match &s.limit {
        Some(v) => match bind::int_value(run, v, "limit", false)? {
            Some(l) if l <= 0 => return Err(ExecError::invalid("LIMIT must be strictly positive")),
            Some(l) => Some(l as u64),
            None => None,
        },
        None => None,
    };
    let per_partition = match &s.per_partition_limit {
        Some(v) => match bind::int_value(run, v, "per partition limit", false)? {
            Some(l) if l <= 0 => return Err(ExecError::invalid("LIMIT must be strictly positive")),
            Some(l) => Some(l as usize),
            None => None,
        },
        None => None,
    };
    let aggregate = outs.iter().any(|(_, o)| o.aggregates());
    // A shape from the plan cache had its GROUP BY and DISTINCT checked when it was made.
    let unchecked_group_by;
    let group_by: &[ColumnDef] = if checked {
        &shape.group_by
    } else {
        unchecked_group_by = group_by_columns(t, s)?;
        &unchecked_group_by
    };
    let grouped = !group_by.is_empty();
    let floor = group_floor(t, s, run)?;
    // Cassandra's warnings for aggregates that read many partitions.
    if aggregate || grouped {
        match &plan.source {
            Source::Partitions(_) if plan.key_in => run.warnings.push(
                "Aggregation query used on multiple partition keys (IN restriction)".to_string(),
            ),
            Source::Partitions(_) => {}
            // Cassandra warns when nothing restricts the partition key: a token range or a
            // part of the key is a restriction (`hasPartitionKeyRestrictions`).
            _ if restricts_partition_key(t, &s.where_clause) => {}
            _ => run
                .warnings
                .push("Aggregation query used without partition key".to_string()),
        }
    }
    if !checked {
        check_selection(t, s, outs, grouped)?;
    }
    // Element keys, slice bounds and terms of the selectors, bound once (nothing is copied for
    // a statement without them).
    let bound_outs: Vec<(String, Output)>;
    let outs: &[(String, Output)] = if outs.iter().any(|(_, o)| o.has_args()) {
        bound_outs = outs
            .iter()
            .map(|(name, o)| Ok((name.clone(), o.bind(run)?)))
            .collect::<Result<_, ExecError>>()?;
        &bound_outs
    } else {
        outs
    };
    // Aggregated, each row gives the values of the slots an aggregator folds per group: an
    // aggregate's argument, the inputs of a computation over aggregates, or a plain selector
    // (whose value is the group's first).
    let slots: Vec<(AggKind, Option<&Output>)> = outs
        .iter()
        .flat_map(|(_, o)| -> Vec<(AggKind, Option<&Output>)> {
            match o {
                Output::Aggregate(kind, arg) => vec![(*kind, arg.as_deref())],
                Output::OverAggregates(_, inputs) => {
                    inputs.iter().map(|(k, o)| (*k, o.as_ref())).collect()
                }
                plain => vec![(AggKind::First, Some(plain))],
            }
        })
        .collect();
    let mut aggregator = (aggregate || grouped).then(|| {
        Aggregator::new(
            slots.iter().map(|(kind, _)| *kind).collect(),
            slots
                .iter()
                .map(|(_, arg)| arg.map_or(CqlType::Bigint, output_type))
                .collect(),
            grouped,
        )
    });
    let aggregate = aggregator.is_some();
    // With GROUP BY, PER PARTITION LIMIT counts groups, as Cassandra's group-by limits do: the
    // partition is read whole and its rows stop at the first group past the limit.
    let group_per_partition = if grouped { per_partition } else { None };
    let per_partition = if grouped { None } else { per_partition };
    // The partition and group the last grouped row belonged to, and the groups counted in that
    // partition (across the chunks of a scan that stops inside a partition).
    let mut partition_groups: Option<(Bytes, Bytes, usize)> = None;
    // ORDER BY over several partitions (`IN` on the partition key) orders the rows of all of
    // them after they are read, as Cassandra's post-query ordering does: each partition is read
    // up to LIMIT rows, the rows are merged by clustering and cut at LIMIT. Such a result has
    // no paging state to resume from: as in Cassandra 4.1, an ORDER BY with `IN` on the
    // partition key (even of one value) is refused whenever paging is on, LIMIT or not (its
    // `getDataLimits` leaves the user's limit out of a post-ordered query, which then pages).
    // With GROUP BY the groups are ordered so, by their first rows, before LIMIT cuts them
    // (Cassandra orders its result rows); aggregates too are refused with paging on.
    let post_ordered = !s.order_by.is_empty() && plan.key_in;
    if post_ordered && run.params.page_size.is_some_and(|p| p > 0) {
        return Err(ExecError::invalid(
            "Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query",
        ));
    }
    let post_order = post_ordered && !aggregate;
    let post_order_groups = post_ordered && grouped;
    let (per_partition, post_limit) = if post_order {
        let per = match (per_partition, limit) {
            (Some(p), Some(l)) => Some(p.min(usize::try_from(l).unwrap_or(usize::MAX))),
            (p, l) => p.or(l.map(|l| usize::try_from(l).unwrap_or(usize::MAX))),
        };
        (per, limit.take())
    } else {
        (per_partition, None)
    };
    // With aggregates, LIMIT counts result rows (groups), not the rows read.
    let (limit, result_limit) = if aggregate {
        (None, limit)
    } else {
        (limit, None)
    };
    let page_size = match run.params.page_size {
        Some(p) if p > 0 && !aggregate && !post_order => Some(p as u64),
        _ => None,
    };
    // GROUP BY results page by groups, as Cassandra's `CQLGroupByLimits` count them: a page
    // holds at most the page size in groups and ends before the first row of the next group,
    // so no group is split between pages. An aggregate without GROUP BY is one row, one page.
    let group_page = match run.params.page_size {
        Some(p) if p > 0 && grouped => Some(p as u64),
        _ => None,
    };
    // The clustering key of each row in `rows`, or of each group's first row, for the
    // post-query ordering; and the group of the last key taken.
    let mut row_keys: Vec<Bytes> = Vec::new();
    let mut keyed_group: Option<Bytes> = None;
    let mut state = match &run.params.paging_state {
        Some(b) => decode_paging(b)?,
        None => PagingState::default(),
    };
    let mut rows: Vec<Vec<Option<Bytes>>> = Vec::new();
    let mut failure: Option<ExecError> = None;
    // The groups this page may start: its page size, and what LIMIT leaves of the groups.
    let group_budget = match (
        group_page,
        result_limit.filter(|_| grouped && !post_order_groups),
    ) {
        (Some(p), Some(l)) => Some(p.min(l.saturating_sub(state.returned))),
        (p, l) => p.or(l.map(|l| l.saturating_sub(state.returned))),
    };
    // The groups this page started, and the group of the last row aggregated.
    let mut page_groups = 0u64;
    let mut page_group: Option<Bytes> = None;
    // Set when a row would start a group past `group_budget`: the page ends before it. It
    // holds the groups of that row's partition aggregated on this page and before.
    // (An atomic, not a `Cell`, since the emitting closure is held across awaits of a `Send`
    // future; `u64::MAX` stands for not set.)
    let groups_full_at = std::sync::atomic::AtomicU64::new(u64::MAX);
    let groups_full = || match groups_full_at.load(std::sync::atomic::Ordering::Relaxed) {
        u64::MAX => None,
        groups => Some(groups as u32),
    };
    // A page that resumes inside a partition counts that partition's groups from the paging
    // state (PER PARTITION LIMIT with GROUP BY counts groups).
    if grouped && state.last_clustering.is_some() {
        let resumed_key = match &plan.source {
            Source::Partitions(keys) => keys
                .get(state.partition_index as usize)
                .map(|k| k.key.clone()),
            Source::Scan(..) => state.key.clone(),
            Source::Index { .. } => state.counted_key.clone(),
        };
        if let Some(k) = resumed_key {
            // No group key matches the empty one, so the resumed partition's next row counts
            // as a new group, which it is: the page ended at a group's end.
            partition_groups = Some((k, Bytes::new(), state.partition_returned as usize));
        }
    }
    let coordinator = Arc::clone(&run.coordinator);
    let env = super::selector::Env {
        coordinator: &coordinator,
        now_micros: run.now_micros,
        inputs: &[],
    };
    let remaining = |state: &PagingState, got: usize| -> Option<u64> {
        let mut left: Option<u64> = None;
        if let Some(l) = limit {
            left = Some(l.saturating_sub(state.returned + got as u64));
        }
        if let Some(p) = page_size {
            left = Some(left.map_or(p.saturating_sub(got as u64), |l| {
                l.min(p.saturating_sub(got as u64))
            }));
        }
        left
    };
    let mut more = false;
    // `already`: rows of this partition returned before (an earlier page, or an earlier chunk
    // of a scan that stopped inside it), which PER PARTITION LIMIT and DISTINCT count.
    // A GROUP BY `floor` refused for a row (a value before its start) fails the query.
    let group_error: parking_lot::Mutex<Option<ExecError>> = parking_lot::Mutex::new(None);
    let mut emit = |key: &DecoratedKey,
                    partition: &Partition,
                    rows: &mut Vec<Vec<Option<Bytes>>>,
                    budget: Option<u64>,
                    already: usize|
     -> (usize, Option<Bytes>) {
        if s.distinct && already > 0 {
            return (0, None);
        }
        let pk_values = split_key(t, key);
        let types = &shape.clustering_types;
        let mut emitted = 0usize;
        let mut last = None;
        let live: Vec<(&Bytes, &Row)> = if plan.reversed {
            partition.live_rows(now).rev().collect()
        } else {
            partition.live_rows(now).collect()
        };
        // A partition with a live static row and no rows is one row of its static values,
        // unless rows of it went out already (a page or chunk that resumes inside it).
        let static_only = live.is_empty()
            && already == 0
            && partition.static_row.is_live(now)
            && !types.is_empty()
            && plan.static_rows;
        let candidates: Vec<(Option<&Bytes>, Option<&Row>)> = if static_only {
            vec![(None, None)]
        } else {
            live.into_iter().map(|(k, r)| (Some(k), Some(r))).collect()
        };
        for (ck, row) in candidates {
            if budget.is_some_and(|b| emitted as u64 >= b)
                || per_partition.is_some_and(|p| already + emitted >= p)
            {
                break;
            }
            let ck_values = match ck {
                Some(ck) => khata_types::clustering::decode_key(types, ck).unwrap_or_default(),
                None => Vec::new(),
            };
            let empty = Row::default();
            let row_ref = row.unwrap_or(&empty);
            let passes = plan.filters.iter().all(|f| match f.column.kind {
                ColumnKind::PartitionKey { position } => f.passes(pk_values.get(position as usize)),
                ColumnKind::Clustering { position, .. } => {
                    f.passes(ck_values.get(position as usize))
                }
                ColumnKind::Static => {
                    f.passes(cell_value(&f.column, &partition.static_row, now).as_ref())
                }
                ColumnKind::Regular => f.passes(cell_value(&f.column, row_ref, now).as_ref()),
            });
            if !passes {
                continue;
            }
            let row_group = if grouped {
                match group_key(group_by, floor.as_ref(), &pk_values, &ck_values) {
                    Ok(group) => Some(group),
                    Err(e) => {
                        *group_error.lock() = Some(e);
                        return (emitted, last);
                    }
                }
            } else {
                None
            };
            if let Some(group) = &row_group {
                let count = match &partition_groups {
                    Some((k, g, n)) if *k == key.key => n + usize::from(g != group),
                    _ => 1,
                };
                if group_per_partition.is_some_and(|p| count > p) {
                    break;
                }
                let starts_group = page_group.as_ref() != Some(group);
                if starts_group && group_budget.is_some_and(|b| page_groups >= b) {
                    groups_full_at.store(
                        count.saturating_sub(1) as u64,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                    break;
                }
                if starts_group {
                    page_groups += 1;
                    page_group = Some(group.clone());
                }
                partition_groups = Some((key.key.clone(), group.clone(), count));
            }
            emitted += 1;
            last = ck.cloned();
            let at = RowAt {
                key,
                pk_values: &pk_values,
                ck_values: &ck_values,
                row: row_ref,
                statics: &partition.static_row,
                now,
                env,
            };
            let mut value = |o: Option<&Output>| match o.map(|o| at.value(o)) {
                Some(Ok(v)) => v,
                Some(Err(e)) => {
                    failure = Some(e);
                    None
                }
                None => None,
            };
            let out: Vec<Option<Bytes>> = if aggregator.is_some() {
                slots.iter().map(|(_, arg)| value(*arg)).collect()
            } else {
                outs.iter().map(|(_, o)| value(Some(o))).collect()
            };
            match aggregator.as_mut() {
                Some(agg) => {
                    let group = row_group.unwrap_or_default();
                    if post_order_groups && keyed_group.as_ref() != Some(&group) {
                        row_keys.push(ck.cloned().unwrap_or_default());
                        keyed_group = Some(group.clone());
                    }
                    if let Err(e) = agg.add(group, out) {
                        failure = Some(e);
                    }
                }
                None => {
                    if post_order {
                        row_keys.push(ck.cloned().unwrap_or_default());
                    }
                    rows.push(out)
                }
            }
            if s.distinct {
                // One row per partition.
                break;
            }
        }
        (emitted, last)
    };
    match &plan.source {
        Source::Partitions(keys) => {
            let mut index = state.partition_index as usize;
            while index < keys.len() {
                let budget = remaining(&state, rows.len());
                if budget == Some(0) {
                    // The page filled with the partitions before this one: the next starts
                    // at it, from its first row.
                    more = limit.is_none_or(|l| state.returned + (rows.len() as u64) < l);
                    state.partition_index = index as u32;
                    state.last_clustering = None;
                    state.partition_returned = 0;
                    break;
                }
                let key = &keys[index];
                // Resuming a page: only what comes after the last row returned.
                let mut ranges = plan.ranges.clone();
                let resumed_after = state.last_clustering.clone();
                let already = if state.last_clustering.is_some() {
                    std::mem::take(&mut state.partition_returned) as usize
                } else {
                    0
                };
                if let Some(last) = state.last_clustering.take() {
                    if plan.reversed {
                        let end = end_bound(&last, false);
                        ranges.retain(|r| r.0 < end);
                        for r in &mut ranges {
                            r.1 = r.1.clone().min(end.clone());
                        }
                    } else {
                        let start = start_bound(&last, false);
                        ranges.retain(|r| r.1 > start);
                        for r in &mut ranges {
                            r.0 = r.0.clone().max(start.clone());
                        }
                    }
                }
                let per_partition_left = per_partition.map(|p| p.saturating_sub(already));
                let row_limit = match (budget, per_partition_left) {
                    (Some(b), Some(p)) => Some((b as usize).min(p)),
                    (Some(b), None) => Some(b as usize),
                    (None, p) => p,
                };
                let row_limit = if plan.filters.is_empty() {
                    row_limit
                } else {
                    None
                };
                let result = exec
                    .coordinator()
                    .read(
                        ReadCommand {
                            table: t.def.id,
                            key: key.clone(),
                            ranges,
                            reversed: plan.reversed,
                            row_limit,
                            one_row: plan.one_row,
                            now,
                        },
                        cl,
                    )
                    .await?;
                run.warnings.extend(result.warnings.iter().cloned());
                let (emitted, last) = emit(key, &result.partition, &mut rows, budget, already);
                if let Some(groups) = groups_full() {
                    // A page of groups ends before the row starting the next group (at the
                    // partition's start when no row of it was taken).
                    state.partition_index = index as u32;
                    state.last_clustering = last.or(resumed_after);
                    state.partition_returned = groups;
                    more = true;
                    break;
                }
                // The page is full and rows of the partition may be left: read up to the row
                // limit, or (with filters, which read the whole partition) live rows after
                // the last one returned, which later pages filter.
                let rows_left = result.limit_reached
                    || (!plan.filters.is_empty()
                        && last.as_ref().is_some_and(|l| {
                            let mut after = if plan.reversed {
                                result.partition.rows.range(..l.clone())
                            } else {
                                result
                                    .partition
                                    .rows
                                    .range((RangeBound::Excluded(l.clone()), RangeBound::Unbounded))
                            };
                            after.any(|(_, r)| r.is_live(now))
                        }));
                if budget.is_some_and(|b| emitted as u64 >= b) && rows_left {
                    state.partition_index = index as u32;
                    state.last_clustering = last;
                    state.partition_returned = (already + emitted) as u32;
                    more = true;
                    break;
                }
                index += 1;
            }
        }
        Source::Scan(low, high) => {
            let mut resume = state.key.take().map(|k| ScanPosition {
                key: DecoratedKey::new(k),
                last_clustering: state.last_clustering.take(),
            });
            // The partition the scan stopped inside (its key) and the rows returned from it:
            // a scan's chunks and pages end after a number of rows read, not at partitions.
            let mut carried: Option<(Bytes, usize)> = resume.as_ref().and_then(|r| {
                r.last_clustering
                    .as_ref()
                    .map(|_| (r.key.key.clone(), state.partition_returned as usize))
            });
            // The partition of the last row taken on this page (GROUP BY pages end there).
            let mut taken_from: Option<DecoratedKey> = resume.as_ref().map(|r| r.key.clone());
            'chunks: loop {
                let budget = remaining(&state, rows.len());
                if budget == Some(0) {
                    more = limit.is_none_or(|l| state.returned + (rows.len() as u64) < l);
                    break;
                }
                let chunk = budget.unwrap_or(5000).clamp(1, 5000) as usize;
                let page = exec
                    .coordinator()
                    .scan(
                        ScanCommand {
                            table: t.def.id,
                            start: *low,
                            end: *high,
                            resume: resume.clone(),
                            row_limit: chunk,
                            now,
                        },
                        cl,
                    )
                    .await?;
                run.warnings.extend(page.warnings.iter().cloned());
                for (key, partition) in &page.partitions {
                    let mut p = partition.clone();
                    p.rows
                        .retain(|k, _| plan.ranges.iter().any(|(lo, hi)| k >= lo && k < hi));
                    let already = match &carried {
                        Some((k, n)) if *k == key.key => *n,
                        _ => 0,
                    };
                    let (emitted, last) = emit(key, &p, &mut rows, None, already);
                    if let Some(groups) = groups_full() {
                        // A page of groups ends before the row starting the next group: after
                        // the last row taken from this partition, or after the partition of
                        // the last row taken (groups never span partitions).
                        let (key, last_clustering, groups) = match last {
                            Some(l) => (key.clone(), Some(l), groups),
                            None => match taken_from.take() {
                                Some(k) => (k, None, 0),
                                None => break 'chunks,
                            },
                        };
                        state.partition_returned = groups;
                        state.key = Some(key.key);
                        state.last_clustering = last_clustering;
                        more = true;
                        resume = None;
                        break 'chunks;
                    }
                    if emitted > 0 {
                        taken_from = Some(key.clone());
                    }
                    carried = Some((key.key.clone(), already + emitted));
                }
                match page.resume {
                    Some(mut r) => {
                        // A chunk that ended inside a partition the query is done with (DISTINCT
                        // took its row, PER PARTITION LIMIT is reached) resumes after that
                        // partition rather than reading the rest of its rows to drop them.
                        let done = match &carried {
                            Some((k, n)) if *k == r.key.key => {
                                (s.distinct && *n > 0) || per_partition.is_some_and(|p| *n >= p)
                            }
                            _ => false,
                        };
                        if done {
                            r.last_clustering = None;
                        }
                        resume = Some(r);
                    }
                    None => break,
                }
            }
            if more && let Some(r) = resume {
                state.partition_returned = match &carried {
                    Some((k, n)) if *k == r.key.key && r.last_clustering.is_some() => *n as u32,
                    _ => 0,
                };
                state.key = Some(r.key.key.clone());
                state.last_clustering = r.last_clustering;
            }
        }
        Source::Index {
            index,
            value,
            low,
            high,
        } => {
            // The paging state's clustering is the last index entry consumed; its key, for an
            // index whose entries name whole partitions, the last row returned from the
            // partition that entry names when the page ended inside it.
            let mut resume = state.last_clustering.take();
            let mut resume_within = state.key.take();
            // The partition of the last rows returned and how many went out from it: the
            // entries of one partition are together in the index, but a chunk or a page may
            // end among them.
            let mut carried: Option<(Bytes, usize)> = state
                .counted_key
                .take()
                .map(|k| (k, state.partition_returned as usize));
            let done_with = |carried: &Option<(Bytes, usize)>| {
                carried.as_ref().is_some_and(|(_, n)| {
                    (s.distinct && *n > 0) || per_partition.is_some_and(|p| *n >= p)
                })
            };
            loop {
                let budget = remaining(&state, rows.len());
                if budget == Some(0) {
                    more = limit.is_none_or(|l| state.returned + (rows.len() as u64) < l);
                    break;
                }
                let chunk = budget.unwrap_or(5000).clamp(1, 5000) as usize;
                let query = |resume: &Option<Bytes>,
                             resume_within: &Option<Bytes>,
                             carried: &Option<(Bytes, usize)>,
                             row_limit: usize| IndexQuery {
                    table: t.def.id,
                    index: index.clone(),
                    value: value.clone(),
                    start: *low,
                    end: *high,
                    resume: resume.clone(),
                    resume_within: resume_within.clone(),
                    // The last entry consumed is in the carried partition.
                    skip_partition: resume.is_some() && done_with(carried),
                    row_limit,
                    now,
                };
                let found = exec
                    .coordinator()
                    .index_query(query(&resume, &resume_within, &carried, chunk), cl)
                    .await?;
                run.warnings.extend(found.warnings.iter().cloned());
                // The rows of this chunk taken before a page of groups ended, as the index
                // query counts rows (a partition with only static content is one).
                let mut taken: Option<(usize, Option<(Bytes, u32)>)> = None;
                let mut counted = 0usize;
                let carried_before = carried.clone();
                for (i, (key, partition)) in found.partitions.iter().enumerate() {
                    let mut p = partition.clone();
                    p.rows
                        .retain(|k, _| plan.ranges.iter().any(|(lo, hi)| k >= lo && k < hi));
                    let left = limit.map(|l| l.saturating_sub(state.returned + rows.len() as u64));
                    let already = match &carried {
                        Some((k, n)) if *k == key.key => *n,
                        _ => 0,
                    };
                    let (emitted, last) = emit(key, &p, &mut rows, left, already);
                    if let Some(groups) = groups_full() {
                        taken = Some(match last {
                            Some(l) => (
                                counted + partition.rows.range(..=l).count(),
                                Some((key.key.clone(), groups)),
                            ),
                            None => (counted, carried.take().map(|(k, _)| (k, 0))),
                        });
                        break;
                    }
                    let resumed_inside = i == 0 && resume_within.is_some();
                    counted += match partition.rows.len() {
                        0 if !resumed_inside && partition.static_row.is_live(now) => 1,
                        n => n,
                    };
                    carried = Some((key.key.clone(), already + emitted));
                }
                if let Some((count, counted_in)) = taken {
                    // A page of groups ended inside this chunk: the position after the rows
                    // taken is where the same query stops when limited to them.
                    if count > 0 {
                        let upto = exec
                            .coordinator()
                            .index_query(query(&resume, &resume_within, &carried_before, count), cl)
                            .await?;
                        resume = upto.resume;
                        resume_within = upto.resume_within;
                    }
                    state.last_clustering = resume.take();
                    state.key = resume_within.take();
                    if let Some((k, groups)) = counted_in {
                        state.partition_returned = groups;
                        state.counted_key = Some(k);
                    }
                    more = state.last_clustering.is_some();
                    break;
                }
                resume_within = found.resume_within;
                match found.resume {
                    Some(r) => resume = Some(r),
                    None => break,
                }
            }
            if more && groups_full().is_none() {
                state.last_clustering = resume;
                state.key = resume_within;
                if let Some((k, n)) = carried {
                    state.partition_returned = n as u32;
                    state.counted_key = Some(k);
                }
            }
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if post_order {
        rows = sort_by_keys(std::mem::take(&mut row_keys), rows, plan.reversed);
        if let Some(l) = post_limit {
            rows.truncate(usize::try_from(l).unwrap_or(usize::MAX));
        }
    }
    if let Some(agg) = aggregator {
        rows = agg
            .finish()
            .into_iter()
            .map(|folded| project(outs, folded, env))
            .collect::<Result<_, _>>()?;
        if post_order_groups && row_keys.len() == rows.len() {
            rows = sort_by_keys(std::mem::take(&mut row_keys), rows, plan.reversed);
        }
        if let Some(l) = result_limit {
            let left = l.saturating_sub(state.returned);
            rows.truncate(usize::try_from(left).unwrap_or(usize::MAX));
        }
        if group_page.is_none() {
            more = false;
        }
    }
    if let Some(e) = group_error.lock().take() {
        return Err(e);
    }
    if s.json {
        rows = rows.iter().map(|r| vec![json_row(outs, r)]).collect();
    }
    // More pages only when the page filled, not when LIMIT was reached (LIMIT and the page
    // size count groups with GROUP BY).
    let total = state.returned + rows.len() as u64;
    if (page_size.is_none() && group_page.is_none())
        || limit.or(result_limit).is_some_and(|l| total >= l)
    {
        more = false;
    }
    let mut metadata = RowsMetadata::new(shape.specs.clone());
    if more {
        state.returned += rows.len() as u64;
        metadata.paging_state = Some(encode_paging(&state));
    }
    let rows = Rows::from_cells(metadata, &rows)
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
    Ok(ResultBody::Rows(rows))
}

/// A row being read: where an output's value for it comes from.
struct RowAt<'a> {
    key: &'a DecoratedKey,
    pk_values: &'a [Bytes],
    ck_values: &'a [Bytes],
    row: &'a Row,
    statics: &'a Row,
    now: u32,
    env: super::selector::Env<'a>,
}

impl RowAt<'_> {
    /// The value of a row-level output (not an aggregate) in the row.
    fn value(&self, o: &Output) -> Result<Option<Bytes>, ExecError> {
        let now = self.now;
        let source = |c: &ColumnDef| {
            if c.kind == ColumnKind::Static {
                self.statics
            } else {
                self.row
            }
        };
        let column = |c: &ColumnDef| match c.kind {
            ColumnKind::PartitionKey { position } => self.pk_values.get(position as usize).cloned(),
            ColumnKind::Clustering { position, .. } => {
                self.ck_values.get(position as usize).cloned()
            }
            ColumnKind::Static | ColumnKind::Regular => cell_value(c, source(c), now),
        };
        Ok(match o {
            Output::Column(c) => column(c),
            Output::Writetime(c) => cell_meta(c, source(c), now, false),
            Output::MaxWritetime(c) => newest_timestamp(c, source(c), now),
            Output::Metas(c, ttl) => cell_metas(c, source(c), now, *ttl),
            Output::ElementMeta(c, kind, _, key) => {
                element_meta(c, source(c), key.as_ref(), now, *kind)
            }
            Output::FieldMeta(c, kind, index) => field_meta(c, source(c), *index, now, *kind),
            Output::Ttl(c) => cell_meta(c, source(c), now, true),
            Output::Token => Some(Bytes::copy_from_slice(&self.key.token.0.to_be_bytes())),
            Output::Time(f, c) => column(c).and_then(|v| time_fn(*f, &c.ty, &v)),
            Output::Cast(c, to) => column(c).and_then(|v| cast(&c.ty, to, &v)),
            // A frozen collection in the primary key is read from the key, not a cell.
            Output::Element(c, _, key)
                if matches!(
                    c.kind,
                    ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
                ) =>
            {
                let key = key.as_ref();
                column(c).and_then(|v| super::selector::element(&c.ty, &v, key?))
            }
            Output::Element(c, _, key) => element_value(c, source(c), key.as_ref(), now),
            Output::Computed(computed) => computed.eval(self.env, &column)?,
            Output::OverRow(computed, inputs) => {
                let values = inputs
                    .iter()
                    .map(|o| self.value(o))
                    .collect::<Result<Vec<_>, _>>()?;
                let env = super::selector::Env {
                    inputs: &values,
                    ..self.env
                };
                computed.eval(env, &column)?
            }
            Output::Aggregate(..) | Output::OverAggregates(..) => {
                unreachable!("aggregates are folded, not read from a row")
            }
        })
    }
}

/// A result row from a group's folded slots (see `slots` in [`run`]): each output's slot
/// value, or its computation over its inputs' values.
fn project(
    outs: &[(String, Output)],
    folded: Vec<Option<Bytes>>,
    env: super::selector::Env<'_>,
) -> Result<Vec<Option<Bytes>>, ExecError> {
    let mut row = Vec::with_capacity(outs.len());
    let mut next = 0;
    for (_, o) in outs {
        match o {
            Output::OverAggregates(c, inputs) => {
                let end = (next + inputs.len()).min(folded.len());
                let env = super::selector::Env {
                    inputs: &folded[next..end],
                    ..env
                };
                row.push(c.eval(env, &|_| None)?);
                next = end;
            }
            _ => {
                row.push(folded.get(next).cloned().flatten());
                next += 1;
            }
        }
    }
    Ok(row)
}

/// Rows ordered by their clustering keys (`keys[i]` is row `i`'s), descending when
/// `reversed`. Stable: rows with equal clustering keep their partitions' order.
fn sort_by_keys(
    keys: Vec<Bytes>,
    rows: Vec<Vec<Option<Bytes>>>,
    reversed: bool,
) -> Vec<Vec<Option<Bytes>>> {
    let mut keyed: Vec<(Bytes, Vec<Option<Bytes>>)> = keys.into_iter().zip(rows).collect();
    if reversed {
        keyed.sort_by(|a, b| b.0.cmp(&a.0));
    } else {
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
    }
    keyed.into_iter().map(|(_, r)| r).collect()
}

/// The GROUP BY columns, which must be a prefix of the primary key.
fn group_by_columns(t: &TableSchema, s: &Select) -> Result<Vec<ColumnDef>, ExecError> {
    let key: Vec<ColumnDef> = t
        .def
        .partition_key()
        .into_iter()
        .cloned()
        .chain(t.def.clustering().into_iter().map(|(c, _)| c.clone()))
        .collect();
    // Key columns restricted by `=` may be left out of the GROUP BY, as in Cassandra: they
    // are the same in every row, so they are grouped on all the same.
    let by_equality = |name: &str| {
        s.where_clause.iter().any(|r| match r {
            crate::language::ast::Relation::Column { column, op, .. } => {
                *op == ComparisonOp::Equal && column.0 == name
            }
            crate::language::ast::Relation::MultiColumn { columns, op, .. } => {
                *op == ComparisonOp::Equal && columns.iter().any(|c| c.0 == name)
            }
            _ => false,
        })
    };
    let out_of_order = || {
        ExecError::invalid(
            "Group by currently only support groups of columns following their declared order in the PRIMARY KEY",
        )
    };
    let mut out = Vec::new();
    let mut next = key.iter();
    for (i, g) in s.group_by.iter().enumerate() {
        let n = match g {
            Selectable::Column(n) => n,
            // Cassandra 5.0's `GROUP BY ..., floor(time, 1h)` (CASSANDRA-11871).
            Selectable::FunctionCall { name, args }
                if super::functions::native_name(&name.name.0) == "floor" =>
            {
                if i + 1 != s.group_by.len() {
                    return Err(ExecError::invalid(
                        "Functions are only supported on the last element of the GROUP BY clause",
                    ));
                }
                let Some(n) = floored_column(t, args.first()) else {
                    return Err(ExecError::invalid(format!(
                        "Group by is only supported on primary key columns, not {g}"
                    )));
                };
                if let Some(c) = t.def.column(&n.0)
                    && super::floor::types(&c.ty).is_none()
                {
                    return Err(ExecError::invalid(format!(
                        "Invalid call to function system.floor in the GROUP BY clause: {} is of type {}",
                        c.name,
                        khata_types::type_text::type_text(&c.ty)
                    )));
                }
                n
            }
            Selectable::FunctionCall { name, .. } => {
                return Err(ExecError::invalid(format!(
                    "Only monotonic functions are supported in the GROUP BY clause. Got: system.{}",
                    super::functions::native_name(&name.name.0)
                )));
            }
            _ => {
                return Err(ExecError::invalid(format!(
                    "Group by is only supported on primary key columns, not {g}"
                )));
            }
        };
        // `getAggregationSpecification`'s checks, in its order.
        match t.def.column(&n.0) {
            None => {
                return Err(ExecError::invalid(format!("Undefined column name {}", n.0)));
            }
            Some(c) if !key.iter().any(|k| k.name == c.name) => {
                return Err(ExecError::invalid(format!(
                    "Group by is currently only supported on the columns of the PRIMARY KEY, got {}",
                    c.name
                )));
            }
            Some(_) => {}
        }
        loop {
            let c = next.next().ok_or_else(out_of_order)?;
            out.push(c.clone());
            if c.name == n.0 {
                break;
            }
            if !by_equality(&c.name) {
                return Err(out_of_order());
            }
        }
    }
    if !out.is_empty() && out.len() < t.def.partition_key().len() {
        return Err(ExecError::invalid(
            "Group by is not supported on only a part of the partition key",
        ));
    }
    if s.distinct && out.len() > t.def.partition_key().len() {
        return Err(ExecError::invalid(
            "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
        ));
    }
    Ok(out)
}

/// The last element of a GROUP BY when it is `floor(column, duration[, start])`: the
/// duration and start, bound.
struct GroupFloor {
    duration: crate::value::Duration,
    start: Option<CqlValue>,
}

/// The column a GROUP BY's `floor` floors: a column, or `toTimestamp` of a `timestamp` or
/// `timeuuid` one (which floors to the same instants).
fn floored_column<'s>(
    t: &TableSchema,
    arg: Option<&'s Selectable>,
) -> Option<&'s crate::language::ast::Name> {
    match arg? {
        Selectable::Column(n) => Some(n),
        Selectable::FunctionCall { name, args }
            if super::functions::native_name(&name.name.0) == "totimestamp" =>
        {
            let [Selectable::Column(n)] = args.as_slice() else {
                return None;
            };
            t.def
                .column(&n.0)
                .is_some_and(|c| matches!(c.ty, CqlType::Timestamp | CqlType::Timeuuid))
                .then_some(n)
        }
        _ => None,
    }
}

/// Bind the `floor` of a GROUP BY's last element, if it is one.
fn group_floor(
    t: &TableSchema,
    s: &Select,
    run: &Run<'_>,
) -> Result<Option<GroupFloor>, ExecError> {
    let Some(Selectable::FunctionCall { name, args }) = s.group_by.last() else {
        return Ok(None);
    };
    if super::functions::native_name(&name.name.0) != "floor" {
        return Ok(None);
    }
    let column = floored_column(t, args.first()).and_then(|n| t.def.column(&n.0));
    let Some((_, start_ty)) = column.and_then(|c| super::floor::types(&c.ty)) else {
        return Ok(None);
    };
    if !(2..=3).contains(&args.len()) {
        return Err(ExecError::invalid(format!(
            "Invalid number of arguments in call to function system.floor: 2 required but {} provided",
            args.len()
        )));
    }
    let term = |a: &Selectable, ty: &CqlType| -> Result<Option<CqlValue>, ExecError> {
        let Selectable::Term(term) = a else {
            return Err(ExecError::invalid(format!(
                "Only constants and bind markers are supported as the arguments of floor in the GROUP BY clause, not {a}"
            )));
        };
        bind::term_value(run, term, "floor", ty).map_err(|e| ExecError::invalid(e.to_string()))
    };
    let Some(CqlValue::Duration(duration)) = term(&args[1], &CqlType::Duration)? else {
        return Err(ExecError::invalid(
            "Invalid null value for the duration of floor in the GROUP BY clause",
        ));
    };
    let start = match args.get(2) {
        Some(a) => term(a, &start_ty)?,
        None => None,
    };
    // The checks that do not depend on a row's value (a negative duration, one below the
    // type's precision), made once: on the starting point itself.
    let origin = start.clone().unwrap_or(match start_ty {
        CqlType::Date => CqlValue::Date(crate::value::EPOCH_DATE),
        CqlType::Time => CqlValue::Time(0),
        _ => CqlValue::Timestamp(0),
    });
    super::floor::floor(&origin, &duration, start.as_ref())?;
    Ok(Some(GroupFloor { duration, start }))
}

/// A row's group: its values of the GROUP BY columns (the last one floored by `floor`, which
/// refuses a value before its starting point).
fn group_key(
    group_by: &[ColumnDef],
    floor: Option<&GroupFloor>,
    pk: &[Bytes],
    ck: &[Bytes],
) -> Result<Bytes, ExecError> {
    let mut out = BytesMut::new();
    for (i, c) in group_by.iter().enumerate() {
        let v = match c.kind {
            ColumnKind::PartitionKey { position } => pk.get(position as usize),
            ColumnKind::Clustering { position, .. } => ck.get(position as usize),
            _ => None,
        };
        let mut v = v.map_or(&[][..], |b| &b[..]);
        let floored;
        if let Some(f) = floor.filter(|_| i + 1 == group_by.len())
            && !v.is_empty()
            && let Ok(value) = CqlValue::deserialize(&c.ty, v)
            && let Some(result) = super::floor::floor(&value, &f.duration, f.start.as_ref())?
        {
            floored = result.to_bytes(&result_type(&c.ty));
            v = &floored;
        }
        out.put_u32(v.len() as u32);
        out.put_slice(v);
    }
    Ok(out.freeze())
}

/// The type `floor` gives a value of `ty`.
fn result_type(ty: &CqlType) -> CqlType {
    super::floor::types(ty).map_or_else(|| ty.clone(), |(result, _)| result)
}

/// What a SELECT's selection and its DISTINCT, GROUP BY and PER PARTITION LIMIT must agree
/// on, checked as Cassandra checks them when it prepares the statement.
fn check_selection(
    t: &TableSchema,
    s: &Select,
    outs: &[(String, Output)],
    grouped: bool,
) -> Result<(), ExecError> {
    if s.distinct {
        if s.per_partition_limit.is_some() {
            return Err(ExecError::invalid(
                "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
            ));
        }
        check_distinct(t, s, outs)?;
    }
    let aggregate = outs.iter().any(|(_, o)| o.aggregates());
    if aggregate && !grouped && s.per_partition_limit.is_some() {
        return Err(ExecError::invalid(
            "PER PARTITION LIMIT is not allowed with aggregate queries.",
        ));
    }
    Ok(())
}

/// SELECT DISTINCT takes partition key and static columns only (Cassandra's
/// `validateDistinctSelection`): every column the selectors read (through
/// functions, casts, WRITETIME/TTL or aggregates too) is a partition key or static column, and
/// a query over a key range (no partition key restricted) reads every partition key column.
fn check_distinct(t: &TableSchema, s: &Select, outs: &[(String, Output)]) -> Result<(), ExecError> {
    let read = read_columns(t, outs);
    if let Some(c) = read
        .iter()
        .find(|c| !matches!(c.kind, ColumnKind::PartitionKey { .. } | ColumnKind::Static))
    {
        return Err(ExecError::invalid(format!(
            "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {})",
            c.name
        )));
    }
    let key_range = !s.where_clause.iter().any(|r| match r {
        Relation::Column { column, .. } | Relation::In { column, .. } => t
            .def
            .column(&column.0)
            .is_some_and(|c| matches!(c.kind, ColumnKind::PartitionKey { .. })),
        _ => false,
    });
    if key_range
        && let Some(missing) = t
            .def
            .partition_key()
            .into_iter()
            .find(|k| !read.iter().any(|c| c.name == k.name))
    {
        return Err(ExecError::invalid(format!(
            "SELECT DISTINCT queries must request all the partition key columns (missing {})",
            missing.name
        )));
    }
    Ok(())
}

/// Every column the selectors read (through functions, casts, WRITETIME/TTL or aggregates
/// too).
fn read_columns<'t>(t: &'t TableSchema, outs: &'t [(String, Output)]) -> Vec<&'t ColumnDef> {
    fn of<'t>(t: &'t TableSchema, o: &'t Output, read: &mut Vec<&'t ColumnDef>) {
        match o {
            Output::Column(c)
            | Output::Writetime(c)
            | Output::MaxWritetime(c)
            | Output::Metas(c, _)
            | Output::ElementMeta(c, ..)
            | Output::FieldMeta(c, ..)
            | Output::Ttl(c)
            | Output::Time(_, c)
            | Output::Element(c, ..)
            | Output::Cast(c, _) => read.push(c),
            Output::Computed(computed) => computed.columns(read),
            Output::OverRow(computed, inputs) => {
                computed.columns(read);
                inputs.iter().for_each(|a| of(t, a, read));
            }
            Output::Aggregate(_, arg) => arg.iter().for_each(|a| of(t, a, read)),
            Output::OverAggregates(_, inputs) => inputs
                .iter()
                .flat_map(|(_, o)| o)
                .for_each(|a| of(t, a, read)),
            Output::Token => read.extend(t.def.partition_key()),
        }
    }
    let mut read: Vec<&ColumnDef> = Vec::new();
    for (_, o) in outs {
        of(t, o, &mut read);
    }
    read
}

/// Whether the selection queries the static row: it reads a static column, or no column
/// outside the primary key (`*`, `count(*)`, key columns only). A partition with only static
/// content is a row only for such a selection, as in Cassandra, whose column filter fetches
/// and queries every column when the selection names no regular or static column, and leaves
/// the static row empty when it names regular columns and no static one (`SELECT r` of such a
/// partition is no row, `SELECT k, c` one).
fn queries_static_row(t: &TableSchema, outs: &[(String, Output)]) -> bool {
    let read = read_columns(t, outs);
    read.iter().any(|c| c.kind == ColumnKind::Static)
        || read.iter().all(|c| {
            matches!(
                c.kind,
                ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
            )
        })
}

/// Whether the selection reads static and partition key columns only, a static one among them.
fn selects_only_static_columns(t: &TableSchema, outs: &[(String, Output)]) -> bool {
    let read = read_columns(t, outs);
    read.iter().any(|c| c.kind == ColumnKind::Static)
        && read
            .iter()
            .all(|c| matches!(c.kind, ColumnKind::Static | ColumnKind::PartitionKey { .. }))
}

/// One element of a non-frozen or frozen map or set.
fn element_value(c: &ColumnDef, row: &Row, key: Option<&Bytes>, now: u32) -> Option<Bytes> {
    let key = key?;
    if c.ty.is_multi_cell() {
        let cell = row
            .cells
            .get(&khata_types::row::CellKey::element(c.id, key.clone()))?;
        cell.live_value(now)?;
        return match &c.ty {
            CqlType::Set { .. } => Some(key.clone()),
            _ => cell.live_value(now).cloned(),
        };
    }
    super::selector::element(&c.ty, &cell_value(c, row, now)?, key)
}

/// `toTimestamp`, `toDate` and `toUnixTimestamp` of a stored value.
fn time_fn(f: TimeFn, ty: &CqlType, value: &Bytes) -> Option<Bytes> {
    let millis = match ty {
        CqlType::Timeuuid => super::functions::uuid_millis(&uuid::Uuid::from_slice(value).ok()?)?,
        CqlType::Timestamp => i64::from_be_bytes(<[u8; 8]>::try_from(&value[..]).ok()?),
        CqlType::Date => {
            super::functions::date_millis(u32::from_be_bytes(<[u8; 4]>::try_from(&value[..]).ok()?))
        }
        _ => return None,
    };
    Some(match f {
        TimeFn::Timestamp | TimeFn::UnixTimestamp => Bytes::copy_from_slice(&millis.to_be_bytes()),
        TimeFn::Date => Bytes::copy_from_slice(&super::functions::days(millis).to_be_bytes()),
    })
}
