"""What khata answers, as DynamoDB does, about features a table does not use: tools such as
Terraform and backup auditors call these right after CreateTable. Continuous backups and
point-in-time recovery are DISABLED (enabling the latter is refused), there are no backups, no
(2017) global tables, no Kinesis destinations, and contributor insights are DISABLED.
"""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError


@pytest.fixture(scope="module")
def table(dynamodb):
    name = f"absent-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                              {"AttributeName": "x", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gxx",
                                 "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    yield name
    dynamodb.delete_table(TableName=name)


def error(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


DISABLED = {"ContinuousBackupsStatus": "DISABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}


def test_continuous_backups_are_disabled(dynamodb, table):
    answer = dynamodb.describe_continuous_backups(TableName=table)
    assert answer["ContinuousBackupsDescription"] == DISABLED
    # A table's ARN names it as well as its name (Alternator's
    # test_describe_continuous_backups_table_name_arn, checked against DynamoDB).
    arn = dynamodb.describe_table(TableName=table)["Table"]["TableArn"]
    answer = dynamodb.describe_continuous_backups(TableName=arn)
    assert answer["ContinuousBackupsDescription"] == DISABLED
    with pytest.raises(ClientError) as e:
        dynamodb.describe_continuous_backups(TableName=table + "-missing")
    assert error(e) == ("TableNotFoundException", f"Table not found: {table}-missing")
    # Keeping point-in-time recovery disabled is answered; enabling it is refused.
    answer = dynamodb.update_continuous_backups(
        TableName=table, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False})
    assert answer["ContinuousBackupsDescription"] == DISABLED
    with pytest.raises(ClientError) as e:
        dynamodb.update_continuous_backups(
            TableName=table, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    assert error(e) == ("ValidationException",
                        "point-in-time recovery is not supported by khata yet")


def test_no_backups_and_no_global_tables(dynamodb, table):
    assert dynamodb.list_backups()["BackupSummaries"] == []
    assert dynamodb.list_backups(TableName=table)["BackupSummaries"] == []
    assert dynamodb.list_global_tables()["GlobalTables"] == []
    # Making a backup stays a refusal.
    with pytest.raises(ClientError) as e:
        dynamodb.create_backup(TableName=table, BackupName="backup1")
    assert error(e)[0] == "ValidationException"


def test_no_kinesis_destinations(dynamodb, table):
    answer = dynamodb.describe_kinesis_streaming_destination(TableName=table)
    assert answer["TableName"] == table
    assert answer["KinesisDataStreamDestinations"] == []
    with pytest.raises(ClientError) as e:
        dynamodb.describe_kinesis_streaming_destination(TableName=table + "-missing")
    assert error(e)[0] == "ResourceNotFoundException"


def test_contributor_insights_are_disabled(dynamodb, table):
    answer = dynamodb.describe_contributor_insights(TableName=table)
    assert (answer["TableName"], answer["ContributorInsightsStatus"]) == (table, "DISABLED")
    answer = dynamodb.describe_contributor_insights(TableName=table, IndexName="gxx")
    assert (answer["IndexName"], answer["ContributorInsightsStatus"]) == ("gxx", "DISABLED")
    for missing in [dict(TableName=table + "-missing"), dict(TableName=table, IndexName="nope")]:
        with pytest.raises(ClientError) as e:
            dynamodb.describe_contributor_insights(**missing)
        assert error(e)[0] == "ResourceNotFoundException"
