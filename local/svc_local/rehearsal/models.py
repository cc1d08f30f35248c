"""CloudFormation models of our own for moto's CloudFormation, for the types it lacks or gets wrong: Secrets
Manager secrets, Step Functions state machines, DynamoDB tables (TTL, point-in-time recovery) and KMS keys
(their policy). Imported only by svc_local.rehearsal.hooks.install_models, after moto has listed its own models
(moto is imported then)."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
from moto.core.common_models import CloudFormationModel
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.table import Table as MotoTable
from moto.kms.models import Key as MotoKey
from moto.kms.models import kms_backends
from moto.s3.models import s3_backends
from moto.secretsmanager.models import secretsmanager_backends
from moto.stepfunctions.responses import get_backend


class FromProperties:
    """moto's call to create a resource, handed to `create` as the resource's name and its Properties."""

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> Any:
        props = cloudformation_json.get("Properties") or {}
        return cls.create(resource_name, props, account_id, region_name)

    @classmethod
    def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
        raise NotImplementedError


class CreatedOnly(FromProperties, CloudFormationModel):
    """What the rehearsal's own types share: a stack is created (and deleted), never updated in place; the
    type, the property that names a resource and the attributes Fn::GetAtt reads are class attributes."""

    TYPE: ClassVar[str]
    NAME_PROPERTY: ClassVar[str]
    ATTRIBUTES: ClassVar[frozenset[str]]

    @classmethod
    def cloudformation_type(cls) -> str:
        return cls.TYPE

    @classmethod
    def cloudformation_name_type(cls) -> str:
        return cls.NAME_PROPERTY

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in cls.ATTRIBUTES

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        raise NotImplementedError("the rehearsal creates stacks; it does not update them")

    @classmethod
    def delete_from_cloudformation_json(
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str
    ) -> None:
        cls.delete(resource_name, account_id, region_name)

    @classmethod
    def delete(cls, name: str, account_id: str, region_name: str) -> None:
        raise NotImplementedError

    def is_created(self) -> bool:
        return True


class Secret(CreatedOnly):
    """AWS::SecretsManager::Secret, which moto's CloudFormation lacks: SecretString or
    GenerateSecretString (a random value, with SecretStringTemplate and GenerateStringKey), Description,
    KmsKeyId and Tags. Ref and Fn::GetAtt Id give the ARN, as CloudFormation does."""

    TYPE, NAME_PROPERTY, ATTRIBUTES = "AWS::SecretsManager::Secret", "Name", frozenset({"Id"})

    def __init__(self, arn: str, name: str, account_id: str, region_name: str) -> None:
        self.arn, self.name = arn, name
        self.account_id, self.region_name = account_id, region_name

    @property
    def physical_resource_id(self) -> str:
        return self.arn

    def get_cfn_attribute(self, attribute_name: str) -> str:
        if attribute_name == "Id":
            return self.arn
        raise UnformattedGetAttTemplateException()

    @classmethod
    def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
        backend = secretsmanager_backends[account_id][region_name]
        value = props.get("SecretString")
        generate = props.get("GenerateSecretString")
        if value is None and generate is not None:
            password = json.loads(
                backend.get_random_password(
                    password_length=int(generate.get("PasswordLength", 32)),
                    exclude_characters=str(generate.get("ExcludeCharacters", "")),
                    exclude_numbers=_true(generate.get("ExcludeNumbers")),
                    exclude_punctuation=_true(generate.get("ExcludePunctuation")),
                    exclude_uppercase=_true(generate.get("ExcludeUppercase")),
                    exclude_lowercase=_true(generate.get("ExcludeLowercase")),
                    include_space=_true(generate.get("IncludeSpace")),
                    require_each_included_type=_true(generate.get("RequireEachIncludedType", True)),
                )
            )["RandomPassword"]
            if generate.get("SecretStringTemplate"):
                document = json.loads(generate["SecretStringTemplate"])
                document[generate["GenerateStringKey"]] = password
                value = json.dumps(document)
            else:
                value = password
        created = json.loads(
            backend.create_secret(
                name=name,
                secret_string=value,
                secret_binary=None,
                description=props.get("Description"),
                tags=props.get("Tags"),
                kms_key_id=props.get("KmsKeyId"),
                client_request_token=None,
                replica_regions=[],
                force_overwrite=False,
            )
        )
        return cls(created["ARN"], created["Name"], account_id, region_name)

    @classmethod
    def delete(cls, name: str, account_id: str, region_name: str) -> None:
        secretsmanager_backends[account_id][region_name].delete_secret(
            name, recovery_window_in_days=None, force_delete_without_recovery=True
        )


class StateMachine(CreatedOnly):
    """AWS::StepFunctions::StateMachine as CloudFormation creates it: DefinitionString, Definition or
    DefinitionS3Location (read from the embedded S3), DefinitionSubstitutions applied, type, tags and
    tracing. Created in the Step Functions backend the API serves (the executing one when executions
    run), so that StartExecution on its ARN runs it. Returns moto's own state machine model."""

    TYPE, NAME_PROPERTY = "AWS::StepFunctions::StateMachine", "StateMachineName"
    ATTRIBUTES = frozenset({"Arn", "Name", "StateMachineRevisionId"})

    @classmethod
    def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
        if "DefinitionString" in props:
            definition = str(props["DefinitionString"])
        elif "Definition" in props:
            definition = json.dumps(props["Definition"])
        elif "DefinitionS3Location" in props:
            location = props["DefinitionS3Location"]
            obj = s3_backends[account_id]["aws"].get_object(
                location["Bucket"], location["Key"], version_id=location.get("Version")
            )
            if obj is None:
                raise ValueError(f"no definition at s3://{location['Bucket']}/{location['Key']}")
            definition = obj.value.decode()
        else:
            raise ValueError("one of DefinitionString, Definition, DefinitionS3Location is required")
        substitutions = props.get("DefinitionSubstitutions") or {}
        definition = re.sub(
            r"\$\{([^}]+)\}",
            lambda m: str(substitutions[m.group(1)]) if m.group(1) in substitutions else m.group(0),
            definition,
        )
        tracing = props.get("TracingConfiguration")
        return get_backend(account_id, region_name).create_state_machine(
            name=props.get("StateMachineName", name),
            definition=definition,
            roleArn=props["RoleArn"],
            tags=[{k.lower(): v for k, v in tag.items()} for tag in props.get("Tags") or []],
            tracingConfiguration={"enabled": _true(tracing.get("Enabled"))} if tracing else None,
            sm_type=props.get("StateMachineType", "STANDARD"),
        )

    @classmethod
    def delete(cls, name: str, account_id: str, region_name: str) -> None:
        get_backend(account_id, region_name).delete_state_machine(name)


