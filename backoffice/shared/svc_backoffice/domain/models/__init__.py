"""Request models of the backoffice routes (bodies and queries), by domain. The OpenAPI document is generated
from them; names match the `body` / `query` columns of the route table (REQUEST_MODELS)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from svc_backoffice.domain.models import base, catalog, commerce, content
from svc_backoffice.domain.models.content import AiSuggest

__all__ = ["REQUEST_MODELS", "AiSuggest"]

REQUEST_MODELS: dict[str, Any] = {
    name: obj
    for module in (base, catalog, commerce, content)
    for name, obj in vars(module).items()
    if name[:1].isupper() and ((isinstance(obj, type) and issubclass(obj, BaseModel)) or name == "AiSuggest")
}
