"""Settings for the test suite: the project's settings with test-only secrets and quick hashing."""

import os
import sys
import tempfile

os.environ.setdefault("SECRET_KEY", "test-suite-only-secret-key-not-for-deployment")
# pytest-xdist runs the suite in several processes on one machine and one Redis: each process keeps a
# scratch folder of its own (its runs' log files are named by run id, and the ids of the processes' test
# databases overlap). The processes a test starts (daphne, Celery workers) inherit both variables, so
# they keep their test process's folder.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and os.environ.get("WORKGRAPH_TEST_VAR_DIR_OF") != XDIST_WORKER:
    os.environ.pop("WORKGRAPH_VAR_DIR", None)
    os.environ["WORKGRAPH_TEST_VAR_DIR_OF"] = XDIST_WORKER
os.environ.setdefault("WORKGRAPH_VAR_DIR", tempfile.mkdtemp(prefix=f"workgraph-test-{XDIST_WORKER}"))
os.environ.setdefault("WORKGRAPH_OFFLINE_LINE_DELAY", "0")
# No server layouts unless a test asks for them (tests/test_run_layouts.py and the browser tests of the
# layout turn them on): the engine's tests count the jobs they drain, and each layout starts Node.js.
os.environ.setdefault("WORKGRAPH_SERVER_LAYOUT", "0")

from console.env import env_list  # noqa: E402  (after the environment above is set)
from console.settings import *  # noqa: E402, F403

# The suite's own hosts, and those the environment names (a test serving the console at other addresses).
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1", *env_list("ALLOWED_HOSTS")]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECURE_SSL_REDIRECT = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

if DATABASES["default"]["ENGINE"] == "console.sqlite":  # noqa: F405
    # A file, not the shared in-memory database: worker threads then get WAL and the busy timeout.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}  # noqa: F405

if REDIS_URL:  # noqa: F405
    # Run events go to channel groups named by run id, which the xdist processes' databases share.
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"asgi{XDIST_WORKER}"  # noqa: F405

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405  (WhiteNoise warns on a missing root)
# Static files straight from the source folders (and node_modules), as collectstatic would gather them.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
# django-axes records every sign-in at INFO; the suite signs in thousands of times.
LOGGING["loggers"] = {"axes": {"level": "WARNING"}}  # noqa: F405
# The fake agent CLIs read their scenario, and write what they record, through these names; the real
# Claude Code CLI finds the Messages API stand-in, its key and its quiet switches through the others
# (tests/claude_real.py).
WORKGRAPH_AGENT_ENV = [
    "FAKE_CLAUDE_FIXTURE", "FAKE_CLAUDE_GATE", "FAKE_CLAUDE_RECORD",
    "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING", "CLAUDE_CODE_MAX_RETRIES",
]
# Command nodes in the tests run this test run's Python (tests.run_builders.python): its folders are the
# toolchain a deployment would list here.
WORKGRAPH_SANDBOX_READ_ONLY = sorted({sys.prefix, sys.base_prefix})
