"""Secondary indexes (`CREATE INDEX`) through the Python driver and cqlsh.

An index on a regular column is kept up to date on every write, answers `WHERE v = ?` alone
(across partitions, paged) and with the partition key, forgets values that were overwritten,
deleted or expired, is built from the data already in the table, and is refused where
Cassandra refuses it, with Cassandra's messages. Indexes on the elements of collections
(`values()`, `keys()`, `entries()`) answer `CONTAINS`, `CONTAINS KEY` and `m[key] = value`;
indexes on clustering, partition key and static columns answer `=` on them.

The empty value is indexed like any other; a value of 64 KiB or more is refused on write and
in a query, with Cassandra's messages. Index names are ASCII word characters, as Cassandra
requires, and short enough for the index's storage directory.
"""

from __future__ import annotations

import time

import pytest
from cassandra import InvalidRequest
from cassandra.protocol import ConfigurationException
from cassandra.query import BatchStatement, SimpleStatement

from khata_helpers import wait_until

FILTERING = "use ALLOW FILTERING"


@pytest.fixture(scope="module")
def ks(session, keyspace):
    session.execute(
        f"CREATE TABLE {keyspace}.users (username text PRIMARY KEY, email text, "
        "country text, age int)")
    session.execute(f"CREATE INDEX ON {keyspace}.users (email)")
    session.execute(
        f"CREATE TABLE {keyspace}.messages (channel_id int, bucket int, message_id int, "
        "author text, body text, PRIMARY KEY ((channel_id, bucket), message_id)) "
        "WITH CLUSTERING ORDER BY (message_id DESC)")
    session.execute(f"CREATE INDEX by_author ON {keyspace}.messages (author)")
    return keyspace


def emails(session, ks, email):
    rows = session.execute(f"SELECT username FROM {ks}.users WHERE email = %s", (email,))
    return sorted(r.username for r in rows)


def test_an_index_finds_rows_by_a_regular_column(session, ks):
    session.execute(f"INSERT INTO {ks}.users (username, email, age) VALUES ('ann', 'a@x', 30)")
    session.execute(f"INSERT INTO {ks}.users (username, email, age) VALUES ('bob', 'b@x', 31)")
    session.execute(f"INSERT INTO {ks}.users (username, email, age) VALUES ('ann2', 'a@x', 32)")
    assert emails(session, ks, "a@x") == ["ann", "ann2"]
    assert emails(session, ks, "b@x") == ["bob"]
    assert emails(session, ks, "nobody@x") == []


def test_overwritten_deleted_and_nulled_values_are_not_found(session, ks):
    session.execute(f"INSERT INTO {ks}.users (username, email) VALUES ('cat', 'c1@x')")
    session.execute(f"UPDATE {ks}.users SET email = 'c2@x' WHERE username = 'cat'")
    assert emails(session, ks, "c1@x") == []
    assert emails(session, ks, "c2@x") == ["cat"]
    # Back to the first value: found again under it.
    session.execute(f"UPDATE {ks}.users SET email = 'c1@x' WHERE username = 'cat'")
    assert emails(session, ks, "c1@x") == ["cat"]
    assert emails(session, ks, "c2@x") == []
    session.execute(f"DELETE email FROM {ks}.users WHERE username = 'cat'")
    assert emails(session, ks, "c1@x") == []
    session.execute(f"INSERT INTO {ks}.users (username, email) VALUES ('dan', 'd@x')")
    session.execute(f"DELETE FROM {ks}.users WHERE username = 'dan'")
    assert emails(session, ks, "d@x") == []
    session.execute(f"INSERT INTO {ks}.users (username, email) VALUES ('eve', 'e@x')")
    session.execute(f"UPDATE {ks}.users SET email = null WHERE username = 'eve'")
    assert emails(session, ks, "e@x") == []


def test_a_value_written_with_a_ttl_leaves_the_index_when_it_expires(session, ks):
    session.execute(
        f"INSERT INTO {ks}.users (username, email) VALUES ('tess', 't@x') USING TTL 1")
    assert emails(session, ks, "t@x") in (["tess"], [])
    assert wait_until(lambda: emails(session, ks, "t@x") == [], 5.0)


