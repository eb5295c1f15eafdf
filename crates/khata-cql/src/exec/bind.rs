//! Terms to values: bind markers (validated against their column's type) and literals, and
//! the metadata of a prepared statement's markers.

use bytes::Bytes;
use khata_coordinator::catalog::{Schema, TableSchema};
use khata_types::schema::{ColumnDef, CqlType, TableDef};

use super::error::ExecError;
use super::types::column_type;
use super::{Run, select};
use crate::frame::{ColumnSpec, ColumnType, Value};
use crate::language::ast::{
    ComparisonOp, ConditionPredicate, ElementSelector, IfClause, InValues, IntValue, Literal,
    ParsedStatement, Relation, Statement, Term,
};
use crate::value::{CqlValue, LiteralError, from_term_with, valid_as_is};

/// A term's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Value(Bytes),
    Null,
    /// An unset bind value: leave the column alone.
    Unset,
}

/// The value of `term` for a column of type `ty` named `column`.
pub(crate) fn value(
    run: &Run<'_>,
    term: &Term,
    ty: &CqlType,
    column: &str,
) -> Result<Bound, ExecError> {
    match term {
        Term::Marker(m) => match run.values.get(m.index) {
            Some(Value::Set(bytes)) => {
                // Cassandra's vectors have no empty value (`VectorType.rejectNullOrEmptyValue`).
                if bytes.is_empty() && matches!(ty, CqlType::Vector { .. }) {
                    return Err(ExecError::invalid("Invalid empty vector value"));
                }
                // Most values (blobs, text, fixed-width numbers) need no decoding to be checked.
                if !valid_as_is(ty, bytes) {
                    match CqlValue::deserialize(ty, bytes) {
                        // The type's own message, bare, as Cassandra's `Marker.bindAndGet`
                        // passes its MarshalException on.
                        Err(e) => return Err(ExecError::invalid(e.to_string())),
                        // Sets and maps arrive in the client's order (a Python set's, say):
                        // store them sorted and without repeats, as Cassandra does.
                        Ok(v) if has_set_or_map(ty) => {
                            return Ok(Bound::Value(Bytes::from(v.to_bytes(ty))));
                        }
                        Ok(_) => {}
                    }
                }
                // A copy, not a slice: a slice would keep the connection's whole read buffer
                // (64 KiB) alive for as long as the value sits in a memtable.
                Ok(Bound::Value(Bytes::copy_from_slice(bytes)))
            }
            Some(Value::Null) => Ok(Bound::Null),
            Some(Value::NotSet) => Ok(Bound::Unset),
            None => Err(ExecError::invalid("missing bind value")),
        },
        Term::Literal(Literal::Null) => Ok(Bound::Null),
        other => literal(run, other, ty, column),
    }
}

/// Whether a value of `ty` can hold a set or map, whose serialization must be normalized.
fn has_set_or_map(ty: &CqlType) -> bool {
    match ty {
        CqlType::Set { .. } | CqlType::Map { .. } => true,
        CqlType::List { element, .. } | CqlType::Vector { element, .. } => has_set_or_map(element),
        CqlType::Tuple(items) => items.iter().any(has_set_or_map),
        CqlType::Udt { fields, .. } => fields.iter().any(|(_, t)| has_set_or_map(t)),
        _ => false,
    }
}

/// A value that must be present (keys, limits).
pub(crate) fn required(
    run: &Run<'_>,
    term: &Term,
    ty: &CqlType,
    column: &str,
) -> Result<Bytes, ExecError> {
    match value(run, term, ty, column)? {
        Bound::Value(b) => Ok(b),
        Bound::Null => Err(ExecError::invalid(format!(
            "Invalid null value for column {column}"
        ))),
        Bound::Unset => Err(ExecError::invalid(format!(
            "Invalid unset value for column {column}"
        ))),
    }
}

/// An integer parameter (LIMIT, TTL, TIMESTAMP): a bound one is a bigint when `bigint` (USING
/// TIMESTAMP), else an int.
pub(crate) fn int_value(
    run: &Run<'_>,
    v: &IntValue,
    what: &str,
    bigint: bool,
) -> Result<Option<i64>, ExecError> {
    match v {
        IntValue::Literal(i) => Ok(Some(*i)),
        // Of its type's exact width, as Cassandra validates a marker's value against its type.
        IntValue::Marker(m) => match run.values.get(m.index) {
            Some(Value::Set(b)) => match (bigint, b.len()) {
                (false, 4) => Ok(Some(i64::from(i32::from_be_bytes([
                    b[0], b[1], b[2], b[3],
                ])))),
                (true, 8) => Ok(Some(i64::from_be_bytes([
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                ]))),
                (false, n) => Err(ExecError::invalid(format!(
                    "Expected 4 or 0 byte int ({n})"
                ))),
                (true, n) => Err(ExecError::invalid(format!(
                    "Expected 8 or 0 byte long ({n})"
                ))),
            },
            Some(Value::Null) => Err(ExecError::invalid(format!("Invalid null value of {what}"))),
            _ => Ok(None),
        },
    }
}

