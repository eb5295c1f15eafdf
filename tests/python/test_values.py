"""Values, operations and functions in statements where Cassandra 4.1's rules and words are
pinned: operations a column's type does not take, UDT field writes and deletions, tuple and
UDT literals, functions as terms, inet forms, and JSON (see also test_json.py)."""

from __future__ import annotations

import pytest
from cassandra import InvalidRequest


@pytest.fixture(scope="module")
def ks(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.ut (a int, b text)")
    session.execute(
        f"CREATE TABLE {keyspace}.u (k int PRIMARY KEY, u ut, fu frozen<ut>, i int, "
        "t frozen<tuple<int, int>>)")
    return keyspace


def refused(session, statement, message, params=None):
    with pytest.raises(InvalidRequest) as error:
        session.execute(statement, params)
    assert message in str(error.value), str(error.value)


def test_udt_takes_no_addition_or_subtraction(session, ks):
    session.execute(f"INSERT INTO {ks}.u (k, u) VALUES (0, {{a: 7, b: 'keep me'}})")
    refused(session, f"UPDATE {ks}.u SET u = u + {{a: 1}} WHERE k = 0",
            "Invalid operation (u = u + {a: 1}) for non counter column u")
    refused(session, f"UPDATE {ks}.u SET u = u - {{a: 1}} WHERE k = 0",
            "Invalid operation (u = u - {a: 1}) for non counter column u")
    row = session.execute(f"SELECT u FROM {ks}.u WHERE k = 0").one()
    assert (row.u.a, row.u.b) == (7, "keep me")


def test_field_writes_and_deletions_of_frozen_or_non_udt_columns(session, ks):
    refused(session, f"DELETE fu.a FROM {ks}.u WHERE k = 0",
            "Frozen UDT column fu does not support field deletions")
    refused(session, f"DELETE i.a FROM {ks}.u WHERE k = 0",
            "Invalid field deletion operation for non-UDT column i")
    refused(session, f"UPDATE {ks}.u SET fu.a = 0 WHERE k = 0",
            "Invalid operation (fu.a = 0) for frozen UDT column fu")
    refused(session, f"UPDATE {ks}.u SET i.a = 0 WHERE k = 0",
            "Invalid operation (i.a = 0) for non-UDT column i")
    refused(session, f"DELETE i[0] FROM {ks}.u WHERE k = 0",
            "Invalid deletion operation for non collection column i")


def test_json_tuple_of_the_wrong_length(session, ks):
    session.execute(f"CREATE TABLE {ks}.tj (k int PRIMARY KEY, tup frozen<tuple<int, ascii, int>>)")
    refused(session, f"""INSERT INTO {ks}.tj JSON '{{"k": 1, "tup": [1, "a"]}}'""",
            "Error decoding JSON value for tup: Tuple is missing items (expected 3): [1, a]")
    refused(session, f"""INSERT INTO {ks}.tj JSON '{{"k": 1, "tup": [1, "a", 3, 4.5]}}'""",
            "Tuple contains extra items (expected 3): [1, a, 3, 4.5]")
    from cassandra.protocol import FunctionFailure
    with pytest.raises(FunctionFailure) as error:
        session.execute(f"""INSERT INTO {ks}.tj (k, tup) VALUES (3, fromJson('[1, "a", 3, 4]'))""")
    assert "Tuple contains extra items (expected 3): [1, a, 3, 4]" in str(error.value)
    assert list(session.execute(f"SELECT * FROM {ks}.tj")) == []


def test_ipv4_mapped_inet_is_the_ipv4_address(session, ks):
    session.execute(f"CREATE TABLE {ks}.ip (k int PRIMARY KEY, i inet)")
    session.execute(f"INSERT INTO {ks}.ip (k, i) VALUES (0, '::ffff:1.2.3.4')")
    session.execute(f"""INSERT INTO {ks}.ip JSON '{{"k": 1, "i": "::ffff:1.2.3.5"}}'""")
    rows = session.execute(f"SELECT k, i, inetAsBlob(i) AS b FROM {ks}.ip")
    assert sorted((r.k, r.i, r.b) for r in rows) == [
        (0, "1.2.3.4", b"\x01\x02\x03\x04"), (1, "1.2.3.5", b"\x01\x02\x03\x05")]
    rows = session.execute(f"SELECT k FROM {ks}.ip WHERE i = '1.2.3.4' ALLOW FILTERING")
    assert [r.k for r in rows] == [0]


def test_json_numbers_inets_and_keys_as_cassandra_writes_them(session, ks):
    session.execute(
        f"CREATE TABLE {ks}.jn (k int PRIMARY KEY, f float, d double, i inet, fm map<float, int>, "
        "sm map<frozen<set<int>>, boolean>, um map<frozen<ut>, boolean>)")
    insert = session.prepare(f"INSERT INTO {ks}.jn (k, f, d, i, fm) VALUES (?, ?, ?, ?, ?)")
    session.execute(insert, [0, 123.123, 1e20, "::1", {1.23: 1}])
    session.execute(insert, [1, float("nan"), float("inf"), None, None])
    session.execute(f"INSERT INTO {ks}.jn (k, d) VALUES (2, 1e7)")
    session.execute(f"INSERT INTO {ks}.jn (k, d) VALUES (3, 0.001)")
    session.execute(f"INSERT INTO {ks}.jn (k, d) VALUES (4, 1.0E-4)")
    session.execute(
        f"""INSERT INTO {ks}.jn JSON '{{"k": 5, "sm": {{"[0, 1, 2]": true}}, "um": {{"{{\\"a\\": 0}}": true}}}}'""")
    rows = {r.k: r for r in session.execute(
        f"SELECT k, toJson(f) AS f, toJson(d) AS d, toJson(i) AS i, toJson(fm) AS fm, "
        f"toJson(sm) AS sm, toJson(um) AS um, CAST(d AS text) AS dt FROM {ks}.jn")}
    assert (rows[0].f, rows[0].d, rows[0].i, rows[0].fm) == (
        "123.123", "1.0E20", '"0:0:0:0:0:0:0:1"', '{"1.23": 1}')
    assert (rows[1].f, rows[1].d) == ("null", "null")
    assert [rows[k].d for k in (2, 3, 4)] == ["1.0E7", "0.001", "1.0E-4"]
    assert [rows[k].dt for k in (0, 2, 3, 4)] == ["1.0E20", "1.0E7", "0.001", "1.0E-4"]
    assert rows[5].sm == '{"[0, 1, 2]": true}'
    assert rows[5].um == '{"{\\"a\\": 0, \\"b\\": null}": true}'
    json_row = session.execute(f"SELECT JSON k, f FROM {ks}.jn WHERE k = 0").one()[0]
    assert json_row == '{"k": 0, "f": 123.123}'


def test_json_udt_field_names_follow_cassandras_case_rules(session, ks):
    session.execute(f'CREATE TYPE {ks}.cs (a int, "Foo" int)')
    session.execute(f"CREATE TABLE {ks}.jc (k int PRIMARY KEY, v frozen<cs>)")
    insert = session.prepare(f"INSERT INTO {ks}.jc JSON ?")
    session.execute(insert, ['{"k": 0, "v": {"a": 0, "\\"Foo\\"": 0}}'])
    session.execute(insert, ['{"k": 1, "v": {"A": 1, "\\"Foo\\"": 2}}'])
    refused(session, insert,
            "Error decoding JSON value for v: Unknown field 'foo' in value of user defined type cs",
            ['{"k": 2, "v": {"a": 0, "Foo": 1}}'])
    rows = session.execute(f"SELECT k, toJson(v) AS v FROM {ks}.jc")
    assert sorted((r.k, r.v) for r in rows) == [
        (0, '{"a": 0, "\\"Foo\\"": 0}'), (1, '{"a": 1, "\\"Foo\\"": 2}')]


def test_blob_conversion_functions_as_values(session, ks):
    session.execute(f"CREATE TABLE {ks}.b (k int PRIMARY KEY, bl blob, t text, i int)")
    session.execute(f"INSERT INTO {ks}.b (k, bl) VALUES (1, textAsBlob('abc'))")
    session.execute(f"UPDATE {ks}.b SET bl = bigintAsBlob(3) WHERE k = 3")
    session.execute(f"INSERT INTO {ks}.b (k, t, i) VALUES (4, blobAsText(0x616263), blobAsInt(intAsBlob(7)))")
    rows = session.execute(f"SELECT k, bl, t, i FROM {ks}.b")
    assert sorted(tuple(r) for r in rows) == [
        (1, b"abc", None, None), (3, b"\0\0\0\0\0\0\0\3", None, None), (4, None, "abc", 7)]
    assert [r.k for r in session.execute(
        f"SELECT k FROM {ks}.b WHERE k = blobAsInt(0x00000004)")] == [4]
    insert = session.prepare(f"INSERT INTO {ks}.b (k, bl) VALUES (?, textAsBlob(?))")
    assert [c.name for c in insert.column_metadata] == ["k", "arg0(system.textasblob)"]
    assert insert.column_metadata[1].type.typename == "varchar"
    session.execute(insert, [10, "x"])
    session.execute(insert, [11, None])
    by_blob = session.prepare(f"INSERT INTO {ks}.b (k, i) VALUES (?, blobAsInt(?))")
    assert by_blob.column_metadata[1].name == "arg0(system.blobasint)"
    session.execute(by_blob, [12, b"\0\0\0\x05"])
    rows = {r.k: r for r in session.execute(f"SELECT k, bl, i FROM {ks}.b WHERE k IN (10, 11, 12)")}
    assert (rows[10].bl, rows[11].bl, rows[12].i) == (b"x", None, 5)
    where = session.prepare(f"SELECT k FROM {ks}.b WHERE k = blobAsInt(?)")
    assert [r.k for r in session.execute(where, [b"\0\0\0\x0c"])] == [12]
    refused(session, by_blob, "In call to function system.blobasint, value 0x0005 is not a valid "
            "binary representation for type int", [13, b"\0\x05"])
    refused(session, f"INSERT INTO {ks}.b (k, t) VALUES (5, textAsBlob('a'))",
            "Type error: cannot assign result of function system.textasblob (type blob) to t "
            "(type text)")


def test_function_result_of_another_type(session, ks):
    session.execute(f"CREATE TABLE {ks}.nt (k int PRIMARY KEY, t timestamp)")
    refused(session, f"INSERT INTO {ks}.nt (k, t) VALUES (0, now())",
            "Type error: cannot assign result of function system.now (type timeuuid) to t "
            "(type timestamp)")


def test_function_result_of_a_value_compatible_type(session, ks):
    """A function's result goes to a receiver whose type reads its values as its own
    (Cassandra's isValueCompatibleWith): text takes ascii, blob anything, bigint and timestamp
    each other, varint int and bigint, date int, time bigint."""
    import datetime
    from cassandra.util import Date, Time
    session.execute(f"CREATE TABLE {ks}.vc (k int PRIMARY KEY, t text, b blob, bi bigint, "
                    "ts timestamp, vi varint, d date, ti time, a ascii)")
    session.execute(f"INSERT INTO {ks}.vc (k, t, b, bi, ts, vi, d, ti) VALUES (1, "
                    "blobAsAscii(0x68656c6c6f), blobAsInt(0x00000007), "
                    "blobAsTimestamp(0x00000000000003e8), blobAsBigint(0x00000000000007d0), "
                    "blobAsInt(0xffffffff), blobAsInt(0x80000001), "
                    "blobAsBigint(0x000000000000000a))")
    row = session.execute(f"SELECT * FROM {ks}.vc WHERE k = 1").one()
    assert (row.t, row.b, row.bi, row.vi) == ("hello", b"\0\0\0\x07", 1000, -1)
    assert row.ts == datetime.datetime(1970, 1, 1, 0, 0, 2)
    assert (row.d, row.ti) == (Date(1), Time(10))
    assert [r.k for r in session.execute(
        f"SELECT k FROM {ks}.vc WHERE k = 1 AND t = blobAsAscii(0x68656c6c6f) ALLOW FILTERING")
    ] == [1]
    # Not the other way: ascii does not read text, nor int bigint.
    refused(session, f"INSERT INTO {ks}.vc (k, a) VALUES (2, blobAsText(0x68))",
            "Type error: cannot assign result of function system.blobastext (type text) to a "
            "(type ascii)")
    refused(session, f"INSERT INTO {ks}.vc (k, t) VALUES (2, intAsBlob(1))",
            "Type error: cannot assign result of function system.intasblob (type blob) to t "
            "(type text)")



def test_type_hint_of_a_value_compatible_type(session, ks):
    """A type hint names the receiver's type or one whose values it reads (TypeCast
    .testAssignment with isValueCompatibleWith); the term must be a value of the hinted type."""
    session.execute(f"CREATE TABLE {ks}.th (k int PRIMARY KEY, t text, a ascii, vi varint, "
                    "ts timestamp, d double)")
    session.execute(f"UPDATE {ks}.th SET t = (ascii)'foo' WHERE k = 0")
    session.execute(f"UPDATE {ks}.th SET t = (text)(ascii)'bar', vi = (int)7, ts = (bigint)5 "
                    "WHERE k = 1")
    session.execute(f"INSERT INTO {ks}.th (k, t) VALUES (2, (ascii)'x')")
    rows = {r.k: r for r in session.execute(f"SELECT * FROM {ks}.th")}
    assert (rows[0].t, rows[1].t, rows[1].vi, rows[2].t) == ("foo", "bar", 7, "x")
    assert rows[1].ts.timestamp() == 0.005
    refused(session, f"UPDATE {ks}.th SET a = (text)'foo' WHERE k = 0",
            "Cannot assign value (text)'foo' to a of type ascii")
    refused(session, f"UPDATE {ks}.th SET d = (int)3 WHERE k = 0",
            "Cannot assign value (int)3 to d of type double")
    refused(session, f"UPDATE {ks}.th SET vi = (int)'3' WHERE k = 0",
            "Cannot cast value '3' to type int")


def test_tuple_from_a_string(session, ks):
    """A constant for a tuple is read by TupleType.fromString: fields split on `:` (`\\:` is a
    colon), `@` for null (Cassandra's TupleTypeTest.testTupleFromString)."""
    session.execute(f"CREATE TABLE {ks}.ts (k int, c int, t frozen<tuple<int, text>>, "
                    "PRIMARY KEY (k, c))")
    session.execute(f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 0, '0:0')")
    session.execute(f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 1, '0:1')")
    session.execute(f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 2, '0')")
    session.execute(f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 3, '1:1\\:1')")
    session.execute(f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 4, '@:1')")
    assert [tuple(r) for r in session.execute(f"SELECT * FROM {ks}.ts")] == [
        (0, 0, (0, "0")), (0, 1, (0, "1")), (0, 2, (0, None)), (0, 3, (1, "1:1")),
        (0, 4, (None, "1"))]
    refused(session, f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 5, '1:2:3')",
            "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 "
            "but got 3")
    refused(session, f"INSERT INTO {ks}.ts (k, c, t) VALUES (0, 5, 'a:b')",
            "Unable to make int from 'a'")

