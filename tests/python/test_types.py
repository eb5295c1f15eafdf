"""Every native CQL type round-trips through the driver, prepared and not.

Non-prepared statements go through the driver's client-side interpolation, so values reach the
server as CQL literals; prepared ones as protocol-encoded values. Both are read back with a
prepared and a non-prepared SELECT. Every type except duration is also used as a partition and
clustering key, where Cassandra's ordering of the type shows in the clustering order.
"""

from __future__ import annotations

import datetime
import itertools
import math
import struct
import uuid
from decimal import Decimal

import pytest
from cassandra.encoder import Encoder
from cassandra.query import UNSET_VALUE
from cassandra.util import Date, Duration, Time, uuid_from_time

# Values in ascending Cassandra order (for key tests), then extra values for regular columns.
# `None` marks the boundary: everything before it is also used as a clustering key.
TYPES = {
    "ascii": (["", "A", "Z", "a", "z~"], ["it's \"quoted\""]),
    "bigint": ([-(2**63), -1, 0, 1, 2**63 - 1], []),
    "blob": ([b"", b"\x00", b"\x00\x01", b"\x7f", b"\x80", b"\xff\xff"], [bytes(range(256))]),
    "boolean": ([False, True], []),
    "date": ([Date(datetime.date(1, 1, 1)), Date(datetime.date(1969, 12, 31)),
              Date(datetime.date(1970, 1, 1)), Date(datetime.date(2024, 2, 29)),
              Date(datetime.date(9999, 12, 31))], []),
    "decimal": ([Decimal("-1E+10"), Decimal("-1.5"), Decimal("0"), Decimal("0.001"),
                 Decimal("12345678901234567890.123456789")],
                [Decimal("1.50"), Decimal("-12.3450"), Decimal("1E+3"), Decimal("0.000")]),
    "double": ([-math.inf, -1.5e300, -1.0, 0.0, 5e-324, 1.0, 1.7976931348623157e308, math.inf],
               [math.nan, -0.0, 0.1]),
    "float": ([-math.inf, -3.4028234663852886e38, -1.0, 0.0, 1.401298464324817e-45, 1.5,
               math.inf],
              [math.nan, -0.0, 0.10000000149011612]),
    "inet": (["0.0.0.0", "10.0.0.1", "192.168.1.254", "255.255.255.255"],
             ["::1", "2001:db8::ff00:42:8329", "fe80::1"]),
    "int": ([-(2**31), -1, 0, 1, 2**31 - 1], []),
    "smallint": ([-(2**15), -1, 0, 1, 2**15 - 1], []),
    "text": (["", "Z", "a", "é", "✓", "😀"], ["it's", "line\nbreak", "नमस्ते"]),
    "time": ([Time(0), Time(1), Time(datetime.time(12, 0)), Time(86_399_999_999_999)], []),
    "timestamp": ([datetime.datetime(1900, 1, 1), datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
                   datetime.datetime(1970, 1, 1), datetime.datetime(2038, 1, 19, 3, 14, 8, 1000),
                   # Whole seconds: the driver decodes timestamps through a float, which
                   # cannot hold milliseconds this far out.
                   datetime.datetime(9999, 12, 31, 23, 59, 59)], []),
    "timeuuid": ([uuid_from_time(t, node=0x0242AC120002, clock_seq=0x1234)
                  for t in (0.0, 1e9, 1.7e9, 1.7e9 + 0.001)], []),
    "tinyint": ([-128, -1, 0, 1, 127], []),
    "uuid": ([uuid.UUID("00000000-0000-4000-8000-000000000001"),
              uuid.UUID("00000001-0000-4000-8000-000000000001"),
              uuid.UUID("12345678-9abc-4def-8000-000000000001"),
              uuid.UUID("7fffffff-ffff-4fff-8000-000000000001")], []),
    "varchar": (["", "a", "b"], []),
    "varint": ([-(2**100), -(2**64), -1, 0, 1, 2**63, 2**100], []),
    "duration": ([], [Duration(0, 0, 0), Duration(1, 2, 3), Duration(-1, -2, -3),
                      Duration(14, 0, 3_600_000_000_000), Duration(0, 0, -1)]),
}

NATIVE_TYPES = sorted(TYPES)
KEY_TYPES = [t for t in NATIVE_TYPES if TYPES[t][0]]