def test_an_index_query_with_the_partition_key(session, ks):
    session.execute(f"INSERT INTO {ks}.users (username, email) VALUES ('fay', 'f@x')")
    rows = list(session.execute(
        f"SELECT username FROM {ks}.users WHERE username = 'fay' AND email = 'f@x'"))
    assert [r.username for r in rows] == ["fay"]
    rows = list(session.execute(
        f"SELECT username FROM {ks}.users WHERE username = 'fay' AND email = 'other'"))
    assert rows == []


def test_an_index_query_pages_across_partitions_and_rows(session, ks):
    insert = session.prepare(
        f"INSERT INTO {ks}.messages (channel_id, bucket, message_id, author, body) "
        "VALUES (?, ?, ?, ?, ?)")
    expected = set()
    for channel in range(40):
        for message in range(12):
            author = "pat" if (channel + message) % 3 == 0 else f"u{message}"
            session.execute(insert, (channel, channel % 2, message, author, "hi"))
            if author == "pat":
                expected.add((channel, channel % 2, message))
    statement = SimpleStatement(
        f"SELECT channel_id, bucket, message_id, author FROM {ks}.messages WHERE author = 'pat'",
        fetch_size=17)
    result = session.execute(statement)
    seen = []
    pages = 0
    while True:
        seen.extend((r.channel_id, r.bucket, r.message_id) for r in result.current_rows)
        assert all(r.author == "pat" for r in result.current_rows)
        pages += 1
        if not result.has_more_pages:
            break
        result.fetch_next_page()
    assert pages > 5
    assert len(seen) == len(set(seen))
    assert set(seen) == expected
    # Within a partition rows come in clustering order (message_id DESC).
    by_partition = {}
    for c, b, m in seen:
        by_partition.setdefault((c, b), []).append(m)
    assert all(ms == sorted(ms, reverse=True) for ms in by_partition.values())
    count = session.execute(
        f"SELECT count(*) FROM {ks}.messages WHERE author = 'pat'").one()[0]
    assert count == len(expected)
    limited = list(session.execute(
        f"SELECT message_id FROM {ks}.messages WHERE author = 'pat' LIMIT 5"))
    assert len(limited) == 5


def test_an_index_query_with_a_token_range(session, ks):
    rows = list(session.execute(
        f"SELECT token(channel_id, bucket) AS t FROM {ks}.messages "
        "WHERE author = 'pat' AND token(channel_id, bucket) > 0"))
    assert rows and all(r.t > 0 for r in rows)


def test_other_restrictions_with_an_index_need_allow_filtering(session, ks):
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {ks}.users WHERE email = 'a@x' AND age = 30")
    rows = list(session.execute(
        f"SELECT username FROM {ks}.users WHERE email = 'a@x' AND age = 30 ALLOW FILTERING"))
    assert [r.username for r in rows] == ["ann"]
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {ks}.messages WHERE author = 'pat' AND message_id = 3")
    rows = list(session.execute(
        f"SELECT channel_id, message_id FROM {ks}.messages "
        "WHERE author = 'pat' AND message_id = 3 ALLOW FILTERING"))
    assert rows and all(r.message_id == 3 for r in rows)
    # With the partition key, a clustering restriction is not a filter.
    rows = list(session.execute(
        f"SELECT message_id FROM {ks}.messages WHERE channel_id = 0 AND bucket = 0 "
        "AND message_id > 2 AND author = 'pat'"))
    assert [r.message_id for r in rows] == [9, 6, 3]
    # A column without an index still needs ALLOW FILTERING on its own.
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {ks}.users WHERE country = 'NZ'")


def test_an_index_created_on_existing_data_is_built(session, ks):
    session.execute(f"CREATE TABLE {ks}.late (k int, c int, v text, PRIMARY KEY (k, c))")
    insert = session.prepare(f"INSERT INTO {ks}.late (k, c, v) VALUES (?, ?, ?)")
    for k in range(30):
        for c in range(5):
            session.execute(insert, (k, c, "even" if (k + c) % 2 == 0 else "odd"))
    session.execute(f"CREATE INDEX ON {ks}.late (v)")
    rows = list(session.execute(f"SELECT k, c FROM {ks}.late WHERE v = 'even'"))
    assert len(rows) == 75
    assert all((r.k + r.c) % 2 == 0 for r in rows)
    session.execute(f"INSERT INTO {ks}.late (k, c, v) VALUES (100, 0, 'even')")
    assert len(list(session.execute(f"SELECT k FROM {ks}.late WHERE v = 'even'"))) == 76
    session.execute(f"TRUNCATE {ks}.late")
    assert list(session.execute(f"SELECT k FROM {ks}.late WHERE v = 'even'")) == []


