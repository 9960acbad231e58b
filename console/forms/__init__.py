"""The console's forms, gathering what a page's form posts for the views. Its modules:

- ``pages`` — a new task, a DAG spec import, the run list's filters, and the run actions (plan, budget, fork, review);
- ``projects`` — a project's settings and its members;
- ``fields`` — form fields that only gather what was typed, for forms whose every rule is the domain's;
- ``skills`` — a skill's editor and its status change;
- ``agent_profiles`` — an agent profile's editor, and a project's override of it;
- ``revisions`` — what the skill and profile editors share: a refused save shown on its form, two revisions to compare;
- ``datasets`` — a new dataset, and the "Add to dataset" of a run's pages;
- ``delivery`` — a project's delivery settings;
- ``reviews`` — the node page's change review: a decision, a body, comments on lines, comments resolved;
- ``audit`` — the audit log pages' filters.
"""
