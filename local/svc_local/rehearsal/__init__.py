"""Deploy rehearsal: template.yaml goes through the SAM transform, as `sam deploy` sends it, and the result is
created as a stack in the embedded AWS's CloudFormation; the local stack then runs against the resources that
stack created (tables, queues, secrets, key, roles, functions, state machine) and the functions' environment
is what the created AWS::Lambda::Function resources carry, with local overrides.

moto's CloudFormation lacks some types and gets others wrong for this use; each gap is handled one of two ways,
both recorded in docs/decisions.md ("Deploy rehearsal"):
- a provider of our own registered with moto's CloudFormation (`AWS::SecretsManager::Secret`, which moto cannot
  create; `AWS::StepFunctions::StateMachine`, which moto creates without its DefinitionSubstitutions or
  DefinitionS3Location and out of reach of the executing Step Functions backend; `AWS::DynamoDB::Table`, whose
  TTL and point-in-time recovery moto ignores; `AWS::KMS::Key`, whose KeyPolicy moto stores so that DescribeKey
  fails);
- the resource is stripped from the rehearsal template with its reason (`Rehearsal.stripped`), as is every
  resource that references a stripped one, and checked another way (`Rehearsal.problems`): the routes of a
  stripped API are the local gateway's routes, a stripped event source mapping is the local SQS poller, and
  every reference of a stripped resource resolves against the created stack.
"""

from svc_local.rehearsal.build import (
    ARTIFACT_BUCKET,
    REQUIRED_TYPES,
    RehearsalError,
    package,
    plan,
    references,
    transform,
)
from svc_local.rehearsal.run import CreatedFunction, Rehearsal

__all__ = [
    "ARTIFACT_BUCKET",
    "REQUIRED_TYPES",
    "CreatedFunction",
    "Rehearsal",
    "RehearsalError",
    "package",
    "plan",
    "references",
    "transform",
]
