//! CreateTable, UpdateTable and DeleteTable: validation with DynamoDB's messages, then one
//! schema change each through [`Coordinator::change_schema`](khata_coordinator::Coordinator).
//!
//! CreateTable makes the table's keyspace, then the table (whose `extensions` carry the
//! DynamoDB metadata, [`crate::tables`]); if the second step fails the keyspace is dropped
//! again. Two concurrent CreateTables of one name race on the keyspace: the loser gets
//! `ResourceInUseException` as if it had come second. DeleteTable drops the keyspace.

use serde_json::{Value, json};

use super::describe::{iso8601_millis, table_description};
use super::input::{self, Object, Violations};
use super::{Operations, RequestInfo};
use crate::error::{DynamoError, ErrorKind, Result};
use crate::indexes::Projected;
use crate::tables::{
    self, ATTRS_COLUMN, AttributeDefinition, FORMAT_VERSION, IndexMeta, KeyElement, StreamMeta,
    TableMeta, Throughput,
};
use khata_coordinator::CoordinatorError;
use khata_coordinator::catalog::{ReplicaError, SchemaChange};

/// DynamoDB's quotas on indexes per table.
pub const MAX_GSIS: usize = 20;
pub const MAX_LSIS: usize = 5;
/// Tags per resource.
pub const MAX_TAGS: usize = 50;

const BILLING_MODES: &[&str] = &["PROVISIONED", "PAY_PER_REQUEST"];
const STREAM_VIEW_TYPES: &[&str] = &["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"];

pub(super) fn invalid(message: impl std::fmt::Display) -> DynamoError {
    DynamoError::validation(format!(
        "One or more parameter values were invalid: {message}"
    ))
}

/// The most HASH and the most RANGE elements a global secondary index's key schema may have
/// (DynamoDB's multi-attribute keys); a table's or local index's has one of each at most.
pub const MAX_GSI_KEY_ATTRIBUTES_PER_ROLE: usize = 4;

/// The longest key schema of a table or local secondary index.
const MAX_KEY_SCHEMA: usize = 2;

/// A `KeySchema` list of at most `max` elements: shape checks as violations at `path`.
fn key_schema(
    list: Option<Vec<&Object>>,
    path: &str,
    max: usize,
    v: &mut Violations,
) -> Result<Vec<KeyElement>> {
    let Some(list) = list else {
        v.null(path);
        return Ok(Vec::new());
    };
    if list.is_empty() {
        v.push("'[]'", path, "must have length greater than or equal to 1");
    }
    if list.len() > max {
        v.push(
            &format!("'{}'", list.len()),
            path,
            &format!("must have length less than or equal to {max}"),
        );
    }
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let at = format!("{path}.{}.member", i + 1);
        let name = input::string(e, "AttributeName")?;
        let key_type = input::string(e, "KeyType")?;
        key_attribute_name(name, &format!("{at}.attributeName"), v);
        match key_type {
            None => v.null(&format!("{at}.keyType")),
            Some(t) => v.one_of(t, &format!("{at}.keyType"), &["HASH", "RANGE"]),
        }
        out.push(KeyElement {
            attribute_name: name.unwrap_or_default().to_string(),
            key_type: key_type.unwrap_or_default().to_string(),
        });
    }
    Ok(out)
}

/// The longest name of a key attribute (of the table or an index), of an attribute
/// definition, or of an attribute an index projects, in bytes.
pub const MAX_KEY_ATTRIBUTE_NAME_BYTES: usize = 255;

/// The shape check of such a name (`path` is where it was): present, 1 to 255 bytes.
pub(super) fn key_attribute_name(name: Option<&str>, path: &str, v: &mut Violations) {
    match name {
        None => v.null(path),
        Some(n) if n.is_empty() || n.len() > MAX_KEY_ATTRIBUTE_NAME_BYTES => v.push(
            &format!("'{n}'"),
            path,
            "must have length between 1 and 255",
        ),
        _ => {}
    }
}

/// The semantic checks of a key schema (after its shape passed).
pub(super) fn check_key_order(keys: &[KeyElement], what: &str) -> Result<()> {
    if keys.first().is_some_and(|k| k.key_type != "HASH") {
        return Err(DynamoError::validation(format!(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type{what}"
        )));
    }
    if keys.get(1).is_some_and(|k| k.key_type != "RANGE") {
        return Err(DynamoError::validation(format!(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type{what}"
        )));
    }
    if keys.len() == 2 && keys[0].attribute_name == keys[1].attribute_name {
        return Err(DynamoError::validation(
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ));
    }
    Ok(())
}

