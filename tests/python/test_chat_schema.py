"""The seeds' chat schema through the Python driver.

`messages_by_channel` is the seed's table as written: keyed by `(channel_id, bucket)` (bucket =
unix hour), `message_id` a Snowflake-style bigint, newest first. `messages` is the seed's
per-conversation table with `now()` timeuuids as message ids. `user_conversations` is a user's
inbox ordered by last activity; `conversations` holds conversation metadata.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType, SimpleStatement
from cassandra.util import datetime_from_uuid1, uuid_from_time

KS = "chat"
BUCKET = 498091  # unix_seconds // 3600, the seed's example
SNOWFLAKE_EPOCH_MS = 1288834974657


def snowflake(unix_ms: int, sequence: int) -> int:
    """A time-sortable id: milliseconds since the Snowflake epoch, 22 low bits of sequence."""
    return ((unix_ms - SNOWFLAKE_EPOCH_MS) << 22) | sequence


def bucket_start_ms(bucket: int) -> int:
    return bucket * 3600 * 1000


@pytest.fixture(scope="module")
def chat(session):
    dc = session.execute("SELECT data_center FROM system.local WHERE key = 'local'").one()
    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = "
        f"{{'class': 'NetworkTopologyStrategy', '{dc.data_center}': 1}}"
    )
    session.execute(f"""
        CREATE TABLE {KS}.messages_by_channel (
          channel_id bigint,
          bucket     int,        -- hour number: unix_seconds / 3600
          message_id bigint,     -- time-sortable, Snowflake-style
          author_id  bigint,
          body       text,
          PRIMARY KEY ((channel_id, bucket), message_id)
        ) WITH CLUSTERING ORDER BY (message_id DESC)""")
    session.execute(f"""
        CREATE TABLE {KS}.messages (
          conversation_id uuid,
          message_id      timeuuid,
          author_id       bigint,
          body            text,
          PRIMARY KEY (conversation_id, message_id)
        ) WITH CLUSTERING ORDER BY (message_id DESC)""")
    session.execute(f"""
        CREATE TABLE {KS}.user_conversations (
          user_id         bigint,
          last_activity   timestamp,
          conversation_id uuid,
          title           text,
          PRIMARY KEY (user_id, last_activity, conversation_id)
        ) WITH CLUSTERING ORDER BY (last_activity DESC, conversation_id ASC)""")
    session.execute(f"""
        CREATE TABLE {KS}.conversations (
          conversation_id uuid PRIMARY KEY,
          title           text,
          members         set<bigint>,
          created_at      timestamp)""")
    return KS


@pytest.fixture(scope="module")
def channel_42(session, chat):
    """Channel 42: 120 messages in BUCKET, 5 in the hour before; channel 43: 5 in BUCKET."""
    insert = session.prepare(
        f"INSERT INTO {chat}.messages_by_channel (channel_id, bucket, message_id, author_id, body) "
        "VALUES (?, ?, ?, ?, ?)"
    )
    ids = []
    for i in range(120):
        message_id = snowflake(bucket_start_ms(BUCKET) + i * 1000, i % 7)
        ids.append(message_id)
        session.execute(insert, (42, BUCKET, message_id, 1000 + i % 3, f"message {i}"))
    for i in range(5):
        session.execute(insert, (42, BUCKET - 1, snowflake(bucket_start_ms(BUCKET - 1) + i, 0),
                                 1000, f"older {i}"))
        session.execute(insert, (43, BUCKET, snowflake(bucket_start_ms(BUCKET) + i, 0),
                                 2000, f"other channel {i}"))
    return ids


def test_driver_metadata_shows_the_seed_table(cluster, chat):
    table = cluster.metadata.keyspaces[chat].tables["messages_by_channel"]
    assert [c.name for c in table.partition_key] == ["channel_id", "bucket"]
    assert [c.name for c in table.clustering_key] == ["message_id"]
    assert table.columns["message_id"].cql_type == "bigint"
    assert table.columns["message_id"].is_reversed
    assert "WITH CLUSTERING ORDER BY (message_id DESC)" in table.export_as_string()


def test_newest_50_messages_of_a_channel_bucket(session, chat, channel_42):
    rows = list(session.execute(
        f"SELECT author_id, body FROM {chat}.messages_by_channel "
        f"WHERE channel_id = 42 AND bucket = {BUCKET} LIMIT 50"))
    assert [r.body for r in rows] == [f"message {i}" for i in range(119, 69, -1)]
    assert [r.author_id for r in rows] == [1000 + i % 3 for i in range(119, 69, -1)]


def test_newest_messages_with_a_prepared_statement(session, chat, channel_42):
    select = session.prepare(
        f"SELECT message_id FROM {chat}.messages_by_channel "
        "WHERE channel_id = ? AND bucket = ? LIMIT ?")
    rows = list(session.execute(select, (42, BUCKET, 10)))
    assert [r.message_id for r in rows] == sorted(channel_42, reverse=True)[:10]
    rows = list(session.execute(select, (42, BUCKET - 1, 50)))
    assert len(rows) == 5
    rows = list(session.execute(select, (42, BUCKET + 1, 50)))
    assert rows == []


def test_walking_back_from_the_oldest_message_seen(session, chat, channel_42):
    """The next page of history: messages older than the last one shown."""
    newest_first = sorted(channel_42, reverse=True)
    older = session.prepare(
        f"SELECT message_id FROM {chat}.messages_by_channel "
        "WHERE channel_id = ? AND bucket = ? AND message_id < ? LIMIT 50")
    rows = list(session.execute(older, (42, BUCKET, newest_first[49])))
    assert [r.message_id for r in rows] == newest_first[50:100]
    rows = list(session.execute(older, (42, BUCKET, newest_first[99])))
    assert [r.message_id for r in rows] == newest_first[100:]


def test_messages_in_a_time_window(session, chat, channel_42):
    """A clustering slice with both bounds comes back in the table's (descending) order."""
    low = snowflake(bucket_start_ms(BUCKET) + 10_000, 0)
    high = snowflake(bucket_start_ms(BUCKET) + 20_000, 0)
    rows = list(session.execute(
        f"SELECT body FROM {chat}.messages_by_channel WHERE channel_id = 42 AND bucket = %s "
        "AND message_id >= %s AND message_id < %s", (BUCKET, low, high)))
    assert [r.body for r in rows] == [f"message {i}" for i in range(19, 9, -1)]


