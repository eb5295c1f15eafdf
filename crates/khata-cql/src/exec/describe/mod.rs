//! `DESCRIBE`, answered by the server as Cassandra 4.1's `DescribeStatement` answers it, so that
//! cqlsh 6 works: it sends every `DESCRIBE` to a server whose `release_version` is 4 or more
//! and only formats the rows it gets back.
//!
//! Result shapes (every column a `text` of table `system.describe`):
//!
//! - listings (`DESCRIBE KEYSPACES`, `TABLES`, `TYPES`, `FUNCTIONS`, `AGGREGATES`):
//!   `keyspace_name, type, name`, one row per element;
//! - elements (`DESCRIBE [FULL] SCHEMA`, `[ONLY] KEYSPACE`, `TABLE`, `INDEX`, `TYPE`, a bare
//!   name): the same columns and `create_statement`, the CQL that recreates the element
//!   ([`create`]);
//! - `DESCRIBE CLUSTER`: [`cluster`].
//!
//! Names in `keyspace_name` and `name` are quoted when CQL needs it. Keyspaces, tables and
//! listed elements are sorted by name ignoring case (`SchemaElement.NAME_COMPARATOR`); a
//! keyspace's types come dependencies first; a keyspace is followed by its types, then its
//! tables, each table by its indexes. A listing covers the session's keyspace, or every
//! keyspace (system ones included) when none is in use; `SCHEMA` leaves the system keyspaces
//! out unless `FULL`.
//!
//! `DESCRIBE name` resolves `name` as Cassandra does (a keyspace, else a table, index or
//! materialized view of the session's keyspace) and then, as a khata addition, a user type of
//! that keyspace, which Cassandra reports as not found. Errors carry Cassandra's messages
//! (`'ks' not found in keyspaces`, `Table 't' not found in keyspace 'ks'`, ...).
//!
//! What it does not do: page (the whole result comes in one page, whatever the page size;
//! results are a few rows per table), or describe functions, aggregates, materialized views
//! and virtual keyspaces, which khata does not have (listings of them are empty).

mod cluster;
mod create;
mod java_order;

use std::cmp::Ordering;
use std::collections::BTreeSet;

use bytes::Bytes;
use khata_coordinator::catalog::{KeyspaceSchema, Schema, TableSchema, UserType, system_tables};
use khata_types::schema::CqlType;

use super::error::ExecError;
use super::{Executor, Run};
use crate::frame::{ColumnSpec, ColumnType, ResultBody, Rows, RowsMetadata};
use crate::language::ast::{Describe, DescribeTarget, Name, QualifiedName};

/// The kind of a schema element, as the `type` column names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Keyspace,
    Type,
    Table,
    Index,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Keyspace => "keyspace",
            Kind::Type => "type",
            Kind::Table => "table",
            Kind::Index => "index",
        }
    }
}

/// One row of a `DESCRIBE` result.
#[derive(Debug, PartialEq, Eq)]
struct Element {
    keyspace: String,
    kind: Kind,
    name: String,
    /// The CQL that recreates the element (not sent by listings).
    create: String,
}

