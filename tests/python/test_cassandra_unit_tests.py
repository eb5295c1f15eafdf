"""Behaviour checked against Cassandra's own unit tests (`cql3/validation`), as a client sees it.

Each test names the Cassandra test it follows: StaticColumnsTest, CQLVectorTest,
WritetimeOrTTLTest, UpdateTest, DeleteTest and InsertTest. Messages are matched whole where
Cassandra's test matches a substring, so that the wording stays Cassandra's.
"""

from __future__ import annotations

import re
import struct

import pytest
from cassandra import InvalidRequest
from cassandra.query import UNSET_VALUE


def whole(message):
    """The driver's text of an Invalid error whose message is exactly `message`."""
    return 'message="' + re.escape(message) + '"'


def refused(session, statement, message, params=None):
    with pytest.raises(InvalidRequest, match=whole(message)):
        if params is None:
            session.execute(statement)
        else:
            session.execute(session.prepare(statement), params)


def test_an_index_query_selecting_only_static_columns_is_refused(session, keyspace):
    # StaticColumnsTest.testStaticColumnsWithSecondaryIndex
    t = f"{keyspace}.static_index"
    session.execute(f"CREATE TABLE {t} (k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    session.execute(f"CREATE INDEX ON {t} (v)")
    session.execute(f"INSERT INTO {t} (k, p, s, v) VALUES (0, 0, 42, 1)")
    session.execute(f"INSERT INTO {t} (k, p, v) VALUES (0, 1, 1)")
    session.execute(f"INSERT INTO {t} (k, p, v) VALUES (1, 0, 1)")
    message = "Queries using 2ndary indexes don't support selecting only static columns"
    refused(session, f"SELECT s FROM {t} WHERE v = 1", message)
    refused(session, f"SELECT k, s FROM {t} WHERE v = 1", message)
    refused(session, f"SELECT s FROM {t} WHERE k = 0 AND v = 1", message)
    # Any column that is neither static nor part of the partition key makes it a row query.
    rows = session.execute(f"SELECT k, p, s FROM {t} WHERE v = 1")
    assert sorted((r.k, r.p, r.s) for r in rows) == [(0, 0, 42), (0, 1, 42), (1, 0, None)]
    assert len(list(session.execute(f"SELECT * FROM {t} WHERE v = 1"))) == 3
    # Without an index in use, filtering answers static columns alone.
    assert [r.s for r in session.execute(
        f"SELECT s FROM {t} WHERE k = 0 AND p = 0")] == [42]


@pytest.mark.parametrize("element", ["int", "float", "text"])
def test_an_empty_vector_value_is_refused(session, keyspace, element):
    # CQLVectorTest.emptyValues
    t = f"{keyspace}.empty_vector_{element}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v vector<{element}, 2>)")
    refused(session, f"INSERT INTO {t} (k, v) VALUES (0, 0x)",
            f'Invalid HEX constant (0x) for "v" of type vector<{element}, 2>')
    insert = session.prepare(f"INSERT INTO {t} (k, v) VALUES (0, ?)")
    with pytest.raises(InvalidRequest, match=whole("Invalid empty vector value")):
        session.execute(_raw(insert, [b""]))
    assert list(session.execute(f"SELECT * FROM {t}")) == []


def _raw(prepared, values):
    """A bound statement carrying `values` as already-serialized bytes."""
    bound = prepared.bind([None] * len(values))
    bound.values = list(values)
    return bound


@pytest.mark.parametrize("ty, given, message", [
    ("int", struct.pack(">i", 1), "Not enough bytes to read a vector<int, 2>"),
    ("int", struct.pack(">iii", 1, 2, 3),
     "Unexpected 4 extraneous bytes after vector<int, 2> value"),
    ("int", struct.pack(">qq", 1, 2), "Unexpected 8 extraneous bytes after vector<int, 2> value"),
    ("text", b"\x01a", "Not enough bytes to read a vector<text, 2>"),
    ("text", b"\x01a\x01b\x01c", "Unexpected 2 extraneous bytes after vector<text, 2> value"),
])
def test_a_malformed_vector_names_its_type_and_extra_bytes(session, keyspace, ty, given, message):
    # CQLVectorTest.invalidNumberOfDimensions*
    t = f"{keyspace}.bad_vector_{ty}"
    session.execute(f"CREATE TABLE IF NOT EXISTS {t} (pk int PRIMARY KEY, value vector<{ty}, 2>)")
    insert = session.prepare(f"INSERT INTO {t} (pk, value) VALUES (0, ?)")
    with pytest.raises(InvalidRequest, match=whole(message)):
        session.execute(_raw(insert, [given]))


