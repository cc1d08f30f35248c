"""Writes layers/shared/svc_shared/core/botocore_data/endpoints.json: botocore's endpoints.json cut down to the
services svc_shared.core.aws creates clients for (see that module). Run it after changing the botocore pin or
svc_shared.core.aws.SERVICES:

    .venv/bin/python -m svc_local.botodata
"""

from __future__ import annotations

import json
from typing import Any

from svc_shared.core.aws import DATA_DIR, SERVICES

TARGET = DATA_DIR / "endpoints.json"


def endpoint_prefixes() -> set[str]:
    """The endpoints.json keys of our services (a service model's endpointPrefix, e.g. stepfunctions: states)."""
    from botocore.loaders import create_loader

    loader = create_loader()
    return {loader.load_service_model(name, "service-2")["metadata"]["endpointPrefix"] for name in SERVICES}


def trimmed_endpoints() -> str:
    """botocore's endpoints.json with every partition kept and only our services' entries, as JSON text."""
    from botocore.loaders import create_loader

    data: dict[str, Any] = create_loader().load_data("endpoints")
    keep = endpoint_prefixes()
    for partition in data["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in keep}
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main() -> None:
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(trimmed_endpoints(), encoding="utf-8")
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
