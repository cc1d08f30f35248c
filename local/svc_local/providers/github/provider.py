"""The GitHub sandbox, mounted at /github: its route table, the OAuth app web flow, `git clone` over smart HTTP
through `git http-backend`, and the admin routes tests use."""

from __future__ import annotations

import subprocess
from urllib.parse import urlencode

from svc_local.providers.common import (
    basic,
    bearer,
    form,
    json_body,
    route,
)
from svc_local.providers.github.base import HTTP_BACKEND
from svc_local.providers.github.git_data import GitDataRoutes
from svc_local.providers.github.rest import RestRoutes
from svc_local.sandbox import SandboxRequest, SandboxResponse, json_response


class GitHub(GitDataRoutes, RestRoutes):
    """Mounted at /github: OAuth on /github/login/oauth/*, REST on /github/api, clones on /github/git."""

    # ---- routes

    # ---- OAuth app web flow

    @route("GET", "/github/login/oauth/authorize")
    def authorize(self, request: SandboxRequest) -> SandboxResponse:
        return self.oauth.authorize(request, lambda client_id, redirect_uri: None)

    @route("POST", "/github/login/oauth/access_token")
    def access_token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        guide = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"
        if (
            data.get("client_id") != self.oauth.client_id
            or data.get("client_secret") != self.oauth.client_secret
        ):
            body = {
                "error": "incorrect_client_credentials",
                "error_description": "The client_id and/or client_secret passed are incorrect.",
                "error_uri": f"{guide}/#incorrect-client-credentials",
            }
        else:
            grant, why = self.oauth.redeem(data.get("code", ""), data.get("redirect_uri"))
            if grant is None and why == "redirect_uri_mismatch":
                body = {
                    "error": "redirect_uri_mismatch",
                    "error_description": "The redirect_uri MUST match the registered callback URL for this application.",
                    "error_uri": f"{guide}/#redirect-uri-mismatch2",
                }
            elif grant is None:
                body = {
                    "error": "bad_verification_code",
                    "error_description": "The code passed is incorrect or expired.",
                    "error_uri": f"{guide}/#bad-verification-code",
                }
            else:
                scope = ",".join(grant["scope"].replace(",", " ").split()) or "repo,user:email"
                body = {
                    "access_token": self.issue_token(grant["account"], scope),
                    "token_type": "bearer",
                    "scope": scope,
                }
        if "json" in (request.headers.get("accept") or ""):
            return json_response(body)
        return SandboxResponse(
            200,
            urlencode(body).encode(),
            {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        )

    # ---- git clone over smart HTTP

    @route("*", "/github/git/{owner}/{repo}/{rest+}")
    def smart_http(self, request: SandboxRequest) -> SandboxResponse:
        name = request.params["repo"]
        if not name.endswith(".git"):
            name += ".git"
        found = self.repository(f"{request.params['owner']}/{name[:-4]}")
        credentials = basic(request)
        account = self.account_for_token(credentials[1] if credentials else bearer(request))
        challenge = {"WWW-Authenticate": 'Basic realm="GitHub"'}
        if found is None or (found[0]["private"] and account is None):
            if account is None:
                return SandboxResponse(401, "Authentication required\n", challenge)
            return SandboxResponse(404, "Repository not found.\n")
        meta = found[0]
        if account is not None and not self.can_access(account["login"], meta):
            return SandboxResponse(404, "Repository not found.\n")
        rest = request.params["rest"]
        if rest == "git-receive-pack" or request.arg("service") == "git-receive-pack":
            return SandboxResponse(403, "Pushing is not supported by the sandbox; use the REST API.\n")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": str(self.git_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{meta['full_name']}.git/{rest}",
            "REQUEST_METHOD": request.method,
            "QUERY_STRING": urlencode([(k, v) for k, vs in request.query.items() for v in vs]),
            "CONTENT_TYPE": request.headers.get("content-type", ""),
            "CONTENT_LENGTH": str(len(request.body)),
            "REMOTE_USER": account["login"] if account else "",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for header in ("content-encoding", "git-protocol"):
            if header in request.headers:
                env[f"HTTP_{header.upper().replace('-', '_')}"] = request.headers[header]
        result = subprocess.run([HTTP_BACKEND], input=request.body, env=env, capture_output=True, check=False)
        head, _, body = result.stdout.partition(b"\r\n\r\n")
        if not _ and b"\n\n" in result.stdout:
            head, _, body = result.stdout.partition(b"\n\n")
        status, headers = 200, {}
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split(" ", 1)[0])
            elif key:
                headers[key.strip()] = value.strip()
        if result.returncode != 0 and not result.stdout:
            return SandboxResponse(500, result.stderr.decode("utf-8", "replace"))
        return SandboxResponse(status, body, headers)

    # ---- admin

    @route("POST", "/__admin/github/tokens")
    def admin_token(self, request: SandboxRequest) -> SandboxResponse:
        """Mint a token for an account without the browser step: {account?} -> {access_token, login}."""
        body = json_body(request)
        login = body.get("account") if isinstance(body, dict) else None
        login = login if isinstance(login, str) and login else self.oauth.default_account
        return json_response({"access_token": self.issue_token(login), "login": login}, 201)

    @route("GET", "/__admin/github/repos")
    def admin_repos(self, request: SandboxRequest) -> SandboxResponse:
        with self.state.lock:
            repos = [dict(meta) for meta in self.data["repos"].values()]
        for meta in repos:
            found = self.repository(meta["full_name"])
            meta["branches"] = found[1].branches() if found else {}
            meta["clone_url"] = f"{self.public_url}/github/git/{meta['full_name']}.git"
        return json_response({"repositories": repos})