/// A literal (possibly with markers inside, as in `[?, ?]`) as the serialized value of `ty`.
fn literal(run: &Run<'_>, term: &Term, ty: &CqlType, column: &str) -> Result<Bound, ExecError> {
    match term_value(run, term, column, ty) {
        Ok(Some(v)) => Ok(Bound::Value(Bytes::from(v.to_bytes(ty)))),
        Ok(None) => Ok(Bound::Null),
        Err(LiteralError::OperationFailed(message)) => {
            Err(super::selector::operation_failed(message))
        }
        Err(LiteralError::FromJsonFailed(message)) => {
            Err(ExecError::Body(crate::frame::ErrorBody::new(
                crate::frame::ErrorKind::FunctionFailure {
                    keyspace: "system".into(),
                    function: "fromjson".into(),
                    arg_types: vec!["text".into()],
                },
                message,
            )))
        }
        Err(e) => Err(ExecError::invalid(e.to_string())),
    }
}

/// The value of any term for a receiver named `receiver` of type `ty` (`None`: null): literals,
/// bind markers inside them, function calls and arithmetic.
pub(crate) fn term_value(
    run: &Run<'_>,
    term: &Term,
    receiver: &str,
    ty: &CqlType,
) -> Result<Option<CqlValue>, LiteralError> {
    // `(a + b)`: parentheses around one term, unless the receiver is a tuple or a user type
    // (a tuple literal of one field).
    if let Term::Tuple(items) = term
        && items.len() == 1
        && !matches!(ty, CqlType::Tuple(_) | CqlType::Udt { .. })
    {
        return term_value(run, &items[0], receiver, ty);
    }
    let now_millis = run.now_micros / 1000;
    let mut evaluate = |t: &Term,
                        receiver: &str,
                        ty: &CqlType|
     -> Result<Option<CqlValue>, LiteralError> {
        match t {
            Term::Marker(m) => match run.values.get(m.index) {
                Some(Value::Set(bytes)) => {
                    CqlValue::deserialize(ty, bytes).map(Some).map_err(|e| {
                        LiteralError::InvalidLiteral(format!("Invalid value for {receiver}: {e}"))
                    })
                }
                Some(Value::Null) => Ok(None),
                _ => Err(LiteralError::Unset(receiver.to_string())),
            },
            Term::Arithmetic { .. } | Term::Negation(_) => super::arith::evaluate_term(run, t, ty),
            other => super::functions::evaluate(run, other, receiver, ty),
        }
    };
    from_term_with(term, receiver, ty, now_millis, &mut evaluate)
}

/// What PREPARE learns of a statement's markers: each one's spec as it is found, and the first
/// refusal met on the way (an operation whose overload does not resolve:
/// `Ambiguous '+' operation ...`).
struct Specs {
    slots: Vec<Option<ColumnSpec>>,
    refusal: Option<String>,
}

impl Specs {
    fn new(markers: usize) -> Self {
        Specs {
            slots: vec![None; markers],
            refusal: None,
        }
    }

    fn get_mut(&mut self, index: usize) -> Option<&mut Option<ColumnSpec>> {
        self.slots.get_mut(index)
    }

    fn refuse(&mut self, message: String) {
        self.refusal.get_or_insert(message);
    }
}

/// `Undefined column name x`, as Cassandra refuses a statement naming a column its table lacks
/// when it is prepared.
fn defined(def: &TableDef, name: &crate::language::ast::Name) -> Result<(), ExecError> {
    match def.column(&name.0) {
        Some(_) => Ok(()),
        None => Err(ExecError::invalid(format!(
            "Undefined column name {}",
            name.0
        ))),
    }
}

