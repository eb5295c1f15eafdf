//! DynamoDB tables as engine tables, the way ScyllaDB's Alternator lays them out
//! (DESIGN.md §3).
//!
//! A DynamoDB table `T` is one engine table in a keyspace of its own, `alternator_T`
//! (SimpleStrategy, replication factor 1 on a single node), so that per-table replication and
//! dropping stay keyspace operations. Its columns:
//!
//! | column | type | kind |
//! |---|---|---|
//! | the hash key attribute's name | S: `text`, N: `blob`, B: `blob` | partition key |
//! | the range key attribute's name, if any | as above | clustering, ascending |
//! | `:attrs` | `map<text, blob>` (multi-cell) | regular: one cell per other top-level attribute |
//!
//! N keys are `blob`s holding an order-preserving encoding of the number (written by the value
//! model), not `decimal`s: Cassandra's decimal serialization (scale, then two's-complement
//! unscaled value) does not sort numerically byte for byte, and the engine compares
//! clustering keys with memcmp. Each attribute of `:attrs` is its own cell, so concurrent
//! updates of different attributes of one item merge instead of overwriting each other.
//!
//! **Names.** DynamoDB table names are 3-255 characters of `[a-zA-Z0-9_.-]`; keyspace and table
//! names become directory names (`data/<keyspace>/<table>-<uuid>`), which the file system
//! limits to 255 bytes. Names of up to [`MAX_PLAIN_NAME`] characters are used as they are;
//! longer ones are cut and suffixed with 16 hex digits of their SHA-256, so the storage name
//! is still a pure function of the DynamoDB name (no lookup table) and fits.
//!
//! **Metadata.** What DynamoDB reports about a table and the engine has no column for (key
//! schema, attribute definitions, index definitions, billing mode and throughput, stream and
//! TTL settings, tags, creation time, table class and warm throughput) is a [`TableMeta`]
//! kept as JSON under the key
//! [`EXTENSION`] of the table's `extensions` (Cassandra's `system_schema.tables.extensions`,
//! where Alternator keeps tags), written and dropped with the table in one schema change.
//! The JSON carries a `FormatVersion`; this build writes and reads version 1 and refuses
//! others.

use std::collections::BTreeMap;
use std::sync::Arc;

use khata_coordinator::catalog::{Schema, TableSchema, column_id};
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef,
    TableOptions,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Keyspaces of DynamoDB tables start with this.
pub const KEYSPACE_PREFIX: &str = "alternator_";

/// The map column holding every attribute but the keys.
pub const ATTRS_COLUMN: &str = ":attrs";

/// The key of [`TableMeta`] in the table's `extensions`.
pub const EXTENSION: &str = "khata:dynamodb";

/// The [`TableMeta`] format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Longest DynamoDB name used unchanged as a storage name (keyspace: prefix + 192 = 203
/// bytes; table directory: 192 + `-` + 32 hex digits = 225 bytes).
pub const MAX_PLAIN_NAME: usize = 192;

/// An element of a key schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeyElement {
    pub attribute_name: String,
    /// `HASH` or `RANGE`.
    pub key_type: String,
}

/// A key attribute's declared type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeDefinition {
    pub attribute_name: String,
    /// `S`, `N` or `B`.
    pub attribute_type: String,
}

/// Provisioned read and write capacity units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Throughput {
    pub read_capacity_units: i64,
    pub write_capacity_units: i64,
}

/// When a table's provisioned throughput last rose and fell (DescribeTable's
/// `LastIncreaseDateTime`, `LastDecreaseDateTime`, `NumberOfDecreasesToday`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ThroughputChanges {
    /// Microseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_increase_micros: Option<i64>,
    /// Microseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_decrease_micros: Option<i64>,
    /// The decreases on the UTC day of the last one.
    #[serde(default)]
    pub decreases_that_day: u32,
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

