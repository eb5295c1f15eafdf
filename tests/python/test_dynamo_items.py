"""DynamoDB item operations through boto3: the seeds' single-table design, conditional writes,
optimistic versioning, updates and their ReturnValues, Query pages and Scan segments.

Each test module works in tables of its own (named after the module), created by the
`orders` fixture.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from botocore.exceptions import ClientError


def code(error: ClientError) -> str:
    return error.response["Error"]["Code"]


@pytest.fixture(scope="module")
def orders(dynamodb):
    name = f"items-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                              {"AttributeName": "SK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST")
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def counters(dynamodb):
    name = f"counters-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST")
    yield name
    dynamodb.delete_table(TableName=name)


def test_put_get_and_delete(dynamodb, orders):
    item = {"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}, "name": {"S": "Ann"},
            "age": {"N": "41.50"}, "tags": {"SS": ["a", "b"]},
            "address": {"M": {"city": {"S": "Oslo"}, "zip": {"N": "150"}}},
            "scores": {"L": [{"N": "1"}, {"BOOL": True}, {"NULL": True}]},
            "blob": {"B": b"\x00\x01"}}
    dynamodb.put_item(TableName=orders, Item=item)
    got = dynamodb.get_item(TableName=orders, Key={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}})
    expected = dict(item, age={"N": "41.5"})
    assert got["Item"] == expected
    got = dynamodb.get_item(TableName=orders, Key={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}},
                            ProjectionExpression="#n, address.city",
                            ExpressionAttributeNames={"#n": "name"})
    assert got["Item"] == {"name": {"S": "Ann"}, "address": {"M": {"city": {"S": "Oslo"}}}}
    # A put replaces the whole item.
    dynamodb.put_item(TableName=orders, Item={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"},
                                               "name": {"S": "Bo"}})
    got = dynamodb.get_item(TableName=orders, Key={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}})
    assert got["Item"] == {"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}, "name": {"S": "Bo"}}
    old = dynamodb.delete_item(TableName=orders,
                               Key={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}},
                               ReturnValues="ALL_OLD")
    assert old["Attributes"]["name"] == {"S": "Bo"}
    got = dynamodb.get_item(TableName=orders, Key={"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}})
    assert "Item" not in got


def test_username_claims_with_attribute_not_exists(dynamodb, orders):
    claim = dict(TableName=orders,
                 Item={"PK": {"S": "USERNAME#ann"}, "SK": {"S": "CLAIM"}, "owner": {"S": "1"}},
                 ConditionExpression="attribute_not_exists(PK)")
    dynamodb.put_item(**claim)
    with pytest.raises(ClientError) as error:
        dynamodb.put_item(**dict(claim, Item=dict(claim["Item"], owner={"S": "2"}),
                                 ReturnValuesOnConditionCheckFailure="ALL_OLD"))
    assert code(error.value) == "ConditionalCheckFailedException"
    assert error.value.response["Item"]["owner"] == {"S": "1"}
    got = dynamodb.get_item(TableName=orders,
                            Key={"PK": {"S": "USERNAME#ann"}, "SK": {"S": "CLAIM"}})
    assert got["Item"]["owner"] == {"S": "1"}


def test_optimistic_versioning(dynamodb, orders):
    key = {"PK": {"S": "DOC#1"}, "SK": {"S": "META"}}
    dynamodb.put_item(TableName=orders, Item=dict(key, version={"N": "1"}, body={"S": "v1"}))
    update = dict(TableName=orders, Key=key,
                  UpdateExpression="SET body = :b, version = version + :one",
                  ConditionExpression="version = :expected",
                  ExpressionAttributeValues={":b": {"S": "v2"}, ":one": {"N": "1"},
                                             ":expected": {"N": "1"}},
                  ReturnValues="ALL_NEW")
    new = dynamodb.update_item(**update)
    assert new["Attributes"]["version"] == {"N": "2"}
    assert new["Attributes"]["body"] == {"S": "v2"}
    with pytest.raises(ClientError) as error:
        dynamodb.update_item(**update)
    assert code(error.value) == "ConditionalCheckFailedException"


def test_update_expressions_and_return_values(dynamodb, orders):
    key = {"PK": {"S": "CART#9"}, "SK": {"S": "CART"}}
    out = dynamodb.update_item(
        TableName=orders, Key=key,
        UpdateExpression="SET contents = list_append(if_not_exists(contents, :empty), :new), n = :one "
                         "ADD tags :t",
        ExpressionAttributeValues={":empty": {"L": []}, ":new": {"L": [{"S": "apple"}]},
                                   ":one": {"N": "1"}, ":t": {"SS": ["fruit"]}},
        ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"contents": {"L": [{"S": "apple"}]}, "n": {"N": "1"},
                                 "tags": {"SS": ["fruit"]}}
    out = dynamodb.update_item(
        TableName=orders, Key=key, UpdateExpression="REMOVE n DELETE tags :t",
        ExpressionAttributeValues={":t": {"SS": ["fruit"]}}, ReturnValues="UPDATED_OLD")
    assert out["Attributes"] == {"n": {"N": "1"}, "tags": {"SS": ["fruit"]}}
    got = dynamodb.get_item(TableName=orders, Key=key)["Item"]
    assert got == dict(key, contents={"L": [{"S": "apple"}]})
    with pytest.raises(ClientError) as error:
        dynamodb.update_item(TableName=orders, Key=key, UpdateExpression="SET SK = :x",
                             ExpressionAttributeValues={":x": {"S": "y"}})
    assert code(error.value) == "ValidationException"
    assert "This attribute is part of the key" in str(error.value)


def test_newest_twenty_orders_with_pages(dynamodb, orders):
    user = "USER#42"
    dynamodb.put_item(TableName=orders, Item={"PK": {"S": user}, "SK": {"S": "PROFILE"},
                                               "name": {"S": "Kim"}})
    for day in range(1, 31):
        for n in range(2):
            sk = f"ORDER#2026-10-{day:02d}#{day * 10 + n}"
            dynamodb.put_item(TableName=orders, Item={"PK": {"S": user}, "SK": {"S": sk},
                                                       "total": {"N": str(day + n)}})
    query = dict(TableName=orders,
                 KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
                 ExpressionAttributeValues={":pk": {"S": user}, ":prefix": {"S": "ORDER#"}},
                 ScanIndexForward=False, Limit=20)
    first = dynamodb.query(**query)
    sks = [i["SK"]["S"] for i in first["Items"]]
    assert len(sks) == 20
    assert sks[0] == "ORDER#2026-10-30#301"
    assert sks == sorted(sks, reverse=True)
    assert "LastEvaluatedKey" in first
    second = dynamodb.query(**query, ExclusiveStartKey=first["LastEvaluatedKey"])
    more = [i["SK"]["S"] for i in second["Items"]]
    assert more[0] < sks[-1] and len(more) == 20
    everything = dynamodb.query(**dict(query, Limit=1000))
    assert everything["Count"] == 60
    assert "LastEvaluatedKey" not in everything
    # A filter is applied after the read: Count and ScannedCount differ.
    filtered = dynamodb.query(TableName=orders,
                              KeyConditionExpression="PK = :pk AND SK BETWEEN :a AND :b",
                              FilterExpression="#t > :min",
                              ExpressionAttributeNames={"#t": "total"},
                              ExpressionAttributeValues={":pk": {"S": user},
                                                         ":a": {"S": "ORDER#2026-10-01"},
                                                         ":b": {"S": "ORDER#2026-10-10~"},
                                                         ":min": {"N": "5"}})
    assert filtered["ScannedCount"] == 20
    assert filtered["Count"] == 20 - 9
    count = dynamodb.query(TableName=orders, KeyConditionExpression="PK = :pk",
                           ExpressionAttributeValues={":pk": {"S": user}}, Select="COUNT")
    assert count["Count"] == 61 and "Items" not in count


def test_a_page_stops_at_one_megabyte(dynamodb, orders):
    big = "x" * 100_000
    for i in range(25):
        dynamodb.put_item(TableName=orders, Item={"PK": {"S": "BIG"}, "SK": {"S": f"{i:03d}"},
                                                   "blob": {"S": big}})
    page = dynamodb.query(TableName=orders, KeyConditionExpression="PK = :pk",
                          ExpressionAttributeValues={":pk": {"S": "BIG"}})
    assert 9 <= page["Count"] <= 11
    assert "LastEvaluatedKey" in page


def test_parallel_scan_segments_return_every_item_once(dynamodb, counters):
    for i in range(300):
        dynamodb.put_item(TableName=counters, Item={"id": {"N": str(i)}, "v": {"N": "0"}})
    seen = []
    for segment in range(4):
        start = None
        while True:
            args = dict(TableName=counters, Segment=segment, TotalSegments=4, Limit=37)
            if start:
                args["ExclusiveStartKey"] = start
            page = dynamodb.scan(**args)
            seen.extend(int(i["id"]["N"]) for i in page["Items"])
            start = page.get("LastEvaluatedKey")
            if not start:
                break
    assert sorted(seen) == list(range(300))


def test_concurrent_conditional_increments_lose_no_update(dynamodb, counters, dynamodb_endpoint):
    import boto3
    dynamodb.put_item(TableName=counters, Item={"id": {"N": "-1"}, "n": {"N": "0"}})
    per_thread, threads = 25, 8
    failures = []

    def work():
        client = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint,
                              region_name="us-east-1", aws_access_key_id="k",
                              aws_secret_access_key="s")
        done = 0
        while done < per_thread:
            current = client.get_item(TableName=counters, Key={"id": {"N": "-1"}},
                                      ConsistentRead=True)["Item"]["n"]["N"]
            try:
                client.update_item(TableName=counters, Key={"id": {"N": "-1"}},
                                   UpdateExpression="SET n = n + :one",
                                   ConditionExpression="n = :seen",
                                   ExpressionAttributeValues={":one": {"N": "1"},
                                                              ":seen": {"N": current}})
                done += 1
            except ClientError as error:
                if code(error) != "ConditionalCheckFailedException":
                    failures.append(error)
                    return

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert failures == []
    final = dynamodb.get_item(TableName=counters, Key={"id": {"N": "-1"}},
                              ConsistentRead=True)["Item"]["n"]["N"]
    assert final == str(per_thread * threads)


def test_bad_items_get_validation_errors(dynamodb, orders):
    cases = [
        ({"PK": {"S": "x"}}, "Missing the key SK in the item"),
        ({"PK": {"N": "1"}, "SK": {"S": "x"}}, "Type mismatch for key PK expected: S actual: N"),
        ({"PK": {"S": ""}, "SK": {"S": "x"}}, "cannot contain an empty string value"),
        ({"PK": {"S": "x"}, "SK": {"S": "y"}, "s": {"SS": []}}, "may not be empty"),
    ]
    for item, message in cases:
        with pytest.raises(ClientError) as error:
            dynamodb.put_item(TableName=orders, Item=item)
        assert code(error.value) == "ValidationException", item
        assert message in str(error.value), (item, str(error.value))
    with pytest.raises(ClientError) as error:
        dynamodb.put_item(TableName=orders, Item={"PK": {"S": "x"}, "SK": {"S": "y"},
                                                   "big": {"S": "z" * 410_000}})
    assert "Item size has exceeded the maximum allowed size" in str(error.value)
    with pytest.raises(ClientError) as error:
        dynamodb.get_item(TableName=orders, Key={"PK": {"S": "x"}})
    assert "The provided key element does not match the schema" in str(error.value)
    with pytest.raises(ClientError) as error:
        dynamodb.get_item(TableName="no-such-table", Key={"PK": {"S": "x"}})
    assert code(error.value) == "ResourceNotFoundException"


def test_set_values_in_parentheses(dynamodb, orders):
    # DynamoDB takes a SET value, or either side of its sum, in parentheses (dynalite's
    # AWS-validated "should update nested attributes").
    key = {"PK": {"S": "USER#paren"}, "SK": {"S": "X"}}
    dynamodb.put_item(TableName=orders, Item={**key, "b": {"M": {"a": {"N": "1"}, "b": {"N": "2"}}},
                                              "c": {"L": [{"N": "0"}, {"N": "3"}]}})
    out = dynamodb.update_item(
        TableName=orders, Key=key,
        UpdateExpression="SET b.c = ((c[1])+(b.a)), d = (b.a), e = (b.a + b.b), f = ((b.b)) - b.a",
        ReturnValues="UPDATED_NEW")["Attributes"]
    assert out["b"]["M"]["c"] == {"N": "4"}
    assert (out["d"], out["e"], out["f"]) == ({"N": "1"}, {"N": "3"}, {"N": "1"})
    with pytest.raises(ClientError) as e:
        dynamodb.update_item(TableName=orders, Key=key, UpdateExpression="SET d = (b.a")
    assert code(e.value) == "ValidationException"
