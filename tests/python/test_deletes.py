"""Deletes: rows, clustering ranges, partitions, cells, and how tombstones shadow by timestamp."""

from __future__ import annotations

import itertools

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement


@pytest.fixture(scope="module")
def tables(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.t (k int, c int, v text, PRIMARY KEY (k, c))")
    session.execute(
        f"CREATE TABLE {keyspace}.t2 (k int, c1 int, c2 int, v text, s text static, "
        "PRIMARY KEY (k, c1, c2))")
    session.execute(
        f"CREATE TABLE {keyspace}.desc_t (k int, c bigint, v text, PRIMARY KEY (k, c)) "
        "WITH CLUSTERING ORDER BY (c DESC)")
    return keyspace


_partitions = itertools.count(1)


@pytest.fixture
def partition(session, tables):
    """A fresh partition of `t` with clustering 0..9, and of `t2` with (c1, c2) in 0..2 x 0..2."""
    k = next(_partitions)
    insert = session.prepare(f"INSERT INTO {tables}.t (k, c, v) VALUES (?, ?, ?)")
    for c in range(10):
        session.execute(insert, (k, c, f"v{c}"))
    insert2 = session.prepare(f"INSERT INTO {tables}.t2 (k, c1, c2, v, s) VALUES (?, ?, ?, ?, ?)")
    for c1 in range(3):
        for c2 in range(3):
            session.execute(insert2, (k, c1, c2, f"v{c1}{c2}", "static"))
    return k


def clusterings(session, table, k):
    return [r.c for r in session.execute(f"SELECT c FROM {table} WHERE k = %s", (k,))]


def pairs(session, table, k):
    return [(r.c1, r.c2) for r in session.execute(
        f"SELECT c1, c2 FROM {table} WHERE k = %s", (k,))]


def test_row_delete(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c = 3", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 2, 4, 5, 6, 7, 8, 9]


def test_range_delete_greater_than(session, tables, partition):
    delete = session.prepare(f"DELETE FROM {tables}.t WHERE k = ? AND c > ?")
    session.execute(delete, (partition, 6))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 2, 3, 4, 5, 6]


def test_range_delete_with_both_bounds(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c >= 2 AND c < 5", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 5, 6, 7, 8, 9]
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c > 6 AND c <= 8", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 5, 6, 9]
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c <= 0", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [1, 5, 6, 9]


def test_range_delete_on_a_descending_table(session, tables):
    k = 1000
    insert = session.prepare(f"INSERT INTO {tables}.desc_t (k, c, v) VALUES (?, ?, ?)")
    for c in range(10):
        session.execute(insert, (k, c, str(c)))
    session.execute(f"DELETE FROM {tables}.desc_t WHERE k = %s AND c > %s", (k, 6))
    assert clusterings(session, f"{tables}.desc_t", k) == [6, 5, 4, 3, 2, 1, 0]
    session.execute(f"DELETE FROM {tables}.desc_t WHERE k = %s AND c < %s", (k, 2))
    assert clusterings(session, f"{tables}.desc_t", k) == [6, 5, 4, 3, 2]


def test_range_delete_then_insert_inside_the_range(session, tables, partition):
    """A write newer than the range tombstone shows through it."""
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c > 2", (partition,))
    session.execute(f"INSERT INTO {tables}.t (k, c, v) VALUES (%s, 5, 'back')", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 2, 5]


def test_prefix_delete_removes_all_rows_under_the_prefix(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t2 WHERE k = %s AND c1 = 1", (partition,))
    assert pairs(session, f"{tables}.t2", partition) == [
        (0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)]


def test_range_delete_within_a_prefix(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t2 WHERE k = %s AND c1 = 1 AND c2 >= 1", (partition,))
    assert pairs(session, f"{tables}.t2", partition) == [
        (0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2)]


def test_multi_column_range_delete(session, tables, partition):
    session.execute(
        f"DELETE FROM {tables}.t2 WHERE k = %s AND (c1, c2) >= (1, 1) AND (c1, c2) < (2, 1)",
        (partition,))
    assert pairs(session, f"{tables}.t2", partition) == [
        (0, 0), (0, 1), (0, 2), (1, 0), (2, 1), (2, 2)]


def test_partition_delete(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t2 WHERE k = %s", (partition,))
    assert list(session.execute(f"SELECT * FROM {tables}.t2 WHERE k = %s", (partition,))) == []
    # Other partitions are untouched.
    other = next(_partitions)
    session.execute(f"INSERT INTO {tables}.t2 (k, c1, c2, v) VALUES (%s, 0, 0, 'x')", (other,))
    session.execute(f"DELETE FROM {tables}.t2 WHERE k = %s", (partition,))
    assert pairs(session, f"{tables}.t2", other) == [(0, 0)]


def test_partition_delete_shadows_older_writes_only(session, tables, partition):
    session.execute(
        f"DELETE FROM {tables}.t USING TIMESTAMP 5000 WHERE k = %s", (partition,))
    session.execute(
        f"INSERT INTO {tables}.t (k, c, v) VALUES (%s, 1, 'old') USING TIMESTAMP 4999",
        (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    # The rows written by the fixture carry the client's current timestamp, far above 5000:
    # the delete at 5000 shadows nothing of them. Delete for real, then write older data.
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s", (partition,))
    session.execute(
        f"INSERT INTO {tables}.t (k, c, v) VALUES (%s, 1, 'old') USING TIMESTAMP 4999",
        (partition,))
    assert clusterings(session, f"{tables}.t", partition) == []
    session.execute(f"INSERT INTO {tables}.t (k, c, v) VALUES (%s, 2, 'new')", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [2]


def test_cell_delete_keeps_the_row(session, tables, partition):
    session.execute(f"DELETE v FROM {tables}.t WHERE k = %s AND c = 4", (partition,))
    row = session.execute(f"SELECT c, v FROM {tables}.t WHERE k = %s AND c = 4", (partition,)).one()
    assert (row.c, row.v) == (4, None)
    assert len(clusterings(session, f"{tables}.t", partition)) == 10


def test_setting_null_deletes_the_cell(session, tables, partition):
    session.execute(f"UPDATE {tables}.t SET v = null WHERE k = %s AND c = 5", (partition,))
    assert session.execute(
        f"SELECT v FROM {tables}.t WHERE k = %s AND c = 5", (partition,)).one().v is None
    insert = session.prepare(f"INSERT INTO {tables}.t (k, c, v) VALUES (?, ?, ?)")
    session.execute(insert, (partition, 6, None))
    assert session.execute(
        f"SELECT v FROM {tables}.t WHERE k = %s AND c = 6", (partition,)).one().v is None


def test_static_cell_delete(session, tables, partition):
    session.execute(f"DELETE s FROM {tables}.t2 WHERE k = %s", (partition,))
    rows = list(session.execute(f"SELECT s, v FROM {tables}.t2 WHERE k = %s", (partition,)))
    assert len(rows) == 9
    assert all(r.s is None for r in rows)
    assert rows[0].v == "v00"


def test_delete_with_in_on_clustering(session, tables, partition):
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c IN (1, 3, 5)", (partition,))
    assert clusterings(session, f"{tables}.t", partition) == [0, 2, 4, 6, 7, 8, 9]


def test_delete_of_a_missing_row_is_not_an_error(session, tables):
    session.execute(f"DELETE FROM {tables}.t WHERE k = 999999 AND c = 1")
    session.execute(f"DELETE FROM {tables}.t WHERE k = 999999 AND c > 1")
    session.execute(f"DELETE FROM {tables}.t WHERE k = 999999")


def test_range_delete_needs_the_partition_key(session, tables):
    with pytest.raises(InvalidRequest):
        session.execute(f"DELETE FROM {tables}.t WHERE c > 1")


def test_paging_skips_a_deleted_range(session, tables):
    """A page boundary inside and around a range tombstone."""
    k = 2000
    insert = session.prepare(f"INSERT INTO {tables}.t (k, c, v) VALUES (?, ?, ?)")
    for c in range(100):
        session.execute(insert, (k, c, str(c)))
    session.execute(f"DELETE FROM {tables}.t WHERE k = %s AND c >= 10 AND c < 90", (k,))
    statement = SimpleStatement(f"SELECT c FROM {tables}.t WHERE k = {k}", fetch_size=7)
    assert [r.c for r in session.execute(statement)] == list(range(10)) + list(range(90, 100))
