"""CAST and the time conversion functions in the selection, as Cassandra 4.1's `CastFcts` and
`TimeFcts` define them (`CastFctsTest`, `TimeFctsTest`)."""

from __future__ import annotations

import re

import pytest
from cassandra import InvalidRequest


@pytest.fixture(scope="module")
def table(session, keyspace):
    t = f"{keyspace}.casts"
    session.execute(
        f"CREATE TABLE {t} (k int PRIMARY KEY, i int, a ascii, x text, b blob, d duration, "
        "l frozen<list<int>>, ts timestamp, dt date, tu timeuuid, u uuid, bo boolean, "
        "ip inet, tm time)")
    session.execute(
        f"INSERT INTO {t} (k, i, a, x, b, d, l, ts, dt, tu, u, bo, ip, tm) VALUES (1, 7, 'a', "
        "'x', 0x01, 1h, [1], '2026-12-05 10:00:00+0000', '2026-12-05', now(), uuid(), true, "
        "'127.0.0.1', '10:00:00')")
    return t


@pytest.mark.parametrize("selector, column, to", [
    ("CAST(x AS ascii)", "x", "ascii"),
    ("CAST(b AS text)", "b", "text"),
    ("CAST(d AS text)", "d", "text"),
    ("CAST(l AS text)", "l", "text"),
    ("CAST(i AS boolean)", "i", "boolean"),
    ("CAST(bo AS int)", "bo", "int"),
    ("CAST(x AS int)", "x", "int"),
])
def test_casts_cassandra_does_not_define_are_refused(session, table, selector, column, to):
    with pytest.raises(InvalidRequest, match=re.escape(f"{column} cannot be cast to {to}")):
        session.execute(f"SELECT {selector} FROM {table} WHERE k = 1")


@pytest.mark.parametrize("selector", [
    "CAST(a AS text)", "CAST(ip AS text)", "CAST(bo AS ascii)", "CAST(u AS text)",
    "CAST(tu AS text)", "CAST(ts AS text)", "CAST(dt AS ascii)", "CAST(tm AS text)",
    "CAST(i AS text)", "CAST(i AS varint)", "CAST(tu AS timestamp)", "CAST(ts AS date)",
    "CAST(dt AS timestamp)",
])
def test_casts_cassandra_defines_run(session, table, selector):
    assert session.execute(f"SELECT {selector} FROM {table} WHERE k = 1").one()[0] is not None


def test_a_cast_to_the_own_type_is_the_column(session, table):
    result = session.execute(f"SELECT CAST(i AS int), CAST(x AS text) FROM {table} WHERE k = 1")
    assert result.column_names == ["i", "x"]
    assert tuple(result.one()) == (7, "x")


@pytest.mark.parametrize("call, message", [
    ("dateOf(ts)",
     "Type error: ts cannot be passed as argument 0 of function system.dateof of type timeuuid"),
    ("unixTimestampOf(dt)", "Type error: dt cannot be passed as argument 0 of function "
     "system.unixtimestampof of type timeuuid"),
    ("toTimestamp(ts)", "Invalid call to function totimestamp, none of its type signatures "
     "match (known type signatures: system.totimestamp : (timeuuid) -> timestamp, "
     "system.totimestamp : (date) -> timestamp)"),
    ("toDate(dt)", "Invalid call to function todate, none of its type signatures match "
     "(known type signatures: system.todate : (timeuuid) -> date, "
     "system.todate : (timestamp) -> date)"),
    ("toUnixTimestamp(u)", "Invalid call to function tounixtimestamp, none of its type "
     "signatures match (known type signatures: system.tounixtimestamp : (timeuuid) -> bigint, "
     "system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : (date) -> "
     "bigint)"),
])
def test_time_functions_take_the_types_of_their_overloads(session, table, call, message):
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.execute(f"SELECT {call} FROM {table} WHERE k = 1")


def test_time_functions_on_their_types(session, table):
    row = session.execute(
        f"SELECT toDate(ts), toTimestamp(dt), toUnixTimestamp(ts), toUnixTimestamp(dt), "
        f"dateOf(tu), unixTimestampOf(tu) FROM {table} WHERE k = 1").one()
    assert str(row[0]) == "2026-12-05"
    assert row[2] == 1_796_464_800_000
    assert row[3] == 1_796_428_800_000
    assert row[4] is not None and isinstance(row[5], int)


def test_deprecated_time_functions_as_values(session, table):
    """Cassandra 4.1 keeps dateOf and unixTimestampOf (deprecated) as terms too, of a timeuuid
    only."""
    session.execute(
        f"INSERT INTO {table} (k, ts, i) VALUES (2, dateOf(now()), 1)")
    session.execute(
        f"UPDATE {table} SET b = bigintAsBlob(unixTimestampOf(now())) WHERE k = 2")
    row = session.execute(f"SELECT ts, blobAsBigint(b) FROM {table} WHERE k = 2").one()
    assert row[0] is not None and row[1] > 1_700_000_000_000
    with pytest.raises(InvalidRequest, match=re.escape(
            "Type error: currenttimestamp() cannot be passed as argument 0 of function "
            "system.dateof of type timeuuid")):
        session.execute(f"INSERT INTO {table} (k, ts) VALUES (3, dateOf(currentTimestamp()))")


