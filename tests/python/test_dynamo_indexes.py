"""DynamoDB secondary indexes through boto3: a single-table design with an overloaded GSI
(GSI1PK/GSI1SK) serving several access patterns ("GSI queries"), an inverted index, a sparse
index, an LSI, and a GSI added to a table with data by UpdateTable.

Each test works in tables of its own, named after the module.
"""

from __future__ import annotations

import time
import uuid

import pytest
from botocore.exceptions import ClientError


def code(error: ClientError) -> str:
    return error.response["Error"]["Code"]


def message(error: ClientError) -> str:
    return error.response["Error"]["Message"]


def S(v: str) -> dict:
    return {"S": v}


def N(v) -> dict:
    return {"N": str(v)}


@pytest.fixture(scope="module")
def shop(dynamodb):
    """The single table: users, orders and items under PK/SK; GSI1 overloaded; an inverted
    index (SK, PK); a sparse index of open orders; an LSI by order date."""
    name = f"indexes-{uuid.uuid4().hex[:8]}"
    definitions = [("PK", "S"), ("SK", "S"), ("GSI1PK", "S"), ("GSI1SK", "S"),
                   ("open", "S"), ("placed", "S")]
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in definitions],
        GlobalSecondaryIndexes=[
            {"IndexName": "GSI1",
             "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                           {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "inverted",
             "KeySchema": [{"AttributeName": "SK", "KeyType": "HASH"},
                           {"AttributeName": "PK", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "open-orders",
             "KeySchema": [{"AttributeName": "open", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["total"]}},
        ],
        LocalSecondaryIndexes=[
            {"IndexName": "by-placed",
             "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                           {"AttributeName": "placed", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
        ])
    items = [
        # Users: GSI1 by email.
        {"PK": S("USER#ann"), "SK": S("PROFILE"), "GSI1PK": S("EMAIL#ann@example.com"),
         "GSI1SK": S("USER#ann"), "name": S("Ann")},
        {"PK": S("USER#bob"), "SK": S("PROFILE"), "GSI1PK": S("EMAIL#bob@example.com"),
         "GSI1SK": S("USER#bob"), "name": S("Bob")},
        # Orders: GSI1 by status and date; open ones in the sparse index.
        {"PK": S("USER#ann"), "SK": S("ORDER#1"), "GSI1PK": S("STATUS#PLACED"),
         "GSI1SK": S("2026-10-05#1"), "open": S("Y"), "placed": S("2026-10-05"), "total": N(30)},
        {"PK": S("USER#ann"), "SK": S("ORDER#2"), "GSI1PK": S("STATUS#SHIPPED"),
         "GSI1SK": S("2026-10-01#2"), "placed": S("2026-10-01"), "total": N(12)},
        {"PK": S("USER#bob"), "SK": S("ORDER#3"), "GSI1PK": S("STATUS#PLACED"),
         "GSI1SK": S("2026-10-07#3"), "open": S("Y"), "placed": S("2026-10-07"), "total": N(7)},
        # Order items: under the order, found from the item through the inverted index.
        {"PK": S("ORDER#1"), "SK": S("ITEM#pen"), "qty": N(2)},
        {"PK": S("ORDER#3"), "SK": S("ITEM#pen"), "qty": N(1)},
        {"PK": S("ORDER#3"), "SK": S("ITEM#ink"), "qty": N(5)},
    ]
    for item in items:
        dynamodb.put_item(TableName=name, Item=item)
    yield name
    dynamodb.delete_table(TableName=name)


def query(dynamodb, table, index, condition, values, **kw):
    out = []
    start = None
    while True:
        args = dict(TableName=table, IndexName=index, KeyConditionExpression=condition,
                    ExpressionAttributeValues=values, **kw)
        if start:
            args["ExclusiveStartKey"] = start
        page = dynamodb.query(**args)
        out.extend(page.get("Items", []))
        start = page.get("LastEvaluatedKey")
        if not start:
            return out


def test_gsi_queries_serve_each_access_pattern(dynamodb, shop):
    # A user by email.
    users = query(dynamodb, shop, "GSI1", "GSI1PK = :e", {":e": S("EMAIL#bob@example.com")})
    assert [u["name"]["S"] for u in users] == ["Bob"]
    # Placed orders, newest first, of October.
    placed = query(dynamodb, shop, "GSI1", "GSI1PK = :s AND begins_with(GSI1SK, :m)",
                   {":s": S("STATUS#PLACED"), ":m": S("2026-10")}, ScanIndexForward=False)
    assert [o["SK"]["S"] for o in placed] == ["ORDER#3", "ORDER#1"]
    assert placed[0]["total"] == N(7)  # ALL projects everything
    # Every order holding a pen (the inverted index), keys only.
    pens = query(dynamodb, shop, "inverted", "SK = :i", {":i": S("ITEM#pen")})
    assert [p["PK"]["S"] for p in pens] == ["ORDER#1", "ORDER#3"]
    assert set(pens[0]) == {"PK", "SK"}
    # Open orders: a sparse index projecting the total.
    scan = dynamodb.scan(TableName=shop, IndexName="open-orders")
    assert sorted(o["SK"]["S"] for o in scan["Items"]) == ["ORDER#1", "ORDER#3"]
    assert set(scan["Items"][0]) == {"PK", "SK", "open", "total"}
    # A user's orders by date (the LSI), reading back what it does not project.
    dated = query(dynamodb, shop, "by-placed", "PK = :u", {":u": S("USER#ann")},
                  ConsistentRead=True, Select="ALL_ATTRIBUTES")
    assert [o["SK"]["S"] for o in dated] == ["ORDER#2", "ORDER#1"]
    assert dated[0]["total"] == N(12)


def test_writes_keep_the_indexes(dynamodb, shop):
    # Shipping order 1: it changes GSI1 partition and leaves the sparse index.
    dynamodb.update_item(
        TableName=shop, Key={"PK": S("USER#ann"), "SK": S("ORDER#1")},
        UpdateExpression="SET GSI1PK = :s REMOVE #o",
        ExpressionAttributeNames={"#o": "open"},
        ExpressionAttributeValues={":s": S("STATUS#SHIPPED")})
    shipped = query(dynamodb, shop, "GSI1", "GSI1PK = :s", {":s": S("STATUS#SHIPPED")})
    assert [o["SK"]["S"] for o in shipped] == ["ORDER#2", "ORDER#1"]
    placed = query(dynamodb, shop, "GSI1", "GSI1PK = :s", {":s": S("STATUS#PLACED")})
    assert [o["SK"]["S"] for o in placed] == ["ORDER#3"]
    opened = dynamodb.scan(TableName=shop, IndexName="open-orders", Select="COUNT")
    assert opened["Count"] == 1
    # Deleting an order item takes it out of the inverted index.
    dynamodb.delete_item(TableName=shop, Key={"PK": S("ORDER#3"), "SK": S("ITEM#ink")})
    assert query(dynamodb, shop, "inverted", "SK = :i", {":i": S("ITEM#ink")}) == []


def test_index_refusals_are_dynamodbs(dynamodb, shop):
    with pytest.raises(ClientError) as e:
        dynamodb.put_item(TableName=shop, Item={"PK": S("X"), "SK": S("Y"), "GSI1PK": N(1)})
    assert code(e.value) == "ValidationException"
    assert message(e.value) == ("One or more parameter values were invalid: Type mismatch for "
                                "Index Key GSI1PK Expected: S Actual: N IndexName: GSI1")
    with pytest.raises(ClientError) as e:
        query(dynamodb, shop, "GSI1", "GSI1PK = :e", {":e": S("x")}, ConsistentRead=True)
    assert message(e.value) == "Consistent reads are not supported on global secondary indexes"
    with pytest.raises(ClientError) as e:
        query(dynamodb, shop, "missing", "PK = :e", {":e": S("x")})
    assert message(e.value) == "The table does not have the specified index: missing"
    with pytest.raises(ClientError) as e:
        query(dynamodb, shop, "inverted", "SK = :i", {":i": S("ITEM#pen")},
              Select="ALL_ATTRIBUTES")
    assert "Select type ALL_ATTRIBUTES is not supported" in message(e.value)


def test_a_gsi_added_later_is_backfilled(dynamodb):
    name = f"indexes-late-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    for i in range(50):
        dynamodb.put_item(TableName=name, Item={"id": S(f"u{i}"), "team": S(f"t{i % 5}")})
    answer = dynamodb.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "team", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by-team",
            "KeySchema": [{"AttributeName": "team", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    index = answer["TableDescription"]["GlobalSecondaryIndexes"][0]
    assert index["IndexStatus"] == "CREATING"
    deadline = time.time() + 30
    while True:
        table = dynamodb.describe_table(TableName=name)["Table"]
        if table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE":
            break
        assert time.time() < deadline
        time.sleep(0.05)
    assert table["TableStatus"] == "ACTIVE"
    members = query(dynamodb, name, "by-team", "team = :t", {":t": S("t3")})
    assert sorted(m["id"]["S"] for m in members) == sorted(f"u{i}" for i in range(3, 50, 5))
    dynamodb.delete_table(TableName=name)