def test_tuple_literal_for_a_frozen_udt(session, ks):
    session.execute(f"CREATE TYPE {ks}.xy (x int, y int)")
    session.execute(f"CREATE TABLE {ks}.tu (k int PRIMARY KEY, v frozen<xy>)")
    session.execute(f"INSERT INTO {ks}.tu (k, v) VALUES (1, (1, 2))")
    session.execute(f"INSERT INTO {ks}.tu (k, v) VALUES (2, (3))")
    by_marker = session.prepare(f"INSERT INTO {ks}.tu (k, v) VALUES (3, (?, ?))")
    assert [c.name for c in by_marker.column_metadata] == ["v[0]", "v[1]"]
    session.execute(by_marker, [5, 6])
    rows = {r.k: r.v for r in session.execute(f"SELECT k, v FROM {ks}.tu")}
    assert {k: (v.x, v.y) for k, v in rows.items()} == {1: (1, 2), 2: (3, None), 3: (5, 6)}
    refused(session, f"INSERT INTO {ks}.tu (k, v) VALUES (4, (1, 2, 3))",
            "Invalid tuple literal for v: too many elements. Type frozen<xy> expects 2 but got 3")
    refused(session, f"INSERT INTO {ks}.tu (k, v) VALUES (4, (1, 'a'))",
            "Invalid tuple literal for v: component 1 is not of type int")


