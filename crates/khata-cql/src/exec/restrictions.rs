//! A WHERE clause, bound and sorted by what it restricts: the partition key (`=`, `IN`), the
//! token (`token(pk) > ?`), the clustering key (`=` and `IN` on a prefix, then one slice, on
//! one column or on several as `(c1, c2) > (?, ?)`), and other columns (filtering).
//!
//! SELECT, UPDATE and DELETE all read their targets from here: the partition keys, and the
//! clustering byte ranges of the order-preserving encoding (DESC columns swap a slice's
//! ends, since their bytes are inverted).

use std::cmp::Ordering;
use std::ops::Bound as RangeBound;

use bytes::Bytes;
use khata_coordinator::catalog::{IndexKind, TableSchema};
use khata_types::clustering::{
    MAX_CLUSTERING_VALUE_SIZE_BYTES, encode_key, end_bound, full_range, start_bound,
};
use khata_types::schema::{ClusteringOrder, ColumnDef, ColumnKind, CqlType};
use khata_types::token::{DecoratedKey, Token, serialize_partition_key};

use super::Run;
use super::bind::{self, Bound};
use super::error::ExecError;
use crate::language::ast::{ComparisonOp, InValues, Literal, Relation, Term};
use crate::value::{CqlValue, compare, equal_serialized};

/// One end of a clustering slice: the values of the columns it names (from the first
/// sliced column on), and whether keys equal to them are in.
#[derive(Clone, Debug)]
struct SliceEnd {
    values: Vec<Bytes>,
    inclusive: bool,
}

/// The bound WHERE clause.
#[derive(Debug)]
pub(crate) struct Restrictions {
    /// Per partition key column: its values (`=`: one, `IN`: several).
    pk: Vec<Option<Vec<Bytes>>>,
    pub token_low: RangeBound<Token>,
    pub token_high: RangeBound<Token>,
    /// Per clustering column: `=`/`IN` values.
    ck: Vec<Option<Vec<Bytes>>>,
    /// The clustering column the slice starts at, and its ends.
    slice: Option<(usize, Option<SliceEnd>, Option<SliceEnd>)>,
    /// `(a, b) IN ((x, y), ...)`: the first column and the tuples, which stand for the columns
    /// they cover in `ck` (whose entries then only mark those columns as restricted).
    tuples: Option<(usize, Vec<Vec<Bytes>>)>,
    /// Regular and static columns compared with a value (ALLOW FILTERING, or an index).
    pub filters: Vec<Filter>,
    /// A partition key column is restricted by `IN` (even of one value): Cassandra's
    /// `keyIsInRelation`, which makes an ORDER BY a post-query ordering.
    pub key_in: bool,
    /// The first filter given a null or unset value, by its column's name, and its refusal.
    /// Cassandra checks a statement's restrictions when it prepares it and binds the values
    /// when it runs it, so a SELECT that needs ALLOW FILTERING says so before it refuses the
    /// value ([`Restrictions::for_select`]); an UPDATE or DELETE refuses the filter itself.
    unbound_filter: Option<(String, ExecError)>,
    /// A partition key column is restricted by a slice or `CONTAINS [KEY]` (a filter over the
    /// scan): Cassandra's `PartitionKeyRestrictions.needFiltering`, which needs ALLOW FILTERING.
    key_filtered: bool,
    /// A clustering column (a frozen collection) is restricted by `CONTAINS [KEY]`.
    clustering_contains: bool,
    /// Clustering restrictions after a gap (or after the sliced column) were moved into the
    /// filters.
    clustering_gap_filtered: bool,
    /// Per clustering column, whether it is restricted by an equality as Cassandra counts one
    /// (`=`, an `IN` of one literal value, a tuple `=`): not by an `IN ?` bound to one value.
    ck_equal: Vec<bool>,
}

/// A restriction on a regular or static column, checked on each row read.
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    pub column: ColumnDef,
    /// `=`, `<`, `<=`, `>`, `>=`, `CONTAINS` or `CONTAINS KEY`.
    pub op: ComparisonOp,
    /// The value compared with: of the column's type; of its element (or map value) type for
    /// `CONTAINS`, of its key type for `CONTAINS KEY`.
    pub value: Bytes,
    /// A key column's `IN` as a filter (with `=`): the values it accepts, instead of `value`
    /// (none for an empty `IN`, which no row passes).
    pub any_of: Option<Vec<Bytes>>,
    /// `m[key] op value`: the map key whose value is compared (`value` is then of the map's
    /// value type).
    pub element: Option<Bytes>,
}

impl Filter {
    /// Whether the column's value in a row (`None`: null) passes.
    pub fn passes(&self, current: Option<&Bytes>) -> bool {
        let Some(current) = current else {
            return false;
        };
        if let Some(key) = &self.element {
            return self.element_passes(key, current);
        }
        compare_op(&self.column.ty, self.op, &self.any_of, current, &self.value)
    }

    /// `m[key] op value` on a map's serialized value.
    fn element_passes(&self, key: &Bytes, map: &Bytes) -> bool {
        let CqlType::Map {
            key: key_ty,
            value: value_ty,
            ..
        } = &self.column.ty
        else {
            return false;
        };
        let (Ok(CqlValue::Map(entries)), Ok(wanted)) = (
            CqlValue::deserialize(&self.column.ty, map),
            CqlValue::deserialize(key_ty, key),
        ) else {
            return false;
        };
        entries
            .iter()
            .find(|(k, _)| compare(key_ty, k, &wanted) == Ordering::Equal)
            .is_some_and(|(_, v)| {
                let current = Bytes::from(v.to_bytes(value_ty));
                compare_op(value_ty, self.op, &None, &current, &self.value)
            })
    }
}

/// `current op value` for values of `ty` (`any_of`: the values of a key column's `IN`).
fn compare_op(
    ty: &CqlType,
    op: ComparisonOp,
    any_of: &Option<Vec<Bytes>>,
    current: &Bytes,
    value: &Bytes,
) -> bool {
    match op {
        // By value, as Cassandra's `compareForCQL`: 1230 equals 1.23E+3.
        ComparisonOp::Equal => match any_of {
            Some(values) => values.iter().any(|v| equal_serialized(ty, current, v)),
            None => equal_serialized(ty, current, value),
        },
        ComparisonOp::Contains | ComparisonOp::ContainsKey => {
            let (Ok(collection), Some(element_ty)) =
                (CqlValue::deserialize(ty, current), contained_type(ty, op))
            else {
                return false;
            };
            let Ok(wanted) = CqlValue::deserialize(&element_ty, value) else {
                return false;
            };
            let same = |v: &CqlValue| compare(&element_ty, v, &wanted) == Ordering::Equal;
            match (collection, op) {
                (CqlValue::List(items) | CqlValue::Set(items), _) => items.iter().any(same),
                (CqlValue::Map(entries), ComparisonOp::ContainsKey) => {
                    entries.iter().any(|(k, _)| same(k))
                }
                (CqlValue::Map(entries), _) => entries.iter().any(|(_, v)| same(v)),
                _ => false,
            }
        }
        op => {
            let (Ok(a), Ok(b)) = (
                CqlValue::deserialize(ty, current),
                CqlValue::deserialize(ty, value),
            ) else {
                return false;
            };
            let order = compare(ty, &a, &b);
            match op {
                ComparisonOp::Less => order == Ordering::Less,
                ComparisonOp::LessEqual => order != Ordering::Greater,
                ComparisonOp::Greater => order == Ordering::Greater,
                ComparisonOp::GreaterEqual => order != Ordering::Less,
                _ => false,
            }
        }
    }
}

/// A key column's `=` (one value) or `IN` (any number) as a filter.
fn in_filter(column: ColumnDef, mut values: Vec<Bytes>) -> Filter {
    match values.len() {
        1 => Filter {
            column,
            op: ComparisonOp::Equal,
            value: values.remove(0),
            any_of: None,
            element: None,
        },
        _ => Filter {
            column,
            op: ComparisonOp::Equal,
            value: Bytes::new(),
            any_of: Some(values),
            element: None,
        },
    }
}

/// The type a `CONTAINS` (element, or map value) or `CONTAINS KEY` (map key) compares with.
pub(crate) fn contained_type(ty: &CqlType, op: ComparisonOp) -> Option<CqlType> {
    match (ty, op) {
        (CqlType::List { element, .. } | CqlType::Set { element, .. }, ComparisonOp::Contains) => {
            Some(element.as_ref().clone())
        }
        (CqlType::Map { value, .. }, ComparisonOp::Contains) => Some(value.as_ref().clone()),
        (CqlType::Map { key, .. }, ComparisonOp::ContainsKey) => Some(key.as_ref().clone()),
        _ => None,
    }
}

/// The type a `CONTAINS [KEY]` on `c` compares with, or Cassandra's refusal of it on a column
/// that is no collection (no map, for `CONTAINS KEY`).
fn contains_type(c: &ColumnDef, op: ComparisonOp) -> Result<CqlType, ExecError> {
    contained_type(&c.ty, op).ok_or_else(|| not_a_collection(c, op))
}

impl Restrictions {
    /// A `CONTAINS` / `CONTAINS KEY` filter on `c`, its value bound as the member's type.
    fn push_contains(
        &mut self,
        run: &Run<'_>,
        c: &ColumnDef,
        op: ComparisonOp,
        term: &Term,
    ) -> Result<(), ExecError> {
        let element_ty = contains_type(c, op)?;
        let value = filter_value(run, term, &element_ty, c, "value", &mut self.unbound_filter)?;
        self.filters.push(Filter {
            column: c.clone(),
            op,
            value,
            any_of: None,
            element: None,
        });
        Ok(())
    }
}

/// Cassandra's refusal of `CONTAINS` on a column that is no collection, or of `CONTAINS KEY` on
/// one that is no map (`SingleColumnRelation.toReceivers`).
fn not_a_collection(c: &ColumnDef, op: ComparisonOp) -> ExecError {
    ExecError::invalid(format!(
        "Cannot use {} on non-{} column {}",
        op.symbol(),
        if op == ComparisonOp::ContainsKey {
            "map"
        } else {
            "collection"
        },
        c.name
    ))
}

