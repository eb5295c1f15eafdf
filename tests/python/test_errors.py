"""Errors reach the driver as the exception classes Cassandra's error codes map to.

SyntaxError (0x2000) -> `SyntaxException`, Invalid (0x2200) -> `InvalidRequest`, AlreadyExists
(0x2400) -> `AlreadyExists`. After each error the node and the connection keep working.
"""

from __future__ import annotations

import re
import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.protocol import SyntaxException
from cassandra.query import UNSET_VALUE

ALLOW_FILTERING_MESSAGE = (
    "Cannot execute this query as it might involve data filtering and thus may have "
    "unpredictable performance. If you want to execute this query despite the performance "
    "unpredictability, use ALLOW FILTERING")


@pytest.fixture(scope="module")
def table(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.t (k int, c int, v text, u uuid, a ascii, "
        "PRIMARY KEY (k, c))")
    session.execute(f"CREATE TABLE {keyspace}.texts (k text PRIMARY KEY, v int)")
    session.execute(f"INSERT INTO {keyspace}.t (k, c, v) VALUES (1, 1, 'one')")
    session.execute(f"INSERT INTO {keyspace}.t (k, c, v) VALUES (1, 2, 'two')")
    session.execute(f"INSERT INTO {keyspace}.t (k, c, v) VALUES (2, 1, 'one')")
    return f"{keyspace}.t"


@pytest.fixture(autouse=True)
def node_still_serves(session):
    """After every test in this module, the same session still answers."""
    yield
    assert session.execute("SELECT release_version FROM system.local").one() is not None


@pytest.mark.parametrize("statement", [
    "SELEC * FROM system.local",
    "SELECT * FROM",
    "SELECT * FROM system.local WHERE",
    "INSERT INTO t (k) VALUES",
    "SELECT * FROM system.local garbage",
    "CREATE TABLE (k int PRIMARY KEY)",
    "SELECT * FROM system.local WHERE key = 'local' AND (a, b) > ()",
])
def test_syntax_error(session, statement):
    with pytest.raises(SyntaxException) as error:
        session.execute(statement)
    assert "line 1:" in str(error.value)


@pytest.mark.parametrize("statement, message", [
    ("CREATE KEYSPACE dup WITH replication = {'class': 'NetworkTopologyStrategy', "
     "'datacenter1': 2, 'datacenter1': 3}", "Multiple definition for property datacenter1"),
    ("ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', "
     "'datacenter1': 2, 'datacenter1': 1}", "Multiple definition for property datacenter1"),
    ("CREATE KEYSPACE dup WITH durable_writes = true AND durable_writes = false",
     "Multiple definition for property 'durable_writes'"),
    ("USE ?", "Bind variables cannot be used for keyspace names"),
    ("SELECT * FROM ?", "Bind variables cannot be used for table names"),
    ("UPDATE t SET v = k + 1 WHERE k = 1", "Only expressions of the form X = X +<value> are "
     "supported."),
    ("UPDATE t SET v = 'a', v = 'b' WHERE k = 1", "Multiple incompatible setting of column v"),
])
def test_checks_of_cassandras_parser_are_syntax_errors(session, statement, message):
    """What Cassandra's parser refuses as it goes (its addRecognitionError) is a SyntaxException
    whose message is the check's text alone."""
    with pytest.raises(SyntaxException) as error:
        session.execute(statement)
    assert f'message="{message}"' in str(error.value), str(error.value)


@pytest.mark.parametrize("statement, message", [
    ("CREATE TABLE {ks}.shape1 (k int PRIMARY KEY) WITH comment = {{'a': 'b'}}",
     "Invalid value for property 'comment'. It should be a string"),
    ("CREATE TABLE {ks}.shape2 (k int PRIMARY KEY) WITH compaction = 'x'",
     "Invalid value for property 'compaction'. It should be a map."),
    ("CREATE KEYSPACE shape3 WITH replication = 'x'",
     "Invalid value for property 'replication'. It should be a map."),
])
def test_a_property_of_the_wrong_shape_is_a_syntax_error(session, keyspace, statement, message):
    """Cassandra's `PropertyDefinitions.getSimple` and `getMap` throw a SyntaxException."""
    with pytest.raises(SyntaxException) as error:
        session.execute(statement.format(ks=keyspace))
    assert f'message="{message}"' in str(error.value), str(error.value)


def test_syntax_error_on_prepare(session):
    with pytest.raises(SyntaxException):
        session.prepare("SELECT * FROM WHERE k = ?")


def test_unknown_table(session, keyspace):
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"SELECT * FROM {keyspace}.no_such_table")
    assert "no_such_table" in str(error.value)
    with pytest.raises(InvalidRequest):
        session.execute(f"INSERT INTO {keyspace}.no_such_table (k) VALUES (1)")
    with pytest.raises(InvalidRequest):
        session.prepare(f"SELECT * FROM {keyspace}.no_such_table WHERE k = ?")


