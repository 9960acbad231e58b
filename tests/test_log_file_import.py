"""``manage.py logs_import_files``: the JSONL files earlier versions wrote are stored, text for text."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from graphs.logs import log_read, log_texts
from graphs.models import ExecutionLogFile, ExecutionLogLine
from tests import factories

pytestmark = pytest.mark.django_db


def file_log(task, directory, lines: list[bytes], *, status: str = "closed") -> ExecutionLogFile:
    execution = factories.ExecutionFactory(run=factories.RunFactory(task=task), status="succeeded")
    relative = f"{task.project_id}/{execution.run_id}/{execution.pk}.jsonl"
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return ExecutionLogFile.objects.create(
        log_file_id=execution.pk, node_exec=execution, project=task.project, file_path=relative, status=status,
        last_seq=len(lines),
    )


def jsonl(seq: int, event: str = "agent_output", **fields) -> bytes:
    line = {"seq": seq, "ts": "2026-11-30T09:00:00.000+00:00", "event": event, **fields}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode()


def import_files(directory) -> str:
    out = StringIO()
    call_command("logs_import_files", "--dir", str(directory), stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_lines_of_a_file_are_stored_as_they_were_written(task, tmp_path):
    written = [jsonl(1, "node_start"), jsonl(2, text="ünïcode ✓", zeta=1, alpha=2), jsonl(3, "node_finished")]
    log_file = file_log(task, tmp_path, written)

    assert "imported 3 line(s) of 1 log(s)" in import_files(tmp_path)

    assert "".join(log_texts(log_file=log_file)).encode() == b"".join(written)
    assert [line["event"] for line in log_read(log_file=log_file)] == ["node_start", "agent_output", "node_finished"]
    header = ExecutionLogFile.objects.get(pk=log_file.pk)
    assert (header.line_count, header.size_bytes) == (3, sum(len(line) for line in written))


def test_a_torn_or_unreadable_line_is_skipped_and_counted(task, tmp_path):
    log_file = file_log(task, tmp_path, [jsonl(1), b"not json\n", jsonl(2), b'{"seq": 3, "ts": "2026-11-30T0'])

    assert "2 unreadable line(s) skipped" in import_files(tmp_path)
    assert [line["seq"] for line in log_read(log_file=log_file)] == [1, 2]


def test_importing_again_changes_nothing(task, tmp_path):
    file_log(task, tmp_path, [jsonl(1), jsonl(2)])
    import_files(tmp_path)

    assert "imported 0 line(s) of 0 log(s)" in import_files(tmp_path)
    assert ExecutionLogLine.objects.count() == 2


def test_a_file_that_is_missing_is_reported_and_the_others_imported(task, tmp_path):
    gone = file_log(task, tmp_path, [jsonl(1)])
    (tmp_path / gone.file_path).unlink()
    kept = file_log(task, tmp_path, [jsonl(1), jsonl(2)])
    err = StringIO()

    call_command("logs_import_files", "--dir", str(tmp_path), stdout=StringIO(), stderr=err)

    assert "1 log file(s) not found" in err.getvalue()
    assert ExecutionLogLine.objects.filter(log_file=kept).count() == 2


def test_a_stored_path_that_escapes_the_directory_is_not_read(task, tmp_path):
    (tmp_path / "outside.jsonl").write_bytes(jsonl(1))
    inside = tmp_path / "logs"
    inside.mkdir()
    log_file = file_log(task, inside, [jsonl(1)])
    ExecutionLogFile.objects.filter(pk=log_file.pk).update(file_path="../outside.jsonl")

    import_files(inside)

    assert not ExecutionLogLine.objects.exists()


def test_a_directory_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        call_command("logs_import_files", "--dir", str(tmp_path / "nope"))
