"""One client per forge behind one protocol, and the one place a project's forge setting picks its client.

- ``base`` — the protocol (``ForgeClient``), the facts every client answers in, and the HTTP they share;
- ``github`` — GitHub and GitHub Enterprise Server;
- ``gitlab`` — GitLab (merge requests, pipelines and their jobs, reviewers, notes);
- ``gitea`` — Gitea, and Forgejo, which serves Gitea's API.
"""

from __future__ import annotations

from graphs.delivery.credentials import Secret
from graphs.delivery.forge_clients.base import ForgeClient
from graphs.delivery.forge_clients.gitea import GiteaClient
from graphs.delivery.forge_clients.github import GitHubClient
from graphs.delivery.forge_clients.gitlab import GitLabClient

CLIENTS = {"github": GitHubClient, "gitlab": GitLabClient, "gitea": GiteaClient}


def forge_client(*, forge: str, api_url: str, repo: str, token: Secret, timeout: float) -> ForgeClient:
    """The client of ``forge`` (github, gitlab or gitea) for the repository ``repo`` at ``api_url``. An unknown
    forge is a programming error: the settings refuse it."""
    return CLIENTS[forge](api_url=api_url, repo=repo, token=token, timeout=timeout)