/// The values of `c IN (...)` or `c IN ?`: each refused if null, as Cassandra's
/// `INRestriction.getValues` refuses a marker's null or unset list.
fn in_list(run: &Run<'_>, values: &InValues, c: &ColumnDef) -> Result<Vec<Bytes>, ExecError> {
    match values {
        InValues::Terms(terms) => terms.iter().map(|t| in_condition(run, t, c)).collect(),
        InValues::Marker(_) => in_values_or(run, values, &c.ty, &c.name, |state| {
            ExecError::invalid(format!("Invalid {state} value for column {}", c.name))
        }),
    }
}

/// A non-frozen collection is restricted only by CONTAINS [KEY] or a map entry (Cassandra's
/// `isLegalRelationForNonFrozenCollection`); `op_text` names the operator tried.
fn refuse_multi_cell(c: &ColumnDef, op_text: &str) -> Result<(), ExecError> {
    if !c.ty.is_multi_cell() {
        return Ok(());
    }
    let ty = khata_types::type_text::type_text(&c.ty);
    Err(ExecError::invalid(if matches!(c.ty, CqlType::Udt { .. }) {
        format!(
            "Non-frozen UDT column '{}' ({ty}) cannot be restricted by any relation",
            c.name
        )
    } else {
        format!(
            "Collection column '{}' ({ty}) cannot be restricted by a '{op_text}' relation",
            c.name
        )
    }))
}

/// A SELECT's `=`/`IN` values of a clustering column without those too large for a clustering
/// key (over 65,535 bytes), which no row has: Cassandra finds no row for them rather than refuse
/// them (`select`: false keeps them, for UPDATE and DELETE, which refuse them).
fn keyable(select: bool, mut values: Vec<Bytes>) -> Vec<Bytes> {
    if select {
        values.retain(|v| v.len() <= MAX_CLUSTERING_VALUE_SIZE_BYTES);
    }
    values
}

/// Whether `op` is `<`, `<=`, `>` or `>=`.
fn is_slice(op: ComparisonOp) -> bool {
    matches!(
        op,
        ComparisonOp::Less
            | ComparisonOp::LessEqual
            | ComparisonOp::Greater
            | ComparisonOp::GreaterEqual
    )
}

/// Cassandra's refusal of a slice on a column whose type holds a duration, which has no order
/// (`SingleColumnRelation.newSliceRestriction`, checked before anything else of the relation).
fn refuse_duration_slice(c: &ColumnDef) -> Result<(), ExecError> {
    if !super::ddl::references_duration(&c.ty) {
        return Ok(());
    }
    let what = match c.ty {
        CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. } => {
            "collections containing durations"
        }
        CqlType::Tuple(_) => "tuples containing durations",
        CqlType::Udt { .. } => "UDTs containing durations",
        _ => "duration columns",
    };
    Err(ExecError::invalid(format!(
        "Slice restrictions are not supported on {what}"
    )))
}

/// Cassandra's refusal of a multi-column slice that would have to filter rows
/// (`MultiColumnRestriction.SliceRestriction.addToRowFilter`).
const MULTI_COLUMN_SLICE_FILTERING: &str =
    "Multi-column slice restrictions cannot be used for filtering.";

/// The clustering column at `position`.
fn clustering_column(t: &TableSchema, position: usize) -> &ColumnDef {
    t.def.clustering()[position].0
}

pub(crate) const FILTERING: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

fn column<'t>(t: &'t TableSchema, name: &str) -> Result<&'t ColumnDef, ExecError> {
    t.def
        .column(name)
        .ok_or_else(|| ExecError::invalid(format!("Undefined column name {name}")))
}

fn required(run: &Run<'_>, term: &Term, c: &ColumnDef) -> Result<Bytes, ExecError> {
    bind::required(run, term, &c.ty, &c.name)
}

/// The value of a key column's `=`, slice or `IN` item: null is refused in the words of
/// Cassandra's `SingleColumnRestriction` (`EQRestriction`/`INRestriction.appendTo`), unset as
/// a bound value is.
fn in_condition(run: &Run<'_>, term: &Term, c: &ColumnDef) -> Result<Bytes, ExecError> {
    match bind::value(run, term, &c.ty, &c.name)? {
        Bound::Value(b) => Ok(b),
        Bound::Null => Err(ExecError::invalid(format!(
            "Invalid null value in condition for column {}",
            c.name
        ))),
        Bound::Unset => Err(ExecError::invalid(format!(
            "Invalid unset value for column {}",
            c.name
        ))),
    }
}

/// A filter's value of type `ty` (`what`: `value`, `map key` or `map value`). A null or unset
/// one stands as empty bytes and is noted in `unbound` (the first only), in Cassandra's words
/// (RowFilter's expressions' `validate`).
fn filter_value(
    run: &Run<'_>,
    term: &Term,
    ty: &CqlType,
    c: &ColumnDef,
    what: &str,
    unbound: &mut Option<(String, ExecError)>,
) -> Result<Bytes, ExecError> {
    // A null literal for a counter is refused as the term is prepared, before anything else
    // (Cassandra's `Constants.NULL_LITERAL` for a counter receiver).
    if *ty == CqlType::Counter && matches!(term, Term::Literal(Literal::Null)) {
        return Err(ExecError::invalid(
            "Invalid null value for counter increment/decrement",
        ));
    }
    let state = match bind::value(run, term, ty, &c.name)? {
        Bound::Value(bytes) => return Ok(bytes),
        Bound::Null => "null",
        Bound::Unset => "unset",
    };
    unbound.get_or_insert_with(|| {
        let message = format!("Unsupported {state} {what} for column {}", c.name);
        (c.name.clone(), ExecError::invalid(message))
    });
    Ok(Bytes::new())
}

/// Checks the columns of `token(...)` in a relation are the partition key, in order, with
/// Cassandra's message for each way they are not.
fn token_columns(t: &TableSchema, columns: &[crate::language::ast::Name]) -> Result<(), ExecError> {
    let pk: Vec<&str> = t
        .def
        .partition_key()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let given: Vec<&str> = columns
        .iter()
        .map(|n| column(t, &n.0).map(|c| c.name.as_str()))
        .collect::<Result<_, _>>()?;
    if given == pk {
        return Ok(());
    }
    let message = if !pk.iter().all(|c| given.contains(c)) {
        "The token() function must be applied to all partition key components or none of them"
            .to_string()
    } else if (1..given.len()).any(|i| given[..i].contains(&given[i])) {
        "The token() function contains duplicate partition key components".to_string()
    } else if !given.iter().all(|c| pk.contains(c)) {
        "The token() function must contains only partition key components".to_string()
    } else {
        format!(
            "The token function arguments must be in the partition key order: {}",
            pk.join(", ")
        )
    };
    Err(ExecError::invalid(message))
}