/// The semantic checks of a global secondary index's key schema: one to four HASH elements,
/// then up to four RANGE elements (multi-attribute keys), no attribute twice. A one- or
/// two-element schema gets the table's checks and messages.
pub(super) fn check_index_key_order(keys: &[KeyElement], what: &str) -> Result<()> {
    if keys.len() <= 2 && keys.get(1).is_none_or(|k| k.key_type == "RANGE") {
        return check_key_order(keys, what);
    }
    if keys.first().is_some_and(|k| k.key_type != "HASH") {
        return check_key_order(keys, what);
    }
    let hashes = keys.iter().take_while(|k| k.key_type == "HASH").count();
    if keys[hashes..].iter().any(|k| k.key_type != "RANGE") {
        return Err(DynamoError::validation(format!(
            "Invalid KeySchema: All HASH KeySchemaElements must come before the RANGE KeySchemaElements{what}"
        )));
    }
    let ranges = keys.len() - hashes;
    if hashes > MAX_GSI_KEY_ATTRIBUTES_PER_ROLE || ranges > MAX_GSI_KEY_ATTRIBUTES_PER_ROLE {
        return Err(DynamoError::validation(format!(
            "Invalid KeySchema: A KeySchema may have at most {MAX_GSI_KEY_ATTRIBUTES_PER_ROLE} HASH and {MAX_GSI_KEY_ATTRIBUTES_PER_ROLE} RANGE KeySchemaElements{what}"
        )));
    }
    for (i, k) in keys.iter().enumerate() {
        if keys[..i]
            .iter()
            .any(|o| o.attribute_name == k.attribute_name)
        {
            return Err(DynamoError::validation(format!(
                "Invalid KeySchema: Duplicate AttributeName {} in KeySchema{what}",
                k.attribute_name
            )));
        }
    }
    Ok(())
}

fn throughput(obj: Option<&Object>, path: &str, v: &mut Violations) -> Result<Option<Throughput>> {
    let Some(obj) = obj else {
        return Ok(None);
    };
    let read = input::integer(obj, "ReadCapacityUnits")?;
    let write = input::integer(obj, "WriteCapacityUnits")?;
    for (value, member) in [(read, "readCapacityUnits"), (write, "writeCapacityUnits")] {
        match value {
            None => v.null(&format!("{path}.{member}")),
            Some(n) if n < 1 => v.push(
                &format!("'{n}'"),
                &format!("{path}.{member}"),
                "must have value greater than or equal to 1",
            ),
            _ => {}
        }
    }
    // DynamoDB's ceiling on a table's or index's capacity units.
    for (value, member) in [(read, "ReadCapacityUnits"), (write, "WriteCapacityUnits")] {
        if let Some(n) = value
            && n > MAX_CAPACITY_UNITS
        {
            return Err(DynamoError::validation(format!(
                "Given value {n} for {member} is out of bounds"
            )));
        }
    }
    Ok(Some(Throughput {
        read_capacity_units: read.unwrap_or(0),
        write_capacity_units: write.unwrap_or(0),
    }))
}

/// The most capacity units a table or index may be given.
const MAX_CAPACITY_UNITS: i64 = 1_000_000_000_000;

fn projection(obj: Option<&Object>, path: &str, v: &mut Violations) -> Result<Value> {
    let Some(obj) = obj else {
        v.null(path);
        return Ok(Value::Null);
    };
    let kind = input::string(obj, "ProjectionType")?;
    let non_key = input::string_list(obj, "NonKeyAttributes")?;
    if let Some(names) = &non_key
        && names
            .iter()
            .any(|n| n.is_empty() || n.len() > MAX_KEY_ATTRIBUTE_NAME_BYTES)
    {
        v.push(
            &format!("'[{}]'", names.join(", ")),
            &format!("{path}.nonKeyAttributes"),
            "must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 1]",
        );
    }
    if let Some(k) = kind {
        v.one_of(
            k,
            &format!("{path}.projectionType"),
            &["ALL", "KEYS_ONLY", "INCLUDE"],
        );
    }
    if !v.is_empty() {
        return Ok(Value::Null);
    }
    match (kind, &non_key) {
        (Some("INCLUDE"), None) => {
            return Err(invalid(
                "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
            ));
        }
        (Some(k @ ("ALL" | "KEYS_ONLY")), Some(_)) | (Some(k @ ("ALL" | "KEYS_ONLY")), None)
            if non_key.is_some() =>
        {
            return Err(invalid(format!(
                "ProjectionType is {k}, but NonKeyAttributes is specified"
            )));
        }
        (None, _) => return Err(invalid("Unknown ProjectionType: null")),
        _ => {}
    }
    let mut out = json!({ "ProjectionType": kind });
    if let Some(attrs) = non_key {
        out["NonKeyAttributes"] = json!(attrs);
    }
    Ok(out)
}

/// One `GlobalSecondaryIndexes` (`global`) or `LocalSecondaryIndexes` member.
pub(super) fn index(
    obj: &Object,
    path: &str,
    global: bool,
    v: &mut Violations,
) -> Result<IndexMeta> {
    let name = input::string(obj, "IndexName")?;
    v.name(name, &format!("{path}.indexName"));
    let max = match global {
        true => 2 * MAX_GSI_KEY_ATTRIBUTES_PER_ROLE,
        false => MAX_KEY_SCHEMA,
    };
    let keys = key_schema(
        input::object_list(obj, "KeySchema")?,
        &format!("{path}.keySchema"),
        max,
        v,
    )?;
    let projection = projection(
        input::object(obj, "Projection")?,
        &format!("{path}.projection"),
        v,
    )?;
    let provisioned = throughput(
        input::object(obj, "ProvisionedThroughput")?,
        &format!("{path}.provisionedThroughput"),
        v,
    )?;
    Ok(IndexMeta {
        index_name: name.unwrap_or_default().to_string(),
        key_schema: keys,
        projection,
        provisioned_throughput: provisioned,
        index_status: None,
        table_id: None,
    })
}