/// The columns a WHERE clause names, each defined.
fn relations_defined(def: &TableDef, relations: &[Relation]) -> Result<(), ExecError> {
    for r in relations {
        match r {
            Relation::Column { column, .. }
            | Relation::In { column, .. }
            | Relation::Between { column, .. }
            | Relation::IsNotNull { column }
            | Relation::MapElement { column, .. } => defined(def, column)?,
            Relation::Token { columns, .. }
            | Relation::MultiColumn { columns, .. }
            | Relation::MultiColumnIn { columns, .. } => {
                for c in columns {
                    defined(def, c)?;
                }
            }
        }
    }
    Ok(())
}

fn conditions_defined(def: &TableDef, clause: &Option<IfClause>) -> Result<(), ExecError> {
    if let Some(IfClause::Conditions(conditions)) = clause {
        for c in conditions {
            defined(def, &c.column)?;
        }
    }
    Ok(())
}

fn mark_insert(
    specs: &mut Specs,
    t: &TableSchema,
    i: &crate::language::ast::Insert,
) -> Result<(), ExecError> {
    if let crate::language::ast::InsertValues::Columns { columns, .. } = &i.values {
        for c in columns {
            defined(&t.def, c)?;
        }
    }
    match &i.values {
        crate::language::ast::InsertValues::Columns { columns, values } => {
            for (c, v) in columns.iter().zip(values) {
                if let Some(col) = t.def.column(&c.0) {
                    mark(specs, &t.def, &col.name, &col.ty, v);
                }
            }
        }
        crate::language::ast::InsertValues::Json { value, .. } => {
            mark(specs, &t.def, "[json]", &CqlType::Text, value);
        }
    }
    mark_int(specs, &t.def, &i.using.ttl, "[ttl]", ColumnType::Int);
    mark_int(
        specs,
        &t.def,
        &i.using.timestamp,
        "[timestamp]",
        ColumnType::Bigint,
    );
    Ok(())
}

fn mark_update(
    specs: &mut Specs,
    t: &TableSchema,
    u: &crate::language::ast::Update,
) -> Result<(), ExecError> {
    for a in &u.assignments {
        defined(&t.def, &a.column)?;
    }
    relations_defined(&t.def, &u.where_clause)?;
    conditions_defined(&t.def, &u.if_clause)?;
    mark_int(specs, &t.def, &u.using.ttl, "[ttl]", ColumnType::Int);
    mark_int(
        specs,
        &t.def,
        &u.using.timestamp,
        "[timestamp]",
        ColumnType::Bigint,
    );
    for a in &u.assignments {
        if let Some(col) = t.def.column(&a.column.0) {
            use crate::language::ast::AssignmentOp;
            match &a.op {
                // `m = m - ?` binds the set of keys to remove (Cassandra's
                // Maps.DiscarderByKey receiver).
                AssignmentOp::Subtract(v) if col.ty.is_multi_cell() => {
                    let ty = match &col.ty {
                        CqlType::Map { key, .. } => CqlType::Set {
                            element: key.clone(),
                            frozen: false,
                        },
                        other => other.clone(),
                    };
                    mark(specs, &t.def, &col.name, &ty, v)
                }
                AssignmentOp::Set(v)
                | AssignmentOp::Add(v)
                | AssignmentOp::Subtract(v)
                | AssignmentOp::Prepend(v) => mark(specs, &t.def, &col.name, &col.ty, v),
                AssignmentOp::SetElement { key, value } => {
                    if let Some((key_name, key_ty, value_ty)) = element_types(col) {
                        mark(specs, &t.def, &key_name, &key_ty, key);
                        let name = format!("value({})", col.name);
                        mark(specs, &t.def, &name, &value_ty, value);
                    }
                }
                AssignmentOp::SetField { field, value } => {
                    if let Some(ty) = field_type(col, &field.0) {
                        let name = format!("{}.{}", col.name, field.0);
                        mark(specs, &t.def, &name, &ty, value);
                    }
                }
            }
        }
    }
    mark_relations(specs, &t.def, &u.where_clause);
    if let Some(clause) = &u.if_clause {
        mark_conditions(specs, &t.def, clause);
    }
    Ok(())
}

fn mark_delete(
    specs: &mut Specs,
    t: &TableSchema,
    d: &crate::language::ast::Delete,
) -> Result<(), ExecError> {
    for target in &d.targets {
        defined(&t.def, &target.column)?;
    }
    relations_defined(&t.def, &d.where_clause)?;
    conditions_defined(&t.def, &d.if_clause)?;
    mark_int(
        specs,
        &t.def,
        &d.timestamp,
        "[timestamp]",
        ColumnType::Bigint,
    );
    for target in &d.targets {
        if let (Some(col), Some(ElementSelector::Element(key))) =
            (t.def.column(&target.column.0), &target.selector)
            && let Some((key_name, key_ty, _)) = element_types(col)
        {
            mark(specs, &t.def, &key_name, &key_ty, key);
        }
    }
    mark_relations(specs, &t.def, &d.where_clause);
    if let Some(clause) = &d.if_clause {
        mark_conditions(specs, &t.def, clause);
    }
    Ok(())
}