def test_unknown_keyspace(session):
    # Schema.validateTable's words, lower-case, for reads, writes and TRUNCATE.
    for statement in ("SELECT * FROM no_such_keyspace.t",
                      "INSERT INTO no_such_keyspace.t (k) VALUES (1)",
                      "TRUNCATE no_such_keyspace.t"):
        with pytest.raises(InvalidRequest, match="keyspace no_such_keyspace does not exist"):
            session.execute(statement)
    with pytest.raises(InvalidRequest, match="keyspace no_such_keyspace does not exist"):
        session.prepare("SELECT * FROM no_such_keyspace.t WHERE k = ?")


def test_invalid_keyspace_and_table_names_are_quoted_as_cassandra_quotes_them(session, keyspace):
    with pytest.raises(InvalidRequest, match=re.escape(
            "Keyspace name must not be empty, more than 48 characters long, or contain "
            "non-alphanumeric-underscore characters (got '\u00e4')")):
        session.execute("CREATE KEYSPACE \"\u00e4\" WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    with pytest.raises(InvalidRequest, match=re.escape(
            "Table name must not be empty, more than 48 characters long, or contain "
            "non-alphanumeric-underscore characters (got \"\u00e4\")")):
        session.execute(f"CREATE TABLE {keyspace}.\"\u00e4\" (k int PRIMARY KEY)")


def test_unknown_column(session, table):
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"SELECT nope FROM {table} WHERE k = 1")
    assert "nope" in str(error.value)
    with pytest.raises(InvalidRequest):
        session.execute(f"INSERT INTO {table} (k, c, nope) VALUES (1, 1, 1)")


@pytest.mark.parametrize("statement", [
    "INSERT INTO {t} (k, c, nope) VALUES (?, ?, ?)",
    "UPDATE {t} SET nope = ? WHERE k = ? AND c = ?",
    "SELECT * FROM {t} WHERE k = ? AND nope = ? ALLOW FILTERING",
    "DELETE FROM {t} WHERE k = ? AND c = ? IF nope = ?",
    "DELETE nope FROM {t} WHERE k = ?",
])
def test_unknown_column_on_prepare(session, table, statement):
    """PREPARE refuses a column the table lacks, in Cassandra's words."""
    with pytest.raises(InvalidRequest, match="Undefined column name nope"):
        session.prepare(statement.format(t=table))


@pytest.mark.parametrize("statement, message", [
    ("SELECT * FROM {t} WHERE v = ?", ALLOW_FILTERING_MESSAGE),
    ("SELECT * FROM {t} WHERE k = ? ORDER BY v DESC",
     "Order by is currently only supported on the clustered columns of the PRIMARY KEY"),
    ("SELECT * FROM {t} ORDER BY c DESC",
     "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."),
    ("SELECT * FROM {t} WHERE token(c) > ?",
     "The token() function must be applied to all partition key components or none of them"),
    ("UPDATE {t} SET v = ? WHERE k = ?", "Some clustering keys are missing: c"),
    ("UPDATE {t} SET v = v + ? WHERE k = ? AND c = ?",
     "Invalid operation (v = v + ?) for non counter column v"),
    ("INSERT INTO {t} (k, c, v) VALUES (?, ?, 3)", "Invalid INTEGER constant (3)"),
    ("INSERT INTO {t} (k, c) VALUES (?, ?) USING TIMESTAMP ? IF NOT EXISTS",
     "Cannot provide custom timestamp for conditional updates"),
    ("DELETE v FROM {t} WHERE k = ?", "Range deletions are not supported for specific columns"),
    ("DELETE v FROM {t} WHERE k = ? IF v = ?", "DELETE statements must restrict all PRIMARY KEY "
     "columns with equality relations in order to delete non static columns"),
    ("SELECT DISTINCT v FROM {t}",
     "SELECT DISTINCT queries must only request partition key columns and/or static columns"),
    ("BEGIN BATCH INSERT INTO {t} (k, c) VALUES (?, ?); UPDATE {t} SET v = ? WHERE k = ?; "
     "APPLY BATCH", "Some clustering keys are missing: c"),
])
def test_refused_on_prepare(session, table, statement, message):
    """What Cassandra refuses whatever the values, it refuses when it prepares (its
    restrictions and operations are built then): so does khata, not at the first EXECUTE."""
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.prepare(statement.format(t=table))


