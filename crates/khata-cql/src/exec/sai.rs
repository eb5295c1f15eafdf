//! Cassandra 5.0's Storage-Attached Index (SAI) as khata keeps it: which `USING` class names
//! it, which options it takes (and Cassandra's refusals of the others), and the similarity
//! function a vector index orders `ANN OF` queries by.
//!
//! An SAI on a vector column keeps no entries: an `ANN OF` query scans the table, or the
//! partitions its WHERE clause names, and keeps the best rows (an exact search, see
//! `ann.rs`). An SAI on any other column is backed by the regular index machinery
//! (`khata_replica::index`), so it looks up `=`, `CONTAINS`, `CONTAINS KEY` and map entries as a
//! regular index does. As in Cassandra 5.0, the SAIs of a table serve a query together: a
//! WHERE clause whose every restriction some SAI supports ([`serves`]: ranges too, on the
//! types SAI orders) needs no ALLOW FILTERING. khata answers the range restrictions by
//! scanning (or from the rows an `=` lookup found), checking each row as ALLOW FILTERING does.
//! Text analyzers are not implemented, and their options are refused rather than ignored.

use std::collections::BTreeMap;

use khata_coordinator::catalog::{CustomIndex, IndexDef, IndexKind, TableSchema};
use khata_types::schema::{ColumnDef, CqlType};

use crate::language::ast::ComparisonOp;

use super::error::ExecError;
use super::native_scalars::Similarity;

/// SAI's class, as `system_schema.indexes` names it when created with the full name.
pub(crate) const SAI_CLASS: &str = "org.apache.cassandra.index.sai.StorageAttachedIndex";

/// Whether `class` (a `USING` string) names SAI: its full class name, `StorageAttachedIndex`
/// or `sai`, in any case (Cassandra 5.0's `IndexMetadata` aliases).
pub(crate) fn is_sai_class(class: &str) -> bool {
    [SAI_CLASS, "StorageAttachedIndex", "sai"]
        .iter()
        .any(|c| c.eq_ignore_ascii_case(class))
}

/// Whether `class` names Cassandra's regular (legacy) index, `CREATE INDEX ... USING
/// 'legacy_local_table'` in Cassandra 5.0.
pub(crate) fn is_legacy_class(class: &str) -> bool {
    class.eq_ignore_ascii_case("legacy_local_table")
}

const VECTOR_OPTIONS: [&str; 5] = [
    "similarity_function",
    "source_model",
    "optimize_for",
    "maximum_node_connections",
    "construction_beam_width",
];
const ANALYZER_OPTIONS: [&str; 4] = ["case_sensitive", "normalize", "ascii", "index_analyzer"];
const SOURCE_MODELS: [&str; 8] = [
    "ADA002",
    "OPENAI_V3_SMALL",
    "OPENAI_V3_LARGE",
    "BERT",
    "GECKO",
    "NV_QA_4",
    "COHERE_V3",
    "OTHER",
];

/// Check the options of an SAI named `index` on `column`, as Cassandra 5.0's
/// `StorageAttachedIndex.validateOptions` and `IndexWriterConfig.fromOptions` do, in their
/// words; khata refuses the analyzer options of text indexes, which it does not implement.
pub(crate) fn check_options(
    index: &str,
    column: &ColumnDef,
    options: &BTreeMap<String, String>,
) -> Result<(), ExecError> {
    let unknown: Vec<&str> = options
        .keys()
        .map(String::as_str)
        .filter(|k| !VECTOR_OPTIONS.contains(k) && !ANALYZER_OPTIONS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(ExecError::Body(crate::frame::ErrorBody::new(
            crate::frame::ErrorKind::ConfigError,
            format!(
                "Properties specified [{}] are not understood by StorageAttachedIndex",
                unknown.join(", ")
            ),
        )));
    }
    if let Some(k) = options
        .keys()
        .find(|k| ANALYZER_OPTIONS.contains(&k.as_str()))
    {
        return Err(ExecError::invalid(format!(
            "khata's StorageAttachedIndex does not support the analyzer option '{k}': it matches \
             whole values, as a regular index does"
        )));
    }
    let is_vector = matches!(column.ty, CqlType::Vector { .. });
    if !is_vector && options.keys().any(|k| VECTOR_OPTIONS.contains(&k.as_str())) {
        return Err(ExecError::invalid(format!(
            "CQL type {} cannot have vector options",
            khata_types::type_text::type_text(&column.ty)
        )));
    }
    if options.contains_key("maximum_node_connections") {
        return Err(ExecError::invalid(
            "Maximum node connections cannot be set without enabling SAI_HNSW_ALLOW_CUSTOM_PARAMETERS",
        ));
    }
    if options.contains_key("construction_beam_width") {
        return Err(ExecError::invalid(
            "Construction beam width cannot be set without enabling SAI_HNSW_ALLOW_CUSTOM_PARAMETERS",
        ));
    }
    if let Some(f) = options.get("similarity_function")
        && parse_similarity(f).is_none()
    {
        return Err(ExecError::invalid(format!(
            "Similarity function {} was not recognized for index {index}. Valid values are: EUCLIDEAN, DOT_PRODUCT, COSINE",
            f.to_uppercase()
        )));
    }
    if let Some(o) = options.get("optimize_for")
        && !["latency", "recall"]
            .iter()
            .any(|v| v.eq_ignore_ascii_case(o))
    {
        return Err(ExecError::invalid(format!(
            "optimize_for '{o}' was not recognized for index {index}. Valid values are: LATENCY, RECALL"
        )));
    }
    if let Some(m) = options.get("source_model")
        && !SOURCE_MODELS.iter().any(|v| v.eq_ignore_ascii_case(m))
    {
        return Err(ExecError::invalid(format!(
            "source_model '{m}' was not recognized for index {index}. Valid values are: {}",
            SOURCE_MODELS.join(", ")
        )));
    }
    Ok(())
}

