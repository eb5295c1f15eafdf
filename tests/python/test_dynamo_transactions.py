"""DynamoDB transactions through boto3: transactions that apply whole and cancel whole, the
CancellationReasons botocore reads from the error, ClientRequestToken idempotency, and
TransactGetItems.
"""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError


@pytest.fixture(scope="module")
def bank(dynamodb):
    name = f"bank-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}])
    yield name
    dynamodb.delete_table(TableName=name)


def _balance(dynamodb, table, pk):
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": pk}}, ConsistentRead=True).get("Item")
    return None if item is None else int(item["balance"]["N"])


def _transfer(table, source, target, amount):
    return [
        {"Update": {"TableName": table, "Key": {"PK": {"S": source}},
                    "UpdateExpression": "SET balance = balance - :a",
                    "ConditionExpression": "balance >= :a",
                    "ExpressionAttributeValues": {":a": {"N": str(amount)}}}},
        {"Update": {"TableName": table, "Key": {"PK": {"S": target}},
                    "UpdateExpression": "SET balance = balance + :a",
                    "ExpressionAttributeValues": {":a": {"N": str(amount)}}}},
    ]


def test_a_transaction_applies_whole(dynamodb, bank):
    for pk in ("ann", "bob"):
        dynamodb.put_item(TableName=bank, Item={"PK": {"S": pk}, "balance": {"N": "100"}})
    dynamodb.transact_write_items(TransactItems=_transfer(bank, "ann", "bob", 40) + [
        {"Put": {"TableName": bank, "Item": {"PK": {"S": "log#1"}},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"ConditionCheck": {"TableName": bank, "Key": {"PK": {"S": "frozen#ann"}},
                            "ConditionExpression": "attribute_not_exists(PK)"}}])
    assert (_balance(dynamodb, bank, "ann"), _balance(dynamodb, bank, "bob")) == (60, 140)


def test_a_transaction_cancels_whole(dynamodb, bank):
    for pk in ("cat", "dan", "eve"):
        dynamodb.put_item(TableName=bank, Item={"PK": {"S": pk}, "balance": {"N": "10"}})
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(TransactItems=[
            {"Put": {"TableName": bank, "Item": {"PK": {"S": "log#2"}}}},
            *_transfer(bank, "cat", "dan", 500),
            {"Delete": {"TableName": bank, "Key": {"PK": {"S": "eve"}},
                        "ConditionExpression": "balance > :z",
                        "ExpressionAttributeValues": {":z": {"N": "1000"}},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}])
    err = e.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert err["Error"]["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[None, ConditionalCheckFailed, None, ConditionalCheckFailed]")
    reasons = err["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "ConditionalCheckFailed", "None",
                                            "ConditionalCheckFailed"]
    assert "Message" not in reasons[0]
    assert reasons[1]["Message"] == "The conditional request failed"
    assert "Item" not in reasons[1]
    assert reasons[3]["Item"] == {"PK": {"S": "eve"}, "balance": {"N": "10"}}
    # Nothing was written.
    assert dynamodb.get_item(TableName=bank, Key={"PK": {"S": "log#2"}}).get("Item") is None
    assert [_balance(dynamodb, bank, pk) for pk in ("cat", "dan", "eve")] == [10, 10, 10]


def test_validation(dynamodb, bank):
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(TransactItems=[
            {"Put": {"TableName": bank, "Item": {"PK": {"S": "same"}}}},
            {"Delete": {"TableName": bank, "Key": {"PK": {"S": "same"}}}}])
    assert e.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Transaction request cannot include multiple operations on one item"}
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(TransactItems=[
            {"Put": {"TableName": bank, "Item": {"PK": {"N": "7"}}}}])
    assert e.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert e.value.response["CancellationReasons"][0]["Code"] == "ValidationError"
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(TransactItems=[
            {"Put": {"TableName": bank, "Item": {"PK": {"S": "x"}}},
             "Delete": {"TableName": bank, "Key": {"PK": {"S": "x"}}}}])
    assert e.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "TransactItems can only contain one of Check, Put, Update or Delete"}
    # An empty string key is the request's ValidationException, not a cancellation (moto's
    # AWS-verified test_transaction_with_empty_key).
    for action in [{"Put": {"TableName": bank, "Item": {"PK": {"S": ""}}}},
                   {"Delete": {"TableName": bank, "Key": {"PK": {"S": ""}}}},
                   {"ConditionCheck": {"TableName": bank, "Key": {"PK": {"S": ""}},
                                       "ConditionExpression": "attribute_exists(PK)"}}]:
        with pytest.raises(ClientError) as e:
            dynamodb.transact_write_items(TransactItems=[action])
        assert e.value.response["Error"] == {
            "Code": "ValidationException",
            "Message": "One or more parameter values are not valid. The AttributeValue for a "
                       "key attribute cannot contain an empty string value. Key: PK"}


def test_client_request_token(dynamodb, bank):
    dynamodb.put_item(TableName=bank, Item={"PK": {"S": "tok"}, "balance": {"N": "0"}})
    increment = [{"Update": {"TableName": bank, "Key": {"PK": {"S": "tok"}},
                             "UpdateExpression": "SET balance = balance + :one",
                             "ExpressionAttributeValues": {":one": {"N": "1"}}}}]
    token = uuid.uuid4().hex
    dynamodb.transact_write_items(TransactItems=increment, ClientRequestToken=token)
    dynamodb.transact_write_items(TransactItems=increment, ClientRequestToken=token)
    assert _balance(dynamodb, bank, "tok") == 1
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(
            TransactItems=[{"Put": {"TableName": bank, "Item": {"PK": {"S": "other"}}}}],
            ClientRequestToken=token)
    assert e.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"


def test_transact_get_items(dynamodb, bank):
    dynamodb.put_item(TableName=bank, Item={"PK": {"S": "g1"}, "balance": {"N": "5"},
                                            "note": {"S": "hi"}})
    out = dynamodb.transact_get_items(TransactItems=[
        {"Get": {"TableName": bank, "Key": {"PK": {"S": "nope"}}}},
        {"Get": {"TableName": bank, "Key": {"PK": {"S": "g1"}}, "ProjectionExpression": "#b",
                 "ExpressionAttributeNames": {"#b": "balance"}}}],
        ReturnConsumedCapacity="TOTAL")
    assert out["Responses"] == [{}, {"Item": {"balance": {"N": "5"}}}]
    assert out["ConsumedCapacity"] == [{"TableName": bank, "CapacityUnits": 4.0,
                                        "ReadCapacityUnits": 4.0}]
