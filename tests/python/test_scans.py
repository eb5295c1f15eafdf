"""Scans over many partitions (no partition key given): LIMIT and page sizes count rows as
Cassandra counts them.

A partition whose only live data is its static row is one row of a scan's result (its key and
static values, nulls elsewhere), so it counts as one against LIMIT and the page size, as
Cassandra's `DataLimits.CQLLimits` counts it when such a partition closes. It is such a row
only when the query asks for the static row: a static column is selected or restricted, or no
column outside the primary key is selected (`*`, `count(*)`, key columns); a selection of
regular columns and no static one leaves it out, as Cassandra leaves the static row unfetched.
"""

from __future__ import annotations

import pytest
from cassandra.query import SimpleStatement


@pytest.fixture(scope="module")
def statics(session, keyspace):
    table = f"{keyspace}.statics"
    session.execute(
        f"CREATE TABLE {table} (k int, c int, s text static, v int, PRIMARY KEY (k, c))")
    update = session.prepare(f"UPDATE {table} SET s = 'x' WHERE k = ?")
    for k in range(10):
        session.execute(update, [k])
    session.execute(f"INSERT INTO {table} (k, c, s, v) VALUES (100, 1, 'x', 1)")
    session.execute(f"INSERT INTO {table} (k, c, v) VALUES (100, 2, 2)")
    return table


@pytest.mark.parametrize("query, expected", [
    ("SELECT k, c FROM {t} LIMIT 1", 1),
    ("SELECT k, c FROM {t} LIMIT 3", 3),
    ("SELECT * FROM {t} LIMIT 2", 2),
    ("SELECT k, c FROM {t} WHERE token(k) > -9223372036854775807 LIMIT 1", 1),
    ("SELECT DISTINCT k FROM {t} LIMIT 2", 2),
    ("SELECT DISTINCT k, s FROM {t} LIMIT 4", 4),
    ("SELECT k, s FROM {t} PER PARTITION LIMIT 1 LIMIT 2", 2),
    ("SELECT k, c FROM {t}", 12),
    ("SELECT DISTINCT k FROM {t}", 11),
])
def test_static_only_partitions_count_against_limit(session, statics, query, expected):
    rows = list(session.execute(SimpleStatement(query.format(t=statics), fetch_size=None)))
    assert len(rows) == expected


@pytest.mark.parametrize("fetch_size", [1, 2, 5])
def test_static_only_partitions_count_against_the_page(session, statics, fetch_size):
    result = session.execute(
        SimpleStatement(f"SELECT k, c FROM {statics}", fetch_size=fetch_size))
    assert len(result.current_rows) == fetch_size
    rows = [(r.k, r.c) for r in result]
    assert len(rows) == 12
    assert len(set(rows)) == 12
    assert sorted(r for r in rows if r[0] == 100) == [(100, 1), (100, 2)]
    assert sorted(k for k, c in rows if c is None) == list(range(10))


@pytest.fixture(scope="module")
def lone_static(session, keyspace):
    """Partitions 1-3 hold only static data; partition 4 one row and its static value."""
    table = f"{keyspace}.lone_static"
    session.execute(
        f"CREATE TABLE {table} (p int, c int, s int static, r int, PRIMARY KEY (p, c))")
    for p in (1, 2, 3):
        session.execute(f"INSERT INTO {table} (p, s) VALUES ({p}, {p})")
    session.execute(f"INSERT INTO {table} (p, c, s, r) VALUES (4, 1, 4, 40)")
    return table


@pytest.mark.parametrize("query, expected", [
    # No static column selected: the partition has no row (Cassandra's static row is left
    # unfetched), as scylla's cqlpy test_static.py::test_static_not_selected has it.
    ("SELECT r FROM {t} WHERE p = 1", []),
    ("SELECT c, r FROM {t} WHERE p = 1", []),
    ("SELECT p, r FROM {t} WHERE p = 1", []),
    ("SELECT r FROM {t} WHERE p = 1 LIMIT 1", []),
    ("SELECT r FROM {t} WHERE p IN (1, 2)", []),
    ("SELECT writetime(r) FROM {t} WHERE p = 1", []),
    ("SELECT count(r) FROM {t} WHERE p = 1", [(0,)]),
    ("SELECT count(*) FROM {t} WHERE p = 1 AND c = 1", [(0,)]),
    # A static column, `*`, count(*) or key columns alone: one row of the static values.
    ("SELECT * FROM {t} WHERE p = 1", [(1, None, 1, None)]),
    ("SELECT s FROM {t} WHERE p = 1", [(1,)]),
    ("SELECT r, s FROM {t} WHERE p = 1", [(None, 1)]),
    ("SELECT p FROM {t} WHERE p = 1", [(1,)]),
    ("SELECT c FROM {t} WHERE p = 1", [(None,)]),
    ("SELECT count(*) FROM {t} WHERE p = 1", [(1,)]),
    ("SELECT DISTINCT p FROM {t} WHERE p = 1", [(1,)]),
    # A restricted static column is queried too.
    ("SELECT r FROM {t} WHERE p = 1 AND s = 1 ALLOW FILTERING", [(None,)]),
])
def test_static_only_partition_is_a_row_only_when_statics_are_queried(
        session, lone_static, query, expected):
    rows = [tuple(r) for r in session.execute(query.format(t=lone_static))]
    assert rows == expected