def test_unset_fields_of_udt_and_tuple_literals(session, ks):
    from cassandra.query import UNSET_VALUE
    udt = session.prepare(f"INSERT INTO {ks}.u (k, fu) VALUES (10, {{a: ?, b: ?}})")
    refused(session, udt, "Invalid unset value for field 'b' of user defined type ut",
            [1, UNSET_VALUE])
    tup = session.prepare(f"INSERT INTO {ks}.u (k, t) VALUES (10, (?, ?))")
    refused(session, tup, "Invalid unset value for tuple field number 1", [1, UNSET_VALUE])


@pytest.fixture(scope="module")
def jt(session, ks):
    session.execute(
        f"CREATE TABLE {ks}.jt (k int PRIMARY KEY, asciival ascii, bigintval bigint, "
        "blobval blob, booleanval boolean, intval int, inetval inet, listval list<int>, "
        "setval set<int>, mapval map<text, int>, smallval smallint, tsval timestamp)")
    return f"{ks}.jt"


@pytest.mark.parametrize("doc,message", [
    ('{"k": 0, "asciival": 123}',
     "Error decoding JSON value for asciival: Expected an ascii string, but got a Integer: 123"),
    ('{"k": 0, "bigintval": 123.2}',
     "Error decoding JSON value for bigintval: Expected a bigint value, but got a Double: 123.2"),
    ('{"k": 0, "bigintval": "abc"}',
     "Error decoding JSON value for bigintval: Unable to make long from 'abc'"),
    ('{"k": 0, "intval": 2147483648}',
     "Error decoding JSON value for intval: Expected an int value, but got a Long: 2147483648"),
    ('{"k": 0, "blobval": "00000001"}',
     "Error decoding JSON value for blobval: Value '00000001' is not a valid blob representation: "
     "String representation of blob is missing 0x prefix: 00000001"),
    ('{"k": 0, "blobval": "0xabc"}',
     "Error decoding JSON value for blobval: Value '0xabc' is not a valid blob representation: "
     "cannot parse 'abc' as hex bytes"),
    ('{"k": 0, "booleanval": "abc"}',
     "Error decoding JSON value for booleanval: Unable to make boolean from 'abc'"),
    ('{"k": 0, "booleanval": 1}',
     "Error decoding JSON value for booleanval: Expected a boolean value, but got a Integer: 1"),
    ('{"k": 0, "inetval": 123}',
     "Error decoding JSON value for inetval: Expected a string representation of an inet value, "
     "but got a Integer: 123"),
    ('{"k": 0, "listval": [1, null]}',
     "Error decoding JSON value for listval: Invalid null element in list"),
    ('{"k": 0, "setval": {"a": 1}}',
     "Error decoding JSON value for setval: Expected a list (representing a set), but got a "
     "LinkedHashMap: {a=1}"),
    ('{"k": 0, "mapval": {"a": null}}',
     "Error decoding JSON value for mapval: Invalid null value in map"),
    ('{"k": 0, "smallval": 1.5}', "Error decoding JSON value for smallval: Unable to make short"),
    ('{"k": 0, "tsval": true}',
     "Error decoding JSON value for tsval: Expected a long or a datestring representation of a "
     "timestamp value, but got a Boolean: true"),
])
def test_json_values_refused_in_cassandras_words(session, jt, doc, message):
    refused(session, session.prepare(f"INSERT INTO {jt} JSON ?"), message, [doc])


