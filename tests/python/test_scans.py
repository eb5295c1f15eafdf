"""Scans over many partitions (no partition key given): LIMIT and page sizes count rows as
Cassandra counts them.

A partition whose only live data is its static row is one row of a scan's result (its key and
static values, nulls elsewhere), so it counts as one against LIMIT and the page size, as
Cassandra's `DataLimits.CQLLimits` counts it when such a partition closes.
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
