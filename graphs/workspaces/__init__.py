"""Where agents and commands work, and what confines them.

- ``git`` — every git command of the console: pinned repository and work tree, no configured programs, the
  repository lock;
- ``worktrees`` — a run's branch, an attempt's worktree, landing or keeping its change, diffs;
- ``landings`` — a landing whose attempt was lost before it was recorded: found, recorded, never made twice;
- ``libgit`` — staging, committing and landing a change in-process through libgit2, where it does what git does;
- ``commit_reads`` — a file as a commit holds it, and the diff between two commits, for change reviews;
- ``pool`` — worktrees kept for reuse, moved to an attempt's head rather than written whole;
- ``sweeps`` — the walk of a pooled worktree that finds what its give-back must delete;
- ``watches`` — the inotify watch of a pooled worktree: the paths an attempt touched, or None when not known for
  certain;
- ``touched`` — staging an attempt's change and giving its worktree back from the touched paths alone;
- ``disk`` — whether a failure met a full disk, whatever git or libgit2 called it;
- ``worktree_checks`` — what is checked of a worktree after its agent ran: tampering, escaping symlinks, write sets;
- ``git_view`` — the read-only view of a worktree's git a sandboxed process reads, never writes;
- ``sandbox`` — the bubblewrap sandbox every agent CLI process and command runs in;
- ``processes`` — waiting on a child process whose output is drained on threads;
- ``command_process`` — running a command node's or a command judgment's argv in its sandbox.
"""