def test_json_values_given_as_strings(session, jt):
    session.execute(session.prepare(f"INSERT INTO {jt} JSON ?"), [
        '{"k": 1, "intval": "7", "listval": "[1, 2]", "mapval": {"a": 1}, "smallval": 3, '
        '"tsval": 1000}'])
    row = session.execute(f"SELECT intval, listval, mapval, smallval FROM {jt} WHERE k = 1").one()
    assert tuple(row) == (7, [1, 2], {"a": 1}, 3)


def test_json_function_misuse_and_failures(session, jt):
    from cassandra.protocol import FunctionFailure
    refused(session, f"SELECT fromJson(asciival) FROM {jt}",
            "fromJson() cannot be used in the selection clause of a SELECT statement")
    refused(session, f"INSERT INTO {jt} (k, asciival) VALUES (0, toJson(1))",
            "toJson() may only be used within the selection clause of SELECT statements")
    insert = session.prepare(f"INSERT INTO {jt} (k, intval) VALUES (?, fromJson(?))")
    with pytest.raises(FunctionFailure) as error:
        session.execute(insert, [0, '"xyzz"'])
    assert ("execution of 'system.fromjson[text]' failed: org.apache.cassandra.serializers."
            "MarshalException: Unable to make int from 'xyzz'") in str(error.value)
    with pytest.raises(FunctionFailure) as error:
        session.execute(insert, [0, "not json"])
    assert "execution of 'system.fromjson[text]' failed: Could not decode JSON string 'not json'" \
        in str(error.value)


