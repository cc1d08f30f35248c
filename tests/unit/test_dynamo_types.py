"""Our AttributeValue (de)serialisation agrees with boto3's TypeSerializer on every type the data layer
stores (boto3 is the reference; it is only imported here, in the tests)."""

from decimal import Decimal

import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from svc_shared.storage.dynamo_types import deserialize, serialize

VALUES = [
    None,
    True,
    False,
    0,
    -5,
    10**20,
    Decimal("1.25"),
    "",
    "héllo",
    b"\x00\x01",
    {"a": 1, "b": [1, "x", None, {"c": True}]},
    [],
    {"s1", "s2"},
    {1, 2},
    {b"a", b"b"},
]


def _id(value: object) -> str:
    """A stable test id (a set's repr depends on the hash seed, which differs between xdist workers)."""
    return repr(sorted(value) if isinstance(value, set) else value)[:20]


@pytest.mark.parametrize("value", VALUES, ids=[_id(v) for v in VALUES])
def test_serialize_matches_boto3(value):
    ours, theirs = serialize(value), TypeSerializer().serialize(value)
    if isinstance(value, set):  # set members come in no particular order
        assert ours.keys() == theirs.keys()
        assert sorted(next(iter(ours.values()))) == sorted(next(iter(theirs.values())))
    else:
        assert ours == theirs


@pytest.mark.parametrize("value", VALUES, ids=[_id(v) for v in VALUES])
def test_round_trip_matches_boto3(value):
    wire = TypeSerializer().serialize(value)
    assert deserialize(wire) == TypeDeserializer().deserialize(wire)


def test_floats_travel_as_decimals_and_unknown_types_are_refused():
    assert serialize(1.5) == {"N": "1.5"}
    with pytest.raises(TypeError):
        serialize(object())
    with pytest.raises(TypeError):
        serialize({1, "x"})