/// What PREPARE tells the client about a statement.
#[derive(Debug)]
pub(crate) struct Described {
    pub bind_specs: Vec<ColumnSpec>,
    pub pk_indexes: Vec<u16>,
    pub result: Option<Vec<ColumnSpec>>,
}

fn spec(def: &TableDef, name: &str, column_type: ColumnType) -> ColumnSpec {
    ColumnSpec {
        keyspace: def.keyspace.clone(),
        table: def.name.clone(),
        name: name.to_string(),
        column_type,
    }
}

fn find_table<'s>(
    schema: &'s Schema,
    keyspace: Option<&str>,
    name: &crate::language::ast::QualifiedName,
) -> Result<&'s std::sync::Arc<TableSchema>, ExecError> {
    let ks = name
        .keyspace
        .as_ref()
        .map(|k| k.0.as_str())
        .or(keyspace)
        .ok_or_else(|| {
            ExecError::invalid(
                "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename",
            )
        })?;
    if schema.keyspace(ks).is_none() {
        return Err(ExecError::invalid(format!("keyspace {ks} does not exist")));
    }
    schema
        .table(ks, &name.name.0)
        .ok_or_else(|| ExecError::invalid(format!("table {} does not exist", name.name.0)))
}

/// Record the column a term's markers bind.
fn mark(specs: &mut Specs, def: &TableDef, column: &str, ty: &CqlType, term: &Term) {
    match term {
        Term::Marker(m) => {
            if let Some(slot) = specs.get_mut(m.index) {
                // A named marker (`:name`) is reported by its name, as Cassandra does.
                let name = m.name.as_ref().map_or(column, |n| n.0.as_str());
                *slot = Some(spec(def, name, column_type(ty)));
            }
        }
        Term::List(items) | Term::Set(items) => {
            let element = match ty {
                CqlType::List { element, .. }
                | CqlType::Set { element, .. }
                | CqlType::Vector { element, .. } => element.as_ref(),
                // `{}` or `{k1, k2}` for a map: the keys (`m = m - {?}`).
                CqlType::Map { key, .. } => key.as_ref(),
                _ => ty,
            };
            for t in items {
                mark(specs, def, column, element, t);
            }
        }
        Term::Map(entries) => {
            if let CqlType::Map { key, value, .. } = ty {
                for (k, v) in entries {
                    mark(specs, def, &format!("key({column})"), key, k);
                    mark(specs, def, &format!("value({column})"), value, v);
                }
            }
        }
        // `(a)`: a parenthesized term.
        Term::Tuple(items)
            if items.len() == 1 && !matches!(ty, CqlType::Tuple(_) | CqlType::Udt { .. }) =>
        {
            mark(specs, def, column, ty, &items[0]);
        }
        Term::Tuple(items) => {
            let types: Vec<&CqlType> = match ty {
                CqlType::Tuple(types) => types.iter().collect(),
                // A tuple literal for a user type: its fields in order.
                CqlType::Udt { fields, .. } => fields.iter().map(|(_, t)| t).collect(),
                _ => Vec::new(),
            };
            for (i, (t, item_ty)) in items.iter().zip(types).enumerate() {
                mark(specs, def, &format!("{column}[{i}]"), item_ty, t);
            }
        }
        Term::UserType(fields) => {
            if let CqlType::Udt { fields: types, .. } = ty {
                for (name, t) in fields {
                    if let Some((_, field_ty)) = types.iter().find(|(n, _)| *n == name.0) {
                        mark(specs, def, &format!("{column}.{}", name.0), field_ty, t);
                    }
                }
            }
        }
        Term::Arithmetic { .. } | Term::Negation(_) => {
            match super::arith::operand_types(term, ty) {
                Ok(operands) => {
                    for (operand, name, operand_ty) in operands {
                        mark(specs, def, &name, &operand_ty, operand);
                    }
                }
                // PREPARE answers with the refusal (`Ambiguous '+' operation ...`).
                Err(refusal) => specs.refuse(refusal),
            }
        }
        Term::TypeHint {
            ty: hint,
            term: inner,
        } => {
            let name = format!("({hint}){inner}");
            mark(specs, def, &name, ty, inner);
        }
        // `fromJson(?)` binds the JSON text; `minTimeuuid(?)`/`maxTimeuuid(?)` a timestamp; a
        // blob conversion its parameter (markers inside it too): named `arg0(system.fromjson)`
        // as Cassandra names a function's argument (FunctionResolver.makeArgSpec).
        Term::FunctionCall { name, args } => {
            let lower = super::functions::native_name(&name.name.0);
            // Outside a selection, Cassandra's `ToJsonFct` refuses to be prepared at all.
            let to_json = |t: &Term| {
                matches!(t, Term::FunctionCall { name, .. }
                    if super::functions::native_name(&name.name.0) == "tojson")
            };
            if lower == "tojson" || args.iter().any(to_json) {
                specs.refuse(
                    "toJson() may only be used within the selection clause of SELECT statements"
                        .into(),
                );
                return;
            }
            if let Some((parameter, _)) = super::functions::blob_conversion(&lower) {
                if let [arg] = args.as_slice() {
                    mark(
                        specs,
                        def,
                        &format!("arg0(system.{lower})"),
                        &parameter,
                        arg,
                    );
                }
                return;
            }
            let arg_ty = match lower.as_str() {
                "fromjson" => CqlType::Text,
                "mintimeuuid" | "maxtimeuuid" => CqlType::Timestamp,
                _ => return,
            };
            if let [t @ Term::Marker(_)] = args.as_slice() {
                mark(specs, def, &format!("arg0(system.{lower})"), &arg_ty, t);
            }
        }
        _ => {}
    }
}

