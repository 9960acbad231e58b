"""What the browser tests of delivery share: a project's Delivery page filled in as a lead would and saved."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.deliveries import TOKEN_ENV, ServedRemote


def delivery_page_saved(page, served: ServedRemote, *, webhook_secret_env: str = "") -> None:
    """From the project page ``page`` shows, set the project to deliver pull requests: its runs pushed to the
    ``served`` remote and opened on its GitHub stand-in (the repository ``acme/app``, the token in ``TOKEN_ENV``,
    the webhook secret in ``webhook_secret_env`` when named), and see the page save it."""
    page.click("#project-delivery-link")
    page.select_option("select[name=deliver]", "pull_request")
    page.fill("input[name=remote_url]", served.url)
    page.select_option("select[name=forge]", "github")
    page.fill("input[name=forge_api_url]", served.github.api_url)
    page.fill("input[name=forge_repo]", "acme/app")
    page.fill("input[name=forge_token_env]", TOKEN_ENV)
    if webhook_secret_env:
        page.fill("input[name=forge_webhook_secret_env]", webhook_secret_env)
    page.click("#delivery-save")
    expect(page.locator(".messages")).to_contain_text("Delivery settings saved.")