/// The token a `token(...) op value` relation compares with: a bigint (literal or marker), or
/// `token(v1, ...)` of a partition key's components, as in `token(k) > token('tom')`.
fn token_value(t: &TableSchema, run: &Run<'_>, value: &Term) -> Result<Token, ExecError> {
    if let Some(args) = token_call(value) {
        let pk = t.def.partition_key();
        if args.len() != pk.len() {
            return Err(ExecError::invalid(format!(
                "Invalid number of arguments in call to function system.token: {} required but {} provided",
                pk.len(),
                args.len()
            )));
        }
        let components = pk
            .iter()
            .zip(args)
            .map(|(c, a)| match bind::value(run, a, &c.ty, &c.name)? {
                // Cassandra's `FunctionCall.bindAndGet`.
                Bound::Unset => Err(ExecError::invalid(
                    "Invalid unset value for argument in call to function token",
                )),
                _ => required(run, a, c),
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(PointKey::partition_key(&components)?.token);
    }
    let v = bind::required(run, value, &CqlType::Bigint, "partition key token")?;
    Ok(Token(i64::from_be_bytes(
        v[..]
            .try_into()
            .map_err(|_| ExecError::invalid("Invalid token value"))?,
    )))
}

/// The arguments of a `token(...)` call (`system.token` too).
pub(crate) fn token_call(term: &Term) -> Option<&[Term]> {
    match term {
        Term::FunctionCall { name, args }
            if name.name.0.eq_ignore_ascii_case("token")
                && name
                    .keyspace
                    .as_ref()
                    .is_none_or(|k| k.0.eq_ignore_ascii_case("system")) =>
        {
            Some(args)
        }
        _ => None,
    }
}

/// The values of an `IN`: literal terms, or one marker bound to a list.
pub(crate) fn in_values(
    run: &Run<'_>,
    values: &InValues,
    ty: &CqlType,
    name: &str,
) -> Result<Vec<Bytes>, ExecError> {
    in_values_or(run, values, ty, name, |_| {
        ExecError::invalid(format!("Invalid null value for IN restriction on {name}"))
    })
}

/// [`in_values`], refusing a marker bound to null or unset with `refuse(state)` (`null` or
/// `unset`).
fn in_values_or(
    run: &Run<'_>,
    values: &InValues,
    ty: &CqlType,
    name: &str,
    refuse: impl Fn(&str) -> ExecError,
) -> Result<Vec<Bytes>, ExecError> {
    match values {
        InValues::Terms(terms) => terms
            .iter()
            .map(|t| bind::required(run, t, ty, name))
            .collect(),
        InValues::Marker(m) => {
            let list = CqlType::List {
                element: Box::new(ty.clone()),
                frozen: true,
            };
            match bind::value(run, &Term::Marker(m.clone()), &list, name)? {
                Bound::Value(bytes) => match CqlValue::deserialize(&list, &bytes) {
                    Ok(CqlValue::List(items)) => Ok(items
                        .into_iter()
                        .map(|v| Bytes::from(v.to_bytes(ty)))
                        .collect()),
                    _ => Err(ExecError::invalid(format!("Invalid IN values for {name}"))),
                },
                Bound::Null => Err(refuse("null")),
                Bound::Unset => Err(refuse("unset")),
            }
        }
    }
}

/// How Cassandra refuses a null in a multi-column relation's tuple: by its column in an
/// equality (`MultiColumnRestriction.EQRestriction`), by its column "in condition" in a slice,
/// by all the relation's columns in an `IN` of several tuples.
#[derive(Clone, Copy, PartialEq)]
enum NullInTuple {
    Equality,
    Slice,
    In,
}

/// The components of a tuple value bound to several clustering columns. A tuple literal of
/// the wrong size is refused first, as Cassandra refuses it when it prepares the relation.
fn tuple_values(
    run: &Run<'_>,
    term: &Term,
    columns: &[&ColumnDef],
    null: NullInTuple,
) -> Result<Vec<Bytes>, ExecError> {
    if let Term::Tuple(items) = term
        && items.len() != columns.len()
    {
        return Err(ExecError::invalid(format!(
            "Expected {} elements in value tuple, but got {}: {term}",
            columns.len(),
            items.len()
        )));
    }
    let ty = CqlType::Tuple(columns.iter().map(|c| c.ty.clone()).collect());
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let name = format!("({})", names.join(", "));
    let bytes = match bind::value(run, term, &ty, &name)? {
        Bound::Value(b) => b,
        // Cassandra's `Tuples.Value` receiver, named `(a,b)`.
        Bound::Unset => {
            return Err(ExecError::invalid(format!(
                "Invalid unset value for tuple ({})",
                names.join(",")
            )));
        }
        Bound::Null => bind::required(run, term, &ty, &name)?,
    };
    match CqlValue::deserialize(&ty, &bytes) {
        Ok(tuple) => tuple_columns(tuple, columns, &name, null),
        Err(_) => Err(ExecError::invalid(format!("Invalid value for {name}"))),
    }
}

/// A tuple value as its columns' serialized values (none may be null).
fn tuple_columns(
    tuple: CqlValue,
    columns: &[&ColumnDef],
    name: &str,
    null: NullInTuple,
) -> Result<Vec<Bytes>, ExecError> {
    match tuple {
        CqlValue::Tuple(items) if items.len() == columns.len() => items
            .into_iter()
            .zip(columns)
            .map(|(v, c)| {
                v.map(|v| Bytes::from(v.to_bytes(&c.ty))).ok_or_else(|| {
                    ExecError::invalid(match null {
                        NullInTuple::Equality => {
                            format!("Invalid null value for column {}", c.name)
                        }
                        NullInTuple::Slice => {
                            format!("Invalid null value in condition for column {}", c.name)
                        }
                        NullInTuple::In => {
                            let names: Vec<&str> =
                                columns.iter().map(|c| c.name.as_str()).collect();
                            format!(
                                "Invalid null value in condition for columns: [{}]",
                                names.join(", ")
                            )
                        }
                    })
                })
            })
            .collect(),
        _ => Err(ExecError::invalid(format!("Invalid value for {name}"))),
    }
}

impl Restrictions {
    /// Bind and sort a WHERE clause.
    pub fn new(
        t: &TableSchema,
        run: &Run<'_>,
        clause: &[Relation],
    ) -> Result<Restrictions, ExecError> {
        Restrictions::build(t, run, clause, false, false)
    }

    /// Bind and sort a SELECT's WHERE clause. With ALLOW FILTERING, what cannot select
    /// partitions or clustering ranges becomes a filter checked on each row read, as Cassandra
    /// does: a slice on a partition key column, and `=` or a slice on a clustering column after
    /// an unrestricted one (or after the sliced one).
    pub fn for_select(
        t: &TableSchema,
        run: &Run<'_>,
        clause: &[Relation],
        allow_filtering: bool,
    ) -> Result<Restrictions, ExecError> {
        let mut r = Restrictions::build(t, run, clause, true, allow_filtering)?;
        // What Cassandra checks when it prepares the statement, in its order: a partition key
        // restricted by a slice or CONTAINS is filtered; then a clustering column restricted by
        // CONTAINS needs an index or filtering.
        if !allow_filtering && r.key_filtered && !r.key_filters_served(t) {
            return Err(ExecError::invalid(FILTERING));
        }
        if !allow_filtering && r.clustering_contains && !r.restricts_indexed_column(t) {
            return Err(ExecError::invalid(if r.partial_partition_key() {
                FILTERING
            } else {
                "Clustering columns can only be restricted with CONTAINS with a secondary index or filtering"
            }));
        }
        if let Some((column, refusal)) = r.unbound_filter.take() {
            // Without ALLOW FILTERING, a filter on a column no index serves needs it: the
            // refusal Cassandra gives first.
            let indexed = t
                .indexes
                .iter()
                .any(|i| i.has_storage(&t.def) && i.column().0 == column);
            return Err(if allow_filtering || indexed {
                refusal
            } else {
                ExecError::invalid(FILTERING)
            });
        }
        if allow_filtering {
            let n = r.ck.iter().take_while(|v| v.is_some()).count();
            if let Some((f, low, high)) = &r.slice
                && *f > n
                && slice_filters(clustering_column(t, *f), low, high).is_none()
            {
                return Err(ExecError::invalid(MULTI_COLUMN_SLICE_FILTERING));
            }
            // `MultiColumnRestriction.INRestriction.addToRowFilter`.
            if let Some((first, _)) = &r.tuples
                && *first > n
            {
                return Err(ExecError::invalid(
                    "Multicolumn IN filters are not supported",
                ));
            }
            r.filter_partial_partition_key(t);
            r.filter_clustering_gaps(t);
        } else if !r.partial_partition_key() && !r.restricts_indexed_column(t) {
            // Cassandra refuses a clustering column restricted after an unrestricted one
            // before it asks for ALLOW FILTERING.
            r.prefix_len(t)?;
        }
        Ok(r)
    }

    /// A regular or static column compared with a value by `op` (`op_text`: the operator as
    /// Cassandra's refusals name it, `IN` for an `IN` of one value, which Cassandra takes as
    /// `=`).
    fn compare_filter(
        &mut self,
        run: &Run<'_>,
        c: &ColumnDef,
        op: ComparisonOp,
        op_text: &str,
        term: &Term,
    ) -> Result<(), ExecError> {
        if is_slice(op) {
            refuse_duration_slice(c)?;
        }
        refuse_multi_cell(c, op_text)?;
        let value = filter_value(run, term, &c.ty, c, "value", &mut self.unbound_filter)?;
        self.filters.push(Filter {
            column: c.clone(),
            op,
            value,
            any_of: None,
            element: None,
        });
        Ok(())
    }

    /// The restrictions a query through an index checks, as an index sees them (column, operator,
    /// whether a map entry's): every filter, and with `clustering` every clustering
    /// restriction. `None` stands for one no SAI can serve (an `IN`, a multi-column relation).
    fn index_restrictions<'t>(
        &'t self,
        t: &'t TableSchema,
        clustering: bool,
    ) -> Vec<Option<(&'t ColumnDef, ComparisonOp, bool)>> {
        let mut out: Vec<_> = self
            .filters
            .iter()
            .map(|f| {
                f.any_of
                    .is_none()
                    .then_some((&f.column, f.op, f.element.is_some()))
            })
            .collect();
        if clustering {
            let columns = t.def.clustering();
            if self.tuples.is_some() {
                out.push(None);
            }
            for (position, values) in self.ck.iter().enumerate() {
                if let Some(values) = values {
                    out.push(
                        (self.ck_equal[position] && values.len() == 1)
                            .then(|| (columns[position].0, ComparisonOp::Equal, false)),
                    );
                }
            }
            if let Some((first, low, high)) = &self.slice {
                let single = [low, high]
                    .into_iter()
                    .flatten()
                    .all(|end| end.values.len() == 1);
                out.push(single.then(|| (columns[*first].0, ComparisonOp::Greater, false)));
            }
        }
        out
    }

    /// Whether the table's SAIs serve every restriction a query through an index checks
    /// (Cassandra 5.0's `IndexRestrictions.needsFiltering` for the SAI group, whose indexes
    /// serve a query together): then it needs no ALLOW FILTERING. `clustering`: the clustering
    /// restrictions count (no partition key, or they filter). False when nothing is restricted.
    pub fn sai_serves_all(&self, t: &TableSchema, clustering: bool) -> bool {
        if t.indexes.is_empty() {
            return false;
        }
        let all = self.index_restrictions(t, clustering);
        !all.is_empty()
            && all.into_iter().all(|r| {
                r.is_some_and(|(column, op, element)| super::sai::serves(t, column, op, element))
            })
    }

    /// Whether a query through an index (or over a range of partitions) filters rows, which
    /// needs ALLOW FILTERING: Cassandra 5.0's `StatementRestrictions.needFiltering`. The
    /// restrictions it checks are the filters and, without the whole partition key or where
    /// they filter, the clustering restrictions; they need no filtering when one index group
    /// supports them all (each regular index is a group of its own, the SAIs one together),
    /// and none are checked when only clustering columns are restricted over a range of
    /// partitions. Two `CONTAINS` on one column filter through a regular index.
    pub fn needs_filtering(&self, t: &TableSchema) -> bool {
        let all = self.index_restrictions(
            t,
            !self.has_partition_keys() || self.clustering_needs_filtering(),
        );
        if all.is_empty() {
            return !self.has_partition_keys() && self.has_clustering();
        }
        let served_by = |serves: &dyn Fn(&ColumnDef, ComparisonOp, bool) -> bool| {
            all.iter()
                .all(|r| r.is_some_and(|(column, op, element)| serves(column, op, element)))
        };
        if served_by(&|c, op, element| super::sai::serves(t, c, op, element)) {
            return false;
        }
        // A regular index filters a second CONTAINS on its column (`filtersMultipleContains`).
        if self.multiple_contains() {
            return true;
        }
        !t.indexes
            .iter()
            .filter(|i| !super::sai::is_sai(i) && i.has_storage(&t.def))
            .any(|i| {
                let (name, kind) = i.column();
                served_by(&|c, op, element| {
                    c.name == name
                        && matches!(
                            (kind, op, element),
                            (
                                IndexKind::Simple | IndexKind::Full,
                                ComparisonOp::Equal,
                                false
                            ) | (IndexKind::Values, ComparisonOp::Contains, false)
                                | (IndexKind::Keys, ComparisonOp::ContainsKey, false)
                                | (IndexKind::Entries, ComparisonOp::Equal, true)
                        )
                })
            })
    }

    /// Two `CONTAINS` (or two `CONTAINS KEY`) on one column.
    fn multiple_contains(&self) -> bool {
        self.filters.iter().enumerate().any(|(n, f)| {
            matches!(f.op, ComparisonOp::Contains | ComparisonOp::ContainsKey)
                && self.filters[n + 1..]
                    .iter()
                    .any(|g| g.op == f.op && g.column.name == f.column.name)
        })
    }

    /// Whether an index of the table can serve one of the restrictions (Cassandra's
    /// `hasQueriableIndex`): `=` on a column with a simple or `full()` index, `CONTAINS` with a
    /// `values()` one, `CONTAINS KEY` with a `keys()` one, `m[k] = v` with an `entries()` one,
    /// and whatever an SAI supports (its ranges).
    pub fn restricts_indexed_column(&self, t: &TableSchema) -> bool {
        let sai = self
            .index_restrictions(t, true)
            .into_iter()
            .flatten()
            .any(|(column, op, element)| super::sai::serves(t, column, op, element));
        sai || self.restricts_index_lookup(t)
    }

    /// Whether a regular index lookup can serve one of the restrictions.
    fn restricts_index_lookup(&self, t: &TableSchema) -> bool {
        let indexed = |name: &str, kinds: &[IndexKind]| {
            t.indexes.iter().any(|i| {
                let (column, kind) = i.column();
                i.has_storage(&t.def) && column == name && kinds.contains(&kind)
            })
        };
        let simple = [IndexKind::Simple, IndexKind::Full];
        let pk = t.def.partition_key();
        let clustering = t.def.clustering();
        // An index serves `=` on a key column, not `IN` (a regular index supports EQ,
        // CONTAINS and CONTAINS KEY only).
        let keys = self
            .pk
            .iter()
            .map(|values| values.as_ref().is_some_and(|v| v.len() == 1))
            .zip(pk.iter().map(|c| c.name.as_str()))
            .chain(
                self.ck
                    .iter()
                    .zip(&self.ck_equal)
                    .map(|(values, equal)| *equal && values.as_ref().is_some_and(|v| v.len() == 1))
                    .zip(clustering.iter().map(|(c, _)| c.name.as_str())),
            )
            .any(|(single, name)| single && indexed(name, &simple));
        keys || self.filters.iter().filter(|f| f.any_of.is_none()).any(|f| {
            let name = f.column.name.as_str();
            match (f.op, &f.element) {
                (ComparisonOp::Equal, None) => indexed(name, &simple),
                (ComparisonOp::Equal, Some(_)) => indexed(name, &[IndexKind::Entries]),
                (ComparisonOp::Contains, _) => indexed(name, &[IndexKind::Values]),
                (ComparisonOp::ContainsKey, _) => indexed(name, &[IndexKind::Keys]),
                _ => false,
            }
        })
    }

    /// Whether an SAI serves each partition key column's slice or `CONTAINS` (a filter over the
    /// scan, which then needs no ALLOW FILTERING if the SAIs serve the rest too).
    fn key_filters_served(&self, t: &TableSchema) -> bool {
        self.filters
            .iter()
            .filter(|f| matches!(f.column.kind, ColumnKind::PartitionKey { .. }))
            .all(|f| {
                f.any_of.is_none() && super::sai::serves(t, &f.column, f.op, f.element.is_some())
            })
    }

    /// Whether the clustering restrictions filter rows rather than only select clustering
    /// ranges (Cassandra's `ClusteringColumnRestrictions.needFiltering`): a `CONTAINS`, or a
    /// column restricted after an unrestricted one or after the sliced one (moved into the
    /// filters or not).
    pub fn clustering_needs_filtering(&self) -> bool {
        let n = self.ck.iter().take_while(|v| v.is_some()).count();
        let after_gap = match &self.slice {
            Some((f, ..)) if *f == n => self.ck.iter().skip(n + 1).any(Option::is_some),
            Some((f, ..)) => *f > n || self.ck.iter().skip(n).any(Option::is_some),
            None => self.ck.iter().skip(n).any(Option::is_some),
        };
        self.clustering_contains || self.clustering_gap_filtered || after_gap
    }

    /// A partition key restricted in part selects no partitions: its `=` and `IN`
    /// restrictions are filters over the scan.
    /// For a table with an index on a key column: move a partial partition key and the
    /// clustering restrictions after a gap into filters (as ALLOW FILTERING does), where an index
    /// on one of those columns can serve them; what no index serves still needs ALLOW FILTERING.
    pub fn filter_key_columns(&mut self, t: &TableSchema) {
        self.filter_partial_partition_key(t);
        self.filter_clustering_gaps(t);
    }

    /// The clustering columns (by position) restricted by `=` to one value, with that value.
    pub fn clustering_equalities(&self) -> Vec<(usize, Bytes)> {
        if self.tuples.is_some() {
            return Vec::new();
        }
        self.ck
            .iter()
            .enumerate()
            .filter_map(|(position, values)| match values.as_deref() {
                Some([one]) if self.ck_equal[position] => Some((position, one.clone())),
                _ => None,
            })
            .collect()
    }

    fn filter_partial_partition_key(&mut self, t: &TableSchema) {
        if !self.partial_partition_key() {
            return;
        }
        let pk = t.def.partition_key();
        for (position, values) in self.pk.iter_mut().enumerate() {
            if let Some(values) = values.take() {
                self.filters.push(in_filter(pk[position].clone(), values));
            }
        }
    }

    /// Move the clustering restrictions that follow a gap (or the sliced column) into filters,
    /// where they are single values or single-column slices.
    fn filter_clustering_gaps(&mut self, t: &TableSchema) {
        let clustering = t.def.clustering();
        let n = self.ck.iter().take_while(|v| v.is_some()).count();
        // The columns from here on cannot narrow the clustering range.
        let from = match &self.slice {
            Some((f, _, _)) if *f == n => n + 1,
            _ => n,
        };
        for (position, values) in self.ck.iter_mut().enumerate().skip(from) {
            if let Some(values) = values.take() {
                self.filters
                    .push(in_filter(clustering[position].0.clone(), values));
                self.clustering_gap_filtered = true;
            }
        }
        if let Some((f, low, high)) = &self.slice
            && *f > n
            && let Some(filters) = slice_filters(clustering[*f].0, low, high)
        {
            self.filters.extend(filters);
            self.slice = None;
            self.clustering_gap_filtered = true;
        }
    }

    /// `select`: a SELECT's clause, whose partition key slices and key columns' `CONTAINS`
    /// become filters (refused later without ALLOW FILTERING), and whose `=`/`IN` values too
    /// large for a clustering key match nothing rather than fail.
    fn build(
        t: &TableSchema,
        run: &Run<'_>,
        clause: &[Relation],
        select: bool,
        allow_filtering: bool,
    ) -> Result<Restrictions, ExecError> {
        let clustering = t.def.clustering();
        let mut merged = ClusteringSet::new(t);
        // Cassandra checks where a clustering restriction stands unless ALLOW FILTERING is given
        // or an index serves the restriction (an `=` on an indexed column; UPDATE and DELETE
        // use no index).
        let check_order = |held: &Held| {
            let indexed = |p: usize| {
                t.indexes.iter().any(|i| {
                    let (column, kind) = i.column();
                    i.has_storage(&t.def)
                        && column == clustering[p].0.name
                        && matches!(kind, IndexKind::Simple | IndexKind::Full)
                })
            };
            // An SAI serves a slice of the column too.
            let sai_slice = held.is_slice()
                && !held.multi
                && super::sai::serves(t, clustering[held.first].0, ComparisonOp::Greater, false);
            let served = select
                && (held.kind == HeldKind::Equal && held.columns().any(indexed) || sai_slice);
            !allow_filtering && !served
        };
        let mut hold = |held: Held| merged.add(held, check_order(&held));
        let mut r = Restrictions {
            pk: vec![None; t.def.partition_key().len()],
            token_low: RangeBound::Unbounded,
            token_high: RangeBound::Unbounded,
            ck: vec![None; clustering.len()],
            slice: None,
            tuples: None,
            filters: Vec::new(),
            key_in: false,
            unbound_filter: None,
            key_filtered: false,
            clustering_contains: false,
            clustering_gap_filtered: false,
            ck_equal: vec![false; clustering.len()],
        };
        let set_slice =
            |r: &mut Restrictions, first: usize, op: ComparisonOp, values: Vec<Bytes>| {
                let end = SliceEnd {
                    inclusive: matches!(op, ComparisonOp::GreaterEqual | ComparisonOp::LessEqual),
                    values,
                };
                let (mut low, mut high) = match r.slice.take() {
                    Some((f, l, h)) if f == first => (l, h),
                    Some((f, ..)) => {
                        return Err(after_slice(
                            &clustering[f.max(first)].0.name,
                            &clustering[f.min(first)].0.name,
                        ));
                    }
                    None => (None, None),
                };
                let (slot, which) = match op {
                    ComparisonOp::Greater | ComparisonOp::GreaterEqual => (&mut low, "start"),
                    _ => (&mut high, "end"),
                };
                if slot.is_some() {
                    return Err(ExecError::invalid(format!(
                        "More than one restriction was found for the {which} bound on {}",
                        clustering[first].0.name
                    )));
                }
                *slot = Some(end);
                r.slice = Some((first, low, high));
                Ok(())
            };
        // A key column takes one `=` or one `IN` (Cassandra's messages).
        // The message names the relation found first, as Cassandra's merge does.
        let mut by_in: Vec<(bool, usize)> = Vec::new();
        let mut restrict = |slot: &mut Option<Vec<Bytes>>,
                            values: Vec<Bytes>,
                            c: &ColumnDef,
                            is_in: bool|
         -> Result<(), ExecError> {
            let at = match c.kind {
                ColumnKind::PartitionKey { position } => (true, usize::from(position)),
                ColumnKind::Clustering { position, .. } => (false, usize::from(position)),
                _ => (false, usize::MAX),
            };
            if slot.is_some() {
                return Err(ExecError::invalid(format!(
                    "{} cannot be restricted by more than one relation if it includes {}",
                    c.name,
                    if by_in.contains(&at) {
                        "a IN"
                    } else {
                        "an Equal"
                    }
                )));
            }
            if is_in {
                by_in.push(at);
            }
            *slot = Some(values);
            Ok(())
        };
        for relation in clause {
            match relation {
                Relation::Column {
                    column: name,
                    op,
                    value,
                } => {
                    let c = column(t, &name.0)?;
                    if let ColumnKind::Clustering { position, .. } = c.kind
                        && let Some(kind) = Held::of_op(*op)
                        && (kind != HeldKind::Contains || contained_type(&c.ty, *op).is_some())
                    {
                        hold(Held {
                            first: usize::from(position),
                            width: 1,
                            kind,
                            multi: false,
                        })?;
                    }
                    match (c.kind, op) {
                        (ColumnKind::PartitionKey { .. }, ComparisonOp::NotEqual) => {
                            return Err(ExecError::invalid(format!(
                                "Unsupported \"!=\" relation: {relation}"
                            )));
                        }
                        (ColumnKind::PartitionKey { position }, ComparisonOp::Equal) => {
                            let v = in_condition(run, value, c)?;
                            restrict(&mut r.pk[position as usize], vec![v], c, false)?;
                        }
                        (
                            ColumnKind::PartitionKey { .. },
                            ComparisonOp::Less
                            | ComparisonOp::LessEqual
                            | ComparisonOp::Greater
                            | ComparisonOp::GreaterEqual,
                        ) if select => {
                            r.filters.push(Filter {
                                column: c.clone(),
                                op: *op,
                                value: in_condition(run, value, c)?,
                                any_of: None,
                                element: None,
                            });
                            r.key_filtered = true;
                        }
                        (
                            ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. },
                            ComparisonOp::Contains | ComparisonOp::ContainsKey,
                        ) if select => {
                            // A frozen collection in the key, filtered as Cassandra filters it.
                            r.push_contains(run, c, *op, value)?;
                            match c.kind {
                                ColumnKind::PartitionKey { .. } => r.key_filtered = true,
                                _ => r.clustering_contains = true,
                            }
                        }
                        (
                            ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. },
                            ComparisonOp::Contains | ComparisonOp::ContainsKey,
                        ) if contained_type(&c.ty, *op).is_none() => {
                            return Err(not_a_collection(c, *op));
                        }
                        (ColumnKind::PartitionKey { .. }, _) => {
                            return Err(ExecError::invalid(
                                "Only EQ and IN relation are supported on the partition key (unless you use the token() function)",
                            ));
                        }
                        (ColumnKind::Clustering { position, .. }, ComparisonOp::Equal) => {
                            let v = keyable(select, vec![in_condition(run, value, c)?]);
                            restrict(&mut r.ck[position as usize], v, c, false)?;
                        }
                        (
                            ColumnKind::Clustering { position, .. },
                            ComparisonOp::Greater
                            | ComparisonOp::GreaterEqual
                            | ComparisonOp::Less
                            | ComparisonOp::LessEqual,
                        ) => {
                            let v = in_condition(run, value, c)?;
                            let position = position as usize;
                            // With ALLOW FILTERING, of slices on two clustering columns the
                            // first narrows the clustering range and the other filters its rows;
                            // so without it, where an SAI serves the other's slice.
                            let sai = |p: usize| {
                                select
                                    && super::sai::serves(
                                        t,
                                        clustering[p].0,
                                        ComparisonOp::Greater,
                                        false,
                                    )
                            };
                            match &r.slice {
                                Some((f, ..))
                                    if *f < position && (allow_filtering || sai(position)) =>
                                {
                                    r.filters.push(Filter {
                                        column: c.clone(),
                                        op: *op,
                                        value: v,
                                        any_of: None,
                                        element: None,
                                    });
                                }
                                Some((f, low, high))
                                    if *f > position && (allow_filtering || sai(*f)) =>
                                {
                                    let Some(filters) = slice_filters(clustering[*f].0, low, high)
                                    else {
                                        return Err(after_slice(&clustering[*f].0.name, &c.name));
                                    };
                                    r.filters.extend(filters);
                                    r.slice = None;
                                    set_slice(&mut r, position, *op, vec![v])?;
                                }
                                _ => set_slice(&mut r, position, *op, vec![v])?,
                            }
                        }
                        (
                            ColumnKind::Regular | ColumnKind::Static,
                            ComparisonOp::Equal
                            | ComparisonOp::Less
                            | ComparisonOp::LessEqual
                            | ComparisonOp::Greater
                            | ComparisonOp::GreaterEqual,
                        ) => r.compare_filter(run, c, *op, op.symbol(), value)?,
                        (
                            ColumnKind::Regular | ColumnKind::Static,
                            ComparisonOp::Contains | ComparisonOp::ContainsKey,
                        ) => {
                            r.push_contains(run, c, *op, value)?;
                        }
                        _ => {
                            return Err(ExecError::invalid(format!(
                                "Unsupported \"{}\" relation: {relation}",
                                op.symbol()
                            )));
                        }
                    }
                }
                Relation::In {
                    column: name,
                    negated: false,
                    values,
                } => {
                    let c = column(t, &name.0)?;
                    if let ColumnKind::Clustering { position, .. } = c.kind {
                        let one = matches!(values, InValues::Terms(terms) if terms.len() == 1);
                        hold(Held {
                            first: usize::from(position),
                            width: 1,
                            kind: if one { HeldKind::Equal } else { HeldKind::In },
                            multi: false,
                        })?;
                    }
                    let slot = match c.kind {
                        ColumnKind::PartitionKey { position } => &mut r.pk[usize::from(position)],
                        ColumnKind::Clustering { position, .. } => &mut r.ck[usize::from(position)],
                        _ => {
                            // An IN of one value is taken as `=` (Cassandra lets it through
                            // "for backward compatibility"), naming IN in its refusals.
                            if let InValues::Terms(terms) = values
                                && let [term] = terms.as_slice()
                            {
                                r.compare_filter(run, c, ComparisonOp::Equal, "IN", term)?;
                                continue;
                            }
                            // Of several values, a filter (Cassandra 4.1's CASSANDRA-14344),
                            // which no index serves.
                            refuse_multi_cell(c, "IN")?;
                            r.filters
                                .push(in_filter(c.clone(), in_list(run, values, c)?));
                            continue;
                        }
                    };
                    let vs = in_list(run, values, c)?;
                    let vs = match c.kind {
                        ColumnKind::Clustering { .. } => keyable(select, vs),
                        _ => vs,
                    };
                    restrict(slot, vs, c, true)?;
                }
                Relation::Between {
                    column: name,
                    low,
                    high,
                } => {
                    let c = column(t, &name.0)?;
                    let ColumnKind::Clustering { position, .. } = c.kind else {
                        return Err(ExecError::invalid(format!(
                            "BETWEEN is only supported on clustering columns, not {}",
                            c.name
                        )));
                    };
                    hold(Held {
                        first: usize::from(position),
                        width: 1,
                        kind: HeldKind::Slice {
                            start: true,
                            end: true,
                        },
                        multi: false,
                    })?;
                    let (lo, hi) = (required(run, low, c)?, required(run, high, c)?);
                    set_slice(
                        &mut r,
                        position as usize,
                        ComparisonOp::GreaterEqual,
                        vec![lo],
                    )?;
                    set_slice(&mut r, position as usize, ComparisonOp::LessEqual, vec![hi])?;
                }
                Relation::Token { columns, op, value } => {
                    token_columns(t, columns)?;
                    let token = token_value(t, run, value)?;
                    match op {
                        ComparisonOp::Greater => r.token_low = RangeBound::Excluded(token),
                        ComparisonOp::GreaterEqual => r.token_low = RangeBound::Included(token),
                        ComparisonOp::Less => r.token_high = RangeBound::Excluded(token),
                        ComparisonOp::LessEqual => r.token_high = RangeBound::Included(token),
                        ComparisonOp::Equal => {
                            r.token_low = RangeBound::Included(token);
                            r.token_high = RangeBound::Included(token);
                        }
                        ComparisonOp::NotEqual => {
                            return Err(ExecError::invalid(format!(
                                "Unsupported \"!=\" relation: {relation}"
                            )));
                        }
                        _ => return Err(ExecError::invalid("Invalid token relation")),
                    }
                }
                Relation::MultiColumn { columns, op, value } => {
                    // Cassandra's `Relation.toRestriction` refuses the operator first.
                    let Some(kind) = Held::of_op(*op).filter(|k| *k != HeldKind::Contains) else {
                        return Err(ExecError::invalid(if *op == ComparisonOp::NotEqual {
                            format!("Unsupported \"!=\" relation: {relation}")
                        } else {
                            format!("Unsupported relation {relation}")
                        }));
                    };
                    let cols = columns
                        .iter()
                        .map(|n| column(t, &n.0))
                        .collect::<Result<Vec<_>, _>>()?;
                    let first = multi_column_start(&cols, relation)?;
                    hold(Held {
                        first,
                        width: cols.len(),
                        kind,
                        multi: true,
                    })?;
                    let null = if kind == HeldKind::Equal {
                        NullInTuple::Equality
                    } else {
                        NullInTuple::Slice
                    };
                    let values = tuple_values(run, value, &cols, null)?;
                    match op {
                        ComparisonOp::Equal => {
                            for (i, v) in values.into_iter().enumerate() {
                                let v = keyable(select, vec![v]);
                                restrict(&mut r.ck[first + i], v, cols[i], false)?;
                            }
                        }
                        ComparisonOp::Greater
                        | ComparisonOp::GreaterEqual
                        | ComparisonOp::Less
                        | ComparisonOp::LessEqual => match &r.slice {
                            // With ALLOW FILTERING, a multi-column slice can only narrow the
                            // clustering range: one after another slice would have to filter.
                            Some((f, ..)) if allow_filtering && *f < first => {
                                return Err(ExecError::invalid(MULTI_COLUMN_SLICE_FILTERING));
                            }
                            Some((f, low, high)) if allow_filtering && *f > first => {
                                let Some(filters) = slice_filters(clustering[*f].0, low, high)
                                else {
                                    return Err(ExecError::invalid(MULTI_COLUMN_SLICE_FILTERING));
                                };
                                r.filters.extend(filters);
                                r.slice = None;
                                set_slice(&mut r, first, *op, values)?;
                            }
                            _ => set_slice(&mut r, first, *op, values)?,
                        },
                        _ => {
                            return Err(ExecError::invalid(format!(
                                "Unsupported relation {relation}"
                            )));
                        }
                    }
                }
                Relation::MultiColumnIn {
                    columns,
                    negated: false,
                    values: InValues::Terms(terms),
                } if columns.len() == 1 => {
                    // `(c) IN ((1), (2))`: a single-column IN written as tuples.
                    let c = column(t, &columns[0].0)?;
                    if let ColumnKind::Clustering { position, .. } = c.kind {
                        hold(Held {
                            first: usize::from(position),
                            width: 1,
                            kind: if terms.len() == 1 {
                                HeldKind::Equal
                            } else {
                                HeldKind::In
                            },
                            multi: true,
                        })?;
                    }
                    let null = if terms.len() == 1 {
                        NullInTuple::Equality
                    } else {
                        NullInTuple::In
                    };
                    let mut vs = Vec::new();
                    for term in terms {
                        vs.extend(tuple_values(run, term, &[c], null)?);
                    }
                    let vs = match c.kind {
                        ColumnKind::Clustering { .. } => keyable(select, vs),
                        _ => vs,
                    };
                    match c.kind {
                        ColumnKind::PartitionKey { position } => {
                            restrict(&mut r.pk[position as usize], vs, c, true)?
                        }
                        ColumnKind::Clustering { position, .. } => {
                            restrict(&mut r.ck[position as usize], vs, c, true)?
                        }
                        _ => {
                            return Err(ExecError::invalid(format!(
                                "Unsupported relation {relation}"
                            )));
                        }
                    }
                }
                Relation::MapElement {
                    column: name,
                    key,
                    op,
                    value,
                } => {
                    let c = column(t, &name.0)?;
                    // Cassandra's SingleColumnRelation.newSliceRestriction and toReceivers, in
                    // their order.
                    if is_slice(*op) {
                        refuse_duration_slice(c)?;
                    }
                    if matches!(c.ty, CqlType::List { .. }) {
                        return Err(ExecError::invalid(format!(
                            "Indexes on list entries ({}[index] = value) are not currently supported.",
                            c.name
                        )));
                    }
                    let CqlType::Map {
                        key: key_ty,
                        value: value_ty,
                        frozen,
                    } = &c.ty
                    else {
                        return Err(ExecError::invalid(format!(
                            "Column {} cannot be used as a map",
                            c.name
                        )));
                    };
                    if *frozen {
                        return Err(ExecError::invalid(format!(
                            "Map-entry equality predicates on frozen map column {} are not supported",
                            c.name
                        )));
                    }
                    if *op != ComparisonOp::Equal {
                        return Err(ExecError::invalid(
                            "Only EQ relations are supported on map entries",
                        ));
                    }
                    if !matches!(c.kind, ColumnKind::Regular | ColumnKind::Static) {
                        return Err(ExecError::invalid(format!(
                            "Unsupported relation on column {}",
                            c.name
                        )));
                    }
                    if !matches!(
                        op,
                        ComparisonOp::Equal
                            | ComparisonOp::Less
                            | ComparisonOp::LessEqual
                            | ComparisonOp::Greater
                            | ComparisonOp::GreaterEqual
                    ) {
                        return Err(ExecError::invalid(format!(
                            "Unsupported \"{}\" relation: {relation}",
                            op.symbol()
                        )));
                    }
                    let key = filter_value(run, key, key_ty, c, "map key", &mut r.unbound_filter)?;
                    let value =
                        filter_value(run, value, value_ty, c, "map value", &mut r.unbound_filter)?;
                    r.filters.push(Filter {
                        column: c.clone(),
                        op: *op,
                        value,
                        any_of: None,
                        element: Some(key),
                    });
                }
                Relation::MultiColumnIn {
                    columns,
                    negated: false,
                    values,
                } => {
                    let cols = columns
                        .iter()
                        .map(|n| column(t, &n.0))
                        .collect::<Result<Vec<_>, _>>()?;
                    let first = multi_column_start(&cols, relation)?;
                    let one = matches!(values, InValues::Terms(terms) if terms.len() == 1);
                    hold(Held {
                        first,
                        width: cols.len(),
                        kind: if one { HeldKind::Equal } else { HeldKind::In },
                        multi: true,
                    })?;
                    let null = if one {
                        NullInTuple::Equality
                    } else {
                        NullInTuple::In
                    };
                    let tuples = match values {
                        InValues::Terms(terms) => terms
                            .iter()
                            .map(|term| tuple_values(run, term, &cols, null))
                            .collect::<Result<Vec<_>, _>>()?,
                        InValues::Marker(m) => tuple_list(run, m, &cols)?,
                    };
                    let tuples: Vec<Vec<Bytes>> = tuples
                        .into_iter()
                        .filter(|tuple| {
                            !select
                                || tuple
                                    .iter()
                                    .all(|v| v.len() <= MAX_CLUSTERING_VALUE_SIZE_BYTES)
                        })
                        .collect();
                    for (i, c) in cols.iter().enumerate() {
                        let mut distinct: Vec<Bytes> =
                            tuples.iter().map(|tuple| tuple[i].clone()).collect();
                        distinct.sort();
                        distinct.dedup();
                        restrict(&mut r.ck[first + i], distinct, c, true)?;
                    }
                    r.tuples = Some((first, tuples));
                }
                // Only materialized views take `IS NOT NULL`; Cassandra refuses it elsewhere
                // with this message.
                other @ Relation::IsNotNull { .. } => {
                    return Err(ExecError::invalid(format!(
                        "Unsupported restriction: {other}"
                    )));
                }
                other => {
                    return Err(ExecError::invalid(format!(
                        "relation {other} is not supported by khata yet"
                    )));
                }
            }
        }
        r.key_in = by_in.iter().any(|(partition_key, _)| *partition_key);
        r.ck_equal = merged.equalities();
        Ok(r)
    }

    /// Whether every partition key column is restricted (by `=` or `IN`).
    pub fn has_partition_keys(&self) -> bool {
        self.pk.iter().all(Option::is_some)
    }

    /// The partition key columns the clause leaves unrestricted, in key order.
    pub fn unrestricted_partition_key<'t>(&self, t: &'t TableSchema) -> Vec<&'t str> {
        t.def
            .partition_key()
            .iter()
            .zip(&self.pk)
            .filter(|(_, v)| v.is_none())
            .map(|(c, _)| c.name.as_str())
            .collect()
    }

    /// Whether some but not all partition key columns are restricted.
    pub fn partial_partition_key(&self) -> bool {
        self.pk.iter().any(Option::is_some) && !self.has_partition_keys()
    }

    /// Whether a clustering column is restricted by a slice (`>`, `<=`, ...).
    pub fn has_clustering_slice(&self) -> bool {
        self.slice.is_some()
    }

    /// Whether the clustering key is restricted at all.
    pub fn has_clustering(&self) -> bool {
        self.ck.iter().any(Option::is_some) || self.slice.is_some()
    }

    /// The partition keys named (the cartesian product of `=`/`IN`), sorted by token.
    pub fn partition_keys(&self) -> Result<Vec<DecoratedKey>, ExecError> {
        let mut combos: Vec<Vec<Bytes>> = vec![Vec::new()];
        for values in self.pk.iter().flatten() {
            combos = combos
                .into_iter()
                .flat_map(|k| {
                    values.iter().map(move |v| {
                        let mut k = k.clone();
                        k.push(v.clone());
                        k
                    })
                })
                .collect();
        }
        let mut keys = combos
            .iter()
            .map(|k| PointKey::partition_key(k))
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_by(|a, b| (a.token, &a.key).cmp(&(b.token, &b.key)));
        keys.dedup();
        Ok(keys)
    }

    /// The length of the clustering prefix restricted by `=`/`IN`, checking that no column
    /// after a gap is restricted.
    fn prefix_len(&self, t: &TableSchema) -> Result<usize, ExecError> {
        let n = self.ck.iter().take_while(|v| v.is_some()).count();
        let clustering = t.def.clustering();
        let next_restricted = self
            .ck
            .iter()
            .enumerate()
            .skip(n)
            .find(|(_, v)| v.is_some())
            .map(|(i, _)| i)
            .or(self.slice.as_ref().map(|(f, _, _)| *f).filter(|f| *f > n));
        if let Some(i) = next_restricted {
            if let Some((f, _, _)) = &self.slice
                && *f == n
            {
                return Err(after_slice(&clustering[i].0.name, &clustering[n].0.name));
            }
            return Err(ExecError::invalid(format!(
                "PRIMARY KEY column \"{}\" cannot be restricted as preceding column \"{}\" is not restricted",
                clustering[i].0.name, clustering[n].0.name
            )));
        }
        if let Some((f, _, _)) = &self.slice
            && *f < n
        {
            return Err(ExecError::invalid(format!(
                "Clustering column \"{}\" cannot be restricted by both an equality and an inequality relation",
                clustering[*f].0.name
            )));
        }
        Ok(n)
    }

    /// The clustering prefixes named by `=`/`IN` (one empty prefix when none).
    fn prefixes(&self, t: &TableSchema) -> Result<Vec<Vec<Bytes>>, ExecError> {
        let n = self.prefix_len(t)?;
        let mut combos: Vec<Vec<Bytes>> = vec![Vec::new()];
        let mut position = 0;
        while position < n {
            // A multi-column IN adds whole tuples; any other column, each of its values.
            let extend = |k: &Vec<Bytes>, values: &[Bytes]| {
                let mut k = k.clone();
                k.extend_from_slice(values);
                k
            };
            combos = match &self.tuples {
                Some((first, tuples)) if *first == position => {
                    position += tuples.first().map_or(1, |t| t.len().max(1));
                    combos
                        .iter()
                        .flat_map(|k| tuples.iter().map(move |t| extend(k, t)))
                        .collect()
                }
                _ => {
                    let values = self.ck[position].as_deref().unwrap_or_default();
                    position += 1;
                    combos
                        .iter()
                        .flat_map(|k| {
                            values
                                .iter()
                                .map(move |v| extend(k, std::slice::from_ref(v)))
                        })
                        .collect()
                }
            };
        }
        if let Some((first, _)) = &self.tuples
            && *first >= n
        {
            return Err(ExecError::invalid(
                "Multi-column IN restrictions cannot be used for filtering",
            ));
        }
        Ok(combos)
    }

    /// Whether the restrictions name whole rows (every clustering column by `=`/`IN`).
    pub fn names_rows(&self, t: &TableSchema) -> bool {
        self.slice.is_none() && self.ck.iter().all(Option::is_some) && self.prefix_len(t).is_ok()
    }

    /// The encoded clustering keys or prefixes named by `=`/`IN` (no slice), sorted.
    pub fn clustering_prefixes(&self, t: &TableSchema) -> Result<Vec<Bytes>, ExecError> {
        if self.slice.is_some() {
            return Err(ExecError::invalid(
                "a clustering slice names no single prefix",
            ));
        }
        let mut out = self
            .prefixes(t)?
            .iter()
            .map(|p| encode(t, p))
            .collect::<Result<Vec<_>, _>>()?;
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The clustering byte ranges selected, sorted and disjoint.
    pub fn clustering_ranges(&self, t: &TableSchema) -> Result<Vec<(Bytes, Bytes)>, ExecError> {
        if !self.has_clustering() {
            return Ok(vec![full_range()]);
        }
        let clustering = t.def.clustering();
        let mut ranges = Vec::new();
        for prefix in self.prefixes(t)? {
            let base = encode(t, &prefix)?;
            let Some((first, low, high)) = &self.slice else {
                ranges.push((start_bound(&base, true), end_bound(&base, true)));
                continue;
            };
            let orders: Vec<ClusteringOrder> =
                clustering[*first..].iter().map(|(_, o)| *o).collect();
            let whole = vec![(start_bound(&base, true), end_bound(&base, true))];
            let low = match low {
                Some(e) => slice_end_ranges(t, &prefix, &orders, e, true)?,
                None => whole.clone(),
            };
            let high = match high {
                Some(e) => slice_end_ranges(t, &prefix, &orders, e, false)?,
                None => whole,
            };
            ranges.extend(intersect(&low, &high));
        }
        ranges.sort();
        ranges.dedup();
        Ok(ranges)
    }
}

