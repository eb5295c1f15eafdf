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


# Multi-attribute GSI keys: up to four HASH and four RANGE attributes per GSI.

MATCH_DEFINITIONS = [("id", "S"), ("tournament", "S"), ("league", "S"), ("round", "S"),
                     ("bracket", "S"), ("score", "N")]
MATCH_KEYS = [("tournament", "HASH"), ("league", "HASH"),
              ("round", "RANGE"), ("bracket", "RANGE"), ("score", "RANGE")]


def key_schema(keys):
    return [{"AttributeName": a, "KeyType": t} for a, t in keys]


def match(i, tournament="WINTER", league="EU", round_="SEMI", bracket="UPPER", score=0):
    return {"id": S(f"m{i}"), "tournament": S(tournament), "league": S(league),
            "round": S(round_), "bracket": S(bracket), "score": N(score), "note": S(f"n{i}")}


@pytest.fixture(scope="module")
def matches(dynamodb):
    """Tournament matches under `id`, with GSI `by-round`: HASH (tournament, league), RANGE
    (round, bracket, score), ALL; and `by-round-keys`: the same key, KEYS_ONLY."""
    name = f"indexes-multi-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                              for a, t in MATCH_DEFINITIONS],
        GlobalSecondaryIndexes=[
            {"IndexName": "by-round", "KeySchema": key_schema(MATCH_KEYS),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by-round-keys", "KeySchema": key_schema(MATCH_KEYS),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
        ])
    items = [
        match(1, round_="FINAL", bracket="UPPER", score=3),
        match(2, round_="SEMI", bracket="UPPER", score=10),
        match(3, round_="SEMI", bracket="UPPER", score=2),
        match(4, round_="SEMI", bracket="LOWER", score=7),
        match(5, round_="QUARTER", bracket="UPPER", score=1),
        match(6, league="NA", round_="SEMI", bracket="UPPER", score=4),
        match(7, tournament="SUMMER", round_="SEMI", bracket="UPPER", score=5),
    ]
    for item in items:
        dynamodb.put_item(TableName=name, Item=item)
    # Sparse: without one of the key attributes an item is in neither index.
    partial = match(8)
    del partial["bracket"]
    dynamodb.put_item(TableName=name, Item=partial)
    yield name
    dynamodb.delete_table(TableName=name)


def ids(items):
    return [i["id"]["S"] for i in items]


WINTER_EU = {":t": S("WINTER"), ":r": S("EU")}


def test_a_multi_attribute_gsi_is_described_as_given(dynamodb, matches):
    table = dynamodb.describe_table(TableName=matches)["Table"]
    index = table["GlobalSecondaryIndexes"][0]
    assert index["KeySchema"] == key_schema(MATCH_KEYS)
    assert index["IndexStatus"] == "ACTIVE"


def test_a_multi_attribute_gsi_sorts_by_its_range_attributes_in_order(dynamodb, matches):
    # One partition per (tournament, league); sorted by (round, bracket, score), score as a
    # number, not by the table key.
    condition = "tournament = :t AND league = :r"
    winter_eu = query(dynamodb, matches, "by-round", condition, WINTER_EU)
    assert ids(winter_eu) == ["m1", "m5", "m4", "m3", "m2"]
    backwards = query(dynamodb, matches, "by-round", condition, WINTER_EU,
                      ScanIndexForward=False)
    assert ids(backwards) == ["m2", "m3", "m4", "m5", "m1"]
    assert winter_eu[0]["note"] == S("n1")  # ALL projects everything
    na = query(dynamodb, matches, "by-round", condition, {":t": S("WINTER"), ":r": S("NA")})
    assert ids(na) == ["m6"]
    # Keys only: the index keys and the table key.
    keys = query(dynamodb, matches, "by-round-keys", condition, WINTER_EU)
    assert ids(keys) == ["m1", "m5", "m4", "m3", "m2"]
    assert set(keys[0]) == {"id", "tournament", "league", "round", "bracket", "score"}