_ENCODER = Encoder()


def literal(value) -> str:
    """`value` as a CQL literal, as the driver interpolates it into a non-prepared statement.

    Except decimals: the driver writes those through a float (losing digits and scale), so
    they are written with `str()`, which is a valid CQL literal.
    """
    if isinstance(value, Decimal):
        return str(value)
    return _ENCODER.cql_encode_all_types(value)


def canonical_decimal(d: Decimal) -> Decimal:
    """The form a decimal clustering value reads back in: no trailing zeros in the fraction,
    scale 0 for an integer (1.50 is 1.5, 1E+3 is 1000, 0.000 is 0)."""
    sign, digits, exponent = d.as_tuple()
    digits = list(digits)
    if not any(digits):
        return Decimal(0)
    while exponent < 0 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    if exponent > 0:
        digits += [0] * exponent
        exponent = 0
    return Decimal((sign, tuple(digits), exponent))


def same(cql_type: str, expected, got) -> bool:
    """Equality that tells NaN, -0.0 and decimal scale apart."""
    if cql_type == "float":
        return got is not None and struct.pack(">f", expected) == struct.pack(">f", got)
    if cql_type == "double":
        return got is not None and struct.pack(">d", expected) == struct.pack(">d", got)
    if cql_type == "decimal":
        return got is not None and expected.as_tuple() == got.as_tuple()
    if isinstance(expected, bytes):
        return got is not None and bytes(got) == expected
    return type(got) is type(expected) and got == expected


@pytest.fixture(scope="module")
def all_types(session, keyspace):
    columns = ", ".join(f"c_{t} {t}" for t in NATIVE_TYPES)
    session.execute(f"CREATE TABLE {keyspace}.all_types (k int PRIMARY KEY, {columns})")
    return f"{keyspace}.all_types"


_keys = itertools.count(1)


@pytest.mark.parametrize("cql_type", NATIVE_TYPES)
def test_round_trip(session, all_types, cql_type):
    ordered, extra = TYPES[cql_type]
    column = f"c_{cql_type}"
    insert = session.prepare(f"INSERT INTO {all_types} (k, {column}) VALUES (?, ?)")
    select = session.prepare(f"SELECT {column} FROM {all_types} WHERE k = ?")
    failures = []
    for value in ordered + extra:
        prepared_key, literal_key = next(_keys), next(_keys)
        session.execute(insert, (prepared_key, value))
        session.execute(
            f"INSERT INTO {all_types} (k, {column}) VALUES ({literal_key}, {literal(value)})")
        for key, how in ((prepared_key, "prepared"), (literal_key, "literal")):
            by_prepared = session.execute(select, (key,)).one()[0]
            by_literal = session.execute(
                f"SELECT {column} FROM {all_types} WHERE k = %s", (key,)).one()[0]
            for got, read in ((by_prepared, "prepared"), (by_literal, "literal")):
                if not same(cql_type, value, got):
                    failures.append(f"{value!r} written {how}, read {read}: got {got!r}")
    assert not failures, "\n".join(failures)


def test_decimal_literal_keeps_its_scale(session, all_types):
    key = next(_keys)
    session.execute(f"INSERT INTO {all_types} (k, c_decimal) VALUES ({key}, 1.50)")
    got = session.execute(f"SELECT c_decimal FROM {all_types} WHERE k = {key}").one().c_decimal
    assert got.as_tuple() == Decimal("1.50").as_tuple()