@pytest.mark.parametrize("statement", [
    "SELECT * FROM {t} WHERE k IN ? AND c > ?",
    "SELECT * FROM {t} WHERE k = ? AND (c) > (?) ORDER BY c DESC LIMIT ?",
    "SELECT * FROM {t} WHERE token(k) > ? AND token(k) <= ?",
    "SELECT * FROM {t} WHERE v = ? ALLOW FILTERING",
    "UPDATE {t} SET v = ?, u = ? WHERE k = ? AND c IN ?",
    "UPDATE {t} SET v = ? WHERE k = ? AND c = ? IF v = ?",
    "DELETE FROM {t} WHERE k = ? AND c > ?",
    "INSERT INTO {t} (k, c, v, u) VALUES (?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?",
    "INSERT INTO {t} JSON ?",
    "INSERT INTO {t} (k, c, v) VALUES (?, ?, fromJson(?))",
])
def test_valid_statements_still_prepare(session, table, statement):
    session.prepare(statement.format(t=table))


@pytest.mark.parametrize("statement", [
    "SELECT k, c FROM {t} ORDER BY c",
    "SELECT k, c FROM {t} ORDER BY c ASC",
    "SELECT k, c FROM {t} WHERE v = 'one' ORDER BY c ALLOW FILTERING",
    "SELECT k, c FROM {t} WHERE token(k) > 0 ORDER BY c DESC",
])
def test_order_by_needs_the_partition_key(session, table, statement):
    """ORDER BY over a token range would come back in token order: refused, as Cassandra does."""
    with pytest.raises(InvalidRequest, match="ORDER BY is only supported when the partition key "
                       "is restricted by an EQ or an IN."):
        session.execute(statement.format(t=table))


def test_a_batch_with_markers_prepares(session, keyspace):
    table = f"{keyspace}.batched"
    session.execute(f"CREATE TABLE {table} (k int, c int, v text, PRIMARY KEY (k, c))")
    batch = session.prepare(
        f"BEGIN BATCH INSERT INTO {table} (k, c, v) VALUES (?, ?, ?); "
        f"UPDATE {table} SET v = ? WHERE k = ? AND c = ?; APPLY BATCH")
    assert [c.name for c in batch.column_metadata] == ["k", "c", "v", "v", "k", "c"]
    session.execute(batch, [71, 1, "one", "two", 71, 2])
    rows = session.execute(f"SELECT c, v FROM {table} WHERE k = 71")
    assert [(r.c, r.v) for r in rows] == [(1, "one"), (2, "two")]


@pytest.mark.parametrize("statement", [
    "INSERT INTO {t} (k, c, v) VALUES ('one', 1, 'x')",     # text for int
    "INSERT INTO {t} (k, c, v) VALUES (1, 1, 2)",           # int for text
    "INSERT INTO {t} (k, c, v) VALUES (1, 99999999999, 'x')",  # out of int range
    "INSERT INTO {t} (k, c, u) VALUES (1, 1, 'not-a-uuid')",
    "INSERT INTO {t} (k, c, u) VALUES (1, 1, 12345)",
    "INSERT INTO {t} (k, c, v) VALUES (1, 1, [1, 2])",
    "SELECT * FROM {t} WHERE k = 'one'",
    "UPDATE {t} SET v = 3 WHERE k = 1 AND c = 1",
])
def test_wrong_type_literal(session, table, statement):
    with pytest.raises(InvalidRequest):
        session.execute(statement.format(t=table))


def test_wrong_type_in_a_prepared_statement(session, table):
    """Bytes the driver would never send: the server validates every bound value."""
    insert = session.prepare(f"INSERT INTO {table} (k, c, v, a) VALUES (?, ?, ?, ?)")
    # The type's own message, bare, as Cassandra's Marker.bindAndGet passes it on.
    cases = {
        "a 2-byte int": (1, b"\x00\x01", "Expected 4 or 0 byte int (2)"),
        "invalid UTF-8 in text": (2, b"\xff\xfe", "String didn't validate."),
        "non-ASCII bytes in ascii": (3, "é".encode(), "Invalid byte for ascii: -61"),
    }
    for what, (index, raw, message) in cases.items():
        bound = insert.bind((1, 5, "ok", "ok"))
        bound.values[index] = raw
        with pytest.raises(InvalidRequest, match=f'message="{re.escape(message)}"'):
            session.execute(bound)
            pytest.fail(f"{what} was accepted")
    assert list(session.execute(f"SELECT * FROM {table} WHERE k = 1 AND c = 5")) == []


