"""A first deploy in one pass: every parameter of template.yaml has a default, samconfig.toml carries no
placeholder, the API is an HTTP API on its $default stage whose routes hand the functions payload format 1.0,
and the Outputs print every URL an operator registers at a provider."""

from __future__ import annotations

import copy
import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from svc_local.template import Template, load_yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
API_ID = "abc123"
EXECUTE_API = f"https://{API_ID}.execute-api.us-east-1.amazonaws.com"
URL_OUTPUTS = {
    "ApiUrl": "",
    "McpUrl": "/mcp",
    "WorkspaceUrl": "/workspace",
    "RepoHostCallbackUrl": "/api/oauth/callback",
    "DbHostCallbackUrl": "/api/oauth/callback",
    "StaticHostCallbackUrl": "/api/oauth/callback",
    "CheckoutWebhookUrl": "/api/webhooks/checkout",
}


def test_every_parameter_has_a_default():
    parameters = load_yaml(TEMPLATE)["Parameters"]
    assert [name for name, spec in parameters.items() if "Default" not in spec] == []
    assert parameters["PublicBaseUrl"]["Default"] == ""
    Template(TEMPLATE).outputs()  # resolves with no override at all


@pytest.mark.parametrize(("name", "suffix"), URL_OUTPUTS.items())
def test_outputs_name_the_execute_api_url_without_a_custom_domain(name, suffix):
    outputs = Template(TEMPLATE, refs={"PlatformHttpApi": API_ID}).outputs()
    assert outputs[name] == f"{EXECUTE_API}{suffix}"
    assert outputs["ExecuteApiUrl"] == EXECUTE_API


@pytest.mark.parametrize(("name", "suffix"), URL_OUTPUTS.items())
def test_outputs_name_the_custom_domain_when_it_is_set(name, suffix):
    outputs = Template(
        TEMPLATE, {"PublicBaseUrl": "https://api.shop.example"}, refs={"PlatformHttpApi": API_ID}
    ).outputs()
    assert outputs[name] == f"https://api.shop.example{suffix}"


def test_a_separate_workspace_application_is_the_workspace_url():
    outputs = Template(TEMPLATE, {"WorkspaceAppUrl": "https://app.shop.example"}).outputs()
    assert outputs["WorkspaceUrl"] == "https://app.shop.example"


def test_the_output_urls_are_routes_the_api_serves():
    routes = {(r.method, r.path) for r in Template(TEMPLATE).routes()}
    assert ("GET", "/api/oauth/callback") in routes  # the three providers' callback
    assert ("POST", "/api/webhooks/checkout") in routes
    assert ("POST", "/mcp") in routes and ("GET", "/workspace") in routes


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource/mcp",  # RFC 9728, path-inserted for /mcp
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",  # RFC 8414 for the issuer at the root
        "/.well-known/openid-configuration",
        "/register",
        "/authorize",
        "/token",
    ],
)
def test_discovery_and_root_fallbacks_are_routes_at_the_root(path):
    routes = {(r.method, r.path) for r in Template(TEMPLATE).routes()}
    assert {(m, p) for m, p in routes if p == path}, path


def test_every_api_event_is_an_http_api_route_with_payload_format_1_0():
    template = Template(TEMPLATE)
    routes = template.routes()
    assert routes and {(r.kind, r.api_id) for r in routes} == {("http", "PlatformHttpApi")}
    assert template.resources["PlatformHttpApi"]["Type"] == "AWS::Serverless::HttpApi"