/// The byte ranges, under the clustering `prefix`, of keys beyond one end of a slice on the
/// columns that follow it: `(c1, c2, ...) > (v1, v2, ...)` is `c1 > v1`, or `c1 = v1 AND
/// c2 > v2`, and so on (and all equal when inclusive), compared in the columns' natural order.
/// A DESC column's bytes are inverted, so "greater" is "before in bytes" there; that is how
/// columns of mixed order get several disjoint ranges. Sorted, disjoint.
fn slice_end_ranges(
    t: &TableSchema,
    prefix: &[Bytes],
    orders: &[ClusteringOrder],
    end: &SliceEnd,
    low: bool,
) -> Result<Vec<(Bytes, Bytes)>, ExecError> {
    let mut out = Vec::new();
    let mut values = prefix.to_vec();
    for (j, v) in end.values.iter().enumerate() {
        let outer = encode(t, &values)?;
        values.push(v.clone());
        let key = encode(t, &values)?;
        let bytes_after = low == (orders[j] == ClusteringOrder::Asc);
        if bytes_after {
            out.push((start_bound(&key, false), end_bound(&outer, true)));
        } else {
            out.push((start_bound(&outer, true), end_bound(&key, false)));
        }
    }
    if end.inclusive {
        let key = encode(t, &values)?;
        out.push((start_bound(&key, true), end_bound(&key, true)));
    }
    Ok(normalize(out))
}