impl ThroughputChanges {
    /// Record a change from `from` to `to` at `now` (microseconds): a rise of either unit is
    /// an increase, a fall of either a decrease.
    pub fn record(&mut self, from: Throughput, to: Throughput, now: i64) {
        if to.read_capacity_units > from.read_capacity_units
            || to.write_capacity_units > from.write_capacity_units
        {
            self.last_increase_micros = Some(now);
        }
        if to.read_capacity_units < from.read_capacity_units
            || to.write_capacity_units < from.write_capacity_units
        {
            let same_day = self
                .last_decrease_micros
                .is_some_and(|d| d.div_euclid(MICROS_PER_DAY) == now.div_euclid(MICROS_PER_DAY));
            self.decreases_that_day = if same_day {
                self.decreases_that_day + 1
            } else {
                1
            };
            self.last_decrease_micros = Some(now);
        }
    }

    /// The decreases on the UTC day of `now`.
    pub fn decreases_on_day_of(&self, now: i64) -> u32 {
        match self.last_decrease_micros {
            Some(d) if d.div_euclid(MICROS_PER_DAY) == now.div_euclid(MICROS_PER_DAY) => {
                self.decreases_that_day
            }
            _ => 0,
        }
    }
}

/// A secondary index's definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IndexMeta {
    pub index_name: String,
    pub key_schema: Vec<KeyElement>,
    /// The `Projection` object as given (`ProjectionType`, `NonKeyAttributes`).
    pub projection: serde_json::Value,
    /// GSIs of provisioned tables only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_throughput: Option<Throughput>,
    /// `CREATING` (being backfilled), `DELETING`, or absent for `ACTIVE`
    /// ([`crate::indexes`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_status: Option<String>,
    /// The engine table holding the index's entries; absent in metadata written before
    /// indexes were kept, in which case the index is built when the node starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<String>,
}

impl IndexMeta {
    /// The id of the index's engine table, if it has one.
    pub fn table(&self) -> Option<Uuid> {
        self.table_id
            .as_deref()
            .and_then(|t| Uuid::parse_str(t).ok())
    }
}

/// A table's stream setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StreamMeta {
    pub enabled: bool,
    /// `KEYS_ONLY`, `NEW_IMAGE`, `OLD_IMAGE`, `NEW_AND_OLD_IMAGES`.
    pub view_type: String,
    /// The label of the latest stream (its creation time, ISO 8601), kept after disabling.
    pub label: String,
}

/// A table's time-to-live setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TtlMeta {
    pub enabled: bool,
    pub attribute_name: String,
}

/// A table class given to CreateTable or UpdateTable, kept and reported, not acted on
/// ([`crate::ops::table_options`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TableClassMeta {
    /// `STANDARD` or `STANDARD_INFREQUENT_ACCESS`.
    pub table_class: String,
    /// When UpdateTable last set it (microseconds since the epoch); absent when CreateTable did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_micros: Option<i64>,
}

/// A warm throughput given to CreateTable or UpdateTable, kept and reported, not acted on
/// ([`crate::ops::table_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WarmThroughputMeta {
    pub read_units_per_second: i64,
    pub write_units_per_second: i64,
}

/// An on-demand table's maximum request units, kept and reported, not acted on
/// ([`crate::ops::table_options`]); -1 for no maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OnDemandThroughputMeta {
    pub max_read_request_units: i64,
    pub max_write_request_units: i64,
}

