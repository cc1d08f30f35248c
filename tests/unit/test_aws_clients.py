import json
import re
from pathlib import Path

import pytest
from botocore.loaders import create_loader

from svc_local import botodata
from svc_shared.core import aws

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_clients(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    return aws.AwsClients()


def test_the_shipped_endpoints_file_is_botocores_cut_to_our_services():
    # Regenerate with `python -m svc_local.botodata` after a botocore upgrade or a new service.
    shipped = (aws.DATA_DIR / "endpoints.json").read_text(encoding="utf-8")
    assert shipped == botodata.trimmed_endpoints()
    stock = create_loader().load_data("endpoints")
    ours = json.loads(shipped)
    assert [p["partition"] for p in ours["partitions"]] == [p["partition"] for p in stock["partitions"]]
    for mine, theirs in zip(ours["partitions"], stock["partitions"], strict=True):
        assert set(mine["services"]) == botodata.endpoint_prefixes() & set(theirs["services"])
        for name, entry in mine["services"].items():
            assert entry == theirs["services"][name]


@pytest.mark.parametrize("service", aws.SERVICES)
def test_clients_resolve_the_same_endpoints_as_stock_botocore(fresh_clients, service):
    import botocore.session

    ours = fresh_clients.client(service)
    stock = botocore.session.get_session().create_client(service, region_name="eu-west-3")
    assert ours.meta.endpoint_url == stock.meta.endpoint_url
    assert ours.meta.region_name == stock.meta.region_name == "eu-west-3"
    assert ours.meta.service_model.signing_name == stock.meta.service_model.signing_name
    assert fresh_clients.client(service) is ours


def test_a_service_outside_the_list_is_refused_by_name(fresh_clients):
    with pytest.raises(ValueError, match="'sns'"):
        fresh_clients.client("sns")


def test_every_client_the_code_asks_for_is_in_the_list():
    asked = set()
    for path in [*ROOT.glob("layers/shared/svc_shared/**/*.py"), *ROOT.glob("functions/*/app.py")]:
        asked |= set(re.findall(r"aws\.client\(\"([a-z0-9-]+)\"\)", path.read_text(encoding="utf-8")))
    assert asked
    assert asked <= set(aws.SERVICES)
