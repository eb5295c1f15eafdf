"""A TransactWriteItems replayed with its ClientRequestToken, through boto3: nothing is written
again, and with ReturnConsumedCapacity the replay reports the read units of reading the items
(a transactional read: 2 units per 4 KB), not the first call's write units, as DynamoDB's
reference says ("Subsequent TransactWriteItems calls with the same client token return the
number of read capacity units consumed in reading the item").
"""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture(scope="module")
def table(dynamodb):
    name = f"replay-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    yield name
    dynamodb.delete_table(TableName=name)


def test_a_replay_reports_read_units(dynamodb, table):
    token = uuid.uuid4().hex
    request = dict(
        ClientRequestToken=token, ReturnConsumedCapacity="TOTAL",
        TransactItems=[
            {"Put": {"TableName": table, "Item": {"p": {"S": "a"}, "x": {"S": "y" * 3000}}}},
            {"Update": {"TableName": table, "Key": {"p": {"S": "n"}},
                        "UpdateExpression": "ADD c :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        ])
    first = dynamodb.transact_write_items(**request)["ConsumedCapacity"]
    # 3 KB: 3 write units, doubled; the counter: 1, doubled.
    assert first == [{"TableName": table, "CapacityUnits": 8.0, "WriteCapacityUnits": 8.0}]
    replay = dynamodb.transact_write_items(**request)["ConsumedCapacity"]
    # Each item read: one 4 KB unit, doubled.
    assert replay == [{"TableName": table, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}]
    got = dynamodb.get_item(TableName=table, Key={"p": {"S": "n"}})["Item"]
    assert got["c"] == {"N": "1"}, "the replay wrote nothing"
