//! The schema catalog: keyspaces, their tables and user-defined types, as an immutable snapshot.
//!
//! A [`Schema`] is replaced whole on every change (readers hold an `Arc` to the one they
//! started with). Its `version` is a digest of its content, so two nodes with the same schema
//! report the same `schema_version`, which is what drivers wait on after DDL.
//!
//! Column ids are derived from column names ([`column_id`]): a re-created table or a column
//! dropped and added again gets the same id, and data written before a drop is hidden by the
//! drop's time (`system_schema.dropped_columns`), as in Cassandra.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use khata_types::ColumnId;
use khata_types::schema::{CqlType, KeyspaceDef, TableDef};
use khata_types::type_text::type_text;
use uuid::Uuid;

/// The id of a column named `name`: stable across restarts and nodes.
pub fn column_id(name: &str) -> ColumnId {
    khata_types::token::murmur3_token(name.as_bytes()) as u64 as u32
}

/// A user-defined type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserType {
    pub keyspace: String,
    pub name: String,
    pub fields: Vec<(String, CqlType)>,
}

impl UserType {
    /// The type of a column of this UDT.
    pub fn as_type(&self, frozen: bool) -> CqlType {
        CqlType::Udt {
            keyspace: self.keyspace.clone(),
            name: self.name.clone(),
            fields: self.fields.clone(),
            frozen,
        }
    }
}

/// A column dropped from a table: cells of it written at or before `dropped_time` are gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedColumn {
    pub name: String,
    pub ty: CqlType,
    /// Microseconds since the epoch.
    pub dropped_time: i64,
    /// A static column (`kind` `static` in `system_schema.dropped_columns`), else regular.
    pub is_static: bool,
}

/// A secondary index (`system_schema.indexes`): a regular one (kind `COMPOSITES`), or a
/// `CUSTOM` one, which names its class and options.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IndexDef {
    pub name: String,
    /// The indexed column.
    pub target: String,
    /// A `CUSTOM` index's class and options; none for a regular index.
    pub custom: Option<CustomIndex>,
}

/// What `system_schema.indexes` keeps of a `CUSTOM` index besides its target: the
/// `class_name` option as the index was created with it (`StorageAttachedIndex`, `sai`, or
/// the full class name, as Cassandra keeps what it was given), and the other options.
///
/// khata knows one class, Cassandra 5.0's Storage-Attached Index (SAI). On a vector column
/// it has no storage: ANN queries scan the table (an exact search). On any other column it
/// keeps the entries a regular index keeps and answers the same queries.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CustomIndex {
    pub class_name: String,
    /// The options given at creation, by name (`similarity_function`...).
    pub options: BTreeMap<String, String>,
}

/// A table with what the catalog keeps about it besides its definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSchema {
    pub def: TableDef,
    pub dropped: Vec<DroppedColumn>,
    pub indexes: Vec<IndexDef>,
}

impl TableSchema {
    /// Remove from `partitions` the cells of dropped columns written at or before their drop
    /// (even once a column of the name is added again): a row left with nothing live is no
    /// row, as in Cassandra, where a row an UPDATE made of a dropped column alone disappears.
    /// Nothing to do (and nothing allocated) for a table without dropped columns.
    pub fn hide_dropped<'a>(
        &self,
        partitions: impl IntoIterator<Item = &'a mut khata_types::partition::Partition>,
    ) {
        if self.dropped.is_empty() {
            return;
        }
        let dropped: Vec<(ColumnId, i64)> = self
            .dropped
            .iter()
            .map(|d| (column_id(&d.name), d.dropped_time))
            .collect();
        for p in partitions {
            hide_cells(p, &dropped);
        }
    }
}

fn hide_cells(partition: &mut khata_types::partition::Partition, dropped: &[(ColumnId, i64)]) {
    let hide = |row: &mut khata_types::row::Row| {
        row.cells.retain(|k, c| {
            !dropped
                .iter()
                .any(|(id, at)| k.column == *id && c.timestamp <= *at)
        });
    };
    hide(&mut partition.static_row);
    for row in partition.rows.values_mut() {
        hide(row);
    }
}

/// A keyspace and everything in it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyspaceSchema {
    pub def: KeyspaceDef,
    pub tables: BTreeMap<String, Arc<TableSchema>>,
    pub types: BTreeMap<String, UserType>,
}

impl KeyspaceSchema {
    pub fn new(def: KeyspaceDef) -> Self {
        KeyspaceSchema {
            def,
            tables: BTreeMap::new(),
            types: BTreeMap::new(),
        }
    }
}

/// Put each of `tables` into its keyspace in `keyspaces` (a table whose keyspace is not there
/// is left out), with no dropped columns or indexes: the fixed tables of the system and
/// virtual keyspaces.
pub(crate) fn add_fixed_tables(
    keyspaces: &mut BTreeMap<String, KeyspaceSchema>,
    tables: Vec<khata_types::schema::TableDef>,
) {
    for def in tables {
        if let Some(ks) = keyspaces.get_mut(&def.keyspace) {
            ks.tables.insert(
                def.name.clone(),
                Arc::new(TableSchema {
                    def,
                    dropped: Vec::new(),
                    indexes: Vec::new(),
                }),
            );
        }
    }
}

