"""In a real browser against daphne: the run graph's minimap follows the colour scheme. In a dark one
its picture is dark where it draws no box, like the stage it sits on; in a light one, light."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.browser.dag_runs import wide_run

pytestmark = pytest.mark.django_db(transaction=True)

# The minimap's own pixel in its top-left corner (inside its inset, where no box is drawn), as the
# canvas holds it, and the stage's background: both "r, g, b, a" with channels 0-255.
GROUNDS = """
() => {
  const canvas = document.querySelector('#dag .dag-minimap');
  const corner = [...canvas.getContext('2d').getImageData(2, 2, 1, 1).data];
  const stage = getComputedStyle(document.querySelector('#dag .dag-stage')).backgroundColor;
  return { corner, stage: stage.match(/[\\d.]+/g).slice(0, 3).map(Number) };
}
"""


def _luminance(rgb: list[float]) -> float:
    lin = [(c / 255 / 12.92) if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_minimap_is_painted_in_the_colour_scheme_of_the_page(chromium, console_server, alice, task, scheme):
    run = wide_run(task, layers=8, width=30)
    page = chromium.new_page(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, f"{console_server}/runs/{run.run_id}/", "alice")
    page.wait_for_selector("#dag[data-placed='true']")
    page.locator("#dag .dag-minimap").wait_for(state="visible")

    grounds = page.evaluate(GROUNDS)
    page.locator("#dag .dag-minimap").screenshot(path=str(ARTIFACTS / f"minimap-{scheme}.png"))
    assert grounds["corner"][3] > 200, f"the minimap paints no ground of its own: {grounds}"
    dark_stage = _luminance(grounds["stage"]) < 0.05
    assert dark_stage == (scheme == "dark")
    assert (_luminance(grounds["corner"]) < 0.05) == dark_stage, grounds
    assert errors == []