def test_a_frozen_collection_is_indexed_whole(session, ks):
    session.execute(f"CREATE TABLE {ks}.tagged (k int PRIMARY KEY, tags frozen<set<text>>)")
    session.execute(f"CREATE INDEX ON {ks}.tagged (full(tags))")
    session.execute(f"INSERT INTO {ks}.tagged (k, tags) VALUES (1, {{'b', 'a'}})")
    session.execute(f"INSERT INTO {ks}.tagged (k, tags) VALUES (2, {{'a'}})")
    rows = list(session.execute(f"SELECT k FROM {ks}.tagged WHERE tags = {{'a', 'b'}}"))
    assert [r.k for r in rows] == [1]


def test_index_names_and_duplicates(session, ks):
    session.execute(f"CREATE TABLE {ks}.named (k int PRIMARY KEY, v int, w int)")
    session.execute(f"CREATE INDEX ON {ks}.named (v)")
    with pytest.raises(InvalidRequest, match="Index named_v_idx_1 is a duplicate of existing index named_v_idx"):
        session.execute(f"CREATE INDEX ON {ks}.named (v)")
    session.execute(f"CREATE INDEX IF NOT EXISTS ON {ks}.named (v)")
    with pytest.raises(InvalidRequest, match="Index 'named_v_idx' already exists"):
        session.execute(f"CREATE INDEX named_v_idx ON {ks}.named (w)")
    session.execute(f"CREATE INDEX IF NOT EXISTS named_v_idx ON {ks}.named (w)")
    with pytest.raises(InvalidRequest, match=f"Index '{ks}.nope' doesn't exist"):
        session.execute(f"DROP INDEX {ks}.nope")
    session.execute(f"DROP INDEX IF EXISTS {ks}.nope")
    with pytest.raises(InvalidRequest,
                       match="Cannot drop column v because it has dependent secondary indexes"):
        session.execute(f"ALTER TABLE {ks}.named DROP v")
    session.execute(f"DROP INDEX {ks}.named_v_idx")
    with pytest.raises(InvalidRequest, match=FILTERING):
        session.execute(f"SELECT * FROM {ks}.named WHERE v = 1")
    session.execute(f"ALTER TABLE {ks}.named DROP v")


@pytest.mark.parametrize("ddl,message", [
    ("CREATE TABLE {ks}.counts (k int PRIMARY KEY, n counter)|CREATE INDEX ON {ks}.counts (n)",
     "Secondary indexes on counter tables aren't supported"),
    ("CREATE TABLE {ks}.solo (k int PRIMARY KEY, v int)|CREATE INDEX ON {ks}.solo (k)",
     "Cannot create secondary index on the only partition key column k"),
    ("CREATE TABLE {ks}.coll (k int PRIMARY KEY, s frozen<list<int>>)|CREATE INDEX ON {ks}.coll (s)",
     "Frozen collections are immutable and must be fully indexed"),
    ("CREATE TABLE {ks}.plain (k int PRIMARY KEY, v int)|CREATE INDEX ON {ks}.plain (full(v))",
     "full\\(\\) indexes can only be created on frozen collections"),
    ("CREATE TABLE {ks}.durs (k int PRIMARY KEY, d duration)|CREATE INDEX ON {ks}.durs (d)",
     "Secondary indexes are not supported on duration columns"),
    ("CREATE TABLE {ks}.noidx (k int PRIMARY KEY, v int)|CREATE INDEX ON {ks}.noidx (nope)",
     "Column 'nope' doesn't exist"),
])
def test_refused_indexes(session, ks, ddl, message):
    create, index = ddl.format(ks=ks).split("|")
    session.execute(create)
    with pytest.raises(InvalidRequest, match=message):
        session.execute(index)


def test_driver_metadata_and_describe(session, cluster, ks, cqlsh):
    cluster.refresh_schema_metadata()
    indexes = cluster.metadata.keyspaces[ks].indexes
    assert "users_email_idx" in indexes
    assert indexes["by_author"].index_options == {"target": "author"}
    assert indexes["by_author"].kind == "COMPOSITES"
    described = cqlsh(f"DESCRIBE TABLE {ks}.messages").stdout
    assert f"CREATE INDEX by_author ON {ks}.messages (author);" in described
    described = cqlsh(f"DESCRIBE INDEX {ks}.by_author").stdout
    assert f"CREATE INDEX by_author ON {ks}.messages (author);" in described


