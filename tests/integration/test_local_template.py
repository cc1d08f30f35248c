"""Template reading for the local stack: short tags, parameters, intrinsic functions and routes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from svc_local.template import Template, TemplateError, load_yaml

ROOT = Path(__file__).resolve().parents[2]

SMALL = """
Parameters:
  Env: {Type: String, Default: dev}
  Url: {Type: String}
  Names: {Type: CommaDelimitedList, Default: "a, b"}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  NotProd: !Not [!Condition IsProd]
Globals:
  Function:
    Environment:
      Variables:
        ENV: !Ref Env
        URL: !Ref Url
        TABLE: !Ref Table
        MACHINE: !Ref Machine
        FN_ARN: !GetAtt Worker.Arn
        MODE: !If [IsProd, strict, relaxed]
        JOINED: !Join ["-", [!Select [1, !Ref Names], !Ref "AWS::Region"]]
        LITERAL: !Sub "${!Keep}-${Env}"
        GONE: !If [NotProd, !Ref "AWS::NoValue", here]
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub app-${Env}
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub worker-${Env}
      CodeUri: functions/worker
      Handler: pkg.main.run
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: machine.asl.json
      DefinitionSubstitutions:
        WorkerArn: !GetAtt Worker.Arn
  ProdOnly:
    Type: AWS::S3::Bucket
    Condition: IsProd
"""

MACHINE = {"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": "${WorkerArn}", "End": True}}}


@pytest.fixture
def small(tmp_path: Path) -> Path:
    (tmp_path / "machine.asl.json").write_text(json.dumps(MACHINE))
    path = tmp_path / "template.yaml"
    path.write_text(SMALL)
    return path


def test_short_tags_become_long_form(small: Path):
    variables = load_yaml(small)["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["ENV"] == {"Ref": "Env"}
    assert variables["FN_ARN"] == {"Fn::GetAtt": ["Worker", "Arn"]}
    assert variables["MODE"] == {"Fn::If": ["IsProd", "strict", "relaxed"]}


def test_environment_resolves_parameters_refs_and_functions(small: Path):
    env = Template(small, {"Url": "http://x"}).environment()
    assert env == {
        "ENV": "dev",
        "URL": "http://x",
        "TABLE": "app-dev",
        "MACHINE": "arn:aws:states:us-east-1:123456789012:stateMachine:Machine",
        "FN_ARN": "arn:aws:lambda:us-east-1:123456789012:function:worker-dev",
        "MODE": "relaxed",
        "JOINED": "b-us-east-1",
        "LITERAL": "${Keep}-dev",
    }


def test_overrides_switch_conditions_and_resources(small: Path):
    template = Template(small, {"Env": "prod", "Url": "http://x"})
    assert template.environment()["MODE"] == "strict"
    assert template.environment()["GONE"] == "here"
    assert template.buckets() == ["svc-local-prodonly"]
    assert Template(small).buckets() == []


def test_missing_parameter_only_matters_where_it_is_used(small: Path):
    template = Template(small)
    assert "URL" not in template.environment()
    with pytest.raises(TemplateError, match="Url"):
        template.resolve({"Ref": "Url"})
    with pytest.raises(TemplateError, match="unknown parameter"):
        Template(small, {"Nope": "1"})


def test_state_machine_definition_gets_local_function_arns(small: Path):
    (machine,) = Template(small).state_machines()
    assert machine.name == "Machine"
    assert machine.definition["States"]["Work"]["Resource"] == (
        "arn:aws:lambda:us-east-1:123456789012:function:worker-dev"
    )


def test_module_path_comes_from_code_uri_and_handler(small: Path):
    (worker,) = Template(small).functions()
    assert (worker.module, worker.attribute, worker.function_name) == (
        "functions.worker.pkg.main",
        "run",
        "worker-dev",
    )


def test_platform_template_routes_and_tables():
    template = Template(ROOT / "template.yaml")
    routes = {(r.method, r.path): r for r in template.routes()}
    login = routes[("POST", "/login")]
    assert (login.logical_id, login.module, login.attribute) == (
        "AccountsFunction",
        "functions.accounts.app",
        "handler",
    )
    # An HTTP API route (payload format 1.0): no binary media types, API Gateway decides per request.
    assert (login.kind, login.api_id, login.binary_media_types) == ("http", "PlatformHttpApi", ())
    tables = {t.logical_id: t for t in template.tables()}
    assert tables["AppTable"].table_name == "svc-dev-app"
    assert tables["AppTable"].ttl_attribute == "expires_at"
    assert tables["OAuthTokensTable"].table_name == "svc-dev-oauth_tokens"
    assert [k["AttributeName"] for k in tables["OAuthTokensTable"].create_kwargs["KeySchema"]] == [
        "user_id",
        "provider",
    ]
    assert {"TABLE_NAME", "PUBLIC_BASE_URL", "SESSION_SECRET_ARN"} <= set(template.env_var_names())