@pytest.mark.parametrize("cql_type", KEY_TYPES)
def test_as_partition_and_clustering_key(session, keyspace, cql_type):
    values = TYPES[cql_type][0]
    table = f"{keyspace}.key_{cql_type}"
    session.execute(f"CREATE TABLE {table} (k {cql_type}, c {cql_type}, v int, "
                    "PRIMARY KEY (k, c))")
    insert = session.prepare(f"INSERT INTO {table} (k, c, v) VALUES (?, ?, ?)")
    # Insert in a scrambled order; the clustering order must sort them.
    partition = values[-1]
    order = list(range(len(values)))
    scrambled = order[1::2] + order[0::2]
    for i in scrambled:
        session.execute(insert, (partition, values[i], i))
    rows = list(session.execute(f"SELECT c, v FROM {table} WHERE k = {literal(partition)}"))
    assert [r.v for r in rows] == order, f"clustering order of {cql_type}"
    # A decimal clustering value reads back in canonical form (-1E+10 as -10000000000).
    key_form = canonical_decimal if cql_type == "decimal" else (lambda v: v)
    assert all(same(cql_type, key_form(values[r.v]), r.c) for r in rows)

    select = session.prepare(f"SELECT v FROM {table} WHERE k = ? AND c = ?")
    for i, value in enumerate(values):
        if isinstance(value, (str, bytes)) and len(value) == 0:
            continue  # an empty partition key is refused (test_errors checks that)
        session.execute(insert, (value, value, i))
        assert session.execute(select, (value, value)).one().v == i
        row = session.execute(
            f"SELECT v FROM {table} WHERE k = {literal(value)} AND c = {literal(value)}").one()
        assert row is not None and row.v == i, f"literal key {value!r}"


def test_null_values(session, all_types):
    key = next(_keys)
    columns = [f"c_{t}" for t in NATIVE_TYPES]
    insert = session.prepare(
        f"INSERT INTO {all_types} (k, {', '.join(columns)}) "
        f"VALUES (?, {', '.join('?' for _ in columns)})")
    session.execute(insert, [key] + [None] * len(columns))
    row = session.execute(f"SELECT * FROM {all_types} WHERE k = %s", (key,)).one()
    assert row is not None
    assert all(getattr(row, c) is None for c in columns)


def test_unset_values_leave_cells_untouched(session, all_types):
    key = next(_keys)
    session.execute(
        f"INSERT INTO {all_types} (k, c_int, c_text) VALUES (%s, 1, 'kept')", (key,))
    update = session.prepare(f"UPDATE {all_types} SET c_int = ?, c_text = ? WHERE k = ?")
    session.execute(update, (2, UNSET_VALUE, key))
    row = session.execute(f"SELECT c_int, c_text FROM {all_types} WHERE k = %s", (key,)).one()
    assert (row.c_int, row.c_text) == (2, "kept")


def test_values_bound_by_name(session, all_types):
    key = next(_keys)
    insert = session.prepare(
        f"INSERT INTO {all_types} (k, c_int, c_text) VALUES (:k, :number, :words)")
    assert [c.name for c in insert.column_metadata] == ["k", "number", "words"]
    session.execute(insert, {"words": "named", "k": key, "number": 7})
    row = session.execute(f"SELECT c_int, c_text FROM {all_types} WHERE k = %s", (key,)).one()
    assert (row.c_int, row.c_text) == (7, "named")
    # A marker named otherwise than its key column still routes by the key (the prepared
    # result's partition key indexes), as the driver's token-aware routing needs.
    assert insert.routing_key_indexes == [0]
    select = session.prepare(
        f"SELECT c_int FROM {all_types} WHERE c_int = :n AND k = :key ALLOW FILTERING")
    assert select.routing_key_indexes == [1]
    update = session.prepare(f"UPDATE {all_types} SET c_int = :v WHERE k = :which")
    assert update.routing_key_indexes == [1]
    assert session.execute(select, {"n": 7, "key": key}).one().c_int == 7


def test_token_function_markers_are_its_arguments(session, all_types):
    """The markers of `token(?)` are the token function's arguments (Cassandra's
    `arg0(system.token)`, of the key's type), not the key column, so drivers do not take them
    for the routing key (the Python driver then refused to bind UNSET there)."""
    select = session.prepare(f"SELECT k FROM {all_types} WHERE token(k) >= token(?)")
    assert [(c.name, c.type.typename) for c in select.column_metadata] == [
        ("arg0(system.token)", "int")]
    assert select.routing_key_indexes is None
    assert session.execute(select, [-(2**31)]) is not None