fn stream(obj: Option<&Object>, now_micros: i64) -> Result<Option<StreamMeta>> {
    let Some(obj) = obj else {
        return Ok(None);
    };
    let enabled = input::boolean(obj, "StreamEnabled")?;
    let view = input::string(obj, "StreamViewType")?;
    let mut v = Violations::default();
    if let Some(view) = view {
        v.one_of(
            view,
            "streamSpecification.streamViewType",
            STREAM_VIEW_TYPES,
        );
    }
    v.finish()?;
    match (enabled, view) {
        (None, _) => Err(DynamoError::validation(
            "StreamSpecification: StreamEnabled is required",
        )),
        (Some(true), None) => Err(invalid(
            "You must specify a StreamViewType when enabling a stream",
        )),
        (Some(true), Some(view)) => Ok(Some(StreamMeta {
            enabled: true,
            view_type: view.to_string(),
            label: iso8601_millis(now_micros),
        })),
        (Some(false), Some(_)) => Err(invalid(
            "You cannot modify StreamViewType when disabling a stream",
        )),
        (Some(false), None) => Ok(None),
    }
}

/// Tags of a request (`Tags: [{Key, Value}]`), checked.
/// The characters a tag's key and value may have, as AWS writes the constraint.
const TAG_PATTERN: &str = r"must satisfy regular expression pattern: [\p{L}\p{Z}\p{N}_.:/=+\-@]*";

/// Whether `text` has only what a tag may: letters, numbers, spaces (separators, not
/// control characters such as tabs) and `_ . : / = + - @`.
fn tag_text(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_alphabetic()
            || c.is_numeric()
            || (c.is_whitespace() && !c.is_control())
            || "_.:/=+-@".contains(c)
    })
}

pub fn parse_tags(list: Option<Vec<&Object>>, path: &str) -> Result<Vec<(String, String)>> {
    let mut v = Violations::default();
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, t) in list.unwrap_or_default().iter().enumerate() {
        let at = format!("{path}.{}.member", i + 1);
        let key = input::string(t, "Key")?;
        let value = input::string(t, "Value")?;
        match key {
            None => v.null(&format!("{at}.key")),
            Some(k) if k.is_empty() || k.chars().count() > 128 => v.push(
                &format!("'{k}'"),
                &format!("{at}.key"),
                "must have length between 1 and 128",
            ),
            Some(k) if !tag_text(k) => v.push(&format!("'{k}'"), &format!("{at}.key"), TAG_PATTERN),
            _ => {}
        }
        match value {
            None => v.null(&format!("{at}.value")),
            Some(x) if x.chars().count() > 256 => v.push(
                &format!("'{x}'"),
                &format!("{at}.value"),
                "must have length less than or equal to 256",
            ),
            Some(x) if !tag_text(x) => {
                v.push(&format!("'{x}'"), &format!("{at}.value"), TAG_PATTERN)
            }
            _ => {}
        }
        if let (Some(k), Some(x)) = (key, value) {
            out.retain(|(ek, _)| ek != k);
            out.push((k.to_string(), x.to_string()));
        }
    }
    v.finish()?;
    Ok(out)
}

/// The key attributes of `keys` must be defined; returns the defined type of each.
pub(super) fn check_defined(keys: &[KeyElement], defs: &[AttributeDefinition]) -> Result<()> {
    let missing: Vec<&str> = keys
        .iter()
        .filter(|k| !defs.iter().any(|d| d.attribute_name == k.attribute_name))
        .map(|k| k.attribute_name.as_str())
        .collect();
    if !missing.is_empty() {
        let names: Vec<&str> = defs.iter().map(|d| d.attribute_name.as_str()).collect();
        let keys: Vec<&str> = keys.iter().map(|k| k.attribute_name.as_str()).collect();
        return Err(invalid(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            keys.join(", "),
            names.join(", ")
        )));
    }
    Ok(())
}