def test_a_cast_element_is_quoted_without_a_space(session, keyspace):
    # CQLVectorTest.invalidElementTypeFixedWidth
    t = f"{keyspace}.cast_vector"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, value vector<int, 2>)")
    refused(session, f"INSERT INTO {t} (pk, value) VALUES (0, [(bigint) 1, (bigint) 2])",
            "Invalid vector literal for value: value (bigint)1 is not of type int")


def test_maxwritetime_is_named_as_cassandra_names_it(session, keyspace):
    # WritetimeOrTTLTest (Cassandra 5.0)
    t = f"{keyspace}.maxwritetime"
    session.execute(f"CREATE TABLE {t} (pk int, ck int, v int, s set<int>, f frozen<list<int>>, "
                    "PRIMARY KEY (pk, ck))")
    session.execute(f"INSERT INTO {t} (pk, ck, v, s, f) VALUES (1, 1, 1, {{1}}, [1]) "
                    "USING TIMESTAMP 10")
    session.execute(f"UPDATE {t} USING TIMESTAMP 30 SET s = s + {{2}} WHERE pk = 1 AND ck = 1")
    session.execute(f"UPDATE {t} USING TIMESTAMP 20 SET s = s + {{3}} WHERE pk = 1 AND ck = 1")
    result = session.execute(f"SELECT writetime(v), maxwritetime(v), maxwritetime(s), "
                             f"maxwritetime(f) FROM {t}")
    assert list(result.column_names) == [
        "writetime(v)", "maxwritetime(v)", "maxwritetime(s)", "maxwritetime(f)"]
    assert tuple(result.one()) == (10, 10, 30, 10)
    refused(session, f"SELECT maxwritetime(pk) FROM {t}",
            "Cannot use selection function maxwritetime on PRIMARY KEY part pk")
    refused(session, f"SELECT maxwritetime(ck) FROM {t}",
            "Cannot use selection function maxwritetime on PRIMARY KEY part ck")


def test_writetime_and_ttl_of_non_frozen_values_list_their_elements(session, keyspace):
    # WritetimeOrTTLTest.testList, testSet, testMap, testUDT (Cassandra 5.0)
    session.execute(f"CREATE TYPE {keyspace}.pair (f1 int, f2 int)")
    t = f"{keyspace}.element_times"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, l list<int>, s set<int>, "
                    f"m map<int, text>, u pair)")
    session.execute(f"INSERT INTO {t} (k, l, s, m, u) VALUES (1, [5], {{1}}, {{1: 'a'}}, "
                    "{f1: 1}) USING TIMESTAMP 1")
    session.execute(f"UPDATE {t} USING TIMESTAMP 2 AND TTL 20000 SET l = l + [6], "
                    "s = s + {-1}, m = m + {-1: 'b'}, u.f2 = 2 WHERE k = 1")
    result = session.execute(f"SELECT writetime(l), writetime(s), writetime(m), writetime(u) "
                             f"FROM {t}")
    assert list(result.column_names) == [
        "writetime(l)", "writetime(s)", "writetime(m)", "writetime(u)"]
    row = result.one()
    assert row[0] == [1, 2]  # the list's order
    assert row[1] == [2, 1]  # the set's order: -1 before 1
    assert row[2] == [2, 1]
    assert row[3] == [1, 2]  # one per field
    # A TTL for each element. (An element without one is a null in the list, as Cassandra
    # sends it; the Python driver cannot decode a null list element, so none is asked here.)
    session.execute(f"INSERT INTO {t} (k, l, s, u) VALUES (3, [7, 8], {{4}}, {{f1: 1, f2: 2}}) "
                    "USING TTL 10000")
    session.execute(f"UPDATE {t} USING TTL 20000 SET s = s + {{5}} WHERE k = 3")
    row = session.execute(f"SELECT ttl(l), ttl(s), ttl(u) FROM {t} WHERE k = 3").one()
    assert [9000 < x <= 10000 for x in row[0]] == [True, True]
    assert 9000 < row[1][0] <= 10000 and 19000 < row[1][1] <= 20000
    assert [9000 < x <= 10000 for x in row[2]] == [True, True]
    # Nothing live: null, not an empty list.
    session.execute(f"INSERT INTO {t} (k, l) VALUES (2, [])")
    row = session.execute(f"SELECT writetime(l), writetime(s), ttl(u) FROM {t} "
                          "WHERE k = 2").one()
    assert tuple(row) == (None, None, None)


