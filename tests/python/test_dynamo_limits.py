"""DynamoDB's limits where khata keeps them as DynamoDB does: the operators of a condition,
attribute name lengths, table names, empty attribute lists. Expected answers from ScyllaDB's
Alternator tests run against DynamoDB (test_limits.py, test_item.py) and dynalite's suite.
"""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError


def refused(call, **kwargs) -> str:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    assert e.value.response["Error"]["Code"] == "ValidationException", e.value.response
    return e.value.response["Error"]["Message"]


@pytest.fixture(scope="module")
def raw_client(dynamodb_endpoint):
    """A boto3 client that sends what it is given (no client-side validation)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodb", endpoint_url=dynamodb_endpoint, region_name="us-east-1",
        aws_access_key_id="a", aws_secret_access_key="b",
        config=Config(parameter_validation=False, retries={"max_attempts": 1}))


@pytest.fixture(scope="module")
def table(dynamodb):
    name = f"limits-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name,
                          KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                          BillingMode="PAY_PER_REQUEST")
    yield name
    dynamodb.delete_table(TableName=name)


def test_a_condition_may_have_300_operators_however_it_nests(dynamodb, table):
    key = {"p": {"S": "nest"}}
    dynamodb.put_item(TableName=table, Item={**key, "a": {"N": "1"}, "b": {"N": "2"}})

    def update(condition):
        return dynamodb.update_item(TableName=table, Key=key, UpdateExpression="SET z = :v",
                                    ConditionExpression=condition,
                                    ExpressionAttributeValues={":v": {"N": "1"}})

    # a<b or (a<b or (...)) 149 deep: 299 operators.
    update("a<b " + "or (a<b " * 149 + ")" * 149)
    assert dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]["z"] == \
        {"N": "1"}
    with pytest.raises(ClientError) as e:
        update("a<b " + "or (a<b " * 454 + ")" * 454)
    assert e.value.response["Error"]["Message"] == (
        "Invalid ConditionExpression: The expression contains too many operators; "
        "operator count: 301")
    for hostile in ["(" * 4000, "(" * 2046 + "a<b" + ")" * 2046, "not " * 1000 + "a<b",
                    "a < " + "size(" * 680 + "b" + ")" * 680]:
        with pytest.raises(ClientError) as e:
            update(hostile)
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert "ConditionExpression" in e.value.response["Error"]["Message"]


def test_attribute_names_are_shorter_than_64_kb(dynamodb, table):
    key = {"p": {"S": "names"}}
    longest, too_long = "x" * 65535, "y" * 65536
    too_large = ("1 validation error detected: Attribute name is too large, "
                 "must be less than 65536 bytes")
    dynamodb.put_item(TableName=table, Item={**key, longest: {"N": "1"}})
    got = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True,
                            ProjectionExpression="#n", ExpressionAttributeNames={"#n": longest})
    assert got["Item"] == {longest: {"N": "1"}}
    assert refused(dynamodb.put_item, TableName=table, Item={**key, too_long: {"N": "1"}}) == \
        too_large
    assert refused(dynamodb.put_item, TableName=table,
                   Item={**key, "m": {"M": {too_long: {"N": "1"}}}}) == too_large
    assert refused(dynamodb.get_item, TableName=table, Key=key, ProjectionExpression="#n",
                   ExpressionAttributeNames={"#n": too_long}) == too_large
    assert refused(dynamodb.get_item, TableName=table, Key=key,
                   AttributesToGet=[too_long]) == too_large
    assert refused(dynamodb.update_item, TableName=table, Key=key,
                   AttributeUpdates={too_long: {"Value": {"N": "2"}, "Action": "PUT"}}) == \
        too_large
    assert refused(dynamodb.update_item, TableName=table, Key=key, UpdateExpression="SET #n = :v",
                   ExpressionAttributeNames={"#n": too_long},
                   ExpressionAttributeValues={":v": {"N": "3"}}) == too_large
    assert refused(dynamodb.update_item, TableName=table, Key=key, UpdateExpression="SET a = :v",
                   ConditionExpression="#n = :v", ExpressionAttributeNames={"#n": too_long},
                   ExpressionAttributeValues={":v": {"N": "1"}}) == too_large
    assert set(dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]) == \
        {"p", longest}


def test_attributes_to_get_names_at_least_one(raw_client, table):
    at_least_one = ("failed to satisfy constraint: "
                    "Member must have length greater than or equal to 1")
    key = {"p": {"S": "x"}}
    assert refused(raw_client.get_item, TableName=table, Key=key, AttributesToGet=[]) == (
        f"1 validation error detected: Value '[]' at 'attributesToGet' {at_least_one}")
    assert refused(raw_client.scan, TableName=table, AttributesToGet=[]) == (
        f"1 validation error detected: Value '[]' at 'attributesToGet' {at_least_one}")
    assert refused(raw_client.query, TableName=table, AttributesToGet=[],
                   KeyConditions={"p": {"ComparisonOperator": "EQ",
                                        "AttributeValueList": [{"S": "x"}]}}) == (
        f"1 validation error detected: Value '[]' at 'attributesToGet' {at_least_one}")
    assert refused(raw_client.batch_get_item, RequestItems={
        table: {"Keys": [key], "AttributesToGet": []}}) == (
        f"1 validation error detected: Value '[]' at 'requestItems.{table}.member.attributesToGet'"
        f" {at_least_one}")


def test_a_table_name_that_cannot_be_one_is_refused_before_any_lookup(raw_client, table):
    for name, broken in [("non!existent!table",
                          "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
                         ("xx", "Member must have length greater than or equal to 3")]:
        for call, args in [(raw_client.put_item, {"Item": {"a": {"S": "b"}}}),
                           (raw_client.get_item, {"Key": {"a": {"S": "b"}}}),
                           (raw_client.query, {"KeyConditionExpression": "a = :a",
                                               "ExpressionAttributeValues": {":a": {"S": "b"}}}),
                           (raw_client.scan, {}),
                           (raw_client.describe_table, {})]:
            message = refused(call, TableName=name, **args)
            assert message == (f"1 validation error detected: Value '{name}' at 'tableName' "
                               f"failed to satisfy constraint: {broken}"), message
    # A well-formed name that names nothing is not found, and a table's ARN names it.
    with pytest.raises(ClientError) as e:
        raw_client.put_item(TableName="non_existent_table", Item={"a": {"S": "b"}})
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
    arn = raw_client.describe_table(TableName=table)["Table"]["TableArn"]
    raw_client.put_item(TableName=arn, Item={"p": {"S": "by-arn"}})
    got = raw_client.get_item(TableName=arn, Key={"p": {"S": "by-arn"}}, ConsistentRead=True)
    assert got["Item"] == {"p": {"S": "by-arn"}}


def test_key_and_projected_attribute_names_have_at_most_255_bytes(dynamodb):
    long = "L" * 256
    between = "failed to satisfy constraint: Member must have length between 1 and 255"

    def create(**kwargs):
        return dynamodb.create_table(TableName=f"limits-keys-{uuid.uuid4().hex[:8]}",
                                     BillingMode="PAY_PER_REQUEST", **kwargs)

    # A long name only in AttributeDefinitions is reported for its length, before the key
    # schema's names are found undefined (Alternator's
    # test_limit_attribute_length_key_bad_incoherent_names, checked against DynamoDB).
    message = refused(create, KeySchema=[{"AttributeName": "short", "KeyType": "HASH"}],
                      AttributeDefinitions=[{"AttributeName": long, "AttributeType": "S"}])
    assert message == (f"1 validation error detected: Value '{long}' at "
                       f"'attributeDefinitions.1.member.attributeName' {between}")
    message = refused(create, KeySchema=[{"AttributeName": long, "KeyType": "HASH"}],
                      AttributeDefinitions=[{"AttributeName": "short", "AttributeType": "S"}])
    assert message == (f"1 validation error detected: Value '{long}' at "
                       f"'keySchema.1.member.attributeName' {between}")
    # An index's projected attributes too (test_limit_attribute_length_gsi_lsi_projection_bad).
    keys = dict(KeySchema=[{"AttributeName": "a", "KeyType": "HASH"},
                           {"AttributeName": "b", "KeyType": "RANGE"}],
                AttributeDefinitions=[{"AttributeName": x, "AttributeType": "S"} for x in "abc"])
    include = {"ProjectionType": "INCLUDE", "NonKeyAttributes": [long]}
    nonkey = ("failed to satisfy constraint: Member must satisfy constraint: [Member must have "
              "length less than or equal to 255, Member must have length greater than or equal "
              "to 1]")
    message = refused(create, **keys, GlobalSecondaryIndexes=[{
        "IndexName": "gsi", "KeySchema": [{"AttributeName": "c", "KeyType": "HASH"}],
        "Projection": include}])
    assert message == (f"1 validation error detected: Value '[{long}]' at "
                       f"'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' {nonkey}")
    message = refused(create, **keys, LocalSecondaryIndexes=[{
        "IndexName": "lsi", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
                                          {"AttributeName": "c", "KeyType": "RANGE"}],
        "Projection": include}])
    assert message == (f"1 validation error detected: Value '[{long}]' at "
                       f"'localSecondaryIndexes.1.member.projection.nonKeyAttributes' {nonkey}")
    # And UpdateTable's new definitions (test_limit_gsiu_key_len_bad_incoherent_names).
    name = f"limits-gsiu-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    try:
        message = refused(
            dynamodb.update_table, TableName=name,
            AttributeDefinitions=[{"AttributeName": long, "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": "hello",
                "KeySchema": [{"AttributeName": "short", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}])
        assert message == (f"1 validation error detected: Value '{long}' at "
                           f"'attributeDefinitions.1.member.attributeName' {between}")
    finally:
        dynamodb.delete_table(TableName=name)
