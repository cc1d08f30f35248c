"""The merchant's own deployment (backoffice/template.yaml): secrets reach the functions as Secrets Manager
ARNs, never as environment values, and a database that cannot be reached is a 503 that names no secret."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from bohelpers import AUDIENCE, ISSUER, Client, invoke, migrated_database, sso

from svc_backoffice.access import handoff
from svc_backoffice.core import config
from svc_backoffice.data.db import Database, database, use_database
from svc_local.template import load_yaml

TEMPLATE = Path(__file__).resolve().parents[2] / "backoffice" / "template.yaml"


def test_a_deployed_function_reads_its_database_url_and_gsc_secret_by_arn(
    db, handoff_key, moto_endpoint, monkeypatch
):
    import boto3

    secrets = boto3.session.Session().client(
        "secretsmanager", endpoint_url=moto_endpoint, region_name="us-east-1"
    )
    with migrated_database("bo_arn") as url:
        database_arn = secrets.create_secret(Name=f"shop-db-{uuid.uuid4().hex[:6]}", SecretString=url)["ARN"]
        gsc_arn = secrets.create_secret(Name=f"gsc-{uuid.uuid4().hex[:6]}", SecretString="gsc-from-sm")["ARN"]
        monkeypatch.delenv("DATABASE_URL")
        monkeypatch.delenv("GSC_CLIENT_SECRET")
        monkeypatch.setenv("DATABASE_URL_SECRET_ARN", database_arn)
        monkeypatch.setenv("GSC_CLIENT_SECRET_ARN", gsc_arn)
        config.reset_settings()
        use_database(None)  # the container's own connection, opened from the secret on first use
        try:
            jti = uuid.uuid4().hex
            token = handoff.encode(
                handoff_key, issuer=ISSUER, audience=AUDIENCE, email="arn@shop.example", role="owner", jti=jti
            )
            signed_in = sso(f"/auth/sso?token={token}")
            assert signed_in.location == "/", signed_in.body
            owner = Client(signed_in.cookies[0].split(";")[0])
            assert owner.post("/api/products", {"title": "From the secret's database"}).status == 201
            assert database().conninfo == url
            assert database().one("SELECT count(*) AS n FROM products")["n"] == 1
            assert config.gsc_client_secret(config.get_settings()) == "gsc-from-sm"
            assert owner.post("/api/gsc/connect").status == 200
        finally:
            database().close()
            use_database(None)


def test_self_hosted_settings_need_the_database_by_value_or_by_arn(db, monkeypatch):
    monkeypatch.delenv("DATABASE_URL")
    config.reset_settings()
    with pytest.raises(config.ConfigurationError, match="DATABASE_URL or DATABASE_URL_SECRET_ARN"):
        config.get_settings()
    monkeypatch.setenv("DATABASE_URL", "postgresql://x@127.0.0.1/x")
    monkeypatch.setenv("DATABASE_URL_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x")
    config.reset_settings()
    with pytest.raises(config.ConfigurationError, match="exactly one of DATABASE_URL or"):
        config.get_settings()


def test_a_database_that_cannot_be_reached_answers_503_naming_no_secret(db, staff, caplog):
    use_database(Database("postgresql://shop:pa55-very-secret@127.0.0.1:1/shop"))
    for answer in (
        Client(staff["owner"]["cookie"]).get("/api/products"),
        invoke("POST", "/api/payments/webhooks/card", body={}),
    ):
        assert answer.status == 503
        assert answer.json() == {
            "error": "The shop's database cannot be reached right now. Try again in a moment."
        }
    # Every record with its structured fields (`reason`), as the log shows them.
    logged = "\n".join(json.dumps(r.__dict__, default=str) for r in caplog.records)
    assert "dependency unavailable" in logged and "port 1 failed" in logged
    assert "pa55-very-secret" not in logged


def test_the_template_passes_secrets_to_the_functions_by_arn_only():
    template = load_yaml(TEMPLATE)
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert "DATABASE_URL" not in variables and "GSC_CLIENT_SECRET" not in variables
    assert variables["DATABASE_URL_SECRET_ARN"] == {"Ref": "DatabaseUrlSecretArn"}
    # A parameter holding a secret value would end up in a function's plain environment.
    assert [name for name, p in template["Parameters"].items() if p.get("NoEcho")] == []
    functions = {
        name: r["Properties"]
        for name, r in template["Resources"].items()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert len(functions) == 11  # the nine API groups, the storefront API and the admin screens

    def readable(properties: dict) -> list:
        found = []
        for policy in properties.get("Policies", []):
            if isinstance(policy, dict) and "Fn::If" in policy:
                policy = policy["Fn::If"][1]
            if isinstance(policy, dict) and "AWSSecretsManagerGetSecretValuePolicy" in policy:
                found.append(policy["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"])
        return found

    for name, properties in functions.items():
        arns = readable(properties)
        assert {"Ref": "DatabaseUrlSecretArn"} in arns, name
        assert ({"Ref": "GscClientSecretArn"} in arns) == (name == "IntegrationsFunction"), name


def test_the_api_takes_uploads_and_answers_images_as_binary_and_json_as_text():
    """The admin screens' image uploads (multipart) reach the function base64-encoded and its images (image/*)
    go back as bytes; JSON bodies stay text (the webhooks' signatures cover the text as sent)."""
    from svc_local.gateway import is_binary

    api = load_yaml(TEMPLATE)["Resources"]["BackofficeApi"]["Properties"]
    types = [t.replace("~1", "/") for t in api["BinaryMediaTypes"]]
    assert is_binary("multipart/form-data; boundary=x", types)
    assert all(is_binary(kind, types) for kind in ("image/png", "image/jpeg", "image/webp", "image/gif"))
    assert not any(
        is_binary(kind, types) for kind in ("application/json", "application/x-www-form-urlencoded")
    )
