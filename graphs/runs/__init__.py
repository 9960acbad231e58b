"""Facts about runs, read and written the same way by the engine, the pages and the API.

- ``status`` — a run's and its task's status, their transitions, stop reasons;
- ``admission`` — how many runs run at once, and the queue of the runs started past that limit;
- ``facts`` — the latest run, latest attempt, latest usable output, owners and progress;
- ``evidence`` — what a node's output must show, and a run left incomplete;
- ``accounting`` — what agent calls cost, by attempt, run, task and project;
- ``budgets`` — a run's budget, checked after every call;
- ``heartbeat`` — a running attempt's beat, and the news (a cancel) it carries back;
- ``seeding`` — many runs made at once, for measuring the runs list at scale (``manage.py seed_runs``);
- ``vocabulary`` — the run and attempt statuses as the browser draws them: finished, under way, words.
"""