def test_collection_elements_and_key_columns(session, cluster, ks, cqlsh):
    session.execute(
        f"CREATE TABLE {ks}.posts (author text, day int, id int, blog text static, "
        "tags set<text>, attrs map<text, text>, PRIMARY KEY ((author, day), id))")
    session.execute(f"INSERT INTO {ks}.posts (author, day, id, blog, tags, attrs) "
                    "VALUES ('ann', 1, 1, 'a.example', {'rust', 'db'}, {'lang': 'en'})")
    for ddl in ["CREATE INDEX ON {ks}.posts (tags)",
                "CREATE INDEX ON {ks}.posts (keys(attrs))",
                "CREATE INDEX ON {ks}.posts (entries(attrs))",
                "CREATE INDEX ON {ks}.posts (author)",
                "CREATE INDEX ON {ks}.posts (id)",
                "CREATE INDEX ON {ks}.posts (blog)"]:
        session.execute(ddl.format(ks=ks))
    session.execute(f"INSERT INTO {ks}.posts (author, day, id, blog, tags, attrs) "
                    "VALUES ('bob', 2, 1, 'b.example', {'db'}, {'lang': 'fr'})")

    def ids(where, *values):
        rows = session.execute(f"SELECT author, day, id FROM {ks}.posts WHERE {where}", values)
        return sorted((r.author, r.day, r.id) for r in rows)

    assert ids("tags CONTAINS %s", "db") == [("ann", 1, 1), ("bob", 2, 1)]
    assert ids("tags CONTAINS %s", "rust") == [("ann", 1, 1)]
    assert ids("attrs CONTAINS KEY %s", "lang") == [("ann", 1, 1), ("bob", 2, 1)]
    assert ids("attrs['lang'] = %s", "fr") == [("bob", 2, 1)]
    assert ids("author = %s", "ann") == [("ann", 1, 1)]
    assert ids("id = %s", 1) == [("ann", 1, 1), ("bob", 2, 1)]
    assert ids("blog = %s", "b.example") == [("bob", 2, 1)]
    session.execute(f"UPDATE {ks}.posts SET tags = tags - {{'db'}} WHERE author = 'ann' "
                    "AND day = 1 AND id = 1")
    assert ids("tags CONTAINS %s", "db") == [("bob", 2, 1)]

    with pytest.raises(InvalidRequest, match="Cannot create index on keys of column tags "
                                             "with non-map type"):
        session.execute(f"CREATE INDEX ON {ks}.posts (keys(tags))")

    cluster.refresh_schema_metadata()
    indexes = cluster.metadata.keyspaces[ks].indexes
    assert indexes["posts_tags_idx"].index_options == {"target": "values(tags)"}
    assert indexes["posts_attrs_idx_1"].index_options == {"target": "entries(attrs)"}
    described = cqlsh(f"DESCRIBE TABLE {ks}.posts").stdout
    assert f"CREATE INDEX posts_tags_idx ON {ks}.posts (values(tags));" in described
    assert f"CREATE INDEX posts_attrs_idx ON {ks}.posts (keys(attrs));" in described


def index_names(session, ks, table):
    rows = session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s "
        "AND table_name = %s", (ks, table))
    return sorted(r.index_name for r in rows)


def test_index_names_cassandra_and_the_storage_refuse(session, ks):
    session.execute(f"CREATE TABLE {ks}.names (k int PRIMARY KEY, v int, \"café\" int, "
                    f"{'c' * 300} int)")
    # Cassandra's IndexMetadata.validate: `\\w+` in ASCII, a ConfigurationException.
    for name in ['"a-b"', '"índice"']:
        with pytest.raises(ConfigurationException, match="Illegal index name"):
            session.execute(f"CREATE INDEX {name} ON {ks}.names (v)")
    # `names.<index>-<32 hex digits>` must be one file name: 216 characters at most here. A
    # longer name once failed with a server error and left the index in the schema, without
    # storage, so that the node could not start again.
    with pytest.raises(InvalidRequest, match="more than 216 characters long"):
        session.execute(f"CREATE INDEX {'x' * 500} ON {ks}.names (v)")
    with pytest.raises(InvalidRequest, match="more than 216 characters long"):
        session.execute(f"CREATE INDEX {'x' * 217} ON {ks}.names (v)")
    assert index_names(session, ks, "names") == []
    session.execute(f"CREATE INDEX {'x' * 216} ON {ks}.names (v)")
    session.execute(f"INSERT INTO {ks}.names (k, v) VALUES (1, 7)")
    assert [r.k for r in session.execute(f"SELECT k FROM {ks}.names WHERE v = 7")] == [1]
    # Default names keep ASCII word characters only, and are cut to fit.
    session.execute(f'CREATE INDEX ON {ks}.names ("café")')
    session.execute(f"CREATE INDEX ON {ks}.names ({'c' * 300})")
    names = index_names(session, ks, "names")
    assert "names_caf_idx" in names
    long_default = [n for n in names if n.startswith("names_ccc")]
    assert len(long_default) == 1 and len(long_default[0]) == 216
    assert long_default[0].endswith("_idx")


