"""Delivery: a succeeded run carried to where teams merge — its branch pushed to the project's remote by the
console (never an agent), and, where the project asks for it, a pull request opened on its forge (GitHub,
GitLab, Gitea or Forgejo). The run's ``RunDelivery`` records how it went; the run itself stays succeeded
whatever happens here.

- ``failures`` — why a delivery failed, in words, and whether trying again may help;
- ``credentials`` — the token and webhook secret read from the variables a project names, and kept out of
  every message;
- ``project_settings`` — where a project delivers, checked whole (every problem named at once) and saved;
- ``push`` — the run's branch pushed through the console's git, the token supplied to that one command;
- ``pull_requests`` — a pull request's title and body, written by the server from the run;
- ``forge_clients`` — one client per forge behind one protocol (``base``): pull requests, checks, reviews;
- ``deliveries`` — a run's delivery asked for (when it succeeds, or by a lead) and tried, with retries;
- ``reads`` — a run's delivery as the API and the task page show it;
- ``jobs`` — the delivery job's name and its submitter;
- ``setup`` — the delivery and polling jobs and the listener that hears runs succeed, installed in a process;
- ``forge_events`` — a forge's webhook event verified as that forge signs it, then read and applied;
- ``forge_payloads`` — each forge's webhook payloads read into what the console acts on;
- ``feedback`` — what a forge says of a delivered pull request (by webhook or poll) applied, idempotently;
- ``follow_ups`` — a failing check or a request for changes made a follow-up run that updates the pull request;
- ``polling`` — open pull requests read from their forges every ``WORKGRAPH_FORGE_POLL_SECONDS``.
"""
