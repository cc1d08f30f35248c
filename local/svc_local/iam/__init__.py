"""IAM in the local stack, enforced as AWS enforces it.

Every AWS call a function makes in the local stack is checked against that function's execution role, as
the SAM transform expands it from template.yaml (`aws-sam-translator`, with dummy code locations: managed
policy templates such as DynamoDBCrudPolicy expand there), by a real policy evaluator: `@cloud-copilot/
iam-simulate` (npm), run as one long-lived node process (iam_eval.mjs) that answers over a pipe; decisions
are cached per (principal, action, resource, the request's values of the condition keys its policies use).

- Calls are seen in botocore (`before-parameter-build`, which presigned URLs go through as well) and
  attributed to the function whose instance makes them (`runtime.current_function`). A denied call raises
  botocore's ClientError AccessDeniedException (S3: AccessDenied), naming the role session, the action and
  the resource, as AWS does.
- Each function is its own container: its own `services` wiring, secrets cache and settings, read from its
  own environment (template Globals plus its own variables, with the local stack's values): a value cached
  by one function never spares another the call (and its grant).
- Beyond the functions' own calls: the SQS event source mapping polls and deletes with the consumer's role;
  Step Functions invokes its Lambda tasks with the state machine's role; a presigned S3 PUT is authorized
  when it arrives, with the permissions of the function that signed it; KMS calls meet the key policy and
  S3 calls the bucket policy as resource policies.

SVC_IAM=enforce (default) | record (decide and record, never refuse: diagnosis) | off.
SVC_IAM_RECORD=<file>: every distinct decision is appended there as a JSON line (`make iam` reads it:
`python -m svc_local.iam report <file>`). `python -m svc_local.iam grants` writes docs/iam-grants.md.
"""

from svc_local.iam.evaluation import (
    MODE_ENV,
    RECORD_ENV,
    AccessDenied,
    Decision,
    Iam,
    simulation,
)
from svc_local.iam.evaluator import Evaluator
from svc_local.iam.hook import active, for_template, function_environment, install, mode_from_env, uninstall
from svc_local.iam.model import IamError, IamModel, Principal, expand, local_resolver, role_documents
from svc_local.iam.report import granted_actions, grants_markdown, read_record, report
from svc_local.iam.requests import Request, key_arn, queue_arn, requests_for, secret_arn, table_arn

__all__ = [
    "MODE_ENV",
    "RECORD_ENV",
    "AccessDenied",
    "Decision",
    "Evaluator",
    "Iam",
    "IamError",
    "IamModel",
    "Principal",
    "Request",
    "active",
    "expand",
    "for_template",
    "function_environment",
    "granted_actions",
    "grants_markdown",
    "install",
    "key_arn",
    "local_resolver",
    "mode_from_env",
    "queue_arn",
    "read_record",
    "report",
    "requests_for",
    "role_documents",
    "secret_arn",
    "simulation",
    "table_arn",
    "uninstall",
]
