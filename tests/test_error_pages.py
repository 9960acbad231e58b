"""Errors get the console's own pages: 404 for an unknown id (in DEBUG too), 403, 400 and a static 500,
none with debug detail; the API keeps answering JSON."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client, RequestFactory, override_settings

from console.error_pages import server_error
from tests.clients import signed_in

pytestmark = pytest.mark.django_db

UNKNOWN = uuid.UUID(int=7)
DEBUG_DETAIL = ("Traceback", "seeing this error because", "DEBUG = True", "SECRET_KEY", "INSTALLED_APPS",
                "Using the URLconf", "tried these URL patterns", "No Skill matches", "secret-detail")


def assert_console_page(response, status: int) -> str:
    page = response.content.decode()
    assert response.status_code == status
    assert 'id="error-page"' in page and f'data-status="{status}"' in page
    assert 'id="way-back"' in page
    for detail in DEBUG_DETAIL:
        assert detail not in page, detail
    return page


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    ("url", "way_back"),
    [
        (f"/tasks/{UNKNOWN}/", "/tasks/"),
        (f"/runs/{UNKNOWN}/", "/runs/"),
        (f"/runs/{UNKNOWN}/planning/", "/runs/"),
        (f"/executions/{UNKNOWN}/", "/runs/"),
        ("/skills/no-such-skill/", "/skills/"),
        ("/skills/no-such-skill/edit/", "/skills/"),
        (f"/runs/{UNKNOWN}/compare/{UNKNOWN}/", "/runs/"),
        (f"/executions/{UNKNOWN}/compare/{UNKNOWN}/", "/runs/"),
        ("/projects/no-such-project/", "/"),
    ],
)
def test_an_unknown_id_gets_the_consoles_404_page_with_a_way_back(settings, alice, dana, debug, url, way_back):
    settings.DEBUG = debug
    user = dana if url.startswith("/skills/") else alice
    page = assert_console_page(signed_in(user).get(url), 404)
    assert f'href="{way_back}" id="way-back"' in page
    assert 'class="topbar"' in page and user.username in page, "the console's page, signed in"


def test_the_404_page_says_why_in_the_views_words(dana):
    page = assert_console_page(signed_in(dana).get("/skills/no-such-skill/"), 404)
    assert "no skill has the id no-such-skill" in page


def test_an_unmatched_url_gets_the_consoles_404_page_outside_debug(alice):
    page = assert_console_page(signed_in(alice).get("/no/such/page/"), 404)
    assert 'href="/" id="way-back"' in page
    assert 'id="debug-detail"' not in page


@override_settings(DEBUG=True)
@pytest.mark.parametrize(("url", "way_back"), [("/runs/not-a-uuid/", "/runs/"), ("/no/such/page/", "/")])
def test_an_unmatched_url_gets_the_consoles_404_page_in_debug_with_a_line_of_detail_below(alice, url, way_back):
    page = assert_console_page(signed_in(alice).get(url), 404)
    assert f'href="{way_back}" id="way-back"' in page
    assert 'class="topbar"' in page and "alice" in page, "the console's page, signed in"
    detail = page.index('id="debug-detail"')
    assert page.index('id="way-back"') < detail
    assert f"No route of console.urls matches {url}" in page[detail:]


@override_settings(DEBUG=True)
def test_a_missing_object_in_debug_gets_the_consoles_page_naming_the_view_below(alice):
    page = assert_console_page(signed_in(alice).get(f"/runs/{UNKNOWN}/"), 404)
    assert "run_graph raised Http404." in page[page.index('id="debug-detail"'):]


@override_settings(DEBUG=True)
def test_an_unmatched_url_missing_its_slash_is_still_redirected_in_debug(alice):
    response = signed_in(alice).get("/runs")
    assert (response.status_code, response["Location"]) == (301, "/runs/")


@pytest.mark.parametrize("debug", [False, True])
def test_a_forbidden_page_gets_the_consoles_403_page(settings, alice, debug):
    settings.DEBUG = debug
    page = assert_console_page(signed_in(alice).get("/skills/"), 403)
    assert "Not allowed" in page


@pytest.mark.urls("tests.error_page_urls")
def test_a_failing_view_gets_the_static_500_page(alice):
    client = signed_in(alice)
    client.raise_request_exception = False
    page = assert_console_page(client.get("/broken/"), 500)
    assert "Something went wrong" in page


def test_the_500_page_renders_without_a_request_context_or_the_database(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = server_error(RequestFactory().get("/anything/"))
    assert_console_page(response, 500)


def test_a_bad_request_gets_the_static_400_page(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    assert_console_page(Client(HTTP_HOST="evil.example").get("/"), 400)


@pytest.mark.parametrize("debug", [False, True])
def test_the_api_still_answers_json_for_an_unknown_id(settings, alice, debug):
    settings.DEBUG = debug
    response = signed_in(alice).get(f"/api/tasks/{UNKNOWN}")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