fn mark_relations(specs: &mut Specs, def: &TableDef, relations: &[Relation]) {
    for r in relations {
        match r {
            Relation::Column { column, op, value } => {
                if let Some(c) = def.column(&column.0) {
                    // `CONTAINS ?` binds an element (a map's value), `CONTAINS KEY ?` a key.
                    // Named as Cassandra's collection receivers are: `value(l)`, `key(m)`.
                    let (ty, name) = match super::restrictions::contained_type(&c.ty, *op) {
                        Some(element) if *op == ComparisonOp::ContainsKey => {
                            (element, format!("key({})", c.name))
                        }
                        Some(element) => (element, format!("value({})", c.name)),
                        None => (c.ty.clone(), c.name.clone()),
                    };
                    mark(specs, def, &name, &ty, value);
                }
            }
            Relation::Between { column, low, high } => {
                if let Some(c) = def.column(&column.0) {
                    mark(specs, def, &c.name, &c.ty, low);
                    mark(specs, def, &c.name, &c.ty, high);
                }
            }
            Relation::In { column, values, .. } => {
                if let Some(c) = def.column(&column.0) {
                    match values {
                        InValues::Terms(terms) => {
                            for t in terms {
                                mark(specs, def, &c.name, &c.ty, t);
                            }
                        }
                        InValues::Marker(m) => {
                            let list = CqlType::List {
                                element: Box::new(c.ty.clone()),
                                frozen: true,
                            };
                            name_marker(
                                specs,
                                def,
                                m,
                                &format!("in({})", c.name),
                                column_type(&list),
                            );
                        }
                    }
                }
            }
            Relation::Token { value, .. } => match super::restrictions::token_call(value) {
                // `token(k) > token(?)`: the markers are the token function's arguments, of
                // the partition key's types, named as Cassandra names them (`arg0(system.token)`,
                // so drivers do not route by them).
                Some(args) => {
                    for (i, (c, arg)) in def.partition_key().iter().zip(args).enumerate() {
                        mark(specs, def, &format!("arg{i}(system.token)"), &c.ty, arg);
                    }
                }
                None => mark(specs, def, "partition key token", &CqlType::Bigint, value),
            },
            Relation::MultiColumn { columns, value, .. } => {
                mark_tuple(specs, def, columns, value);
            }
            Relation::MapElement {
                column, key, value, ..
            } => {
                if let Some(c) = def.column(&column.0)
                    && let Some((key_name, key_ty, value_ty)) = element_types(c)
                {
                    mark(specs, def, &key_name, &key_ty, key);
                    mark(specs, def, &format!("value({})", c.name), &value_ty, value);
                }
            }
            Relation::MultiColumnIn {
                columns, values, ..
            } => match values {
                InValues::Terms(terms) => {
                    for t in terms {
                        mark_tuple(specs, def, columns, t);
                    }
                }
                InValues::Marker(m) => {
                    if let Some((name, tuple)) = tuple_of(def, columns) {
                        let list = CqlType::List {
                            element: Box::new(tuple),
                            frozen: true,
                        };
                        // `in(a,b)`: the tuple's columns without their parentheses.
                        let columns = name.trim_start_matches('(').trim_end_matches(')');
                        name_marker(specs, def, m, &format!("in({columns})"), column_type(&list));
                    }
                }
            },
            _ => {}
        }
    }
}