/// One version of the whole schema.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// The stored keyspaces (user and system ones), as `system_schema` lists them.
    pub keyspaces: BTreeMap<String, KeyspaceSchema>,
    /// The virtual keyspaces (`crate::virtual_tables`): found by the lookups below, but not
    /// among `keyspaces`, so nothing that walks the stored tables meets them.
    pub virtual_keyspaces: BTreeMap<String, KeyspaceSchema>,
    by_id: HashMap<Uuid, Arc<TableSchema>>,
    /// The digest of the user-visible schema, reported as `schema_version`.
    pub version: Uuid,
}

impl Schema {
    /// A schema of these keyspaces, indexed and digested.
    pub fn new(keyspaces: BTreeMap<String, KeyspaceSchema>) -> Self {
        let by_id = keyspaces
            .values()
            .flat_map(|k| k.tables.values())
            .map(|t| (t.def.id, t.clone()))
            .collect();
        let version = digest(&keyspaces);
        Schema {
            keyspaces,
            virtual_keyspaces: BTreeMap::new(),
            by_id,
            version,
        }
    }

    /// This schema with the virtual keyspaces `virtual_keyspaces` (they do not change its
    /// version: they are the same on every node and never stored).
    pub fn with_virtual(mut self, virtual_keyspaces: BTreeMap<String, KeyspaceSchema>) -> Self {
        for t in virtual_keyspaces.values().flat_map(|k| k.tables.values()) {
            self.by_id.insert(t.def.id, t.clone());
        }
        self.virtual_keyspaces = virtual_keyspaces;
        self
    }

    /// A keyspace, stored or virtual.
    pub fn keyspace(&self, name: &str) -> Option<&KeyspaceSchema> {
        self.keyspaces
            .get(name)
            .or_else(|| self.virtual_keyspaces.get(name))
    }

    /// A table, stored or virtual.
    pub fn table(&self, keyspace: &str, table: &str) -> Option<&Arc<TableSchema>> {
        self.keyspace(keyspace)?.tables.get(table)
    }

    pub fn table_by_id(&self, id: Uuid) -> Option<&Arc<TableSchema>> {
        self.by_id.get(&id)
    }

    pub fn user_type(&self, keyspace: &str, name: &str) -> Option<&UserType> {
        self.keyspaces.get(keyspace)?.types.get(name)
    }

    /// Every stored table, keyspace by keyspace (virtual ones not included).
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableSchema>> {
        self.keyspaces.values().flat_map(|k| k.tables.values())
    }
}

/// A name-based UUID of the schema's content: everything a user can see, in a fixed order.
fn digest(keyspaces: &BTreeMap<String, KeyspaceSchema>) -> Uuid {
    let mut text = String::new();
    for ks in keyspaces.values() {
        text.push_str(&format!("K {:?} {:?}\n", ks.def, ks.def.durable_writes));
        for t in ks.types.values() {
            text.push_str(&format!("U {} {:?}\n", t.name, t.fields));
        }
        for t in ks.tables.values() {
            text.push_str(&format!(
                "T {} {} {:?}\n",
                t.def.name, t.def.id, t.def.options
            ));
            let mut columns: Vec<_> = t.def.columns.iter().collect();
            columns.sort_by(|a, b| a.name.cmp(&b.name));
            for c in columns {
                text.push_str(&format!("C {} {} {:?}\n", c.name, type_text(&c.ty), c.kind));
            }
            for d in &t.dropped {
                text.push_str(&format!("D {} {}\n", d.name, d.dropped_time));
                if d.is_static {
                    text.push_str("DS\n");
                }
            }
            for i in &t.indexes {
                text.push_str(&format!("I {} {}\n", i.name, i.target));
                // Only for custom indexes, so a schema of regular ones keeps its version.
                if let Some(c) = &i.custom {
                    text.push_str(&format!("IC {} {:?}\n", c.class_name, c.options));
                }
            }
        }
    }
    let hi = khata_types::token::murmur3_token(text.as_bytes()) as u64;
    let lo = khata_types::token::murmur3_token(format!("{text}#").as_bytes()) as u64;
    let bytes = ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes();
    uuid::Builder::from_bytes(bytes)
        .with_variant(uuid::Variant::RFC4122)
        .with_version(uuid::Version::Md5)
        .into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;
    use khata_types::schema::Replication;

    #[test]
    fn the_version_follows_the_content() {
        let ks = |rf| {
            let mut m = BTreeMap::new();
            m.insert(
                "ks".to_string(),
                KeyspaceSchema::new(KeyspaceDef {
                    name: "ks".into(),
                    replication: Replication::Simple {
                        replication_factor: rf,
                    },
                    durable_writes: true,
                }),
            );
            m
        };
        assert_eq!(Schema::new(ks(1)).version, Schema::new(ks(1)).version);
        assert_ne!(Schema::new(ks(1)).version, Schema::new(ks(3)).version);
        assert_ne!(Schema::new(ks(1)).version, Uuid::nil());
    }
}
