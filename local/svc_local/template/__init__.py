"""Read a SAM template (CloudFormation short tags included) into what the local stack needs: routes, tables,
functions, state machines and environment, with parameters and intrinsic functions resolved.

The YAML reading (loading), the records of what is read (specs), the intrinsic functions (intrinsics) and the
template's readers (reader); this package gives their public names."""

from svc_local.template.loading import (
    LOCAL_ACCOUNT_ID,
    LOCAL_REGION,
    LOCAL_STACK_NAME,
    TemplateError,
    load_yaml,
)
from svc_local.template.reader import Template
from svc_local.template.specs import FunctionSpec, Route, SqsEventSource, StateMachineSpec

__all__ = [
    "LOCAL_ACCOUNT_ID",
    "LOCAL_REGION",
    "LOCAL_STACK_NAME",
    "FunctionSpec",
    "Route",
    "SqsEventSource",
    "StateMachineSpec",
    "Template",
    "TemplateError",
    "load_yaml",
]