/// Run a `DESCRIBE` statement against the current schema.
pub(super) fn run(
    exec: &Executor,
    describe: &Describe,
    run: &Run<'_>,
) -> Result<ResultBody, ExecError> {
    let schema = exec.coordinator().schema();
    let current = run.keyspace.as_deref();
    let internals = describe.with_internals;
    let elements = match &describe.target {
        DescribeTarget::Cluster => return cluster::describe(exec, &schema, run),
        DescribeTarget::Keyspaces => {
            let names = sorted_keyspaces(&schema)
                .map(|ks| named(&ks.def.name, Kind::Keyspace, &ks.def.name))
                .collect();
            return listing(names);
        }
        DescribeTarget::Tables => {
            return listing(listed(&schema, current, |ks| {
                sorted_by_name(ks.tables.values().map(|t| t.as_ref()), |t| &t.def.name)
                    .into_iter()
                    .map(|t| named(&t.def.keyspace, Kind::Table, &t.def.name))
                    .collect()
            })?);
        }
        DescribeTarget::Types => {
            return listing(listed(&schema, current, |ks| {
                sorted_by_name(ks.types.values(), |t| &t.name)
                    .into_iter()
                    .map(|t| named(&t.keyspace, Kind::Type, &t.name))
                    .collect()
            })?);
        }
        DescribeTarget::Functions | DescribeTarget::Aggregates => {
            // khata has no user functions or aggregates; the keyspace in use must exist.
            return listing(listed(&schema, current, |_| Vec::new())?);
        }
        DescribeTarget::Schema { full } => sorted_keyspaces(&schema)
            .filter(|ks| *full || !is_system_keyspace(&ks.def.name))
            .flat_map(|ks| keyspace_elements(ks, false, internals))
            .collect(),
        DescribeTarget::Keyspace { only, name } => {
            let keyspace = element_keyspace(name.as_ref(), current)?;
            keyspace_elements(find_keyspace(&schema, &keyspace)?, *only, internals)
        }
        DescribeTarget::Table(name) => {
            let ks = find_keyspace(&schema, &element_keyspace(name.keyspace.as_ref(), current)?)?;
            table_elements(find_table(ks, &name.name.0)?, internals)
        }
        DescribeTarget::Index(name) => {
            let ks = find_keyspace(&schema, &element_keyspace(name.keyspace.as_ref(), current)?)?;
            index_elements(ks, &name.name.0)?
        }
        DescribeTarget::MaterializedView(name) => {
            let ks = find_keyspace(&schema, &element_keyspace(name.keyspace.as_ref(), current)?)?;
            return Err(ExecError::invalid(format!(
                "Materialized view '{}' not found in '{}'",
                name.name.0, ks.def.name
            )));
        }
        DescribeTarget::Type(name) => {
            let ks = find_keyspace(&schema, &element_keyspace(name.keyspace.as_ref(), current)?)?;
            let t = ks.types.get(&name.name.0).ok_or_else(|| {
                ExecError::invalid(format!(
                    "User defined type '{}' not found in '{}'",
                    name.name.0, ks.def.name
                ))
            })?;
            vec![type_element(t)]
        }
        DescribeTarget::Function(name) | DescribeTarget::Aggregate(name) => {
            let ks = find_keyspace(&schema, &element_keyspace(name.keyspace.as_ref(), current)?)?;
            let what = if matches!(describe.target, DescribeTarget::Function(_)) {
                "function"
            } else {
                "aggregate"
            };
            return Err(ExecError::invalid(format!(
                "User defined {what} '{}' not found in '{}'",
                name.name.0, ks.def.name
            )));
        }
        DescribeTarget::Generic(name) => generic(&schema, name, current, internals)?,
    };
    element_rows(elements)
}

/// `DESCRIBE name`: a keyspace, else (in the named or current keyspace, or in a keyspace
/// called `name` when there is neither) a table, an index, and, beyond Cassandra, a type.
fn generic(
    schema: &Schema,
    name: &QualifiedName,
    current: Option<&str>,
    internals: bool,
) -> Result<Vec<Element>, ExecError> {
    let object = &name.name.0;
    let keyspace = match &name.keyspace {
        Some(k) => k.0.clone(),
        None => {
            if let Some(ks) = schema.keyspace(object) {
                return Ok(keyspace_elements(ks, false, internals));
            }
            current.unwrap_or(object).to_string()
        }
    };
    let ks = find_keyspace(schema, &keyspace)?;
    if let Some(t) = ks.tables.get(object) {
        return Ok(table_elements(t, internals));
    }
    if ks
        .tables
        .values()
        .any(|t| t.indexes.iter().any(|i| i.name == *object))
    {
        return index_elements(ks, object);
    }
    if let Some(t) = ks.types.get(object) {
        return Ok(vec![type_element(t)]);
    }
    Err(ExecError::invalid(format!(
        "'{object}' not found in keyspace '{keyspace}'"
    )))
}

/// Cassandra's `KeyspaceNotDefinedException` (an `Invalid` error).
pub(super) fn keyspace_not_found(keyspace: &str) -> ExecError {
    ExecError::invalid(format!("'{keyspace}' not found in keyspaces"))
}

fn find_keyspace<'s>(schema: &'s Schema, keyspace: &str) -> Result<&'s KeyspaceSchema, ExecError> {
    schema
        .keyspace(keyspace)
        .ok_or_else(|| keyspace_not_found(keyspace))
}

fn find_table<'s>(ks: &'s KeyspaceSchema, table: &str) -> Result<&'s TableSchema, ExecError> {
    ks.tables.get(table).map(|t| t.as_ref()).ok_or_else(|| {
        ExecError::invalid(format!(
            "Table '{table}' not found in keyspace '{}'",
            ks.def.name
        ))
    })
}