def test_from_json_of_a_null_literal_is_null(session, jt):
    """fromJson(null) written out is null, as a bound null is (cqlpy's test for #7912)."""
    session.execute(f"INSERT INTO {jt} (k, intval) VALUES (40, 5)")
    session.execute(f"INSERT INTO {jt} (k, intval) VALUES (40, fromJson(null))")
    assert session.execute(f"SELECT intval FROM {jt} WHERE k = 40").one().intval is None


def test_counter_blob_conversions(session, ks):
    """BytesConversionFcts defines counterAsBlob and blobAsCounter as for every native type."""
    session.execute(f"CREATE TABLE {ks}.cb (k int PRIMARY KEY, c counter)")
    session.execute(f"UPDATE {ks}.cb SET c = c + 1000 WHERE k = 1")
    row = session.execute(
        f"SELECT counterAsBlob(c), blobAsCounter(counterAsBlob(c)) FROM {ks}.cb WHERE k = 1").one()
    assert tuple(row) == (b"\x00\x00\x00\x00\x00\x00\x03\xe8", 1000)


def test_function_argument_markers_named_as_cassandra_names_them(session, ks):
    session.execute(f"CREATE TABLE {ks}.fa (k int PRIMARY KEY, l list<int>, u timeuuid)")
    from_json = session.prepare(f"INSERT INTO {ks}.fa (k, l) VALUES (?, fromJson(?))")
    assert [c.name for c in from_json.column_metadata] == ["k", "arg0(system.fromjson)"]
    session.execute(from_json, [1, "[1, 2]"])
    min_uuid = session.prepare(f"INSERT INTO {ks}.fa (k, u) VALUES (?, minTimeuuid(?))")
    assert [c.name for c in min_uuid.column_metadata] == ["k", "arg0(system.mintimeuuid)"]
    assert session.execute(f"SELECT l FROM {ks}.fa WHERE k = 1").one().l == [1, 2]