def test_empty_partition_key_is_refused(session, keyspace, table):
    with pytest.raises(InvalidRequest, match="Key may not be empty"):
        session.execute(f"INSERT INTO {keyspace}.texts (k, v) VALUES ('', 1)")


def test_missing_primary_key_parts(session, table):
    with pytest.raises(InvalidRequest, match="Some clustering keys are missing: c"):
        session.execute(f"INSERT INTO {table} (k, v) VALUES (1, 'x')")
    with pytest.raises(InvalidRequest, match="Some partition key parts are missing: k"):
        session.execute(f"INSERT INTO {table} (c, v) VALUES (1, 'x')")


@pytest.mark.parametrize("where", [
    "v = 'one'",                 # a regular column
    "c = 1",                     # a clustering column without the partition key
    "k = 1 AND v = 'one'",       # a regular column within a partition
])
def test_allow_filtering_refusal(session, table, where):
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"SELECT * FROM {table} WHERE {where}")
    assert ALLOW_FILTERING_MESSAGE in str(error.value)


def test_null_or_unset_filter_values(session, keyspace):
    """A filter's null or unset value is refused once the restrictions have passed: without
    ALLOW FILTERING, the demand for it comes first, as Cassandra checks restrictions when it
    prepares a statement and values when it runs it."""
    from cassandra.query import UNSET_VALUE
    session.execute(f"CREATE TABLE {keyspace}.nulls (p text, c text, i int, s set<int>, "
                    "m map<int, int>, st int STATIC, PRIMARY KEY (p, c))")
    table = f"{keyspace}.nulls"
    for condition in ["i = NULL", "i > NULL", "i >= NULL", "i < NULL", "i <= NULL",
                      "s CONTAINS NULL", "m CONTAINS NULL", "m CONTAINS KEY NULL",
                      "m[1] = NULL", "m[NULL] = 1", "st > NULL"]:
        for where in (f"p = 'x' AND {condition}", condition):
            with pytest.raises(InvalidRequest, match=ALLOW_FILTERING_MESSAGE):
                session.execute(f"SELECT c FROM {table} WHERE {where}")
        column = condition.split()[0].split("[")[0]
        what = {"m[1]": "map value", "m[NULL]": "map key"}.get(condition.split()[0], "value")
        with pytest.raises(InvalidRequest,
                           match=re.escape(f"Unsupported null {what} for column {column}")):
            session.execute(f"SELECT c FROM {table} WHERE p = 'x' AND {condition} ALLOW FILTERING")
    for condition, message in [("i = ?", "Unsupported unset value for column i"),
                               ("s CONTAINS ?", "Unsupported unset value for column s"),
                               ("m[?] = 1", "Unsupported unset map key for column m"),
                               ("m[1] = ?", "Unsupported unset map value for column m")]:
        with pytest.raises(InvalidRequest, match=ALLOW_FILTERING_MESSAGE):
            session.prepare(f"SELECT c FROM {table} WHERE p = 'x' AND {condition}")
        select = session.prepare(
            f"SELECT c FROM {table} WHERE p = 'x' AND {condition} ALLOW FILTERING")
        with pytest.raises(InvalidRequest, match=re.escape(message)):
            session.execute(select, [UNSET_VALUE])
    # An UPDATE or DELETE refuses the column itself.
    with pytest.raises(InvalidRequest,
                       match="Non PRIMARY KEY columns found in where clause: i"):
        session.execute(f"DELETE FROM {table} WHERE p = 'x' AND c = 'y' AND i = NULL")


def test_allow_filtering_runs_the_query(session, table):
    rows = session.execute(f"SELECT k, c FROM {table} WHERE v = 'one' ALLOW FILTERING")
    assert sorted((r.k, r.c) for r in rows) == [(1, 1), (2, 1)]


