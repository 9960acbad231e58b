# Two commands matter: `make run` and `make test`. Both set everything up from a fresh clone
# and are safe to run again; the other targets are their building blocks. The reference is the
# site in docs/ (`make docs`).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
# Material for MkDocs gets fixes until its end of life on 5 May 2027 (Zensical is its successor);
# NO_MKDOCS_2_WARNING keeps that notice out of every build. Never --quiet: it also silences the
# warnings --strict counts, and a broken link then passes.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

.PHONY: run test setup browser sandbox prometheus stress flake chaos bench lint screenshots docs

setup: $(STAMP) $(NODE_STAMP)

# The browser tests drive Debian's Chromium (Playwright never downloads a browser of its own here).
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "Browser tests need Debian's chromium: sudo apt-get install chromium"; \
	  fi; }

# Agents and commands run in bubblewrap (graphs.workspaces.sandbox); the console says so plainly where it cannot.
sandbox:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "Agents run sandboxed with Debian's bubblewrap: sudo apt-get install bubblewrap"; \
	  fi; }

# The metrics tests scrape the console and a worker with a real Prometheus server (Debian's).
prometheus:
	@command -v prometheus >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	  else \
	    echo "The metrics tests scrape with Debian's Prometheus: sudo apt-get install --no-install-recommends prometheus"; \
	  fi; }

# make flake loads every core with Debian's stress-ng while it runs the timing-exposed tests.
stress:
	@command -v stress-ng >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null; \
	  else \
	    echo "make flake loads the machine with Debian's stress-ng: sudo apt-get install stress-ng"; \
	  fi; }

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,docs]'
	touch $@

# The lockfile also pins the Claude Code and Codex CLIs the tests run for real: Claude's postinstall puts
# the native binary of this platform at node_modules/.bin/claude, Codex's comes in an optional package
# of this platform; the version checks fail the step if either did not.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	node_modules/.bin/claude --version >/dev/null
	node_modules/.bin/codex --version >/dev/null
	mkdir -p node_modules && touch $@

run: export DEBUG ?= 1
# The console's offline agent takes two seconds a call, its lines spread over them, so a pipeline started
# in the console can be watched at work; the demo's own finished run (load_demo) is made at full speed.
run: DEMO_PACE ?= 2
run: setup sandbox
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py load_demo
	WORKGRAPH_OFFLINE_CALL_SECONDS=$(DEMO_PACE) $(VENV)/bin/daphne -b 127.0.0.1 -p 8000 console.asgi:application

# The front-end modules' unit tests (node:test, no packages) first: they take a second. Then the
# docs site, strictly: a broken link or a page missing from the nav fails the run. Then the import
# contracts of pyproject.toml (lint-imports): a package importing one above it fails. Then the suite in
# TEST_PROCESSES processes (pytest-xdist): half its time is spent waiting on the daphne servers,
# browsers, Celery workers and agent CLIs it starts, so two processes keep both cores busy. A module
# stays in one process (--dist loadfile), with its fixtures.
TEST_PROCESSES ?= 2
test: setup browser sandbox prometheus
	node --test tests/js/
	$(MKDOCS)
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile

# The browser tests and the services tests (real Celery workers, PostgreSQL, Redis) FLAKE_RUNS times with
# every core loaded by stress-ng, as CI's machine may be: each failure printed, exit 1 on any
# (docs/reliability.md). Against the local PostgreSQL and Redis, as .ci/run.
FLAKE_RUNS ?= 3
flake: export CI = true
flake: export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
flake: export REDIS_URL ?= redis://127.0.0.1:6379/0
flake: setup browser sandbox prometheus stress
	$(PY) tests/flake.py --runs $(FLAKE_RUNS)

# The fault cases (tests/reliability/chaos_*.py): a worker SIGKILLed, Redis and PostgreSQL restarted, the
# workspace folder's filesystem full, each during a CHAOS_NODES-node run (200; the documented run is 1,000) on
# a PostgreSQL cluster and a redis-server of their own — never the machine's — within CHAOS_BUDGET_SECONDS
# (900). Exit 1 when any case lost, duplicated or left anything behind (docs/reliability.md).
chaos: setup sandbox
	$(PY) tests/chaos.py

# The benchmarks include the Celery mode and a bare-Celery floor: they use the local PostgreSQL and Redis
# (as .ci/run does), on a database of their own so a concurrent `make test` keeps its own.
bench: export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/bench
bench: export REDIS_URL ?= redis://127.0.0.1:6379/0
bench: setup
	$(PY) -m pytest tests/bench -s -p no:cacheprovider -o python_files='bench_*.py'

# The page tour's screenshots (every page, 1440 and 390 px, light and dark) into test-artifacts/tour/,
# and the pictures the docs' page tour (docs/pages.md) and the README show into docs/screenshots/.
screenshots: setup browser
	SCREENSHOTS_DIR=docs/screenshots $(PY) -m pytest -q -p no:cacheprovider tests/browser/test_page_tour.py

# The reference site (mkdocs.yml), from docs/ into var/site/. Material bundles its own assets, and
# mkdocs.yml turns off its web fonts: the build and the site reach no other host.
docs: setup
	$(MKDOCS)

lint: setup
	$(VENV)/bin/ruff check .
