"""The rehearsal's run: the built template created as a stack in the embedded AWS, and what the local stack takes
from the created stack (its functions, their roles and environment, the state machines)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError, WaiterError

from svc_local.rehearsal.build import ARTIFACT_BUCKET, RehearsalError, package, plan, transform
from svc_local.rehearsal.checks import StrippedChecks, state_machine_problems
from svc_local.rehearsal.hooks import cloudformation_hooks
from svc_local.state import kept
from svc_local.template import LOCAL_STACK_NAME, Template, load_yaml


@dataclasses.dataclass(frozen=True)
class CreatedFunction:
    """A function as the created stack has it: what IAM enforcement and the runtime need per function."""

    logical_id: str
    name: str
    arn: str
    role_arn: str
    environment: Mapping[str, str]

    @property
    def role_name(self) -> str:
        return self.role_arn.rsplit("/", 1)[-1]


class Rehearsal:
    """Builds template.yaml, creates it as a stack in an embedded AWS, and describes what was created.

    `secret_values` are put into the created secrets after creation (logical id -> value): what an operator
    puts into a secret after the first deploy, or a value the local stack keeps across restarts."""

    def __init__(
        self,
        template_path: str | Path,
        parameters: Mapping[str, str] | None = None,
        *,
        stack_name: str = LOCAL_STACK_NAME,
        secret_values: Mapping[str, str] | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.template_path = Path(template_path).resolve()
        self.parameters = dict(parameters or {})
        self.stack_name = stack_name
        self.secret_values = dict(secret_values or {})
        # The built template is kept here, by the hash of what went into the transform (the same template and
        # parameters build the same template): a restart skips the transform.
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.built: dict[str, Any] = {}
        self.created_template: dict[str, Any] = {}
        self.stripped: dict[str, str] = {}
        self.stack_id = ""
        self.resources: dict[str, tuple[str, str]] = {}  # logical id -> (type, physical id)
        self.refs: dict[str, str] = {}  # what a Ref to each created resource yields (template.Template.refs)
        self.functions: dict[str, CreatedFunction] = {}
        self.state_machines: dict[str, str] = {}  # logical id -> ARN
        self.problems: list[str] = []  # what the checks of stripped resources found
        self.timings: dict[str, float] = {}
        self._local: Template | None = None

    @classmethod
    def for_local_stack(cls, template: Template, state: Any) -> Rehearsal:
        """The rehearsal of the local stack: `template`'s parameter values (PublicBaseUrl, ...); each secret of
        the template gets the value the state directory keeps for it (sessions survive a restart)."""
        declared = template.data.get("Parameters") or {}
        parameters = {
            name: ",".join(value) if isinstance(value, list) else str(value)
            for name, value in template.parameters.items()
            if name in declared
        }
        secrets = {
            logical: state.secret(logical)
            for logical, _ in template.resources_of_type("AWS::SecretsManager::Secret")
        }
        return cls(template.path, parameters, secret_values=secrets, cache_dir=state.path)

    def summary(self) -> str:
        """What the local stack prints at start: the stack, what was stripped and why, what the checks found."""
        lines = [
            f"rehearsal: stack {self.stack_name} created from the built template in {self.timings['total']:.2f}s "
            f"({len(self.resources)} resources; stripped {len(self.stripped)}: "
            + ", ".join(sorted({reason.split(": ", 1)[0] for reason in self.stripped.values()}))
            + "; "
            + ", ".join(f"{step} {seconds:.2f}s" for step, seconds in self.timings.items() if step != "total")
            + ")"
        ]
        lines += [f"rehearsal problem: {problem}" for problem in self.problems]
        return "\n".join(lines)

    # ---- steps

    def run(self, aws: Any) -> Rehearsal:
        """Build, create and inspect the stack in `aws` (a started svc_local.aws.EmbeddedAws); the registry of
        `aws` learns the created functions' names."""
        started = time.perf_counter()
        sam = load_yaml(self.template_path)
        packaged, artifacts = package(sam, self.template_path.parent)
        self.built = self._transform(packaged)
        self.created_template, self.stripped = plan(self.built)
        self.timings["transform"] = time.perf_counter() - started

        mark = time.perf_counter()
        aws.ensure_bucket(ARTIFACT_BUCKET)
        s3 = aws.client("s3")
        for key, data in artifacts.items():
            s3.put_object(Bucket=ARTIFACT_BUCKET, Key=key, Body=data)
        self._create(aws)
        self.timings["create"] = time.perf_counter() - mark

        mark = time.perf_counter()
        self._inspect(aws)
        for logical, value in self.secret_values.items():
            aws.client("secretsmanager").put_secret_value(SecretId=self.refs[logical], SecretString=value)
        self.problems = [*self._check_state_machines(aws), *self.check_stripped()]
        self.timings["inspect"] = time.perf_counter() - mark
        self.timings["total"] = time.perf_counter() - started
        return self

    def _transform(self, packaged: Mapping[str, Any]) -> dict[str, Any]:
        import samtranslator

        path = self.cache_dir / "rehearsal-built.json" if self.cache_dir else None
        inputs = [packaged, self.parameters, samtranslator.__version__]
        return kept(path, inputs, lambda: transform(packaged, self.parameters))

    def _create(self, aws: Any) -> None:
        cfn = aws.client("cloudformation")
        declared = (self.built.get("Parameters") or {}).keys()
        unknown = sorted(set(self.parameters) - set(declared))
        if unknown:
            raise RehearsalError(f"unknown parameter(s): {', '.join(unknown)}")
        try:
            with cloudformation_hooks():
                self.stack_id = cfn.create_stack(
                    StackName=self.stack_name,
                    TemplateBody=json.dumps(self.created_template),
                    Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in self.parameters.items()],
                    Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
                )["StackId"]
            cfn.get_waiter("stack_create_complete").wait(
                StackName=self.stack_id, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
            )
        except ClientError as exc:
            raise RehearsalError(f"stack {self.stack_name}: {exc.response['Error'].get('Message')}") from exc
        except WaiterError as exc:
            events = cfn.describe_stack_events(StackName=self.stack_name)["StackEvents"]
            failed = [
                f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason', e['ResourceStatus'])}"
                for e in events
                if e["ResourceStatus"].endswith("FAILED")
            ]
            raise RehearsalError(
                f"stack {self.stack_name} did not complete: {'; '.join(failed) or exc}"
            ) from exc

    def _inspect(self, aws: Any) -> None:
        cfn = aws.client("cloudformation")
        for page in cfn.get_paginator("list_stack_resources").paginate(StackName=self.stack_id):
            for summary in page["StackResourceSummaries"]:
                logical, kind = summary["LogicalResourceId"], summary["ResourceType"]
                self.resources[logical] = (kind, summary.get("PhysicalResourceId", ""))
                self.refs[logical] = summary.get("PhysicalResourceId", "")
        lam = aws.client("lambda")
        for logical, (kind, physical) in self.resources.items():
            if kind == "AWS::Lambda::Function":
                config = lam.get_function_configuration(FunctionName=physical)
                self.functions[logical] = CreatedFunction(
                    logical_id=logical,
                    name=config["FunctionName"],
                    arn=config["FunctionArn"],
                    role_arn=config["Role"],
                    environment=dict((config.get("Environment") or {}).get("Variables") or {}),
                )
                spec = aws.registry.find(logical)
                if spec is not None:
                    aws.registry.add(dataclasses.replace(spec, function_name=config["FunctionName"]))
            elif kind == "AWS::StepFunctions::StateMachine":
                self.state_machines[logical] = physical

    # ---- what the local stack takes from it

    def physical_id(self, logical_id: str) -> str:
        return self.resources[logical_id][1]

    def environment(self) -> dict[str, str]:
        """The variables the created functions carry (one environment: the local runtime runs every function
        in this process; KMS_KEY_ID names the key the stack created, kept across restarts by svc_local.kmskeys).
        A variable two functions set differently is an error:
        the process could give only one of them its value."""
        merged: dict[str, str] = {}
        owner: dict[str, str] = {}
        for logical, function in sorted(self.functions.items()):
            for name, value in function.environment.items():
                if name in merged and merged[name] != value:
                    raise RehearsalError(
                        f"{name} differs between {owner[name]} and {logical}; the local runtime has one "
                        "environment for every function"
                    )
                merged[name], owner[name] = value, logical
        return merged

    def roles(self) -> dict[str, str]:
        """Function logical id -> the ARN of the role the stack created for it."""
        return {logical: function.role_arn for logical, function in self.functions.items()}

    # ---- checks

    # ---- checks

    def _check_state_machines(self, aws: Any) -> list[str]:
        """Every Lambda a created state machine calls is answered by the local invoke endpoint."""
        created = {f.arn for f in self.functions.values()} | {f.name for f in self.functions.values()}
        return state_machine_problems(aws, self.state_machines, created)

    def check_stripped(self) -> list[str]:
        """Every reference of a stripped resource resolves against the created stack; a stripped API has the
        local gateway's routes; a stripped SQS event source mapping is the local poller."""
        local = self._local_template()
        return StrippedChecks(
            self.built, self.stripped, self.resources, self.functions, self.stack_id, local
        ).problems()

    def _local_template(self) -> Template:
        """The template as the local gateway and SQS poller read it (svc_local.template), parsed once."""
        if self._local is None:
            self._local = Template(self.template_path, self.parameters)
        return self._local
