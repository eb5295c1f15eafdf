"""TTL expiry and Streams through boto3: with TTL enabled, items whose TTL attribute is a past
epoch time disappear within the expirer's period (the session node runs with
`ttl_scan_period_seconds=1`), each leaving a REMOVE record by the service; items whose
attribute is in the future, not a number, or more than five years past stay.
"""

from __future__ import annotations

import time
import uuid


def wait_for(predicate, timeout: float = 15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()


def test_expired_items_disappear_with_a_service_record(dynamodb, dynamodbstreams):
    table = f"ttl-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    try:
        dynamodb.update_time_to_live(
            TableName=table,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
        now = int(time.time())
        items = {
            "past": {"N": str(now - 10)},
            "fraction": {"N": f"{now - 5}.5"},
            "future": {"N": str(now + 3600)},
            "text": {"S": str(now - 10)},
            "ancient": {"N": str(now - 6 * 365 * 86400)},
        }
        for key, expires in items.items():
            dynamodb.put_item(TableName=table,
                              Item={"pk": {"S": key}, "expires": expires, "v": {"S": key}})
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "none"}})

        def remaining():
            got = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
            keys = {i["pk"]["S"] for i in got}
            return keys if keys == {"future", "text", "ancient", "none"} else None

        assert wait_for(remaining) == {"future", "text", "ancient", "none"}

        arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        shard = dynamodbstreams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        it = dynamodbstreams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                                ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records = dynamodbstreams.get_records(ShardIterator=it)["Records"]
        removes = [r for r in records if r["eventName"] == "REMOVE"]
        assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in removes) == ["fraction", "past"]
        for r in removes:
            assert r["userIdentity"] == {"Type": "Service",
                                         "PrincipalId": "dynamodb.amazonaws.com"}
            assert r["dynamodb"]["OldImage"]["v"] == r["dynamodb"]["Keys"]["pk"]
        # The user's own writes carry no identity.
        assert all("userIdentity" not in r for r in records if r["eventName"] == "INSERT")
    finally:
        dynamodb.delete_table(TableName=table)


def test_updating_the_time_keeps_the_item(dynamodb):
    table = f"ttl-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST")
    try:
        dynamodb.update_time_to_live(
            TableName=table,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
        now = int(time.time())
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "renewed"},
                                                 "ttl": {"N": str(now + 2)}})
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "lapses"},
                                                 "ttl": {"N": str(now + 2)}})
        dynamodb.update_item(TableName=table, Key={"pk": {"S": "renewed"}},
                             UpdateExpression="SET #t = :t",
                             ExpressionAttributeNames={"#t": "ttl"},
                             ExpressionAttributeValues={":t": {"N": str(now + 3600)}})

        def lapsed():
            return "Item" not in dynamodb.get_item(TableName=table,
                                                   Key={"pk": {"S": "lapses"}},
                                                   ConsistentRead=True)

        assert wait_for(lapsed)
        assert "Item" in dynamodb.get_item(TableName=table, Key={"pk": {"S": "renewed"}})
    finally:
        dynamodb.delete_table(TableName=table)