def test_preparing_with_use_warns_once_per_connection(cluster, all_types):
    """PREPARE of a statement naming its table without a keyspace, on a connection with a
    keyspace set by USE, warns once a connection (Cassandra's
    warnAboutUseWithPreparedStatements); a statement naming its keyspace does not."""
    from cassandra.cluster import ResponseFuture
    from cassandra.protocol import PrepareMessage

    keyspace, table = all_types.split(".")

    def prepare_warnings(session, query):
        future = ResponseFuture(session, PrepareMessage(query=query), query=None, timeout=10)
        future.send_request()
        future.result()
        return future.warnings or []

    session = cluster.connect()
    try:
        assert prepare_warnings(session, f"SELECT k FROM {all_types} WHERE k = 1") == []
        session.execute(f"USE {keyspace}")
        assert prepare_warnings(session, f"SELECT k FROM {all_types} WHERE k = 2") == []
        assert prepare_warnings(
            session, f"BEGIN BATCH INSERT INTO {all_types} (k) VALUES (5) APPLY BATCH") == []
        warnings = prepare_warnings(session, f"SELECT k FROM {table} WHERE k = 3")
        assert len(warnings) == 1
        assert warnings[0].startswith(
            "`USE <keyspace>` with prepared statements is considered to be an anti-pattern due "
            "to ambiguity in non-qualified table names. Please consider removing instances of "
            "`Session#setKeyspace(<keyspace>)`, `Session#execute(\"USE <keyspace>\")` and "
            "`cluster.newSession(<keyspace>)` from your code, and always use fully qualified "
            "table names (e.g. <keyspace>.<table>). "
            f"Keyspace used: {keyspace}, statement keyspace: {keyspace}, statement id: ")
        assert prepare_warnings(session, f"UPDATE {table} SET c_int = 1 WHERE k = 4") == []
    finally:
        session.shutdown()
    # A batch with one statement naming its table without a keyspace, on another connection.
    session = cluster.connect(keyspace)
    try:
        warnings = prepare_warnings(
            session, f"BEGIN BATCH INSERT INTO {all_types} (k) VALUES (6); "
                     f"INSERT INTO {table} (k) VALUES (7) APPLY BATCH")
        assert len(warnings) == 1 and warnings[0].startswith("`USE <keyspace>`")
    finally:
        session.shutdown()

def test_result_metadata_types(cluster, session, all_types):
    result = session.execute(f"SELECT * FROM {all_types} LIMIT 1")
    names = [t.typename for t in result.column_types]
    expected = {f"c_{t}": t for t in NATIVE_TYPES}
    for name, typename in zip(result.column_names, names):
        if name in expected:
            cql = expected[name]
            driver_name = {"text": "varchar", "varchar": "varchar"}.get(cql, cql)
            assert typename == driver_name, name
    table = cluster.metadata.keyspaces[all_types.split(".")[0]].tables["all_types"]
    assert {c: table.columns[c].cql_type for c in expected} == {
        c: ("text" if t == "varchar" else t) for c, t in expected.items()}


