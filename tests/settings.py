"""Settings for the test suite: the project's settings with test-only secrets and quick hashing."""

import os
import sys
import tempfile

os.environ.setdefault("SECRET_KEY", "test-suite-only-secret-key-not-for-deployment")
os.environ.setdefault("WORKGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="workgraph-test-"))
os.environ.setdefault("WORKGRAPH_OFFLINE_LINE_DELAY", "0")
# No server layouts unless a test asks for them (tests/test_run_layouts.py and the browser tests of the
# layout turn them on): the engine's tests count the jobs they drain, and each layout starts Node.js.
os.environ.setdefault("WORKGRAPH_SERVER_LAYOUT", "0")

from console.env import env_list
from console.settings import *  # noqa: F403

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
# Command nodes in the tests run this test run's Python (tests.graphs.python): its folders are the
# toolchain a deployment would list here.
WORKGRAPH_SANDBOX_READ_ONLY = sorted({sys.prefix, sys.base_prefix})