def test_bound_ipv4_mapped_inet_written_as_java_writes_it(session, ks):
    session.execute(f"CREATE TABLE {ks}.ipb (k int PRIMARY KEY, i inet)")
    insert = session.prepare(f"INSERT INTO {ks}.ipb (k, i) VALUES (?, ?)")
    session.execute(insert, [0, "::ffff:1.2.3.4"])
    session.execute(insert, [1, "fe80::1"])
    rows = {r.k: r for r in session.execute(
        f"SELECT k, toJson(i) AS j, CAST(i AS text) AS t, inetAsBlob(i) AS b FROM {ks}.ipb")}
    assert (rows[0].j, rows[0].t, len(rows[0].b)) == ('"1.2.3.4"', "1.2.3.4", 16)
    assert (rows[1].j, rows[1].t) == ('"fe80:0:0:0:0:0:0:1"', "fe80:0:0:0:0:0:0:1")


def test_time_function_of_a_blob_conversion(session, ks):
    session.execute(f"CREATE TABLE {ks}.td (k int PRIMARY KEY, d date)")
    session.execute(
        f"INSERT INTO {ks}.td (k, d) VALUES (0, toDate(blobAsTimestamp(0x0000000005265c00)))")
    assert str(session.execute(f"SELECT d FROM {ks}.td WHERE k = 0").one().d) == "1970-01-02"