def test_a_multi_attribute_gsi_is_queried_by_a_prefix_of_its_range_attributes(dynamodb,
                                                                               matches):
    def q(condition, values, **kw):
        return ids(query(dynamodb, matches, "by-round", "tournament = :t AND league = :r AND "
                         + condition, {**WINTER_EU, **values}, **kw))

    assert q("round = :o", {":o": S("SEMI")}) == ["m4", "m3", "m2"]
    assert q("round > :o", {":o": S("QUARTER")}) == ["m4", "m3", "m2"]
    assert q("round BETWEEN :a AND :b", {":a": S("FINAL"), ":b": S("QUARTER")}) == ["m1", "m5"]
    assert q("begins_with(round, :p)", {":p": S("S")}) == ["m4", "m3", "m2"]
    assert q("round = :o AND bracket = :b", {":o": S("SEMI"), ":b": S("UPPER")}) == ["m3", "m2"]
    assert q("round = :o AND begins_with(bracket, :p)",
             {":o": S("SEMI"), ":p": S("LO")}) == ["m4"]
    assert q("round = :o AND bracket < :b", {":o": S("SEMI"), ":b": S("UPPER")}) == ["m4"]
    # Equality on every RANGE attribute but the last, a comparison on that one.
    semi_upper = {":o": S("SEMI"), ":b": S("UPPER")}
    assert q("round = :o AND bracket = :b AND score > :s", {**semi_upper, ":s": N(2)}) == ["m2"]
    assert q("score <= :s AND bracket = :b AND round = :o",
             {**semi_upper, ":s": N(10)}, ScanIndexForward=False) == ["m2", "m3"]
    assert q("round = :o AND bracket = :b AND score BETWEEN :x AND :y",
             {**semi_upper, ":x": N(0), ":y": N(5)}) == ["m3"]
    # The legacy KeyConditions.
    legacy = dynamodb.query(
        TableName=matches, IndexName="by-round",
        KeyConditions={
            "tournament": {"ComparisonOperator": "EQ", "AttributeValueList": [S("WINTER")]},
            "league": {"ComparisonOperator": "EQ", "AttributeValueList": [S("EU")]},
            "round": {"ComparisonOperator": "EQ", "AttributeValueList": [S("SEMI")]},
            "bracket": {"ComparisonOperator": "GE", "AttributeValueList": [S("M")]},
        })
    assert ids(legacy["Items"]) == ["m3", "m2"]


def test_a_multi_attribute_gsi_pages_and_scans(dynamodb, matches):
    first = dynamodb.query(TableName=matches, IndexName="by-round",
                           KeyConditionExpression="tournament = :t AND league = :r",
                           ExpressionAttributeValues=WINTER_EU, Limit=2)
    assert ids(first["Items"]) == ["m1", "m5"]
    assert set(first["LastEvaluatedKey"]) == {"id", "tournament", "league", "round", "bracket",
                                              "score"}
    rest = dynamodb.query(TableName=matches, IndexName="by-round",
                          KeyConditionExpression="tournament = :t AND league = :r",
                          ExpressionAttributeValues=WINTER_EU,
                          ExclusiveStartKey=first["LastEvaluatedKey"])
    assert ids(rest["Items"]) == ["m4", "m3", "m2"]
    # Every page of one item; the scan sees the seven complete items, not the partial one.
    scanned, start = [], None
    while True:
        args = {"ExclusiveStartKey": start} if start else {}
        page = dynamodb.scan(TableName=matches, IndexName="by-round", Limit=1, **args)
        scanned.extend(ids(page["Items"]))
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    assert sorted(scanned) == [f"m{i}" for i in range(1, 8)]


def test_multi_attribute_key_conditions_are_checked(dynamodb, matches):
    def refused(condition, values):
        with pytest.raises(ClientError) as e:
            query(dynamodb, matches, "by-round", condition, values)
        assert code(e.value) == "ValidationException"
        return message(e.value)

    missed = "Query condition missed key schema element: "
    assert refused("tournament = :t", {":t": S("WINTER")}) == missed + "league"
    # A RANGE attribute may not be skipped...
    assert refused("tournament = :t AND league = :r AND bracket = :b",
                   {**WINTER_EU, ":b": S("UPPER")}) == missed + "round"
    assert refused("tournament = :t AND league = :r AND round = :o AND score = :s",
                   {**WINTER_EU, ":o": S("SEMI"), ":s": N(1)}) == missed + "bracket"
    # ...and only the last one given may have a comparison.
    assert refused("tournament = :t AND league = :r AND round > :o AND bracket = :b",
                   {**WINTER_EU, ":o": S("A"), ":b": S("UPPER")}) == \
        "Query key condition not supported"
    assert refused("tournament = :t AND league > :r", WINTER_EU) == \
        "Query key condition not supported"
    assert refused("tournament = :t AND league = :r AND score = :s",
                   {**WINTER_EU, ":s": S("x")}).startswith(missed)
    assert refused("tournament = :t AND league = :r AND round = :o",
                   {**WINTER_EU, ":o": N(1)}) == ("One or more parameter values were invalid: "
                                                  "Condition parameter type does not match "
                                                  "schema type")
    # A filter may not name a key attribute of the index.
    with pytest.raises(ClientError) as e:
        query(dynamodb, matches, "by-round", "tournament = :t AND league = :r",
              {**WINTER_EU, ":s": N(1)}, FilterExpression="score > :s")
    assert message(e.value).endswith("Primary key attribute: score")


