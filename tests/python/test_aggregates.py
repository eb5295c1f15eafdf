"""Aggregates and GROUP BY through the Python driver, as Cassandra 4.1 answers them.

GROUP BY results page by groups: a page holds at most the page size in groups (each whole:
a page ends before the first row of the next group) and carries a paging state to the rest,
and LIMIT counts groups across pages (Cassandra's `CQLGroupByLimits`; scylla's cqlpy
test_group_by.py::test_group_by_clustering_prefix_with_limit_and_paging). An aggregate
without GROUP BY is one row on one page.
"""

from __future__ import annotations

import pytest
from cassandra.query import SimpleStatement


@pytest.fixture(scope="module")
def grouped(session, keyspace):
    """Partitions 0 and 1, each with c1 in (0, 1) and c2 in (0, 1); v = p*4 + c1*2 + c2 + 1."""
    table = f"{keyspace}.grouped"
    session.execute(
        f"CREATE TABLE {table} (p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2))")
    insert = session.prepare(f"INSERT INTO {table} (p, c1, c2, v) VALUES (?, ?, ?, ?)")
    for p in (0, 1):
        for c1 in (0, 1):
            for c2 in (0, 1):
                session.execute(insert, (p, c1, c2, p * 4 + c1 * 2 + c2 + 1))
    return table


def pages(session, query, fetch_size, params=None):
    """The rows of each page of `query`, following the paging state."""
    statement = SimpleStatement(query, fetch_size=fetch_size)
    out = []
    state = None
    while True:
        result = session.execute(statement, params, paging_state=state)
        out.append([tuple(r) for r in result.current_rows])
        state = result.paging_state
        if state is None:
            return out


@pytest.mark.parametrize("where, groups", [
    ("", 4),
    ("WHERE p IN (0, 1)", 4),
    ("WHERE token(p) > -9223372036854775807", 4),
    ("WHERE v > 1", 4),
    ("WHERE c2 = 1", 4),
    ("WHERE p IN (0, 1) AND v > 2", 3),
])
@pytest.mark.parametrize("fetch_size", [1, 2, 3])
def test_group_by_pages_count_groups(session, grouped, where, groups, fetch_size):
    filtering = " ALLOW FILTERING" if "v >" in where or "c2" in where else ""
    query = f"SELECT p, c1, c2, v FROM {grouped} {where} GROUP BY p, c1{filtering}"
    everything = [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=None))]
    assert len(everything) == groups
    got = pages(session, query, fetch_size)
    assert all(len(page) <= fetch_size for page in got)
    assert len(got[0]) == fetch_size
    assert [row for page in got for row in page] == everything


@pytest.mark.parametrize("fetch_size", [1, 2])
def test_group_by_limit_counts_groups_across_pages(session, grouped, fetch_size):
    query = f"SELECT p, c1, c2, v FROM {grouped} GROUP BY p, c1"
    everything = [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=None))]
    statement = session.prepare(query + " LIMIT ?")
    statement.fetch_size = fetch_size
    for limit in range(1, 5):
        result = session.execute(statement, [limit])
        assert len(result.current_rows) == min(fetch_size, limit)
        assert [tuple(r) for r in result] == everything[:limit]


def test_group_by_pages_of_one_partition(session, grouped):
    query = f"SELECT p, c1, count(*), max(v) FROM {grouped} WHERE p = 1 GROUP BY p, c1"
    got = pages(session, query, 1)
    assert [row for page in got for row in page] == [(1, 0, 2, 6), (1, 1, 2, 8)]
    assert all(len(page) <= 1 for page in got)
    # Reversed, and by the whole primary key (one row a group).
    query = f"SELECT c1, c2, v FROM {grouped} WHERE p = 0 GROUP BY p, c1, c2 ORDER BY c1 DESC"
    rows = [row for page in pages(session, query, 3) for row in page]
    assert rows == [(1, 1, 4), (1, 0, 3), (0, 1, 2), (0, 0, 1)]


def test_group_by_per_partition_limit_across_pages(session, grouped):
    query = f"SELECT p, c1, v FROM {grouped} GROUP BY p, c1 PER PARTITION LIMIT 1"
    everything = [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=None))]
    assert sorted(everything) == [(0, 0, 1), (1, 0, 5)]
    for fetch_size in (1, 2):
        got = [row for page in pages(session, query, fetch_size) for row in page]
        assert got == everything


def test_aggregate_without_group_by_is_one_page(session, grouped):
    result = session.execute(
        SimpleStatement(f"SELECT count(*), sum(v) FROM {grouped}", fetch_size=1))
    assert [tuple(r) for r in result.current_rows] == [(8, 36)]
    assert result.paging_state is None


@pytest.mark.parametrize("column", ["r", "s"])
@pytest.mark.parametrize("fetch_size", [1, 2, 3])
def test_group_by_pages_through_an_index(session, keyspace, column, fetch_size):
    """Through an index on a regular column (entries name rows) or a static one (entries name
    partitions), pages still end between groups."""
    table = f"{keyspace}.indexed_{column}_{fetch_size}"
    session.execute(
        f"CREATE TABLE {table} (p int, c1 int, c2 int, r int, s int static, "
        "PRIMARY KEY (p, c1, c2))")
    session.execute(f"CREATE INDEX ON {table} ({column})")
    insert = session.prepare(f"INSERT INTO {table} (p, c1, c2, r, s) VALUES (?, ?, ?, 7, 7)")
    for p in range(3):
        for c1 in range(3):
            for c2 in range(2):
                session.execute(insert, (p, c1, c2))
    query = f"SELECT p, c1, count(*) FROM {table} WHERE {column} = 7 GROUP BY p, c1"
    everything = [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=None))]
    assert len(everything) == 9
    assert all(r[2] == 2 for r in everything)
    got = pages(session, query, fetch_size)
    assert all(len(page) <= fetch_size for page in got)
    assert [row for page in got for row in page] == everything


@pytest.mark.parametrize("fetch_size", [1, 2])
def test_group_by_pages_with_static_only_partitions(session, keyspace, fetch_size):
    table = f"{keyspace}.statics_{fetch_size}"
    session.execute(f"CREATE TABLE {table} (p int, c int, s int static, r int, PRIMARY KEY (p, c))")
    for p in range(4):
        session.execute(f"INSERT INTO {table} (p, s) VALUES ({p}, {p})")
        if p % 2:
            session.execute(f"INSERT INTO {table} (p, c, r) VALUES ({p}, 1, 1)")
            session.execute(f"INSERT INTO {table} (p, c, r) VALUES ({p}, 2, 2)")
    for query in (f"SELECT p, count(*) FROM {table} GROUP BY p",
                  f"SELECT p, c, s FROM {table} GROUP BY p, c"):
        everything = [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=None))]
        got = pages(session, query, fetch_size)
        assert all(len(page) <= fetch_size for page in got)
        assert [row for page in got for row in page] == everything
    assert sorted(r[1] for r in session.execute(f"SELECT p, count(*) FROM {table} GROUP BY p")) \
        == [1, 1, 2, 2]
