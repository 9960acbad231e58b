"""``make chaos``: the fault cases of tests/reliability/ (``chaos_*.py``) on services of their own, bounded.

It starts a PostgreSQL cluster (Debian's ``initdb`` and ``pg_ctl``, as the ``postgres`` user when run as
root) and a ``redis-server``, each on a free port in a temporary folder, runs pytest on the fault cases
against them (``CI=true``: nothing is skipped for want of a service) and stops both, whatever happened.
The machine's own PostgreSQL and Redis are never touched: the cases crash and restart these. The whole
run has a time budget (``CHAOS_BUDGET_SECONDS``, 900): past it, pytest and everything it started are
killed and the run fails. Exit status: pytest's — non-zero when any case lost, duplicated or left
anything behind — or 1 past the budget.

    .venv/bin/python tests/chaos.py [pytest arguments, e.g. -k redis]
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.processes import processes_marked
from tests.reliability.services import ChaosRedis, free_port, postgres_cluster_create

BUDGET = float(os.environ.get("CHAOS_BUDGET_SECONDS", "900"))


def main(args: list[str]) -> int:
    # A SIGTERM (a Ctrl-C'd make, a CI job cancelled) still stops what this started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    folder = Path(tempfile.mkdtemp(prefix="workgraph-chaos-"))
    folder.chmod(0o755)
    cluster = server = None
    # Every process of the session carries it (workers start in sessions of their own): none outlives it.
    session = f"workgraph-chaos-{os.getpid()}-{folder.name}"
    try:
        cluster = postgres_cluster_create(folder / "postgres")
        server = ChaosRedis(folder=folder / "redis", port=free_port())
        server.start()
        env = {
            **os.environ, "CI": "true", "DATABASE_URL": cluster.url, "REDIS_URL": server.url,
            "CHAOS_PGDATA": str(cluster.data), "CHAOS_PG_PORT": str(cluster.port),
            "CHAOS_REDIS_DIR": str(server.folder), "CHAOS_REDIS_PORT": str(server.port),
            "CHAOS_SESSION": session,
        }
        argv = [sys.executable, "-m", "pytest", "tests/reliability", "-o", "python_files=chaos_*.py",
                "-p", "no:cacheprovider", "-v", *args]
        pytest = subprocess.Popen(argv, env=env, start_new_session=True)
        try:
            return pytest.wait(timeout=BUDGET)
        except subprocess.TimeoutExpired:
            os.killpg(pytest.pid, signal.SIGKILL)
            pytest.wait()
            print(f"make chaos: the fault cases took longer than their budget of {BUDGET:g} s; stopped",
                  file=sys.stderr)
            return 1
    finally:
        for pid in processes_marked(session):
            os.kill(pid, signal.SIGKILL)
        if server is not None:
            server.crash()
        if cluster is not None:
            try:
                cluster.stop()
            except RuntimeError as error:
                print(error, file=sys.stderr)
        for mount in _mounts_under(folder):
            subprocess.run(["umount", "--lazy", mount], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _mounts_under(folder: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith(f"{folder}/")]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
