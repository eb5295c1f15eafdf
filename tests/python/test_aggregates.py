"""Aggregates and GROUP BY through the Python driver, as Cassandra 4.1 answers them.

GROUP BY results page by groups: a page holds at most the page size in groups (each whole:
a page ends before the first row of the next group) and carries a paging state to the rest,
and LIMIT counts groups across pages (Cassandra's `CQLGroupByLimits`; scylla's cqlpy
test_group_by.py::test_group_by_clustering_prefix_with_limit_and_paging). An aggregate
without GROUP BY is one row on one page.
"""

from __future__ import annotations

import datetime
import re

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement
from cassandra.util import Duration


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


@pytest.fixture(scope="module")
def timeuuids(session, keyspace):
    table = f"{keyspace}.timeuuids"
    session.execute(
        f"CREATE TABLE {table} (a int, b timeuuid, v int, d double, PRIMARY KEY (a, b))")
    session.execute(f"INSERT INTO {table} (a, b, v, d) "
                    "VALUES (0, 13814000-1dd2-11ff-8080-808080808080, 1, 1.5)")
    session.execute(f"INSERT INTO {table} (a, b, v, d) "
                    "VALUES (0, 6b1b3620-33fd-11eb-8080-808080808080, 2, 2.25)")
    session.execute(f"INSERT INTO {table} (a, b, v, d) "
                    "VALUES (1, 6b1b3620-33fd-11eb-8080-808080808080, 5, 1)")
    return table


def test_functions_and_casts_of_aggregates(session, timeuuids):
    """Scalar functions and CAST take aggregates, computed per group, as in Cassandra."""
    import datetime
    from cassandra.util import Date

    def one(selection, where="WHERE a = 0"):
        result = session.execute(f"SELECT {selection} FROM {timeuuids} {where}")
        return result.column_names, tuple(result.one())

    names, row = one("todate(min(b))")
    assert names == ["system.todate(system.min(b))"]
    assert row == (Date(datetime.date(2020, 12, 1)),)
    assert one("intasblob(max(v))")[1] == (b"\x00\x00\x00\x02",)
    names, row = one("CAST(sum(v) AS text)")
    assert names == ["cast(system.sum(v) as text)"]
    assert row == ("3",)
    assert one("CAST(avg(d) AS int), CAST(count(*) AS text)")[1] == (1, "2")
    assert one("blobasint(intasblob(max(v)))")[1] == (2,)
    assert one("max(v) - min(v), max(v) + 1")[1] == (1, 3)
    assert one("tojson(max(v))")[1] == ("2",)
    # Aggregates of functions, casts and writetime.
    assert one("max(blobasint(intasblob(v)))")[1] == (2,)
    assert one("sum(CAST(v AS bigint))")[1] == (3,)
    assert one("count(tojson(v))")[1] == (2,)
    assert one("max(writetime(v)) - min(writetime(v))")[1][0] >= 0
    assert one("max(writetime(v))")[1][0] > 0
    # A plain column beside them is the group's first value, and GROUP BY computes per group.
    rows = session.execute(
        f"SELECT a, CAST(max(v) AS text), todate(max(b)) FROM {timeuuids} GROUP BY a")
    assert sorted((r[0], r[1]) for r in rows) == [(0, "2"), (1, "5")]
    # Empty input: the aggregates of no rows.
    assert one("CAST(count(*) AS text), intasblob(max(v))", "WHERE a = 9")[1] == ("0", None)


def test_aggregate_of_an_aggregate_is_refused(session, timeuuids):
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest,
                       match="aggregate functions cannot be used as arguments of aggregate"):
        session.execute(f"SELECT max(intasblob(min(v))) FROM {timeuuids}")


def test_prepared_markers_beside_aggregates(session, timeuuids):
    statement = session.prepare(
        f"SELECT max(v) + (int) ?, CAST(sum(v) AS text) FROM {timeuuids} WHERE a = ?")
    assert [c.type.typename for c in statement.column_metadata] == ["int", "int"]
    assert tuple(session.execute(statement, (10, 0)).one()) == (12, "3")


@pytest.fixture(scope="module")
def five_columns(session, keyspace):
    """SelectGroupByTest's rows: (a, b, c, d, e), primary key (a, b, c, d)."""
    table = f"{keyspace}.five_columns"
    session.execute(
        f"CREATE TABLE {table} (a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))")
    for row in [(1, 2, 1, 3, 6), (1, 2, 2, 6, 12), (1, 4, 2, 12, 24), (1, 4, 2, 6, 12),
                (2, 2, 3, 3, 6), (2, 4, 3, 6, 12), (4, 8, 2, 12, 24)]:
        session.execute(f"INSERT INTO {table} (a, b, c, d, e) VALUES (%s, %s, %s, %s, %s)", row)
    return table


