"""TTL expiry, `TTL()` and `WRITETIME()`, and the client-supplied write timestamp.

TTLs are 1-2 s and expiry is polled, so the module takes a few seconds, not a fixed sleep per
test. Expiry has one-second resolution (a cell written at x.999 s with TTL 1 is gone at x+1), so
a test that checks a value before it expires uses TTL 2.
"""

from __future__ import annotations

import re
import time

import pytest
from cassandra.cluster import Cluster

from khata_helpers import wait_until

EXPIRY_SLACK_S = 3.0


@pytest.fixture(scope="module")
def tables(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.kv (k int PRIMARY KEY, v text, w text)")
    session.execute(
        f"CREATE TABLE {keyspace}.expiring (k int PRIMARY KEY, v text) "
        "WITH default_time_to_live = 2")
    session.execute(
        f"CREATE TABLE {keyspace}.wide (k int, c int, v text, PRIMARY KEY (k, c))")
    return keyspace


def rows_of(session, query, params=None):
    return list(session.execute(query, params))


def test_insert_using_ttl_expires_the_row(session, tables):
    session.execute(f"INSERT INTO {tables}.kv (k, v, w) VALUES (1, 'a', 'b') USING TTL 2")
    row = session.execute(f"SELECT v, TTL(v), TTL(w) FROM {tables}.kv WHERE k = 1").one()
    assert row.v == "a"
    assert row.ttl_v in (1, 2)
    assert row.ttl_w in (1, 2)
    assert wait_until(
        lambda: rows_of(session, f"SELECT * FROM {tables}.kv WHERE k = 1") == [],
        2 + EXPIRY_SLACK_S)
    # Expired data stays expired (it is a tombstone now, not a missing cell).
    assert rows_of(session, f"SELECT * FROM {tables}.kv WHERE k = 1") == []


def test_prepared_insert_with_a_bound_ttl(session, tables):
    insert = session.prepare(
        f"INSERT INTO {tables}.wide (k, c, v) VALUES (?, ?, ?) USING TTL ?")
    session.execute(insert, (2, 1, "short", 1))
    session.execute(insert, (2, 2, "long", 3600))
    row = session.execute(f"SELECT TTL(v) FROM {tables}.wide WHERE k = 2 AND c = 2").one()
    assert 3590 <= row.ttl_v <= 3600
    assert wait_until(
        lambda: [r.c for r in session.execute(f"SELECT c FROM {tables}.wide WHERE k = 2")] == [2],
        1 + EXPIRY_SLACK_S)


def test_update_using_ttl_expires_only_that_cell(session, tables):
    """The INSERT's row marker has no TTL, so the row outlives the updated cell."""
    session.execute(f"INSERT INTO {tables}.kv (k, v, w) VALUES (3, 'keep', 'keep')")
    session.execute(f"UPDATE {tables}.kv USING TTL 2 SET w = 'brief' WHERE k = 3")
    row = session.execute(f"SELECT v, w, TTL(v), TTL(w) FROM {tables}.kv WHERE k = 3").one()
    assert (row.v, row.w, row.ttl_v) == ("keep", "brief", None)
    assert row.ttl_w in (1, 2)
    assert wait_until(
        lambda: session.execute(f"SELECT w FROM {tables}.kv WHERE k = 3").one().w is None,
        2 + EXPIRY_SLACK_S)
    row = session.execute(f"SELECT k, v, w FROM {tables}.kv WHERE k = 3").one()
    assert (row.k, row.v, row.w) == (3, "keep", None)


def test_a_row_made_by_update_with_ttl_disappears(session, tables):
    """UPDATE writes no row marker: when its only cell expires the row is gone."""
    session.execute(f"UPDATE {tables}.kv USING TTL 2 SET v = 'x' WHERE k = 4")
    assert rows_of(session, f"SELECT v FROM {tables}.kv WHERE k = 4")[0].v == "x"
    assert wait_until(
        lambda: rows_of(session, f"SELECT * FROM {tables}.kv WHERE k = 4") == [],
        2 + EXPIRY_SLACK_S)


def test_table_default_time_to_live(session, tables):
    session.execute(f"INSERT INTO {tables}.expiring (k, v) VALUES (1, 'default')")
    session.execute(f"INSERT INTO {tables}.expiring (k, v) VALUES (2, 'forever') USING TTL 0")
    session.execute(f"INSERT INTO {tables}.expiring (k, v) VALUES (3, 'longer') USING TTL 600")
    ttls = {r.k: r.ttl_v for r in session.execute(f"SELECT k, TTL(v) FROM {tables}.expiring")}
    assert ttls[1] in (1, 2)
    assert ttls[2] is None  # TTL 0 overrides the table default: no expiry
    assert 590 <= ttls[3] <= 600
    assert wait_until(
        lambda: sorted(r.k for r in session.execute(f"SELECT k FROM {tables}.expiring")) == [2, 3],
        2 + EXPIRY_SLACK_S)


def test_table_default_ttl_in_driver_metadata(cluster, tables):
    table = cluster.metadata.keyspaces[tables].tables["expiring"]
    assert table.options["default_time_to_live"] == 2


def test_ttl_of_a_cell_without_ttl_is_null(session, tables):
    session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (5, 'plain')")
    row = session.execute(f"SELECT TTL(v), WRITETIME(v) FROM {tables}.kv WHERE k = 5").one()
    assert row.ttl_v is None
    assert row.writetime_v is not None


def test_ttl_counts_down(session, tables):
    session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (6, 'x') USING TTL 100")
    first = session.execute(f"SELECT TTL(v) FROM {tables}.kv WHERE k = 6").one().ttl_v
    time.sleep(1.1)
    second = session.execute(f"SELECT TTL(v) FROM {tables}.kv WHERE k = 6").one().ttl_v
    assert first in (99, 100)
    assert second < first


def test_writetime_is_the_client_timestamp_in_microseconds(session, tables):
    before = int(time.time() * 1_000_000)
    session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (7, 'now')")
    after = int(time.time() * 1_000_000)
    writetime = session.execute(
        f"SELECT WRITETIME(v) FROM {tables}.kv WHERE k = 7").one().writetime_v
    assert before - 1_000_000 <= writetime <= after + 1_000_000


def test_writetime_and_ttl_under_functions_and_operators(session, tables):
    session.execute(
        f"INSERT INTO {tables}.kv (k, v) VALUES (17, 'x') USING TIMESTAMP 1234567 AND TTL 1000")
    row = session.execute(
        f"SELECT blobAsBigint(bigintAsBlob(writetime(v))), writetime(v) / 1000, "
        f"(bigint) writetime(v), [writetime(v), writetime(v)], ttl(v) + 0 "
        f"FROM {tables}.kv WHERE k = 17").one()
    assert row[:4] == (1234567, 1234, 1234567, [1234567, 1234567])
    assert 995 <= row[4] <= 1000


def test_writes_honour_the_drivers_default_timestamp(khata_node, tables):
    """The driver sends its own timestamp with each request; the write must carry exactly it."""
    host, port = khata_node
    cluster = Cluster([host], port=port, timestamp_generator=lambda: 1_234_567_890_123_456)
    try:
        session = cluster.connect()
        session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (8, 'stamped')")
        writetime = session.execute(
            f"SELECT WRITETIME(v) FROM {tables}.kv WHERE k = 8").one().writetime_v
        assert writetime == 1_234_567_890_123_456
    finally:
        cluster.shutdown()


def test_using_timestamp_sets_writetime_and_last_write_wins(session, tables):
    session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (9, 'newer') USING TIMESTAMP 2000")
    session.execute(f"INSERT INTO {tables}.kv (k, v) VALUES (9, 'older') USING TIMESTAMP 1000")
    row = session.execute(f"SELECT v, WRITETIME(v) FROM {tables}.kv WHERE k = 9").one()
    assert (row.v, row.writetime_v) == ("newer", 2000)
    session.execute(
        f"UPDATE {tables}.kv USING TIMESTAMP 3000 AND TTL 100 SET v = 'newest' WHERE k = 9")
    row = session.execute(f"SELECT v, WRITETIME(v), TTL(v) FROM {tables}.kv WHERE k = 9").one()
    assert (row.v, row.writetime_v) == ("newest", 3000)
    assert 90 <= row.ttl_v <= 100


def test_a_null_bound_ttl_is_no_ttl_and_an_unset_one_the_default(session, tables):
    """Cassandra's Attributes.getTimeToLive: null (or empty) is 0, no TTL even where the table
    has a default; unset is the table's default."""
    from cassandra.query import UNSET_VALUE
    insert = session.prepare(f"INSERT INTO {tables}.expiring (k, v) VALUES (?, ?) USING TTL ?")
    session.execute(insert, (20, "null ttl", None))
    update = session.prepare(f"UPDATE {tables}.expiring USING TTL ? SET v = ? WHERE k = ?")
    session.execute(update, (None, "null ttl", 21))
    session.execute(insert, (22, "unset ttl", UNSET_VALUE))
    ttls = {r.k: r.ttl_v for r in session.execute(
        f"SELECT k, TTL(v) FROM {tables}.expiring WHERE k IN (20, 21, 22)")}
    assert ttls[20] is None and ttls[21] is None
    assert ttls[22] in (1, 2)


def test_using_timestamp_refuses_the_smallest_long(session, tables):
    """Cassandra's UpdateParameters keeps Long.MIN_VALUE for "no timestamp"."""
    from cassandra import InvalidRequest
    insert = session.prepare(f"INSERT INTO {tables}.kv (k, v) VALUES (?, ?) USING TIMESTAMP ?")
    session.execute(insert, (30, "a", -42))
    assert session.execute(f"SELECT WRITETIME(v) FROM {tables}.kv WHERE k = 30").one()[0] == -42
    message = "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]"
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.execute(insert, (31, "b", -2**63))
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.execute(
            f"BEGIN BATCH USING TIMESTAMP -9223372036854775808 "
            f"INSERT INTO {tables}.kv (k, v) VALUES (31, 'b') APPLY BATCH")
    assert session.execute(f"SELECT v FROM {tables}.kv WHERE k = 31").one() is None
