"""Agent profiles: who each org node is when a runner calls it, kept with its revisions.

- ``revisions`` — saving a profile as a new revision (refused over a newer one), a revision as text, the
  diff of two revisions, and its labels moved;
- ``resolve`` — the shipped profiles created on first use, a project's override, and the profile an
  agent call runs with (its production revision, else its newest).
"""