/// The name (`(a,b)`, as Cassandra names it) and the tuple type of a multi-column relation's
/// columns.
fn tuple_of(def: &TableDef, columns: &[crate::language::ast::Name]) -> Option<(String, CqlType)> {
    let cols = columns
        .iter()
        .map(|n| def.column(&n.0))
        .collect::<Option<Vec<_>>>()?;
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    Some((
        format!("({})", names.join(",")),
        CqlType::Tuple(cols.iter().map(|c| c.ty.clone()).collect()),
    ))
}

/// `(?, ?)` (each marker one column's) or `?` (the whole tuple) in a multi-column relation.
fn mark_tuple(
    specs: &mut Specs,
    def: &TableDef,
    columns: &[crate::language::ast::Name],
    term: &Term,
) {
    match term {
        // Refused when the relation is prepared, as `tuple_values` refuses a literal.
        Term::Tuple(items) if items.len() != columns.len() => specs.refuse(format!(
            "Expected {} elements in value tuple, but got {}: {term}",
            columns.len(),
            items.len()
        )),
        Term::Tuple(items) => {
            for (name, item) in columns.iter().zip(items) {
                if let Some(c) = def.column(&name.0) {
                    mark(specs, def, &c.name, &c.ty, item);
                }
            }
        }
        other => {
            if let Some((name, tuple)) = tuple_of(def, columns) {
                mark(specs, def, &name, &tuple, other);
            }
        }
    }
}

/// A list's index (`idx(l)`, an int) or a map's key (`key(m)`), and the element's type.
fn element_types(col: &ColumnDef) -> Option<(String, CqlType, CqlType)> {
    match &col.ty {
        CqlType::List { element, .. } => Some((
            format!("idx({})", col.name),
            CqlType::Int,
            element.as_ref().clone(),
        )),
        CqlType::Map { key, value, .. } => Some((
            format!("key({})", col.name),
            key.as_ref().clone(),
            value.as_ref().clone(),
        )),
        CqlType::Set { element, .. } => Some((
            format!("key({})", col.name),
            element.as_ref().clone(),
            element.as_ref().clone(),
        )),
        _ => None,
    }
}

fn field_type(col: &ColumnDef, field: &str) -> Option<CqlType> {
    match &col.ty {
        CqlType::Udt { fields, .. } => fields
            .iter()
            .find(|(n, _)| n == field)
            .map(|(_, t)| t.clone()),
        _ => None,
    }
}

/// The markers of an `IF` clause: the value compared (of the column, the element or the field
/// tested), an element's key or index, `IN (?, ?)` and `IN ?`.
fn mark_conditions(specs: &mut Specs, def: &TableDef, clause: &IfClause) {
    let IfClause::Conditions(conditions) = clause else {
        return;
    };
    for cond in conditions {
        let Some(col) = def.column(&cond.column.0) else {
            continue;
        };
        let (name, ty) = match &cond.selector {
            None => (col.name.clone(), col.ty.clone()),
            Some(ElementSelector::Element(key)) => {
                let Some((key_name, key_ty, value_ty)) = element_types(col) else {
                    continue;
                };
                mark(specs, def, &key_name, &key_ty, key);
                (format!("value({})", col.name), value_ty)
            }
            Some(ElementSelector::Field(f)) => match field_type(col, &f.0) {
                Some(ty) => (format!("{}.{}", col.name, f.0), ty),
                None => continue,
            },
        };
        match &cond.predicate {
            ConditionPredicate::Compare(op, term) => {
                let ty = super::restrictions::contained_type(&ty, *op).unwrap_or(ty);
                mark(specs, def, &name, &ty, term);
            }
            ConditionPredicate::In(InValues::Terms(terms)) => {
                for t in terms {
                    mark(specs, def, &name, &ty, t);
                }
            }
            ConditionPredicate::In(InValues::Marker(m)) => {
                let list = CqlType::List {
                    element: Box::new(ty),
                    frozen: true,
                };
                name_marker(specs, def, m, &format!("in({name})"), column_type(&list));
            }
        }
    }
}

