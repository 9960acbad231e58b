"""Settings for the Work Graph Console.

Everything deployment-specific comes from the environment (see docs/configuration.md). With no
environment at all the console runs in the embedded mode: SQLite, an in-memory channel layer,
in-process execution and the offline agent.
"""

import shutil
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from console.env import env_bool, env_choice, env_float, env_int, env_list, env_pairs, env_prices, env_str, env_url
from graphs.domain.runners import RUNNERS

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("WORKGRAPH_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set unless DEBUG is on")
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG-on"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    # Its templates and static files: the API docs page then loads Swagger UI from the console, not a CDN.
    "ninja",
    "csp",
    "axes",
    "graphs",
    "graphs.layout",
    "console",
]

# Each one async-capable (a test holds it): under daphne no request crosses from a thread back into the loop.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "console.api.errors.ApiErrorsJsonMiddleware",
    "console.static_files.StaticFilesMiddleware",
    # Below the static files (compressed ahead), above all else that writes a body: a 3,000-node graph.json
    # is 2.3 MB, a tenth gzipped. Django's gzip pads answers at random: no CSRF token guessed by its length.
    "django.middleware.gzip.GZipMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A missing task, run, execution or skill gets the console's 404 page, DEBUG or not.
    "console.error_pages.NotFoundPageMiddleware",
    # Last, as django-axes requires: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "console.urls"
ASGI_APPLICATION = "console.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context.sandbox",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------

