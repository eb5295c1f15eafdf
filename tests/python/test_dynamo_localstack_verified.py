"""Behaviours that LocalStack's AWS-validated DynamoDB tests recorded from AWS
(tests/aws/services/dynamodb/test_dynamodb.snapshot.json in localstack/localstack), where
khata answered otherwise."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError


def _error(e) -> tuple[str, str]:
    err = e.value.response["Error"]
    return err["Code"], err.get("Message", "")


@pytest.fixture
def table(dynamodb):
    """A fresh provisioned table keyed by id (S) and sortKey (S), created without BillingMode."""
    name = f"ls-{uuid.uuid4().hex[:8]}"
    out = dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"},
                   {"AttributeName": "sortKey", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"},
                              {"AttributeName": "sortKey", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    yield name, out["TableDescription"]
    dynamodb.delete_table(TableName=name)


def test_a_table_created_with_throughput_alone_has_no_billing_mode_summary(dynamodb, table):
    name, created = table
    assert "BillingModeSummary" not in created
    assert "BillingModeSummary" not in dynamodb.describe_table(TableName=name)["Table"]
    # Once a mode is named, the summary is there.
    dynamodb.update_table(TableName=name, BillingMode="PROVISIONED",
                          ProvisionedThroughput={"ReadCapacityUnits": 6,
                                                 "WriteCapacityUnits": 6})
    summary = dynamodb.describe_table(TableName=name)["Table"]["BillingModeSummary"]
    assert summary == {"BillingMode": "PROVISIONED"}


def test_a_table_created_provisioned_by_name_has_the_summary(dynamodb):
    name = f"ls-{uuid.uuid4().hex[:8]}"
    out = dynamodb.create_table(
        TableName=name, BillingMode="PROVISIONED",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    try:
        assert out["TableDescription"]["BillingModeSummary"] == {"BillingMode": "PROVISIONED"}
    finally:
        dynamodb.delete_table(TableName=name)


def test_batch_write_of_an_item_without_its_key(dynamodb, table):
    name, _ = table
    for item in ({"nonKey": {"S": "hello"}}, {"id": {"S": "a"}, "nonKey": {"S": "hello"}}):
        with pytest.raises(ClientError) as e:
            dynamodb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item}}]})
        assert _error(e) == ("ValidationException",
                             "The provided key element does not match the schema")
    # PutItem still names the missing attribute.
    with pytest.raises(ClientError) as e:
        dynamodb.put_item(TableName=name, Item={"id": {"S": "a"}})
    assert _error(e) == ("ValidationException",
                         "One or more parameter values were invalid: Missing the key sortKey in the item")


def test_a_transaction_on_a_missing_table(dynamodb):
    with pytest.raises(ClientError) as e:
        dynamodb.transact_write_items(
            TransactItems=[{"Put": {"TableName": "non-existing-table", "Item": {}}}])
    assert _error(e) == ("ResourceNotFoundException", "Requested resource not found")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_a_partiql_transaction_of_writes_answers_empty_responses(dynamodb, table):
    name, _ = table
    out = dynamodb.execute_transaction(TransactStatements=[
        {"Statement": f"INSERT INTO \"{name}\" VALUE {{'id': 'user01', 'sortKey': 'a'}}"},
        {"Statement": f"INSERT INTO \"{name}\" VALUE {{'id': 'user02', 'sortKey': 'a'}}"},
    ])
    assert out["Responses"] == []
    assert len(dynamodb.scan(TableName=name)["Items"]) == 2


def test_attribute_definitions_refused_in_aws_words(dynamodb):
    """Recorded from AWS (scylladb/scylladb#13870, moto's AWS-verified _throw_attr_error;
    found running PynamoDB's integration tests)."""
    def refused(definitions, keys):
        with pytest.raises(ClientError) as e:
            dynamodb.create_table(TableName=f"ls-{uuid.uuid4().hex[:8]}",
                                  BillingMode="PAY_PER_REQUEST",
                                  AttributeDefinitions=definitions, KeySchema=keys)
        return _error(e)
    pk = {"AttributeName": "pk", "KeyType": "HASH"}
    sk = {"AttributeName": "sk", "KeyType": "RANGE"}
    for second in ("S", "N"):
        assert refused([{"AttributeName": "pk", "AttributeType": "S"},
                        {"AttributeName": "pk", "AttributeType": second}], [pk]) == (
            "ValidationException", "Attribute Name is duplicated: pk")
    for definitions, keys in (([], [pk]),
                              ([{"AttributeName": "pk", "AttributeType": "S"}], [pk, sk])):
        assert refused(definitions, keys) == (
            "ValidationException", "Invalid KeySchema: Some index key attribute have no definition")
    # As many definitions as keys, but not theirs: the message that names them.
    code, message = refused([{"AttributeName": "other", "AttributeType": "S"}], [pk])
    assert message.startswith(
        "One or more parameter values were invalid: Some index key attributes are not defined")