def test_oldest_first_with_order_by(session, chat, channel_42):
    rows = list(session.execute(
        f"SELECT body FROM {chat}.messages_by_channel WHERE channel_id = 42 AND bucket = {BUCKET} "
        "ORDER BY message_id ASC LIMIT 3"))
    assert [r.body for r in rows] == ["message 0", "message 1", "message 2"]


def test_paging_a_bucket_with_fetch_size(session, chat, channel_42):
    statement = SimpleStatement(
        f"SELECT message_id FROM {chat}.messages_by_channel "
        f"WHERE channel_id = 42 AND bucket = {BUCKET}", fetch_size=25)
    result = session.execute(statement)
    assert len(result.current_rows) == 25
    assert result.has_more_pages
    assert [r.message_id for r in result] == sorted(channel_42, reverse=True)


def test_paging_resumes_from_a_paging_state(session, chat, channel_42):
    """A client that shows one page per request and keeps only the paging state."""
    newest_first = sorted(channel_42, reverse=True)
    select = session.prepare(
        f"SELECT message_id FROM {chat}.messages_by_channel WHERE channel_id = ? AND bucket = ?")
    select.fetch_size = 50
    seen = []
    paging_state = None
    for _ in range(10):
        page = session.execute(select, (42, BUCKET), paging_state=paging_state)
        seen.extend(r.message_id for r in page.current_rows)
        paging_state = page.paging_state
        if paging_state is None:
            break
    assert seen == newest_first
    assert len(seen) == 120


def test_paging_a_limited_query_stops_at_the_limit(session, chat, channel_42):
    statement = SimpleStatement(
        f"SELECT message_id FROM {chat}.messages_by_channel "
        f"WHERE channel_id = 42 AND bucket = {BUCKET} LIMIT 55", fetch_size=20)
    assert [r.message_id for r in session.execute(statement)] == sorted(
        channel_42, reverse=True)[:55]