def _expanded(parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """template.yaml as CloudFormation receives it, expanded by the SAM translator."""
    from samtranslator.translator.transform import transform

    data = copy.deepcopy(load_yaml(TEMPLATE))
    for resource in data["Resources"].values():
        props = resource.get("Properties") or {}
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(props.get(key), str):
                props[key] = "s3://bucket/key"  # what `sam package` puts there

    class NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    return dict(transform(data, parameters or {}, NoManagedPolicies()))


@pytest.fixture(scope="module")
def expanded(monkeypatch_module: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch_module.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return _expanded()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_the_translator_makes_an_http_api_on_the_default_stage(expanded):
    resources = expanded["Resources"]
    stages = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage"]
    assert [s["StageName"] for s in stages] == ["$default"]
    assert stages[0]["DefaultRouteSettings"] == {"ThrottlingBurstLimit": 200, "ThrottlingRateLimit": 100}
    assert not [r for r in resources.values() if r["Type"].startswith("AWS::ApiGateway::")]
    paths = resources["PlatformHttpApi"]["Properties"]["Body"]["paths"]
    integrations = [op["x-amazon-apigateway-integration"] for ops in paths.values() for op in ops.values()]
    assert integrations and {i["payloadFormatVersion"] for i in integrations} == {"1.0"}
    assert "/.well-known/oauth-protected-resource/mcp" in paths


def _references(value: Any) -> set[str]:
    """Logical ids a value refers to (Ref, GetAtt, ${...} in Sub)."""
    import re

    found: set[str] = set()
    if isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref":
                found.add(str(arg))
            elif key == "Fn::GetAtt":
                found.add(str(arg[0] if isinstance(arg, list) else arg.split(".")[0]))
            elif key == "Fn::Sub":
                text = arg[0] if isinstance(arg, list) else arg
                found |= {m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
            found |= _references(arg)
    elif isinstance(value, list):
        for item in value:
            found |= _references(item)
    return found


def test_no_function_depends_on_the_api_so_there_is_no_circular_dependency(expanded):
    resources = expanded["Resources"]
    functions = {k: r for k, r in resources.items() if r["Type"] == "AWS::Lambda::Function"}
    assert functions
    for name, function in functions.items():
        assert "PlatformHttpApi" not in _references(function["Properties"]), name
        assert "PlatformHttpApi" not in function.get("DependsOn", []), name


def test_samconfig_holds_no_placeholder_and_names_only_template_parameters():
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    parameters = load_yaml(TEMPLATE)["Parameters"]
    text = (ROOT / "samconfig.toml").read_text(encoding="utf-8")
    assert ".invalid" not in text and "placeholder" not in text.lower()
    for env, commands in config.items():
        if not isinstance(commands, dict):
            continue
        overrides = (commands.get("deploy") or {}).get("parameters", {}).get("parameter_overrides", "")
        names = [pair.split("=", 1)[0] for pair in overrides.split()]
        assert set(names) <= set(parameters), (env, names)


SAM_PYTHON = ROOT / ".venv-sam/bin/python"
# The options of the pinned SAM CLI's `sam deploy` (samconfig.toml's keys are their names).
DEPLOY_OPTIONS = (
    "import json; from samcli.commands.deploy.command import cli; "
    "print(json.dumps([p.name for p in cli.params if p.name]))"
)


def test_the_first_deploy_runs_from_samconfig_with_no_answer_refused_by_default(expanded):
    options = set(
        json.loads(
            subprocess.run(
                [SAM_PYTHON, "-c", DEPLOY_OPTIONS], check=True, capture_output=True, text=True
            ).stdout
        )
    )
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    roles = [r for r in expanded["Resources"].values() if r["Type"] == "AWS::IAM::Role"]
    capability = (
        "CAPABILITY_NAMED_IAM" if any("RoleName" in r["Properties"] for r in roles) else "CAPABILITY_IAM"
    )
    for env in ("default", "prod"):
        deploy = config[env]["deploy"]["parameters"]
        # The CLI ignores a key it does not know: a misspelt one would silently not apply.
        assert set(deploy) <= options, (env, set(deploy) - options)
        assert deploy["stack_name"], env
        assert capability in deploy["capabilities"].split(), (
            env
        )  # CloudFormation refuses the roles without it
        assert deploy.get("resolve_s3") is True or deploy.get("s3_bucket"), env  # the code goes to a bucket
        assert not deploy.get("guided"), env
    # "Deploy this changeset? [y/N]": its default refuses; the README's first deploy asks nothing.
    assert not config["default"]["deploy"]["parameters"].get("confirm_changeset")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Deploy", 1)[1].split("\n## ", 1)[0]
    shell = section.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].split() for line in shell.splitlines() if "sam deploy" in line]
    assert commands and all(not {"--guided", "-g"} & set(words) for words in commands), commands


def test_secrets_every_shop_key_derives_from_are_kept_when_the_stack_is_deleted():
    resources = load_yaml(TEMPLATE)["Resources"]
    for name in ("BackofficeSecret", "SessionSecret"):
        assert resources[name].get("DeletionPolicy") == "Retain", name
        assert resources[name].get("UpdateReplacePolicy") == "Retain", name


def test_a_named_resource_kept_on_delete_is_not_kept_by_a_failed_first_create():
    # A named resource kept after a failed first create makes the retry fail ("already exists").
    resources = load_yaml(TEMPLATE)["Resources"]
    named = {
        name: r.get("DeletionPolicy")
        for name, r in resources.items()
        if r.get("DeletionPolicy", "").startswith("Retain")
        and any(key.endswith("Name") for key in (r.get("Properties") or {}))
    }
    assert {"AppTable", "OAuthTokensTable"} <= set(named)
    assert {name: policy for name, policy in named.items() if policy != "RetainExceptOnCreate"} == {}


def test_the_data_key_policy_names_the_roles_that_use_it_by_arn():
    # A name pattern (${AWS::StackName}-*) breaks when CloudFormation shortens a long stack name in role names.
    resources = load_yaml(TEMPLATE)["Resources"]
    statements = resources["DataKey"]["Properties"]["KeyPolicy"]["Statement"]
    use = [s for s in statements if s["Sid"] != "KeyAdministration"]
    assert use and not any("Condition" in s for s in use)
    functions = {f"{name}Role" for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}
    for statement in use:
        assert set(
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        ) <= {
            "kms:Decrypt",
            "kms:GenerateDataKey",
        }
        for principal in statement["Principal"]["AWS"]:
            role, attribute = principal["Fn::GetAtt"]
            assert role in functions and attribute == "Arn", principal