def test_numeric_casts_convert_as_java_numbers(session, keyspace):
    """CastFcts converts through Java's Number methods: to decimal exactly from integers and
    varints (CAST(1 AS decimal) is 1), from a float through Float.toString (5.2, not its
    double's 5.199999809265137), to varint via longValue(), to the integer types via
    intValue()/longValue() (a float saturates, an integer keeps its low bits)."""
    from decimal import Decimal
    t = f"{keyspace}.numbers"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, i int, f float, d double, "
                    "vi varint, dec decimal)")
    session.execute(f"INSERT INTO {t} (k, i, f, d, vi, dec) VALUES (1, 1, 5.2, 1e10, "
                    "123456789012345678901234567890, 12345678901234567890.5)")
    row = session.execute(
        f"SELECT CAST(i AS decimal), CAST(f AS decimal), CAST(vi AS decimal), "
        f"CAST(dec AS varint), CAST(d AS tinyint), CAST(d AS int), CAST(d AS bigint), "
        f"CAST(vi AS int) FROM {t} WHERE k = 1").one()
    assert str(row[0]) == "1"
    assert str(row[1]) == "5.2"
    assert row[2] == Decimal("123456789012345678901234567890")
    assert row[3] == -6101065172474983726
    assert row[4] == -1  # (byte) (int) 1e10: Integer.MAX_VALUE's low byte
    assert row[5] == 2147483647
    assert row[6] == 10_000_000_000
    assert row[7] == 123456789012345678901234567890 % 2**32 - 2**32 * (
        (123456789012345678901234567890 % 2**32) >= 2**31)


def test_casts_nest(session, keyspace):
    """A cast of a cast or of a function (Cassandra's CastFctsTest.testCastsWithReverseOrder)."""
    t = f"{keyspace}.reversed_casts"
    session.execute(f"CREATE TABLE {t} (a int, b smallint, c double, PRIMARY KEY (a, b)) "
                    "WITH CLUSTERING ORDER BY (b DESC)")
    session.execute(f"INSERT INTO {t} (a, b, c) VALUES (1, 2, 6.3)")
    assert tuple(session.execute(
        f"SELECT CAST(a AS tinyint), CAST(b AS tinyint), CAST(c AS tinyint) FROM {t}").one()) \
        == (1, 2, 6)
    result = session.execute(
        f"SELECT CAST(CAST(a AS tinyint) AS smallint), CAST(CAST(b AS tinyint) AS smallint), "
        f"CAST(CAST(c AS tinyint) AS smallint) FROM {t}")
    assert tuple(result.one()) == (1, 2, 6)
    assert result.column_names[0] == "cast(cast(a as tinyint) as smallint)"
    assert tuple(session.execute(
        f"SELECT CAST(CAST(CAST(a AS tinyint) AS double) AS text), "
        f"CAST(CAST(CAST(b AS tinyint) AS double) AS text), "
        f"CAST(CAST(CAST(c AS tinyint) AS double) AS text) FROM {t}").one()) \
        == ("1.0", "2.0", "6.0")
    # A cast of a function, and a function of a cast.
    assert session.execute(
        f"SELECT CAST(blobAsInt(intAsBlob(a)) AS text) FROM {t}").one()[0] == "1"
    assert session.execute(
        f"SELECT intAsBlob(CAST(b AS int)) FROM {t}").one()[0] == b"\x00\x00\x00\x02"
    with pytest.raises(InvalidRequest, match=re.escape("a cannot be cast to boolean")):
        session.execute(f"SELECT CAST(CAST(a AS bigint) AS boolean) FROM {t}")


def test_collection_tuple_and_hinted_selectors(session, keyspace):
    """Lists, sets, maps and tuples of selectors, and type hints of collection and tuple
    types, in the selection (Cassandra 4.0+, TermSelectionTest)."""
    t = f"{keyspace}.term_selection"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, t text, PRIMARY KEY (pk, ck))")
    session.execute(f"INSERT INTO {t} (pk, ck, t) VALUES (1, 1, 'one')")
    session.execute(f"INSERT INTO {t} (pk, ck, t) VALUES (1, 3, 'three')")
    one = lambda q: tuple(session.execute(q).one())
    assert one(f"SELECT [min(ck), max(ck)] FROM {t}") == ([1, 3],)
    assert one(f"SELECT {{max(ck), min(ck), 3}} FROM {t}") == ({1, 3},)
    assert one(f"SELECT (map<text, int>){{'min': min(ck), 'max': max(ck)}} FROM {t}") == (
        {'max': 3, 'min': 1},)
    assert one(f"SELECT (list<int>)[1, 2, 3] FROM {t} WHERE pk = 1 AND ck = 1") == ([1, 2, 3],)
    assert one(f"SELECT (tuple<int, text>)(1, 'foo') FROM {t} WHERE pk = 1 AND ck = 1") == (
        (1, 'foo'),)
    assert one(f"SELECT (ck, t), [t, 'x'] FROM {t} WHERE pk = 1 AND ck = 3") == (
        (3, 'three'), ['three', 'x'])
    with pytest.raises(InvalidRequest, match="Invalid field selection"):
        session.execute(f"SELECT min(ck).min FROM {t}")
