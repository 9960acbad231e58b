"""Arize Phoenix (from PyPI, the test extras) as a trace receiver of the test's own: started as a
subprocess on free ports with a working folder in the test's temporary folder, waited for on its health
endpoint, queried over its REST API, stopped with its process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.celery_worker import wait_until
from tests.redis_server import free_port

START_TIMEOUT = 120.0


@dataclass
class Phoenix:
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span the project holds, page after page."""
        spans: list[dict[str, Any]] = []
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            answer = httpx.get(f"{self.url}/v1/projects/{project}/spans", params=params, timeout=10, trust_env=False)
            if answer.status_code == 404:
                return spans
            answer.raise_for_status()
            body = answer.json()
            spans += body.get("data") or []
            cursor = body.get("next_cursor")
            if not cursor:
                return spans

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def phoenix_start(work_dir: Path) -> Phoenix:
    """Start Phoenix and return it once its health endpoint answers; raise with its log when it does not."""
    port = free_port()
    work_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work_dir),
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    for name in [name for name in env if name.startswith("OTEL_")]:
        env.pop(name)
    log_path = work_dir / "phoenix.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], cwd=work_dir, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    phoenix = Phoenix(port=port, process=process, log_path=log_path)
    try:
        wait_until(lambda: _healthy(phoenix.url), timeout=START_TIMEOUT, poll=0.5, alive=process,
                   message=lambda: f"Phoenix did not answer on {phoenix.url}/healthz: {phoenix.log()}")
    except BaseException:
        phoenix.stop()
        raise
    return phoenix


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False
