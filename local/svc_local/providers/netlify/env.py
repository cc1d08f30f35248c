"""The static_host sandbox's environment variables (account-level API filtered by site, as the real one)."""

from __future__ import annotations

from typing import Any

from svc_local.providers.common import iso, json_body, json_body_as, random_id, route
from svc_local.providers.netlify.base import NetlifyBase, error
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response


class EnvRoutes(NetlifyBase):
    def _env_site(self, request: SandboxRequest) -> dict[str, Any]:
        """The environment of the site `?site_id=` names, when the path's account is the token's and owns the
        site (Refused: 401, 404)."""
        account = self._account(request)
        site = self.data["sites"].get(request.arg("site_id") or "")
        if request.params["account_id"] != account or site is None or site["account_id"] != account:
            raise Refused(error(404, "Not Found"))
        return self.data["env"].setdefault(site["id"], {})

    def site_environment(self, site_id: str) -> dict[str, str]:
        """The values a build of the site sees (context "all" or "production")."""
        values: dict[str, str] = {}
        for key, item in self.data["env"].get(site_id, {}).items():
            chosen = [v for v in item["values"] if v.get("context") in ("all", "production")]
            if chosen:
                values[key] = str(chosen[-1]["value"])
        return values

    @staticmethod
    def _env_item(key: str, item: dict[str, Any]) -> dict[str, Any]:
        return {
            "key": key,
            "scopes": ["builds", "functions", "runtime", "post-processing"],
            "values": item["values"],
            "is_secret": item["is_secret"],
            "updated_at": item["updated_at"],
        }

    @staticmethod
    def _values(raw: Any) -> list[dict[str, Any]] | None:
        if not isinstance(raw, list) or not raw:
            return None
        values = []
        for value in raw:
            if not isinstance(value, dict) or not isinstance(value.get("value"), str):
                return None
            values.append(
                {"id": random_id("", 12), "value": value["value"], "context": value.get("context", "all")}
            )
        return values

    @route("GET", "/netlify/api/v1/accounts/{account_id}/env")
    def list_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        return json_response([self._env_item(k, v) for k, v in sorted(env.items())])

    @route("POST", "/netlify/api/v1/accounts/{account_id}/env")
    def create_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        body = json_body_as(request, list, error(400, "Request body must be a list of environment variables"))
        created: dict[str, dict[str, Any]] = {}
        for item in body:
            values = self._values(item.get("values")) if isinstance(item, dict) else None
            if values is None or not isinstance(item.get("key"), str) or not item["key"]:
                return error(400, "Each variable needs a key and values")
            if item["key"] in env or item["key"] in created:
                return error(422, f"Environment variable {item['key']} already exists")
            created[item["key"]] = {
                "values": values,
                "is_secret": bool(item.get("is_secret")),
                "updated_at": iso(),
            }
        with self.state.lock:
            env.update(created)
        self.state.save()
        return json_response([self._env_item(k, v) for k, v in created.items()], 201)

    @route("PUT", "/netlify/api/v1/accounts/{account_id}/env/{key}")
    def put_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        key = request.params["key"]
        if key not in env:
            return error(404, "Environment variable not found")
        body = json_body(request)
        values = self._values(body.get("values")) if isinstance(body, dict) else None
        if values is None:
            return error(400, "values are required")
        with self.state.lock:
            env[key] = {
                "values": values,
                "is_secret": bool(body.get("is_secret", env[key]["is_secret"])),
                "updated_at": iso(),
            }
        self.state.save()
        return json_response(self._env_item(key, env[key]))

    @route("DELETE", "/netlify/api/v1/accounts/{account_id}/env/{key}")
    def delete_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        with self.state.lock:
            env.pop(request.params["key"], None)
        self.state.save()
        return SandboxResponse(204)
