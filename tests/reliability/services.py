"""The chaos suite's own services: a PostgreSQL cluster, a Redis server and a small tmpfs, each made for it.

The machine's PostgreSQL and Redis serve every other test and session on it, so the faults here are
never aimed at them: ``make chaos`` (tests/chaos.py) starts a cluster of its own with Debian's
``initdb`` and ``pg_ctl`` on a free port, in a temporary folder, and a ``redis-server`` likewise, and
points the suite at both. As root the cluster runs as the ``postgres`` user (PostgreSQL refuses root);
the workspace folder's tmpfs needs root to mount.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import redis

PG_BIN = Path(os.environ.get("CHAOS_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_USER = "postgres"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise RuntimeError(f"timed out after {timeout:g} s: {what}")
        time.sleep(0.05)


def _as_cluster_owner(argv: list[str]) -> list[str]:
    return ["runuser", "-u", PG_USER, "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class PostgresCluster:
    """A cluster in ``data`` listening on 127.0.0.1:``port``, trusting local connections."""

    data: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgres://{PG_USER}@127.0.0.1:{self.port}/chaos"

    @property
    def log_path(self) -> Path:
        return self.data.parent / "postgres.log"

    def _pg_ctl(self, *args: str) -> None:
        argv = _as_cluster_owner([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log_path), *args])
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {' '.join(args)} failed: {done.stdout}{done.stderr}\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data.parent} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._pg_ctl("start", "-w", "-t", "60", "-o", options)

    def restart(self) -> None:
        """Restart as an operator or a container's orchestrator does (``-m fast``): every session is cut,
        what was committed is kept."""
        self._pg_ctl("stop", "-w", "-m", "fast")
        self.start()

    def stop(self) -> None:
        self._pg_ctl("stop", "-w", "-m", "fast")


def postgres_cluster_create(folder: Path) -> PostgresCluster:
    """A new cluster under ``folder`` (which it owns), started, with an empty database ``chaos``."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, PG_USER, PG_USER)
    data = folder / "data"
    done = subprocess.run(
        _as_cluster_owner([str(PG_BIN / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8",
                           "--no-sync", "--locale=C.UTF-8"]),
        capture_output=True, text=True, check=False, timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stdout}{done.stderr}")
    cluster = PostgresCluster(data=data, port=free_port())
    cluster.start()
    subprocess.run(_as_cluster_owner([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(cluster.port),
                                      "-U", PG_USER, "chaos"]), check=True, capture_output=True, timeout=60)
    return cluster


@dataclass
class Tmpfs:
    """A tmpfs of ``size_mb`` mounted on ``path``: a filesystem that fills up, and only this suite's."""

    path: Path
    size_mb: int

    def mount(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m,mode=0755", "tmpfs", str(self.path)],
                       check=True, capture_output=True, timeout=30)

    def unmount(self) -> None:
        subprocess.run(["umount", "--lazy", str(self.path)], check=False, capture_output=True, timeout=30)

    def fill(self) -> Path:
        """Write a file until the filesystem has no page left; return it (delete it to free the space)."""
        filler = self.path / "filler"
        descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            # Megabytes, then single pages: a tmpfs gives space a page at a time, so a refused page is the end.
            for block in (b"\0" * (1 << 20), b"\0" * 4096):
                while True:
                    try:
                        os.write(descriptor, block)
                    except OSError:
                        break
        finally:
            os.close(descriptor)
        return filler


def mount_problem() -> str:
    """Why a tmpfs cannot be mounted here, or "" when it can."""
    return "" if os.geteuid() == 0 else "mounting a tmpfs needs root"


@dataclass
class ChaosRedis:
    """A ``redis-server`` on ``port`` that any process of the suite can crash and start again: it names
    its pid in a file beside its log. Like the machine's, it keeps nothing on disk."""

    folder: Path
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid_file(self) -> Path:
        return self.folder / "redis.pid"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--pidfile", str(self.pid_file), "--logfile", str(self.folder / "redis.log")]
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
        _wait(self._answers, timeout=10, what=f"redis-server did not answer on port {self.port}")

    def crash(self) -> None:
        """SIGKILL it: every queued message and every connection is gone, as in a crashed container."""
        try:
            os.kill(int(self.pid_file.read_text()), signal.SIGKILL)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return
        _wait(lambda: not self._answers(), timeout=10, what="redis-server outlived its SIGKILL")
        self.pid_file.unlink(missing_ok=True)

    def _answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False


def services_from_environment() -> tuple[PostgresCluster, ChaosRedis] | None:
    """The cluster and the Redis server tests/chaos.py started for this session; None outside it."""
    if "CHAOS_PGDATA" not in os.environ:
        return None
    cluster = PostgresCluster(data=Path(os.environ["CHAOS_PGDATA"]), port=int(os.environ["CHAOS_PG_PORT"]))
    server = ChaosRedis(folder=Path(os.environ["CHAOS_REDIS_DIR"]), port=int(os.environ["CHAOS_REDIS_PORT"]))
    return cluster, server
