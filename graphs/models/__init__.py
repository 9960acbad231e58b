"""The persisted work-graph model: projects, tasks, skills, runs, one row per node attempt, logs, artifacts.

Statuses are nested ``TextChoices``; invariants that must hold whatever code path writes the row live
in database constraints as well, so a bug elsewhere fails loudly instead of corrupting a run. The
package's modules:

- ``projects`` — projects, their members' roles, API tokens;
- ``agent_profiles`` — each org node's agent profile (console-wide or a project's override), its revisions
  and their labels;
- ``skills`` — skills, their revisions and their labels;
- ``tasks`` — tasks;
- ``runs`` — runs and node attempts (and the planning nodes' ids, an external attempt's worker name);
- ``notifications`` — webhooks and their deliveries, members' email choices and the emails to send;
- ``records`` — what runs leave beside their attempts: logs, workspaces and changes, DAG specs,
  layouts, append reviews, artifacts, report receipts;
- ``reviews`` — change reviews of an attempt and the comments on its lines;
- ``audit`` — the audit log's entries, appended and never changed;
- ``datasets`` — a project's datasets of cases that experiments run again;
- ``experiments`` — a dataset's cases run again with pinned revisions, each run scored;
- ``delivery`` — where a project delivers its runs (a remote, a forge), and how each run's delivery went.
"""

from graphs.models.agent_profiles import AgentProfile, AgentProfileLabel, AgentProfileRevision
from graphs.models.audit import AuditEntry, AuditEntryImmutable
from graphs.models.datasets import Dataset, DatasetCase
from graphs.models.delivery import ForgeFeedback, ProjectDelivery, RunDelivery
from graphs.models.experiments import Experiment, ExperimentItem
from graphs.models.notifications import EmailNotice, EmailSubscription, Webhook, WebhookDelivery
from graphs.models.projects import ApiToken, Project, ProjectMembership
from graphs.models.records import (
    AppendReview,
    Artifact,
    AttemptChange,
    DagSpec,
    ExecutionLogFile,
    ExecutionLogLine,
    ReportReceipt,
    RunLayout,
    RunWorkspace,
)
from graphs.models.reviews import ChangeReview, ReviewComment
from graphs.models.runs import (
    EXTERNAL_WORKER,
    PLANNING_NODE_ID,
    WorkGraphRun,
    WorkNodeExecution,
    planning_node_id,
)
from graphs.models.skills import Skill, SkillLabel, SkillRevision
from graphs.models.tasks import Task

__all__ = [
    "EXTERNAL_WORKER",
    "PLANNING_NODE_ID",
    "AgentProfile",
    "AgentProfileLabel",
    "AgentProfileRevision",
    "ApiToken",
    "AppendReview",
    "Artifact",
    "AttemptChange",
    "AuditEntry",
    "AuditEntryImmutable",
    "ChangeReview",
    "DagSpec",
    "Dataset",
    "DatasetCase",
    "EmailNotice",
    "EmailSubscription",
    "ExecutionLogFile",
    "ExecutionLogLine",
    "Experiment",
    "ExperimentItem",
    "ForgeFeedback",
    "Project",
    "ProjectDelivery",
    "ProjectMembership",
    "ReportReceipt",
    "ReviewComment",
    "RunDelivery",
    "RunLayout",
    "RunWorkspace",
    "Skill",
    "SkillLabel",
    "SkillRevision",
    "Task",
    "Webhook",
    "WebhookDelivery",
    "WorkGraphRun",
    "WorkNodeExecution",
    "planning_node_id",
]