class Table(FromProperties, MotoTable):
    """moto's AWS::DynamoDB::Table plus the two properties it ignores: TimeToLiveSpecification and
    PointInTimeRecoverySpecification."""

    @classmethod
    def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
        table = MotoTable.create_from_cloudformation_json(
            name, {"Properties": props}, account_id, region_name
        )
        backend = dynamodb_backends[account_id][region_name]
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            backend.update_time_to_live(
                table.name, {"Enabled": _true(ttl.get("Enabled")), "AttributeName": ttl["AttributeName"]}
            )
        recovery = props.get("PointInTimeRecoverySpecification")
        if recovery:
            backend.update_continuous_backups(
                table.name,
                {"PointInTimeRecoveryEnabled": _true(recovery.get("PointInTimeRecoveryEnabled"))},
            )
        return table


class Key(FromProperties, MotoKey):
    """moto's AWS::KMS::Key keeps a KeyPolicy given as a JSON object (as templates give it) unserialised,
    and DescribeKey then fails; it also ignores KeyUsage and KeySpec. This one serialises the policy and
    passes both."""

    @classmethod
    def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
        policy = props.get("KeyPolicy")
        key = kms_backends[account_id][region_name].create_key(
            policy=policy if isinstance(policy, str) or policy is None else json.dumps(policy),
            key_usage=str(props.get("KeyUsage", "ENCRYPT_DECRYPT")),
            key_spec=str(props.get("KeySpec", "SYMMETRIC_DEFAULT")),
            description=str(props.get("Description", "")),
            tags=props.get("Tags", []),
        )
        key.key_rotation_status = _true(props.get("EnableKeyRotation", False))
        key.enabled = _true(props.get("Enabled", True))
        return key


MODELS: list[Any] = [Secret, StateMachine, Table, Key]


def _true(value: Any) -> bool:
    return str(value).lower() == "true"