/// Everything DynamoDB says about a table that the engine's schema does not hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TableMeta {
    pub format_version: u32,
    pub table_name: String,
    pub key_schema: Vec<KeyElement>,
    pub attribute_definitions: Vec<AttributeDefinition>,
    #[serde(default)]
    pub global_secondary_indexes: Vec<IndexMeta>,
    #[serde(default)]
    pub local_secondary_indexes: Vec<IndexMeta>,
    /// `PROVISIONED` or `PAY_PER_REQUEST`.
    pub billing_mode: String,
    /// Whether a CreateTable or UpdateTable named the billing mode: a table created with
    /// throughput alone (and never given a mode since) is described without a
    /// `BillingModeSummary`, as DynamoDB describes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub billing_mode_stated: bool,
    /// Zero units for `PAY_PER_REQUEST`.
    pub provisioned_throughput: Throughput,
    /// When the billing mode last became `PAY_PER_REQUEST` (microseconds since the epoch).
    #[serde(default)]
    pub pay_per_request_since_micros: Option<i64>,
    /// When the provisioned throughput last rose and fell; absent until it first changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_changes: Option<ThroughputChanges>,
    #[serde(default)]
    pub stream: Option<StreamMeta>,
    #[serde(default)]
    pub ttl: Option<TtlMeta>,
    /// In the order they were added; a key appears once.
    #[serde(default)]
    pub tags: Vec<(String, String)>,
    #[serde(default)]
    pub deletion_protection: bool,
    /// Microseconds since the epoch.
    pub creation_micros: i64,
    /// Absent when never given (a `STANDARD` table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_class: Option<TableClassMeta>,
    /// Absent when never given (the table has DynamoDB's baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_throughput: Option<WarmThroughputMeta>,
    /// Absent when never given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_demand_throughput: Option<OnDemandThroughputMeta>,
}

impl TableMeta {
    /// The hash key's attribute name.
    pub fn hash_key(&self) -> Option<&str> {
        key_named(&self.key_schema, "HASH")
    }

    /// The range key's attribute name, if the table has one.
    pub fn range_key(&self) -> Option<&str> {
        key_named(&self.key_schema, "RANGE")
    }

    /// The declared type (`S`, `N`, `B`) of a key attribute.
    pub fn attribute_type(&self, name: &str) -> Option<&str> {
        self.attribute_definitions
            .iter()
            .find(|d| d.attribute_name == name)
            .map(|d| d.attribute_type.as_str())
    }

    /// Keep only the attribute definitions a key uses, the table's or an index's: DynamoDB's
    /// `AttributeDefinitions` are exactly those, so a deleted index's go with it and UpdateTable
    /// drops any other it is given.
    pub fn keep_used_definitions(&mut self) {
        let keys: Vec<&str> = self
            .key_schema
            .iter()
            .chain(
                self.global_secondary_indexes
                    .iter()
                    .chain(&self.local_secondary_indexes)
                    .flat_map(|i| &i.key_schema),
            )
            .map(|k| k.attribute_name.as_str())
            .collect();
        let used = |d: &AttributeDefinition| keys.contains(&d.attribute_name.as_str());
        if !self.attribute_definitions.iter().all(used) {
            let kept = self
                .attribute_definitions
                .iter()
                .filter(|d| used(d))
                .cloned();
            self.attribute_definitions = kept.collect();
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        // Serializing plain data structs cannot fail.
        serde_json::to_vec(self).expect("table metadata serializes")
    }

    fn from_bytes(bytes: &[u8]) -> Result<TableMeta, String> {
        let meta: TableMeta =
            serde_json::from_slice(bytes).map_err(|e| format!("unreadable metadata: {e}"))?;
        if meta.format_version != FORMAT_VERSION {
            return Err(format!(
                "metadata format {} (this build reads {FORMAT_VERSION})",
                meta.format_version
            ));
        }
        Ok(meta)
    }
}

pub(crate) fn key_named<'a>(schema: &'a [KeyElement], key_type: &str) -> Option<&'a str> {
    schema
        .iter()
        .find(|k| k.key_type == key_type)
        .map(|k| k.attribute_name.as_str())
}

/// The storage name for a DynamoDB table name (see the module docs).
pub fn storage_name(name: &str) -> String {
    if name.len() <= MAX_PLAIN_NAME {
        return name.to_string();
    }
    let digest = Sha256::digest(name.as_bytes());
    let suffix: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    // Names are ASCII ([a-zA-Z0-9_.-]), so any byte index is a character boundary; a name
    // that is not (it never passed validation) is still cut safely by characters.
    let head: String = name.chars().take(MAX_PLAIN_NAME - 17).collect();
    format!("{head}_{suffix}")
}

/// The keyspace holding DynamoDB table `name`.
pub fn keyspace_name(name: &str) -> String {
    format!("{KEYSPACE_PREFIX}{}", storage_name(name))
}