def test_multi_attribute_gsi_writes_move_items_and_refuse_wrong_types(dynamodb, matches):
    dynamodb.put_item(TableName=matches, Item=match(20, tournament="AUTUMN", score=1))
    dynamodb.put_item(TableName=matches, Item=match(21, tournament="AUTUMN", score=2))
    autumn = {":t": S("AUTUMN"), ":r": S("EU")}
    condition = "tournament = :t AND league = :r"
    assert ids(query(dynamodb, matches, "by-round", condition, autumn)) == ["m20", "m21"]
    # Changing one RANGE attribute moves the entry within the partition...
    dynamodb.update_item(TableName=matches, Key={"id": S("m20")},
                         UpdateExpression="SET score = :s", ExpressionAttributeValues={":s": N(9)})
    assert ids(query(dynamodb, matches, "by-round", condition, autumn)) == ["m21", "m20"]
    # ...one HASH attribute to another partition, and removing one takes it out.
    dynamodb.update_item(TableName=matches, Key={"id": S("m21")},
                         UpdateExpression="SET league = :r",
                         ExpressionAttributeValues={":r": S("NA")})
    dynamodb.update_item(TableName=matches, Key={"id": S("m20")},
                         UpdateExpression="REMOVE bracket")
    assert query(dynamodb, matches, "by-round", condition, autumn) == []
    moved = query(dynamodb, matches, "by-round", condition, {":t": S("AUTUMN"), ":r": S("NA")})
    assert ids(moved) == ["m21"]
    with pytest.raises(ClientError) as e:
        dynamodb.put_item(TableName=matches, Item={**match(22), "score": S("high")})
    assert message(e.value) == ("One or more parameter values were invalid: Type mismatch for "
                                "Index Key score Expected: N Actual: S IndexName: by-round")


def test_multi_attribute_key_schemas_are_checked(dynamodb):
    name = f"indexes-multi-bad-{uuid.uuid4().hex[:8]}"
    definitions = [("id", "S"), ("a", "S"), ("b", "S"), ("c", "S"), ("d", "S"), ("e", "S")]

    def create(table_keys, gsi_keys=None, lsi_keys=None):
        args = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                    KeySchema=key_schema(table_keys),
                    AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                                          for a, t in definitions])
        if gsi_keys:
            args["GlobalSecondaryIndexes"] = [{"IndexName": "gsi", "KeySchema": key_schema(
                gsi_keys), "Projection": {"ProjectionType": "ALL"}}]
        if lsi_keys:
            args["LocalSecondaryIndexes"] = [{"IndexName": "lsi", "KeySchema": key_schema(
                lsi_keys), "Projection": {"ProjectionType": "ALL"}}]
        with pytest.raises(ClientError) as e:
            dynamodb.create_table(**args)
        assert code(e.value) == "ValidationException"
        return message(e.value)

    five_hashes = [(x, "HASH") for x in "abcde"]
    assert create([("id", "HASH")], five_hashes) == (
        "Invalid KeySchema: A KeySchema may have at most 4 HASH and 4 RANGE KeySchemaElements "
        "for index gsi")
    assert create([("id", "HASH")], [("a", "HASH"), ("b", "RANGE"), ("c", "HASH")]) == (
        "Invalid KeySchema: All HASH KeySchemaElements must come before the RANGE "
        "KeySchemaElements for index gsi")
    # Tables and local indexes keep one HASH and one RANGE attribute.
    assert "Member must have length less than or equal to 2" in create(
        [("id", "HASH"), ("a", "RANGE"), ("b", "RANGE")])
    assert "Member must have length less than or equal to 2" in create(
        [("id", "HASH"), ("a", "RANGE")], lsi_keys=[("id", "HASH"), ("b", "RANGE"),
                                                    ("c", "RANGE")])


def test_a_multi_attribute_gsi_added_later_is_backfilled(dynamodb):
    name = f"indexes-multi-late-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    for i in range(40):
        item = {"id": S(f"u{i}"), "org": S(f"o{i % 2}"), "team": S(f"t{i % 4}"), "age": N(i)}
        if i % 10 == 9:
            del item["age"]
        dynamodb.put_item(TableName=name, Item=item)
    answer = dynamodb.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "org", "AttributeType": "S"},
                              {"AttributeName": "team", "AttributeType": "S"},
                              {"AttributeName": "age", "AttributeType": "N"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by-team",
            "KeySchema": key_schema([("org", "HASH"), ("team", "HASH"), ("age", "RANGE")]),
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    index = answer["TableDescription"]["GlobalSecondaryIndexes"][0]
    assert index["KeySchema"] == key_schema([("org", "HASH"), ("team", "HASH"),
                                             ("age", "RANGE")])
    deadline = time.time() + 30
    while dynamodb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0][
            "IndexStatus"] != "ACTIVE":
        assert time.time() < deadline
        time.sleep(0.05)
    members = query(dynamodb, name, "by-team", "org = :o AND team = :t",
                    {":o": S("o1"), ":t": S("t3")})
    expected = [i for i in range(40) if i % 4 == 3 and i % 10 != 9]
    assert [int(m["age"]["N"]) for m in members] == expected
    assert [m["id"]["S"] for m in members] == [f"u{i}" for i in expected]
    older = query(dynamodb, name, "by-team", "org = :o AND team = :t AND age >= :a",
                  {":o": S("o1"), ":t": S("t3"), ":a": N(20)})
    assert [int(m["age"]["N"]) for m in older] == [i for i in expected if i >= 20]
    dynamodb.delete_table(TableName=name)