/// Everything CreateTable checks, in DynamoDB's order: shapes (all violations together), then
/// the meaning.
fn parse_create(body: &Object, now_micros: i64) -> Result<TableMeta> {
    let mut v = Violations::default();
    let name = input::string(body, "TableName")?;
    v.name(name, "tableName");
    let keys = key_schema(
        input::object_list(body, "KeySchema")?,
        "keySchema",
        MAX_KEY_SCHEMA,
        &mut v,
    )?;
    let mut defs = Vec::new();
    match input::object_list(body, "AttributeDefinitions")? {
        None => v.null("attributeDefinitions"),
        Some(list) => {
            for (i, d) in list.iter().enumerate() {
                let at = format!("attributeDefinitions.{}.member", i + 1);
                let n = input::string(d, "AttributeName")?;
                let t = input::string(d, "AttributeType")?;
                key_attribute_name(n, &format!("{at}.attributeName"), &mut v);
                match t {
                    None => v.null(&format!("{at}.attributeType")),
                    Some(t) => v.one_of(t, &format!("{at}.attributeType"), &["B", "N", "S"]),
                }
                defs.push(AttributeDefinition {
                    attribute_name: n.unwrap_or_default().to_string(),
                    attribute_type: t.unwrap_or_default().to_string(),
                });
            }
        }
    }
    let billing = input::string(body, "BillingMode")?;
    if let Some(b) = billing {
        v.one_of(b, "billingMode", BILLING_MODES);
    }
    let provisioned = throughput(
        input::object(body, "ProvisionedThroughput")?,
        "provisionedThroughput",
        &mut v,
    )?;
    let mut gsis = Vec::new();
    for (i, g) in input::object_list(body, "GlobalSecondaryIndexes")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        gsis.push(index(
            g,
            &format!("globalSecondaryIndexes.{}.member", i + 1),
            true,
            &mut v,
        )?);
    }
    let mut lsis = Vec::new();
    for (i, l) in input::object_list(body, "LocalSecondaryIndexes")?
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        lsis.push(index(
            l,
            &format!("localSecondaryIndexes.{}.member", i + 1),
            false,
            &mut v,
        )?);
    }
    let tags = input::object_list(body, "Tags")?;
    let stream_spec = input::object(body, "StreamSpecification")?;
    let deletion_protection = input::boolean(body, "DeletionProtectionEnabled")?.unwrap_or(false);
    let options = super::table_options::requested(body)?;
    v.finish()?;
    let name = name.unwrap_or_default();

    check_key_order(&keys, "")?;
    for (i, a) in defs.iter().enumerate() {
        if defs[..i]
            .iter()
            .any(|b| b.attribute_name == a.attribute_name)
        {
            return Err(DynamoError::validation(format!(
                "Attribute Name is duplicated: {}",
                a.attribute_name
            )));
        }
    }
    // Fewer definitions than key attributes, on a table without secondary indexes, is a
    // key schema error to DynamoDB (moto's AWS-verified `_throw_attr_error`).
    if gsis.is_empty() && lsis.is_empty() && defs.len() < keys.len() {
        return Err(DynamoError::validation(
            "Invalid KeySchema: Some index key attribute have no definition",
        ));
    }
    check_defined(&keys, &defs)?;
    for k in &keys {
        if k.attribute_name == ATTRS_COLUMN {
            return Err(invalid(format!(
                "the key attribute name {ATTRS_COLUMN} is reserved by khata"
            )));
        }
    }
    let billing_mode_stated = billing.is_some();
    let billing = billing.unwrap_or("PROVISIONED");
    let throughput = match (billing, provisioned) {
        ("PROVISIONED", Some(t)) => t,
        ("PROVISIONED", None) => {
            return Err(invalid(
                "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
            ));
        }
        (_, Some(_)) => {
            return Err(invalid(
                "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
            ));
        }
        (_, None) => Throughput {
            read_capacity_units: 0,
            write_capacity_units: 0,
        },
    };
    if body
        .get("GlobalSecondaryIndexes")
        .is_some_and(|g| g.as_array().is_some_and(Vec::is_empty))
    {
        return Err(invalid("List of GlobalSecondaryIndexes is empty"));
    }
    if body
        .get("LocalSecondaryIndexes")
        .is_some_and(|g| g.as_array().is_some_and(Vec::is_empty))
    {
        return Err(invalid("List of LocalSecondaryIndexes is empty"));
    }
    if gsis.len() > MAX_GSIS {
        return Err(invalid(format!(
            "GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GSIS}"
        )));
    }
    if lsis.len() > MAX_LSIS {
        return Err(invalid(format!(
            "Number of LocalSecondaryIndexes exceeds per-table limit of {MAX_LSIS}"
        )));
    }
    for i in gsis.iter().chain(&lsis) {
        if let Projected::Include(_) = Projected::of(&i.projection) {
            let attrs = i.projection["NonKeyAttributes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for (n, a) in attrs.iter().enumerate() {
                if attrs[..n].contains(a) {
                    return Err(invalid(format!(
                        "Duplicate element in NonKeyAttributes: {}",
                        a.as_str().unwrap_or_default()
                    )));
                }
            }
        }
    }
    let mut index_names: Vec<&str> = Vec::new();
    for (n, i) in gsis.iter().chain(&lsis).enumerate() {
        if index_names.contains(&i.index_name.as_str()) {
            return Err(invalid(format!("Duplicate index name: {}", i.index_name)));
        }
        index_names.push(&i.index_name);
        let what = format!(" for index {}", i.index_name);
        if n < gsis.len() {
            check_index_key_order(&i.key_schema, &what)?;
        } else {
            check_key_order(&i.key_schema, &what)?;
        }
        check_defined(&i.key_schema, &defs)?;
    }
    for g in &mut gsis {
        match (billing, g.provisioned_throughput) {
            ("PROVISIONED", None) => {
                return Err(invalid(format!(
                    "ProvisionedThroughput must be specified for index: {}",
                    g.index_name
                )));
            }
            ("PAY_PER_REQUEST", Some(_)) => {
                return Err(invalid(format!(
                    "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                    g.index_name
                )));
            }
            _ => {}
        }
    }
    let table_hash = keys
        .first()
        .map(|k| k.attribute_name.clone())
        .unwrap_or_default();
    if !lsis.is_empty() && keys.len() < 2 {
        return Err(invalid(
            "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
        ));
    }
    for l in &lsis {
        if l.key_schema.len() != 2 {
            return Err(invalid(format!(
                "Index KeySchema does not have a range key for index: {}",
                l.index_name
            )));
        }
        if l.key_schema[0].attribute_name != table_hash {
            return Err(invalid(format!(
                "Index KeySchema does not have the same leading hash key as table KeySchema for index: {}. index hash key: {}, table hash key: {}",
                l.index_name, l.key_schema[0].attribute_name, table_hash
            )));
        }
    }
    // Every definition must be a key of the table or of an index. With indexes, DynamoDB names
    // the definitions and the keys (each once, the table's first).
    let mut keys_used: Vec<&str> = Vec::new();
    for k in keys
        .iter()
        .chain(gsis.iter().chain(&lsis).flat_map(|i| &i.key_schema))
    {
        if !keys_used.contains(&k.attribute_name.as_str()) {
            keys_used.push(&k.attribute_name);
        }
    }
    if !defs
        .iter()
        .all(|d| keys_used.contains(&d.attribute_name.as_str()))
    {
        if gsis.is_empty() && lsis.is_empty() {
            return Err(invalid(
                "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
            ));
        }
        let names: Vec<&str> = defs.iter().map(|d| d.attribute_name.as_str()).collect();
        return Err(invalid(format!(
            "Some AttributeDefinitions are not used. AttributeDefinitions: [{}], keys used: [{}]",
            names.join(", "),
            keys_used.join(", ")
        )));
    }
    let tags = parse_tags(tags, "tags")?;
    if tags.len() > MAX_TAGS {
        return Err(invalid(format!(
            "The number of tags exceeds the limit of {MAX_TAGS}"
        )));
    }
    let stream = stream(stream_spec, now_micros)?;
    let mut meta = TableMeta {
        format_version: FORMAT_VERSION,
        table_name: name.to_string(),
        key_schema: keys,
        attribute_definitions: defs,
        global_secondary_indexes: gsis,
        local_secondary_indexes: lsis,
        billing_mode: billing.to_string(),
        billing_mode_stated,
        provisioned_throughput: throughput,
        pay_per_request_since_micros: (billing == "PAY_PER_REQUEST").then_some(now_micros),
        throughput_changes: None,
        stream,
        ttl: None,
        tags,
        deletion_protection,
        creation_micros: now_micros,
        table_class: None,
        warm_throughput: None,
        on_demand_throughput: None,
    };
    super::table_options::apply(&mut meta, &options, now_micros, true)?;
    super::index_updates::check_projected(&meta)?;
    Ok(meta)
}