@pytest.fixture(scope="module")
def indexed(session, keyspace):
    t = f"{keyspace}.modify_order"
    session.execute(f"CREATE TABLE {t} (partitionKey int, clustering_1 int, value int, "
                    "values set<int>, PRIMARY KEY (partitionKey, clustering_1))")
    session.execute(f"CREATE INDEX ON {t} (value)")
    session.execute(f"CREATE INDEX ON {t} (clustering_1)")
    session.execute(f"CREATE INDEX ON {t} (values)")
    return t


@pytest.mark.parametrize("statement, params, message", [
    # UpdateTest.testUpdateWithSecondaryIndices, DeleteTest.testDeleteWithSecondaryIndices:
    # the partition key is checked first, then an UPDATE's clustering columns, then the rest.
    ("UPDATE {t} SET values = {{6}} WHERE partitionKey = ? AND value = ?", (3, 3),
     "Some clustering keys are missing: clustering_1"),
    ("UPDATE {t} SET value = ? WHERE partitionKey = ? AND values CONTAINS ?", (6, 3, 3),
     "Some clustering keys are missing: clustering_1"),
    ("UPDATE {t} SET values = {{6}} WHERE value = ?", (3,),
     "Some partition key parts are missing: partitionkey"),
    ("UPDATE {t} SET value = ? WHERE values CONTAINS ?", (6, 3),
     "Some partition key parts are missing: partitionkey"),
    ("DELETE FROM {t} WHERE value = ?", (3,),
     "Some partition key parts are missing: partitionkey"),
    ("DELETE FROM {t} WHERE values CONTAINS ?", (3,),
     "Some partition key parts are missing: partitionkey"),
    ("UPDATE {t} SET values = {{6}} WHERE partitionKey = ? AND clustering_1 = ? AND value = ?",
     (3, 3, 3), "Non PRIMARY KEY columns found in where clause: value "),
    ("DELETE FROM {t} WHERE partitionKey = ? AND clustering_1 = ? AND value = ?",
     (3, 3, 3), "Non PRIMARY KEY columns found in where clause: value "),
])
def test_modification_keys_are_checked_in_cassandras_order(session, indexed, statement, params,
                                                          message):
    with pytest.raises(InvalidRequest, match=whole(message)):
        session.execute(session.prepare(statement.format(t=indexed)), params)


def test_missing_partition_key_parts_name_only_the_missing(session, keyspace):
    # UpdateTest.testUpdateWithMultiplePartitionKeyComponents
    t = f"{keyspace}.two_part_key"
    session.execute(f"CREATE TABLE {t} (pk1 int, pk2 int, c1 int, c2 int, v int, "
                    "PRIMARY KEY ((pk1, pk2), c1, c2))")
    refused(session, f"UPDATE {t} SET v = 1 WHERE pk1 = 1 AND c1 = 1 AND c2 = 1",
            "Some partition key parts are missing: pk2")
    refused(session, f"DELETE FROM {t} WHERE pk2 = 1 AND c1 = 1 AND c2 = 1",
            "Some partition key parts are missing: pk1")
    refused(session, f"UPDATE {t} SET v = 1 WHERE c1 = 1 AND c2 = 1",
            "Some partition key parts are missing: pk1, pk2")
    # UpdateTest.testUpdateWithTwoClusteringColumns: an UPDATE with a gap misses a column,
    # where a DELETE names the gap.
    refused(session, f"UPDATE {t} SET v = 1 WHERE pk1 = 1 AND pk2 = 1 AND c2 = 1",
            "Some clustering keys are missing: c1")
    refused(session, f"DELETE FROM {t} WHERE pk1 = 1 AND pk2 = 1 AND c2 = 1",
            'PRIMARY KEY column "c2" cannot be restricted as preceding column "c1" is not '
            "restricted")
    refused(session, f"UPDATE {t} SET v = 1 WHERE pk1 = 1 AND pk2 = 1 AND c1 > 1",
            "Slice restrictions are not supported on the clustering columns in UPDATE statements")
    session.execute(f"UPDATE {t} SET v = 7 WHERE pk1 = 1 AND pk2 = 1 AND c1 = 1 AND c2 = 1")
    assert session.execute(f"SELECT v FROM {t} WHERE pk1 = 1 AND pk2 = 1").one().v == 7


