"""DynamoDB batches through boto3: BatchWriteItem and BatchGetItem over two tables, the
resource API's batch_writer, DynamoDB's limits and messages, and ReturnConsumedCapacity.

Each test module works in tables of its own, created by its fixtures.
"""

from __future__ import annotations

import uuid

import boto3
import pytest
from botocore.exceptions import ClientError


def error(e) -> tuple[str, str]:
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def _create(dynamodb, name: str, range_key: bool) -> None:
    schema = [{"AttributeName": "PK", "KeyType": "HASH"}]
    attrs = [{"AttributeName": "PK", "AttributeType": "S"}]
    if range_key:
        schema.append({"AttributeName": "SK", "KeyType": "RANGE"})
        attrs.append({"AttributeName": "SK", "AttributeType": "S"})
    dynamodb.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=attrs,
                          BillingMode="PAY_PER_REQUEST")


@pytest.fixture(scope="module")
def tables(dynamodb):
    users, orders = f"busers-{uuid.uuid4().hex[:8]}", f"borders-{uuid.uuid4().hex[:8]}"
    _create(dynamodb, users, False)
    _create(dynamodb, orders, True)
    yield users, orders
    dynamodb.delete_table(TableName=users)
    dynamodb.delete_table(TableName=orders)


def test_batch_write_then_batch_get(dynamodb, tables):
    users, orders = tables
    out = dynamodb.batch_write_item(RequestItems={
        users: [{"PutRequest": {"Item": {"PK": {"S": f"u{i}"}, "n": {"N": str(i)}}}}
                for i in range(20)],
        orders: [{"PutRequest": {"Item": {"PK": {"S": "u1"}, "SK": {"S": f"o{i}"}}}}
                 for i in range(5)],
    })
    assert out["UnprocessedItems"] == {}
    got = dynamodb.batch_get_item(RequestItems={
        users: {"Keys": [{"PK": {"S": f"u{i}"}} for i in range(10)] + [{"PK": {"S": "none"}}],
                "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": "n"}},
        orders: {"Keys": [{"PK": {"S": "u1"}, "SK": {"S": "o3"}}], "ConsistentRead": True},
    })
    assert sorted(int(i["n"]["N"]) for i in got["Responses"][users]) == list(range(10))
    assert got["Responses"][orders] == [{"PK": {"S": "u1"}, "SK": {"S": "o3"}}]
    assert got["UnprocessedKeys"] == {}

    dynamodb.batch_write_item(RequestItems={
        users: [{"DeleteRequest": {"Key": {"PK": {"S": "u0"}}}},
                {"PutRequest": {"Item": {"PK": {"S": "u0b"}}}}]})
    got = dynamodb.batch_get_item(RequestItems={
        users: {"Keys": [{"PK": {"S": "u0"}}, {"PK": {"S": "u0b"}}]}})
    assert got["Responses"][users] == [{"PK": {"S": "u0b"}}]


def test_batch_writer_of_the_resource_api(dynamodb_endpoint, tables):
    users, _ = tables
    resource = boto3.resource("dynamodb", endpoint_url=dynamodb_endpoint, region_name="us-east-1",
                              aws_access_key_id="dummy", aws_secret_access_key="dummy")
    table = resource.Table(users)
    with table.batch_writer() as batch:
        for i in range(60):
            batch.put_item(Item={"PK": f"w{i}", "i": i})
    assert table.get_item(Key={"PK": "w59"}, ConsistentRead=True)["Item"]["i"] == 59
    got = resource.batch_get_item(RequestItems={users: {"Keys": [{"PK": f"w{i}"} for i in range(100)]}})
    assert len(got["Responses"][users]) == 60


def test_limits_and_messages(dynamodb, tables):
    users, orders = tables
    with pytest.raises(ClientError) as e:
        dynamodb.batch_write_item(RequestItems={
            users: [{"PutRequest": {"Item": {"PK": {"S": f"x{i}"}}}} for i in range(13)],
            orders: [{"PutRequest": {"Item": {"PK": {"S": "p"}, "SK": {"S": f"x{i}"}}}}
                     for i in range(13)]})
    assert error(e) == ("ValidationException", "Too many items requested for the BatchWriteItem call")
    with pytest.raises(ClientError) as e:
        dynamodb.batch_write_item(RequestItems={users: [
            {"PutRequest": {"Item": {"PK": {"S": "d"}}}},
            {"DeleteRequest": {"Key": {"PK": {"S": "d"}}}}]})
    assert error(e) == ("ValidationException", "Provided list of item keys contains duplicates")
    with pytest.raises(ClientError) as e:
        dynamodb.batch_get_item(RequestItems={users: {"Keys": [{"PK": {"S": "d"}}] * 2}})
    assert error(e) == ("ValidationException", "Provided list of item keys contains duplicates")
    with pytest.raises(ClientError) as e:
        dynamodb.batch_get_item(RequestItems={
            users: {"Keys": [{"PK": {"S": f"k{i}"}} for i in range(60)]},
            orders: {"Keys": [{"PK": {"S": "p"}, "SK": {"S": f"k{i}"}} for i in range(41)]}})
    assert error(e) == ("ValidationException", "Too many items requested for the BatchGetItem call")
    with pytest.raises(ClientError) as e:
        dynamodb.batch_get_item(RequestItems={"no-such-table": {"Keys": [{"PK": {"S": "a"}}]}})
    assert error(e)[0] == "ResourceNotFoundException"


def test_consumed_capacity(dynamodb, tables):
    users, _ = tables
    out = dynamodb.batch_write_item(RequestItems={users: [
        {"PutRequest": {"Item": {"PK": {"S": "c1"}, "v": {"S": "x" * 1500}}}},
        {"PutRequest": {"Item": {"PK": {"S": "c2"}}}}]}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == [
        {"TableName": users, "CapacityUnits": 3.0, "WriteCapacityUnits": 3.0}]
    out = dynamodb.batch_get_item(RequestItems={users: {"Keys": [{"PK": {"S": "c1"}},
                                                                   {"PK": {"S": "c2"}}]}},
                                  ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == [
        {"TableName": users, "CapacityUnits": 1.0, "ReadCapacityUnits": 1.0}]
    out = dynamodb.get_item(TableName=users, Key={"PK": {"S": "c1"}}, ConsistentRead=True,
                            ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": users, "CapacityUnits": 1.0,
                                       "ReadCapacityUnits": 1.0,
                                       "Table": {"CapacityUnits": 1.0, "ReadCapacityUnits": 1.0}}
    out = dynamodb.put_item(TableName=users, Item={"PK": {"S": "c3"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 1.0
    with pytest.raises(ClientError) as e:
        dynamodb.get_item(TableName=users, Key={"PK": {"S": "c1"}}, ReturnConsumedCapacity="ALL")
    assert error(e)[0] == "ValidationException"
