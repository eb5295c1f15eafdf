"""DynamoDB's legacy parameters (Expected, AttributeUpdates, KeyConditions, QueryFilter,
ScanFilter, AttributesToGet, ConditionalOperator) next to the expression parameters, as DynamoDB
takes and refuses them. The expected answers come from suites run against DynamoDB: ScyllaDB's
Alternator tests (test_expected.py, test_query_filter.py, test_key_conditions.py,
test_condition_expression.py, test_projection_expression.py, test_limits.py), dynalite's and
extenddb's.
"""

from __future__ import annotations

import uuid

import pytest

from khata_helpers import dynamo_refused as refused

MIXED = "Can not use both expression and non-expression parameters in the same request: "


@pytest.fixture(scope="module")
def table(dynamodb):
    """Hash `p` (S), range `c` (N), with items `x`/1 {i: 3} and `x`/2 {i: 4, a: 'A'}."""
    name = f"legacy-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"},
                   {"AttributeName": "c", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                              {"AttributeName": "c", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST")
    dynamodb.put_item(TableName=name, Item={"p": {"S": "x"}, "c": {"N": "1"}, "i": {"N": "3"}})
    dynamodb.put_item(TableName=name, Item={"p": {"S": "x"}, "c": {"N": "2"}, "i": {"N": "4"},
                                            "a": {"S": "A"}})
    yield name
    dynamodb.delete_table(TableName=name)


def key(c: int, p: str = "x") -> dict:
    return {"p": {"S": p}, "c": {"N": str(c)}}


def eq(value: dict) -> dict:
    return {"ComparisonOperator": "EQ", "AttributeValueList": [value]}


def test_set_past_a_lists_end_appends_in_index_order(dynamodb, table):
    dynamodb.put_item(TableName=table, Item={**key(9, "y"), "l": {"L": [{"S": "one"}, {"S": "two"},
                                                                   {"S": "three"}]}})
    dynamodb.update_item(
        TableName=table, Key=key(9, "y"),
        UpdateExpression="SET l[84] = :v1, l[37] = :v2, l[17] = :v3, l[50] = :v4",
        ExpressionAttributeValues={f":v{i}": {"S": f"a{i}"} for i in range(1, 5)})
    item = dynamodb.get_item(TableName=table, Key=key(9, "y"), ConsistentRead=True)["Item"]
    assert [v["S"] for v in item["l"]["L"]] == ["one", "two", "three", "a3", "a2", "a4", "a1"]


def test_update_item_refuses_legacy_and_expression_parameters_together(dynamodb, table):
    # AttributeUpdates with a ConditionExpression is refused whether the condition holds or not,
    # and nothing is written.
    for condition, values in [("i = :old", {":old": {"N": "2"}}),
                              ("attribute_not_exists(z)", None)]:
        extra = {"ExpressionAttributeValues": values} if values else {}
        assert refused(dynamodb.update_item, TableName=table, Key=key(1),
                       AttributeUpdates={"z": {"Value": {"N": "1"}, "Action": "PUT"}},
                       ConditionExpression=condition, **extra) == (
            MIXED + "Non-expression parameters: {AttributeUpdates} "
            "Expression parameters: {ConditionExpression}")
    assert "z" not in dynamodb.get_item(TableName=table, Key=key(1), ConsistentRead=True)["Item"]
    assert refused(dynamodb.update_item, TableName=table, Key=key(1),
                   UpdateExpression="SET z = :v", ExpressionAttributeValues={":v": {"N": "2"}},
                   Expected={"i": eq({"N": "3"})}) == (
        MIXED + "Non-expression parameters: {Expected} Expression parameters: {UpdateExpression}")
    assert refused(dynamodb.put_item, TableName=table, Item=key(1),
                   ConditionExpression="attribute_exists(p)",
                   Expected={"i": eq({"N": "3"}), "a": eq({"S": "A"})},
                   ConditionalOperator="OR") == (
        MIXED + "Non-expression parameters: {Expected, ConditionalOperator} "
        "Expression parameters: {ConditionExpression}")


def test_query_takes_key_conditions_with_filter_and_projection_expressions(dynamodb, table):
    kc = {"p": eq({"S": "x"})}
    got = dynamodb.query(TableName=table, KeyConditions=kc, FilterExpression="i = :v",
                         ExpressionAttributeValues={":v": {"N": "4"}}, ConsistentRead=True)
    assert [i["c"]["N"] for i in got["Items"]] == ["2"]
    got = dynamodb.query(TableName=table, KeyConditions=kc, ProjectionExpression="a",
                         ConsistentRead=True)
    assert got["Items"] == [{}, {"a": {"S": "A"}}]
    # Not with a key condition expression, nor a legacy filter with expressions.
    assert refused(dynamodb.query, TableName=table, KeyConditions=kc,
                   KeyConditionExpression="p = :p",
                   ExpressionAttributeValues={":p": {"S": "x"}}) == (
        MIXED + "Non-expression parameters: {KeyConditions} "
        "Expression parameters: {KeyConditionExpression}")
    assert refused(dynamodb.query, TableName=table, KeyConditions=kc,
                   QueryFilter={"i": eq({"N": "4"})}, ProjectionExpression="a") == (
        MIXED + "Non-expression parameters: {QueryFilter} "
        "Expression parameters: {ProjectionExpression}")


def test_in_and_between_take_values_of_one_type(dynamodb, table):
    same = ("One or more parameter values were invalid: "
            "AttributeValues inside AttributeValueList must be of same type")
    for op, values in [("IN", [{"N": "3"}, {"S": "dog"}]), ("BETWEEN", [{"N": "4"}, {"S": "dog"}])]:
        cond = {"i": {"ComparisonOperator": op, "AttributeValueList": values}}
        assert refused(dynamodb.update_item, TableName=table, Key=key(1),
                       AttributeUpdates={"z": {"Value": {"N": "1"}, "Action": "PUT"}},
                       Expected=cond) == same
        assert refused(dynamodb.query, TableName=table, KeyConditions={"p": eq({"S": "x"})},
                       QueryFilter=cond) == same
        assert refused(dynamodb.scan, TableName=table, ScanFilter=cond) == same
    got = dynamodb.scan(TableName=table, ScanFilter={"i": {
        "ComparisonOperator": "IN", "AttributeValueList": [{"N": "3"}, {"N": "7"}]}})
    assert got["Count"] == 1


def test_conditional_operator_needs_two_conditions(dynamodb, table):
    without = "ConditionalOperator cannot be used without Filter or Expected"
    one = "ConditionalOperator can only be used when Filter or Expected has two or more elements"
    update = {"Key": key(1), "AttributeUpdates": {"z": {"Value": {"N": "4"}, "Action": "PUT"}}}
    for op in ["OR", "AND"]:
        assert refused(dynamodb.update_item, TableName=table, Expected={},
                       ConditionalOperator=op, **update) == without
    assert refused(dynamodb.update_item, TableName=table, ConditionalOperator="OR",
                   **update) == without
    assert refused(dynamodb.delete_item, TableName=table, Key=key(1),
                   Expected={"i": eq({"N": "3"})}, ConditionalOperator="AND") == one
    assert refused(dynamodb.scan, TableName=table, ScanFilter={"i": eq({"N": "3"})},
                   ConditionalOperator="AND") == one
    assert refused(dynamodb.query, TableName=table, KeyConditions={"p": eq({"S": "x"})},
                   ConditionalOperator="AND") == without
    # An empty Expected alone is no condition at all.
    dynamodb.update_item(TableName=table, Expected={}, **update)
    got = dynamodb.query(TableName=table, KeyConditions={"p": eq({"S": "x"})},
                         QueryFilter={"i": eq({"N": "3"}), "a": eq({"S": "A"})},
                         ConditionalOperator="OR", ConsistentRead=True)
    assert got["Count"] == 2


def test_an_unknown_comparison_operator_is_named_where_it_is(dynamodb_endpoint):
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "dynamodb", endpoint_url=dynamodb_endpoint, region_name="us-east-1",
        aws_access_key_id="a", aws_secret_access_key="b",
        config=Config(parameter_validation=False, retries={"max_attempts": 1}))
    name = f"legacy-op-{uuid.uuid4().hex[:8]}"
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    try:
        for op in ["eq", "DOG"]:
            message = refused(client.query, TableName=name, KeyConditions={
                "p": {"AttributeValueList": [{"S": "x"}], "ComparisonOperator": op}})
            assert message.startswith(
                f"1 validation error detected: Value '{op}' at "
                "'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: "
                "Member must satisfy enum value set: ["), message
    finally:
        client.delete_table(TableName=name)


def test_attribute_updates_type_mismatch(dynamodb, table):
    k = key(5, "z")
    dynamodb.put_item(TableName=table, Item={**k, "s": {"S": "str"}, "ns": {"NS": ["1", "2"]}})
    mismatch = "Type mismatch for attribute to update"
    for name, action, value in [("s", "DELETE", {"NS": ["1"]}), ("ns", "ADD", {"SS": ["a"]}),
                                ("ns", "ADD", {"N": "2"})]:
        assert refused(dynamodb.update_item, TableName=table, Key=k, AttributeUpdates={
            name: {"Action": action, "Value": value}}) == mismatch
    assert refused(dynamodb.update_item, TableName=table, Key=k, UpdateExpression="ADD ns :v",
                   ExpressionAttributeValues={":v": {"SS": ["a"]}}) == (
        "An operand in the update expression has an incorrect data type")