def test_group_by_with_in_and_order_by_orders_groups_before_limit(session, five_columns):
    """Cassandra orders the groups of all the IN's partitions, then LIMIT takes the first
    (SelectGroupByTest.testGroupByWithoutPaging); with paging on it is refused."""
    from cassandra import InvalidRequest
    query = (f"SELECT a, b, c, d FROM {five_columns} WHERE a IN (1, 2, 4) GROUP BY a, b "
             "ORDER BY b DESC, c DESC")
    rows = lambda q: [tuple(r) for r in session.execute(SimpleStatement(q, fetch_size=None))]
    assert rows(query + " LIMIT 3") == [(4, 8, 2, 12), (2, 4, 3, 6), (1, 4, 2, 12)]
    assert rows(query) == [(4, 8, 2, 12), (2, 4, 3, 6), (1, 4, 2, 12), (2, 2, 3, 3),
                           (1, 2, 2, 6)]
    assert rows(f"SELECT a, b, count(*) FROM {five_columns} WHERE a IN (1, 2, 4) "
                "GROUP BY a, b ORDER BY b ASC LIMIT 2") == [(1, 2, 2), (2, 2, 1)]
    with pytest.raises(InvalidRequest, match="Cannot page queries with both ORDER BY"):
        session.execute(SimpleStatement(query, fetch_size=10))


def test_group_by_refusals_name_what_is_wrong(session, five_columns):
    from cassandra import InvalidRequest
    cases = [
        (f"SELECT DISTINCT a, count(a) FROM {five_columns} GROUP BY a, b",
         "Grouping on clustering columns is not allowed for SELECT DISTINCT queries"),
        (f"SELECT a, b, max(e) FROM {five_columns} WHERE a = 1 GROUP BY a, b, z",
         "Undefined column name z"),
        (f"SELECT a, b AS clustering1, max(e) FROM {five_columns} WHERE a = 1 "
         "GROUP BY a, clustering1", "Undefined column name clustering1"),
    ]
    for query, message in cases:
        with pytest.raises(InvalidRequest, match=message):
            session.execute(query)
    assert [tuple(r) for r in session.execute(
        f"SELECT DISTINCT a, count(a) FROM {five_columns} GROUP BY a")] == [
        (1, 1), (2, 1), (4, 1)]


def test_float_sums_are_compensated_and_averages_survive_overflow(session, keyspace):
    """Cassandra's sum of doubles and floats uses Kahan's summation, and avg goes on in
    BigDecimal once the double sum overflows (AggregationTest.testSumPrecision,
    testDoubleAggregatesPrecision)."""
    import struct
    import sys
    table = f"{keyspace}.float_sums"
    session.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, f float, d double)")
    insert = session.prepare(f"INSERT INTO {table} (k, f, d) VALUES (?, ?, ?)")
    as_float = lambda x: struct.unpack("f", struct.pack("f", x))[0]
    for i in range(1, 18):
        session.execute(insert, (i, as_float(i / 10.0), i / 10.0))
    row = session.execute(f"SELECT sum(f), sum(d) FROM {table} WHERE k IN "
                          f"({', '.join(str(i) for i in range(1, 18))})").one()
    assert tuple(row) == (as_float(15.3), 15.3)
    big = sys.float_info.max
    for k in (101, 102, 103):
        session.execute(insert, (k, as_float(3.4028234663852886e38), big))
    row = session.execute(
        f"SELECT avg(f), avg(d), sum(d) FROM {table} WHERE k IN (101, 102, 103)").one()
    assert tuple(row) == (as_float(3.4028234663852886e38), big, float("inf"))


TIME_ROWS = [(1, "2016-09-27 16:10:00", 1), (1, "2016-09-27 16:12:00", 2),
             (1, "2016-09-27 16:14:00", 3), (1, "2016-09-27 16:15:00", 4),
             (1, "2016-09-27 16:21:00", 5), (1, "2016-09-27 16:22:00", 6),
             (1, "2016-09-27 16:26:00", 7), (1, "2016-09-27 16:26:20", 8),
             (2, "2016-09-27 16:26:20", 10), (2, "2016-09-27 16:30:00", 11)]