/// Sorted, with overlapping or touching ranges joined and empty ones dropped.
fn normalize(mut ranges: Vec<(Bytes, Bytes)>) -> Vec<(Bytes, Bytes)> {
    ranges.retain(|(a, b)| a < b);
    ranges.sort();
    let mut out: Vec<(Bytes, Bytes)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1 => {
                if b > last.1 {
                    last.1 = b;
                }
            }
            _ => out.push((a, b)),
        }
    }
    out
}

/// The intersection of two sorted, disjoint range lists.
fn intersect(a: &[(Bytes, Bytes)], b: &[(Bytes, Bytes)]) -> Vec<(Bytes, Bytes)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let start = a[i].0.clone().max(b[j].0.clone());
        let end = a[i].1.clone().min(b[j].1.clone());
        if start < end {
            out.push((start, end));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The position of the first of several clustering columns named together in `relation`,
/// checking column by column, as Cassandra's `MultiColumnRelation.receivers`, that they are
/// distinct clustering columns in the primary key's order.
fn multi_column_start(cols: &[&ColumnDef], relation: &Relation) -> Result<usize, ExecError> {
    let mut positions: Vec<usize> = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let ColumnKind::Clustering { position, .. } = c.kind else {
            return Err(ExecError::invalid(format!(
                "Multi-column relations can only be applied to clustering columns but was applied to: {}",
                c.name
            )));
        };
        if cols[..i].iter().any(|other| other.name == c.name) {
            return Err(ExecError::invalid(format!(
                "Column \"{}\" appeared twice in a relation: {relation}",
                c.name
            )));
        }
        let position = usize::from(position);
        if positions.last().is_some_and(|p| position != p + 1) {
            return Err(ExecError::invalid(format!(
                "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: {relation}"
            )));
        }
        positions.push(position);
    }
    Ok(positions[0])
}