def test_an_unset_function_argument_is_named_as_cassandra_names_it(session, keyspace):
    # InsertTest.testInsertWithUnset
    t = f"{keyspace}.unset_function"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, s text, i int)")
    select = session.prepare(f"SELECT * FROM {t} WHERE k = blobAsInt(?)")
    with pytest.raises(InvalidRequest,
                       match=whole("Invalid unset value for argument in call to function blobasint")):
        session.execute(select, [UNSET_VALUE])


def test_token_of_values_in_the_selection(session, keyspace):
    # CQLVectorTest.token: token() of a literal equals the row's own token.
    t = f"{keyspace}.vector_key"
    session.execute(f"CREATE TABLE {t} (pk vector<int, 2> PRIMARY KEY)")
    session.execute(f"INSERT INTO {t} (pk) VALUES ([1, 2])")
    row = session.execute(f"SELECT token(pk) AS a, token([1, 2]) AS b FROM {t}").one()
    assert row.a == row.b
    composite = f"{keyspace}.composite_token"
    session.execute(f"CREATE TABLE {composite} (a int, b text, c int, PRIMARY KEY ((a, b), c))")
    session.execute(f"INSERT INTO {composite} (a, b, c) VALUES (1, 'x', 1)")
    own = session.execute(f"SELECT token(a, b) FROM {composite}").one()[0]
    assert session.execute(f"SELECT token(1, 'x') FROM {composite}").one()[0] == own
    prepared = session.prepare(f"SELECT token(?, ?) FROM {composite}")
    assert session.execute(prepared, [1, "x"]).one()[0] == own
    assert session.execute(f"SELECT token(a, 'y') FROM {composite}").one()[0] != own
    refused(session, f"SELECT token(1) FROM {composite}",
            "Invalid number of arguments in call to function system.token: 2 required but 1 "
            "provided")


@pytest.mark.parametrize("old, new, accepted", [
    ("int", "varint", False),   # AlterTest.testDropFixedAddVariable: fixed to variable length
    ("int", "blob", False),
    ("bigint", "timestamp", True),  # both read each other's 8 bytes
    ("timestamp", "bigint", True),
    ("text", "blob", True),
    ("ascii", "text", True),
    ("timeuuid", "uuid", True),
    ("uuid", "timeuuid", False),
])
def test_a_dropped_column_is_re_added_only_as_a_serialization_compatible_type(
        session, keyspace, old, new, accepted):
    t = f"{keyspace}.readd_{old}_{new}"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v {old})")
    session.execute(f"ALTER TABLE {t} DROP v")
    statement = f"ALTER TABLE {t} ADD v {new}"
    if accepted:
        session.execute(statement)
    else:
        refused(session, statement,
                f"Cannot re-add previously dropped column 'v' of type {new}, incompatible with "
                f"previous type {old}")


def test_a_compression_setting_under_both_its_names_is_refused(session, keyspace):
    # AlterTest.testAlterTableWithCompression
    from cassandra.protocol import ConfigurationException
    t = f"{keyspace}.compression_names"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    for options, message in [
        ("{'sstable_compression': 'SnappyCompressor', 'class': 'SnappyCompressor'}",
         "The 'sstable_compression' option must not be used if the compression algorithm is "
         "already specified by the 'class' option"),
        ("{'class': 'SnappyCompressor', 'chunk_length_kb': 32, 'chunk_length_in_kb': 32}",
         "The 'chunk_length_kb' option must not be used if the chunk length is already "
         "specified by the 'chunk_length_in_kb' option"),
    ]:
        with pytest.raises(ConfigurationException, match=whole(message)):
            session.execute(f"ALTER TABLE {t} WITH compression = {options}")
    session.execute(f"ALTER TABLE {t} WITH compression = {{'sstable_compression': "
                    "'SnappyCompressor', 'chunk_length_kb': 32}")


def test_adding_to_a_tuple_is_refused_as_a_tuple_operation(session, keyspace):
    # TupleTypeTest.testTupleModification
    t = f"{keyspace}.tuple_add"
    session.execute(f"CREATE TABLE {t} (pk int PRIMARY KEY, value tuple<int, int>)")
    refused(session, f"UPDATE {t} SET value += (1, 1) WHERE pk = 0",
            "Invalid operation (value = value + (1, 1)) for tuple column value")
    refused(session, f"UPDATE {t} SET value = value + (1, 1) WHERE pk = 0",
            "Invalid operation (value = value + (1, 1)) for tuple column value")