/// The engine tables of a new table's indexes (before the base table, whose metadata names
/// them).
async fn create_index_tables(
    ops: &Operations,
    meta: &mut TableMeta,
) -> std::result::Result<(), CoordinatorError> {
    let snapshot = meta.clone();
    let globals = meta.global_secondary_indexes.iter_mut().map(|i| (i, true));
    let locals = meta.local_secondary_indexes.iter_mut().map(|i| (i, false));
    for (index, global) in globals.chain(locals) {
        let id = ops.coordinator.random_uuid();
        let schema = crate::indexes::table_schema(&snapshot, index, global, id)
            .map_err(CoordinatorError::Internal)?;
        ops.coordinator
            .change_schema(SchemaChange::CreateTable(schema))
            .await?;
        index.table_id = Some(id.to_string());
    }
    Ok(())
}

fn in_use(name: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ResourceInUse,
        format!("Table already exists: {name}"),
    )
}

fn is_already_exists(e: &CoordinatorError) -> bool {
    matches!(
        e,
        CoordinatorError::Schema(ReplicaError::AlreadyExists { .. })
    )
}

fn is_not_found(e: &CoordinatorError) -> bool {
    matches!(e, CoordinatorError::Schema(ReplicaError::NotFound(_)))
}

pub async fn create_table(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let coordinator = &ops.coordinator;
    let meta = parse_create(body, coordinator.timestamp())?;
    let name = meta.table_name.clone();
    let _guard = ops.schema_lock.lock().await;
    // The keyspace of a table deleted in the last 24 hours holds its streams' log: the new
    // table joins it ([`crate::streams`]).
    let reused = crate::streams::deleted_log(coordinator, &name).is_some();
    if !reused {
        if coordinator
            .schema()
            .keyspace(&tables::keyspace_name(&name))
            .is_some()
        {
            return Err(in_use(&name));
        }
        match coordinator
            .change_schema(SchemaChange::CreateKeyspace(tables::keyspace_def(&name)))
            .await
        {
            Ok(_) => {}
            Err(e) if is_already_exists(&e) => return Err(in_use(&name)),
            Err(e) => return Err(e.into()),
        }
    }
    let mut meta = meta;
    let id = coordinator.random_uuid();
    let made = match create_index_tables(ops, &mut meta).await {
        Ok(()) => {
            let schema = tables::table_schema(&meta, id);
            coordinator
                .change_schema(SchemaChange::CreateTable(schema))
                .await
        }
        Err(e) => Err(e),
    };
    if let Err(e) = made {
        // Leave nothing half made.
        if reused {
            let _ = drop_tables_but_log(ops, &name).await;
        } else {
            let _ = coordinator
                .change_schema(SchemaChange::DropKeyspace(tables::keyspace_name(&name)))
                .await;
        }
        return Err(if is_already_exists(&e) {
            in_use(&name)
        } else {
            e.into()
        });
    }
    if meta.stream.is_some() {
        streams_changed(ops, &name).await;
    }
    Ok(json!({
        "TableDescription": table_description(
            &meta,
            id,
            &request.region(),
            "ACTIVE",
            ops.coordinator.now_seconds(),
        )
    }))
}

