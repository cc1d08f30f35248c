# Developer and CI entry points of the svc platform. Every tool runs from its own environment by path
# (.venv/bin/..., .venv-sam/bin/sam, node_modules/.bin/...); nothing needs an activated shell.
#
#   make install         dev venv (.venv), SAM CLI venv (.venv-sam), MCP SDK 1.x venv (.venv-sdk1), node tools
#   make test            lint-templates, then the whole pytest suite (installs what it needs first)
#   make check           ruff check, ruff format --check, mypy (layers, functions, local, backoffice)
#   make build           sam build (no Docker: the arm64 layer is cross-built from aarch64 wheels)
#   make build-backoffice  the same for backoffice/template.yaml
#   make dev             the local stack (svc-local), IAM enforced on every function (SVC_IAM=record|off)
#   make iam             the journeys with IAM recorded: calls and unused grants per function; fails on a denial or an unused grant
#   make screenshots     retake docs/screenshots (the workspace browser tests)
#   make bench           python -m bench.run, results in bench/RESULTS.md
#   make clean           build output and caches (make distclean also drops the environments)
#
# Installs are guarded by stamp files inside each environment, so a second `make install` (or any target
# that needs the tools) does nothing unless pyproject.toml, package*.json or SAM_VERSION changed.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

PYTHON ?= python3.11
VENV := .venv
SAM_VENV := .venv-sam
# The official MCP Python SDK 1.x, a client the e2e tests run against the stack (it cannot share .venv with 2.x).
SDK1_VENV := .venv-sdk1
SDK1_VERSION := 1.30.0
SAM_VERSION := 1.170.0

PY := $(VENV)/bin/python
SAM := $(SAM_VENV)/bin/sam
ASL_VALIDATOR := node_modules/.bin/asl-validator

VENV_STAMP := $(VENV)/.installed-dev
SAM_STAMP := $(SAM_VENV)/.installed-aws-sam-cli-$(SAM_VERSION)
NODE_STAMP := node_modules/.installed
SDK1_STAMP := $(SDK1_VENV)/.installed-mcp-$(SDK1_VERSION)