/// The keyspace definition of a new DynamoDB table.
pub fn keyspace_def(name: &str) -> KeyspaceDef {
    KeyspaceDef {
        name: keyspace_name(name),
        replication: Replication::Simple {
            replication_factor: 1,
        },
        durable_writes: true,
    }
}

/// The engine type of a key attribute type.
pub fn key_column_type(attribute_type: &str) -> CqlType {
    match attribute_type {
        "S" => CqlType::Text,
        // N: an order-preserving encoding in a blob (module docs); B: the bytes.
        _ => CqlType::Blob,
    }
}

/// The engine table of a DynamoDB table described by `meta`.
pub fn table_schema(meta: &TableMeta, id: Uuid) -> TableSchema {
    let mut columns = Vec::new();
    let mut key_column = |name: &str, kind: ColumnKind| {
        let ty = key_column_type(meta.attribute_type(name).unwrap_or("B"));
        columns.push(ColumnDef {
            id: column_id(name),
            name: name.to_string(),
            ty,
            kind,
        });
    };
    if let Some(hash) = meta.hash_key() {
        key_column(hash, ColumnKind::PartitionKey { position: 0 });
    }
    if let Some(range) = meta.range_key() {
        key_column(
            range,
            ColumnKind::Clustering {
                position: 0,
                order: ClusteringOrder::Asc,
            },
        );
    }
    columns.push(ColumnDef {
        id: column_id(ATTRS_COLUMN),
        name: ATTRS_COLUMN.to_string(),
        ty: CqlType::Map {
            key: Box::new(CqlType::Text),
            value: Box::new(CqlType::Blob),
            frozen: false,
        },
        kind: ColumnKind::Regular,
    });
    if !meta.local_secondary_indexes.is_empty() {
        // The partition's item collection size (crate::collections).
        columns.push(ColumnDef {
            id: crate::collections::column(),
            name: crate::collections::COLLECTION_COLUMN.to_string(),
            ty: CqlType::Bigint,
            kind: ColumnKind::Static,
        });
    }
    let options = TableOptions {
        comment: format!("DynamoDB table {}", meta.table_name),
        extensions: BTreeMap::from([(EXTENSION.to_string(), meta.to_bytes())]),
        ..TableOptions::default()
    };
    TableSchema {
        def: TableDef {
            id,
            keyspace: keyspace_name(&meta.table_name),
            name: storage_name(&meta.table_name),
            columns,
            options,
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }
}

/// `table` with its metadata replaced (for an `AlterTable`).
pub fn with_meta(table: &TableSchema, meta: &TableMeta) -> TableSchema {
    let mut next = table.clone();
    next.def
        .options
        .extensions
        .insert(EXTENSION.to_string(), meta.to_bytes());
    next
}

/// A DynamoDB table found in the schema.
#[derive(Clone, Debug)]
pub struct Table {
    pub schema: Arc<TableSchema>,
    pub meta: TableMeta,
}

/// The metadata of an engine table, if it is a DynamoDB table.
pub fn meta_of(table: &TableSchema) -> Option<Result<TableMeta, String>> {
    if !table.def.keyspace.starts_with(KEYSPACE_PREFIX) {
        return None;
    }
    table
        .def
        .options
        .extensions
        .get(EXTENSION)
        .map(|b| TableMeta::from_bytes(b))
}

/// The DynamoDB table `name`, if it exists. Unreadable metadata is an `Err` naming the table.
pub fn find(schema: &Schema, name: &str) -> Result<Option<Table>, String> {
    let Some(t) = schema.table(&keyspace_name(name), &storage_name(name)) else {
        return Ok(None);
    };
    match meta_of(t) {
        None => Ok(None),
        Some(Ok(meta)) if meta.table_name == name => Ok(Some(Table {
            schema: t.clone(),
            meta,
        })),
        Some(Ok(_)) => Ok(None),
        Some(Err(e)) => Err(format!("table {name}: {e}")),
    }
}

/// The names of every DynamoDB table, sorted (as ListTables returns them).
pub fn names(schema: &Schema) -> Vec<String> {
    let mut out: Vec<String> = schema
        .keyspaces
        .iter()
        .filter(|(k, _)| k.starts_with(KEYSPACE_PREFIX))
        .flat_map(|(_, ks)| ks.tables.values())
        .filter_map(|t| meta_of(t).and_then(Result::ok))
        .map(|m| m.table_name)
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str) -> TableMeta {
        TableMeta {
            format_version: FORMAT_VERSION,
            table_name: name.into(),
            key_schema: vec![
                KeyElement {
                    attribute_name: "pk".into(),
                    key_type: "HASH".into(),
                },
                KeyElement {
                    attribute_name: "sk".into(),
                    key_type: "RANGE".into(),
                },
            ],
            attribute_definitions: vec![
                AttributeDefinition {
                    attribute_name: "pk".into(),
                    attribute_type: "S".into(),
                },
                AttributeDefinition {
                    attribute_name: "sk".into(),
                    attribute_type: "N".into(),
                },
            ],
            global_secondary_indexes: Vec::new(),
            local_secondary_indexes: Vec::new(),
            billing_mode: "PAY_PER_REQUEST".into(),
            billing_mode_stated: true,
            provisioned_throughput: Throughput {
                read_capacity_units: 0,
                write_capacity_units: 0,
            },
            pay_per_request_since_micros: Some(5),
            throughput_changes: None,
            stream: None,
            ttl: None,
            tags: vec![("k".into(), "v".into())],
            deletion_protection: false,
            creation_micros: 1_700_000_000_000_000,
            table_class: None,
            warm_throughput: None,
            on_demand_throughput: None,
        }
    }

    #[test]
    fn layout_follows_alternator() {
        let m = meta("Orders.v2-x");
        let t = table_schema(&m, Uuid::nil());
        assert_eq!(t.def.keyspace, "alternator_Orders.v2-x");
        assert_eq!(t.def.name, "Orders.v2-x");
        assert_eq!(t.def.partition_key()[0].name, "pk");
        assert_eq!(t.def.partition_key()[0].ty, CqlType::Text);
        assert_eq!(t.def.clustering()[0].0.ty, CqlType::Blob);
        assert!(t.def.column(ATTRS_COLUMN).unwrap().ty.is_multi_cell());
        assert_eq!(meta_of(&t).unwrap().unwrap(), m);
    }

    #[test]
    fn reported_options_are_kept_in_the_metadata() {
        let mut m = meta("t12");
        m.table_class = Some(TableClassMeta {
            table_class: "STANDARD_INFREQUENT_ACCESS".into(),
            last_update_micros: Some(7),
        });
        m.warm_throughput = Some(WarmThroughputMeta {
            read_units_per_second: 12_240,
            write_units_per_second: 4_080,
        });
        let t = table_schema(&m, Uuid::nil());
        assert_eq!(meta_of(&t).unwrap().unwrap(), m);
        // Metadata written before these options reads as a table without them.
        let old = serde_json::to_vec(&meta("t12")).unwrap();
        assert!(!String::from_utf8_lossy(&old).contains("WarmThroughput"));
        assert_eq!(TableMeta::from_bytes(&old).unwrap(), meta("t12"));
    }

    #[test]
    fn long_names_fit_the_file_system() {
        let long = "a".repeat(255);
        let s = storage_name(&long);
        assert_eq!(s.len(), MAX_PLAIN_NAME);
        assert_ne!(storage_name(&format!("{}b", "a".repeat(254))), s);
        assert_eq!(storage_name("abc"), "abc");
        assert!(keyspace_name(&long).len() <= 255);
    }

    #[test]
    fn other_format_versions_are_refused() {
        let mut m = meta("t12");
        m.format_version = 2;
        let bytes = serde_json::to_vec(&m).unwrap();
        assert!(
            TableMeta::from_bytes(&bytes)
                .unwrap_err()
                .contains("format 2")
        );
    }
}
