"""Batches: logged (atomic across partitions and tables), unlogged, empty, counter; size limits.

Cassandra 4.1's limits: a batch that spans more than one partition and whose data exceeds
`batch_size_warn_threshold` (5 KiB) gets the client warning "Batch for [ks.t, ...] is of size N,
exceeding specified threshold of 5120 by M."; above `batch_size_fail_threshold` (50 KiB) it is
refused with Invalid "Batch too large". An unlogged batch over more than
`unlogged_batch_across_partitions_warn_threshold` (10) partitions gets a warning too.
"""

from __future__ import annotations

import logging
import re

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType, SimpleStatement

from khata_helpers import execute_with_warnings

WARN_THRESHOLD_BYTES = 5 * 1024


@pytest.fixture(scope="module")
def tables(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.a (k int, c int, v text, PRIMARY KEY (k, c))")
    session.execute(f"CREATE TABLE {keyspace}.b (k int PRIMARY KEY, v text)")
    session.execute(f"CREATE TABLE {keyspace}.counts (k int PRIMARY KEY, n counter)")
    return keyspace


def count(session, query, params=None):
    return len(list(session.execute(query, params)))


def test_logged_batch_across_partitions_and_tables(session, tables):
    insert_a = session.prepare(f"INSERT INTO {tables}.a (k, c, v) VALUES (?, ?, ?)")
    batch = BatchStatement(batch_type=BatchType.LOGGED)
    for k in (1, 2, 3):
        batch.add(insert_a, (k, 0, f"a{k}"))
    batch.add(f"INSERT INTO {tables}.b (k, v) VALUES (%s, %s)", (1, "b1"))
    batch.add(f"UPDATE {tables}.b SET v = %s WHERE k = %s", ("b2", 2))
    session.execute(batch)
    assert [session.execute(f"SELECT v FROM {tables}.a WHERE k = %s", (k,)).one().v
            for k in (1, 2, 3)] == ["a1", "a2", "a3"]
    assert sorted(r.v for r in session.execute(f"SELECT v FROM {tables}.b")) == ["b1", "b2"]


def test_a_batch_with_an_invalid_statement_applies_nothing(session, tables):
    """All or nothing: one bad statement fails the batch before any of it is written."""
    batch = (
        f"BEGIN BATCH "
        f"INSERT INTO {tables}.a (k, c, v) VALUES (10, 0, 'first'); "
        f"INSERT INTO {tables}.b (k, v) VALUES (10, 'second'); "
        f"INSERT INTO {tables}.b (k, v) VALUES ('not an int', 'third'); "
        f"APPLY BATCH")
    with pytest.raises(InvalidRequest):
        session.execute(batch)
    assert count(session, f"SELECT * FROM {tables}.a WHERE k = 10") == 0
    assert count(session, f"SELECT * FROM {tables}.b WHERE k = 10") == 0


def test_batch_statements_share_one_timestamp(session, tables):
    session.execute(
        f"BEGIN BATCH USING TIMESTAMP 1111 "
        f"INSERT INTO {tables}.a (k, c, v) VALUES (20, 0, 'x'); "
        f"INSERT INTO {tables}.b (k, v) VALUES (20, 'y'); "
        f"APPLY BATCH")
    assert session.execute(
        f"SELECT WRITETIME(v) FROM {tables}.a WHERE k = 20").one().writetime_v == 1111
    assert session.execute(
        f"SELECT WRITETIME(v) FROM {tables}.b WHERE k = 20").one().writetime_v == 1111


def test_a_delete_and_an_insert_in_one_batch(session, tables):
    """Statements in one batch get the same timestamp, so order within it does not matter."""
    session.execute(f"INSERT INTO {tables}.a (k, c, v) VALUES (30, 1, 'old')")
    batch = BatchStatement()
    batch.add(f"DELETE FROM {tables}.a WHERE k = 30 AND c = 1")
    batch.add(f"INSERT INTO {tables}.a (k, c, v) VALUES (30, 2, 'new')")
    session.execute(batch)
    assert [r.c for r in session.execute(f"SELECT c FROM {tables}.a WHERE k = 30")] == [2]


def test_unlogged_batch(session, tables):
    insert = session.prepare(f"INSERT INTO {tables}.a (k, c, v) VALUES (?, ?, ?)")
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for c in range(20):
        batch.add(insert, (40, c, str(c)))
    session.execute(batch)
    assert count(session, f"SELECT * FROM {tables}.a WHERE k = 40") == 20
    session.execute(
        f"BEGIN UNLOGGED BATCH INSERT INTO {tables}.b (k, v) VALUES (41, 'u'); "
        f"INSERT INTO {tables}.b (k, v) VALUES (42, 'u'); APPLY BATCH")
    assert count(session, f"SELECT * FROM {tables}.b WHERE k IN (41, 42)") == 2


def test_empty_batch_is_accepted(session):
    """Test harnesses send an empty batch as a liveness check."""
    session.execute("BEGIN BATCH APPLY BATCH")
    session.execute("BEGIN UNLOGGED BATCH APPLY BATCH")
    session.execute(BatchStatement())


def test_batch_with_bound_values_in_a_query_string(session, tables):
    """A BATCH message whose statements are query strings with `?` markers and values."""
    batch = BatchStatement()
    batch.add(SimpleStatement(f"INSERT INTO {tables}.b (k, v) VALUES (%s, %s)"), (50, "x"))
    batch.add(SimpleStatement(f"INSERT INTO {tables}.b (k, v) VALUES (%s, %s)"), (51, "y"))
    session.execute(batch)
    assert count(session, f"SELECT * FROM {tables}.b WHERE k IN (50, 51)") == 2


def big_batch(session, tables, partitions, rows_per_partition, value_bytes,
              batch_type=BatchType.LOGGED):
    insert = session.prepare(f"INSERT INTO {tables}.a (k, c, v) VALUES (?, ?, ?)")
    batch = BatchStatement(batch_type=batch_type)
    for p in partitions:
        for c in range(rows_per_partition):
            batch.add(insert, (p, c, "x" * value_bytes))
    return batch


def test_batch_size_warning_is_surfaced(session, tables, caplog):
    """About 10 KiB over two partitions: over the warn threshold, under the fail threshold."""
    batch = big_batch(session, tables, [60, 61], 10, 512)
    with caplog.at_level(logging.WARNING, logger="cassandra"):
        _, warnings = execute_with_warnings(session, batch)
    assert warnings, "expected a batch size warning on the response"
    assert any(f"exceeding specified threshold of {WARN_THRESHOLD_BYTES}" in w for w in warnings)
    # The driver also logs server warnings.
    assert any("exceeding specified threshold" in r.getMessage() for r in caplog.records)
    assert count(session, f"SELECT * FROM {tables}.a WHERE k IN (60, 61)") == 20


def test_batch_size_warning_names_the_tables(session, tables):
    batch = big_batch(session, tables, [62, 63], 10, 512)
    _, warnings = execute_with_warnings(session, batch)
    pattern = (rf"^Batch for \[{tables}\.a\] is of size (\d+), exceeding specified threshold of "
               rf"{WARN_THRESHOLD_BYTES} by (\d+)\.$")
    matches = [re.match(pattern, w) for w in warnings or []]
    assert any(matches), warnings
    size, over = next(tuple(map(int, m.groups())) for m in matches if m)
    assert size - over == WARN_THRESHOLD_BYTES


def test_a_single_partition_batch_does_not_warn(session, tables):
    """Cassandra warns on size only for batches that span partitions (CASSANDRA-10876)."""
    batch = big_batch(session, tables, [64], 20, 512)
    _, warnings = execute_with_warnings(session, batch)
    assert not warnings


def test_a_small_batch_does_not_warn(session, tables):
    batch = big_batch(session, tables, [65, 66], 2, 10)
    _, warnings = execute_with_warnings(session, batch)
    assert not warnings


def test_a_batch_of_small_rows_does_not_warn(session, tables):
    insert = session.prepare(f"INSERT INTO {tables}.b (k, v) VALUES (?, ?)")
    batch = BatchStatement(batch_type=BatchType.LOGGED)
    for k in range(200, 211):
        batch.add(insert, (k, "s"))
    _, warnings = execute_with_warnings(session, batch)
    assert not warnings


def test_batch_over_the_fail_threshold_is_refused(session, tables):
    """About 60 KiB over two partitions: refused, and nothing of it is written."""
    batch = big_batch(session, tables, [70, 71], 60, 512)
    with pytest.raises(InvalidRequest, match="Batch too large"):
        session.execute(batch)
    assert count(session, f"SELECT * FROM {tables}.a WHERE k IN (70, 71)") == 0


def test_unlogged_batch_across_many_partitions_warns(session, tables):
    insert = session.prepare(f"INSERT INTO {tables}.b (k, v) VALUES (?, ?)")
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(100, 111):
        batch.add(insert, (k, "u"))
    _, warnings = execute_with_warnings(session, batch)
    assert warnings and any(
        w.startswith(f"Unlogged batch covering 11 partitions detected against table [{tables}.b]")
        for w in warnings), warnings


def test_counter_batch(session, tables):
    session.execute(
        f"BEGIN COUNTER BATCH "
        f"UPDATE {tables}.counts SET n = n + 2 WHERE k = 1; "
        f"UPDATE {tables}.counts SET n = n + 3 WHERE k = 1; "
        f"UPDATE {tables}.counts SET n = n - 1 WHERE k = 2; "
        f"APPLY BATCH")
    counts = {r.k: r.n for r in session.execute(f"SELECT k, n FROM {tables}.counts")}
    assert counts == {1: 5, 2: -1}


def test_increments_of_one_counter_in_a_statement_add_up(session, tables):
    """Cassandra merges a statement's increments of one counter into one update, their sum."""
    session.execute(f"UPDATE {tables}.counts SET n = n + 2, n = n + 3 WHERE k = 20")
    session.execute(f"UPDATE {tables}.counts SET n = n - 1, n = n + 10 WHERE k = 20")
    assert session.execute(f"SELECT n FROM {tables}.counts WHERE k = 20").one().n == 14


def test_list_operations_by_index_next_to_another_table_with_the_same_key(session, tables):
    """A list operation by index finds its own table's row, not another statement's with
    the same partition key."""
    session.execute(f"CREATE TABLE IF NOT EXISTS {tables}.lists (k int PRIMARY KEY, l list<int>)")
    session.execute(f"INSERT INTO {tables}.lists (k, l) VALUES (30, [1, 2])")
    for kind in ("UNLOGGED ", ""):
        session.execute(
            f"BEGIN {kind}BATCH "
            f"UPDATE {tables}.b SET v = 'x' WHERE k = 30; "
            f"UPDATE {tables}.lists SET l[0] = 7 WHERE k = 30; "
            f"DELETE l[1] FROM {tables}.lists WHERE k = 30; "
            "APPLY BATCH")
        assert session.execute(f"SELECT l FROM {tables}.lists WHERE k = 30").one().l == [7]
        assert session.execute(f"SELECT v FROM {tables}.b WHERE k = 30").one().v == "x"
        session.execute(f"UPDATE {tables}.lists SET l = l + [2] WHERE k = 30")


def test_counter_updates_are_refused_in_a_logged_batch(session, tables):
    with pytest.raises(InvalidRequest, match="Cannot include a counter statement in a logged batch"):
        session.execute(
            f"BEGIN BATCH UPDATE {tables}.counts SET n = n + 1 WHERE k = 3; APPLY BATCH")