def at(text):
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def test_group_by_time_ranges_with_floor(session, keyspace):
    """Cassandra 5.0's `GROUP BY pk, floor(time, 5m)` (CASSANDRA-11871,
    `SelectGroupByTest.testGroupByTimeRangesWithTimestampType`): rows grouped by their time
    rounded down to a multiple of the duration from the epoch, or from a given start."""
    t = f"{keyspace}.time_ranges"
    session.execute(f"CREATE TABLE {t} (pk int, time timestamp, v int, PRIMARY KEY (pk, time))")
    for pk, time, v in TIME_ROWS:
        session.execute(f"INSERT INTO {t} (pk, time, v) VALUES ({pk}, '{time} UTC', {v})")
    expected = [(1, at("2016-09-27 16:10:00"), 1, 3, 3), (1, at("2016-09-27 16:15:00"), 4, 4, 1),
                (1, at("2016-09-27 16:20:00"), 5, 6, 2), (1, at("2016-09-27 16:25:00"), 7, 8, 2),
                (2, at("2016-09-27 16:25:00"), 10, 10, 1),
                (2, at("2016-09-27 16:30:00"), 11, 11, 1)]
    query = (f"SELECT pk, floor(time, 5m), min(v), max(v), count(v) FROM {t} "
             "GROUP BY pk, floor(time, 5m)")
    assert [tuple(r) for r in session.execute(query)] == expected
    # Paged, a group never split.
    assert [tuple(r) for r in session.execute(SimpleStatement(query, fetch_size=2))] == expected
    # From a starting time, and prepared with the duration bound.
    started = [tuple(r) for r in session.execute(
        f"SELECT pk, floor(time, 5m, '2016-09-27 16:01:00 UTC'), min(v), max(v), count(v) "
        f"FROM {t} GROUP BY pk, floor(time, 5m, '2016-09-27 16:01:00 UTC')")]
    assert started == [(1, at("2016-09-27 16:06:00"), 1, 1, 1),
                       (1, at("2016-09-27 16:11:00"), 2, 4, 3),
                       (1, at("2016-09-27 16:21:00"), 5, 6, 2),
                       (1, at("2016-09-27 16:26:00"), 7, 8, 2),
                       (2, at("2016-09-27 16:26:00"), 10, 11, 2)]
    prepared = session.prepare(
        f"SELECT pk, min(v) FROM {t} WHERE pk = ? GROUP BY floor(time, ?) LIMIT 2")
    assert [tuple(r) for r in session.execute(prepared, (1, Duration(0, 0, 600_000_000_000)))] == [(1, 1), (1, 5)]
    # Of a timeuuid, directly or through toTimestamp.
    session.execute(f"CREATE TABLE {t}_uuids (pk int, time timeuuid, v int, "
                    "PRIMARY KEY (pk, time))")
    for pk, time, v in TIME_ROWS:
        session.execute(f"INSERT INTO {t}_uuids (pk, time, v) VALUES "
                        f"({pk}, maxTimeuuid('{time} UTC'), {v})")
    for floored in ("floor(time, 5m)", "floor(to_timestamp(time), 5m)",
                    "floor(toTimestamp(time), 5m)"):
        assert [tuple(r) for r in session.execute(
            f"SELECT pk, {floored}, min(v), max(v), count(v) FROM {t}_uuids "
            f"GROUP BY pk, {floored}")] == expected, floored
    # The function in selections, on every type it takes.
    session.execute(f"CREATE TABLE {t}_types (k int PRIMARY KEY, ts timestamp, d date, tm time)")
    session.execute(f"INSERT INTO {t}_types (k, ts, d, tm) VALUES (1, '2016-09-27 16:10:00 UTC', "
                    "'2016-09-27', '16:10:00')")
    row = session.execute(
        f"SELECT floor(ts, 1h), floor(ts, 1mo), floor(ts, 2d, '2016-09-01'), floor(d, 1w), "
        f"floor(tm, 15m) FROM {t}_types").one()
    assert row[0] == at("2016-09-27 16:00:00")
    assert row[1] == at("2016-09-01 00:00:00")
    assert row[2] == at("2016-09-27 00:00:00")
    assert str(row[3]) == "2016-09-22"  # the epoch was a Thursday
    assert str(row[4]) == "16:00:00.000000000"
    for query, message in [
            (f"SELECT pk, floor(time, 10us), min(v) FROM {t} GROUP BY pk, floor(time, 10us)",
             "The floor cannot be computed for the 10us duration as precision is below 1 "
             "millisecond"),
            (f"SELECT pk, min(v) FROM {t} GROUP BY floor(time, 5m), pk",
             "Functions are only supported on the last element of the GROUP BY clause"),
            (f"SELECT floor(ts, 1h, '2017-01-01') FROM {t}_types",
             "The floor function starting time is greater than the provided time"),
            # In the GROUP BY alone too: every row's time is floored.
            (f"SELECT pk, min(v) FROM {t} GROUP BY pk, floor(time, 5m, "
             "'2016-09-27 16:11:00 UTC')",
             "The floor function starting time is greater than the provided time"),
            (f"SELECT floor(ts, -1h) FROM {t}_types",
             "Negative durations are not supported by the floor function"),
            (f"SELECT floor(d, 1h) FROM {t}_types",
             "The floor on date values cannot be computed for the 1h duration as precision is "
             "below 1 day")]:
        with pytest.raises(InvalidRequest, match=re.escape(message)):
            session.execute(query)
