//! Schema statements: keyspaces, tables, user types and TRUNCATE, checked here with
//! Cassandra's messages and applied through the coordinator, which answers with the
//! `SCHEMA_CHANGE` result drivers wait on.

use std::collections::{BTreeMap, HashSet};

use khata_coordinator::CoordinatorError;
use khata_coordinator::catalog::{
    IndexDef, IndexKind, ReplicaError, Schema, SchemaChange, TableSchema, UserType,
    check_index_name, check_target, column_id, max_index_name_len, system_tables, target_text,
};
use khata_types::schema::{
    ClusteringOrder, ColumnDef, ColumnKind, CqlType, KeyspaceDef, Replication, TableDef,
    TableOptions,
};
use khata_types::table_options::{
    compaction_from_map, compaction_map_as_given, compression_from_map, compression_map_as_given,
};
// Option values in Cassandra's messages and in DESCRIBE are written as Java's Double.toString.
pub(super) use khata_types::java_text::java_double;
use uuid::Uuid;

use super::error::ExecError;
use super::sai::{SAI_CLASS, check_options, custom_index, is_legacy_class, is_sai_class};
use super::{Executor, Run};
use crate::frame::ResultBody;
use crate::language::ast::{
    AlterTableAction, AlterTypeAction, CreateIndex, CreateTable, IndexTargetKind, Literal,
    OrderDirection, Property, PropertyValue, Statement, TypeError, TypeExpr,
};
use crate::server::schema_change;

/// A boolean property as Cassandra's `PropertyDefinitions.getBoolean` reads it: `true`, `yes`
/// (any case) or `1` is true, anything else false.
fn property_bool(p: &Property) -> Result<bool, ExecError> {
    let text = property_text(p)?.to_ascii_lowercase();
    Ok(matches!(text.as_str(), "1" | "true" | "yes"))
}