/// The tuples of `(a, b) IN ?`: a bound list of tuples.
fn tuple_list(
    run: &Run<'_>,
    marker: &crate::language::ast::BindMarker,
    columns: &[&ColumnDef],
) -> Result<Vec<Vec<Bytes>>, ExecError> {
    let tuple = CqlType::Tuple(columns.iter().map(|c| c.ty.clone()).collect());
    let list = CqlType::List {
        element: Box::new(tuple),
        frozen: true,
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let name = format!("({})", names.join(", "));
    let bytes = match bind::value(run, &Term::Marker(marker.clone()), &list, &name)? {
        Bound::Value(bytes) => bytes,
        // Cassandra's receiver of an IN marker over several columns, `in(a,b)`.
        Bound::Unset => {
            return Err(ExecError::invalid(format!(
                "Invalid unset value for in({})",
                names.join(",")
            )));
        }
        Bound::Null => {
            return Err(ExecError::invalid(format!(
                "Invalid null value for IN restriction on {name}"
            )));
        }
    };
    let Ok(CqlValue::List(items)) = CqlValue::deserialize(&list, &bytes) else {
        return Err(ExecError::invalid(format!("Invalid IN values for {name}")));
    };
    items
        .into_iter()
        .map(|item| tuple_columns(item, columns, &name, NullInTuple::In))
        .collect()
}

/// Encode a clustering prefix (or a whole key) from its columns' values.
pub(crate) fn encode(t: &TableSchema, values: &[Bytes]) -> Result<Bytes, ExecError> {
    let refs: Vec<&[u8]> = values.iter().map(|b| &b[..]).collect();
    encode_refs(t, &refs)
}

/// [`encode`] of borrowed values.
pub(crate) fn encode_refs(t: &TableSchema, values: &[&[u8]]) -> Result<Bytes, ExecError> {
    let types: Vec<(CqlType, ClusteringOrder)> = t
        .def
        .clustering()
        .iter()
        .map(|(c, o)| (c.ty.clone(), *o))
        .collect();
    encode_key(&types, values).map_err(|e| ExecError::invalid(e.to_string()))
}

/// Where a [`PointKey`] value goes.
#[derive(Debug, Clone, Copy)]
enum KeySlot {
    Partition(usize),
    Clustering(usize),
}

/// A WHERE clause that names one row by `=` on every primary-key column, each column once (or,
/// in a table without clustering columns, one partition by its whole key): the shape of a
/// prepared "SELECT ... WHERE k = ?". Worked out once per prepared statement, so that an
/// execution binds its values straight into the partition key and the clustering key instead
/// of going through [`Restrictions`]; it gives what [`Restrictions`] gives for such a clause,
/// with the same errors in the same order.
#[derive(Debug)]
pub(crate) struct PointKey {
    /// The clause's relations in order: the column, its value's term, and its key slot.
    binds: Vec<(ColumnDef, Term, KeySlot)>,
    partition_columns: usize,
    /// The clustering columns' types and orders, to encode the clustering key.
    clustering_types: Vec<(CqlType, ClusteringOrder)>,
}

impl PointKey {
    /// The point key of `clause` on `t`, if the clause is one.
    pub fn of(t: &TableSchema, clause: &[Relation]) -> Option<PointKey> {
        let partition_columns = t.def.partition_key().len();
        let clustering_types: Vec<(CqlType, ClusteringOrder)> = t
            .def
            .clustering()
            .iter()
            .map(|(c, o)| (c.ty.clone(), *o))
            .collect();
        if clause.len() != partition_columns + clustering_types.len() {
            return None;
        }
        let mut seen_pk = vec![false; partition_columns];
        let mut seen_ck = vec![false; clustering_types.len()];
        let mut binds = Vec::with_capacity(clause.len());
        for relation in clause {
            let Relation::Column {
                column: name,
                op: ComparisonOp::Equal,
                value,
            } = relation
            else {
                return None;
            };
            let c = t.def.column(&name.0)?;
            let (seen, slot) = match c.kind {
                ColumnKind::PartitionKey { position } => (
                    seen_pk.get_mut(position as usize)?,
                    KeySlot::Partition(position as usize),
                ),
                ColumnKind::Clustering { position, .. } => (
                    seen_ck.get_mut(position as usize)?,
                    KeySlot::Clustering(position as usize),
                ),
                _ => return None,
            };
            if std::mem::replace(seen, true) {
                return None;
            }
            binds.push((c.clone(), value.clone(), slot));
        }
        Some(PointKey {
            binds,
            partition_columns,
            clustering_types,
        })
    }

    /// Whether the key is a whole partition's (the table has no clustering columns).
    pub fn names_partition(&self) -> bool {
        self.clustering_types.is_empty()
    }

    /// Bind the values of `run`: the partition key's components and the clustering key's
    /// byte range (the whole partition's range when there are no clustering columns). The
    /// partition key is left to [`PointKey::partition_key`], whose errors come after the
    /// clustering key's in [`Restrictions`]' order.
    pub fn bind(&self, run: &Run<'_>) -> Result<(Vec<Bytes>, (Bytes, Bytes)), ExecError> {
        let mut pk = vec![Bytes::new(); self.partition_columns];
        let mut ck = vec![Bytes::new(); self.clustering_types.len()];
        for (c, term, slot) in &self.binds {
            let v = required(run, term, c)?;
            match *slot {
                KeySlot::Partition(i) => pk[i] = v,
                KeySlot::Clustering(i) => ck[i] = v,
            }
        }
        let range = if self.clustering_types.is_empty() {
            full_range()
        } else if ck.iter().any(|v| v.len() > MAX_CLUSTERING_VALUE_SIZE_BYTES) {
            // A value too large for a clustering key: no row has it (an empty range, as
            // [`keyable`] leaves none).
            (Bytes::new(), Bytes::new())
        } else {
            let refs: Vec<&[u8]> = ck.iter().map(|b| &b[..]).collect();
            let base = encode_key(&self.clustering_types, &refs)
                .map_err(|e| ExecError::invalid(e.to_string()))?;
            (start_bound(&base, true), end_bound(&base, true))
        };
        Ok((pk, range))
    }

    /// The partition key of bound components (as [`Restrictions::partition_keys`] makes it).
    pub fn partition_key(components: &[Bytes]) -> Result<DecoratedKey, ExecError> {
        let refs: Vec<&[u8]> = components.iter().map(|b| &b[..]).collect();
        match serialize_partition_key(&refs) {
            Ok(key) if key.is_empty() => Err(ExecError::invalid("Key may not be empty")),
            Ok(key) => Ok(DecoratedKey::new(key)),
            Err(e) => Err(ExecError::invalid(format!("Invalid partition key: {e}"))),
        }
    }
}

/// Cassandra's refusal of a clustering column restricted after one restricted by a slice.
fn after_slice(column: &str, preceding: &str) -> ExecError {
    ExecError::invalid(format!(
        "Clustering column \"{column}\" cannot be restricted (preceding column \"{preceding}\" is restricted by a non-EQ relation)"
    ))
}

/// The filters equal to a slice of one clustering column, if its ends are single values (not
/// multi-column tuples).
fn slice_filters(
    column: &ColumnDef,
    low: &Option<SliceEnd>,
    high: &Option<SliceEnd>,
) -> Option<Vec<Filter>> {
    let single = |e: &Option<SliceEnd>| e.as_ref().is_none_or(|e| e.values.len() == 1);
    if !(single(low) && single(high)) {
        return None;
    }
    let mut filters = Vec::new();
    for (end, inclusive_op, exclusive_op) in [
        (low, ComparisonOp::GreaterEqual, ComparisonOp::Greater),
        (high, ComparisonOp::LessEqual, ComparisonOp::Less),
    ] {
        if let Some(end) = end {
            filters.push(Filter {
                column: column.clone(),
                op: if end.inclusive {
                    inclusive_op
                } else {
                    exclusive_op
                },
                value: end.values[0].clone(),
                any_of: None,
                element: None,
            });
        }
    }
    Some(filters)
}

/// How a clustering restriction restricts, as Cassandra's restriction classes do.
#[derive(Clone, Copy, Debug, PartialEq)]
enum HeldKind {
    Equal,
    In,
    /// Which ends it has.
    Slice {
        start: bool,
        end: bool,
    },
    Contains,
}

/// A clustering restriction as Cassandra holds it: the columns it covers (`width` of them from
/// `first`), how it restricts, and whether it is a multi-column one (`(a, b) op ...`).
#[derive(Clone, Copy, Debug)]
struct Held {
    first: usize,
    width: usize,
    kind: HeldKind,
    multi: bool,
}

impl Held {
    fn columns(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.width
    }

    fn is_slice(&self) -> bool {
        matches!(self.kind, HeldKind::Slice { .. })
    }

    /// The kind of a single-column relation's operator (`IN` of one value is `=`).
    fn of_op(op: ComparisonOp) -> Option<HeldKind> {
        Some(match op {
            ComparisonOp::Equal => HeldKind::Equal,
            ComparisonOp::Greater | ComparisonOp::GreaterEqual => HeldKind::Slice {
                start: true,
                end: false,
            },
            ComparisonOp::Less | ComparisonOp::LessEqual => HeldKind::Slice {
                start: false,
                end: true,
            },
            ComparisonOp::Contains | ComparisonOp::ContainsKey => HeldKind::Contains,
            _ => return None,
        })
    }
}

/// The clustering restrictions as Cassandra's `ClusteringColumnRestrictions` merges them, kept
/// beside [`Restrictions`]' own to refuse what Cassandra refuses, in its words and its order:
/// two relations on a column merged (`RestrictionSet.addRestriction`, each restriction's
/// `mergeWith`), then a relation after a sliced column, or a slice before a restricted one,
/// without ALLOW FILTERING (`ClusteringColumnRestrictions.mergeWith`).
struct ClusteringSet<'t> {
    names: Vec<&'t str>,
    /// Per clustering column, the index in `held` of the restriction covering it.
    by_column: Vec<Option<usize>>,
    held: Vec<Held>,
}

