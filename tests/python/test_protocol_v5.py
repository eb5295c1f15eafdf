"""Native protocol v5 through the Python driver: checksummed segments, with and without LZ4.

The driver prefers v5 when the server offers it, so every other test module runs over v5 too;
this one pins the version, checks that framing (and LZ4) is really on, and covers what v5
changes for a client: prepared statements with a result metadata id that follows the table
(ALTER TABLE ADD, then a prepared `SELECT *` shows the new column), paging, and envelopes
larger than one 128 KiB segment in both directions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import lz4  # noqa: F401  (the driver compresses with lz4 only when the module is installed)
import pytest
from cassandra import ProtocolVersion
from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

ROWS_TO_PAGE = 3000
PAGE_SIZE = 500
LARGE_BLOB_BYTES = 300_000


@dataclass
class V5:
    """A session pinned to v5 and the compression it asked for (False or "lz4")."""
    session: object
    compression: object


@pytest.fixture(scope="module", params=[False, "lz4"], ids=["uncompressed", "lz4"])
def v5(khata_node, request):
    """A session pinned to protocol v5, uncompressed or with LZ4 segments."""
    host, port = khata_node
    cluster = Cluster([host], port=port, protocol_version=ProtocolVersion.V5,
                      compression=request.param)
    try:
        yield V5(cluster.connect(), request.param)
    finally:
        cluster.shutdown()


@pytest.fixture(scope="module")
def table(session, keyspace):
    """Tables created once through the shared session (schema is shared by every session)."""
    session.execute(f"CREATE TABLE {keyspace}.kv (k int PRIMARY KEY, v text)")
    session.execute(f"CREATE TABLE {keyspace}.paged (p int, c int, v text, PRIMARY KEY (p, c))")
    session.execute(f"CREATE TABLE {keyspace}.blobs (k int PRIMARY KEY, v blob)")
    return keyspace


def _connections(session):
    return [conn for pool in session.get_pools() for conn in pool.get_connections()]


def test_framing_is_on_with_the_asked_compression(v5):
    assert v5.session.cluster.protocol_version == 5
    connections = _connections(v5.session)
    assert connections
    for conn in connections:
        assert conn.protocol_version == 5
        # Checksummed segments from READY on (spec v5 §2.3.1).
        assert conn._is_checksumming_enabled
        assert (conn.compressor is not None) == (v5.compression == "lz4")
    row = v5.session.execute("SELECT release_version FROM system.local").one()
    assert row.release_version


def test_default_cluster_negotiates_v5(session):
    """The shared session uses a default `Cluster()`: it now settles on v5, not v4."""
    assert session.cluster.protocol_version == 5


def test_prepared_statements(v5, table):
    v5_session = v5.session
    insert = v5_session.prepare(f"INSERT INTO {table}.kv (k, v) VALUES (?, ?)")
    select = v5_session.prepare(f"SELECT k, v FROM {table}.kv WHERE k = ?")
    assert select.result_metadata_id  # v5 PREPARED carries one
    for k in range(20):
        v5_session.execute(insert, (k, f"value {k}"))
    for k in range(20):
        row = v5_session.execute(select, (k,)).one()
        assert (row.k, row.v) == (k, f"value {k}")
    assert v5_session.execute(select, (999,)).one() is None


def test_paging_over_thousands_of_rows(v5, table):
    v5_session = v5.session
    insert = v5_session.prepare(f"INSERT INTO {table}.paged (p, c, v) VALUES (?, ?, ?)")
    execute_concurrent_with_args(
        v5_session, insert, [(1, c, f"row {c}") for c in range(ROWS_TO_PAGE)],
        concurrency=50, raise_on_first_error=True)
    statement = SimpleStatement(f"SELECT c, v FROM {table}.paged WHERE p = 1",
                                fetch_size=PAGE_SIZE)
    result = v5_session.execute(statement)
    assert result.has_more_pages
    seen = [row.c for row in result]
    assert seen == list(range(ROWS_TO_PAGE))
    prepared = v5_session.prepare(f"SELECT c FROM {table}.paged WHERE p = ?")
    prepared.fetch_size = PAGE_SIZE
    assert sum(1 for _ in v5_session.execute(prepared, (1,))) == ROWS_TO_PAGE


def test_alter_table_add_reaches_a_prepared_select_star(v5, keyspace):
    v5_session = v5.session
    name = f"{keyspace}.grow_{'lz4' if v5.compression else 'plain'}"
    v5_session.execute(f"CREATE TABLE {name} (k int PRIMARY KEY, a text)")
    v5_session.execute(f"INSERT INTO {name} (k, a) VALUES (1, 'one')")
    select = v5_session.prepare(f"SELECT * FROM {name} WHERE k = ?")
    first = v5_session.execute(select, (1,))
    assert first.column_names == ["k", "a"]
    before = select.result_metadata_id

    v5_session.execute(f"ALTER TABLE {name} ADD b int")
    v5_session.execute(f"UPDATE {name} SET b = 7 WHERE k = 1")
    # The same prepared statement: the server sees a stale result metadata id and sends the
    # new metadata with Metadata_changed, so the new column appears.
    after = v5_session.execute(select, (1,))
    assert after.column_names == ["k", "a", "b"]
    row = after.one()
    assert (row.k, row.a, row.b) == (1, "one", 7)
    # Re-preparing gives the new metadata and a different id.
    again = v5_session.prepare(f"SELECT * FROM {name} WHERE k = ?")
    assert again.result_metadata_id != before
    assert v5_session.execute(again, (1,)).one().b == 7


def test_values_larger_than_a_segment(v5, table):
    v5_session = v5.session
    """An envelope over 128 KiB is split over non-self-contained segments, both ways."""
    blob = os.urandom(LARGE_BLOB_BYTES)
    insert = v5_session.prepare(f"INSERT INTO {table}.blobs (k, v) VALUES (?, ?)")
    v5_session.execute(insert, (1, blob))
    v5_session.execute(insert, (2, blob[::-1]))
    rows = {row.k: row.v for row in v5_session.execute(f"SELECT k, v FROM {table}.blobs")}
    assert rows == {1: blob, 2: blob[::-1]}


def test_cqlsh_speaks_v5(cqlsh):
    result = cqlsh("SHOW VERSION")
    assert result.returncode == 0, result.stderr
    assert "Native protocol v5" in result.stdout, result.stdout


@pytest.mark.parametrize("version", [ProtocolVersion.V3, ProtocolVersion.V4])
def test_older_versions_prepare_and_page(khata_node, table, version):
    """Drivers pinned to v3 or v4 prepare, bind and page as over v5 (v3's prepared metadata
    has no partition key indexes: a server that sent them broke every v3 PREPARE)."""
    host, port = khata_node
    cluster = Cluster([host], port=port, protocol_version=version)
    try:
        s = cluster.connect()
        assert s.cluster.protocol_version == version
        insert = s.prepare(f"INSERT INTO {table}.paged (p, c, v) VALUES (?, ?, ?)")
        for c in range(25):
            s.execute(insert, (70 + version, c, f"v{c}"))
        select = s.prepare(f"SELECT c, v FROM {table}.paged WHERE p = ?")
        select.fetch_size = 7
        rows = list(s.execute(select, (70 + version,)))
        assert [r.c for r in rows] == list(range(25))
        assert rows[3].v == "v3"
    finally:
        cluster.shutdown()
