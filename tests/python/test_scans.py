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