@pytest.mark.parametrize("fetch_size", [None, 1, 2])
def test_static_only_partitions_in_scans_without_static_columns(session, lone_static, fetch_size):
    def run(query):
        rows = session.execute(SimpleStatement(query.format(t=lone_static), fetch_size=fetch_size))
        return sorted((tuple(r) for r in rows), key=repr)
    assert run("SELECT r FROM {t}") == [(40,)]
    assert run("SELECT c, r FROM {t}") == [(1, 40)]
    assert run("SELECT p, r FROM {t} LIMIT 2") == [(4, 40)]
    assert run("SELECT p, s FROM {t}") == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert len(run("SELECT p, c FROM {t} LIMIT 3")) == 3
    assert run("SELECT count(*) FROM {t}") == [(4,)]
    assert run("SELECT count(r) FROM {t}") == [(1,)]
    assert run("SELECT r FROM {t} WHERE s > 0 ALLOW FILTERING") == [(40,), (None,), (None,), (None,)]


def test_a_scan_over_many_tombstones_warns(session, keyspace):
    """A scan warns past tombstone_warn_threshold (1,000) as a single-partition read does."""
    table = f"{keyspace}.tombs"
    session.execute(f"CREATE TABLE {table} (k int, c int, v int, PRIMARY KEY (k, c))")
    insert = session.prepare(f"INSERT INTO {table} (k, c, v) VALUES (1, ?, 0)")
    delete = session.prepare(f"DELETE FROM {table} WHERE k = 1 AND c = ?")
    for c in range(1500):
        session.execute(insert, [c])
        session.execute(delete, [c])
    session.execute(f"INSERT INTO {table} (k, c, v) VALUES (2, 0, 0)")
    for query in (f"SELECT * FROM {table} WHERE k = 1", f"SELECT * FROM {table}"):
        future = session.execute_async(query)
        future.result()
        assert any("tombstone cells (see tombstone_warn_threshold)" in w
                   for w in future.warnings or []), (query, future.warnings)


def test_element_of_a_frozen_collection_in_the_primary_key(session, keyspace):
    """`k['1']` of a frozen map partition key, `c['1']` of a frozen map clustering column and
    `k[2]` of a frozen set key are read from the key (CollectionsTest.testMapOperationOnPartKey,
    testMapOperationOnClustKey)."""
    by_map = f"{keyspace}.frozen_map_key"
    session.execute(f"CREATE TABLE {by_map} (k frozen<map<text, text>> PRIMARY KEY, l text)")
    session.execute(f"INSERT INTO {by_map} (k, l) VALUES ({{'1': 'value1', '22': 'value22'}}, 'foobar')")
    assert [tuple(r) for r in session.execute(
        f"SELECT k['1'], k['22'], k['3'], k['1'..'22'], l FROM {by_map}")] == [
        ('value1', 'value22', None, {'1': 'value1', '22': 'value22'}, 'foobar')]
    by_clustering = f"{keyspace}.frozen_map_clustering"
    session.execute(f"CREATE TABLE {by_clustering} (p int, c frozen<map<text, text>>, "
                    "s frozen<set<int>>, v int, PRIMARY KEY (p, c, s))")
    session.execute(f"INSERT INTO {by_clustering} (p, c, s, v) VALUES "
                    "(0, {'1': 'value1'}, {1, 2}, 7)")
    assert [tuple(r) for r in session.execute(
        f"SELECT c['1'], s[2], s[3], v FROM {by_clustering} WHERE p = 0")] == [
        ('value1', 2, None, 7)]
    by_set = f"{keyspace}.frozen_set_key"
    session.execute(f"CREATE TABLE {by_set} (k frozen<set<int>> PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {by_set} (k, v) VALUES ({{1, 2}}, 0)")
    prepared = session.prepare(f"SELECT k[?], v FROM {by_set}")
    assert [tuple(r) for r in session.execute(prepared, (2,))] == [(2, 0)]


def test_order_by_skips_columns_fixed_by_a_single_tuple_in(session, keyspace):
    """A multi-column IN of one tuple is an equality to Cassandra (CASSANDRA-10271), so ORDER
    BY may skip its columns (testAllowSkippingEqualityAndSingleValueInRestrictedClusteringColumns)."""
    from cassandra import InvalidRequest
    table = f"{keyspace}.single_tuple_in"
    session.execute(f"CREATE TABLE {table} (a int, b int, c int, d int, PRIMARY KEY (a, b, c))")
    session.execute(f"INSERT INTO {table} (a, b, c, d) VALUES (0, 1, 1, 4)")
    for order in ("ASC", "DESC"):
        assert [tuple(r) for r in session.execute(
            f"SELECT * FROM {table} WHERE a = 0 AND (b, c) IN ((1, 1)) ORDER BY c {order}")] == [
            (0, 1, 1, 4)]
    with pytest.raises(InvalidRequest, match="Order by currently only supports"):
        session.execute(
            f"SELECT * FROM {table} WHERE a = 0 AND (b, c) IN ((1, 1), (1, 2)) ORDER BY c ASC")


def test_order_by_a_column_named_twice_takes_its_last_direction(session, keyspace):
    """Cassandra keeps ORDER BY in a map by column, so a column named again keeps its place and
    takes its last direction; cqlengine sends `ORDER BY "c" ASC, "c" DESC` for
    `order_by('c').order_by('-c')` (its test_order_by_success_case)."""
    table = f"{keyspace}.order_twice"
    session.execute(f"CREATE TABLE {table} (k int, c int, d int, PRIMARY KEY (k, c, d))")
    for c in range(3):
        session.execute(f"INSERT INTO {table} (k, c, d) VALUES (0, {c}, {c})")
    cs = lambda q: [r.c for r in session.execute(f"SELECT c FROM {table} WHERE k = 0 {q}")]
    assert cs("ORDER BY c ASC, c DESC") == [2, 1, 0]
    assert cs("ORDER BY c DESC, c ASC") == [0, 1, 2]
    assert cs("ORDER BY c, d DESC, c DESC") == [2, 1, 0]
