"""Schema statements as Cassandra 4.1 checks and records them: user types in use, dropped
columns, replication options, counter tables, table options, CREATE TABLE's structure and the
system keyspaces no statement may change.

Messages and error classes are Cassandra 4.1's (`DropTypeStatement`, `CreateTypeStatement`,
`CreateTableStatement`, `AlterTableStatement`, `TableAttributes`, `TableParams`,
`NetworkTopologyStrategy`, `ReplicationFactor`). Keyspaces other than the module's are named
`sc_*` and dropped by the test that makes them.
"""

from __future__ import annotations

import uuid

import pytest
from cassandra import AlreadyExists, InvalidRequest, Unauthorized
from cassandra.protocol import ConfigurationException, SyntaxException


def fails(session, statement, error, message):
    with pytest.raises(error) as raised:
        session.execute(statement)
    assert message in str(raised.value), str(raised.value)


def replication(session, keyspace):
    row = session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
        [keyspace]).one()
    return dict(row.replication)


@pytest.fixture(scope="module")
def dc(session):
    return session.execute("SELECT data_center FROM system.local").one().data_center


# --- user types -------------------------------------------------------------------------------

def test_a_type_used_by_a_type_or_a_table_cannot_be_dropped(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.inner_t (x int)")
    session.execute(f"CREATE TYPE {keyspace}.outer_t (i frozen<inner_t>)")
    fails(session, f"DROP TYPE {keyspace}.inner_t", InvalidRequest,
          f"Cannot drop user type '{keyspace}.inner_t' as it is still used by user types outer_t")
    session.execute(f"CREATE TABLE {keyspace}.uses_outer (k int PRIMARY KEY, o frozen<outer_t>)")
    fails(session, f"DROP TYPE {keyspace}.outer_t", InvalidRequest,
          f"Cannot drop user type '{keyspace}.outer_t' as it is still used by tables uses_outer")
    session.execute(f"DROP TABLE {keyspace}.uses_outer")
    session.execute(f"DROP TYPE {keyspace}.outer_t")
    session.execute(f"DROP TYPE {keyspace}.inner_t")


def test_dropping_an_unknown_type(session, keyspace):
    fails(session, f"DROP TYPE {keyspace}.nope", InvalidRequest,
          f"Type '{keyspace}.nope' doesn't exist")
    session.execute(f"DROP TYPE IF EXISTS {keyspace}.nope")


def test_a_dropped_user_type_column_is_recorded_as_a_tuple(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.addr (street text, zip int)")
    session.execute(f"CREATE TABLE {keyspace}.dropped_udt (k int PRIMARY KEY, v int, fa frozen<addr>)")
    session.execute(f"INSERT INTO {keyspace}.dropped_udt (k, v, fa) VALUES (1, 1, {{street: 'x', zip: 2}})")
    session.execute(f"ALTER TABLE {keyspace}.dropped_udt DROP fa")
    row = session.execute(
        "SELECT type FROM system_schema.dropped_columns "
        "WHERE keyspace_name = %s AND table_name = 'dropped_udt' AND column_name = 'fa'",
        [keyspace]).one()
    assert row.type == "frozen<tuple<text, int>>"
    session.execute(f"DROP TYPE {keyspace}.addr")
    assert [tuple(r) for r in session.execute(f"SELECT * FROM {keyspace}.dropped_udt")] == [(1, 1)]


def test_collection_fields_are_kept_as_written(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.withlist (bar int, foo list<int>)")
    row = session.execute(
        "SELECT field_types FROM system_schema.types WHERE keyspace_name = %s AND type_name = 'withlist'",
        [keyspace]).one()
    assert list(row.field_types) == ["int", "list<int>"]
    fails(session, f"CREATE TABLE {keyspace}.wrong (k int PRIMARY KEY, v withlist)", InvalidRequest,
          "Non-frozen UDTs with nested non-frozen collections are not supported")
    session.execute(f"CREATE TABLE {keyspace}.holds_list (k int PRIMARY KEY, v frozen<withlist>)")
    fails(session, f"ALTER TABLE {keyspace}.holds_list ADD w withlist", InvalidRequest,
          "Non-frozen UDTs with nested non-frozen collections are not supported")
    session.execute(f"INSERT INTO {keyspace}.holds_list (k, v) VALUES (1, {{bar: 1, foo: [1, 2]}})")
    assert session.execute(f"SELECT v FROM {keyspace}.holds_list WHERE k = 1").one().v.foo == [1, 2]
    # A type used non-frozen takes no non-frozen collection field.
    session.execute(f"CREATE TYPE {keyspace}.plain_t (a int)")
    session.execute(f"CREATE TABLE {keyspace}.holds_plain (k int PRIMARY KEY, v plain_t)")
    fails(session, f"ALTER TYPE {keyspace}.plain_t ADD l list<int>", InvalidRequest,
          "Non-frozen UDTs with nested non-frozen collections are not supported")
    session.execute(f"ALTER TYPE {keyspace}.plain_t ADD l frozen<list<int>>")


# --- replication ------------------------------------------------------------------------------

NTS = "org.apache.cassandra.locator.NetworkTopologyStrategy"


def test_nts_replication_factor_expands_to_the_known_datacenters(session, dc):
    session.execute("CREATE KEYSPACE sc_n1 WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    try:
        assert replication(session, "sc_n1") == {"class": NTS, dc: "1"}
        session.execute("CREATE TABLE sc_n1.t (k int PRIMARY KEY, v int)")
        session.execute("INSERT INTO sc_n1.t (k, v) VALUES (1, 1)")
        assert [tuple(r) for r in session.execute("SELECT * FROM sc_n1.t")] == [(1, 1)]
    finally:
        session.execute("DROP KEYSPACE sc_n1")


def test_altering_to_nts_without_datacenters_keeps_the_factor(session, dc):
    session.execute("CREATE KEYSPACE sc_s1 WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    try:
        session.execute("CREATE TABLE sc_s1.t (k int PRIMARY KEY, v int)")
        session.execute("INSERT INTO sc_s1.t (k, v) VALUES (1, 1)")
        session.execute("ALTER KEYSPACE sc_s1 WITH replication = {'class': 'NetworkTopologyStrategy'}")
        assert replication(session, "sc_s1") == {"class": NTS, dc: "1"}
        assert [tuple(r) for r in session.execute("SELECT * FROM sc_s1.t")] == [(1, 1)]
    finally:
        session.execute("DROP KEYSPACE sc_s1")


def test_replication_without_a_factor_takes_default_keyspace_rf(session, dc):
    """Cassandra 4.1 (CreateTest.testCreateKeyspaceWith*StrategyNoOptions): a strategy given
    no factor gets `default_keyspace_rf` (1), in every datacenter for NetworkTopologyStrategy;
    an ALTER without one keeps the datacenters it had, and SimpleStrategy's factor."""
    simple = "org.apache.cassandra.locator.SimpleStrategy"
    session.execute("CREATE KEYSPACE sc_d1 WITH replication = {'class': 'NetworkTopologyStrategy'}")
    session.execute("CREATE KEYSPACE sc_d2 WITH replication = {'class': 'SimpleStrategy'}")
    try:
        assert replication(session, "sc_d1") == {"class": NTS, dc: "1"}
        assert replication(session, "sc_d2") == {"class": simple, "replication_factor": "1"}
        session.execute("CREATE TABLE sc_d1.t (k int PRIMARY KEY, v int)")
        session.execute("INSERT INTO sc_d1.t (k, v) VALUES (1, 1)")
        assert [tuple(r) for r in session.execute("SELECT * FROM sc_d1.t")] == [(1, 1)]
        session.execute(f"ALTER KEYSPACE sc_d1 WITH replication = "
                        f"{{'class': 'NetworkTopologyStrategy', '{dc}': 3}}")
        session.execute("ALTER KEYSPACE sc_d1 WITH replication = {'class': 'NetworkTopologyStrategy'}")
        assert replication(session, "sc_d1") == {"class": NTS, dc: "3"}
        # From NetworkTopologyStrategy to SimpleStrategy without a factor: the default.
        session.execute("ALTER KEYSPACE sc_d1 WITH replication = {'class': 'SimpleStrategy'}")
        assert replication(session, "sc_d1") == {"class": simple, "replication_factor": "1"}
        session.execute("ALTER KEYSPACE sc_d2 WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        session.execute("ALTER KEYSPACE sc_d2 WITH replication = {'class': 'SimpleStrategy'}")
        assert replication(session, "sc_d2") == {"class": simple, "replication_factor": "2"}
    finally:
        session.execute("DROP KEYSPACE sc_d1")
        session.execute("DROP KEYSPACE sc_d2")


@pytest.mark.parametrize("options, message", [
    (", 'no_such_dc': 2",
     "Unrecognized strategy option {no_such_dc} passed to NetworkTopologyStrategy for keyspace sc_bad"),
    (", 'DC': 0", "Configuration for at least one datacenter must be present"),
    (", 'replication_factor': -1", "Replication factor must be non-negative, found -1"),
])
def test_nts_options_refused(session, options, message):
    fails(session,
          f"CREATE KEYSPACE sc_bad WITH replication = {{'class': 'NetworkTopologyStrategy'{options}}}",
          ConfigurationException, message)


def test_nts_zero_datacenters_are_left_out(session, dc):
    session.execute("CREATE KEYSPACE sc_n4 WITH replication = "
                    f"{{'class': 'NetworkTopologyStrategy', '{dc}': 1, 'no_such_dc': 0}}")
    try:
        assert replication(session, "sc_n4") == {"class": NTS, dc: "1"}
    finally:
        session.execute("DROP KEYSPACE sc_n4")


@pytest.mark.parametrize("rf, message", [
    ("-1", "Replication factor must be non-negative, found -1"),
    ("'2/1'", "Transient replication is not enabled on this node"),
    ("'abc'", 'For input string: "abc"'),
])
def test_replication_factor_refused(session, rf, message):
    fails(session,
          f"CREATE KEYSPACE sc_bad WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {rf}}}",
          ConfigurationException, message)


# --- counter tables ---------------------------------------------------------------------------

def flags(session, keyspace, table):
    row = session.execute(
        "SELECT flags FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        [keyspace, table]).one()
    return set(row.flags)


def test_a_counter_table_is_flagged_and_stays_one(session, keyspace):
    session.execute(f"CREATE TABLE {keyspace}.c2 (k int PRIMARY KEY, c counter)")
    session.execute(f"CREATE TABLE {keyspace}.plain (k int PRIMARY KEY, t text)")
    assert flags(session, keyspace, "c2") == {"compound", "counter"}
    assert flags(session, keyspace, "plain") == {"compound"}
    fails(session, f"ALTER TABLE {keyspace}.c2 ADD t text", ConfigurationException,
          f'{keyspace}.c2: Cannot have a non counter column ("t") in a counter table')
    fails(session, f"ALTER TABLE {keyspace}.plain ADD c counter", ConfigurationException,
          f'{keyspace}.plain: Cannot have a counter column ("c") in a non counter column table')
    session.execute(f"ALTER TABLE {keyspace}.c2 DROP c")
    assert flags(session, keyspace, "c2") == {"compound", "counter"}
    fails(session, f"ALTER TABLE {keyspace}.c2 ADD x int", ConfigurationException,
          f'{keyspace}.c2: Cannot have a non counter column ("x") in a counter table')
    fails(session, f"ALTER TABLE {keyspace}.c2 ADD c counter", InvalidRequest,
          "Cannot re-add previously dropped counter column c")
    # Still a counter table for writes, with no counter column left.
    fails(session, f"INSERT INTO {keyspace}.c2 (k) VALUES (1)", InvalidRequest,
          "INSERT statements are not allowed on counter tables, use UPDATE instead")
    session.execute(f"ALTER TABLE {keyspace}.c2 ADD d counter")


def test_counter_tables_take_no_default_ttl(session, keyspace):
    fails(session,
          f"CREATE TABLE {keyspace}.cttl (k int PRIMARY KEY, c counter) WITH default_time_to_live = 2",
          InvalidRequest, "Cannot set default_time_to_live on a table with counters")
    session.execute(f"CREATE TABLE {keyspace}.cttl2 (k int PRIMARY KEY, c counter)")
    fails(session, f"ALTER TABLE {keyspace}.cttl2 WITH default_time_to_live = 2",
          InvalidRequest, "Cannot set default_time_to_live on a table with counters")
    session.execute(f"ALTER TABLE {keyspace}.cttl2 WITH default_time_to_live = 0")


def test_a_static_counter_makes_a_counter_table(session, keyspace):
    fails(session,
          f"CREATE TABLE {keyspace}.sc (k int, c int, s counter static, v int, PRIMARY KEY (k, c))",
          InvalidRequest, "Cannot mix counter and non counter columns in the same table")


def test_user_types_take_no_counters(session, keyspace):
    fails(session, f"CREATE TYPE {keyspace}.withcounter (a counter)", InvalidRequest,
          "A user type cannot contain counters")
    session.execute(f"CREATE TYPE {keyspace}.nocounter (a int)")
    fails(session, f"ALTER TYPE {keyspace}.nocounter ADD c counter", InvalidRequest,
          "A user type cannot contain counters")


# --- messages ---------------------------------------------------------------------------------

def test_an_existing_type_name_is_invalid(session, keyspace):
    session.execute(f"CREATE TYPE {keyspace}.taken (a int)")
    fails(session, f"CREATE TYPE {keyspace}.taken (a int)", InvalidRequest,
          "A user type with name 'taken' already exists")
    session.execute(f"CREATE TYPE IF NOT EXISTS {keyspace}.taken (a int)")


@pytest.mark.parametrize("options, error, message", [
    ("gc_grace_seconds = -1", ConfigurationException,
     "gc_grace_seconds must be greater than or equal to 0 (got -1)"),
    ("default_time_to_live = -5", ConfigurationException,
     "default_time_to_live must be greater than or equal to 0 (got -5)"),
    ("gc_grace_seconds = 'abc'", SyntaxException,
     "Invalid integer value abc for 'gc_grace_seconds'"),
    ("compression = {'class': 'FooCompressor'}", ConfigurationException,
     "Could not create Compression for type org.apache.cassandra.io.compress.FooCompressor"),
    ("compression = {'chunk_length_in_kb': '3'}", ConfigurationException,
     "Missing sub-option 'class' for the 'compression' option."),
    ("compression = {'class': 'LZ4Compressor', 'min_compress_ratio': 0.5}",
     ConfigurationException, "min_compress_ratio can either be 0 or greater than or equal to 1"),
    ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 3}",
     ConfigurationException, "chunk_length_in_kb must be a power of 2"),
    ("compression = {'class': 'LZ4Compressor', 'compression_level': 3}",
     ConfigurationException, "Unknown compression options compression_level"),
    ("compression = {'enabled': false, 'class': 'LZ4Compressor'}", ConfigurationException,
     "If the 'enabled' option is set to false no other options must be specified"),
    ("compression = {'class': ''}", ConfigurationException,
     "The 'class' option must not be empty. To disable compression use 'enabled' : false"),
    ("compaction = {'class': 'LeveledCompactionStrategy', 'fanout_size': '90', "
     "'sstable_size_in_mb': '1089'}", ConfigurationException,
     "your maxSSTableSize must be absurdly high to compute"),
])
def test_table_option_errors(session, keyspace, options, error, message):
    fails(session, f"CREATE TABLE {keyspace}.bad_options (a int PRIMARY KEY, b int) WITH {options}",
          error, message)


@pytest.mark.parametrize("definition, message", [
    ("(a int PRIMARY KEY, b int static)",
     "Static columns are only useful (and thus allowed) if the table has at least one clustering column"),
    ("(a int PRIMARY KEY, a int)", "Duplicate column 'a' declaration for table '{ks}.bad_structure'"),
    ("(a int, b int, PRIMARY KEY (a, c))",
     "Unknown column 'c' referenced in PRIMARY KEY for table 'bad_structure'"),
    ("(a int, b int, PRIMARY KEY (a, a))",
     "Duplicate column 'a' in PRIMARY KEY clause for table 'bad_structure'"),
    ("(a int, b int static, PRIMARY KEY (a, b))", "Static column 'b' cannot be part of the PRIMARY KEY"),
    ("(a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (c DESC, b ASC)",
     "The order of columns in the CLUSTERING ORDER directive must match that of the clustering "
     "columns (b must appear before c)"),
    ("(a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (c DESC)",
     "Missing CLUSTERING ORDER for column b"),
    # CASSANDRA-17818 (4.1.3): the columns that are not clustering columns are named.
    ("(a int, b int, c int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC, c ASC)",
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [c] are not "
     "clustering columns"),
    ("(a int, b int, c int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (a ASC)",
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [a] are not "
     "clustering columns"),
    ("(a int, b int, c int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (a ASC, x DESC)",
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [a, x] are not "
     "clustering columns"),
    ("(a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b ASC, b DESC)",
     "Duplicate column 'b' in CLUSTERING ORDER BY clause for table '{ks}.bad_structure'"),
    # CQL3Type.RawCollection and RawUT.
    ("(k int PRIMARY KEY, t set<set<int>>)",
     "Non-frozen collections are not allowed inside collections: set<set<int>>"),
    ("(k int PRIMARY KEY, t map<int, list<int>>)",
     "Non-frozen collections are not allowed inside collections: map<int, list<int>>"),
    ("(k int PRIMARY KEY, t list<plain_udt>)",
     "Non-frozen UDTs are not allowed inside collections: list<plain_udt>"),
    ("(k int PRIMARY KEY, v frozen<otherks.mytype>)",
     "Statement on keyspace {ks} cannot refer to a user type in keyspace otherks; user types can "
     "only be used in the keyspace they are defined in"),
    ("(k int PRIMARY KEY, v map<int, frozen<otherks.mytype>>)",
     "Statement on keyspace {ks} cannot refer to a user type in keyspace otherks; user types can "
     "only be used in the keyspace they are defined in"),
])
def test_create_table_structure_errors(session, keyspace, definition, message):
    session.execute(f"CREATE TYPE IF NOT EXISTS {keyspace}.plain_udt (a int)")
    fails(session, f"CREATE TABLE {keyspace}.bad_structure {definition}", InvalidRequest,
          message.format(ks=keyspace))


# --- CREATE TABLE ... WITH ID -----------------------------------------------------------------

def test_create_table_with_id(session, keyspace):
    table_id = uuid.UUID("34da5dd1-b9cc-4278-aee5-0769e58b10e1")
    session.execute(f"CREATE TABLE {keyspace}.with_id (pk int PRIMARY KEY, a int) WITH ID = {table_id}")
    row = session.execute(
        "SELECT id FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 'with_id'",
        [keyspace]).one()
    assert row.id == table_id
    session.execute(f"INSERT INTO {keyspace}.with_id (pk, a) VALUES (1, 1)")
    fails(session, f"CREATE TABLE {keyspace}.same_id (pk int PRIMARY KEY) WITH ID = {table_id}",
          InvalidRequest, f"Table id {table_id} is already used by table {keyspace}.with_id")
    fails(session, f"ALTER TABLE {keyspace}.with_id WITH ID = {uuid.uuid4()}",
          ConfigurationException, "Cannot alter table id.")
    # Dropped and created again under its id: the old rows are gone.
    session.execute(f"DROP TABLE {keyspace}.with_id")
    session.execute(f"CREATE TABLE {keyspace}.with_id (pk int PRIMARY KEY, a int) "
                    f"WITH id = '{table_id}' AND comment = 'again'")
    assert list(session.execute(f"SELECT * FROM {keyspace}.with_id")) == []
    fails(session, f"CREATE TABLE {keyspace}.bad_id (pk int PRIMARY KEY) WITH ID = 'nope'",
          ConfigurationException, "Invalid table id")


# --- options khata reports as given -----------------------------------------------------------

def test_reported_options_are_kept_as_given(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.opts (k int PRIMARY KEY, v int) WITH bloom_filter_fp_chance = 0.1 "
        "AND caching = {'keys': 'none', 'rows_per_partition': '10'} AND crc_check_chance = 0.5 "
        "AND speculative_retry = '95PERCENTILE' AND additional_write_policy = '20ms' "
        "AND read_repair = 'none' AND min_index_interval = 64 AND max_index_interval = 1024 "
        "AND memtable_flush_period_in_ms = 3600000 AND cdc = true")
    row = session.execute(
        "SELECT * FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 'opts'",
        [keyspace]).one()
    assert row.bloom_filter_fp_chance == 0.1
    assert dict(row.caching) == {"keys": "NONE", "rows_per_partition": "10"}
    assert row.crc_check_chance == 0.5
    assert row.speculative_retry == "95p"
    assert row.additional_write_policy == "20ms"
    assert row.read_repair == "NONE"
    assert (row.min_index_interval, row.max_index_interval) == (64, 1024)
    assert row.memtable_flush_period_in_ms == 3600000
    assert row.cdc is True
    describe = session.execute(f"DESCRIBE TABLE {keyspace}.opts").one().create_statement
    for line in ["bloom_filter_fp_chance = 0.1", "caching = {'keys': 'NONE', 'rows_per_partition': '10'}",
                 "crc_check_chance = 0.5", "speculative_retry = '95p'", "cdc = true"]:
        assert line in describe, describe
    session.execute(f"ALTER TABLE {keyspace}.opts WITH speculative_retry = 'ALWAYS'")
    assert session.execute(
        "SELECT speculative_retry, bloom_filter_fp_chance FROM system_schema.tables "
        "WHERE keyspace_name = %s AND table_name = 'opts'", [keyspace]).one() == ("ALWAYS", 0.1)


def test_crc_check_chance_in_the_compression_map_still_counts(session, keyspace):
    """Cassandra's TableAttributes takes crc_check_chance from the compression map, where it
    was before CASSANDRA-9839, unless the table option is given too (compression_test's
    test_compression_cql_options)."""
    table = f"{keyspace}.crc_in_compression"
    chance = lambda: session.execute(
        "SELECT crc_check_chance FROM system_schema.tables WHERE keyspace_name = %s "
        "AND table_name = 'crc_in_compression'", [keyspace]).one().crc_check_chance
    session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY) WITH compression = "
                    "{'class': 'DeflateCompressor', 'chunk_length_in_kb': 256} "
                    "AND crc_check_chance = 0.25")
    assert chance() == 0.25
    session.execute(f"ALTER TABLE {table} WITH compression = {{'class': 'DeflateCompressor', "
                    "'chunk_length_in_kb': 256, 'crc_check_chance': 0.6}")
    assert chance() == 0.6
    session.execute(f"ALTER TABLE {table} WITH compression = {{'class': 'LZ4Compressor', "
                    "'crc_check_chance': 0.7} AND crc_check_chance = 0.3")
    assert chance() == 0.3


@pytest.mark.parametrize("options, error, message", [
    ("bloom_filter_fp_chance = 1.23", ConfigurationException,
     "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 1.23)"),
    ("bloom_filter_fp_chance = 'x'", SyntaxException, "Invalid double value x for 'bloom_filter_fp_chance'"),
    ("crc_check_chance = 2", ConfigurationException,
     "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 2.0)"),
    ("min_index_interval = 0", ConfigurationException,
     "min_index_interval must be greater than or equal to 1 (got 0)"),
    ("max_index_interval = 100", ConfigurationException,
     "max_index_interval must be greater than or equal to min_index_interval (128) (got 100)"),
    ("memtable_flush_period_in_ms = -1", ConfigurationException,
     "memtable_flush_period_in_ms must be greater than or equal to 0 (got -1)"),
    ("caching = {'keys': 'SOME'}", ConfigurationException,
     "Invalid value 'SOME' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"),
    ("caching = {'foo': 'ALL'}", ConfigurationException,
     "Invalid caching sub-options [foo]: only 'keys' and 'rows_per_partition' are allowed"),
    ("speculative_retry = 'sometimes'", ConfigurationException,
     "Invalid value sometimes for option 'speculative_retry'"),
])
def test_reported_option_errors(session, keyspace, options, error, message):
    fails(session, f"CREATE TABLE {keyspace}.bad_reported (a int PRIMARY KEY, b int) WITH {options}",
          error, message)


def test_compaction_and_compression_maps_are_kept_as_given(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.maps (a int PRIMARY KEY, b int) WITH compaction = "
        "{'class': 'LeveledCompactionStrategy', 'tombstone_threshold': '0.3'} "
        "AND compression = {'class': 'ZstdCompressor', 'chunk_length_in_kb': '32'}")
    row = session.execute(
        "SELECT compaction, compression FROM system_schema.tables "
        "WHERE keyspace_name = %s AND table_name = 'maps'", [keyspace]).one()
    assert dict(row.compaction) == {
        "class": "org.apache.cassandra.db.compaction.LeveledCompactionStrategy",
        "max_threshold": "32", "min_threshold": "4", "tombstone_threshold": "0.3"}
    assert dict(row.compression) == {
        "class": "org.apache.cassandra.io.compress.ZstdCompressor", "chunk_length_in_kb": "32"}
    describe = session.execute(f"DESCRIBE TABLE {keyspace}.maps").one().create_statement
    assert "'class': 'org.apache.cassandra.io.compress.ZstdCompressor'" in describe, describe
    session.execute(f"INSERT INTO {keyspace}.maps (a, b) VALUES (1, 1)")
    assert list(session.execute(f"SELECT b FROM {keyspace}.maps WHERE a = 1")) == [(1,)]


def test_date_tiered_compaction_is_taken_as_cassandra_4_takes_it(session, keyspace):
    # Deprecated, but still in Cassandra 4.1: a schema written for 3.x loads.
    session.execute(
        f"CREATE TABLE {keyspace}.dtcs (a int PRIMARY KEY, b int) WITH compaction = "
        "{'class': 'DateTieredCompactionStrategy', 'base_time_seconds': '3600', "
        "'max_sstable_age_days': '365'}")
    row = session.execute(
        "SELECT compaction FROM system_schema.tables "
        "WHERE keyspace_name = %s AND table_name = 'dtcs'", [keyspace]).one()
    assert dict(row.compaction)["class"] == \
        "org.apache.cassandra.db.compaction.DateTieredCompactionStrategy"
    fails(session, f"CREATE TABLE {keyspace}.dtcs2 (a int PRIMARY KEY) WITH compaction = "
                   "{'class': 'DateTieredCompactionStrategy', 'foo': '1'}",
          ConfigurationException,
          "Properties specified [foo] are not understood by DateTieredCompactionStrategy")
    session.execute(f"INSERT INTO {keyspace}.dtcs (a, b) VALUES (1, 1)")
    assert list(session.execute(f"SELECT b FROM {keyspace}.dtcs WHERE a = 1")) == [(1,)]


def test_unified_compaction_is_taken_as_cassandra_5_takes_it(session, keyspace):
    """Cassandra 5.0's UnifiedCompactionStrategy: its options checked, kept as given (with
    the thresholds Cassandra adds to every strategy's options), shown by DESCRIBE; khata
    compacts the table by its first scaling parameter (T<f> tiered, L<f> leveled)."""
    session.execute(
        f"CREATE TABLE {keyspace}.ucs (a int PRIMARY KEY, b int) WITH compaction = "
        "{'class': 'UnifiedCompactionStrategy', 'scaling_parameters': 'L10, T4', "
        "'target_sstable_size': '256MiB', 'base_shard_count': '4'}")
    row = session.execute(
        "SELECT compaction FROM system_schema.tables "
        "WHERE keyspace_name = %s AND table_name = 'ucs'", [keyspace]).one()
    assert dict(row.compaction) == {
        "class": "org.apache.cassandra.db.compaction.UnifiedCompactionStrategy",
        "scaling_parameters": "L10, T4", "target_sstable_size": "256MiB",
        "base_shard_count": "4", "max_threshold": "32", "min_threshold": "4"}
    describe = session.execute(f"DESCRIBE TABLE {keyspace}.ucs").one().create_statement
    assert "'class': 'org.apache.cassandra.db.compaction.UnifiedCompactionStrategy'" in describe
    session.execute(f"ALTER TABLE {keyspace}.ucs WITH compaction = "
                    "{'class': 'UnifiedCompactionStrategy'}")
    for options, message in [
            ("'scaling_parameters': 'X3'", "Unsupported scaling parameter format X3"),
            ("'scaling_parameters': 'T1'", "Unsupported scaling parameter format T1"),
            ("'foo': '1'", "Properties specified [foo] are not understood by "
                           "UnifiedCompactionStrategy"),
            ("'base_shard_count': '0'",
             "Invalid configuration, base_shard_count should be positive: 0")]:
        fails(session, f"CREATE TABLE {keyspace}.ucs2 (a int PRIMARY KEY) WITH compaction = "
                       f"{{'class': 'UnifiedCompactionStrategy', {options}}}",
              ConfigurationException, message)
    session.execute(f"INSERT INTO {keyspace}.ucs (a, b) VALUES (1, 1)")
    assert list(session.execute(f"SELECT b FROM {keyspace}.ucs WHERE a = 1")) == [(1,)]



@pytest.mark.parametrize("given, kept", [
    # CompressionParams.asMap: min_compress_ratio as a double, and not at all when 0.
    ("{'class': 'LZ4Compressor', 'min_compress_ratio': 2}",
     {"class": "org.apache.cassandra.io.compress.LZ4Compressor", "chunk_length_in_kb": "16",
      "min_compress_ratio": "2.0"}),
    ("{'class': 'LZ4Compressor', 'min_compress_ratio': 0}",
     {"class": "org.apache.cassandra.io.compress.LZ4Compressor", "chunk_length_in_kb": "16"}),
    # An empty map names no compressor: no compression (CompressionParams.fromMap).
    ("{}", {"enabled": "false"}),
])
def test_compression_maps_as_cassandra_keeps_them(session, keyspace, given, kept):
    session.execute(f"DROP TABLE IF EXISTS {keyspace}.kept_compression")
    session.execute(f"CREATE TABLE {keyspace}.kept_compression (a int PRIMARY KEY, b int) "
                    f"WITH compression = {given}")
    row = session.execute(
        "SELECT compression FROM system_schema.tables "
        "WHERE keyspace_name = %s AND table_name = 'kept_compression'", [keyspace]).one()
    assert dict(row.compression) == kept
    session.execute(f"INSERT INTO {keyspace}.kept_compression (a, b) VALUES (1, 1)")
    assert list(session.execute(f"SELECT b FROM {keyspace}.kept_compression")) == [(1,)]

def test_built_indexes_are_listed_in_index_info(cluster, session, keyspace):
    """system."IndexInfo" as Cassandra 4.1 keeps it (SystemKeyspace.BuiltIndexes): a row per
    built index, keyed by its keyspace (the column is table_name all the same), value null."""
    table = cluster.metadata.keyspaces["system"].tables["IndexInfo"]
    assert [c.name for c in table.partition_key] == ["table_name"]
    assert [c.name for c in table.clustering_key] == ["index_name"]
    assert table.columns["value"].cql_type == "blob"

    def listed():
        rows = session.execute('SELECT table_name, index_name, value FROM system."IndexInfo" '
                               "WHERE table_name = %s", [keyspace])
        return [tuple(r) for r in rows if r.index_name.startswith("info_")]

    session.execute(f"CREATE TABLE {keyspace}.info_t (a int PRIMARY KEY, b int, c int)")
    session.execute(f"INSERT INTO {keyspace}.info_t (a, b, c) VALUES (1, 2, 3)")
    session.execute(f"CREATE INDEX info_b ON {keyspace}.info_t (b)")
    session.execute(f"CREATE INDEX info_c ON {keyspace}.info_t (c)")
    assert listed() == [(keyspace, "info_b", None), (keyspace, "info_c", None)]
    session.execute(f"DROP INDEX {keyspace}.info_b")
    assert listed() == [(keyspace, "info_c", None)]
    session.execute(f"DROP TABLE {keyspace}.info_t")
    assert listed() == []


def test_replication_above_the_nodes_warns(session):
    """CREATE and ALTER KEYSPACE warn as Cassandra 4.1 does when the factor exceeds the nodes
    (one here), and an ALTER that raises it reminds the user to repair."""
    dc = session.execute("SELECT data_center FROM system.local").one().data_center
    for cql, warnings in [
        ("CREATE KEYSPACE rfwarn WITH replication = "
         "{'class': 'SimpleStrategy', 'replication_factor': 3}",
         ["Your replication factor 3 for keyspace rfwarn is higher than the number of nodes 1"]),
        ("ALTER KEYSPACE rfwarn WITH replication = "
         f"{{'class': 'NetworkTopologyStrategy', '{dc}': 2}}",
         [f"Your replication factor 2 for keyspace rfwarn is higher than the number of nodes 1 "
          f"for datacenter {dc}"]),
        ("ALTER KEYSPACE rfwarn WITH replication = "
         f"{{'class': 'NetworkTopologyStrategy', '{dc}': 4}}",
         [f"Your replication factor 4 for keyspace rfwarn is higher than the number of nodes 1 "
          f"for datacenter {dc}",
          "When increasing replication factor you need to run a full (-full) repair to "
          "distribute the data."]),
        ("ALTER KEYSPACE rfwarn WITH replication = "
         "{'class': 'SimpleStrategy', 'replication_factor': 1}", []),
        ("CREATE KEYSPACE IF NOT EXISTS rfwarn WITH replication = "
         "{'class': 'SimpleStrategy', 'replication_factor': 3}", []),
    ]:
        future = session.execute_async(cql)
        future.result()
        assert (future.warnings or []) == warnings, cql
    session.execute("DROP KEYSPACE rfwarn")


# --- system keyspaces ---------------------------------------------------------------------------

RF1 = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


@pytest.mark.parametrize("statement,error,message", [
    # ClientState.preventSystemKSSchemaModification, from each statement's authorize(): before
    # anything else is checked (the table need not exist).
    ("ALTER TABLE system.local WITH comment = ''", Unauthorized,
     "system keyspace is not user-modifiable."),
    ("DROP TABLE system.local", Unauthorized, "system keyspace is not user-modifiable."),
    ("DROP TABLE IF EXISTS system.nope", Unauthorized, "system keyspace is not user-modifiable."),
    ("ALTER TABLE system_schema.tables WITH comment = ''", Unauthorized,
     "system_schema keyspace is not user-modifiable."),
    ("CREATE TABLE system.mine (k int PRIMARY KEY)", Unauthorized,
     "system keyspace is not user-modifiable."),
    ("CREATE INDEX ON system.local (rack)", Unauthorized,
     "system keyspace is not user-modifiable."),
    ("CREATE TYPE system.t (a int)", Unauthorized, "system keyspace is not user-modifiable."),
    ("DROP KEYSPACE system_schema", Unauthorized,
     "system_schema keyspace is not user-modifiable."),
    (f"ALTER KEYSPACE system WITH replication = {RF1}", Unauthorized,
     "system keyspace is not user-modifiable."),
    ("CREATE TABLE system_views.mine (k int PRIMARY KEY)", Unauthorized,
     "system_views keyspace is not user-modifiable."),
    ("DROP TABLE system_traces.events", Unauthorized, "Cannot DROP <table system_traces.events>"),
    ("ALTER TABLE system_traces.sessions WITH comment = ''", Unauthorized,
     "Cannot ALTER <table system_traces.sessions>"),
    ("CREATE TABLE system_traces.mine (k int PRIMARY KEY)", Unauthorized,
     "Cannot CREATE <all tables in system_traces>"),
    ("DROP KEYSPACE system_traces", Unauthorized, "Cannot DROP <keyspace system_traces>"),
    ("DROP KEYSPACE system_auth", Unauthorized, "Cannot DROP <keyspace system_auth>"),
    ("DROP KEYSPACE IF EXISTS system_distributed", Unauthorized,
     "Cannot DROP <keyspace system_distributed>"),
    ("DROP TABLE system_auth.roles", Unauthorized, "Cannot DROP <table system_auth.roles>"),
    ("CREATE TABLE system_distributed.mine (k int PRIMARY KEY)", Unauthorized,
     "Cannot CREATE <all tables in system_distributed>"),
    # AlterSchemaStatement.execute, for statements whose authorize() names no such resource.
    (f"CREATE KEYSPACE system WITH replication = {RF1}", InvalidRequest,
     "System keyspace 'system' is not user-modifiable"),
    ("DROP INDEX IF EXISTS system.nope", InvalidRequest,
     "System keyspace 'system' is not user-modifiable"),
])
def test_system_keyspaces_are_not_user_modifiable(session, statement, error, message):
    fails(session, statement, error, message)


def test_system_traces_replication_may_be_altered(session, dc):
    """ClientState.preventSystemKSSchemaModification lets ALTER KEYSPACE change a replicated
    system keyspace's replication; the replication warnings skip system keyspaces but for the
    reminder to repair after raising the factor."""
    simple = "org.apache.cassandra.locator.SimpleStrategy"
    assert replication(session, "system_traces") == {"class": simple, "replication_factor": "2"}
    try:
        future = session.execute_async("ALTER KEYSPACE system_traces WITH replication = "
                                       "{'class': 'NetworkTopologyStrategy', 'replication_factor': 3}")
        future.result()
        assert future.warnings == [
            "When increasing replication factor you need to run a full (-full) repair to "
            "distribute the data."]
        assert replication(session, "system_traces") == {"class": NTS, dc: "3"}
        # The driver's metadata follows the schema change event.
        strategy = session.cluster.metadata.keyspaces["system_traces"].replication_strategy
        assert strategy.export_for_schema() == \
            f"{{'class': 'NetworkTopologyStrategy', '{dc}': '3'}}"
        session.execute("ALTER KEYSPACE system_traces WITH replication = {'class': 'SimpleStrategy'}")
        assert replication(session, "system_traces") == {"class": simple, "replication_factor": "1"}
        # Traces are still written and read.
        traced = session.execute("SELECT key FROM system.local", trace=True)
        assert traced.get_query_trace(max_wait_sec=10).events
    finally:
        session.execute("ALTER KEYSPACE system_traces WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
    assert replication(session, "system_traces") == {"class": simple, "replication_factor": "2"}


# Cassandra 4.1's AuthKeyspace and SystemDistributedKeyspace: their tables, each table's
# partition key, clustering and regular columns, and the keyspace's replication factor.
REPLICATED_SYSTEM_KEYSPACES = {
    "system_auth": ("1", {
        "network_permissions": (["role"], [], ["dcs"]),
        "resource_role_permissons_index": (["resource"], ["role"], []),
        "role_members": (["role"], ["member"], []),
        "role_permissions": (["role"], ["resource"], ["permissions"]),
        "roles": (["role"], [], ["can_login", "is_superuser", "member_of", "salted_hash"]),
    }),
    "system_distributed": ("3", {
        "parent_repair_history": (["parent_id"], [], [
            "columnfamily_names", "exception_message", "exception_stacktrace", "finished_at",
            "keyspace_name", "options", "requested_ranges", "started_at", "successful_ranges"]),
        "partition_denylist": (["ks_name", "table_name"], ["key"], []),
        "repair_history": (["keyspace_name", "columnfamily_name"], ["id"], [
            "coordinator", "coordinator_port", "exception_message", "exception_stacktrace",
            "finished_at", "parent_id", "participants", "participants_v2", "range_begin",
            "range_end", "started_at", "status"]),
        "view_build_status": (["keyspace_name", "view_name"], ["host_id"], ["status"]),
    }),
}


@pytest.mark.parametrize("name", sorted(REPLICATED_SYSTEM_KEYSPACES))
def test_system_auth_and_system_distributed_always_exist(session, name):
    """Both keyspaces exist from the first start, as in Cassandra: a CREATE finds them there
    (AlreadyExists, or nothing with IF NOT EXISTS), system_schema and the driver's metadata
    list them and their tables, and their tables read (empty: khata has no roles, repairs
    that record history, views or denylist) and may be truncated."""
    rf, tables = REPLICATED_SYSTEM_KEYSPACES[name]
    with pytest.raises(AlreadyExists) as raised:
        session.execute(f"CREATE KEYSPACE {name} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert raised.value.keyspace == name and not raised.value.table
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {name} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert replication(session, name) == {
        "class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": rf}
    listed = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", [name])
    assert sorted(r.table_name for r in listed) == sorted(tables)
    columns = session.execute(
        "SELECT table_name, column_name, kind, position FROM system_schema.columns "
        "WHERE keyspace_name = %s", [name])
    shapes = {t: ([], [], []) for t in tables}
    for c in sorted(columns, key=lambda c: (c.table_name, c.position, c.column_name)):
        kind = ["partition_key", "clustering", "regular"].index(c.kind)
        shapes[c.table_name][kind].append(c.column_name)
    assert shapes == {t: tuple(shape) for t, shape in tables.items()}
    metadata = session.cluster.metadata.keyspaces[name]
    assert sorted(metadata.tables) == sorted(tables)
    for table in tables:
        assert list(session.execute(f"SELECT * FROM {name}.{table}")) == []
    # TRUNCATE asks for MODIFY, which Cassandra grants on them as on system_traces.
    first = sorted(tables)[0]
    session.execute(f"TRUNCATE {name}.{first}")


def test_system_auth_and_system_distributed_are_described_as_system_keyspaces(session):
    """DESCRIBE lists them with the other system keyspaces and leaves them out of the schema
    but for the full schema, as it does system_traces."""
    keyspaces = [r.name for r in session.execute("DESCRIBE KEYSPACES")]
    for name in ("system_auth", "system_distributed", "system_traces"):
        assert name in keyspaces
    schema = {r.keyspace_name for r in session.execute("DESCRIBE SCHEMA")}
    assert not schema & {"system_auth", "system_distributed", "system_traces"}
    full = {(r.keyspace_name, r.name) for r in session.execute("DESCRIBE FULL SCHEMA")}
    assert ("system_auth", "roles") in full and ("system_distributed", "repair_history") in full
    described = "\n".join(r.create_statement
                          for r in session.execute("DESCRIBE KEYSPACE system_auth"))
    assert "CREATE KEYSPACE system_auth WITH replication = {'class': 'SimpleStrategy', " \
        "'replication_factor': '1'}" in described
    assert "CREATE TABLE system_auth.roles (" in described
    assert "AND comment = 'role definitions'" in described
    assert "AND gc_grace_seconds = 7776000" in described
    repair = "\n".join(r.create_statement for r in
                       session.execute("DESCRIBE TABLE system_distributed.repair_history"))
    assert "PRIMARY KEY ((keyspace_name, columnfamily_name), id)" in repair
    assert "AND default_time_to_live = 2592000" in repair
    assert "'class': 'org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy'" in repair


def test_system_auth_replication_may_be_altered(session, dc):
    """As system_traces: ALTER KEYSPACE may change the replication of system_auth and
    system_distributed, and their tables are still read."""
    simple = "org.apache.cassandra.locator.SimpleStrategy"
    try:
        session.execute("ALTER KEYSPACE system_auth WITH replication = "
                        "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
        assert replication(session, "system_auth") == {"class": NTS, dc: "1"}
        assert list(session.execute("SELECT * FROM system_auth.roles")) == []
    finally:
        session.execute("ALTER KEYSPACE system_auth WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert replication(session, "system_auth") == {"class": simple, "replication_factor": "1"}


@pytest.mark.parametrize("given, kept", [("'yes'", True), ("1", True), ("'TRUE'", True),
                                         ("'no'", False), ("false", False)])
def test_durable_writes_reads_booleans_as_cassandra(session, given, kept):
    # PropertyDefinitions.getBoolean: 'yes' and 1 are true, and a durable keyspace's writes go
    # through the commit log.
    name = f"sc_dw_{uuid.uuid4().hex[:8]}"
    session.execute(f"CREATE KEYSPACE {name} WITH replication = "
                    f"{{'class': 'SimpleStrategy', 'replication_factor': 1}} "
                    f"AND durable_writes = {given}")
    try:
        row = session.execute("SELECT durable_writes FROM system_schema.keyspaces "
                              "WHERE keyspace_name = %s", [name]).one()
        assert row.durable_writes is kept
    finally:
        session.execute(f"DROP KEYSPACE {name}")


def test_memtable_configurations_and_the_noop_compressor(session, keyspace):
    fails(session, f"CREATE TABLE {keyspace}.mt (k int PRIMARY KEY) WITH memtable = 'unknown'",
          ConfigurationException, 'Memtable configuration "unknown" not found.')
    session.execute(f"CREATE TABLE {keyspace}.mt (k int PRIMARY KEY) WITH memtable = 'default' "
                    "AND compression = {'class': 'NoopCompressor'}")
    fails(session, f"ALTER TABLE {keyspace}.mt WITH memtable = 'unknown2'",
          ConfigurationException, 'Memtable configuration "unknown2" not found.')
    session.execute(f"INSERT INTO {keyspace}.mt (k) VALUES (1)")
    assert session.execute(f"SELECT k FROM {keyspace}.mt").one().k == 1


def test_concurrent_changes_to_one_table_are_all_applied(session, keyspace):
    # Cassandra applies schema changes one at a time, each to the schema the last one left:
    # forty concurrent ALTER TABLE ... ADD of distinct columns leave forty columns.
    from concurrent.futures import ThreadPoolExecutor
    session.execute(f"CREATE TABLE {keyspace}.conc (k int PRIMARY KEY, d0 int, d1 int, d2 int)")
    statements = [f"ALTER TABLE {keyspace}.conc ADD c{i} int" for i in range(40)]
    statements += [f"ALTER TABLE {keyspace}.conc DROP d{i}" for i in range(3)]
    statements.append(f"ALTER TABLE {keyspace}.conc WITH default_time_to_live = 77")
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(session.execute, statements))
    columns = {r.column_name for r in session.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s "
        "AND table_name = 'conc'", [keyspace])}
    assert columns == {"k"} | {f"c{i}" for i in range(40)}
    assert session.execute(
        "SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = %s "
        "AND table_name = 'conc'", [keyspace]).one().default_time_to_live == 77