def test_json_of_a_user_type_value_names_fields_added_after_it(session, keyspace):
    # UserType.toJSONString: every field of the type, null where the value has none.
    session.execute(f"CREATE TYPE {keyspace}.grows (a int, b int)")
    t = f"{keyspace}.grown"
    session.execute(f"CREATE TABLE {t} (x int PRIMARY KEY, y frozen<grows>)")
    session.execute(f"INSERT INTO {t} (x, y) VALUES (1, {{a: 1}})")
    session.execute(f"ALTER TYPE {keyspace}.grows ADD c int")
    text = session.execute(f"SELECT JSON y FROM {t} WHERE x = 1").one()[0]
    assert text == '{"y": {"a": 1, "b": null, "c": null}}'


def test_writetime_and_ttl_of_an_element_or_a_field(session, keyspace):
    # WritetimeOrTTLTest.testSet, testMap, testFrozenSet, testUDT, testFrozenUDT (5.0)
    session.execute(f"CREATE TYPE {keyspace}.fields (f1 int, f2 int)")
    t = f"{keyspace}.element_meta"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, s set<int>, m map<int, text>, "
                    f"fs frozen<set<int>>, u fields, fu frozen<fields>, l list<int>)")
    session.execute(f"INSERT INTO {t} (k, s, m, fs, u, fu, l) VALUES (1, {{1}}, {{1: 'a'}}, "
                    "{1}, {f1: 1}, {f1: 1}, [1]) USING TIMESTAMP 1")
    session.execute(f"UPDATE {t} USING TIMESTAMP 2 AND TTL 20000 SET s = s + {{2}}, "
                    "m = m + {2: 'b'}, u.f2 = 2 WHERE k = 1")
    result = session.execute(
        f"SELECT writetime(s[1]), writetime(s[2]), writetime(s[3]), maxwritetime(m[2]), "
        f"writetime(fs[1]), writetime(fs[2]), writetime(u.f1), writetime(u.f2), "
        f"writetime(fu.f1), writetime(fu.f2), ttl(s[2]), ttl(s[1]) FROM {t}")
    assert list(result.column_names)[:3] == ["writetime(s[1])", "writetime(s[2])",
                                             "writetime(s[3])"]
    row = result.one()
    assert tuple(row)[:10] == (1, 2, None, 2, 1, None, 1, 2, 1, None)
    assert 19000 < row[10] <= 20000 and row[11] is None
    prepared = session.prepare(f"SELECT writetime(s[?]), ttl(m[?]) FROM {t} WHERE k = ?")
    assert tuple(session.execute(prepared, [2, 2, 1]).one())[0] == 2
    refused(session, f"SELECT writetime(l[0]) FROM {t}",
            "Element selection is only allowed on sets and maps, but l is a list")
    refused(session, f"SELECT writetime(l[0..1]) FROM {t}",
            "Slice selection is only allowed on sets and maps, but l is a list")


def test_an_unset_token_argument_is_named_as_cassandra_names_it(session, keyspace):
    # SelectTest.testFunctionCallWithUnset
    t = f"{keyspace}.unset_token"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, v int)")
    select = session.prepare(f"SELECT * FROM {t} WHERE token(k) >= token(?)")
    with pytest.raises(InvalidRequest,
                       match=whole("Invalid unset value for argument in call to function token")):
        session.execute(select, [UNSET_VALUE])
    assert list(session.execute(select, [1])) == []


def test_to_json_outside_a_selection_and_json_null(session, keyspace):
    # JsonTest.testToJsonFct, testInsertJsonSyntax
    t = f"{keyspace}.json_misuse"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, asciival ascii)")
    message = "toJson() may only be used within the selection clause of SELECT statements"
    for statement in [f"INSERT INTO {t} (k, asciival) VALUES (?, toJson(?))",
                      f"UPDATE {t} SET asciival = toJson(?) WHERE k = ?",
                      f"DELETE FROM {t} WHERE k = fromJson(toJson(?))"]:
        with pytest.raises(InvalidRequest, match=whole(message)):
            session.prepare(statement)
    refused(session, f"INSERT INTO {t} JSON 'null'", "Got null for INSERT JSON values")
    refused(session, f"INSERT INTO {t} JSON ?", "Got null for INSERT JSON values", ["null"])