/// The keyspace of a single element: the one named, else the session's.
fn element_keyspace(named: Option<&Name>, current: Option<&str>) -> Result<String, ExecError> {
    named
        .map(|n| n.0.clone())
        .or_else(|| current.map(str::to_string))
        .ok_or_else(|| ExecError::invalid("No keyspace specified and no current keyspace"))
}

/// Keyspaces Cassandra counts as system ones (`SchemaConstants.isSystemKeyspace`), virtual
/// ones included.
pub(super) fn is_system_keyspace(name: &str) -> bool {
    system_tables::is_system_keyspace(name)
}

/// A keyspace whose tables are virtual, described as Cassandra describes them (a warning
/// that they cannot be recreated, the structure in a comment).
fn is_virtual_keyspace(name: &str) -> bool {
    matches!(name, "system_views" | "system_virtual_schema")
}

/// `String.compareToIgnoreCase`, for the ASCII names CQL allows unquoted and close enough for
/// the others.
fn compare_ignore_case(a: &str, b: &str) -> Ordering {
    let fold = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<_>>();
    fold(a).cmp(&fold(b))
}

/// Items sorted by name ignoring case; the sort is stable, so names that differ only in case
/// keep the catalog's (byte) order.
fn sorted_by_name<'a, T: ?Sized>(
    items: impl Iterator<Item = &'a T>,
    name: impl Fn(&T) -> &str,
) -> Vec<&'a T> {
    let mut items: Vec<&T> = items.collect();
    items.sort_by(|a, b| compare_ignore_case(name(a), name(b)));
    items
}

/// Every keyspace, stored and virtual, by name.
fn sorted_keyspaces(schema: &Schema) -> impl Iterator<Item = &KeyspaceSchema> {
    sorted_by_name(
        schema
            .keyspaces
            .values()
            .chain(schema.virtual_keyspaces.values()),
        |k| &k.def.name,
    )
    .into_iter()
}

/// A listing's elements: of the session's keyspace (which must exist), or of every keyspace.
fn listed(
    schema: &Schema,
    current: Option<&str>,
    elements: impl Fn(&KeyspaceSchema) -> Vec<Element>,
) -> Result<Vec<Element>, ExecError> {
    match current {
        Some(keyspace) => Ok(elements(find_keyspace(schema, keyspace)?)),
        None => Ok(sorted_keyspaces(schema).flat_map(elements).collect()),
    }
}

/// An element of a listing, which sends no CREATE statement.
fn named(keyspace: &str, kind: Kind, name: &str) -> Element {
    Element {
        keyspace: keyspace.to_string(),
        kind,
        name: name.to_string(),
        create: String::new(),
    }
}

fn keyspace_element(ks: &KeyspaceSchema) -> Element {
    Element {
        keyspace: ks.def.name.clone(),
        kind: Kind::Keyspace,
        name: ks.def.name.clone(),
        create: if is_virtual_keyspace(&ks.def.name) {
            create::virtual_keyspace(&ks.def)
        } else {
            create::keyspace(&ks.def)
        },
    }
}

fn type_element(t: &UserType) -> Element {
    Element {
        keyspace: t.keyspace.clone(),
        kind: Kind::Type,
        name: t.name.clone(),
        create: create::user_type(t),
    }
}

fn table_element(t: &TableSchema, internals: bool) -> Element {
    Element {
        keyspace: t.def.keyspace.clone(),
        kind: Kind::Table,
        name: t.def.name.clone(),
        create: if is_virtual_keyspace(&t.def.keyspace) {
            create::virtual_table(t)
        } else {
            create::table(t, internals)
        },
    }
}

/// A table and its indexes.
fn table_elements(t: &TableSchema, internals: bool) -> Vec<Element> {
    let mut out = vec![table_element(t, internals)];
    out.extend(
        sorted_by_name(t.indexes.iter(), |i| &i.name)
            .into_iter()
            .map(|i| Element {
                keyspace: t.def.keyspace.clone(),
                kind: Kind::Index,
                name: i.name.clone(),
                create: create::index(&t.def, i),
            }),
    );
    out
}

