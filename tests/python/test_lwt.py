"""Lightweight transactions: the seed's username claim and compare-and-set.

Cassandra 4.1 answers a conditional statement with a row whose first column is `[applied]`
(boolean). When the condition fails it adds the current values: every column for
`IF NOT EXISTS` / `IF EXISTS`, the columns named in the condition for `IF col = x`.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def usernames(session, keyspace):
    session.execute(f"""
        CREATE TABLE {keyspace}.usernames (
          username text PRIMARY KEY,
          user_id  bigint,
          email    text)""")
    return f"{keyspace}.usernames"


def row_dict(result):
    row = result.one()
    return dict(zip(result.column_names, row))


def test_claim_a_free_username(session, usernames):
    result = session.execute(
        f"INSERT INTO {usernames} (username, user_id, email) VALUES ('ana', 1, 'ana@x') "
        "IF NOT EXISTS")
    assert result.column_names[0] == "[applied]"
    assert result.was_applied is True
    assert row_dict(result) == {"[applied]": True}

    result = session.execute(
        f"INSERT INTO {usernames} (username, user_id, email) VALUES ('ana', 2, 'imposter@x') "
        "IF NOT EXISTS")
    assert result.was_applied is False
    assert row_dict(result) == {
        "[applied]": False, "username": "ana", "user_id": 1, "email": "ana@x"}
    row = session.execute(f"SELECT user_id, email FROM {usernames} WHERE username = 'ana'").one()
    assert (row.user_id, row.email) == (1, "ana@x")


def test_claim_with_a_prepared_statement(session, usernames):
    claim = session.prepare(
        f"INSERT INTO {usernames} (username, user_id) VALUES (?, ?) IF NOT EXISTS")
    assert session.execute(claim, ("bo", 10)).was_applied is True
    lost = session.execute(claim, ("bo", 11))
    assert lost.was_applied is False
    assert lost.one().user_id == 10


def test_concurrent_claims_have_exactly_one_winner(session, usernames):
    claim = session.prepare(
        f"INSERT INTO {usernames} (username, user_id) VALUES (?, ?) IF NOT EXISTS")
    futures = [session.execute_async(claim, ("popular", user)) for user in range(100, 120)]
    results = [f.result() for f in futures]
    winners = [user for user, r in zip(range(100, 120), results) if r.was_applied]
    assert len(winners) == 1
    for result in results:
        if not result.was_applied:
            assert result.one().user_id == winners[0]
    row = session.execute(f"SELECT user_id FROM {usernames} WHERE username = 'popular'").one()
    assert row.user_id == winners[0]


def test_update_if_column_equals(session, usernames):
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('cy', 20)")
    result = session.execute(
        f"UPDATE {usernames} SET user_id = 21 WHERE username = 'cy' IF user_id = 20")
    assert result.was_applied is True
    assert result.column_names == ["[applied]"]

    result = session.execute(
        f"UPDATE {usernames} SET user_id = 22 WHERE username = 'cy' IF user_id = 20")
    assert result.was_applied is False
    assert row_dict(result) == {"[applied]": False, "user_id": 21}
    assert session.execute(
        f"SELECT user_id FROM {usernames} WHERE username = 'cy'").one().user_id == 21


def test_update_if_exists_on_a_missing_row(session, usernames):
    result = session.execute(
        f"UPDATE {usernames} SET user_id = 1 WHERE username = 'nobody' IF EXISTS")
    assert result.was_applied is False
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'nobody'")) == []


def test_delete_if_exists(session, usernames):
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('di', 30)")
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'di' IF EXISTS")
    assert result.was_applied is True
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'di'")) == []
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'di' IF EXISTS")
    assert result.was_applied is False


def test_delete_if_column_equals(session, usernames):
    """Releasing a username only if it is still yours."""
    session.execute(f"INSERT INTO {usernames} (username, user_id) VALUES ('ed', 40)")
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'ed' IF user_id = 41")
    assert result.was_applied is False
    assert row_dict(result) == {"[applied]": False, "user_id": 40}
    result = session.execute(f"DELETE FROM {usernames} WHERE username = 'ed' IF user_id = 40")
    assert result.was_applied is True
    assert list(session.execute(f"SELECT * FROM {usernames} WHERE username = 'ed'")) == []


def test_a_released_username_can_be_claimed_again(session, usernames):
    claim = f"INSERT INTO {usernames} (username, user_id) VALUES ('fi', %s) IF NOT EXISTS"
    assert session.execute(claim, (50,)).was_applied
    assert session.execute(
        f"DELETE FROM {usernames} WHERE username = 'fi' IF user_id = 50").was_applied
    assert session.execute(claim, (51,)).was_applied
    assert session.execute(
        f"SELECT user_id FROM {usernames} WHERE username = 'fi'").one().user_id == 51