def test_counter(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.counters (k int PRIMARY KEY, n counter)")
    update = session.prepare(f"UPDATE {keyspace}.counters SET n = n + ? WHERE k = ?")
    session.execute(update, (5, 1))
    session.execute(f"UPDATE {keyspace}.counters SET n = n - 7 WHERE k = 1")
    session.execute(f"UPDATE {keyspace}.counters SET n = n + {2**62} WHERE k = 2")
    rows = {r.k: r.n for r in session.execute(f"SELECT k, n FROM {keyspace}.counters")}
    assert rows == {1: -2, 2: 2**62}


def test_equal_decimals_are_one_clustering_key(session, keyspace):
    """Cassandra's DecimalType compares clustering values with BigDecimal.compareTo, so 1230
    and 1.23E+3 are one row, found by any form of the number; khata keeps it in canonical
    form (1230; 1.50 as 1.5). Varints with redundant sign bytes likewise."""
    table = f"{keyspace}.decimal_keys"
    session.execute(f"CREATE TABLE {table} (p int, c decimal, v text, PRIMARY KEY (p, c))")
    insert = session.prepare(f"INSERT INTO {table} (p, c, v) VALUES (?, ?, ?)")
    session.execute(insert, [1, Decimal("1230"), "a"])
    session.execute(insert, [1, Decimal("1.23E+3"), "b"])
    rows = list(session.execute(f"SELECT c, v FROM {table} WHERE p = 1"))
    assert [(r.c.as_tuple(), r.v) for r in rows] == [(Decimal("1230").as_tuple(), "b")]
    lookup = session.prepare(f"SELECT v FROM {table} WHERE p = 1 AND c = ?")
    assert [r.v for r in session.execute(lookup, [Decimal((0, (1, 2, 3, 0, 0), -1))])] == ["b"]
    assert [r.v for r in session.execute(f"SELECT v FROM {table} WHERE p = 1 AND c = 12300E-1")] \
        == ["b"]

    session.execute(insert, [2, Decimal("1.50"), "x"])
    session.execute(insert, [2, Decimal("2"), "y"])
    (row,) = session.execute(f"SELECT c FROM {table} WHERE p = 2 AND c = 1.5")
    assert row.c.as_tuple() == Decimal("1.5").as_tuple()
    assert [r.v for r in session.execute(f"SELECT v FROM {table} WHERE p = 2 AND c > 1.5")] \
        == ["y"]
    assert [r.v for r in session.execute(f"SELECT v FROM {table} WHERE p = 2 AND c <= 1.50")] \
        == ["x"]
    assert [r.v for r in session.execute(
        f"SELECT v FROM {table} WHERE p = 2 AND c IN (1.5, 1.50, 15E-1)")] == ["x"]
    session.execute(f"DELETE FROM {table} WHERE p = 2 AND c = 1.500")
    assert [r.v for r in session.execute(f"SELECT v FROM {table} WHERE p = 2")] == ["y"]

    varints = f"{keyspace}.varint_keys"
    session.execute(f"CREATE TABLE {varints} (p int, c varint, v text, PRIMARY KEY (p, c))")
    session.execute(f"INSERT INTO {varints} (p, c, v) VALUES (1, 1, 'a')")
    session.execute(f"INSERT INTO {varints} (p, c, v) VALUES (1, blobAsVarint(0x0001), 'b')")
    assert [(r.c, r.v) for r in session.execute(f"SELECT c, v FROM {varints} WHERE p = 1")] \
        == [(1, "b")]


def test_filters_and_conditions_compare_decimals_by_value(session, keyspace):
    """ALLOW FILTERING and IF conditions compare with the type's comparator (compareForCQL),
    as Cassandra does: 1230 equals 1.23E+3, a varint equals its padded bytes."""
    table = f"{keyspace}.decimal_values"
    session.execute(f"CREATE TABLE {table} (p int PRIMARY KEY, v decimal, n varint, w text)")
    insert = session.prepare(f"INSERT INTO {table} (p, v, n) VALUES (?, ?, ?)")
    session.execute(insert, [1, Decimal("1230"), 7])
    session.execute(insert, [2, Decimal("1.23E+3"), 8])
    session.execute(f"INSERT INTO {table} (p, v, n) VALUES (3, 1229, blobAsVarint(0x0007))")
    keys = lambda where: sorted(r.p for r in session.execute(
        f"SELECT p FROM {table} WHERE {where} ALLOW FILTERING"))
    assert keys("v = 1230") == [1, 2]
    assert keys("v = 12300E-1") == [1, 2]
    assert keys("v > 1229") == [1, 2]
    assert keys("n = 7") == [1, 3]
    filtered = session.prepare(f"SELECT p FROM {table} WHERE v = ? ALLOW FILTERING")
    assert sorted(r.p for r in session.execute(filtered, [Decimal("1.23E+3")])) == [1, 2]
    # A clustering column restricted after a gap is filtered too, by value.
    keyed = f"{keyspace}.decimal_gap"
    session.execute(f"CREATE TABLE {keyed} (p int, a int, c decimal, PRIMARY KEY (p, a, c))")
    session.execute(f"INSERT INTO {keyed} (p, a, c) VALUES (1, 1, 1.5)")
    session.execute(f"INSERT INTO {keyed} (p, a, c) VALUES (1, 2, 2.5)")
    rows = session.execute(f"SELECT a FROM {keyed} WHERE p = 1 AND c = 1.50 ALLOW FILTERING")
    assert [r.a for r in rows] == [1]
    rows = session.execute(
        f"SELECT a FROM {keyed} WHERE p = 1 AND c IN (2.500, 3) ALLOW FILTERING")
    assert [r.a for r in rows] == [2]
    # Conditions compare by value as well.
    applied = session.execute(f"UPDATE {table} SET w = 'x' WHERE p = 2 IF v = 1230").one()
    assert applied[0] is True
    applied = session.execute(f"UPDATE {table} SET w = 'y' WHERE p = 2 IF v IN (1, 12300E-1)")
    assert applied.one()[0] is True


def test_index_on_a_decimal_clustering_column_finds_any_form(session, keyspace):
    """An index on a clustering column files the value the key holds (a number in canonical
    form); a lookup by any form of the number finds it."""
    table = f"{keyspace}.decimal_indexed"
    session.execute(f"CREATE TABLE {table} (p int, c decimal, v text, PRIMARY KEY (p, c))")
    session.execute(f"CREATE INDEX ON {table} (c)")
    session.execute(
        session.prepare(f"INSERT INTO {table} (p, c, v) VALUES (?, ?, ?)"), [1, Decimal("1.50"), "a"])
    lookup = session.prepare(f"SELECT p, v FROM {table} WHERE c = ?")
    for form in ["1.50", "1.5", "1.500", "15E-1"]:
        assert [(r.p, r.v) for r in session.execute(lookup, [Decimal(form)])] == [(1, "a")], form


def test_udt_clustering_key_is_one_row_before_and_after_alter_type_add(session, keyspace):
    """Cassandra's TupleType compares a missing trailing field as a null one, so a frozen UDT
    clustering key written before ALTER TYPE ... ADD and the same value written after it (the
    new field null) are one row, found and sliced by either form (UserTypesTest.testAddUDTField);
    likewise inside a frozen list, in a DESC column, and for tuples with trailing nulls."""
    session.execute(f"CREATE TYPE {keyspace}.grows (foo text)")
    table, listed, desc = (f"{keyspace}.grows_{n}" for n in ("t", "l", "d"))
    session.execute(
        f"CREATE TABLE {table} (pk int, ck frozen<grows>, v int, PRIMARY KEY (pk, ck))")
    session.execute(
        f"CREATE TABLE {listed} (pk int, ck frozen<list<frozen<grows>>>, v int, "
        "PRIMARY KEY (pk, ck))")
    session.execute(
        f"CREATE TABLE {desc} (pk int, ck frozen<grows>, v int, PRIMARY KEY (pk, ck)) "
        "WITH CLUSTERING ORDER BY (ck DESC)")
    for t in (table, desc):
        session.execute(
            f"""INSERT INTO {t} (pk, ck, v) VALUES (0, fromJson('{{"foo": "foo"}}'), 0)""")
    session.execute(f"INSERT INTO {listed} (pk, ck, v) VALUES (0, [{{foo: 'foo'}}], 0)")
    session.execute(f"ALTER TYPE {keyspace}.grows ADD bar text")
    for t in (table, desc):
        session.execute(
            f"""INSERT INTO {t} (pk, ck, v) VALUES (0, fromJson('{{"foo": "foo"}}'), 1)""")
        session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES "
                        """(0, fromJson('{"foo": "foo", "bar": null}'), 2)""")
        session.execute(f"INSERT INTO {t} (pk, ck, v) VALUES (0, {{foo: 'foo', bar: 'a'}}, 3)")
    session.execute(f"INSERT INTO {listed} (pk, ck, v) VALUES (0, [{{foo: 'foo', bar: null}}], 2)")

    rows = lambda t: [(r.ck.foo, r.ck.bar, r.v) for r in session.execute(
        f"SELECT * FROM {t} WHERE pk = 0")]
    assert rows(table) == [("foo", None, 2), ("foo", "a", 3)]
    assert rows(desc) == [("foo", "a", 3), ("foo", None, 2)]
    (row,) = session.execute(f"SELECT * FROM {listed} WHERE pk = 0")
    assert ([(u.foo, u.bar) for u in row.ck], row.v) == ([("foo", None)], 2)
    assert session.execute(f"SELECT JSON ck FROM {table} WHERE pk = 0 LIMIT 1").one().json \
        == '{"ck": {"foo": "foo", "bar": null}}'

    values = lambda t, where: [r.v for r in session.execute(
        f"SELECT v FROM {t} WHERE pk = 0 AND {where}")]
    for t in (table, desc):
        assert values(t, "ck = {foo: 'foo'}") == [2]
        assert values(t, "ck = {foo: 'foo', bar: null}") == [2]
        assert values(t, """ck = fromJson('{"foo": "foo"}')""") == [2]
        assert values(t, "ck IN ({foo: 'foo'}, {foo: 'foo', bar: null})") == [2]
        assert sorted(values(t, "ck > {foo: 'foo'}")) == [3]
        assert values(t, "ck <= {foo: 'foo', bar: null}") == [2]
        assert sorted(values(t, "ck >= {foo: 'foo'} AND ck < {foo: 'foo', bar: 'b'}")) == [2, 3]
    assert values(listed, "ck = [{foo: 'foo'}]") == [2]
    session.execute(f"DELETE FROM {table} WHERE pk = 0 AND ck = {{foo: 'foo'}}")
    assert values(table, "ck = {foo: 'foo', bar: null}") == []

    tuples = f"{keyspace}.tuple_trailing_nulls"
    session.execute(
        f"CREATE TABLE {tuples} (pk int, ck frozen<tuple<int, int>>, v int, PRIMARY KEY (pk, ck))")
    session.execute(f"INSERT INTO {tuples} (pk, ck, v) VALUES (0, (1, null), 0)")
    session.execute(session.prepare(f"INSERT INTO {tuples} (pk, ck, v) VALUES (0, ?, ?)"),
                    [(1,), 1])
    assert [(r.ck, r.v) for r in session.execute(f"SELECT * FROM {tuples} WHERE pk = 0")] \
        == [((1, None), 1)]