/// `DESCRIBE INDEX`: the index, found through the table that has it.
fn index_elements(ks: &KeyspaceSchema, index: &str) -> Result<Vec<Element>, ExecError> {
    for t in ks.tables.values() {
        if let Some(i) = t.indexes.iter().find(|i| i.name == index) {
            return Ok(vec![Element {
                keyspace: t.def.keyspace.clone(),
                kind: Kind::Index,
                name: i.name.clone(),
                create: create::index(&t.def, i),
            }]);
        }
    }
    Err(ExecError::invalid(format!(
        "Table for existing index '{index}' not found in '{}'",
        ks.def.name
    )))
}

/// A keyspace and, unless `only`, its types (dependencies first), then its tables with their
/// indexes.
fn keyspace_elements(ks: &KeyspaceSchema, only: bool, internals: bool) -> Vec<Element> {
    let mut out = vec![keyspace_element(ks)];
    if only {
        return out;
    }
    out.extend(types_by_dependency(ks).into_iter().map(type_element));
    for t in sorted_by_name(ks.tables.values().map(|t| t.as_ref()), |t| &t.def.name) {
        out.extend(table_elements(t, internals));
    }
    out
}

/// The keyspace's types with every type after the types its fields use (`Types.sortedStream`:
/// a depth-first walk of the types in the order of their names as Java `ByteBuffer`s, whose
/// bytes compare signed).
fn types_by_dependency(ks: &KeyspaceSchema) -> Vec<&UserType> {
    fn visit<'a>(
        ty: &CqlType,
        ks: &'a KeyspaceSchema,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<&'a UserType>,
    ) {
        match ty {
            CqlType::List { element, .. } | CqlType::Set { element, .. } => {
                visit(element, ks, seen, out)
            }
            CqlType::Vector { element, .. } => visit(element, ks, seen, out),
            CqlType::Map { key, value, .. } => {
                visit(key, ks, seen, out);
                visit(value, ks, seen, out);
            }
            CqlType::Tuple(elements) => {
                for e in elements {
                    visit(e, ks, seen, out);
                }
            }
            CqlType::Udt { name, fields, .. } => {
                for (_, f) in fields {
                    visit(f, ks, seen, out);
                }
                if let Some(t) = ks.types.get(name)
                    && seen.insert(name.clone())
                {
                    out.push(t);
                }
            }
            _ => {}
        }
    }
    let mut types: Vec<&UserType> = ks.types.values().collect();
    let signed = |name: &str| name.bytes().map(|b| b as i8).collect::<Vec<_>>();
    types.sort_by_cached_key(|t| signed(&t.name));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in types {
        visit(&t.as_type(false), ks, &mut seen, &mut out);
    }
    out
}

/// A column of the `system.describe` result table.
pub(super) fn describe_column(name: &str, column_type: ColumnType) -> ColumnSpec {
    ColumnSpec {
        keyspace: "system".to_string(),
        table: "describe".to_string(),
        name: name.to_string(),
        column_type,
    }
}

fn text(s: &str) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(s.as_bytes()))
}

pub(super) fn rows_result(
    columns: Vec<ColumnSpec>,
    rows: &[Vec<Option<Bytes>>],
) -> Result<ResultBody, ExecError> {
    let rows = Rows::from_cells(RowsMetadata::new(columns), rows)
        .map_err(|e| ExecError::invalid(format!("result could not be encoded: {e}")))?;
    Ok(ResultBody::Rows(rows))
}

fn name_columns() -> Vec<ColumnSpec> {
    ["keyspace_name", "type", "name"]
        .into_iter()
        .map(|n| describe_column(n, ColumnType::Varchar))
        .collect()
}

fn name_cells(e: &Element) -> Vec<Option<Bytes>> {
    vec![
        text(&create::maybe_quote(&e.keyspace)),
        text(e.kind.as_str()),
        text(&create::maybe_quote(&e.name)),
    ]
}

/// Rows of `keyspace_name, type, name`.
fn listing(elements: Vec<Element>) -> Result<ResultBody, ExecError> {
    let rows: Vec<_> = elements.iter().map(name_cells).collect();
    rows_result(name_columns(), &rows)
}

/// Rows of `keyspace_name, type, name, create_statement`.
fn element_rows(elements: Vec<Element>) -> Result<ResultBody, ExecError> {
    let mut columns = name_columns();
    columns.push(describe_column("create_statement", ColumnType::Varchar));
    let rows: Vec<_> = elements
        .iter()
        .map(|e| {
            let mut cells = name_cells(e);
            cells.push(text(&e.create));
            cells
        })
        .collect();
    rows_result(columns, &rows)
}

#[cfg(test)]
mod tests;
