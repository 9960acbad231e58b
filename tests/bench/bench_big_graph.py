"""A 10,000-node run: import, pages, a run of its shape against bare Celery, worker memory
(``tests.bench.scale_big_graph``).

Run on demand (``SCALE_RUN_LAYERS=100`` runs the whole 10,000 nodes, 10 layers of 100 by default)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_big_graph.py -o python_files='bench_*.py' -s
"""

from __future__ import annotations

import os

import pytest

from tests.bench import scale_big_graph
from tests.bench.report import load_average, tables


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_ten_thousand_node_run(project, tmp_path):
    before = load_average()
    rows = scale_big_graph.rows(project=project, log_dir=tmp_path)
    print(f"\n\nA 10,000-node run ({os.cpu_count()} cores; load {before} before, {load_average()} after)\n"
          + tables(["metric", "measured", "target", "met"],
                   [[metric, measured, target, "yes" if met else "no"] for metric, measured, target, met in rows]))
