"""Judgment kinds: how a node's output is judged. Each kind is one module, listed once in ``registry``:

- ``base`` — what a kind is made of (``JudgmentKind``), what its judge is given and returns, and how a
  command it asked for ended (``CommandOutcome``);
- ``registry`` — ``JUDGMENT_KINDS``, the kinds a manifest may declare, and the default kind;
- ``none`` — nothing is checked;
- ``mechanical`` — a named check of graphs.domain.check_registry;
- ``llm`` — another agent reviews the output with the node's judge prompt;
- ``command`` — a program runs in the attempt's folder, and its exit code decides.

A kind holds its manifest rules, its judge and its planning-prompt line, and never imports the engine:
graphs.domain.manifest_nodes and graphs.domain.prompts read the registry, and the engine runs the judges
(graphs.engine.judgment).
"""

from graphs.domain.judgments.base import JudgeRequest, Judgment, JudgmentKind
from graphs.domain.judgments.registry import DEFAULT_JUDGMENT_KIND, JUDGMENT_KINDS, judgment_kind

__all__ = ["DEFAULT_JUDGMENT_KIND", "JUDGMENT_KINDS", "JudgeRequest", "Judgment", "JudgmentKind", "judgment_kind"]
