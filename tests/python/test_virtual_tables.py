"""Cassandra 4's virtual keyspaces as the Python driver and cqlsh see them.

The driver reads `system_virtual_schema.keyspaces / tables / columns` on connect (release 4.0
and later) and builds metadata marked virtual; cqlsh lists them in DESCRIBE KEYSPACES, describes
them as VIRTUAL, and formats SELECTs of them; `system_views.clients` lists this driver.
"""

from __future__ import annotations

from cassandra import InvalidRequest, Unauthorized
import pytest


def test_driver_metadata_marks_the_virtual_keyspaces(cluster, session):
    metadata = cluster.metadata
    views = metadata.keyspaces["system_views"]
    schema = metadata.keyspaces["system_virtual_schema"]
    assert views.virtual and schema.virtual
    assert {"settings", "clients", "caches", "disk_usage", "sstable_tasks", "local_read_latency",
            "local_write_latency", "local_scan_latency"} <= set(views.tables)
    pools = views.tables["thread_pools"]
    assert [c.name for c in pools.partition_key] == ["name"]
    assert pools.columns["completed_tasks"].cql_type == "bigint"
    reads = views.tables["local_read_latency"]
    assert [c.name for c in reads.partition_key] == ["keyspace_name"]
    assert [c.name for c in reads.clustering_key] == ["table_name"]
    assert reads.columns["p99th_ms"].cql_type == "double"
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


def test_latency_tables_count_this_drivers_reads(session):
    session.execute("CREATE KEYSPACE IF NOT EXISTS lat WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS lat.t (k int PRIMARY KEY, v int)")
    for k in range(10):
        session.execute("INSERT INTO lat.t (k, v) VALUES (%s, %s)", (k, k))
    for k in range(7):
        session.execute("SELECT v FROM lat.t WHERE k = %s", (k,))
    row = session.execute("SELECT count, p50th_ms, p99th_ms, max_ms FROM system_views.local_read_latency "
                          "WHERE keyspace_name = 'lat' AND table_name = 't'").one()
    assert row.count == 7
    assert 0 < row.p50th_ms <= row.p99th_ms <= row.max_ms
    writes = session.execute("SELECT count FROM system_views.local_write_latency "
                             "WHERE keyspace_name = 'lat' AND table_name = 't'").one()
    assert writes.count == 10
    coordinated = session.execute("SELECT count FROM system_views.coordinator_read_latency "
                                  "WHERE keyspace_name = 'lat' AND table_name = 't'").one()
    assert coordinated.count == 7
    pools = {r.name: r for r in session.execute("SELECT * FROM system_views.thread_pools")}
    assert pools["Native-Transport-Requests"].completed_tasks > 17
    assert pools["CompactionExecutor"].active_tasks_limit == 2


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
    with pytest.raises(Unauthorized, match="not user-modifiable"):
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
