"""A table's AttributeDefinitions, through boto3: DynamoDB keeps exactly the attributes of the
table's keys and of its current indexes. A deleted index's definitions go with it (so the
attribute may come back with another type), UpdateTable drops definitions no index uses, and
CreateTable refuses unused ones with DynamoDB's message.
"""

from __future__ import annotations

import time
import uuid

import pytest
from botocore.exceptions import ClientError


def create(dynamodb, definitions, **extra):
    name = f"attrdefs-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                              for a, t in definitions.items()],
        **extra)
    return name


def gsi(name, attribute):
    return {"IndexName": name, "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}


def definitions(dynamodb, table):
    described = dynamodb.describe_table(TableName=table)["Table"]["AttributeDefinitions"]
    return {d["AttributeName"]: d["AttributeType"] for d in described}


def wait_for_indexes(dynamodb, table, names):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described = dynamodb.describe_table(TableName=table)["Table"]
        indexes = described.get("GlobalSecondaryIndexes", [])
        if sorted(i["IndexName"] for i in indexes) == sorted(names) and \
                all(i["IndexStatus"] == "ACTIVE" for i in indexes):
            return
        time.sleep(0.2)
    raise AssertionError(f"indexes of {table} never became {names}")


def test_a_deleted_index_takes_its_definitions_along(dynamodb):
    table = create(dynamodb, {"p": "S", "x": "S"}, GlobalSecondaryIndexes=[gsi("gxx", "x")])
    dynamodb.update_table(TableName=table,
                          GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "gxx"}}])
    # While the index is DELETING its key is still defined.
    assert definitions(dynamodb, table) == {"p": "S", "x": "S"}
    wait_for_indexes(dynamodb, table, [])
    assert definitions(dynamodb, table) == {"p": "S"}
    # x may now come back as a number.
    dynamodb.update_table(TableName=table,
                          AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "N"}],
                          GlobalSecondaryIndexUpdates=[{"Create": gsi("gxn", "x")}])
    wait_for_indexes(dynamodb, table, ["gxn"])
    assert definitions(dynamodb, table) == {"p": "S", "x": "N"}
    dynamodb.put_item(TableName=table, Item={"p": {"S": "a"}, "x": {"N": "7"}})
    got = dynamodb.query(TableName=table, IndexName="gxn", KeyConditionExpression="x = :x",
                         ExpressionAttributeValues={":x": {"N": "7"}})
    assert [i["p"]["S"] for i in got["Items"]] == ["a"]
    dynamodb.delete_table(TableName=table)


def test_update_table_drops_definitions_no_index_uses(dynamodb):
    table = create(dynamodb, {"p": "S"})
    dynamodb.update_table(TableName=table,
                          AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "S"},
                                                {"AttributeName": "unused", "AttributeType": "S"}],
                          GlobalSecondaryIndexUpdates=[{"Create": gsi("gxx", "x")}])
    assert definitions(dynamodb, table) == {"p": "S", "x": "S"}
    wait_for_indexes(dynamodb, table, ["gxx"])
    # A used attribute still cannot change its type.
    with pytest.raises(ClientError) as error:
        dynamodb.update_table(TableName=table,
                              AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "N"}],
                              GlobalSecondaryIndexUpdates=[{"Create": gsi("gxn", "x")}])
    assert error.value.response["Error"]["Code"] == "ValidationException"
    assert "Attributes cannot be redefined" in error.value.response["Error"]["Message"]
    dynamodb.delete_table(TableName=table)


def test_create_table_with_indexes_names_unused_definitions(dynamodb):
    with pytest.raises(ClientError) as error:
        create(dynamodb, {"p": "S", "x": "S", "extra": "S"},
               GlobalSecondaryIndexes=[gsi("gsi", "x")])
    assert error.value.response["Error"]["Code"] == "ValidationException"
    assert error.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Some AttributeDefinitions are not used. "
        "AttributeDefinitions: [p, x, extra], keys used: [p, x]")
    # Without indexes, DynamoDB's message is the key schema's.
    with pytest.raises(ClientError) as error:
        create(dynamodb, {"p": "S", "extra": "S"})
    assert error.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Number of attributes in KeySchema does not "
        "exactly match number of attributes defined in AttributeDefinitions")


def test_the_table_is_active_while_a_new_index_backfills(dynamodb):
    """UpdateTable answers UPDATING; once the backfill runs the table is ACTIVE again (the
    index CREATING, Backfilling), and other UpdateTable calls are taken, as DynamoDB's
    UpdateTable reference says; a second index creation meanwhile is LimitExceeded."""
    table = create(dynamodb, {"p": "S"})
    items = [{"PutRequest": {"Item": {"p": {"S": f"k{i}"}, "x": {"S": f"v{i % 7}"}}}}
             for i in range(5000)]
    for i in range(0, len(items), 25):
        dynamodb.batch_write_item(RequestItems={table: items[i:i + 25]})
    answer = dynamodb.update_table(
        TableName=table, AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": gsi("gxx", "x")}])
    assert answer["TableDescription"]["TableStatus"] == "UPDATING"
    described = dynamodb.describe_table(TableName=table)["Table"]
    index = described["GlobalSecondaryIndexes"][0]
    if index["IndexStatus"] == "CREATING":
        assert index["Backfilling"] is True
        assert described["TableStatus"] == "ACTIVE"
        with pytest.raises(ClientError) as error:
            dynamodb.update_table(
                TableName=table,
                AttributeDefinitions=[{"AttributeName": "y", "AttributeType": "S"}],
                GlobalSecondaryIndexUpdates=[{"Create": gsi("gyy", "y")}])
        assert error.value.response["Error"]["Code"] == "LimitExceededException"
        dynamodb.update_table(TableName=table, DeletionProtectionEnabled=False)
    wait_for_indexes(dynamodb, table, ["gxx"])
    assert dynamodb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
    dynamodb.delete_table(TableName=table)