def test_the_empty_value_is_indexed(session, ks):
    session.execute(f"CREATE TABLE {ks}.empties (k int, c int, v text, b blob, s set<text>, "
                    "PRIMARY KEY (k, c))")
    session.execute(f"INSERT INTO {ks}.empties (k, c, v, b, s) VALUES (0, 0, '', 0x, {{''}})")
    # Built from the data already there, then kept up on writes.
    for target in ["v", "b", "s"]:
        session.execute(f"CREATE INDEX ON {ks}.empties ({target})")
    session.execute(f"INSERT INTO {ks}.empties (k, c, v, b, s) VALUES (1, 0, '', 0x, {{'', 'a'}})")
    session.execute(f"INSERT INTO {ks}.empties (k, c, v, b) VALUES (2, 0, 'x', 0x00)")

    def keys(where):
        return sorted(r.k for r in session.execute(f"SELECT k FROM {ks}.empties WHERE {where}"))

    assert keys("v = ''") == [0, 1]
    assert keys("b = 0x") == [0, 1]
    assert keys("s CONTAINS ''") == [0, 1]
    assert keys("v = 'x'") == [2]
    session.execute(f"UPDATE {ks}.empties SET v = 'y' WHERE k = 0 AND c = 0")
    assert keys("v = ''") == [1]
    session.execute(f"TRUNCATE {ks}.empties")
    assert keys("v = ''") == []


BIG = 65535  # Cassandra's FBUtilities.MAX_UNSIGNED_SHORT: an indexed value must be smaller.


def too_big(table, column, size):
    return (f"Cannot index value of size {size} for index {table}_{column}_idx on "
            f"secondary_index.{table}({column}) (maximum allowed size=65535)")


