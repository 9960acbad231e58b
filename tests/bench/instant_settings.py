"""Settings for benchmark processes: the test settings with the instant agent installed and selected."""

from tests.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "tests.bench.instant.InstantAgentConfig"]  # noqa: F405
WORKGRAPH_AGENT = "instant"
