"""Finding a graph_manifest (or any JSON payload) in an agent's free-text answer."""

import json
import time

from graphs.domain.json_extraction import extract_json_payload
from graphs.domain.manifest import extract_graph_manifest

MANIFEST = {
    "nodes": [
        {"node_id": "prd", "artifact_type": "prd", "depends_on": []},
        {
            "node_id": "script",
            "depends_on": ["prd"],
            "task_prompt": 'Write this:\n```python\ndef f(): return {1: 2}\n```\nthen print("done") } ] {',
        },
    ],
    "edges": [{"from": "prd", "to": "script", "edge_type": "needs_judgment"}],
}

# Generous: the point is linear against quadratic or worse, not a machine's speed (the benchmark in
# tests/bench measures that). A quadratic pass over a megabyte takes hours; the slowest adversarial
# input here takes about 1.5 s on a slow 2-core machine, so a budget near that failed under load.
TIME_BUDGET_SECONDS = 15.0


def _timed(text: str) -> tuple[dict | None, float]:
    started = time.perf_counter()
    found = extract_graph_manifest(text)
    return found, time.perf_counter() - started


def test_it_parses_a_response_that_is_exactly_one_json_object():
    assert extract_graph_manifest("  " + json.dumps(MANIFEST) + "\n") == MANIFEST


def test_it_finds_a_fenced_json_block_between_prose():
    text = "Here is my plan.\n\n```json\n" + json.dumps(MANIFEST, indent=2) + "\n```\n\nLet me know!"

    assert extract_graph_manifest(text) == MANIFEST


def test_it_unwraps_a_manifest_nested_under_a_graph_manifest_key():
    text = "Plan:\n" + json.dumps({"summary": "two steps", "graph_manifest": MANIFEST})

    assert extract_graph_manifest(text) == MANIFEST


def test_it_skips_a_first_object_that_is_not_the_manifest():
    text = 'Thinking {"step": 1, "nodes": "later"} first.\n' + json.dumps(MANIFEST)

    assert extract_graph_manifest(text) == MANIFEST


def test_it_accepts_a_manifest_without_edges_as_found():
    text = 'ok: {"nodes": [{"node_id": "a", "task_prompt": "x"}]}'

    assert extract_graph_manifest(text) == {"nodes": [{"node_id": "a", "task_prompt": "x"}]}


def test_it_keeps_code_with_braces_and_fences_inside_json_strings():
    fenced = "```json\n" + json.dumps(MANIFEST) + "\n```"

    found = extract_graph_manifest("Prose with a stray } and { first.\n" + fenced)

    assert found == MANIFEST
    assert found["nodes"][1]["task_prompt"].startswith("Write this:\n```python\ndef f(): return {1: 2}\n```")


def test_it_keeps_unicode_intact():
    manifest = {"nodes": [{"node_id": "résumé", "task_prompt": "写一个测试 🚀 «{}»"}], "edges": []}
    text = "Voilà le plan — ✓\n" + json.dumps(manifest, ensure_ascii=False)

    assert extract_graph_manifest(text) == manifest


def test_quotes_in_prose_do_not_hide_a_later_manifest():
    balanced = 'He said "hi" { and then: ' + json.dumps(MANIFEST)
    # Lexing from '{"the' reads the manifest's strings as structure until an escaped quote lines the
    # two readings up again; from there the manifest's brackets close where that earlier lexing's did.
    unbalanced_on_one_line = 'see {"the quote ' + json.dumps(MANIFEST) + " trailing } text"

    assert extract_graph_manifest(balanced) == MANIFEST
    assert extract_graph_manifest(unbalanced_on_one_line) == MANIFEST


def test_it_finds_an_object_nested_inside_a_broken_one():
    text = '{"answer": ' + json.dumps(MANIFEST) + ", oops this is not JSON}"

    assert extract_graph_manifest(text) == MANIFEST


def test_braces_inside_strings_of_a_decoded_object_are_text_not_candidates():
    # From the brace inside "{" the decoder would read the key "}" and then a "nodes" key.
    text = '{"a": "{"}": 1, "nodes": [], "edges": []}'

    assert extract_graph_manifest(text) is None


def test_it_finds_the_manifest_after_fifty_thousand_open_brackets():
    found, _ = _timed("[" * 50_000 + json.dumps(MANIFEST))

    assert found == MANIFEST


def test_it_finds_the_manifest_after_thirty_thousand_open_objects():
    found, seconds = _timed('{"a":' * 30_000 + json.dumps(MANIFEST))

    assert found == MANIFEST
    assert seconds < TIME_BUDGET_SECONDS


def test_it_finds_a_manifest_wrapped_deeper_than_the_decoder_may_go():
    # Handing the outer spans to the json C scanner would raise RecursionError.
    text = '{"a":' * 5_000 + json.dumps(MANIFEST) + "}" * 5_000

    assert extract_graph_manifest(text) == MANIFEST


def test_it_finds_a_manifest_at_the_end_of_a_megabyte_response_in_time():
    prose = 'The plan follows the design; {see notes} and "quoted" words.\n' * 16_000
    found, seconds = _timed(prose + "```json\n" + json.dumps(MANIFEST) + "\n```")

    assert found == MANIFEST
    assert seconds < TIME_BUDGET_SECONDS


def test_it_reads_a_megabyte_manifest_in_time():
    nodes = [
        {"node_id": f"n{i}", "depends_on": [f"n{i - 1}"] if i else [], "task_prompt": 'print("{}")\n' * 40}
        for i in range(2_000)
    ]
    manifest = {"nodes": nodes, "edges": []}
    found, seconds = _timed("Plan:\n" + json.dumps(manifest, indent=2))

    assert found == manifest
    assert seconds < TIME_BUDGET_SECONDS


def test_a_megabyte_of_braces_or_unbalanced_fragments_stays_fast():
    for junk in ("{" * 1_000_000, '{"a":' * 200_000, '{"a": [' * 150_000, '"{' * 500_000, '{\\"' * 330_000):
        found, seconds = _timed(junk + json.dumps(MANIFEST))

        assert found == MANIFEST, junk[:10]
        assert seconds < TIME_BUDGET_SECONDS, junk[:10]


def test_it_returns_none_when_there_is_no_manifest():
    assert extract_graph_manifest("") is None
    assert extract_graph_manifest("No JSON here, only {braces} and [brackets].") is None
    assert extract_graph_manifest('{"nodes": "not a list"} and {"edges": []}') is None
    assert extract_graph_manifest('{"nodes": [1, 2}') is None


def test_a_payload_needs_every_required_key():
    text = 'Verdict: {"ok": true} then {"ok": false, "issues": ["no tests"]}'

    assert extract_json_payload(text) == {"ok": True}
    assert extract_json_payload(text, required_keys=("ok", "issues")) == {"ok": False, "issues": ["no tests"]}
    assert extract_json_payload(text, required_keys=["missing"]) is None
