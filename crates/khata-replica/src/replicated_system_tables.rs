//! The tables of the `system_auth` and `system_distributed` keyspaces, with the columns, key
//! shapes, comments and options Cassandra 4.1 gives them (`AuthKeyspace`,
//! `SystemDistributedKeyspace`), so that a driver, cqlsh or a tool that reads them finds them.
//!
//! Like `system_traces`, both keyspaces are replicated (SimpleStrategy, one replica for
//! `system_auth` and three for `system_distributed`, until an ALTER KEYSPACE changes it) and
//! always exist; their tables are created on every start with fixed, name-derived ids.
//!
//! khata fills none of them: it has no roles or permissions (no authentication), no repair
//! sessions that record their history here, no materialized views and no partition denylist.
//! They read empty until a client writes to them.

use khata_types::schema::{CompactionStrategy, CqlType, TableDef};
use khata_types::table_options::compaction_map_as_given;

use crate::system_tables::table;

/// Roles, their members and permissions: Cassandra's keyspace for its authenticator and
/// authorizer.
pub const SYSTEM_AUTH: &str = "system_auth";
/// Repair history, materialized view build status and the partition denylist.
pub const SYSTEM_DISTRIBUTED: &str = "system_distributed";

/// `AuthKeyspace`'s `gc_grace_seconds`: 90 days.
const AUTH_GC_GRACE_SECONDS: u32 = 90 * 24 * 60 * 60;
/// The `default_time_to_live` of the repair history tables: 30 days.
const REPAIR_HISTORY_TTL_SECONDS: u32 = 30 * 24 * 60 * 60;
/// The repair history tables' time windows: one day.
const REPAIR_HISTORY_WINDOW_SECONDS: u64 = 24 * 60 * 60;

fn text() -> CqlType {
    CqlType::Text
}

fn set_of(element: CqlType) -> CqlType {
    CqlType::Set {
        element: Box::new(element),
        frozen: false,
    }
}

/// A `system_auth` table: commented, kept 90 days past deletion (`AuthKeyspace.parse`).
fn auth_table(
    name: &str,
    comment: &str,
    partition_key: &[(&str, CqlType)],
    clustering: &[(&str, CqlType)],
    regular: &[(&str, CqlType)],
) -> TableDef {
    let mut def = table(SYSTEM_AUTH, name, partition_key, clustering, regular);
    def.options.comment = comment.to_string();
    def.options.gc_grace_seconds = AUTH_GC_GRACE_SECONDS;
    def
}

/// A `system_distributed` table: commented, with the default `gc_grace_seconds`
/// (`SystemDistributedKeyspace.parse`).
fn distributed_table(
    name: &str,
    comment: &str,
    partition_key: &[(&str, CqlType)],
    clustering: &[(&str, CqlType)],
    regular: &[(&str, CqlType)],
) -> TableDef {
    let mut def = table(SYSTEM_DISTRIBUTED, name, partition_key, clustering, regular);
    def.options.comment = comment.to_string();
    def.options.gc_grace_seconds = khata_types::schema::TableOptions::default().gc_grace_seconds;
    def
}

