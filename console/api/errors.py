"""Every API error is JSON with a stable ``code``, a human ``message`` and, for validation, the fields."""

from __future__ import annotations

import math

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError

from graphs.collaboration.reports import ReportRejected
from graphs.errors import InvalidTransitionError, WorkGraphError


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list[dict] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        # One entry per invalid part of the request: {"field": ..., "message": ...}.
        self.fields = fields or []


def error_handlers_install(api: NinjaAPI) -> None:
    def reply(request: HttpRequest, status: int, code: str, message: str, fields: list | None = None):
        return api.create_response(request, {"code": code, "message": message, "fields": fields or []}, status=status)

    @api.exception_handler(ApiError)
    def _api_error(request, error: ApiError):
        return reply(request, error.status, error.code, error.message, error.fields)

    @api.exception_handler(ValidationError)
    def _validation(request, error: ValidationError):
        fields = [
            {"field": ".".join(str(part) for part in item.get("loc", []) if part not in ("body", "payload")),
             "message": item.get("msg", "invalid")}
            for item in error.errors
        ]
        return reply(request, 400, "validation_error", "The request is not valid.", fields)

    @api.exception_handler(AuthenticationError)
    def _unauthenticated(request, error):
        return reply(request, 401, "unauthenticated", "Sign in or send a valid API token.")

    @api.exception_handler(Http404)
    def _not_found(request, error):
        return reply(request, 404, "not_found", "Not found.")

    @api.exception_handler(PermissionDenied)
    def _forbidden(request, error):
        return reply(request, 403, "forbidden", str(error) or "You may not do that.")

    @api.exception_handler(RequestDataTooBig)
    def _too_big(request, error):
        return reply(request, 413, "too_large", "The request body is too large.")

    @api.exception_handler(ReportRejected)
    def _report(request, error: ReportRejected):
        conflicts = ("already_finished", "busy", "dependencies_unmet", "not_running", "relay_taken")
        # Signed in and a member, but not who attached the relay: forbidden, like any other refusal by role.
        forbidden = ("not_relay_holder",)
        status = 409 if error.code in conflicts else 403 if error.code in forbidden else 400
        return reply(request, status, error.code, str(error))

    @api.exception_handler(InvalidTransitionError)
    def _transition(request, error):
        return reply(request, 409, "invalid_state", str(error))

    @api.exception_handler(WorkGraphError)
    def _domain(request, error):
        return reply(request, 409, "conflict", str(error))

    @api.exception_handler(Throttled)
    def _throttled(request, error: Throttled):
        wait = f" in {math.ceil(error.wait)} seconds" if error.wait is not None else " later"
        return reply(request, 429, "throttled", f"Too many requests; try again{wait}.")

    @api.exception_handler(HttpError)
    def _http(request, error: HttpError):
        return reply(request, error.status_code, "error", str(error))


# Answers that never reach an operation (an unknown path, a method the route lacks, an unhandled
# exception turned into Django's error page) get the same JSON shape, with a code per status.
_STATUS_CODES = {404: "not_found", 405: "method_not_allowed", 500: "server_error"}


class ApiErrorsJsonMiddleware(MiddlewareMixin):
    """Replace any non-JSON error answer under ``/api/`` with the API's JSON error shape.

    Django answers an unknown path, and ninja an unsupported method, before any exception handler of
    the API runs; an unhandled exception becomes Django's HTML 500 page (after Django has logged it).
    """

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (
            response.status_code < 400
            or not request.path.startswith("/api/")
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        status = response.status_code
        body = {"code": _STATUS_CODES.get(status, "error"), "message": f"{response.reason_phrase}.", "fields": []}
        json_response = JsonResponse(body, status=status)
        if "Allow" in response:
            json_response["Allow"] = response["Allow"]
        return json_response