DATABASE_URL = env_url("DATABASE_URL", schemes=("postgres", "postgresql", "sqlite"))
if DATABASE_URL and not DATABASE_URL.startswith("sqlite"):
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    # A worker sends the same few statements for every node. Bound on the server, each is sent as text
    # once and, from its fifth use on a connection, as a prepared statement that PostgreSQL neither
    # parses nor plans again: where a chain node's time is its statements, that is a tenth of it.
    # Behind a pooler in transaction mode that cannot hold prepared statements, set the threshold to 0.
    _prepare_threshold = env_int("WORKGRAPH_DB_PREPARE_THRESHOLD", 5, minimum=0)
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=_prepare_threshold or None
    )
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # Any SQLite database, the built-in one or one named by DATABASE_URL, is shared by several writer
    # threads: WAL lets readers run beside a writer, IMMEDIATE transactions take the write lock up
    # front instead of failing on upgrade, console.sqlite queues the process's writers on a lock, and
    # the timeout makes a writer from another process wait rather than raise "database is locked".
    DATABASES = {
        "default": {
            "ENGINE": "console.sqlite",
            "NAME": dj_database_url.parse(DATABASE_URL)["NAME"] if DATABASE_URL else VAR_DIR / "workgraph.sqlite3",
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channels, Celery and the execution mode ------------------------------------------------------

REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Pub/sub delivers each message to a server process once and fans out locally, instead of
            # one Redis round trip per message per listener; consumers refill any gap from the log file.
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
    WORKGRAPH_EXECUTION = "celery"
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    WORKGRAPH_EXECUTION = "embedded"

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# Keep a worker's database connection from task to task (Celery would otherwise close it after every
# task); graphs.jobs_celery closes broken or expired connections itself, as Django does per request.
CELERY_DB_REUSE_MAX = 1_000_000
# The queue the console publishes jobs to and workers consume: consoles (or test runs) sharing one
# Redis keep their jobs apart by naming their own.
CELERY_TASK_DEFAULT_QUEUE = env_str("WORKGRAPH_CELERY_QUEUE") or "celery"

# --- Agents and graphs ----------------------------------------------------------------------------

# More agent runners, as name=dotted.path.to.factory pairs; each factory returns an AgentRunner.
WORKGRAPH_AGENT_RUNNERS = env_pairs("WORKGRAPH_AGENT_RUNNERS")
WORKGRAPH_AGENT = env_choice("WORKGRAPH_AGENT", "offline",
                             (*RUNNERS, *WORKGRAPH_AGENT_RUNNERS))
WORKGRAPH_AGENT_TIMEOUT = env_float("WORKGRAPH_AGENT_TIMEOUT", 900.0, minimum=1.0)
WORKGRAPH_CLAUDE_BIN = env_str("WORKGRAPH_CLAUDE_BIN", "claude")
# The Codex CLI (graphs.agents.codex): its program, the model when a profile names none (empty: the
# CLI's default), the Responses API it calls (empty: the CLI's own provider) and its own sandbox mode.
WORKGRAPH_CODEX_BIN = env_str("WORKGRAPH_CODEX_BIN", "codex")
WORKGRAPH_CODEX_MODEL = env_str("WORKGRAPH_CODEX_MODEL")
WORKGRAPH_CODEX_BASE_URL = env_url("WORKGRAPH_CODEX_BASE_URL", schemes=("http", "https"))
WORKGRAPH_CODEX_SANDBOX = env_choice("WORKGRAPH_CODEX_SANDBOX", "danger-full-access",
                                     ("danger-full-access", "workspace-write", "read-only"))
WORKGRAPH_OPENAI_BASE_URL = env_url("WORKGRAPH_OPENAI_BASE_URL", schemes=("http", "https"))
WORKGRAPH_OPENAI_MODEL = env_str("WORKGRAPH_OPENAI_MODEL", "gpt-4o-mini")
WORKGRAPH_OPENAI_API_KEY = env_str("WORKGRAPH_OPENAI_API_KEY")
WORKGRAPH_OFFLINE_LINE_DELAY = env_float("WORKGRAPH_OFFLINE_LINE_DELAY", 0.02)
WORKGRAPH_OFFLINE_CALL_SECONDS = env_float("WORKGRAPH_OFFLINE_CALL_SECONDS", 0.0)
if WORKGRAPH_AGENT == "openai" and not WORKGRAPH_OPENAI_BASE_URL:
    raise ImproperlyConfigured("WORKGRAPH_AGENT=openai needs WORKGRAPH_OPENAI_BASE_URL")

# What OpenAI-compatible models cost, dollars per million input/output tokens: ``gpt-4o=2.5/10,…``.
# A model missing here is still counted in tokens; its cost stays empty.
WORKGRAPH_MODEL_PRICES = env_prices("WORKGRAPH_MODEL_PRICES")
# The turns a node's Claude call may take unless the node sets max_turns (0: no bound).
WORKGRAPH_MAX_TURNS = env_int("WORKGRAPH_MAX_TURNS", 200, minimum=0)
WORKGRAPH_MAX_NODES = env_int("WORKGRAPH_MAX_NODES", 500, minimum=1)
WORKGRAPH_MAX_DEPTH = env_int("WORKGRAPH_MAX_DEPTH", 50, minimum=1)
# What a DAG spec import may store (graphs.planning.dag_spec_bounds), in bytes: each task's prompt with its
# placeholders filled in, each prompt file, and the whole import (the spec, its prompt files and its
# tasks' prompts). An import past one is refused, naming it, before anything is stored.
WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = env_int("WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES", 256 * 1024, minimum=1024)
WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES = env_int("WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES", 256 * 1024,
                                                   minimum=1024)
WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES = env_int("WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES", 8 * 1024 * 1024,
                                              minimum=64 * 1024)
WORKGRAPH_EMBEDDED_WORKERS = env_int("WORKGRAPH_EMBEDDED_WORKERS", 4, minimum=1, maximum=64)
WORKGRAPH_MAX_ACTIVE_RUNS = env_int("WORKGRAPH_MAX_ACTIVE_RUNS", 16, minimum=0)  # more are queued (0: no limit)
WORKGRAPH_HEARTBEAT_SECONDS = env_float("WORKGRAPH_HEARTBEAT_SECONDS", 2.0, minimum=0.05)
WORKGRAPH_REAP_AFTER_SECONDS = env_float("WORKGRAPH_REAP_AFTER_SECONDS", 60.0, minimum=0.5)
WORKGRAPH_REAP_INTERVAL_SECONDS = env_float("WORKGRAPH_REAP_INTERVAL_SECONDS", 30.0, minimum=0.5)
WORKGRAPH_TRANSIENT_RETRIES = env_int("WORKGRAPH_TRANSIENT_RETRIES", 4, minimum=0)
WORKGRAPH_BACKOFF_BASE = env_float("WORKGRAPH_BACKOFF_BASE", 2.0)
WORKGRAPH_BACKOFF_CAP = env_float("WORKGRAPH_BACKOFF_CAP", 60.0)
# How long an external node's attempt waits for its collaboration report, unless the node sets
# deadline_seconds; past it the attempt fails external_timeout and the node's on_fail applies.
WORKGRAPH_EXTERNAL_DEADLINE_SECONDS = env_int("WORKGRAPH_EXTERNAL_DEADLINE_SECONDS", 3600, minimum=1)
# How many planning rounds a gap-driven task's run may take (the first plan included) before it ends
# failed with the gap still open.
WORKGRAPH_GAP_MAX_ROUNDS = env_int("WORKGRAPH_GAP_MAX_ROUNDS", 5, minimum=1, maximum=100)
# The run graph page's ELK layout, computed on the server with Node.js (graphs.layout.compute) whenever a run's
# drawing changes, so a first visit paints it without laying it out. Off, or with no Node.js, the page
# lays the graph out in the browser as before.
WORKGRAPH_SERVER_LAYOUT = env_bool("WORKGRAPH_SERVER_LAYOUT", True)
WORKGRAPH_NODE_BINARY = env_str("WORKGRAPH_NODE_BINARY", shutil.which("node") or "")
WORKGRAPH_LAYOUT_TIMEOUT_SECONDS = env_float("WORKGRAPH_LAYOUT_TIMEOUT_SECONDS", 120.0, minimum=1.0)
# Where attempts' git worktrees are made (one a running attempt; removed when it ends).
WORKGRAPH_WORKSPACE_DIR = Path(env_str("WORKGRAPH_WORKSPACE_DIR", str(VAR_DIR / "workspaces")))
# Worktrees a repository keeps for its attempts to reuse (moved to each one's head, cleaned between);
# attempts beyond them at once get a worktree of their own, removed after. 0 keeps none.
WORKGRAPH_WORKTREE_POOL_SIZE = env_int("WORKGRAPH_WORKTREE_POOL_SIZE", 4, minimum=0)
# How attempts' changes are staged, committed and landed: in-process through libgit2 wherever it does what
# git does, else the git CLI (auto); or always the git CLI (cli).
WORKGRAPH_GIT_BACKEND = env_choice("WORKGRAPH_GIT_BACKEND", "auto", ("auto", "cli"))
# How much of a change's unified diff is stored, and how much a page shows (the rest downloads).
WORKGRAPH_DIFF_MAX_BYTES = env_int("WORKGRAPH_DIFF_MAX_BYTES", 20 * 1024 * 1024, minimum=1024)
WORKGRAPH_DIFF_PAGE_BYTES = env_int("WORKGRAPH_DIFF_PAGE_BYTES", 256 * 1024, minimum=1024)
# A line longer than this as JSON has its longest text fields cut (the cut is recorded on the line).
WORKGRAPH_LOG_LINE_MAX_BYTES = env_int("WORKGRAPH_LOG_LINE_MAX_BYTES", 64 * 1024, minimum=1024)
# Past this many lines, an attempt's agent output is counted and dropped; the engine's own lines go on.
WORKGRAPH_LOG_MAX_LINES = env_int("WORKGRAPH_LOG_MAX_LINES", 50_000, minimum=10)
# How much of a tool call's input, and of a tool result's content, a log line keeps (its full length is
# recorded beside it): enough to follow what the agent did, without one file read filling the log.
WORKGRAPH_LOG_TOOL_INPUT_MAX_CHARS = env_int("WORKGRAPH_LOG_TOOL_INPUT_MAX_CHARS", 4000, minimum=100)
WORKGRAPH_LOG_TOOL_RESULT_MAX_CHARS = env_int("WORKGRAPH_LOG_TOOL_RESULT_MAX_CHARS", 4000, minimum=100)
# --- Skills' team templates: tools a template-guided plan may request, by risk. Low and
# medium tools are granted; high-risk tools and names missing here are removed from the plan with a
# warning. A deployment lists its own tools by overriding this dict in its settings module.
WORKGRAPH_TOOL_REGISTRY = {
    "read_file": "low",
    "search": "low",
    "web_search": "low",
    "web_fetch": "low",
    "shell": "medium",
    "write_file": "medium",
    "deploy": "high",
    "delete_repository": "high",
    "send_email": "high",
}
# The Claude Code tools each registry tool stands for. A node that lists ``allowed_tools`` runs with
# the Claude tools of the others disabled (--disallowedTools), so "read_file only" really means it.
WORKGRAPH_CLAUDE_TOOLS = {
    "read_file": ["Read", "Glob"],
    "search": ["Grep", "Glob"],
    "web_search": ["WebSearch"],
    "web_fetch": ["WebFetch"],
    "shell": ["Bash"],
    "write_file": ["Write", "Edit", "NotebookEdit"],
}
WORKGRAPH_TEMPLATE_MAX_DEPTH = env_int("WORKGRAPH_TEMPLATE_MAX_DEPTH", 4, minimum=1)
# --- Commands (command nodes and command judgments, in projects with allow_commands) ---------------
# What a command may take unless its node or judgment sets timeout_seconds; past it its group is killed.
WORKGRAPH_COMMAND_TIMEOUT = env_int("WORKGRAPH_COMMAND_TIMEOUT", 600, minimum=1)
# How much of a command's output is kept as its node output (the last bytes; the rest is counted).
WORKGRAPH_COMMAND_OUTPUT_MAX_BYTES = env_int("WORKGRAPH_COMMAND_OUTPUT_MAX_BYTES", 64 * 1024, minimum=1024)
# Names a command gets from the console's environment besides PATH, LANG and LC_ALL (its HOME and TMPDIR
# are the sandbox's own).
WORKGRAPH_COMMAND_ENV = env_list("WORKGRAPH_COMMAND_ENV")

# --- The sandbox agents and commands run in (graphs.workspaces.sandbox) --------------------------------------
# bwrap: every agent CLI process and command runs in bubblewrap; none: unconfined (the pages say so);
# auto: bwrap wherever it works on this machine, else none.
WORKGRAPH_SANDBOX = env_choice("WORKGRAPH_SANDBOX", "auto", ("auto", "bwrap", "none"))
WORKGRAPH_BWRAP_BIN = env_str("WORKGRAPH_BWRAP_BIN", "bwrap")
# Names an agent CLI gets from the console's environment besides PATH, LANG and LC_ALL: its API key,
# base URL and own settings (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CLAUDE_CODE_*, …).
WORKGRAPH_AGENT_ENV = env_list("WORKGRAPH_AGENT_ENV")
# A folder copied into each agent call's private HOME: the agent CLI's prepared configuration (a
# ~/.claude with its settings and agents), never the console user's own home.
WORKGRAPH_AGENT_HOME = Path(env_str("WORKGRAPH_AGENT_HOME")) if env_str("WORKGRAPH_AGENT_HOME") else None
# More folders a sandboxed process sees, read-only (a toolchain outside /usr) or read-write (a shared
# package cache); the system folders and the call's own working folder are always there.
WORKGRAPH_SANDBOX_READ_ONLY = env_list("WORKGRAPH_SANDBOX_READ_ONLY")
WORKGRAPH_SANDBOX_WRITABLE = env_list("WORKGRAPH_SANDBOX_WRITABLE")
# The console's own settings never reach an agent or a command: they run code a model or a project
# wrote, never with the console's secrets.
_CONSOLE_ENV = {"SECRET_KEY", "DATABASE_URL", "REDIS_URL"}
_PASSED_ENV = {"WORKGRAPH_COMMAND_ENV": WORKGRAPH_COMMAND_ENV, "WORKGRAPH_AGENT_ENV": WORKGRAPH_AGENT_ENV}
for _setting, _names in _PASSED_ENV.items():
    _refused_env = [name for name in _names if name in _CONSOLE_ENV or name.startswith("WORKGRAPH_")]
    if _refused_env:
        raise ImproperlyConfigured(
            f"{_setting} may not pass the console's own settings to agents and commands: {', '.join(_refused_env)}"
        )
# Celery beat (or `celery worker -B`) runs the reaper that recovers executions of dead workers.
CELERY_BEAT_SCHEDULE = {
    "reap-lost-executions": {"task": "graphs.reap", "schedule": WORKGRAPH_REAP_INTERVAL_SECONDS},
}


# --- Auth, i18n, static ---------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes counts failed sign-ins: this many for one username (from anywhere) or from one address
# (for any username) lock that username or address out for the cool-off. Behind a proxy, serve with
# daphne's --proxy-headers so the address is the client's, not the proxy's.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "console.views.login_locked_out"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
# Front-end packages come from npm (package-lock.json) and are served as static files: no CDN.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/elkjs", BASE_DIR / "node_modules" / "elkjs" / "lib"),
    ("vendor/diff2html", BASE_DIR / "node_modules" / "diff2html" / "bundles"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Security -------------------------------------------------------------------------------------
# Secure by default outside DEBUG; a console served over plain HTTP on a closed network turns the
# HTTPS-only settings off explicitly rather than by accident.

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Preloading is an irreversible promise about every subdomain; it stays a deployer's explicit choice.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_HTTPS_PROXY") else None
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Every page runs the console's own scripts and styles only (the API docs' Swagger UI is served from
# the console too): an injected <script>, handler attribute or style attribute does nothing. The
# graph runs ELK in a same-origin worker; live pages open same-origin WebSockets ('self' covers ws:).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "worker-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "workgraph@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# What the console sends out: traces, metrics, webhooks, email and deliveries.
from console.settings_outbound import *  # noqa: E402, F403

# Celery beat reads open pull requests' checks, reviews and states from their forges (0: never).
if WORKGRAPH_FORGE_POLL_SECONDS:  # noqa: F405
    CELERY_BEAT_SCHEDULE["poll-forges"] = {"task": "graphs.forge_poll",
                                           "schedule": WORKGRAPH_FORGE_POLL_SECONDS}  # noqa: F405

# A forge's token is sent to the project's remote and forge alone: never a variable agents or commands get,
# nor one of the console's own settings.
_refused_env = [name for name in WORKGRAPH_FORGE_SECRET_ENV  # noqa: F405
                if name in _CONSOLE_ENV | {"EMAIL_HOST_PASSWORD"} or name.startswith("WORKGRAPH_")
                or name in WORKGRAPH_AGENT_ENV or name in WORKGRAPH_COMMAND_ENV]
if _refused_env:
    raise ImproperlyConfigured(
        "WORKGRAPH_FORGE_SECRET_ENV may not name the console's own settings or variables agents and commands"
        f" get: {', '.join(_refused_env)}"
    )