def test_messages_with_now_timeuuids(session, chat):
    conversation = uuid.uuid4()
    insert = session.prepare(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (?, now(), ?, ?)")
    before = datetime.datetime.now(datetime.timezone.utc)
    for i in range(20):
        session.execute(insert, (conversation, 7, f"m{i}"))
    session.execute(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (%s, now(), 8, 'unprepared')", (conversation,))
    after = datetime.datetime.now(datetime.timezone.utc)

    rows = list(session.execute(
        f"SELECT message_id, body FROM {chat}.messages WHERE conversation_id = %s", (conversation,)))
    assert [r.body for r in rows] == ["unprepared"] + [f"m{i}" for i in range(19, -1, -1)]
    ids = [r.message_id for r in rows]
    assert len(set(ids)) == 21
    assert all(i.version == 1 for i in ids)
    slack = datetime.timedelta(seconds=5)
    for message_id in ids:
        made = datetime_from_uuid1(message_id).replace(tzinfo=datetime.timezone.utc)
        assert before - slack <= made <= after + slack


def test_newest_n_messages_of_a_conversation(session, chat):
    conversation = uuid.uuid4()
    insert = session.prepare(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (?, now(), 1, ?)")
    for i in range(30):
        session.execute(insert, (conversation, str(i)))
    rows = session.execute(
        f"SELECT body FROM {chat}.messages WHERE conversation_id = %s LIMIT 10", (conversation,))
    assert [r.body for r in rows] == [str(i) for i in range(29, 19, -1)]


def test_message_time_from_its_timeuuid(session, chat):
    conversation = uuid.uuid4()
    session.execute(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (%s, now(), 1, 'x')", (conversation,))
    row = session.execute(
        f"SELECT message_id, toTimestamp(message_id) AS sent, toUnixTimestamp(message_id) AS ms "
        f"FROM {chat}.messages WHERE conversation_id = %s", (conversation,)).one()
    expected = datetime_from_uuid1(row.message_id)
    assert abs((row.sent - expected).total_seconds()) < 0.001
    assert abs(row.ms / 1000 - expected.replace(tzinfo=datetime.timezone.utc).timestamp()) < 0.001


def test_messages_since_a_time_with_mintimeuuid(session, chat):
    """`minTimeuuid()` in a WHERE clause, how clients ask for messages since a moment."""
    conversation = uuid.uuid4()
    insert = session.prepare(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (?, ?, 1, ?)")
    base = 1_790_000_000
    for i in range(10):
        session.execute(insert, (conversation, uuid_from_time(base + i * 60), str(i)))
    since = datetime.datetime.fromtimestamp(base + 5 * 60, datetime.timezone.utc)
    rows = session.execute(
        f"SELECT body FROM {chat}.messages WHERE conversation_id = %s "
        f"AND message_id >= minTimeuuid('{since:%Y-%m-%d %H:%M:%S+0000}')", (conversation,))
    assert [r.body for r in rows] == ["9", "8", "7", "6", "5"]


def test_user_conversations_inbox(session, chat):
    """A user's inbox, newest activity first; a new message moves a conversation to the top.

    Moving is a delete of the old inbox row and an insert of the new one, in a logged batch
    together with the message itself.
    """
    user = 501
    base = datetime.datetime(2026, 10, 27, 9, 0, tzinfo=datetime.timezone.utc)
    conversations = [uuid.uuid4() for _ in range(5)]
    insert_inbox = session.prepare(
        f"INSERT INTO {chat}.user_conversations (user_id, last_activity, conversation_id, title) "
        "VALUES (?, ?, ?, ?)")
    insert_conversation = session.prepare(
        f"INSERT INTO {chat}.conversations (conversation_id, title, members, created_at) "
        "VALUES (?, ?, ?, ?)")
    for i, conversation in enumerate(conversations):
        at = base + datetime.timedelta(minutes=i)
        session.execute(insert_inbox, (user, at, conversation, f"conversation {i}"))
        session.execute(insert_conversation, (conversation, f"conversation {i}", {user, 600 + i}, at))

    def inbox(limit=10):
        return [r.title for r in session.execute(
            f"SELECT title FROM {chat}.user_conversations WHERE user_id = %s LIMIT %s",
            (user, limit))]

    assert inbox() == [f"conversation {i}" for i in range(4, -1, -1)]
    assert inbox(2) == ["conversation 4", "conversation 3"]

    # A message arrives in conversation 1.
    now = base + datetime.timedelta(hours=1)
    batch = BatchStatement(batch_type=BatchType.LOGGED)
    batch.add(
        f"DELETE FROM {chat}.user_conversations "
        "WHERE user_id = %s AND last_activity = %s AND conversation_id = %s",
        (user, base + datetime.timedelta(minutes=1), conversations[1]))
    batch.add(insert_inbox, (user, now, conversations[1], "conversation 1"))
    batch.add(
        f"INSERT INTO {chat}.messages (conversation_id, message_id, author_id, body) "
        "VALUES (%s, now(), %s, 'hello')", (conversations[1], 600 + 1))
    session.execute(batch)

    assert inbox() == ["conversation 1", "conversation 4", "conversation 3", "conversation 2",
                       "conversation 0"]
    top = session.execute(
        f"SELECT last_activity, conversation_id FROM {chat}.user_conversations "
        "WHERE user_id = %s LIMIT 1", (user,)).one()
    assert top.conversation_id == conversations[1]
    assert top.last_activity == now.replace(tzinfo=None)

    meta = session.execute(
        f"SELECT title, members FROM {chat}.conversations WHERE conversation_id = %s",
        (conversations[1],)).one()
    assert meta.title == "conversation 1"
    assert set(meta.members) == {user, 601}

    # Conversations active since 09:02, oldest activity bound on the first clustering column.
    rows = session.execute(
        f"SELECT title FROM {chat}.user_conversations WHERE user_id = %s AND last_activity >= %s",
        (user, base + datetime.timedelta(minutes=2)))
    assert [r.title for r in rows] == ["conversation 1", "conversation 4", "conversation 3",
                                       "conversation 2"]
    # Another user's inbox is empty.
    assert list(session.execute(
        f"SELECT * FROM {chat}.user_conversations WHERE user_id = 999")) == []
