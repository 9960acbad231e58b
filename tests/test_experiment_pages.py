"""The experiment pages: an experiment's page (status, variant, aggregate, each item with its run, a form to
compare it with another of its dataset) and two experiments compared (figures side by side with their
differences, then the flipped cases, pass → fail first, each linking to its two runs' comparison). Members
of the project read both; anyone else, and a link naming no experiment, gets a page saying so."""

from __future__ import annotations

import re

import pytest

from graphs.models.experiments import ExperimentItem
from tests.clients import signed_in
from tests.experiment_pairs import experiment_pair

pytestmark = pytest.mark.django_db

FLIPPED_ROW = re.compile(r'<tr data-case="(\d+)" data-flip="([a-z-]+)">')
COMPARE_LINK = re.compile(r'href="/runs/([0-9a-f-]+)/compare/([0-9a-f-]+)/" data-compare-runs')


@pytest.fixture
def pair(project):
    return experiment_pair(project)


def _cell(page: str, figure: str, side: str) -> str:
    row = re.search(rf'<tr data-figure="{figure}">(.*?)</tr>', page, re.S).group(1)
    if side == "difference":
        return re.search(r"<td data-difference>(.*?)</td>", row).group(1)
    return re.search(rf'<td data-side="{side}">(.*?)</td>', row).group(1)


def test_the_compare_page_sets_the_figures_side_by_side_with_their_differences(pair, alice):
    a, b = pair

    page = signed_in(alice).get(f"/experiments/compare/?a={a.pk}&b={b.pk}").content.decode()

    assert _cell(page, "pass_rate", "a") == "50.0 % (2 of 4; 95 % interval 15.0 % to 85.0 %)"
    assert _cell(page, "pass_rate", "difference") == "same"
    assert (_cell(page, "total_cost_usd", "a"), _cell(page, "total_cost_usd", "b")) == ("$0.0400", "$0.0800")
    assert _cell(page, "total_cost_usd", "difference") == "+$0.0400"
    assert _cell(page, "median_duration_ms", "difference") == "+1.0 s"
    assert _cell(page, "input_tokens", "b") == "4,800"
    assert (_cell(page, "loop_backs", "a"), _cell(page, "retries", "difference")) == ("2", "same")


def test_the_flipped_cases_come_pass_to_fail_first_each_linking_both_runs_comparison(pair, alice):
    a, b = pair
    client = signed_in(alice)

    page = client.get(f"/experiments/compare/?a={a.pk}&b={b.pk}").content.decode()

    cases = list(a.dataset.cases.order_by("id").values_list("pk", flat=True))
    assert FLIPPED_ROW.findall(page) == [(str(cases[1]), "pass-fail"), (str(cases[2]), "fail-pass")]
    runs = {(item.experiment_id, item.case_id): str(item.run_id) for item in ExperimentItem.objects.all()}
    assert COMPARE_LINK.findall(page) == [(runs[a.pk, cases[1]], runs[b.pk, cases[1]]),
                                          (runs[a.pk, cases[2]], runs[b.pk, cases[2]])]
    link = COMPARE_LINK.search(page)
    assert client.get(f"/runs/{link.group(1)}/compare/{link.group(2)}/").status_code == 200
    backwards = client.get(f"/experiments/compare/?a={b.pk}&b={a.pk}").content.decode()
    assert [flip for _, flip in FLIPPED_ROW.findall(backwards)] == ["pass-fail", "fail-pass"]
    assert FLIPPED_ROW.findall(backwards)[0][0] == str(cases[2])


def test_the_experiment_page_shows_its_items_aggregate_and_a_compare_picker(pair, alice):
    a, b = pair

    page = signed_in(alice).get(f"/experiments/{b.pk}/").content.decode()

    assert "skill <code>export</code> revision 2" in page
    assert 'data-figure="pass_rate"><th scope="row">Pass rate</th><td>50.0 % (2 of 4;' in page
    runs = [str(run) for run in b.items.order_by("case_id").values_list("run_id", flat=True)]
    assert re.findall(r'<a href="/runs/([0-9a-f-]+)/" data-run=', page) == runs
    assert '<form method="get" action="/experiments/compare/" class="form" id="compare-with">' in page
    assert f'<input type="hidden" name="a" value="{b.pk}">' in page
    assert re.findall(r'<option value="(\d+)">', page) == [str(a.pk)]


def test_the_datasets_page_links_each_experiment_of_a_dataset(pair, bob):
    a, b = pair

    page = signed_in(bob).get(f"/projects/{a.project.slug}/datasets/").content.decode()

    assert re.findall(r'<a href="/experiments/(\d+)/">', page) == [str(b.pk), str(a.pk)]


def test_reviewers_read_them_and_no_one_else_learns_they_exist(pair, bob, charlie, client):
    a, b = pair
    pages = [f"/experiments/{a.pk}/", f"/experiments/compare/?a={a.pk}&b={b.pk}"]

    assert [signed_in(bob).get(url).status_code for url in pages] == [200, 200]
    outsider = [signed_in(charlie).get(url) for url in pages]
    assert [answer.status_code for answer in outsider] == [404, 404]
    assert f"There is no experiment {a.pk} you may read." in outsider[0].content.decode()
    assert "Skill revision" not in outsider[1].content.decode()
    assert client.get(pages[0])["Location"].startswith("/login/")


@pytest.mark.parametrize(("query", "status", "words"), [
    ("", 400, "?a= and ?b= must be a number"),
    ("?a=1&b=seven", 400, "?b= must be a number"),
    ("?a=-1&b=2", 400, "?a= must be a number"),
    ("?a={a}&b=99999999999999999999999", 404, "There is no experiment 99999999999999999999999 you may read."),
    ("?a=0&b={b}", 404, "There is no experiment 0 you may read."),
])
def test_a_link_that_names_no_experiment_gets_a_page_saying_so(pair, alice, query, status, words):
    a, b = pair

    answer = signed_in(alice).get("/experiments/compare/" + query.format(a=a.pk, b=b.pk))

    assert answer.status_code == status
    assert words in answer.content.decode()


def test_an_experiment_page_of_no_experiment_is_a_404_page(alice):
    for url in ("/experiments/4711/", "/experiments/99999999999999999999999/"):
        answer = signed_in(alice).get(url)
        assert answer.status_code == 404
        assert "No such experiment" in answer.content.decode()


@pytest.mark.parametrize("repetitions", [1, 3])
def test_the_pages_read_in_the_same_queries_however_many_items(project, alice, repetitions,
                                                               django_assert_num_queries):
    a, b = experiment_pair(project, outcomes=[(True, False), (False, True)] * 3, repetitions=repetitions)
    client = signed_in(alice)
    client.get("/")

    with django_assert_num_queries(QUERIES["compare"]):
        client.get(f"/experiments/compare/?a={a.pk}&b={b.pk}")
    with django_assert_num_queries(QUERIES["experiment"]):
        client.get(f"/experiments/{a.pk}/")


# Beside the five every page reads (session, user, inbox count, two of permissions): each experiment and the
# reader's role in its project, then the compare page both experiments' items; the experiment page its items
# and the other experiments of its dataset.
QUERIES = {"compare": 11, "experiment": 9}
