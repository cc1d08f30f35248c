"""CloudFormation and SAM YAML read into plain dicts (short tags such as !Ref and !Sub in their long form), each
file parsed once per version of it."""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import yaml

LOCAL_REGION = "us-east-1"
LOCAL_ACCOUNT_ID = "123456789012"
LOCAL_STACK_NAME = "svc-local"


class TemplateError(ValueError):
    """The template cannot be read or resolved for local use."""


class _CfnLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader (libyaml's when PyYAML has it: several times faster on a template) that turns CloudFormation
    short tags (!Ref, !Sub, ...) into their long form."""


def _construct_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if tag_suffix in ("Ref", "Condition"):
        return {tag_suffix: value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{tag_suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct_tag)


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Parse a CloudFormation/SAM YAML file, short tags included. A file is parsed once per version of it
    (its modification time and size): the stack reads template.yaml several times as it starts; each caller
    gets its own copy."""
    stat = os.stat(path)
    return copy.deepcopy(_parsed(str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=16)
def _parsed(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: not a template")
    return data
