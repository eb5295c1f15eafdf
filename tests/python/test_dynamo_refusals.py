"""DynamoDB requests refused as DynamoDB refuses them (messages from DynamoDB-validated test
suites: dynalite's and Alternator's): index start keys, Select with a projection, Query key
conditions, table definitions, stream settings, billing mode switches, shard iterators.
"""

from __future__ import annotations

import time
import uuid

import pytest
from botocore.exceptions import ClientError


def refused(call, **kwargs) -> str:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    assert e.value.response["Error"]["Code"] == "ValidationException", e.value.response
    return e.value.response["Error"]["Message"]


@pytest.fixture(scope="module")
def indexed(dynamodb):
    """Hash `a`, range `b`; LSI `lsi` on (a, c); GSI `gsi` on c (keys only); all strings."""
    name = f"refusals-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "a", "KeyType": "HASH"},
                   {"AttributeName": "b", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in "abc"],
        LocalSecondaryIndexes=[{
            "IndexName": "lsi",
            "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
                          {"AttributeName": "c", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi",
            "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        BillingMode="PAY_PER_REQUEST")
    dynamodb.put_item(TableName=name, Item={"a": {"S": "x"}, "b": {"S": "1"}, "c": {"S": "k"}})
    yield name
    dynamodb.delete_table(TableName=name)


def test_index_start_keys_with_an_extra_or_missing_attribute(dynamodb, indexed):
    s = {"S": "x"}
    assert refused(dynamodb.scan, TableName=indexed, IndexName="gsi",
                   ExclusiveStartKey={"a": s, "b": s, "c": s, "z": s}) == \
        "The provided starting key is invalid"
    assert refused(dynamodb.scan, TableName=indexed, IndexName="gsi",
                   ExclusiveStartKey={"a": s, "b": s}) == "The provided starting key is invalid"
    assert refused(dynamodb.query, TableName=indexed, IndexName="lsi",
                   KeyConditionExpression="a = :a", ExpressionAttributeValues={":a": s},
                   ExclusiveStartKey={"a": s, "b": s, "c": s, "d": s}) == \
        "The provided starting key is invalid"
    # The right attributes page as before.
    page = dynamodb.scan(TableName=indexed, IndexName="gsi",
                         ExclusiveStartKey={"a": s, "b": {"S": "0"}, "c": {"S": "a"}})
    assert page["Count"] == 1


def test_select_with_a_projection(dynamodb, indexed):
    x = {":a": {"S": "x"}}
    assert refused(dynamodb.query, TableName=indexed, IndexName="lsi",
                   KeyConditionExpression="a = :a", ExpressionAttributeValues=x,
                   Select="ALL_PROJECTED_ATTRIBUTES", ProjectionExpression="b") == \
        "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"
    assert refused(dynamodb.scan, TableName=indexed, Select="ALL_ATTRIBUTES",
                   ProjectionExpression="b") == \
        "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"
    assert refused(dynamodb.scan, TableName=indexed, Select="COUNT",
                   AttributesToGet=["b"]) == \
        "Cannot specify the AttributesToGet when choosing to get only the Count"


def test_query_key_conditions_name_the_missing_key(dynamodb, indexed):
    eq = lambda v: {"AttributeValueList": [{"S": v}], "ComparisonOperator": "EQ"}  # noqa: E731
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"a": eq("x"), "z": eq("1")}) == \
        "Query condition missed key schema element: b"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditionExpression="z = :z AND a = :a",
                   ExpressionAttributeValues={":a": {"S": "x"}, ":z": {"S": "1"}}) == \
        "Query condition missed key schema element: b"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"z": eq("1"), "b": eq("1")}) == \
        "Query condition missed key schema element: a"
    assert refused(dynamodb.query, TableName=indexed,
                   KeyConditions={"a": eq("x"), "b": eq("1"), "z": eq("1")}) == \
        "Conditions can be of length 1 or 2 only"


def test_table_definitions_and_stream_settings(dynamodb, indexed):
    message = refused(
        dynamodb.create_table, TableName="name_doesnt_matter", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "xyz", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "xyz", "AttributeType": "S"},
                              {"AttributeName": "xyz", "AttributeType": "N"}])
    assert "Duplicate AttributeName in AttributeDefinitions: xyz" in message
    message = refused(
        dynamodb.update_table, TableName=indexed,
        AttributeDefinitions=[{"AttributeName": "c", "AttributeType": "N"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gsi2", "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    assert "Attributes cannot be redefined" in message
    message = refused(dynamodb.update_table, TableName=indexed,
                      StreamSpecification={"StreamEnabled": False})
    assert message == f"Table has no stream to disable: TableName: {indexed}"


def test_leaving_on_demand_needs_each_global_indexs_throughput(dynamodb, indexed):
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    assert refused(dynamodb.update_table, TableName=indexed, BillingMode="PROVISIONED",
                   ProvisionedThroughput=throughput) == \
        "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: gsi"
    dynamodb.update_table(
        TableName=indexed, BillingMode="PROVISIONED", ProvisionedThroughput=throughput,
        GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gsi",
                                                 "ProvisionedThroughput": throughput}}])
    table = dynamodb.describe_table(TableName=indexed)["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 5


def test_shard_iterators_take_a_sequence_number_only_where_they_use_one(dynamodb,
                                                                         dynamodbstreams):
    name = f"refusals-stream-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    try:
        dynamodb.put_item(TableName=name, Item={"p": {"S": "1"}})
        arn = dynamodb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
        shard = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        seq = shard["SequenceNumberRange"]["StartingSequenceNumber"]
        for kind in ["TRIM_HORIZON", "LATEST"]:
            refused(dynamodbstreams.get_shard_iterator, StreamArn=arn,
                    ShardId=shard["ShardId"], ShardIteratorType=kind, SequenceNumber=seq)
        dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                           ShardIteratorType="AT_SEQUENCE_NUMBER",
                                           SequenceNumber=seq)
    finally:
        dynamodb.delete_table(TableName=name)