def test_values_of_64k_and_more_are_not_indexed(session, ks):
    session.execute(f"CREATE TABLE {ks}.large (k int PRIMARY KEY, v blob, "
                    "tags set<blob>, m map<blob, blob>, f frozen<list<blob>>)")
    session.execute(f"CREATE TABLE {ks}.large_keys (k int PRIMARY KEY, m map<blob, blob>)")
    session.execute(f"CREATE TABLE {ks}.large_entries (k int PRIMARY KEY, m map<blob, blob>)")
    # A value written before the index existed is left out of it; the build does not fail.
    session.execute(f"INSERT INTO {ks}.large (k, v) VALUES (0, %s)", (b"x" * BIG,))
    for ddl in [f"CREATE INDEX ON {ks}.large (v)", f"CREATE INDEX ON {ks}.large (tags)",
                f"CREATE INDEX ON {ks}.large (m)", f"CREATE INDEX ON {ks}.large (full(f))",
                f"CREATE INDEX ON {ks}.large_keys (keys(m))",
                f"CREATE INDEX ON {ks}.large_entries (entries(m))"]:
        session.execute(ddl)
    small, big = b"x" * (BIG - 1), b"x" * BIG
    session.execute(f"INSERT INTO {ks}.large (k, v) VALUES (1, %s)", (small,))
    insert = session.prepare(f"INSERT INTO {ks}.large (k, v) VALUES (?, ?)")
    refused = [
        (f"INSERT INTO {ks}.large (k, v) VALUES (2, %s)", (big,), too_big("large", "v", BIG)),
        (f"UPDATE {ks}.large SET v = %s WHERE k = 1", (big,), too_big("large", "v", BIG)),
        (f"INSERT INTO {ks}.large (k, v) VALUES (2, %s) IF NOT EXISTS", (big,),
         too_big("large", "v", BIG)),
        (f"UPDATE {ks}.large SET tags = tags + %s WHERE k = 1", ({big},),
         too_big("large", "tags", BIG)),
        (f"UPDATE {ks}.large SET m[0x00] = %s WHERE k = 1", (big,), too_big("large", "m", BIG)),
        (f"INSERT INTO {ks}.large (k, f) VALUES (1, %s)", ([b"x" * (1024 * 65)],),
         too_big("large", "f", 1024 * 65 + 8)),
        (f"UPDATE {ks}.large_keys SET m[%s] = 0x00 WHERE k = 1", (big,),
         too_big("large_keys", "m", BIG)),
        # An entry is its key and value as a CompositeType: 2 + key + 1 + 2 + value + 1 bytes.
        (f"UPDATE {ks}.large_entries SET m[0x01] = %s WHERE k = 1", (b"x" * (BIG - 7),),
         too_big("large_entries", "m", BIG)),
    ]
    for statement, values, message in refused:
        with pytest.raises(InvalidRequest) as raised:
            session.execute(statement, values)
        assert message in str(raised.value), statement
    batch = BatchStatement()
    batch.add(insert, (3, big))
    with pytest.raises(InvalidRequest, match="Cannot index value of size 65535"):
        session.execute(batch)
    session.execute(f"UPDATE {ks}.large_entries SET m[0x01] = %s WHERE k = 1", (b"x" * (BIG - 8),))
    assert [r.k for r in session.execute(f"SELECT k FROM {ks}.large WHERE v = %s", (small,))] \
        == [1]
    assert list(session.execute(f"SELECT k FROM {ks}.large WHERE k IN (2, 3)")) == []
    # Cassandra's CassandraIndex.validate(ReadCommand): a query value over 64K is refused.
    session.execute(f"SELECT k FROM {ks}.large WHERE v = %s", (big,))
    with pytest.raises(InvalidRequest, match="Index expression values may not be larger than 64K"):
        session.execute(f"SELECT k FROM {ks}.large WHERE v = %s", (big + b"x",))
    with pytest.raises(InvalidRequest, match="Index expression values may not be larger than 64K"):
        session.execute(f"SELECT k FROM {ks}.large WHERE tags CONTAINS %s", (big + b"x",))


def test_an_index_with_other_clustering_restrictions_needs_allow_filtering(session, ks):
    """Served by an index on a clustering column, a query that also slices an earlier clustering
    column filters, so it needs ALLOW FILTERING as in Cassandra (SelectTest
    .testCustomIndexWithFiltering, with a regular index); the indexed column alone does not."""
    t = f"{ks}.indexed_ck"
    session.execute(f"CREATE TABLE {t} (a text, b int, c text, d int, PRIMARY KEY (a, b, c))")
    session.execute(f"CREATE INDEX ON {t} (c)")
    for row in [("a", 0, "b", 1), ("a", 1, "b", 2), ("a", 2, "b", 3), ("c", 3, "b", 4),
                ("d", 4, "d", 5)]:
        session.execute(f"INSERT INTO {t} (a, b, c, d) VALUES (%s, %s, %s, %s)", row)
    for where, expected in [
        ("a = 'a' AND b > 0 AND c = 'b'", [("a", 1, "b", 2), ("a", 2, "b", 3)]),
        ("c = 'b' AND d = 4", [("c", 3, "b", 4)]),
        ("b > 0 AND c = 'b'", [("a", 1, "b", 2), ("a", 2, "b", 3), ("c", 3, "b", 4)]),
    ]:
        with pytest.raises(InvalidRequest, match=FILTERING):
            session.execute(f"SELECT * FROM {t} WHERE {where}")
        assert sorted(tuple(r) for r in session.execute(
            f"SELECT * FROM {t} WHERE {where} ALLOW FILTERING")) == expected, where
    assert sorted(tuple(r) for r in session.execute(f"SELECT * FROM {t} WHERE a = 'a' AND c = 'b'")) \
        == [("a", 0, "b", 1), ("a", 1, "b", 2), ("a", 2, "b", 3)]
    assert sorted(tuple(r) for r in session.execute(f"SELECT * FROM {t} WHERE c = 'b'")) == [
        ("a", 0, "b", 1), ("a", 1, "b", 2), ("a", 2, "b", 3), ("c", 3, "b", 4)]