def test_unset_operands_leave_columns_alone(session, ks):
    """An UNSET operand skips its operation, as Cassandra's Operation classes do: a counter
    keeps its value, a collection its elements; a key or index cannot be unset."""
    from cassandra.query import UNSET_VALUE
    session.execute(f"CREATE TABLE {ks}.unset_counter (p int PRIMARY KEY, c counter)")
    for op in ("+", "-"):
        add = session.prepare(f"UPDATE {ks}.unset_counter SET c = c {op} ? WHERE p = 1")
        session.execute(add, [3])
        session.execute(add, [UNSET_VALUE])
    assert session.execute(f"SELECT c FROM {ks}.unset_counter WHERE p = 1").one().c == 0
    add = session.prepare(f"UPDATE {ks}.unset_counter SET c = c + ? WHERE p = 2")
    session.execute(add, [UNSET_VALUE])
    assert session.execute(f"SELECT c FROM {ks}.unset_counter WHERE p = 2").one() is None
    refused(session, add, "Invalid null value for counter increment", [None])
    refused(session, f"UPDATE {ks}.unset_counter SET c = c + null WHERE p = 1",
            "Invalid null value for counter increment/decrement")
    refused(session, session.prepare(f"UPDATE {ks}.unset_counter SET c = c - ? WHERE p = 1"),
            "The negation of -9223372036854775808 overflows supported counter precision "
            "(signed 8 bytes integer)", [-(2**63)])

    session.execute(f"CREATE TABLE {ks}.unset_coll (k int PRIMARY KEY, l list<text>, "
                    "s set<text>, m map<text, text>)")
    session.execute(f"INSERT INTO {ks}.unset_coll (k, l, s, m) "
                    "VALUES (1, ['a', 'b'], {'x'}, {'k': 'v'})")

    def unchanged():
        row = session.execute(f"SELECT l, s, m FROM {ks}.unset_coll WHERE k = 1").one()
        assert (row.l, row.s, row.m) == (["a", "b"], {"x"}, {"k": "v"})

    for statement in ["UPDATE {t} SET l = l + ? WHERE k = 1",
                      "UPDATE {t} SET l = ? + l WHERE k = 1",
                      "UPDATE {t} SET l = l - ? WHERE k = 1",
                      "UPDATE {t} SET s = s + ? WHERE k = 1",
                      "UPDATE {t} SET s = s - ? WHERE k = 1",
                      "UPDATE {t} SET m = m + ? WHERE k = 1",
                      "UPDATE {t} SET m = m - ? WHERE k = 1",
                      "UPDATE {t} SET m['k'] = ? WHERE k = 1",
                      "UPDATE {t} SET l[0] = ? WHERE k = 1",
                      "DELETE l[?] FROM {t} WHERE k = 1",
                      "UPDATE {t} SET l = ?, s = ?, m = ? WHERE k = 1"]:
        prepared = session.prepare(statement.format(t=f"{ks}.unset_coll"))
        session.execute(prepared, [UNSET_VALUE] * len(prepared.column_metadata))
        unchanged()
    for statement, value, message in [
        ("UPDATE {t} SET m[?] = 'v' WHERE k = 1", UNSET_VALUE, "Invalid unset map key"),
        ("UPDATE {t} SET m[?] = 'v' WHERE k = 1", None, "Invalid null map key"),
        ("DELETE m[?] FROM {t} WHERE k = 1", UNSET_VALUE, "Invalid unset map key"),
        ("DELETE m[?] FROM {t} WHERE k = 1", None, "Invalid null map key"),
        ("UPDATE {t} SET l[?] = 'v' WHERE k = 1", UNSET_VALUE,
         "Invalid unset value for list index"),
        ("UPDATE {t} SET l[?] = 'v' WHERE k = 1", None, "Invalid null value for list index"),
        ("DELETE l[?] FROM {t} WHERE k = 1", None, "Invalid null value for list index"),
        ("DELETE s[?] FROM {t} WHERE k = 1", None, "Invalid null set element"),
    ]:
        refused(session, session.prepare(statement.format(t=f"{ks}.unset_coll")), message,
                [value])
    unchanged()


