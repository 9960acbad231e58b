"""The node page's change review form: a decision, a body, comments on lines and the open comments it
resolves. It only gathers what was typed; graphs.collaboration.change_reviews names what is wrong, all at
once, on the fields the API names too (``comments[0].line``).

Comments come as parallel lists (``comment_path``, ``comment_line``, ``comment_body``): the page's one row,
and every row a script may add. A row left empty is no comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

# A problem the domain names on one comment: ``comments[2].line``.
_ROW_FIELD = re.compile(r"comments\[(\d+)\]\.")


@dataclass(frozen=True)
class ReviewSubmission:
    """A review as the form posted it, ready for ``change_review_submit``; ``rows`` keeps what was typed, to
    show it again when refused."""

    decision: str
    body: str
    comments: list[dict[str, Any]] = field(default_factory=list)
    resolve: list[Any] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)


def review_submission_read(data: QueryDict) -> ReviewSubmission:
    """What the review form posted: a line that is no number is passed on as typed, for the domain to name."""
    rows = [{"path": path, "line": line, "body": body} for path, line, body in zip(
        data.getlist("comment_path"), data.getlist("comment_line"), data.getlist("comment_body"), strict=False)]
    typed = [row for row in rows if row["path"].strip() or row["line"].strip() or row["body"].strip()]
    comments = [{"path": row["path"], "line": int(row["line"]) if row["line"].strip().isdigit() else row["line"],
                 "body": row["body"]} for row in typed]
    resolve = [int(value) if value.isdigit() else value for value in data.getlist("resolve")]
    return ReviewSubmission(decision=data.get("decision", ""), body=data.get("body", ""), comments=comments,
                            resolve=resolve, rows=typed)


def review_rows_with_problems(rows: list[dict[str, str]], problems: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The typed rows again, each with the problems named on its comment (``comments[i]`` is the i-th typed
    row), to show beside the row as well as in the list of every problem."""
    named: dict[int, list[str]] = {}
    for name, message in problems:
        found = _ROW_FIELD.match(name)
        if found:
            named.setdefault(int(found.group(1)), []).append(message)
    return [{**row, "problems": named.get(index, [])} for index, row in enumerate(rows)]
