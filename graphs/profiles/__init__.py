"""Agent profiles: who each org node is when a runner calls it, kept with its revisions.

- ``revisions`` — saving a profile as a new revision (refused over a newer one), a revision as text, and
  the diff of two revisions;
- ``resolve`` — the shipped profiles created on first use, a project's override, and the profile an
  agent call runs with.
"""
