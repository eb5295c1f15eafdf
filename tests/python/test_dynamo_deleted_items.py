"""DynamoDB reads over many deleted items, through boto3: the queue pattern (items put into one
partition, then deleted, one put back). DynamoDB never fails a read on deleted items; khata's
Query ends a page early, with a LastEvaluatedKey at the last key it scanned, once the page has
passed 10,000 of them (Alternator's `query_tombstone_page_limit`), so that paging on finds
the live item; Scan's pages end the same way.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

DELETED = 10_050  # more than a page passes (10,000)
PAGE_LIMIT = 10_000


def batch_write(dynamodb, table, requests):
    while requests:
        answer = dynamodb.batch_write_item(RequestItems={table: requests})
        requests = answer.get("UnprocessedItems", {}).get(table, [])


def in_batches(dynamodb, table, requests):
    chunks = [requests[i:i + 25] for i in range(0, len(requests), 25)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda c: batch_write(dynamodb, table, c), chunks))


@pytest.fixture(scope="module")
def queue(dynamodb):
    """A table whose partition `queue` held DELETED items, all deleted, and one live item
    after them (SK DELETED + 1); the GSI `by_state` keys them all on state `ready`."""
    name = f"deleted-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                              {"AttributeName": "SK", "AttributeType": "N"},
                              {"AttributeName": "state", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_state",
            "KeySchema": [{"AttributeName": "state", "KeyType": "HASH"},
                          {"AttributeName": "SK", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")

    def item(i):
        return {"PK": {"S": "queue"}, "SK": {"N": str(i)}, "state": {"S": "ready"},
                "body": {"S": "job"}}

    in_batches(dynamodb, name, [{"PutRequest": {"Item": item(i)}} for i in range(DELETED)])
    in_batches(dynamodb, name, [{"DeleteRequest": {"Key": {"PK": item(i)["PK"], "SK": item(i)["SK"]}}}
                                for i in range(DELETED)])
    dynamodb.put_item(TableName=name, Item=item(DELETED + 1))
    yield name
    dynamodb.delete_table(TableName=name)


def all_pages(dynamodb, **request):
    pages = []
    while True:
        page = dynamodb.query(**request) if "KeyConditionExpression" in request \
            else dynamodb.scan(**request)
        pages.append(page)
        if "LastEvaluatedKey" not in page:
            return pages
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


QUERY = {"KeyConditionExpression": "PK = :p", "ExpressionAttributeValues": {":p": {"S": "queue"}}}


@pytest.mark.parametrize("forward", [True, False])
def test_a_query_page_ends_after_ten_thousand_deleted_items(dynamodb, queue, forward):
    pages = all_pages(dynamodb, TableName=queue, ScanIndexForward=forward, **QUERY)
    items = [i for p in pages for i in p["Items"]]
    assert [i["SK"]["N"] for i in items] == [str(DELETED + 1)]
    if forward:
        # The first page passed 10,000 deleted items and ended at the last one it scanned.
        assert pages[0]["Count"] == 0 and pages[0]["ScannedCount"] == 0
        assert pages[0]["LastEvaluatedKey"] == {"PK": {"S": "queue"},
                                                "SK": {"N": str(PAGE_LIMIT - 1)}}
        assert len(pages) == 2
    else:
        # Newest first: the live item comes first, then a page of deleted items.
        assert pages[0]["Items"] == items
    # A filter, a projection or COUNT page the same way.
    pages = all_pages(dynamodb, TableName=queue, ScanIndexForward=forward, Select="COUNT", **QUERY)
    assert sum(p["Count"] for p in pages) == 1


def test_a_query_of_an_index_pages_over_deleted_entries(dynamodb, queue):
    pages = all_pages(dynamodb, TableName=queue, IndexName="by_state",
                      KeyConditionExpression="#s = :s", ExpressionAttributeNames={"#s": "state"},
                      ExpressionAttributeValues={":s": {"S": "ready"}})
    items = [i for p in pages for i in p["Items"]]
    assert [i["SK"]["N"] for i in items] == [str(DELETED + 1)]
    assert pages[0]["LastEvaluatedKey"] == {"PK": {"S": "queue"}, "SK": {"N": str(PAGE_LIMIT - 1)},
                                            "state": {"S": "ready"}}


def test_a_scan_pages_over_deleted_items(dynamodb, queue):
    pages = all_pages(dynamodb, TableName=queue, Limit=10)
    assert [i["SK"]["N"] for p in pages for i in p["Items"]] == [str(DELETED + 1)]
    # Without a Limit the first page ends after 10,000 deleted items, in the partition.
    pages = all_pages(dynamodb, TableName=queue)
    assert [i["SK"]["N"] for p in pages for i in p["Items"]] == [str(DELETED + 1)]
    assert pages[0]["Count"] == 0
    assert pages[0]["LastEvaluatedKey"]["PK"] == {"S": "queue"}
    pages = all_pages(dynamodb, TableName=queue, IndexName="by_state")
    assert [i["SK"]["N"] for p in pages for i in p["Items"]] == [str(DELETED + 1)]
    assert len(pages) >= 2


def test_a_scan_pages_over_deleted_partitions(dynamodb):
    """A table of hash keys only: each deleted item is a partition of its own."""
    name = f"deleted-keys-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}])
    keys = [{"PK": {"S": f"k{i}"}} for i in range(DELETED + 5)]
    in_batches(dynamodb, name, [{"PutRequest": {"Item": k}} for k in keys])
    in_batches(dynamodb, name, [{"DeleteRequest": {"Key": k}} for k in keys[5:]])
    pages = all_pages(dynamodb, TableName=name)
    assert sorted(i["PK"]["S"] for p in pages for i in p["Items"]) == \
        sorted(k["PK"]["S"] for k in keys[:5])
    assert len(pages) >= 2
    dynamodb.delete_table(TableName=name)