TEMPLATES := template.yaml $(wildcard backoffice/template.yaml)
ASL_FILES := $(sort $(wildcard statemachines/*.asl.json))

# pytest options. xdist does not pay on the 2-core machines: measured (Nov 2026) with 79 tests serial 9.9 s
# vs `-n 2` 9.8-10.2 s, with 393 tests serial 99 s (twice) vs `-n 2` 105-115 s; each xdist worker is its own
# pytest session and starts its own local stack for the e2e tests. Try it with: make test PYTEST_ARGS='-n 2'
PYTEST_ARGS ?=

# The SAM CLI never needs AWS for validate --lint or build, but it wants a region, and boto3 must not go
# looking for credentials (profiles, the EC2 metadata endpoint). Dummy values keep it offline.
export SAM_CLI_TELEMETRY := 0
OFFLINE_AWS := env -u AWS_PROFILE -u AWS_DEFAULT_PROFILE -u AWS_SESSION_TOKEN \
	AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1 \
	AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
	AWS_EC2_METADATA_DISABLED=true SAM_CLI_TELEMETRY=0

# mypy cannot follow setuptools' editable-install import hook; point it at the package roots.
MYPY_ENV := MYPYPATH=layers/shared:local:backoffice/shared

.PHONY: help install install-python install-sam install-node install-sdk1 dev test pytest lint-templates lint-asl \
	check build build-backoffice bench screenshots clean distclean iam

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------- install

install: install-python install-sam install-node install-sdk1

install-python: $(VENV_STAMP)
install-sam: $(SAM_STAMP)
install-node: $(NODE_STAMP)
install-sdk1: $(SDK1_STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The backoffice is a package of its own (backoffice/pyproject.toml), installed editable beside the platform.
EDITABLE_PROJECTS := $(wildcard backoffice/pyproject.toml)

$(VENV_STAMP): pyproject.toml $(EDITABLE_PROJECTS) | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]' $(foreach p,$(EDITABLE_PROJECTS),-e ./$(dir $(p)))
	touch $@

# The SAM CLI pins its own boto3, cfn-lint, ... versions: it lives in a venv of its own.
$(SAM_STAMP):
	rm -rf $(SAM_VENV)
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet 'aws-sam-cli==$(SAM_VERSION)'
	$(SAM) --version
	touch $@

$(SDK1_STAMP):
	rm -rf $(SDK1_VENV)
	$(PYTHON) -m venv $(SDK1_VENV)
	$(SDK1_VENV)/bin/python -m pip install --quiet 'mcp==$(SDK1_VERSION)'
	touch $@

# Node tools: asl-validator, and for the e2e tests the MCP conformance suite and Inspector, with the Node 22
# runtime they need (the `node` package; the machine's Node 20 runs the rest).
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# ---------------------------------------------------------------- run

dev: $(VENV_STAMP) $(NODE_STAMP)
	$(VENV)/bin/svc-local

bench: $(VENV_STAMP)
	$(PY) -m bench.run

screenshots: $(VENV_STAMP)
	SVC_UPDATE_SCREENSHOTS=1 $(VENV)/bin/pytest tests/e2e/test_workspace_browser.py tests/e2e/test_workspace_builder_browser.py \
		tests/e2e/test_builder_studio_browser.py tests/e2e/test_workspace_credits_browser.py \
		tests/e2e/test_workspace_more_browser.py tests/e2e/test_workspace_project_browser.py \
		tests/e2e/test_mcp_apps_browser.py tests/e2e/test_backoffice_admin_browser.py \
		tests/e2e/test_storefront_browser.py -q

# ---------------------------------------------------------------- quality gates

# The whole suite runs with IAM enforced (svc_local.iam, on by default): the e2e stacks refuse any AWS call a
# function's role does not allow, and tests/integration/test_iam_enforcement.py shows a removed grant failing.
test: lint-templates pytest

# IAM: the journeys that together run every function (tests/e2e/test_iam_coverage.py adds what
# tests/e2e/test_journeys.py leaves out), every decision recorded rather than enforced so that one run shows
# every missing grant; then per function the calls made and the grants no call used. Fails on any denial or
# unused grant. The stack runs as a deploy with the defaults does (no PublicBaseUrl: SVC_DERIVE_BASE_URL).
IAM_RECORD := .local-state/iam/record.jsonl
IAM_TESTS := tests/e2e/test_journeys.py tests/e2e/test_iam_coverage.py
iam: $(VENV_STAMP) $(NODE_STAMP)
	rm -f $(IAM_RECORD)
	status=0; \
	SVC_IAM=record SVC_IAM_RECORD=$(abspath $(IAM_RECORD)) SVC_DERIVE_BASE_URL=true \
		$(VENV)/bin/pytest -q $(IAM_TESTS) || status=$$?; \
	$(PY) -m svc_local.iam report $(IAM_RECORD) || status=1; \
	exit $$status

# The suite runs the SDK 1.x client (.venv-sdk1) and the node tools (IAM evaluation, conformance suite,
# Inspector): a fresh clone's `make test` installs them first.
pytest: $(VENV_STAMP) $(NODE_STAMP) $(SDK1_STAMP)
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

lint-templates: $(VENV_STAMP) $(SAM_STAMP) lint-asl
	$(VENV)/bin/cfn-lint -- $(TEMPLATES)
	@for t in $(TEMPLATES); do \
		echo "$(SAM) validate --lint --template-file $$t"; \
		$(OFFLINE_AWS) $(SAM) validate --lint --template-file "$$t"; \
	done

lint-asl: $(NODE_STAMP)
ifeq ($(ASL_FILES),)
	@echo "asl-validator: no statemachines/*.asl.json to check"
else
	$(ASL_VALIDATOR) $(foreach f,$(ASL_FILES),--json-path $(f))
endif

check: $(VENV_STAMP)
	@status=0; \
	echo "ruff check ."; $(VENV)/bin/ruff check . || status=1; \
	echo "ruff format --check ."; $(VENV)/bin/ruff format --check . || status=1; \
	echo "mypy"; $(MYPY_ENV) $(VENV)/bin/mypy || status=1; \
	exit $$status

# ---------------------------------------------------------------- build

# No Docker needed: lambda-builders downloads manylinux aarch64 wheels for the arm64 layer
# (pip download --platform manylinux2014_aarch64 --only-binary=:all:). The python3.11 runtime is Amazon
# Linux 2 (glibc 2.26), so only manylinux2014/_2_17 wheels qualify; a dependency without one fails the build
# (`--use-container` needs Docker and would have to compile from an sdist, where there is one).
# The publish function pushes the backoffice tree: it is bundled into the shared layer first.
build: $(SAM_STAMP) $(VENV_STAMP)
	$(PY) -m svc_local.bundle
	$(OFFLINE_AWS) $(SAM) build --template-file template.yaml

# The backoffice is its own SAM application (backoffice/template.yaml), built into .aws-sam/backoffice/.
build-backoffice: $(SAM_STAMP)
	$(OFFLINE_AWS) $(SAM) build --template-file backoffice/template.yaml --cached --parallel \
		--build-dir .aws-sam/backoffice/build --cache-dir .aws-sam/backoffice/cache

# ---------------------------------------------------------------- housekeeping

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache *.egg-info backoffice/*.egg-info
	find . -path ./$(VENV) -prune -o -path ./$(SAM_VENV) -prune -o -path ./$(SDK1_VENV) -prune -o -path ./node_modules -prune -o \
		-type d -name __pycache__ -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) $(SAM_VENV) $(SDK1_VENV) node_modules