def test_already_exists(session, keyspace, table):
    with pytest.raises(AlreadyExists) as error:
        session.execute(f"CREATE TABLE {table} (k int PRIMARY KEY)")
    assert (error.value.keyspace, error.value.table) == (keyspace, "t")
    with pytest.raises(AlreadyExists) as error:
        session.execute(
            f"CREATE KEYSPACE {keyspace} "
            "WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert error.value.keyspace == keyspace
    assert not error.value.table  # Cassandra sends an empty table name for a keyspace
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (k int PRIMARY KEY)")


@pytest.mark.parametrize("statement, message", [
    ("SELECT * FROM {t} WHERE k != 1", 'Unsupported "!=" relation: k != 1'),
    ("SELECT * FROM {t} WHERE token(k) != 1", 'Unsupported "!=" relation: token(k) != 1'),
    ("SELECT k, count(*) FROM {t} GROUP BY zzz", "Undefined column name zzz"),
    ("SELECT k, count(*) FROM {t} GROUP BY v",
     "Group by is currently only supported on the columns of the PRIMARY KEY, got v"),
    ("SELECT * FROM {t} WHERE k = sum((int) 4)",
     "Aggregation function are not supported in the where clause"),
    ("INSERT INTO {t} (k, c) VALUES (1, max((int) 4))",
     "Aggregation function are not supported in the where clause"),
])
def test_refused_in_cassandras_words(session, table, statement, message):
    """Relations, GROUP BY columns and aggregates as terms, refused as Cassandra 4.1's
    SingleColumnRelation, getAggregationSpecification and FunctionCall.Raw refuse them."""
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        session.execute(statement.format(t=table))


def test_unknown_function(session, table):
    with pytest.raises(InvalidRequest):
        session.execute(f"SELECT no_such_function(v) FROM {table} WHERE k = 1")


def test_errors_in_flight_do_not_disturb_other_requests(session, table):
    """Many requests on one connection, some failing: each gets its own answer."""
    good = session.prepare(f"SELECT v FROM {table} WHERE k = ? AND c = ?")
    futures = []
    for i in range(50):
        if i % 2:
            futures.append(("bad", session.execute_async(f"SELECT * FROM {table} WHERE v = 'x'")))
        else:
            futures.append(("good", session.execute_async(good, (1, 1))))
    for kind, future in futures:
        if kind == "good":
            assert future.result().one().v == "one"
        else:
            with pytest.raises(InvalidRequest):
                future.result()


@pytest.mark.parametrize("columns, message", [
    ("pk int PRIMARY KEY, s set<duration>", "Durations are not allowed inside sets: set<duration>"),
    ("pk int PRIMARY KEY, m map<duration, text>",
     "Durations are not allowed as map keys: map<duration, text>"),
    ("pk frozen<list<duration>> PRIMARY KEY",
     "duration type is not supported for PRIMARY KEY column 'pk'"),
    ("pk int, c frozen<tuple<int, duration>>, PRIMARY KEY (pk, c)",
     "duration type is not supported for PRIMARY KEY column 'c'"),
    ("pk list<int> PRIMARY KEY", "Invalid non-frozen collection type list<int> for PRIMARY KEY column 'pk'"),
    ("pk counter PRIMARY KEY", "counter type is not supported for PRIMARY KEY column 'pk'"),
])
def test_column_types_refused_as_cassandra_refuses_them(session, keyspace, columns, message):
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"CREATE TABLE {keyspace}.refused ({columns})")
    assert message in str(error.value)
    # A list or a map value of durations is a column like any other.
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {keyspace}.durations "
        "(pk int PRIMARY KEY, l list<duration>, m map<text, duration>)")