def test_an_in_on_an_indexed_key_column_is_not_an_index_query(session, keyspace):
    # SelectSingleColumnRelationTest.testIndexOnClusteringColumns: an index serves `=`, so an
    # IN on an indexed partition key part filters, and one on a clustering column after a
    # gap is refused as any such restriction is.
    t = f"{keyspace}.in_indexed_key"
    session.execute(f"CREATE TABLE {t} (id1 int, id2 int, author text, time bigint, v1 text, "
                    "PRIMARY KEY ((id1, id2), author, time))")
    session.execute(f"CREATE INDEX ON {t} (id2)")
    session.execute(f"CREATE INDEX ON {t} (time)")
    for id2, v1 in [(0, "A"), (1, "B"), (2, "D")]:
        session.execute(f"INSERT INTO {t} (id1, id2, author, time, v1) VALUES (0, {id2}, "
                        f"'bob', 0, '{v1}')")
    rows = session.execute(f"SELECT v1 FROM {t} WHERE id2 IN (0, 2) ALLOW FILTERING")
    assert sorted(r.v1 for r in rows) == ["A", "D"]
    assert [r.v1 for r in session.execute(f"SELECT v1 FROM {t} WHERE id2 = 1")] == ["B"]
    refused(session, f"SELECT v1 FROM {t} WHERE time IN (1, 2)",
            'PRIMARY KEY column "time" cannot be restricted as preceding column "author" is '
            "not restricted")


def test_a_multi_column_in_filter_is_refused(session, keyspace):
    # SelectMultiColumnRelationTest.testInRestrictionsWithAllowFiltering
    t = f"{keyspace}.multi_in_filter"
    session.execute(f"CREATE TABLE {t} (pk int, c1 text, c2 int, c3 int, v int, "
                    "PRIMARY KEY (pk, c1, c2, c3))")
    session.execute(f"INSERT INTO {t} (pk, c1, c2, c3, v) VALUES (1, 'a', 1, 0, 0)")
    for where in ["(c2, c3) IN ((1, 0), (2, 0))", "pk = 1 AND (c2, c3) IN ((1, 0), (2, 0))"]:
        refused(session, f"SELECT * FROM {t} WHERE {where} ALLOW FILTERING",
                "Multicolumn IN filters are not supported")
    # As a clustering prefix it selects rows, as before.
    rows = session.execute(f"SELECT c2 FROM {t} WHERE pk = 1 AND (c1, c2) IN (('a', 1), ('b', 1))")
    assert [r.c2 for r in rows] == [1]


def test_a_tuple_of_the_wrong_size_is_refused_when_prepared(session, keyspace):
    # SelectMultiColumnRelationTest.testMultiClusteringInvalidQueries
    t = f"{keyspace}.tuple_arity"
    session.execute(f"CREATE TABLE {t} (a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))")
    for statement, message in [
        (f"SELECT * FROM {t} WHERE a = 0 AND (b, c) > (?, ?, ?)",
         "Expected 2 elements in value tuple, but got 3: (?, ?, ?)"),
        (f"SELECT * FROM {t} WHERE a = 0 AND (b, c, d) IN ((?, ?, ?, ?, ?))",
         "Expected 3 elements in value tuple, but got 5: (?, ?, ?, ?, ?)"),
        (f"SELECT * FROM {t} WHERE a = 0 AND (b, c) = (?, ?, ?)",
         "Expected 2 elements in value tuple, but got 3: (?, ?, ?)"),
    ]:
        with pytest.raises(InvalidRequest, match=whole(message)):
            session.prepare(statement)


def test_an_unset_tuple_is_named_as_cassandra_names_it(session, keyspace):
    # SelectMultiColumnRelationTest.testWithUnsetValues
    t = f"{keyspace}.unset_tuple"
    session.execute(f"CREATE TABLE {t} (k int, i int, j int, s text, PRIMARY KEY (k, i, j))")
    for statement, values, message in [
        ("(i, j) = ?", [UNSET_VALUE], "Invalid unset value for tuple (i,j)"),
        ("i = ? AND (j) > ?", [1, UNSET_VALUE], "Invalid unset value for tuple (j)"),
        ("(i, j) IN (?, ?)", [UNSET_VALUE, (1, 1)], "Invalid unset value for tuple (i,j)"),
        ("(i, j) IN ?", [UNSET_VALUE], "Invalid unset value for in(i,j)"),
    ]:
        prepared = session.prepare(f"SELECT * FROM {t} WHERE {statement} ALLOW FILTERING")
        with pytest.raises(InvalidRequest, match=whole(message)):
            session.execute(prepared, values)