def test_vectors_of_collections_and_their_dimensions(session, keyspace):
    # Cassandra 5.0 freezes a vector's elements; its dimension is an int, positive.
    from cassandra import InvalidRequest
    from cassandra.protocol import SyntaxException
    session.execute(f"CREATE TABLE {keyspace}.vl (k int PRIMARY KEY, v vector<list<int>, 2>, "
                    "s vector<set<text>, 1>)")
    insert = session.prepare(f"INSERT INTO {keyspace}.vl (k, v, s) VALUES (?, ?, ?)")
    session.execute(insert, [0, [[1, 2], [3, 4, 5]], [{"b", "a"}]])
    row = session.execute(f"SELECT v, s FROM {keyspace}.vl WHERE k = 0").one()
    assert row.v == [[1, 2], [3, 4, 5]]
    assert list(row.s[0]) == ["a", "b"]
    kind = session.execute(
        "SELECT type FROM system_schema.columns WHERE keyspace_name = %s AND table_name = 'vl' "
        "AND column_name = 'v'", [keyspace]).one().type
    assert kind == "vector<frozen<list<int>>, 2>"
    for dimension in (0, -18):
        with pytest.raises(InvalidRequest,
                           match=f"vectors may only have positive dimensions; given {dimension}"):
            session.execute(f"CREATE TABLE {keyspace}.vd (k int PRIMARY KEY, v vector<float, {dimension}>)")
    with pytest.raises(SyntaxException, match='For input string: "2147483648"'):
        session.execute(f"CREATE TABLE {keyspace}.vd (k int PRIMARY KEY, v vector<float, 2147483648>)")


