"""Read models for the pages, the API and the live consumers: what a page shows, in a number of queries that
does not grow with the number of nodes. Run facts (latest attempts, owners, progress) come from
``graphs.runs.facts``. The package's modules, each with one reason to change:

- ``access`` — the projects a user is a member of, and what a live consumer may show them;
- ``task_lists`` — the task lists: tasks a user may see, their newest runs, what tasks and projects cost, the
  acceptance criteria a task's cases cover;
- ``run_lists`` — the run lists: runs in flight, the runs page and its filters, a run branch's changed files;
- ``paging`` — pages of a long list whose count stops a set number past the page shown;
- ``node_panel`` — the run graph's side panel for one node: its latest attempt, or why it has none;
- ``run_notices`` — why a run stopped, as its pages say it: refused planning calls and the run's reason;
- ``todo_tree`` — the task page's to-do tree, and a run's failed attempts by category;
- ``task_runs`` — the task page's facts across its runs: each run's artifacts, the Outcome and its run, the
  last verdict an earlier run reached, why no new run can be made now;
- ``graph`` — a run's graph for the visualizer (``graph.json``), whole or, for a run the page opens collapsed
  into stages, its nodes' statuses alone; and its nodes' failure roles;
- ``graph_json`` — graph.json as it is sent: without the fields at their defaults, and the tag a revisit is
  answered 304 to;
- ``executions`` — one attempt, one planning call, and the commands a run's plan runs, as pages show them;
- ``changes`` — what an attempt changed, as the API carries it, and the part of a diff a page shows;
- ``change_reviews`` — an attempt's change reviews and line comments, those it carries, the changes since;
- ``live`` — the live consumers' reads: where an attempt's log stands, a run's fingerprint and snapshot;
- ``comparisons`` — two attempts of a node, two runs of a task;
- ``node_trace`` — the header of a node page's trace: what its agent calls used and cost.
- ``inbox`` — what waits on a person's roles (plans and appends to review, reports, budget stops) and its count.
- ``audit`` — the audit log: its filters checked, its entries newest first, as the API, the export and pages show them.
- ``inbox_events`` — the run events that may change an inbox or a list page, told to the inbox sockets of their
  run's project.
"""
