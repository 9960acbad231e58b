"""Read models for the pages and the API: what a page shows, in a few queries.

- ``selectors`` — dashboards, task and run lists, a run's graph, an attempt's page;
- ``comparisons`` — two attempts of a node, two runs of a task;
- ``node_trace`` — the header of a node page's trace: what its agent calls used and cost.
"""
