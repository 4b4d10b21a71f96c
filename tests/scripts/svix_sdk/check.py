"""Small checks for the scenario: equality with a message, and the errors
the SDK raises for a refusal."""

from svix.exceptions import HttpError, HTTPValidationError


def eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def refused(call, status, what):
    """Runs `call`, which must fail with `status`; answers the error."""
    try:
        call()
    except (HttpError, HTTPValidationError) as e:
        eq(e.status_code, status, f"{what}: status")
        return e
    raise AssertionError(f"{what}: succeeded, want {status}")