fn parse_similarity(text: &str) -> Option<Similarity> {
    match text.to_ascii_uppercase().as_str() {
        "COSINE" => Some(Similarity::Cosine),
        "EUCLIDEAN" => Some(Similarity::Euclidean),
        "DOT_PRODUCT" => Some(Similarity::DotProduct),
        _ => None,
    }
}

/// The custom index record of an SAI created with `class` and `options`.
pub(crate) fn custom_index(class: &str, options: BTreeMap<String, String>) -> CustomIndex {
    CustomIndex {
        class_name: class.to_string(),
        options,
    }
}

/// Whether `index` is an SAI (whatever alias it was created with).
pub(crate) fn is_sai(index: &IndexDef) -> bool {
    index
        .custom
        .as_ref()
        .is_some_and(|c| is_sai_class(&c.class_name))
}

/// The SAI on vector column `column` of `t` that orders `ANN OF` queries, and its similarity
/// function (cosine unless the index says otherwise); the first by name when there are several.
pub(crate) fn vector_index<'t>(
    t: &'t TableSchema,
    column: &str,
) -> Option<(&'t IndexDef, Similarity)> {
    let mut found: Vec<&IndexDef> = t
        .indexes
        .iter()
        .filter(|i| is_sai(i) && i.column().0 == column)
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    let index = found.into_iter().next()?;
    let similarity = index
        .custom
        .as_ref()
        .and_then(|c| c.options.get("similarity_function"))
        .and_then(|f| parse_similarity(f))
        .unwrap_or(Similarity::Cosine);
    Some((index, similarity))
}

/// Whether an SAI of `t` on `column` supports `op` (`element`: a map entry's `m[k] op v`), as
/// Cassandra 5.0's `IndexTermType.supports` says: `CONTAINS KEY` through `keys()`, `CONTAINS`
/// through `values()`, `m[k] =` through `entries()`, `=` through `full()` or on a plain value,
/// and the slices on a plain value of a type SAI keeps in order (not the equality-only text,
/// ascii, boolean and uuid, nor the literal frozen types). `IN` is no index operator in 5.0.
pub(crate) fn serves(t: &TableSchema, column: &ColumnDef, op: ComparisonOp, element: bool) -> bool {
    t.indexes.iter().any(|i| {
        let (name, kind) = i.column();
        is_sai(i)
            && i.has_storage(&t.def)
            && name == column.name
            && match (kind, op) {
                (IndexKind::Keys, ComparisonOp::ContainsKey)
                | (IndexKind::Values, ComparisonOp::Contains) => !element,
                (IndexKind::Entries, ComparisonOp::Equal) => element,
                (IndexKind::Full | IndexKind::Simple, ComparisonOp::Equal) => !element,
                (
                    IndexKind::Simple,
                    ComparisonOp::Less
                    | ComparisonOp::LessEqual
                    | ComparisonOp::Greater
                    | ComparisonOp::GreaterEqual,
                ) => !element && ordered(&column.ty),
                _ => false,
            }
    })
}

/// Whether SAI answers ranges of a column of type `ty`: not of the types it indexes for
/// equality only, nor of the literal ones (frozen collections, tuples and UDTs).
fn ordered(ty: &CqlType) -> bool {
    !matches!(
        ty,
        CqlType::Text
            | CqlType::Ascii
            | CqlType::Boolean
            | CqlType::Uuid
            | CqlType::Duration
            | CqlType::Counter
            | CqlType::List { .. }
            | CqlType::Set { .. }
            | CqlType::Map { .. }
            | CqlType::Tuple(_)
            | CqlType::Udt { .. }
            | CqlType::Vector { .. }
    )
}

/// Whether `index` is an SAI whose lookups compare decimals: SAI finds `1.10` for `1.1`
/// (it compares decimals by value), where the entries khata keeps are the values' bytes, so
/// such a restriction is answered by reading the rows and comparing them instead.
pub(crate) fn compares_decimals(t: &TableSchema, index: &IndexDef) -> bool {
    if !is_sai(index) {
        return false;
    }
    let (name, kind) = index.column();
    let Some(column) = t.def.column(&name) else {
        return false;
    };
    let decimal = |ty: &CqlType| *ty == CqlType::Decimal;
    match (&column.ty, kind) {
        (CqlType::List { element, .. } | CqlType::Set { element, .. }, IndexKind::Values) => {
            decimal(element)
        }
        (CqlType::Map { value, .. }, IndexKind::Values) => decimal(value),
        (CqlType::Map { key, .. }, IndexKind::Keys) => decimal(key),
        (CqlType::Map { key, value, .. }, IndexKind::Entries) => decimal(key) || decimal(value),
        (ty, IndexKind::Simple) => decimal(ty),
        _ => false,
    }
}