fn mark_int(specs: &mut Specs, def: &TableDef, v: &Option<IntValue>, name: &str, ty: ColumnType) {
    if let Some(IntValue::Marker(m)) = v {
        name_marker(specs, def, m, name, ty);
    }
}

/// Record a marker that Cassandra names `name` (`in(c)`, `[limit]`, `[ttl]`) when it is
/// positional; a named marker (`:cks`) keeps its own name, as `VariableSpecifications.add`
/// gives it, so that drivers bind it by that name.
fn name_marker(
    specs: &mut Specs,
    def: &TableDef,
    m: &crate::language::ast::BindMarker,
    name: &str,
    ty: ColumnType,
) {
    if let Some(slot) = specs.get_mut(m.index) {
        let name = m.name.as_ref().map_or(name, |n| n.0.as_str());
        *slot = Some(spec(def, name, ty));
    }
}

/// The markers' columns, the partition key's markers and the result columns of a statement.
pub(crate) fn describe(
    schema: &Schema,
    keyspace: Option<&str>,
    parsed: &ParsedStatement,
) -> Result<Described, ExecError> {
    let mut specs = Specs::new(parsed.bind_markers.len());
    let mut result = None;
    let mut table_def: Option<TableDef> = None;
    match &parsed.statement {
        Statement::Select(s) => {
            let t = find_table(schema, keyspace, &s.table)?;
            relations_defined(&t.def, &s.where_clause)?;
            mark_relations(&mut specs, &t.def, &s.where_clause);
            // `ORDER BY v ANN OF ?`: a vector of the column's type.
            for o in &s.order_by {
                if let (Some(term), Some(c)) = (&o.ann_of, t.def.column(&o.column.0)) {
                    mark(&mut specs, &t.def, &c.name, &c.ty, term);
                }
            }
            mark_int(&mut specs, &t.def, &s.limit, "[limit]", ColumnType::Int);
            mark_int(
                &mut specs,
                &t.def,
                &s.per_partition_limit,
                "[per_partition_limit]",
                ColumnType::Int,
            );
            let selectors = match &s.selection {
                crate::language::ast::Selection::Selectors(v) => v.as_slice(),
                crate::language::ast::Selection::Wildcard => &[],
            };
            // `GROUP BY ..., floor(time, ?)`: markers as in a selection.
            let grouped = s.group_by.iter();
            for selectable in selectors.iter().map(|sel| &sel.selectable).chain(grouped) {
                let mut markers = Vec::new();
                super::selector::selector_markers(&t.def, selectable, &mut markers);
                for (term, name, ty) in markers {
                    mark(&mut specs, &t.def, &name, &ty, &term);
                }
            }
            result = Some(select::result_columns(t, s)?);
            table_def = Some(t.def.clone());
        }
        Statement::Insert(i) => {
            let t = find_table(schema, keyspace, &i.table)?;
            mark_insert(&mut specs, t, i)?;
            table_def = Some(t.def.clone());
        }
        Statement::Update(u) => {
            let t = find_table(schema, keyspace, &u.table)?;
            mark_update(&mut specs, t, u)?;
            table_def = Some(t.def.clone());
        }
        Statement::Delete(d) => {
            let t = find_table(schema, keyspace, &d.table)?;
            mark_delete(&mut specs, t, d)?;
            table_def = Some(t.def.clone());
        }
        // A batch's markers are its statements' (numbered across them by the parser).
        Statement::Batch(b) => {
            use crate::language::ast::BatchStatement;
            for statement in &b.statements {
                match statement {
                    BatchStatement::Insert(i) => {
                        mark_insert(&mut specs, find_table(schema, keyspace, &i.table)?, i)?
                    }
                    BatchStatement::Update(u) => {
                        mark_update(&mut specs, find_table(schema, keyspace, &u.table)?, u)?
                    }
                    BatchStatement::Delete(d) => {
                        mark_delete(&mut specs, find_table(schema, keyspace, &d.table)?, d)?
                    }
                }
            }
        }
        _ => {}
    }
    if let Some(refusal) = specs.refusal {
        return Err(ExecError::invalid(refusal));
    }
    let mut bind_specs = Vec::with_capacity(specs.slots.len());
    for (i, s) in specs.slots.into_iter().enumerate() {
        match s {
            Some(s) => bind_specs.push(s),
            None => {
                return Err(ExecError::invalid(format!(
                    "bind marker {} is not in a position khata can bind yet",
                    i + 1
                )));
            }
        }
    }
    // The partition key's markers, in key order, when every key column is bound by one
    // (found by the column each marker binds, not by its name: `k = :key` routes too).
    let mut pk_indexes = Vec::new();
    if let Some(def) = &table_def {
        let bound = key_markers(&parsed.statement);
        for pk in def.partition_key() {
            if let Some((_, i)) = bound.iter().find(|(c, _)| *c == pk.name) {
                pk_indexes.push(*i as u16);
            }
        }
        if pk_indexes.len() != def.partition_key().len() {
            pk_indexes.clear();
        }
    }
    Ok(Described {
        bind_specs,
        pk_indexes,
        result,
    })
}

