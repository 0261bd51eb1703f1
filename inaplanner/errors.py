"""The project's own error types. Every refusal of bad input is one of these, with one clear message."""

from __future__ import annotations


class InaplannerError(Exception):
    """Base class of every error inaplanner raises on purpose (bad input, failed step)."""


class ValidationError(InaplannerError):
    """A document (scenario, plan, inventory) breaks a rule.

    ``source`` names the file (or "<scenario>"), ``where`` the element (a JSON path such as
    ``nodes[3].pipelines`` or an id such as ``switch S1``), ``why`` the cause.
    """

    def __init__(self, why: str, where: str = "", source: str = "") -> None:
        self.why = why
        self.where = where
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        parts = [p for p in (self.source, self.where) if p]
        return (": ".join(parts) + ": " + self.why) if parts else self.why

    def with_source(self, source: str) -> ValidationError:
        return ValidationError(self.why, self.where, source)


class PlanError(InaplannerError):
    """A planner could not produce a plan (infeasible model, solver failure, cancelled)."""


class Cancelled(InaplannerError):
    """Long work was told to stop."""