def test_consistency_levels_refused_as_cassandra_refuses_them(session, keyspace):
    """ConsistencyLevel.validateForRead, validateCounterForWrite and validateForCasCommit, and
    StorageProxy.readWithPaxos's one partition."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    session.execute(f"CREATE TABLE {keyspace}.cl_counts (k int PRIMARY KEY, c counter)")
    session.execute(f"CREATE TABLE {keyspace}.cl_rows (k int PRIMARY KEY, v int)")
    cases = [
        (f"SELECT * FROM {keyspace}.cl_rows WHERE k = 1", ConsistencyLevel.ANY, None,
         "ANY ConsistencyLevel is only supported for writes"),
        (f"UPDATE {keyspace}.cl_counts SET c = c + 1 WHERE k = 1", ConsistencyLevel.ANY, None,
         "Consistency level ANY is not yet supported for counter table cl_counts"),
        (f"UPDATE {keyspace}.cl_counts SET c = c + 1 WHERE k = 1", ConsistencyLevel.SERIAL, None,
         "Counter operations are inherently non-serializable"),
        (f"INSERT INTO {keyspace}.cl_rows (k, v) VALUES (1, 1) IF NOT EXISTS",
         ConsistencyLevel.SERIAL, None,
         "SERIAL is not supported as conditional update commit consistency"),
        (f"INSERT INTO {keyspace}.cl_rows (k, v) VALUES (1, 1) IF NOT EXISTS",
         ConsistencyLevel.EACH_QUORUM, None,
         "consistency level EACH_QUORUM not compatible with replication strategy "
         r"\(org.apache.cassandra.locator.SimpleStrategy\)"),
        (f"SELECT * FROM {keyspace}.cl_rows WHERE k IN (1, 2)", ConsistencyLevel.SERIAL, None,
         "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time"),
    ]
    for cql, level, _, message in cases:
        with pytest.raises(InvalidRequest, match=message):
            session.execute(SimpleStatement(cql, consistency_level=level))
    # What these levels do allow.
    session.execute(SimpleStatement(f"INSERT INTO {keyspace}.cl_rows (k, v) VALUES (2, 2)",
                                    consistency_level=ConsistencyLevel.ANY))
    row = session.execute(SimpleStatement(f"SELECT v FROM {keyspace}.cl_rows WHERE k = 2",
                                          consistency_level=ConsistencyLevel.SERIAL)).one()
    assert row.v == 2
    # A range scan at SERIAL reads as QUORUM (the python driver's
    # LightweightTransactionTests.test_was_applied_batch_stmt).
    rows = session.execute(SimpleStatement(f"SELECT v FROM {keyspace}.cl_rows",
                                           consistency_level=ConsistencyLevel.LOCAL_SERIAL))
    assert [r.v for r in rows] == [2]


def test_aggregates_over_many_partitions_warn(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.agg_warn (p int, c int, PRIMARY KEY (p, c))")
    for p in range(3):
        session.execute(f"INSERT INTO {keyspace}.agg_warn (p, c) VALUES ({p}, 1)")
    for cql, warning in [
        (f"SELECT count(*) FROM {keyspace}.agg_warn",
         "Aggregation query used without partition key"),
        (f"SELECT max(c) FROM {keyspace}.agg_warn WHERE p IN (1, 2)",
         "Aggregation query used on multiple partition keys (IN restriction)"),
        (f"SELECT count(*) FROM {keyspace}.agg_warn WHERE p = 1", None),
        # A token range restricts the partition key (Cassandra's hasPartitionKeyRestrictions).
        (f"SELECT count(*) FROM {keyspace}.agg_warn WHERE token(p) > 0", None),
        (f"SELECT count(*) FROM {keyspace}.agg_warn WHERE c = 1 ALLOW FILTERING",
         "Aggregation query used without partition key"),
    ]:
        future = session.execute_async(cql)
        future.result()
        assert (future.warnings or []) == ([warning] if warning else []), cql


def test_alter_that_changes_nothing_is_void(session, keyspace):
    """ADD IF NOT EXISTS of a column there, DROP IF EXISTS of one that is not: no schema change
    (Cassandra answers Void, so drivers wait for no agreement)."""
    session.execute(f"CREATE TABLE {keyspace}.noop_alter (k int PRIMARY KEY, v int)")
    control = session.cluster.control_connection
    refreshes = []
    original = control._refresh_schema

    def counting(*args, **kwargs):
        refreshes.append(kwargs)
        return original(*args, **kwargs)

    control._refresh_schema = counting
    try:
        for cql in [f"ALTER TABLE {keyspace}.noop_alter ADD IF NOT EXISTS v int",
                    f"ALTER TABLE {keyspace}.noop_alter DROP IF EXISTS zz"]:
            session.execute(cql)
        assert refreshes == []
        # A real change is a SCHEMA_CHANGE result: the driver refreshes its metadata.
        session.execute(f"ALTER TABLE {keyspace}.noop_alter ADD w int")
        assert refreshes
    finally:
        control._refresh_schema = original
    local = session.execute("SELECT native_protocol_version FROM system.local").one()
    assert local.native_protocol_version == "5"


def test_aggregates_over_part_of_the_partition_key_do_not_warn(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.agg_parts (a int, b int, c int, PRIMARY KEY ((a, b), c))")
    session.execute(f"INSERT INTO {keyspace}.agg_parts (a, b, c) VALUES (1, 1, 1)")
    future = session.execute_async(
        f"SELECT count(*) FROM {keyspace}.agg_parts WHERE a = 1 ALLOW FILTERING")
    assert future.result().one()[0] == 1
    assert not future.warnings


@pytest.fixture(scope="module")
def clustered(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.clustered (a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))")
    return f"{keyspace}.clustered"


@pytest.mark.parametrize("where, message", [
    ("a = 0 AND (b, c) > (1, 2, 3)", "Expected 2 elements in value tuple, but got 3: (1, 2, 3)"),
    ("a = 0 AND (d, c, b) = (0, 0, 0)", "Clustering columns must appear in the PRIMARY KEY order "
     "in multi-column relations: (d, c, b) = (0, 0, 0)"),
    ("a = 0 AND (c, d) = (0, 0)",
     'PRIMARY KEY column "c" cannot be restricted as preceding column "b" is not restricted'),
    ("(c, d) IN ((0, 1))",
     'PRIMARY KEY column "c" cannot be restricted as preceding column "b" is not restricted'),
    ("b = 22 AND d = 24",
     'PRIMARY KEY column "d" cannot be restricted as preceding column "c" is not restricted'),
    ("a = 0 AND (b, c, d) > (0, 1, 0) AND c < 1",
     'Column "c" cannot be restricted by two inequalities not starting with the same column'),
    ("a = 0 AND c > 1 AND (b, c, d) < (1, 1, 0)",
     'Column "c" cannot be restricted by two inequalities not starting with the same column'),
    ("a = 0 AND (b, c) > (0, 0) AND (b) < (0) AND (c) < (0)",
     'Column "c" cannot be restricted by two inequalities not starting with the same column'),
    ("a = 0 AND b > 0 AND (c, d) IN ((0, 0))",
     'Clustering column "c" cannot be restricted (preceding column "b" is restricted by a non-EQ '
     'relation)'),
    ("a = 0 AND (b) < (0) AND (c) < (0) AND (b, c) > (0, 0)",
     'Clustering column "c" cannot be restricted (preceding column "b" is restricted by a non-EQ '
     'relation)'),
    ("b > 20 AND c = 33",
     'Clustering column "c" cannot be restricted (preceding column "b" is restricted by a non-EQ '
     'relation)'),
    ("a = 0 AND (c, d) > (0, 0) AND b > 0",
     'PRIMARY KEY column "c" cannot be restricted (preceding column "b" is restricted by a non-EQ '
     'relation)'),
    ("a = 0 AND (b) = (0) AND (b) > (0)",
     "b cannot be restricted by more than one relation if it includes an Equal"),
    ("a = 0 AND b IN (1, 2) AND b = 1",
     "b cannot be restricted by more than one relation if it includes a IN"),
    ("a = 0 AND (b) > (0) AND b > 1", "More than one restriction was found for the start bound on b"),
    ("a = 0 AND b > 0 AND b = 1",
     'Column "b" cannot be restricted by both an equality and an inequality relation'),
    ("a = 0 AND (b) != (0)", 'Unsupported "!=" relation: (b) != (0)'),
    ("a >= 1 AND a < 4", ALLOW_FILTERING_MESSAGE),
    ("a = 0 AND (c, d) < (2, 2) ALLOW FILTERING",
     "Multi-column slice restrictions cannot be used for filtering."),
    ("a = 0 AND b > 1 AND (d, c) < (2, 2) ALLOW FILTERING",
     "Clustering columns must appear in the PRIMARY KEY order in multi-column relations"),
    ("a = 0 AND b > 1 AND (c, d) < (2, 2) ALLOW FILTERING",
     "Multi-column slice restrictions cannot be used for filtering."),
])
def test_clustering_restrictions_refused_in_cassandras_words(session, clustered, where, message):
    """What Cassandra's restrictions refuse, in its words and in its order: the merge of two
    relations on a column, a relation after a sliced column, a column after an unrestricted one
    (before ALLOW FILTERING is asked for), a slice of the partition key (filtered)
    (SelectMultiColumnRelationTest.testMultiClusteringInvalidQueries, SelectTest)."""
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"SELECT * FROM {clustered} WHERE {where}")
    assert message in str(error.value), str(error.value)


@pytest.mark.parametrize("where, values, message", [
    ("a = 0 AND (b, c) > (?, ?)", (1, None), "Invalid null value in condition for column c"),
    ("a = 0 AND (b, c, d) = (?, ?, ?)", (1, 2, None), "Invalid null value for column d"),
    ("a = 0 AND (b, c, d) IN ((?, ?, ?))", (1, 2, None), "Invalid null value for column d"),
    ("a = 0 AND (b, c, d) IN ((?, ?, ?), (?, ?, ?))", (1, 2, None, 2, 1, 4),
     "Invalid null value in condition for columns: [b, c, d]"),
    ("a IN ?", (None,), "Invalid null value for column a"),
    ("a = 0 AND b IN ?", (UNSET_VALUE,), "Invalid unset value for column b"),
    # SingleColumnRestriction's EQ and IN (testInRestrictionWithClusteringColumn).
    ("a = ?", (None,), "Invalid null value in condition for column a"),
    ("a = 0 AND b = ?", (None,), "Invalid null value in condition for column b"),
    ("a = 0 AND b IN (1, ?)", (None,), "Invalid null value in condition for column b"),
    ("a IN (0, ?)", (None,), "Invalid null value in condition for column a"),
    ("a = 0 AND b > ?", (None,), "Invalid null value in condition for column b"),
])
def test_null_or_unset_key_values_refused_in_cassandras_words(session, clustered, where, values,
                                                              message):
    prepared = session.prepare(f"SELECT * FROM {clustered} WHERE {where}")
    with pytest.raises(InvalidRequest) as error:
        session.execute(prepared, values)
    assert message in str(error.value), str(error.value)


def test_a_null_literal_in_a_key_restriction(session, clustered):
    with pytest.raises(InvalidRequest, match="Invalid null value in condition for column b"):
        session.execute(f"SELECT * FROM {clustered} WHERE a = 0 AND b IN (1, null)")
    with pytest.raises(InvalidRequest, match="Invalid null value in condition for column a"):
        session.execute(f"DELETE FROM {clustered} WHERE a = null")


def test_a_clustering_value_over_64k_matches_no_row(session, keyspace):
    """No row has a clustering value over 64 KiB (writes refuse one), so Cassandra finds none
    for it rather than refuse the query (SelectTest.testCKQueryWithValueOver64K)."""
    t = f"{keyspace}.big_ck"
    session.execute(f"CREATE TABLE {t} (a text, b text, PRIMARY KEY (a, b))")
    session.execute(f"INSERT INTO {t} (a, b) VALUES ('foo', 'x')")
    big = "x" * (1024 * 65)
    one = session.prepare(f"SELECT * FROM {t} WHERE a = 'foo' AND b = ?")
    assert list(session.execute(one, (big,))) == []
    several = session.prepare(f"SELECT b FROM {t} WHERE a = 'foo' AND b IN (?, ?)")
    assert [r.b for r in session.execute(several, (big, "x"))] == ["x"]
    with pytest.raises(InvalidRequest):
        session.execute(f"INSERT INTO {t} (a, b) VALUES ('foo', %s)", (big,))


@pytest.mark.parametrize("selector, message", [
    ("token(s1, k1)", "Undefined column name s1"),
    ("token(k2, k1)",
     "Type error: k2 cannot be passed as argument 0 of function system.token of type uuid"),
    ("token(k1)",
     "Invalid number of arguments in call to function system.token: 2 required but 1 provided"),
])
def test_token_selector_refused_in_cassandras_words(session, keyspace, selector, message):
    """`system.token` takes the partition key's types, in order (SelectTest
    .testTokenFctRejectsInvalidColumn{Name,Type,Count})."""
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.token_args "
                    "(k1 uuid, k2 text, PRIMARY KEY ((k1, k2)))")
    with pytest.raises(InvalidRequest) as error:
        session.execute(f"SELECT {selector} FROM {keyspace}.token_args")
    assert message in str(error.value), str(error.value)


def test_order_by_skips_only_columns_restricted_by_an_equality(session, clustered):
    """`b IN (0)` is an equality to Cassandra, so ORDER BY c may skip b; `b IN ?` is an IN even
    bound to one value, so it may not (SelectOrderByTest
    .testAllowSkippingEqualityAndSingleValueInRestrictedClusteringColumns)."""
    session.execute(f"INSERT INTO {clustered} (a, b, c, d) VALUES (0, 0, 1, 1)")
    session.execute(f"INSERT INTO {clustered} (a, b, c, d) VALUES (0, 0, 2, 2)")
    assert [r.c for r in session.execute(
        f"SELECT * FROM {clustered} WHERE a = 0 AND b IN (0) ORDER BY c DESC")] == [2, 1]
    # Refused when prepared, as Cassandra checks the ordering.
    with pytest.raises(InvalidRequest, match="Order by currently only supports the ordering of "
                       "columns following their declared order in the PRIMARY KEY"):
        session.prepare(f"SELECT * FROM {clustered} WHERE a = ? AND b IN ? ORDER BY c")


def test_a_null_literal_for_a_counter_filter_is_refused_first(session, keyspace):
    """A `null` literal for a counter is refused as Cassandra prepares the term, before ALLOW
    FILTERING is asked for; a null bound to a marker is refused as any filter value
    (CountersTest.testCounterFilteringWithNull)."""
    t = f"{keyspace}.counter_filter"
    session.execute(f"CREATE TABLE {t} (k int PRIMARY KEY, a counter, b counter)")
    session.execute(f"UPDATE {t} SET a = a + 1 WHERE k = 1")
    assert [tuple(r) for r in session.execute(f"SELECT * FROM {t} WHERE a > 0 ALLOW FILTERING")] \
        == [(1, 1, None)]
    for where in ("b = null", "b = null ALLOW FILTERING"):
        with pytest.raises(InvalidRequest,
                           match="Invalid null value for counter increment/decrement"):
            session.execute(f"SELECT * FROM {t} WHERE {where}")
    prepared = session.prepare(f"SELECT * FROM {t} WHERE b = ? ALLOW FILTERING")
    with pytest.raises(InvalidRequest, match="Unsupported null value for column b"):
        session.execute(prepared, (None,))