def test_a_quoted_marshal_class_of_a_native_type_is_that_type(session, keyspace):
    """Cassandra's grammar takes a quoted class name as a type (gocql's TestLexicalUUIDType
    creates one); a class of a native type makes a column of that native type."""
    table = f"{keyspace}.marshal_classes"
    session.execute(f"CREATE TABLE {table} (k 'org.apache.cassandra.db.marshal.UTF8Type', "
                    "c 'org.apache.cassandra.db.marshal.TimeUUIDType', v 'Int32Type', "
                    "b 'org.apache.cassandra.db.marshal.BytesType', PRIMARY KEY (k, c))")
    types = {r.column_name: r.type for r in session.execute(
        "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s "
        "AND table_name = 'marshal_classes'", [keyspace])}
    assert types == {"k": "text", "c": "timeuuid", "v": "int", "b": "blob"}
    session.execute(f"INSERT INTO {table} (k, c, v, b) VALUES ('a', now(), 1, 0x01)")
    row = session.execute(f"SELECT v, b FROM {table} WHERE k = 'a'").one()
    assert (row.v, row.b) == (1, b"\x01")
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest, match="LexicalUUIDType"):
        session.execute(f"CREATE TABLE {keyspace}.lexical "
                        "(k int PRIMARY KEY, c 'org.apache.cassandra.db.marshal.LexicalUUIDType')")
