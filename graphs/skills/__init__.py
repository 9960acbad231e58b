"""Skills: the instructions a task may choose, each kept with its revisions.

- ``team_templates`` — the ``team-template`` block a skill body may embed, parsed and checked;
- ``revisions`` — saving a skill as a new revision of its content (refused over a newer one), the diff
  of two revisions, its labels moved, and the team template of the revision runs plan with;
- ``statuses`` — the status transitions (draft → active → deprecated → active) and their history;
- ``usage`` — the filtered skill list with its usage counts, the owners, and where a skill was used;
- ``folders`` — import and export of ``<skill_id>/SKILL.md`` folders, with their git commit.
"""
