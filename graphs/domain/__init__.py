"""The pure domain: functions over manifests, outputs and words, with no database, no I/O and no Django
models. Everything above it builds on these.

- ``manifest`` — a graph_manifest's extraction from an agent's text, normalization, validation and merging;
- ``manifest_nodes`` — a manifest node's kinds, field limits and commands, and the rules one node keeps;
- ``manifest_graph`` — graph queries over a manifest, and ``ManifestError``;
- ``manifest_fields`` — the shapes of the fields several node kinds share (ids, commands, timeouts);
- ``json_extraction`` — finding a JSON object in an agent's free text;
- ``judgments`` — one module per judgment kind (its validation, judge and prompt text), and their registry;
- ``on_fail_actions`` — one module per ``on_fail`` action, and their registry;
- ``catalogs`` — the artifact types, their judges and the mechanical checks planning prompts describe;
- ``mechanical_checks`` — the mechanical checks that judge an output, and a validator's verdict lines read;
- ``case_manifests`` — the test case manifest artifact and its check;
- ``check_registry`` — ``MECHANICAL_CHECKS``, every check a manifest may name, and running one by name;
- ``failures`` — the failure categories, the facts of a failed attempt, and the rules that classify it;
- ``failure_judge`` — the judge agent's prompt for a failure the rules leave unknown, and its answer's check;
- ``failure_roles`` — which failed node of a run is a root cause, which failed downstream, which were blocked;
- ``prompts`` — the texts every agent call is sent: identities, planning, node and judge prompts;
- ``review_prompts`` — a change review as the attempt amending the change is told it, comments with their lines;
- ``check_prompts`` — a forge's check that failed on a delivered pull request, as the attempt fixing it is told it;
- ``runners`` — the agent runners the console ships, by name, and their providers;
- ``agent_profiles`` — the profile an agent call runs with, as plain data, and the profiles the console ships;
- ``attempt_words`` — how an attempt's cause, failure and failed tool calls read to a person;
- ``judgment_words`` — how a judgment and a failure classification read: verdict, issues, category in words;
- ``money_words`` — what an amount of dollars reads as, on every page;
- ``duration_words`` — how long something took or has waited, in the words every page uses;
- ``retries`` — the transient retry's budget and backoff;
- ``storable`` — text made safe to store (no NUL, bounded);
- ``markdown`` — Markdown rendered to sanitized HTML within a time budget;
- ``text_diffs`` — line diffs of two texts, side by side, for the compare pages; where a line is in a later text;
- ``revisions`` — a text with numbered revisions (a skill, an agent profile): its fields, numbering, the diff
  of two revisions field by field, and a save made on an older revision refused with both versions;
- ``fork_edits`` — a fork's edit of its node's prompt or argv, applied to a copy of the manifest and checked.
"""