def test_unset_key_column_in_insert(session, ks):
    """A key column bound to UNSET is refused as Cassandra's key restrictions refuse it, not
    reported missing."""
    from cassandra.query import UNSET_VALUE
    session.execute(f"CREATE TABLE {ks}.unset_key (p int, c int, v int, PRIMARY KEY (p, c))")
    for suffix in ("", " IF NOT EXISTS"):
        insert = session.prepare(f"INSERT INTO {ks}.unset_key (p, c, v) VALUES (?, ?, 1){suffix}")
        refused(session, insert, "Invalid unset value for column c", [1, UNSET_VALUE])
        # The driver refuses to route an unset partition key: unset the bound value afterwards.
        bound = insert.bind([1, 1])
        bound.values[0] = UNSET_VALUE
        bound._routing_key = b"\x00\x00\x00\x01"
        refused(session, bound, "Invalid unset value for column p")
        refused(session, insert, "Invalid null value in condition for column c", [1, None])
    assert list(session.execute(f"SELECT * FROM {ks}.unset_key")) == []


def test_timestamp_fractions_are_fractions_of_a_second(session, keyspace):
    # CASSANDRA-15976: `.1` is 100 ms and up to nine digits are read, truncated to
    # milliseconds; the same text filters and keys alike.
    import datetime
    session.execute(f"CREATE TABLE {keyspace}.tsf (k int, ts timestamp, PRIMARY KEY (k, ts))")
    for i, text in enumerate(["12.1", "12.10", "12.5", "12.345678", "12.123456789"]):
        session.execute(
            f"INSERT INTO {keyspace}.tsf (k, ts) VALUES ({i}, '2011-02-03T04:05:{text}+0000')")
    got = [r.ts.microsecond // 1000 for r in session.execute(
        f"SELECT k, ts FROM {keyspace}.tsf WHERE k IN (0, 1, 2, 3, 4)")]
    assert got == [100, 100, 500, 345, 123]
    row = session.execute(
        f"SELECT k FROM {keyspace}.tsf WHERE k = 0 AND ts = '2011-02-03 04:05:12.1Z'").one()
    assert row is not None and row.k == 0
    assert datetime.datetime(2011, 2, 3, 4, 5, 12, 100000) == session.execute(
        f"SELECT ts FROM {keyspace}.tsf WHERE k = 0").one().ts


def test_named_markers_keep_their_names_everywhere(session, keyspace):
    # VariableSpecifications.add: a named marker is reported by its name, for IN, LIMIT, PER
    # PARTITION LIMIT, TTL and TIMESTAMP too (drivers bind named values by these names).
    session.execute(f"CREATE TABLE {keyspace}.named (pk int, ck int, v int, "
                    "PRIMARY KEY (pk, ck))")
    for statement, names in [
        (f"SELECT * FROM {keyspace}.named WHERE pk = :p AND ck IN :cks LIMIT :lim",
         ["p", "cks", "lim"]),
        (f"SELECT * FROM {keyspace}.named WHERE pk = :p AND (ck) IN :tuples "
         "PER PARTITION LIMIT :ppl", ["p", "tuples", "ppl"]),
        (f"INSERT INTO {keyspace}.named (pk, ck, v) VALUES (:a, :b, :c) "
         "USING TTL :t AND TIMESTAMP :ts", ["a", "b", "c", "t", "ts"]),
        (f"UPDATE {keyspace}.named SET v = :val WHERE pk = :p AND ck = :c IF v IN :vs",
         ["val", "p", "c", "vs"]),
        # Positional markers keep Cassandra's names.
        (f"SELECT * FROM {keyspace}.named WHERE pk = ? AND ck IN ? LIMIT ?",
         ["pk", "in(ck)", "[limit]"]),
    ]:
        prepared = session.prepare(statement)
        assert [c.name for c in prepared.column_metadata] == names, statement
    prepared = session.prepare(
        f"INSERT INTO {keyspace}.named (pk, ck, v) VALUES (:a, :b, :c) USING TTL :t")
    session.execute(prepared, {"a": 1, "b": 2, "c": 3, "t": 100})
    prepared = session.prepare(
        f"SELECT v FROM {keyspace}.named WHERE pk = :p AND ck IN :cks LIMIT :lim")
    assert [r.v for r in session.execute(prepared, {"p": 1, "cks": [2], "lim": 5})] == [3]