/// The columns a statement fixes with a lone bind marker (`k = ?` in its WHERE clause, or an
/// INSERT's value), with the marker's index.
fn key_markers(statement: &Statement) -> Vec<(String, usize)> {
    let from_relations = |relations: &[Relation]| -> Vec<(String, usize)> {
        relations
            .iter()
            .filter_map(|r| match r {
                Relation::Column {
                    column,
                    op: crate::language::ast::ComparisonOp::Equal,
                    value: Term::Marker(m),
                } => Some((column.0.clone(), m.index)),
                _ => None,
            })
            .collect()
    };
    match statement {
        Statement::Select(s) => from_relations(&s.where_clause),
        Statement::Update(u) => from_relations(&u.where_clause),
        Statement::Delete(d) => from_relations(&d.where_clause),
        Statement::Insert(i) => match &i.values {
            crate::language::ast::InsertValues::Columns { columns, values } => columns
                .iter()
                .zip(values)
                .filter_map(|(c, v)| match v {
                    Term::Marker(m) => Some((c.0.clone(), m.index)),
                    _ => None,
                })
                .collect(),
            crate::language::ast::InsertValues::Json { .. } => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A valid value of a marker's type, for checking at PREPARE what a run would refuse whatever
/// the values (`None` for a type khata does not make samples of: the check is then skipped).
/// Non-empty where a key may not be empty, one element in a collection (an `IN ?` names one
/// value), a version 1 UUID for `timeuuid`.
pub(crate) fn sample_value(ty: &ColumnType) -> Option<Bytes> {
    fn put(out: &mut Vec<u8>, ty: &ColumnType) -> Option<()> {
        let bytes: &[u8] = match ty {
            ColumnType::Ascii | ColumnType::Varchar => b"a",
            ColumnType::Blob | ColumnType::Boolean | ColumnType::Varint | ColumnType::Tinyint => {
                &[0]
            }
            ColumnType::Bigint
            | ColumnType::Counter
            | ColumnType::Timestamp
            | ColumnType::Time
            | ColumnType::Double => &[0; 8],
            ColumnType::Int | ColumnType::Float => &[0; 4],
            ColumnType::Smallint => &[0; 2],
            ColumnType::Decimal => &[0, 0, 0, 0, 0],
            ColumnType::Date => &[0x80, 0, 0, 0],
            ColumnType::Inet => &[127, 0, 0, 1],
            ColumnType::Duration => &[0, 0, 0],
            ColumnType::Uuid | ColumnType::Timeuuid => {
                &[0, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0, 0, 0, 0, 0]
            }
            ColumnType::List(element) | ColumnType::Set(element) => {
                out.extend_from_slice(&1i32.to_be_bytes());
                return put_sized(out, element);
            }
            ColumnType::Map(key, value) => {
                out.extend_from_slice(&1i32.to_be_bytes());
                put_sized(out, key)?;
                return put_sized(out, value);
            }
            ColumnType::Udt { fields, .. } => {
                for (_, field) in fields {
                    put_sized(out, field)?;
                }
                return Some(());
            }
            ColumnType::Tuple(elements) => {
                for element in elements {
                    put_sized(out, element)?;
                }
                return Some(());
            }
            ColumnType::Custom(_) => return None,
        };
        out.extend_from_slice(bytes);
        Some(())
    }
    fn put_sized(out: &mut Vec<u8>, ty: &ColumnType) -> Option<()> {
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        put(out, ty)?;
        let len = i32::try_from(out.len() - at - 4).ok()?;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        Some(())
    }
    let mut out = Vec::new();
    put(&mut out, ty)?;
    Some(Bytes::from(out))
}
