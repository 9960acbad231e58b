"""One module per ``manage.py`` command (docs/commands.md describes each):

- ``plan`` — plan a graph for a task as the page and the API do;
- ``execute`` — execute a planned run's nodes and wait for it to finish;
- ``run_pipeline`` — run a task's planner → coder → validator pipeline and wait for its verdict;
- ``import_dag_spec`` — import a loop-agent DAG spec as a task with a planned run;
- ``agent_check`` — check a project's agent before its first run;
- ``import_skills`` and ``export_skills`` — skills from and to ``<skill_id>/SKILL.md`` folders;
- ``load_demo`` — the demo project, task and login;
- ``reap`` — fail and retry attempts whose worker stopped heart-beating;
- ``logs_prune`` — delete the lines of old closed logs;
- ``workspaces_prune`` — delete the branches and attempt refs of old finished runs;
- ``seed_runs`` — add many made-up runs to a project, for measuring the runs list at scale.
"""