impl<'t> ClusteringSet<'t> {
    fn new(t: &'t TableSchema) -> ClusteringSet<'t> {
        let names: Vec<&str> = t
            .def
            .clustering()
            .iter()
            .map(|(c, _)| c.name.as_str())
            .collect();
        ClusteringSet {
            by_column: vec![None; names.len()],
            names,
            held: Vec::new(),
        }
    }

    /// Adds `new`; `check_order`: Cassandra's checks of where it stands (no ALLOW FILTERING,
    /// and no index serves it).
    fn add(&mut self, new: Held, check_order: bool) -> Result<(), ExecError> {
        let mut existing: Vec<usize> = new.columns().filter_map(|p| self.by_column[p]).collect();
        existing.dedup();
        let last = self
            .by_column
            .iter()
            .rev()
            .find_map(|i| *i)
            .map(|i| self.held[i]);
        let next = (new.first + 1..self.by_column.len()).find(|p| self.by_column[*p].is_some());
        let merged = if existing.is_empty() {
            vec![new]
        } else {
            existing
                .iter()
                .map(|i| self.merge(self.held[*i], new))
                .collect::<Result<Vec<_>, _>>()?
        };
        for held in merged {
            self.held.push(held);
            for p in held.columns() {
                self.by_column[p] = Some(self.held.len() - 1);
            }
        }
        let Some(last) = last.filter(|_| check_order) else {
            return Ok(());
        };
        if last.is_slice() && new.first > last.first {
            return Err(after_slice(self.names[new.first], self.names[last.first]));
        }
        if new.first < last.first
            && new.is_slice()
            && let Some(next) = next
        {
            return Err(ExecError::invalid(format!(
                "PRIMARY KEY column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                self.names[next], self.names[new.first]
            )));
        }
        Ok(())
    }

    /// Per clustering column, whether an equality restricts it.
    fn equalities(&self) -> Vec<bool> {
        self.by_column
            .iter()
            .map(|i| i.is_some_and(|i| self.held[i].kind == HeldKind::Equal))
            .collect()
    }

    /// `held.mergeWith(new)`, as Cassandra's restriction classes merge (a single-column
    /// restriction meeting a multi-column one is taken as a multi-column one of its column).
    fn merge(&self, held: Held, new: Held) -> Result<Held, ExecError> {
        let multi = held.multi || (new.multi && held.kind != HeldKind::Contains);
        let common = if multi {
            let columns: Vec<&str> = held
                .columns()
                .filter(|p| new.columns().contains(p))
                .map(|p| self.names[p])
                .collect();
            columns.join(" ,")
        } else {
            self.names[held.first].to_string()
        };
        let refuse = |message: String| Err(ExecError::invalid(message));
        match held.kind {
            HeldKind::Equal => refuse(format!(
                "{common} cannot be restricted by more than one relation if it includes an Equal"
            )),
            HeldKind::In => refuse(format!(
                "{common} cannot be restricted by more than one relation if it includes a IN"
            )),
            HeldKind::Contains => match new.kind {
                HeldKind::Contains => Ok(held),
                _ => refuse(format!(
                    "Collection column {common} can only be restricted by CONTAINS, CONTAINS KEY, or map-entry equality"
                )),
            },
            HeldKind::Slice { start, end } => {
                let HeldKind::Slice {
                    start: new_start,
                    end: new_end,
                } = new.kind
                else {
                    return refuse(format!(
                        "Column \"{common}\" cannot be restricted by both an equality and an inequality relation"
                    ));
                };
                if multi && held.first != new.first {
                    return refuse(format!(
                        "Column \"{}\" cannot be restricted by two inequalities not starting with the same column",
                        self.names[held.first.max(new.first)]
                    ));
                }
                for (both, which) in [(start && new_start, "start"), (end && new_end, "end")] {
                    if both {
                        return refuse(format!(
                            "More than one restriction was found for the {which} bound on {common}"
                        ));
                    }
                }
                Ok(Held {
                    first: held.first,
                    width: held.width.max(new.width),
                    kind: HeldKind::Slice {
                        start: start || new_start,
                        end: end || new_end,
                    },
                    multi,
                })
            }
        }
    }
}