pub async fn delete_table(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let name = input::table_name(body)?;
    let _guard = ops.schema_lock.lock().await;
    let table = ops.table(name)?;
    if table.meta.deletion_protection {
        return Err(DynamoError::validation(
            "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
        ));
    }
    // A table with streams leaves them DISABLED, readable for 24 hours: its keyspace keeps
    // their log. A failure to mark them only loses that.
    let kept = match ops.streams.table_deleted(&ops.coordinator, &table).await {
        Ok(kept) => kept,
        Err(e) => {
            tracing::warn!(table = name, error = %e, "the streams of a deleted table are not kept");
            false
        }
    };
    let dropped = if kept {
        drop_tables_but_log(ops, name).await
    } else {
        ops.coordinator
            .change_schema(SchemaChange::DropKeyspace(tables::keyspace_name(name)))
            .await
            .map(|_| ())
    };
    match dropped {
        Ok(()) => {}
        Err(e) if is_not_found(&e) => return Err(DynamoError::table_not_found(name)),
        Err(e) => return Err(e.into()),
    }
    let mut description = table_description(
        &table.meta,
        table.schema.def.id,
        &request.region(),
        "DELETING",
        ops.coordinator.now_seconds(),
    );
    // DynamoDB's answer leaves out what describes the table's structure (Alternator's
    // test_delete_table_description and _with_si, checked against DynamoDB).
    if let Some(d) = description.as_object_mut() {
        for member in [
            "CreationDateTime",
            "KeySchema",
            "AttributeDefinitions",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
        ] {
            d.remove(member);
        }
    }
    Ok(json!({ "TableDescription": description }))
}