/// Run a schema statement (or TRUNCATE).
pub(crate) async fn run(
    exec: &Executor,
    statement: &Statement,
    run: &mut Run<'_>,
) -> Result<ResultBody, ExecError> {
    refuse_system_change(statement, run)?;
    // The change is built from this snapshot of the schema: no other change may land between.
    let _schema_lock = exec.coordinator().lock_schema().await;
    let schema = exec.coordinator().schema();
    // The datacenters NetworkTopologyStrategy may name: on one node, the node's own.
    let known_datacenters = [exec.coordinator().node().data_center.clone()];
    // The factor of a replication given without one (`default_keyspace_rf`).
    let default_rf = exec.config().default_keyspace_rf;
    let (change, tolerate) = match statement {
        Statement::CreateKeyspace(c) => {
            check_name(&c.name.0, "Keyspace")?;
            (
                SchemaChange::CreateKeyspace(keyspace_def(
                    &c.name.0,
                    &c.properties,
                    None,
                    &known_datacenters,
                    default_rf,
                )?),
                c.if_not_exists,
            )
        }
        Statement::AlterKeyspace(a) => {
            let Some(ks) = schema.keyspace(&a.name.0) else {
                if a.if_exists {
                    return Ok(ResultBody::Void);
                }
                return Err(ExecError::invalid(format!(
                    "Keyspace '{}' does not exist",
                    a.name.0
                )));
            };
            (
                SchemaChange::AlterKeyspace(keyspace_def(
                    &a.name.0,
                    &a.properties,
                    Some(&ks.def),
                    &known_datacenters,
                    default_rf,
                )?),
                false,
            )
        }
        Statement::DropKeyspace(d) => (SchemaChange::DropKeyspace(d.name.0.clone()), d.if_exists),
        Statement::CreateTable(c) => (
            create_table(&schema, run, c, exec.config().default_gc_grace_seconds)?,
            c.if_not_exists,
        ),
        Statement::AlterTable(a) => {
            let keyspace = run.keyspace_of(&a.table)?;
            let Some(t) = schema.table(&keyspace, &a.table.name.0) else {
                if a.if_exists {
                    return Ok(ResultBody::Void);
                }
                return Err(ExecError::invalid(format!(
                    "Table '{keyspace}.{}' doesn't exist",
                    a.table.name.0
                )));
            };
            let ts = exec.coordinator().timestamp();
            let change = alter_table(&schema, t, &a.action, ts)?;
            // `ADD IF NOT EXISTS` of a column there, `DROP IF EXISTS` or `RENAME IF EXISTS` of
            // one that is not: nothing changes, and Cassandra answers Void.
            if matches!(&change, SchemaChange::AlterTable(next) if *next == **t) {
                return Ok(ResultBody::Void);
            }
            (change, false)
        }
        Statement::DropTable(d) => {
            let keyspace = run.keyspace_of(&d.table)?;
            (
                SchemaChange::DropTable {
                    keyspace,
                    table: d.table.name.0.clone(),
                },
                d.if_exists,
            )
        }
        Statement::Truncate(t) => {
            let table = run.table(&schema, &t.table)?;
            // The replicated system keyspaces' tables may be cleared, as in Cassandra
            // (`TRUNCATE system_traces.events`): TRUNCATE asks for MODIFY, which
            // `ClientState.preventSystemKSSchemaModification` leaves alone.
            let keyspace = table.def.keyspace.as_str();
            if system_tables::is_system_keyspace(keyspace)
                && !system_tables::is_replicated_system_keyspace(keyspace)
            {
                return Err(ExecError::invalid(format!(
                    "Cannot truncate a table of the {} keyspace",
                    table.def.keyspace
                )));
            }
            exec.coordinator().truncate(table.def.id).await?;
            return Ok(ResultBody::Void);
        }
        Statement::CreateType(c) => {
            let keyspace = run.keyspace_of(&c.name)?;
            let mut fields = Vec::new();
            let mut seen = HashSet::new();
            for (name, ty) in &c.fields {
                if !seen.insert(name.0.clone()) {
                    return Err(ExecError::invalid(format!(
                        "Duplicate field name {} in type {}",
                        name.0, c.name.name.0
                    )));
                }
                fields.push((name.0.clone(), resolve_type(&schema, &keyspace, ty, true)?));
            }
            (
                SchemaChange::CreateType(UserType {
                    keyspace,
                    name: c.name.name.0.clone(),
                    fields,
                }),
                c.if_not_exists,
            )
        }
        Statement::AlterType(a) => {
            let keyspace = run.keyspace_of(&a.name)?;
            let Some(existing) = schema.user_type(&keyspace, &a.name.name.0) else {
                if a.if_exists {
                    return Ok(ResultBody::Void);
                }
                return Err(ExecError::invalid(format!(
                    "Type {}.{} doesn't exist",
                    keyspace, a.name.name.0
                )));
            };
            let mut ty = existing.clone();
            // `UserType.getCqlTypeName()`.
            let type_name = format!(
                "{}.{}",
                khata_types::type_text::quote_identifier(&keyspace),
                khata_types::type_text::quote_identifier(&ty.name)
            );
            match &a.action {
                AlterTypeAction::Add {
                    if_not_exists,
                    field,
                    ty: field_ty,
                } => {
                    if ty.fields.iter().any(|(n, _)| *n == field.0) {
                        if *if_not_exists {
                            return Ok(ResultBody::Void);
                        }
                        return Err(ExecError::invalid(format!(
                            "Cannot add field {} to type {type_name}: a field with name {} already exists",
                            field.0, field.0
                        )));
                    }
                    let field_type = resolve_type(&schema, &keyspace, field_ty, true)?;
                    let shown = khata_types::type_text::type_text(&field_type);
                    if field_type.mentions_udt(&keyspace, &ty.name) {
                        return Err(ExecError::invalid(format!(
                            "Cannot add new field {} of type {shown} to user type {type_name} as it would create a circular reference",
                            field.0
                        )));
                    }
                    let keyed: Vec<String> = schema
                        .keyspace(&keyspace)
                        .map(|k| {
                            k.tables
                                .values()
                                .filter(|t| {
                                    t.def
                                        .partition_key()
                                        .iter()
                                        .any(|c| c.ty.mentions_udt(&keyspace, &ty.name))
                                })
                                .map(|t| {
                                    format!(
                                        "{}.{}",
                                        khata_types::type_text::quote_identifier(&keyspace),
                                        khata_types::type_text::quote_identifier(&t.def.name)
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    // khata's deviation: Cassandra lets the field in and leaves non-frozen
                    // columns of the type with a collection they cannot hold per element;
                    // khata refuses it as CREATE TABLE refuses such a column.
                    let used_non_frozen = field_type.is_multi_cell()
                        && schema.keyspace(&keyspace).is_some_and(|k| {
                            k.tables.values().any(|t| {
                                t.def.columns.iter().any(|c| {
                                    matches!(&c.ty, CqlType::Udt { keyspace: k, name: n, frozen: false, .. }
                                        if *k == keyspace && *n == ty.name)
                                })
                            })
                        });
                    if used_non_frozen {
                        return Err(ExecError::invalid(
                            "Non-frozen UDTs with nested non-frozen collections are not supported",
                        ));
                    }
                    if !keyed.is_empty() {
                        return Err(ExecError::invalid(format!(
                            "Cannot add new field {} of type {shown} to user type {type_name} as the type is being used in partition key by the following tables: {}",
                            field.0,
                            keyed.join(", ")
                        )));
                    }
                    ty.fields.push((field.0.clone(), field_type));
                }
                AlterTypeAction::Rename { renames, if_exists } => {
                    // Positions come from the type as it was, so renames may swap names.
                    let original = ty.fields.clone();
                    for (from, to) in renames {
                        let Some(i) = original.iter().position(|(n, _)| *n == from.0) else {
                            if *if_exists {
                                continue;
                            }
                            return Err(ExecError::invalid(format!(
                                "Unkown field {} in user type {type_name}",
                                from.0
                            )));
                        };
                        ty.fields[i].0 = to.0.clone();
                    }
                    for (i, (name, _)) in ty.fields.iter().enumerate() {
                        if ty.fields[..i].iter().any(|(n, _)| n == name) {
                            // Cassandra's message, whose format takes the keyspace for the type.
                            return Err(ExecError::invalid(format!(
                                "Duplicate field name {name} in type {keyspace}"
                            )));
                        }
                    }
                }
                AlterTypeAction::AlterField { .. } => {
                    return Err(ExecError::invalid(
                        "Altering field types is no longer supported",
                    ));
                }
            }
            (SchemaChange::AlterType(ty), false)
        }
        Statement::DropType(d) => {
            let keyspace = run.keyspace_of(&d.name)?;
            (
                SchemaChange::DropType {
                    keyspace,
                    name: d.name.name.0.clone(),
                },
                d.if_exists,
            )
        }
        Statement::CreateIndex(c) => match create_index(&schema, run, c)? {
            Some(change) => (change, c.if_not_exists),
            None => return Ok(ResultBody::Void),
        },
        Statement::DropIndex(d) => {
            let keyspace = run.keyspace_of(&d.name)?;
            (
                SchemaChange::DropIndex {
                    keyspace,
                    name: d.name.name.0.clone(),
                },
                d.if_exists,
            )
        }
        Statement::Describe(d) => return super::describe::run(exec, d, run),
        _ => return Err(ExecError::invalid("unexpected statement")),
    };
    let warnings = match (&change, statement) {
        (SchemaChange::CreateKeyspace(def), _) => {
            replication_warnings(def, None, &known_datacenters)
        }
        (SchemaChange::AlterKeyspace(def), Statement::AlterKeyspace(a)) => replication_warnings(
            def,
            schema.keyspace(&a.name.0).map(|k| &k.def.replication),
            &known_datacenters,
        ),
        _ => Vec::new(),
    };
    match exec.coordinator().change_schema(change).await {
        Ok(event) => {
            run.warnings.extend(warnings);
            Ok(ResultBody::SchemaChange(schema_change(&event)))
        }
        Err(CoordinatorError::Schema(ReplicaError::AlreadyExists { .. })) if tolerate => {
            Ok(ResultBody::Void)
        }
        Err(CoordinatorError::Schema(ReplicaError::NotFound(_))) if tolerate => {
            Ok(ResultBody::Void)
        }
        Err(CoordinatorError::Schema(ReplicaError::NotFound(m))) => Err(ExecError::invalid(m)),
        // Cassandra answers a taken type name with Invalid, not AlreadyExists.
        Err(CoordinatorError::Schema(ReplicaError::AlreadyExists { what, .. }))
            if what.starts_with("A user type ") =>
        {
            Err(ExecError::invalid(what))
        }
        // Cassandra answers a taken index name with Invalid, not AlreadyExists.
        Err(CoordinatorError::Schema(ReplicaError::AlreadyExists { what, .. }))
            if what.starts_with("Index ") =>
        {
            Err(ExecError::invalid(format!("{what} already exists")))
        }
        Err(e) => Err(e.into()),
    }
}

/// The system keyspaces whose schema no statement may change (Cassandra's
/// `SchemaConstants.isLocalSystemKeyspace`, which counts the virtual keyspaces in).
const LOCAL_SYSTEM_KEYSPACES: [&str; 4] = [
    system_tables::SYSTEM,
    system_tables::SYSTEM_SCHEMA,
    "system_views",
    "system_virtual_schema",
];

/// The replicated system keyspaces, whose replication alone may be altered.
const REPLICATED_SYSTEM_KEYSPACES: [&str; 3] = [
    system_tables::SYSTEM_TRACES,
    system_tables::SYSTEM_AUTH,
    system_tables::SYSTEM_DISTRIBUTED,
];

/// Refuse a schema statement on a system keyspace before anything else is looked at, as
/// Cassandra 4.1 does: each statement's `authorize` asks for a permission on a resource, and
/// `ClientState.preventSystemKSSchemaModification` answers `Unauthorized` for CREATE, ALTER
/// and DROP on a local system keyspace (`<ks> keyspace is not user-modifiable.`) and on a
/// replicated one (`Cannot <PERMISSION> <resource>`, except ALTER of the keyspace itself).
/// `CREATE KEYSPACE` and `DROP INDEX` ask for nothing keyspace-wide that way: Cassandra's
/// `AlterSchemaStatement.execute` refuses them on a local system keyspace with `Invalid`.
fn refuse_system_change(statement: &Statement, run: &Run<'_>) -> Result<(), ExecError> {
    enum Resource {
        Keyspace,
        AllTables,
        Table(String),
    }
    let (keyspace, permission, resource) = match statement {
        Statement::CreateKeyspace(c) => return refuse_local_system(&c.name.0),
        Statement::DropIndex(d) => return refuse_local_system(&run.keyspace_of(&d.name)?),
        Statement::AlterKeyspace(a) => (a.name.0.clone(), "ALTER", Resource::Keyspace),
        Statement::DropKeyspace(d) => (d.name.0.clone(), "DROP", Resource::Keyspace),
        Statement::CreateTable(c) => (run.keyspace_of(&c.name)?, "CREATE", Resource::AllTables),
        Statement::AlterTable(a) => {
            let table = Resource::Table(a.table.name.0.clone());
            (run.keyspace_of(&a.table)?, "ALTER", table)
        }
        Statement::DropTable(d) => {
            let table = Resource::Table(d.table.name.0.clone());
            (run.keyspace_of(&d.table)?, "DROP", table)
        }
        Statement::CreateIndex(c) => {
            let table = Resource::Table(c.table.name.0.clone());
            (run.keyspace_of(&c.table)?, "ALTER", table)
        }
        Statement::CreateType(c) => (run.keyspace_of(&c.name)?, "CREATE", Resource::AllTables),
        Statement::AlterType(a) => (run.keyspace_of(&a.name)?, "ALTER", Resource::AllTables),
        Statement::DropType(d) => (run.keyspace_of(&d.name)?, "DROP", Resource::AllTables),
        _ => return Ok(()),
    };
    let unauthorized = |message: String| {
        Err(ExecError::Body(crate::frame::ErrorBody::new(
            crate::frame::ErrorKind::Unauthorized,
            message,
        )))
    };
    let is = |names: &[&str]| names.iter().any(|n| n.eq_ignore_ascii_case(&keyspace));
    if is(&LOCAL_SYSTEM_KEYSPACES) {
        return unauthorized(format!("{keyspace} keyspace is not user-modifiable."));
    }
    if is(&REPLICATED_SYSTEM_KEYSPACES) {
        let resource = match resource {
            // Altering a replicated system keyspace's replication is allowed.
            Resource::Keyspace if permission == "ALTER" => return Ok(()),
            Resource::Keyspace => format!("<keyspace {keyspace}>"),
            Resource::AllTables => format!("<all tables in {keyspace}>"),
            Resource::Table(table) => format!("<table {keyspace}.{table}>"),
        };
        return unauthorized(format!("Cannot {permission} {resource}"));
    }
    Ok(())
}

/// `AlterSchemaStatement.execute`'s refusal of a local system keyspace.
fn refuse_local_system(keyspace: &str) -> Result<(), ExecError> {
    if LOCAL_SYSTEM_KEYSPACES
        .iter()
        .any(|n| n.eq_ignore_ascii_case(keyspace))
    {
        return Err(ExecError::invalid(format!(
            "System keyspace '{keyspace}' is not user-modifiable"
        )));
    }
    Ok(())
}

/// `CREATE INDEX`: the checks Cassandra makes before the schema change, with its messages.
/// `None` when `IF NOT EXISTS` finds the same index under another name.
fn create_index(
    schema: &Schema,
    run: &Run<'_>,
    c: &CreateIndex,
) -> Result<Option<SchemaChange>, ExecError> {
    let keyspace = run.keyspace_of(&c.table)?;
    if schema.keyspace(&keyspace).is_none() {
        return Err(ExecError::invalid(format!(
            "Keyspace '{keyspace}' doesn't exist"
        )));
    }
    let Some(t) = schema.table(&keyspace, &c.table.name.0) else {
        return Err(ExecError::invalid(format!(
            "Table '{}' doesn't exist",
            c.table.name.0
        )));
    };
    // Cassandra 5.0: `CREATE CUSTOM INDEX ... USING 'class'`, and `CREATE INDEX ... USING
    // 'sai'` (or 'legacy_local_table', the regular index). khata knows one custom class, SAI.
    let sai_class = match (&c.using, c.custom) {
        (None, true) => {
            return Err(ExecError::invalid(
                "CUSTOM index requires specifying the index class",
            ));
        }
        (None, false) => None,
        (Some(class), custom) if is_legacy_class(class) && !custom => None,
        (Some(class), _) if is_sai_class(class) => Some(class.clone()),
        (Some(class), _) => {
            return Err(ExecError::invalid(format!(
                "Unsupported index class '{class}': khata supports StorageAttachedIndex (USING \
                 'StorageAttachedIndex', 'sai' or '{SAI_CLASS}') and regular indexes"
            )));
        }
    };
    // Cassandra's IndexAttributes.validate: `options` is the one property, for CUSTOM indexes.
    if let Some(p) = c.properties.iter().find(|p| p.name.0 != "options") {
        return Err(ExecError::Body(crate::frame::ErrorBody::new(
            crate::frame::ErrorKind::SyntaxError,
            format!("Unknown property '{}'", p.name.0),
        )));
    }
    if !c.properties.is_empty() && sai_class.is_none() {
        return Err(ExecError::invalid(
            "Cannot specify options for a non-CUSTOM index",
        ));
    }
    let mut options = BTreeMap::new();
    for p in &c.properties {
        match &p.value {
            PropertyValue::Map(entries) => {
                for (k, v) in entries {
                    options.insert(literal_text(k), literal_text(v));
                }
            }
            _ => {
                return Err(syntax_error(
                    "Invalid value for property 'options'. It should be a map.",
                ));
            }
        }
    }
    let target = match c.targets.as_slice() {
        [] => {
            return Err(ExecError::invalid(
                "Only CUSTOM indexes can be created without specifying a target column",
            ));
        }
        [one] => one,
        // With USING, Cassandra 5.0 takes the index as CUSTOM, and SAI refuses several columns.
        several if sai_class.is_some() => {
            let names: Vec<&str> = several.iter().map(|t| t.column.0.as_str()).collect();
            return Err(ExecError::invalid(format!(
                "A storage-attached index cannot be created over multiple columns: {}",
                names.join(", ")
            )));
        }
        _ => {
            return Err(ExecError::invalid(
                "Only CUSTOM indexes support multiple columns",
            ));
        }
    };
    let column = t
        .def
        .column(&target.column.0)
        .ok_or_else(|| ExecError::invalid(format!("Column '{}' doesn't exist", target.column.0)))?;
    // Cassandra 5.0's `validateIndexTarget`: a CUSTOM index's column needs a valid name.
    if sai_class.is_some()
        && (column.name.len() > 48
            || !column
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(ExecError::invalid(format!(
            "Column '{}' is longer than the permissible name length of 48 characters or contains non-alphanumeric-underscore characters",
            column.name
        )));
    }
    // SAI takes `target` among its options and replaces it with the real one.
    options.remove("target");
    let kind = match target.kind {
        // A plain target on a collection indexes its values, as in Cassandra (and a frozen
        // one is then refused: it must be indexed whole, with `full()`).
        IndexTargetKind::Simple if is_collection(&column.ty) => IndexKind::Values,
        IndexTargetKind::Simple => IndexKind::Simple,
        IndexTargetKind::Full => IndexKind::Full,
        IndexTargetKind::Keys => IndexKind::Keys,
        IndexTargetKind::Values => IndexKind::Values,
        IndexTargetKind::Entries => IndexKind::Entries,
    };
    check_target(&t.def, column, kind).map_err(|e| ExecError::invalid(e.to_string()))?;
    let target = target_text(&column.name, kind);
    let custom = sai_class.map(|class| custom_index(&class, options.clone()));
    let ks = schema.keyspace(&keyspace).expect("checked above");
    let taken = |name: &str| {
        ks.tables
            .values()
            .any(|t| t.indexes.iter().any(|i| i.name == name))
    };
    let name = match &c.name {
        Some(n) => {
            // Cassandra's `IndexMetadata.validate` (a ConfigurationException) for a name that
            // is not ASCII word characters; khata's own words for one too long for its storage.
            if let Err(e) = check_index_name(&t.def.name, &n.0) {
                let message = e.to_string();
                return Err(if message.starts_with("Illegal index name") {
                    config_error(message)
                } else {
                    ExecError::invalid(message)
                });
            }
            n.0.clone()
        }
        None => default_index_name(&t.def.name, &column.name, taken),
    };
    if custom.is_some() {
        check_options(&name, column, &options)?;
    }
    if !taken(&name)
        && let Some(same) = t
            .indexes
            .iter()
            .find(|i| i.target == target && i.custom == custom)
    {
        if c.if_not_exists {
            return Ok(None);
        }
        return Err(ExecError::invalid(format!(
            "Index {name} is a duplicate of existing index {}",
            same.name
        )));
    }
    // SAI's `validateOptions`: one SAI per column and target, whatever alias named the class.
    if custom.is_some()
        && !taken(&name)
        && t.indexes
            .iter()
            .any(|i| super::sai::is_sai(i) && i.target == target)
    {
        return Err(ExecError::invalid(format!(
            "Cannot create more than one storage-attached index on the same column: {}",
            column.name
        )));
    }
    Ok(Some(SchemaChange::CreateIndex {
        keyspace,
        table: t.def.name.clone(),
        index: IndexDef {
            name,
            target,
            custom,
        },
    }))
}

/// Cassandra's default index name: `<table>_<column>_idx` without its non-word characters
/// (Java's `\W`: anything but ASCII letters, digits and `_`), then `_1`, `_2`... until one is
/// free. khata cuts the `<table>_<column>` part when the name would not fit its storage
/// ([`max_index_name_len`]); Cassandra 4.1 keeps it whole and fails creating the files.
fn default_index_name(table: &str, column: &str, taken: impl Fn(&str) -> bool) -> String {
    let stem: String = format!("{table}_{column}")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let max = max_index_name_len(table);
    let fit = |suffix: &str| {
        let room = max.saturating_sub(suffix.len());
        // ASCII only, so any byte length is a character boundary.
        format!("{}{suffix}", &stem[..stem.len().min(room)])
    };
    let mut name = fit("_idx");
    let mut n = 0;
    while taken(&name) {
        n += 1;
        name = fit(&format!("_idx_{n}"));
    }
    name
}

fn is_collection(ty: &CqlType) -> bool {
    matches!(
        ty,
        CqlType::List { .. } | CqlType::Set { .. } | CqlType::Map { .. }
    )
}

fn check_name(name: &str, what: &str) -> Result<(), ExecError> {
    if name.is_empty()
        || name.len() > 48
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        // `AlterSchemaStatement.validateKeyspaceName` quotes a keyspace's name with '...',
        // `TableMetadata.validate` a table's with "...".
        let quoted = if what == "Keyspace" {
            format!("'{name}'")
        } else {
            format!("\"{name}\"")
        };
        return Err(ExecError::invalid(format!(
            "{what} name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got {quoted})"
        )));
    }
    Ok(())
}

fn literal_text(l: &Literal) -> String {
    match l {
        Literal::String(s) | Literal::Integer(s) | Literal::Float(s) | Literal::Duration(s) => {
            s.clone()
        }
        Literal::Boolean(b) => b.to_string(),
        Literal::Uuid(u) => u.to_string(),
        Literal::Hex(h) => h.clone(),
        Literal::NaN => "NaN".into(),
        Literal::Infinity => "Infinity".into(),
        Literal::NegativeInfinity => "-Infinity".into(),
        Literal::Null => "null".into(),
    }
}

fn property_text(p: &Property) -> Result<String, ExecError> {
    match &p.value {
        PropertyValue::Constant(l) => Ok(literal_text(l)),
        PropertyValue::Word(w) => Ok(w.clone()),
        // Cassandra's `PropertyDefinitions.getSimple`, a SyntaxException.
        PropertyValue::Map(_) => Err(syntax_error(format!(
            "Invalid value for property '{}'. It should be a string",
            p.name.0
        ))),
    }
}

fn property_map(p: &Property) -> Result<BTreeMap<String, String>, ExecError> {
    match &p.value {
        PropertyValue::Map(entries) => Ok(entries
            .iter()
            .map(|(k, v)| (literal_text(k), literal_text(v)))
            .collect()),
        // Cassandra's `PropertyDefinitions.getMap`, a SyntaxException.
        _ => Err(syntax_error(format!(
            "Invalid value for property '{}'. It should be a map.",
            p.name.0
        ))),
    }
}

/// A `SyntaxException` (the `SYNTAX_ERROR` code), as Cassandra answers a property of the
/// wrong shape.
fn syntax_error(message: impl Into<String>) -> ExecError {
    ExecError::Body(crate::frame::ErrorBody::new(
        crate::frame::ErrorKind::SyntaxError,
        message.into(),
    ))
}

/// A `ConfigurationException` (the `CONFIG_ERROR` code), as Cassandra answers bad options.
fn config_error(message: impl Into<String>) -> ExecError {
    ExecError::Body(crate::frame::ErrorBody::new(
        crate::frame::ErrorKind::ConfigError,
        message.into(),
    ))
}

/// Java's `Integer.parseInt`, failing with its `NumberFormatException` message.
fn java_int(text: &str) -> Result<i32, ExecError> {
    text.parse::<i32>()
        .map_err(|_| config_error(format!("For input string: \"{text}\"")))
}

/// A replication factor as Cassandra 4.1's `ReplicationFactor.fromString` reads it: `<replicas>`
/// or `<replicas>/<transient>`, transient replicas refused (transient replication is off).
fn replication_factor(text: &str) -> Result<u32, ExecError> {
    let (all, transient) = match text.split_once('/') {
        Some((all, transient)) => {
            if transient.contains('/') {
                return Err(config_error(
                    "Replication factor format is <replicas> or <replicas>/<transient>",
                ));
            }
            (java_int(all)?, java_int(transient)?)
        }
        None => (java_int(text)?, 0),
    };
    if transient != 0 {
        return Err(config_error(
            "Transient replication is not enabled on this node",
        ));
    }
    u32::try_from(all).map_err(|_| {
        config_error(format!(
            "Replication factor must be non-negative, found {all}"
        ))
    })
}

/// The options of a keyspace's current replication, as `system_schema.keyspaces` shows them
/// (without the class): what an ALTER starts from.
fn replication_options(r: &Replication) -> BTreeMap<String, String> {
    match r {
        Replication::Simple { replication_factor } => BTreeMap::from([(
            "replication_factor".to_string(),
            replication_factor.to_string(),
        )]),
        Replication::NetworkTopology { datacenters } => datacenters
            .iter()
            .map(|(dc, rf)| (dc.clone(), rf.to_string()))
            .collect(),
        Replication::Local => BTreeMap::new(),
    }
}

/// `NetworkTopologyStrategy`'s options as Cassandra 4.1 prepares and validates them
/// (`prepareOptions`, `validateExpectedOptions`, `validateOptions`): `replication_factor`
/// stands for every known datacenter not named (an ALTER keeps the datacenters it had);
/// without any option it is the factor of the `SimpleStrategy` an ALTER starts from, or else
/// `default_rf` (`default_keyspace_rf`); datacenters given `'0'` are left out; what remains
/// must name known datacenters only. On one node the known datacenters are the node's own.
fn network_topology(
    keyspace: &str,
    mut options: BTreeMap<String, String>,
    previous: &BTreeMap<String, String>,
    known_datacenters: &[String],
    default_rf: u32,
) -> Result<BTreeMap<String, u32>, ExecError> {
    if options.is_empty() {
        let rf = previous
            .get("replication_factor")
            .cloned()
            .unwrap_or_else(|| default_rf.to_string());
        options.insert("replication_factor".to_string(), rf);
    }
    let mut replication = options.remove("replication_factor");
    if replication.is_none() && options.is_empty() {
        // A direct ALTER from SimpleStrategy.
        replication = previous.get("replication_factor").cloned();
    } else if replication.is_some() {
        for (dc, rf) in previous {
            if dc != "replication_factor" {
                options.entry(dc.clone()).or_insert_with(|| rf.clone());
            }
        }
    }
    if let Some(rf) = replication {
        let rf = replication_factor(&rf)?.to_string();
        for dc in known_datacenters {
            options.entry(dc.clone()).or_insert_with(|| rf.clone());
        }
    }
    options.retain(|_, rf| rf != "0");
    if options.is_empty() {
        return Err(config_error(
            "Configuration for at least one datacenter must be present",
        ));
    }
    // Parsed before the names are checked, as Cassandra builds the strategy first.
    let mut datacenters = BTreeMap::new();
    for (dc, rf) in &options {
        datacenters.insert(dc.clone(), replication_factor(rf)?);
    }
    if let Some(dc) = options.keys().find(|dc| !known_datacenters.contains(dc)) {
        return Err(config_error(format!(
            "Unrecognized strategy option {{{dc}}} passed to NetworkTopologyStrategy for keyspace {keyspace}"
        )));
    }
    Ok(datacenters)
}

/// The client warnings Cassandra gives for a keyspace's replication when it is created or
/// altered: a factor above the nodes there are (`SimpleStrategy`/`NetworkTopologyStrategy`'s
/// `maybeWarnOnOptions`, counting the nodes of the whole ring or of the datacenter; not for a
/// system keyspace), then, for
/// an ALTER that raises the factor, the reminder to repair (`AlterKeyspaceStatement`). khata
/// runs as one node: one node in all, in its own datacenter (`datacenters[0]`).
fn replication_warnings(
    def: &KeyspaceDef,
    before: Option<&Replication>,
    datacenters: &[String],
) -> Vec<String> {
    let name = &def.name;
    let mut warnings = Vec::new();
    let nodes_in = |dc: &str| u32::from(datacenters.first().is_some_and(|d| d == dc));
    match &def.replication {
        _ if system_tables::is_system_keyspace(name) => {}
        Replication::Simple { replication_factor } if *replication_factor > 1 => {
            warnings.push(format!(
                "Your replication factor {replication_factor} for keyspace {name} is higher than the number of nodes 1"
            ));
        }
        Replication::NetworkTopology { datacenters } => {
            for (dc, rf) in datacenters {
                let nodes = nodes_in(dc);
                if *rf > nodes {
                    warnings.push(format!(
                        "Your replication factor {rf} for keyspace {name} is higher than the number of nodes {nodes} for datacenter {dc}"
                    ));
                }
            }
        }
        _ => {}
    }
    let total = |r: &Replication| match r {
        Replication::Simple { replication_factor } => *replication_factor,
        Replication::NetworkTopology { datacenters } => datacenters.values().sum(),
        Replication::Local => 1,
    };
    if before.is_some_and(|b| total(b) < total(&def.replication)) {
        warnings.push(
            "When increasing replication factor you need to run a full (-full) repair to distribute the data."
                .to_string(),
        );
    }
    warnings
}

/// A keyspace's definition from its `WITH` properties, starting from `current` for an ALTER.
/// A replication without its factor takes the one it had (`SimpleStrategy`'s), or else
/// `default_rf`, as Cassandra 4.1's strategies prepare their options from
/// `default_keyspace_rf`.
fn keyspace_def(
    name: &str,
    properties: &[Property],
    current: Option<&KeyspaceDef>,
    known_datacenters: &[String],
    default_rf: u32,
) -> Result<KeyspaceDef, ExecError> {
    let mut replication = current.map(|k| k.replication.clone());
    let mut durable_writes = current.is_none_or(|k| k.durable_writes);
    for p in properties {
        match p.name.0.to_ascii_lowercase().as_str() {
            "replication" => {
                let mut map = property_map(p)?;
                let class = map
                    .remove("class")
                    .ok_or_else(|| config_error("Missing replication strategy class"))?;
                let short = class.rsplit('.').next().unwrap_or(&class);
                let previous = current
                    .map(|k| replication_options(&k.replication))
                    .unwrap_or_default();
                replication = Some(match short {
                    "SimpleStrategy" => {
                        // From NetworkTopologyStrategy's factors per datacenter, the default.
                        let replication_factor = match map.get("replication_factor") {
                            Some(v) => replication_factor(v)?,
                            None => match previous.get("replication_factor") {
                                Some(v) => replication_factor(v)?,
                                None => default_rf,
                            },
                        };
                        if let Some(k) = map.keys().find(|k| *k != "replication_factor") {
                            return Err(config_error(format!(
                                "Unrecognized strategy option {{{k}}} passed to SimpleStrategy for keyspace {name}"
                            )));
                        }
                        Replication::Simple { replication_factor }
                    }
                    "NetworkTopologyStrategy" => Replication::NetworkTopology {
                        datacenters: network_topology(
                            name,
                            map,
                            &previous,
                            known_datacenters,
                            default_rf,
                        )?,
                    },
                    other => {
                        return Err(config_error(format!(
                            "Unable to find replication strategy class 'org.apache.cassandra.locator.{other}'"
                        )));
                    }
                });
            }
            "durable_writes" => durable_writes = property_bool(p)?,
            other => {
                return Err(ExecError::Body(crate::frame::ErrorBody::new(
                    crate::frame::ErrorKind::SyntaxError,
                    format!("Unknown property '{other}'"),
                )));
            }
        }
    }
    let replication =
        replication.ok_or_else(|| config_error("Missing mandatory option 'replication'"))?;
    Ok(KeyspaceDef {
        name: name.to_string(),
        replication,
        durable_writes,
    })
}

/// Table options from `WITH` properties, starting from `options`.
fn table_options(
    mut options: TableOptions,
    properties: &[Property],
) -> Result<TableOptions, ExecError> {
    // `crc_check_chance` inside the compression map, where Cassandra took it before it was
    // a table option of its own (CASSANDRA-9839): still honoured, below the table option.
    let mut deprecated_crc_check_chance = None;
    let top_level_crc_check_chance = properties
        .iter()
        .any(|p| p.name.0.eq_ignore_ascii_case("crc_check_chance"));
    for p in properties {
        let name = p.name.0.to_ascii_lowercase();
        // Cassandra's PropertyDefinitions.toInt (a SyntaxException), then TableParams.validate's
        // bounds (a ConfigurationException).
        let non_negative_int = |p: &Property| {
            let text = property_text(p)?;
            let value = text.parse::<i32>().map_err(|_| {
                ExecError::Body(crate::frame::ErrorBody::new(
                    crate::frame::ErrorKind::SyntaxError,
                    format!("Invalid integer value {text} for '{name}'"),
                ))
            })?;
            u32::try_from(value).map_err(|_| {
                config_error(format!(
                    "{name} must be greater than or equal to 0 (got {value})"
                ))
            })
        };
        let int = |p: &Property| {
            let text = property_text(p)?;
            text.parse::<i32>().map_err(|_| {
                ExecError::Body(crate::frame::ErrorBody::new(
                    crate::frame::ErrorKind::SyntaxError,
                    format!("Invalid integer value {text} for '{name}'"),
                ))
            })
        };
        // PropertyDefinitions.toDouble.
        let double = |p: &Property| {
            let text = property_text(p)?;
            text.parse::<f64>()
                .ok()
                .filter(|_| !text.eq_ignore_ascii_case("nan") && !text.contains("inf"))
                .ok_or_else(|| {
                    ExecError::Body(crate::frame::ErrorBody::new(
                        crate::frame::ErrorKind::SyntaxError,
                        format!("Invalid double value {text} for '{name}'"),
                    ))
                })
        };
        match name.as_str() {
            "compaction" => {
                let map = property_map(p)?;
                options.compaction = compaction_from_map(&map).map_err(config_error)?;
                options.reported.compaction = compaction_map_as_given(&map);
            }
            "compression" => {
                let map = property_map(p)?;
                if let Some(text) = map.get("crc_check_chance") {
                    deprecated_crc_check_chance = Some(text.parse::<f64>().map_err(|_| {
                        config_error(format!("Invalid double value {text} for crc_check_chance"))
                    })?);
                }
                let (c, chunk) = compression_from_map(&map).map_err(config_error)?;
                options.compression = c;
                options.chunk_length_bytes = chunk;
                options.reported.compression = compression_map_as_given(&map, c, chunk);
            }
            "gc_grace_seconds" => options.gc_grace_seconds = non_negative_int(p)?,
            "default_time_to_live" => {
                let ttl = non_negative_int(p)?;
                if ttl > khata_types::MAX_TTL_SECONDS {
                    return Err(config_error(format!(
                        "default_time_to_live must be less than or equal to {} (got {ttl})",
                        khata_types::MAX_TTL_SECONDS
                    )));
                }
                options.default_time_to_live = ttl;
            }
            "comment" => options.comment = property_text(p)?,
            // CREATE TABLE takes `id` before the other options (`table_id`); an ALTER cannot
            // change it (Cassandra's TableAttributes.asAlteredTableParams).
            "id" => return Err(config_error("Cannot alter table id.")),
            "bloom_filter_fp_chance" => options.reported.bloom_filter_fp_chance = double(p)?,
            "crc_check_chance" => options.reported.crc_check_chance = double(p)?,
            "min_index_interval" => options.reported.min_index_interval = int(p)?,
            "max_index_interval" => options.reported.max_index_interval = int(p)?,
            "memtable_flush_period_in_ms" => options.reported.memtable_flush_period_in_ms = int(p)?,
            "cdc" => options.reported.cdc = property_bool(p)?,
            "caching" => options.reported.caching = caching(&property_map(p)?)?,
            "speculative_retry" => {
                options.reported.speculative_retry = speculative_retry(&name, &property_text(p)?)?
            }
            "additional_write_policy" => {
                options.reported.additional_write_policy =
                    speculative_retry(&name, &property_text(p)?)?
            }
            "read_repair" => {
                let text = property_text(p)?.to_ascii_uppercase();
                if text != "BLOCKING" && text != "NONE" {
                    return Err(config_error(format!(
                        "Invalid value {text} for option 'read_repair'"
                    )));
                }
                options.reported.read_repair = text;
            }
            // The memtable configurations of Cassandra's stock `cassandra.yaml` (4.1 and 5.0):
            // khata has one memtable, which each of them names.
            "memtable" => {
                let text = property_text(p)?;
                if !matches!(text.as_str(), "default" | "skiplist" | "sharded" | "trie") {
                    return Err(config_error(format!(
                        "Memtable configuration \"{text}\" not found."
                    )));
                }
            }
            // Accepted for compatibility with schemas written for Cassandra; khata has fixed
            // behaviour for these and does not report them.
            "dclocal_read_repair_chance" | "read_repair_chance" | "extensions" => {}
            other => {
                return Err(ExecError::Body(crate::frame::ErrorBody::new(
                    crate::frame::ErrorKind::SyntaxError,
                    format!("Unknown property '{other}'"),
                )));
            }
        }
    }
    if let Some(chance) = deprecated_crc_check_chance.filter(|_| !top_level_crc_check_chance) {
        options.reported.crc_check_chance = chance;
    }
    check_reported(&options.reported)?;
    khata_types::table_options::normalize_reported_maps(&mut options);
    Ok(options)
}

/// Cassandra 4.1's `TableParams.validate` for the options khata reports.
fn check_reported(r: &khata_types::schema::ReportedOptions) -> Result<(), ExecError> {
    let java = java_double;
    // BloomCalculations.minSupportedBloomFilterFpChance().
    const MIN_BLOOM_FILTER_FP_CHANCE: f64 = 6.71e-05;
    if r.bloom_filter_fp_chance <= MIN_BLOOM_FILTER_FP_CHANCE || r.bloom_filter_fp_chance > 1.0 {
        return Err(config_error(format!(
            "bloom_filter_fp_chance must be larger than {} and less than or equal to 1.0 (got {})",
            java(MIN_BLOOM_FILTER_FP_CHANCE),
            java(r.bloom_filter_fp_chance)
        )));
    }
    if !(0.0..=1.0).contains(&r.crc_check_chance) {
        return Err(config_error(format!(
            "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got {})",
            java(r.crc_check_chance)
        )));
    }
    if r.min_index_interval < 1 {
        return Err(config_error(format!(
            "min_index_interval must be greater than or equal to 1 (got {})",
            r.min_index_interval
        )));
    }
    if r.max_index_interval < r.min_index_interval {
        return Err(config_error(format!(
            "max_index_interval must be greater than or equal to min_index_interval ({}) (got {})",
            r.min_index_interval, r.max_index_interval
        )));
    }
    if r.memtable_flush_period_in_ms < 0 {
        return Err(config_error(format!(
            "memtable_flush_period_in_ms must be greater than or equal to 0 (got {})",
            r.memtable_flush_period_in_ms
        )));
    }
    Ok(())
}

/// Cassandra's `CachingParams.fromMap`, written back as its `asMap` writes it.
fn caching(map: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, ExecError> {
    let mut rest = map.clone();
    let keys = match rest.remove("keys") {
        None => "NONE".to_string(),
        Some(v) if v.eq_ignore_ascii_case("ALL") => "ALL".into(),
        Some(v) if v.eq_ignore_ascii_case("NONE") => "NONE".into(),
        Some(v) => {
            return Err(config_error(format!(
                "Invalid value '{v}' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
            )));
        }
    };
    let rows = match rest.remove("rows_per_partition") {
        None => "NONE".to_string(),
        Some(v) if v.eq_ignore_ascii_case("ALL") => "ALL".into(),
        Some(v) if v.eq_ignore_ascii_case("NONE") => "NONE".into(),
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
            match v.parse::<i32>() {
                Ok(0) => "NONE".into(),
                Ok(i32::MAX) => "ALL".into(),
                Ok(n) => n.to_string(),
                Err(_) => return Err(config_error(format!("For input string: \"{v}\""))),
            }
        }
        Some(v) => {
            return Err(config_error(format!(
                "Invalid value '{v}' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed"
            )));
        }
    };
    if !rest.is_empty() {
        let names: Vec<&str> = rest.keys().map(String::as_str).collect();
        return Err(config_error(format!(
            "Invalid caching sub-options [{}]: only 'keys' and 'rows_per_partition' are allowed",
            names.join(", ")
        )));
    }
    Ok(BTreeMap::from([
        ("keys".to_string(), keys),
        ("rows_per_partition".to_string(), rows),
    ]))
}

/// A speculative retry policy (`speculative_retry`, `additional_write_policy`) as Cassandra's
/// `SpeculativeRetryPolicy.fromString` reads it, written back in its `toString` form: `99p`,
/// `50ms`, `ALWAYS`, `NEVER`, or `MIN(...)`/`MAX(...)` of two of the first kinds.
fn speculative_retry(option: &str, text: &str) -> Result<String, ExecError> {
    fn policy(text: &str) -> Option<String> {
        let upper = text.trim().to_ascii_uppercase();
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
                .then(|| s.parse::<f64>().ok())
                .flatten()
        };
        if let Some(n) = upper
            .strip_suffix("PERCENTILE")
            .or_else(|| upper.strip_suffix('P'))
            .and_then(number)
        {
            if !(n > 0.0 && n < 100.0) {
                return None;
            }
            // DecimalFormat("#.####").
            let formatted = format!("{:.4}", n);
            let formatted = formatted.trim_end_matches('0').trim_end_matches('.');
            return Some(format!("{formatted}p"));
        }
        if let Some(n) = upper.strip_suffix("MS").and_then(number) {
            return Some(format!("{}ms", n as i64));
        }
        match upper.as_str() {
            "ALWAYS" => Some("ALWAYS".into()),
            "NEVER" | "NONE" => Some("NEVER".into()),
            _ => None,
        }
    }
    let upper = text.trim().to_ascii_uppercase();
    let hybrid = ["MIN", "MAX"].into_iter().find_map(|f| {
        let inner = upper
            .strip_prefix(f)?
            .trim()
            .strip_prefix('(')?
            .strip_suffix(')')?;
        let (a, b) = inner.split_once(',')?;
        let (a, b) = (policy(a)?, policy(b)?);
        let kind = |p: &str| p.ends_with('p');
        (kind(&a) != kind(&b)).then(|| format!("{f}({a},{b})"))
    });
    hybrid
        .or_else(|| policy(text))
        .ok_or_else(|| config_error(format!("Invalid value {text} for option '{option}'")))
}

/// Refuses a non-frozen user type column whose type has a non-frozen collection field
/// (Cassandra's `CreateTableStatement`): each field of such a column is one cell, so a field
/// cannot itself be a cell per element.
fn check_nested_multi_cell(ty: &CqlType) -> Result<(), ExecError> {
    match ty {
        CqlType::Udt {
            fields,
            frozen: false,
            ..
        } if fields.iter().any(|(_, t)| t.is_multi_cell()) => Err(ExecError::invalid(
            "Non-frozen UDTs with nested non-frozen collections are not supported",
        )),
        _ => Ok(()),
    }
}

/// Refuses a type a primary key column cannot have, in Cassandra's words.
fn check_key_type(name: &str, ty: &CqlType) -> Result<(), ExecError> {
    let text = khata_types::type_text::type_text(ty);
    let message = if ty.is_multi_cell() {
        if matches!(ty, CqlType::Udt { .. }) {
            format!("Invalid non-frozen user-defined type {text} for PRIMARY KEY column '{name}'")
        } else {
            format!("Invalid non-frozen collection type {text} for PRIMARY KEY column '{name}'")
        }
    } else if *ty == CqlType::Counter {
        format!("counter type is not supported for PRIMARY KEY column '{name}'")
    } else if references_duration(ty) {
        format!("duration type is not supported for PRIMARY KEY column '{name}'")
    } else {
        return Ok(());
    };
    Err(ExecError::invalid(message))
}

/// Whether a type is or holds a duration anywhere.
pub(super) fn references_duration(ty: &CqlType) -> bool {
    match ty {
        CqlType::Duration => true,
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => references_duration(element),
        CqlType::Map { key, value, .. } => references_duration(key) || references_duration(value),
        CqlType::Tuple(items) => items.iter().any(references_duration),
        CqlType::Udt { fields, .. } => fields.iter().any(|(_, t)| references_duration(t)),
        _ => false,
    }
}

/// Refuses durations as set elements or map keys (they have no order to sort by), at any depth.
fn check_duration_placement(ty: &CqlType) -> Result<(), ExecError> {
    let text = || khata_types::type_text::type_text(ty);
    match ty {
        CqlType::Set { element, .. } if **element == CqlType::Duration => Err(ExecError::invalid(
            format!("Durations are not allowed inside sets: {}", text()),
        )),
        CqlType::Map { key, .. } if **key == CqlType::Duration => Err(ExecError::invalid(format!(
            "Durations are not allowed as map keys: {}",
            text()
        ))),
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => check_duration_placement(element),
        CqlType::Map { key, value, .. } => {
            check_duration_placement(key)?;
            check_duration_placement(value)
        }
        CqlType::Tuple(items) => items.iter().try_for_each(check_duration_placement),
        _ => Ok(()),
    }
}

/// A type expression resolved against the keyspace's user types.
fn resolve_type(
    schema: &Schema,
    keyspace: &str,
    ty: &TypeExpr,
    in_udt: bool,
) -> Result<CqlType, ExecError> {
    // A type of another keyspace is refused before it is looked up, as Cassandra's RawUT
    // refuses it: whether or not that keyspace has it, or exists.
    let elsewhere = std::cell::RefCell::new(None);
    let resolver = |ks: Option<&str>, name: &str| {
        let ks = ks.unwrap_or(keyspace);
        if ks != keyspace {
            elsewhere.borrow_mut().get_or_insert_with(|| ks.to_string());
            return None;
        }
        schema
            .user_type(ks, name)
            .map(|u| (u.keyspace.clone(), u.fields.clone()))
    };
    let resolved = ty.to_cql_type(&resolver).map_err(|e| {
        match (&e, elsewhere.borrow().as_deref()) {
            (TypeError::UnknownType(_), Some(k)) => ExecError::invalid(format!(
                "Statement on keyspace {keyspace} cannot refer to a user type in keyspace {k}; user types can only be used in the keyspace they are defined in"
            )),
            _ => ExecError::invalid(e.to_string()),
        }
    })?;
    check_duration_placement(&resolved)?;
    if in_udt && resolved == CqlType::Counter {
        return Err(ExecError::invalid("A user type cannot contain counters"));
    }
    if in_udt && matches!(resolved, CqlType::Udt { frozen: false, .. }) {
        return Err(ExecError::invalid(
            "A user type cannot contain non-frozen UDTs",
        ));
    }
    // A collection field of a user type is kept as written, as Cassandra keeps it: frozen
    // with the type when the type is used frozen, and refused in a non-frozen column
    // (`check_nested_multi_cell`). Types stored by older nodes have such fields frozen.
    Ok(resolved)
}

fn create_table(
    schema: &Schema,
    run: &Run<'_>,
    c: &CreateTable,
    default_gc_grace_seconds: u32,
) -> Result<SchemaChange, ExecError> {
    // The name as written (Cassandra's QualifiedName), for the messages of its parser.
    let written_name = match &c.name.keyspace {
        Some(k) => format!("{}.{}", k.0, c.name.name.0),
        None => c.name.name.0.clone(),
    };
    let table_name = &c.name.name.0;
    let mut declared = HashSet::new();
    for col in &c.columns {
        if !declared.insert(&col.name.0) {
            return Err(ExecError::invalid(format!(
                "Duplicate column '{}' declaration for table '{written_name}'",
                col.name.0
            )));
        }
    }
    let mut ordered = HashSet::new();
    for (col, _) in &c.clustering_order {
        if !ordered.insert(&col.0) {
            return Err(ExecError::invalid(format!(
                "Duplicate column '{}' in CLUSTERING ORDER BY clause for table '{written_name}'",
                col.0
            )));
        }
    }
    let keyspace = run.keyspace_of(&c.name)?;
    let Some(ks) = schema.keyspace(&keyspace) else {
        return Err(ExecError::invalid(format!(
            "Keyspace '{keyspace}' doesn't exist"
        )));
    };
    check_name(table_name, "Table")?;
    let mut types = BTreeMap::new();
    let mut statics = HashSet::new();
    for col in &c.columns {
        let ty = resolve_type(schema, &keyspace, &col.ty, false)?;
        check_nested_multi_cell(&ty)?;
        types.insert(col.name.0.clone(), ty);
        if col.is_static {
            statics.insert(col.name.0.clone());
        }
    }
    // Cassandra's CreateTableStatement.builder: each key column in turn.
    let mut in_key = HashSet::new();
    for name in c
        .primary_key
        .partition_key
        .iter()
        .chain(&c.primary_key.clustering)
    {
        let ty = types.get(&name.0).ok_or_else(|| {
            ExecError::invalid(format!(
                "Unknown column '{}' referenced in PRIMARY KEY for table '{table_name}'",
                name.0
            ))
        })?;
        if !in_key.insert(name.0.clone()) {
            return Err(ExecError::invalid(format!(
                "Duplicate column '{}' in PRIMARY KEY clause for table '{table_name}'",
                name.0
            )));
        }
        check_key_type(&name.0, ty)?;
        if statics.contains(&name.0) {
            return Err(ExecError::invalid(format!(
                "Static column '{}' cannot be part of the PRIMARY KEY",
                name.0
            )));
        }
    }
    let mut columns = Vec::new();
    for (i, name) in c.primary_key.partition_key.iter().enumerate() {
        columns.push(ColumnDef {
            id: column_id(&name.0),
            name: name.0.clone(),
            ty: types[&name.0].clone(),
            kind: ColumnKind::PartitionKey { position: i as u16 },
        });
    }
    let clustering = &c.primary_key.clustering;
    // Cassandra 4.1 names the columns that are not clustering columns, as a Java list.
    let not_clustering: Vec<&str> = c
        .clustering_order
        .iter()
        .map(|(n, _)| n.0.as_str())
        .filter(|n| !clustering.iter().any(|k| k.0 == *n))
        .collect();
    if !not_clustering.is_empty() {
        return Err(ExecError::invalid(format!(
            "Only clustering key columns can be defined in CLUSTERING ORDER directive: [{}] are not clustering columns",
            not_clustering.join(", ")
        )));
    }
    for (i, (id, _)) in c.clustering_order.iter().enumerate() {
        let column = &clustering[i].0;
        if id.0 != *column {
            return Err(ExecError::invalid(
                if c.clustering_order.iter().any(|(n, _)| n.0 == *column) {
                    format!(
                        "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns ({column} must appear before {})",
                        id.0
                    )
                } else {
                    format!("Missing CLUSTERING ORDER for column {column}")
                },
            ));
        }
    }
    let order: BTreeMap<&str, OrderDirection> = c
        .clustering_order
        .iter()
        .map(|(n, d)| (n.0.as_str(), *d))
        .collect();
    for (i, name) in clustering.iter().enumerate() {
        columns.push(ColumnDef {
            id: column_id(&name.0),
            name: name.0.clone(),
            ty: types[&name.0].clone(),
            kind: ColumnKind::Clustering {
                position: i as u16,
                order: match order.get(name.0.as_str()) {
                    Some(OrderDirection::Desc) => ClusteringOrder::Desc,
                    _ => ClusteringOrder::Asc,
                },
            },
        });
    }
    if clustering.is_empty() && !statics.is_empty() {
        return Err(ExecError::invalid(
            "Static columns are only useful (and thus allowed) if the table has at least one clustering column",
        ));
    }
    for col in &c.columns {
        if in_key.contains(&col.name.0) {
            continue;
        }
        columns.push(ColumnDef {
            id: column_id(&col.name.0),
            name: col.name.0.clone(),
            ty: types[&col.name.0].clone(),
            kind: if col.is_static {
                ColumnKind::Static
            } else {
                ColumnKind::Regular
            },
        });
    }
    let has_counter = columns.iter().any(|c| c.ty == CqlType::Counter);
    if has_counter
        && columns.iter().any(|c| {
            matches!(c.kind, ColumnKind::Regular | ColumnKind::Static) && c.ty != CqlType::Counter
        })
    {
        return Err(ExecError::invalid(
            "Cannot mix counter and non counter columns in the same table",
        ));
    }
    let _ = ks;
    let defaults = TableOptions {
        gc_grace_seconds: default_gc_grace_seconds,
        counter: has_counter,
        ..TableOptions::default()
    };
    let (id, properties): (Vec<&Property>, Vec<&Property>) = c
        .properties
        .iter()
        .partition(|p| p.name.0.eq_ignore_ascii_case("id"));
    let properties: Vec<Property> = properties.into_iter().cloned().collect();
    let options = table_options(defaults, &properties)?;
    let id = match id.last() {
        Some(p) => table_id(p)?,
        None => Uuid::new_v4(),
    };
    if has_counter && options.default_time_to_live > 0 {
        return Err(ExecError::invalid(
            "Cannot set default_time_to_live on a table with counters",
        ));
    }
    Ok(SchemaChange::CreateTable(TableSchema {
        def: TableDef {
            id,
            keyspace,
            name: c.name.name.0.clone(),
            columns,
            options,
        },
        dropped: Vec::new(),
        indexes: Vec::new(),
    }))
}

/// The table id of `WITH ID = ...` (what `DESCRIBE ... WITH INTERNALS` prints, so that a
/// table can be re-created under its id), as Cassandra's `TableAttributes.getId` reads it.
fn table_id(p: &Property) -> Result<Uuid, ExecError> {
    let text = property_text(p)?;
    Uuid::parse_str(text.trim()).map_err(|_| config_error("Invalid table id"))
}

/// A table as Cassandra's `TableMetadata.toString()` shows it: `ks.t`, quoted where needed.
fn table_display(t: &TableSchema) -> String {
    format!(
        "{}.{}",
        khata_types::type_text::quote_identifier(&t.def.keyspace),
        khata_types::type_text::quote_identifier(&t.def.name)
    )
}

/// A column added under the name of a dropped one must read the dropped one's values (which
/// stay, hidden by the drop's time, until compaction removes them) and be of its kind, as
/// Cassandra's `AlterTableStatement.AddColumns` requires.
fn check_readd(
    dropped: &khata_coordinator::catalog::DroppedColumn,
    name: &str,
    ty: &CqlType,
    is_static: bool,
    counter_table: bool,
) -> Result<(), ExecError> {
    if !readd_compatible(&ty.expand_user_types(), &dropped.ty) {
        return Err(ExecError::invalid(format!(
            "Cannot re-add previously dropped column '{name}' of type {}, incompatible with previous type {}",
            khata_types::type_text::type_text(ty),
            khata_types::type_text::type_text(&dropped.ty),
        )));
    }
    if dropped.is_static != is_static {
        let kind = |s: bool| if s { "STATIC" } else { "REGULAR" };
        return Err(ExecError::invalid(format!(
            "Cannot re-add previously dropped column '{name}' of kind {}, incompatible with previous kind {}",
            kind(is_static),
            kind(dropped.is_static),
        )));
    }
    if counter_table {
        return Err(ExecError::invalid(format!(
            "Cannot re-add previously dropped counter column {name}"
        )));
    }
    Ok(())
}

/// Whether a column of type `new` may be added under the name of a dropped column of type
/// `old`, whose cells stay until compaction: the same type, a blob for any single-cell type,
/// text for ascii, uuid for timeuuid, varint for the fixed-width integers. This is a question
/// of its own, not [`crate::value::value_compatible`] (what a receiver reads as its own value):
/// Cassandra asks it with `isValueCompatibleWith` in 4.0 and with `isSerializationCompatibleWith`
/// (also the same fixed length and multi-cell-ness) in later releases, and this rule is close to
/// both but neither exactly (it takes varint over smallint and tinyint, and not bigint over
/// timestamp, date over int or time over bigint).
fn readd_compatible(new: &CqlType, old: &CqlType) -> bool {
    // Cassandra 5.0's `isSerializationCompatibleWith`: the new type reads the old one's
    // values (`isValueCompatibleWith`) and has the same fixed length, or none.
    let value_compatible = new == old
        || matches!(
            (new, old),
            (CqlType::Text, CqlType::Ascii)
                | (CqlType::Uuid, CqlType::Timeuuid)
                | (CqlType::Bigint, CqlType::Timestamp)
                | (CqlType::Timestamp, CqlType::Bigint)
                | (
                    CqlType::Varint,
                    CqlType::Int | CqlType::Bigint | CqlType::Smallint | CqlType::Tinyint
                )
        )
        || (*new == CqlType::Blob && !old.is_multi_cell());
    value_compatible && (new == old || new.fixed_length() == old.fixed_length())
}

fn alter_table(
    schema: &Schema,
    t: &TableSchema,
    action: &AlterTableAction,
    ts: i64,
) -> Result<SchemaChange, ExecError> {
    let mut next = t.clone();
    let keyspace = t.def.keyspace.clone();
    match action {
        AlterTableAction::Add {
            if_not_exists,
            columns,
        } => {
            for col in columns {
                if next.def.column(&col.name.0).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(ExecError::invalid(format!(
                        "Column with name '{}' already exists",
                        col.name.0
                    )));
                }
                if col.is_static && t.def.clustering().is_empty() {
                    return Err(ExecError::invalid(
                        "Static columns are only useful (and thus allowed) if the table has at least one clustering column",
                    ));
                }
                let ty = resolve_type(schema, &keyspace, &col.ty, false)?;
                check_nested_multi_cell(&ty)?;
                let counter_table = t.def.options.counter;
                if let Some(d) = t.dropped.iter().find(|d| d.name == col.name.0) {
                    check_readd(d, &col.name.0, &ty, col.is_static, counter_table)?;
                }
                // Cassandra's TableMetadata.validate, a ConfigurationException naming the
                // table as `keyspace.table` (unquoted).
                if (ty == CqlType::Counter) != counter_table {
                    let (ks, table, column) = (&t.def.keyspace, &t.def.name, &col.name.0);
                    return Err(config_error(if counter_table {
                        format!(
                            "{ks}.{table}: Cannot have a non counter column (\"{column}\") in a counter table"
                        )
                    } else {
                        format!(
                            "{ks}.{table}: Cannot have a counter column (\"{column}\") in a non counter column table"
                        )
                    }));
                }
                next.def.columns.push(ColumnDef {
                    id: column_id(&col.name.0),
                    name: col.name.0.clone(),
                    ty,
                    kind: if col.is_static {
                        ColumnKind::Static
                    } else {
                        ColumnKind::Regular
                    },
                });
            }
        }
        AlterTableAction::Drop {
            if_exists,
            columns,
            timestamp,
        } => {
            for name in columns {
                let Some(c) = t.def.column(&name.0) else {
                    if *if_exists {
                        continue;
                    }
                    return Err(ExecError::invalid(format!(
                        "Column {} was not found in table '{}'",
                        name.0,
                        table_display(t)
                    )));
                };
                if matches!(
                    c.kind,
                    ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
                ) {
                    return Err(ExecError::invalid(format!(
                        "Cannot drop PRIMARY KEY column {}",
                        c.name
                    )));
                }
                if let CqlType::Udt {
                    name: type_name,
                    frozen: false,
                    ..
                } = &c.ty
                {
                    return Err(ExecError::invalid(format!(
                        "Cannot drop non-frozen column {} of user type {}",
                        c.name, type_name
                    )));
                }
                next.def.columns.retain(|x| x.name != c.name);
                next.dropped.retain(|d| d.name != c.name);
                next.dropped
                    .push(khata_coordinator::catalog::DroppedColumn {
                        name: c.name.clone(),
                        // Recorded as Cassandra records it, outliving the column's user types.
                        ty: c.ty.expand_user_types(),
                        dropped_time: timestamp.unwrap_or(ts),
                        is_static: c.kind == ColumnKind::Static,
                    });
            }
        }
        AlterTableAction::With(properties) => {
            next.def.options = table_options(next.def.options.clone(), properties)?;
            if next.def.options.counter && next.def.options.default_time_to_live > 0 {
                return Err(ExecError::invalid(
                    "Cannot set default_time_to_live on a table with counters",
                ));
            }
        }
        AlterTableAction::Rename { renames, if_exists } => {
            for (from, to) in renames {
                // Checked against the table as it was (Cassandra's RenameColumns), so two
                // columns cannot swap names.
                let Some(c) = t.def.column(&from.0) else {
                    if *if_exists {
                        continue;
                    }
                    return Err(ExecError::invalid(format!(
                        "Column {} was not found in table {}",
                        from.0,
                        table_display(t)
                    )));
                };
                if !matches!(
                    c.kind,
                    ColumnKind::PartitionKey { .. } | ColumnKind::Clustering { .. }
                ) {
                    return Err(ExecError::invalid(format!(
                        "Cannot rename non PRIMARY KEY column {}",
                        from.0
                    )));
                }
                if t.def.column(&to.0).is_some() || next.def.column(&to.0).is_some() {
                    return Err(ExecError::invalid(format!(
                        "Cannot rename column {} to {} in table '{}'; another column with that name already exists",
                        from.0,
                        to.0,
                        table_display(t)
                    )));
                }
                let dependent: Vec<&str> = t
                    .indexes
                    .iter()
                    .filter(|i| i.column().0 == from.0)
                    .map(|i| i.name.as_str())
                    .collect();
                if !dependent.is_empty() {
                    return Err(ExecError::invalid(format!(
                        "Cannot rename column {} because it has dependent secondary indexes ({})",
                        from.0,
                        dependent.join(", ")
                    )));
                }
                if let Some(c) = next.def.columns.iter_mut().find(|c| c.name == from.0) {
                    c.name = to.0.clone();
                    c.id = column_id(&to.0);
                }
            }
        }
        AlterTableAction::AlterColumnType { .. } => {
            return Err(ExecError::invalid(
                "Altering column types is no longer supported",
            ));
        }
        AlterTableAction::DropCompactStorage => {
            return Err(ExecError::invalid(
                "Cannot DROP COMPACT STORAGE on a table that is not COMPACT STORAGE",
            ));
        }
    }
    Ok(SchemaChange::AlterTable(next))
}
