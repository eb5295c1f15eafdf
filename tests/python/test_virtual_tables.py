"""Cassandra 4's virtual keyspaces as the Python driver and cqlsh see them.

The driver reads `system_virtual_schema.keyspaces / tables / columns` on connect (release 4.0
and later) and builds metadata marked virtual; cqlsh lists them in DESCRIBE KEYSPACES, describes
them as VIRTUAL, and formats SELECTs of them; `system_views.clients` lists this driver.
"""

from __future__ import annotations

from cassandra import InvalidRequest
import pytest


def test_driver_metadata_marks_the_virtual_keyspaces(cluster, session):
    metadata = cluster.metadata
    views = metadata.keyspaces["system_views"]
    schema = metadata.keyspaces["system_virtual_schema"]
    assert views.virtual and schema.virtual
    assert {"settings", "clients", "caches", "disk_usage", "sstable_tasks"} <= set(views.tables)
    tasks = views.tables["sstable_tasks"]
    assert [c.name for c in tasks.clustering_key] == ["table_name", "task_id"]
    assert tasks.columns["task_id"].cql_type == "uuid"
    assert set(schema.tables) == {"keyspaces", "tables", "columns"}
    clients = views.tables["clients"]
    assert clients.virtual
    assert [c.name for c in clients.partition_key] == ["address"]
    assert [c.name for c in clients.clustering_key] == ["port"]
    assert clients.columns["request_count"].cql_type == "bigint"
    exported = views.export_as_string()
    assert "VIRTUAL KEYSPACE system_views" in exported
    assert "VIRTUAL TABLE system_views.settings" in exported


def test_clients_lists_this_driver(session):
    rows = list(session.execute(
        "SELECT address, port, driver_name, driver_version, connection_stage, "
        "protocol_version, request_count FROM system_views.clients"))
    assert rows
    ours = [r for r in rows if r.driver_name == "Apache Cassandra Python Driver"]
    assert ours, rows
    for r in ours:
        assert r.address == "127.0.0.1"
        assert r.port > 0
        assert r.connection_stage == "ready"
        assert r.request_count >= 1


def test_settings_answer_by_name_and_in_pages(session):
    (row,) = list(session.execute(
        "SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'"))
    assert row.value in ("periodic", "group", "batch")
    session.default_fetch_size = 5
    try:
        names = [r.name for r in session.execute("SELECT name FROM system_views.settings")]
    finally:
        session.default_fetch_size = 5000
    assert len(names) == len(set(names)) > 20


def test_virtual_tables_are_read_only(session):
    with pytest.raises(InvalidRequest, match="Modification is not supported"):
        session.execute("INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')")
    with pytest.raises(InvalidRequest, match="not user-modifiable"):
        session.execute("CREATE TABLE system_views.mine (k int PRIMARY KEY)")


def test_cqlsh_lists_describes_and_selects(cqlsh):
    result = cqlsh("DESCRIBE KEYSPACES")
    assert result.returncode == 0, result.stderr
    names = result.stdout.split()
    assert "system_views" in names and "system_virtual_schema" in names
    result = cqlsh("DESCRIBE KEYSPACE system_views")
    assert result.returncode == 0, result.stderr
    assert "VIRTUAL KEYSPACE system_views;" in result.stdout
    assert "VIRTUAL TABLE system_views.clients (" in result.stdout
    result = cqlsh("SELECT name, value FROM system_views.settings WHERE name = 'cluster_name'")
    assert result.returncode == 0, result.stderr
    assert "cluster_name" in result.stdout
    assert "(1 rows)" in result.stdout