/// A repair history table: rows expire after 30 days, compacted in one-day time windows.
fn repair_history_options(mut def: TableDef) -> TableDef {
    def.options.default_time_to_live = REPAIR_HISTORY_TTL_SECONDS;
    def.options.compaction = CompactionStrategy::TimeWindow {
        window_size_seconds: REPAIR_HISTORY_WINDOW_SECONDS,
    };
    // As Cassandra's `CompactionParams.twcs` keeps the map it is given.
    def.options.reported.compaction = compaction_map_as_given(
        &[
            ("class", "TimeWindowCompactionStrategy"),
            ("compaction_window_unit", "DAYS"),
            ("compaction_window_size", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    );
    def
}

/// `system_auth.roles`: role definitions.
pub fn roles() -> TableDef {
    auth_table(
        "roles",
        "role definitions",
        &[("role", text())],
        &[],
        &[
            ("can_login", CqlType::Boolean),
            ("is_superuser", CqlType::Boolean),
            ("member_of", set_of(text())),
            ("salted_hash", text()),
        ],
    )
}

/// `system_auth.role_members`: which roles a role is granted to.
pub fn role_members() -> TableDef {
    auth_table(
        "role_members",
        "role memberships lookup table",
        &[("role", text())],
        &[("member", text())],
        &[],
    )
}

/// `system_auth.role_permissions`: the permissions of a role on each resource.
pub fn role_permissions() -> TableDef {
    auth_table(
        "role_permissions",
        "permissions granted to db roles",
        &[("role", text())],
        &[("resource", text())],
        &[("permissions", set_of(text()))],
    )
}

/// `system_auth.resource_role_permissons_index` (Cassandra's spelling): the roles with
/// permissions on a resource.
pub fn resource_role_index() -> TableDef {
    auth_table(
        "resource_role_permissons_index",
        "index of db roles with permissions granted on a resource",
        &[("resource", text())],
        &[("role", text())],
        &[],
    )
}

/// `system_auth.network_permissions`: the datacenters a role may connect to.
pub fn network_permissions() -> TableDef {
    auth_table(
        "network_permissions",
        "user network permissions",
        &[("role", text())],
        &[],
        &[(
            "dcs",
            CqlType::Set {
                element: Box::new(text()),
                frozen: true,
            },
        )],
    )
}

/// `system_distributed.repair_history`: one row per repaired range of a table.
pub fn repair_history() -> TableDef {
    repair_history_options(distributed_table(
        "repair_history",
        "Repair history",
        &[("keyspace_name", text()), ("columnfamily_name", text())],
        &[("id", CqlType::Timeuuid)],
        &[
            ("coordinator", CqlType::Inet),
            ("coordinator_port", CqlType::Int),
            ("exception_message", text()),
            ("exception_stacktrace", text()),
            ("finished_at", CqlType::Timestamp),
            ("parent_id", CqlType::Timeuuid),
            ("participants", set_of(CqlType::Inet)),
            ("participants_v2", set_of(text())),
            ("range_begin", text()),
            ("range_end", text()),
            ("started_at", CqlType::Timestamp),
            ("status", text()),
        ],
    ))
}

/// `system_distributed.parent_repair_history`: one row per repair session.
pub fn parent_repair_history() -> TableDef {
    repair_history_options(distributed_table(
        "parent_repair_history",
        "Repair history",
        &[("parent_id", CqlType::Timeuuid)],
        &[],
        &[
            ("columnfamily_names", set_of(text())),
            ("exception_message", text()),
            ("exception_stacktrace", text()),
            ("finished_at", CqlType::Timestamp),
            ("keyspace_name", text()),
            (
                "options",
                CqlType::Map {
                    key: Box::new(text()),
                    value: Box::new(text()),
                    frozen: false,
                },
            ),
            ("requested_ranges", set_of(text())),
            ("started_at", CqlType::Timestamp),
            ("successful_ranges", set_of(text())),
        ],
    ))
}

/// `system_distributed.view_build_status`: each node's progress building a materialized view.
pub fn view_build_status() -> TableDef {
    distributed_table(
        "view_build_status",
        "Materialized View build status",
        &[("keyspace_name", text()), ("view_name", text())],
        &[("host_id", CqlType::Uuid)],
        &[("status", text())],
    )
}

/// `system_distributed.partition_denylist`: partition keys refused to reads and writes.
pub fn partition_denylist() -> TableDef {
    distributed_table(
        "partition_denylist",
        "Partition keys which have been denied access",
        &[("ks_name", text()), ("table_name", text())],
        &[("key", CqlType::Blob)],
        &[],
    )
}

/// Every table of `system_auth` and `system_distributed`.
pub fn all() -> Vec<TableDef> {
    vec![
        roles(),
        role_members(),
        role_permissions(),
        resource_role_index(),
        network_permissions(),
        repair_history(),
        parent_repair_history(),
        view_build_status(),
        partition_denylist(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_in_its_keyspace_with_a_distinct_id() {
        let tables = all();
        let mut ids: Vec<_> = tables.iter().map(|t| t.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), tables.len());
        for t in &tables {
            assert!(t.keyspace == SYSTEM_AUTH || t.keyspace == SYSTEM_DISTRIBUTED);
            assert!(!t.options.comment.is_empty(), "{}", t.name);
        }
    }
}