/// Drop every table of DynamoDB table `name`'s keyspace but its streams' log: the table first
/// (so it is gone for every request at once), then its index tables.
async fn drop_tables_but_log(
    ops: &Operations,
    name: &str,
) -> std::result::Result<(), CoordinatorError> {
    let keyspace = tables::keyspace_name(name);
    let log = crate::streams::log::log_table_name(name);
    let base = tables::storage_name(name);
    let mut doomed: Vec<String> = match ops.coordinator.schema().keyspace(&keyspace) {
        Some(ks) => ks.tables.keys().filter(|t| **t != log).cloned().collect(),
        None => return Err(CoordinatorError::Schema(ReplicaError::NotFound(keyspace))),
    };
    doomed.sort_by_key(|t| *t != base);
    for table in doomed {
        match ops
            .coordinator
            .change_schema(SchemaChange::DropTable {
                keyspace: keyspace.clone(),
                table,
            })
            .await
        {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// UpdateTable: billing mode, throughput, streams, deletion protection, and GSI creation and
/// deletion ([`super::index_updates`]).
pub async fn update_table(ops: &Operations, body: &Object, request: &RequestInfo) -> Result<Value> {
    let name = input::table_name(body)?;
    let mut v = Violations::default();
    let billing = input::string(body, "BillingMode")?;
    if let Some(b) = billing {
        v.one_of(b, "billingMode", BILLING_MODES);
    }
    let provisioned = throughput(
        input::object(body, "ProvisionedThroughput")?,
        "provisionedThroughput",
        &mut v,
    )?;
    let stream_spec = input::object(body, "StreamSpecification")?;
    let protection = input::boolean(body, "DeletionProtectionEnabled")?;
    let index_updates = input::list(body, "GlobalSecondaryIndexUpdates")?;
    let _ = input::object_list(body, "AttributeDefinitions")?;
    let options = super::table_options::requested(body)?;
    v.finish()?;
    let _guard = ops.schema_lock.lock().await;
    let table = ops.table(name)?;
    if index_updates.is_some_and(Vec::is_empty) {
        return Err(invalid("List of GlobalSecondaryIndexUpdates is empty"));
    }
    if billing.is_none()
        && provisioned.is_none()
        && stream_spec.is_none()
        && protection.is_none()
        && index_updates.is_none()
        && !options.any()
    {
        return Err(DynamoError::validation(
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required",
        ));
    }
    let now = ops.coordinator.timestamp();
    let mut meta = table.meta.clone();
    let stated_billing = billing.is_some();
    let billing = billing.unwrap_or(&table.meta.billing_mode).to_string();
    match (billing.as_str(), provisioned) {
        ("PAY_PER_REQUEST", Some(_)) => {
            return Err(invalid(
                "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
            ));
        }
        ("PROVISIONED", Some(t)) => {
            // Leaving on-demand, every global index needs a throughput of its own, given by
            // an `Update` of it in the same request (unless it is being deleted).
            if table.meta.billing_mode != "PROVISIONED" {
                let given = |action: &str, name: &str| {
                    index_updates.into_iter().flatten().any(|u| {
                        u.get(action)
                            .and_then(|a| a.get("IndexName"))
                            .and_then(Value::as_str)
                            == Some(name)
                    })
                };
                if let Some(g) =
                    table.meta.global_secondary_indexes.iter().find(|g| {
                        !given("Update", &g.index_name) && !given("Delete", &g.index_name)
                    })
                {
                    return Err(invalid(format!(
                        "ProvisionedThroughput must be specified for index: {}",
                        g.index_name
                    )));
                }
            }
            let current = &table.meta.provisioned_throughput;
            if table.meta.billing_mode == "PROVISIONED"
                && t.read_capacity_units == current.read_capacity_units
                && t.write_capacity_units == current.write_capacity_units
            {
                return Err(DynamoError::validation(format!(
                    "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: {}. Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for the table: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
                    current.read_capacity_units,
                    t.read_capacity_units,
                    current.write_capacity_units,
                    t.write_capacity_units
                )));
            }
            if table.meta.billing_mode == "PROVISIONED" {
                meta.throughput_changes.get_or_insert_default().record(
                    table.meta.provisioned_throughput,
                    t,
                    now,
                );
            }
            meta.provisioned_throughput = t;
        }
        ("PROVISIONED", None) if table.meta.billing_mode != "PROVISIONED" => {
            return Err(invalid(
                "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
            ));
        }
        ("PAY_PER_REQUEST", None) => {
            meta.provisioned_throughput = Throughput {
                read_capacity_units: 0,
                write_capacity_units: 0,
            };
            if table.meta.billing_mode != "PAY_PER_REQUEST" {
                meta.pay_per_request_since_micros = Some(now);
            }
        }
        _ => {}
    }
    meta.billing_mode = billing;
    meta.billing_mode_stated |= stated_billing;
    if let Some(spec) = stream_spec {
        let enabled_now = table.meta.stream.as_ref().is_some_and(|s| s.enabled);
        match stream(Some(spec), now)? {
            Some(_) if enabled_now => {
                return Err(DynamoError::validation(format!(
                    "Table already has an enabled stream: TableName: {name}"
                )));
            }
            Some(s) => meta.stream = Some(s),
            None if !enabled_now => {
                return Err(DynamoError::validation(format!(
                    "Table has no stream to disable: TableName: {name}"
                )));
            }
            None => {
                if let Some(s) = meta.stream.as_mut() {
                    s.enabled = false;
                }
            }
        }
    }
    if let Some(p) = protection {
        meta.deletion_protection = p;
    }
    super::table_options::apply(&mut meta, &options, now, false)?;
    let work = match index_updates {
        Some(updates) => super::index_updates::plan(ops, &mut meta, updates, body).await?,
        None => Vec::new(),
    };
    if let Err(e) = ops.alter_meta(&table, &meta).await {
        super::index_updates::abandon(ops, &meta, &work).await;
        return Err(e);
    }
    if stream_spec.is_some() {
        streams_changed(ops, name).await;
    }
    // The answer to a GSI creation or deletion says `UPDATING`, as DynamoDB's does while the
    // index's resources are allocated; DescribeTable says `ACTIVE` once the backfill runs.
    let status = match work.is_empty() {
        true => super::describe::table_status(&meta),
        false => "UPDATING",
    };
    super::index_updates::start(ops, name, work);
    Ok(json!({
        "TableDescription": table_description(
            &meta,
            table.schema.def.id,
            &request.region(),
            status,
            ops.coordinator.now_seconds(),
        )
    }))
}

/// Open or close the table's streams after its stream setting changed. A failure here is
/// repaired when the stream is next loaded (crate::streams), so the change itself stands.
async fn streams_changed(ops: &Operations, name: &str) {
    let Ok(table) = ops.table(name) else {
        return;
    };
    if let Err(e) = ops.streams.table_changed(&ops.coordinator, &table).await {
        tracing::warn!(table = name, error = %e, "stream log not updated; it is on next use");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(body: &str) -> Result<TableMeta> {
        parse_create(&serde_json::from_str(body).unwrap(), 1_000_000)
    }

    #[test]
    fn key_schemas_are_checked() {
        let ok = create(
            r#"{"TableName":"t12","BillingMode":"PAY_PER_REQUEST",
                "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
                "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}"#,
        )
        .unwrap();
        assert_eq!(ok.hash_key(), Some("pk"));
        let e = create(
            r#"{"TableName":"t12","BillingMode":"PAY_PER_REQUEST",
                "KeySchema":[{"AttributeName":"pk","KeyType":"RANGE"}],
                "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.message.unwrap(),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        );
        let e = create(
            r#"{"TableName":"t12","BillingMode":"PAY_PER_REQUEST",
                "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
                "AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.message
                .unwrap()
                .contains("Some index key attributes are not defined")
        );
        let e = create(r#"{"TableName":"t"}"#).unwrap_err();
        assert_eq!(
            e.message.unwrap(),
            "3 validation errors detected: Value 't' at 'tableName' failed to satisfy \
             constraint: Member must have length greater than or equal to 3; Value null at \
             'keySchema' failed to satisfy constraint: Member must not be null; Value null at \
             'attributeDefinitions' failed to satisfy constraint: Member must not be null"
        );
        let e = create(
            r#"{"TableName":"t12",
                "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
                "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.message
                .unwrap()
                .contains("must both be specified when BillingMode is PROVISIONED")
        );
    }

    /// A table of key `pk` with one GSI of key schema `gsi` (`[name, type]` pairs, every
    /// attribute an S).
    fn with_gsi(gsi: &[(&str, &str)]) -> Result<TableMeta> {
        let keys: Vec<Value> = gsi
            .iter()
            .map(|(n, t)| json!({"AttributeName": n, "KeyType": t}))
            .collect();
        let mut names: Vec<&str> = vec!["pk"];
        for (n, _) in gsi {
            if !names.contains(n) {
                names.push(n);
            }
        }
        let defs: Vec<Value> = names
            .iter()
            .map(|n| json!({"AttributeName": n, "AttributeType": "S"}))
            .collect();
        let body = json!({
            "TableName": "t12", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": defs,
            "GlobalSecondaryIndexes": [{"IndexName": "g12", "KeySchema": keys,
                                        "Projection": {"ProjectionType": "ALL"}}],
        });
        create(&body.to_string())
    }

    #[test]
    fn gsi_keys_may_have_four_attributes_per_role() {
        let full = [
            ("h1", "HASH"),
            ("h2", "HASH"),
            ("h3", "HASH"),
            ("h4", "HASH"),
            ("r1", "RANGE"),
            ("r2", "RANGE"),
            ("r3", "RANGE"),
            ("r4", "RANGE"),
        ];
        let meta = with_gsi(&full).unwrap();
        assert_eq!(meta.global_secondary_indexes[0].key_schema.len(), 8);
        with_gsi(&[("h1", "HASH"), ("h2", "HASH")]).unwrap();
        let message = |gsi: &[(&str, &str)]| with_gsi(gsi).unwrap_err().message.unwrap();
        assert_eq!(
            message(&[("h1", "HASH"), ("r1", "RANGE"), ("h2", "HASH")]),
            "Invalid KeySchema: All HASH KeySchemaElements must come before the RANGE KeySchemaElements for index g12"
        );
        assert_eq!(
            message(&[
                ("h1", "HASH"),
                ("h2", "HASH"),
                ("h3", "HASH"),
                ("h4", "HASH"),
                ("h5", "HASH")
            ]),
            "Invalid KeySchema: A KeySchema may have at most 4 HASH and 4 RANGE KeySchemaElements for index g12"
        );
        assert_eq!(
            message(&[("h1", "HASH"), ("r1", "RANGE"), ("r1", "RANGE")]),
            "Invalid KeySchema: Duplicate AttributeName r1 in KeySchema for index g12"
        );
        // Nine elements fail the shape check; two keep the table's messages.
        assert!(
            message(&[full.as_slice(), &[("r5", "RANGE")]].concat())
                .contains("Member must have length less than or equal to 8")
        );
        assert_eq!(
            message(&[("r1", "RANGE"), ("h1", "HASH")]),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type for index g12"
        );
        // Tables keep one HASH and one RANGE element.
        let e = create(
            r#"{"TableName":"t12","BillingMode":"PAY_PER_REQUEST",
                "KeySchema":[{"AttributeName":"a","KeyType":"HASH"},
                             {"AttributeName":"b","KeyType":"RANGE"},
                             {"AttributeName":"c","KeyType":"RANGE"}],
                "AttributeDefinitions":[{"AttributeName":"a","AttributeType":"S"},
                                        {"AttributeName":"b","AttributeType":"S"},
                                        {"AttributeName":"c","AttributeType":"S"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.message
                .unwrap()
                .contains("Member must have length less than or equal to 2")
        );
    }
}
