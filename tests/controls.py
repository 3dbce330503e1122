"""The audit's control claims (reader.audit.control), recorded as the audit makes them.

A scripted verifier that answers by position or says YES to everything fails the control claim
each verify batch carries, and the audit then trusts none of its YES answers. A test about
something else records the control claims made and has its verifier answer them as an honest one
would, NO, whatever it does with the real claims.
"""

from __future__ import annotations

from reader.llm.dryrun import claims_with_evidence


def record_controls(monkeypatch, made: set[str] | None = None) -> set[str]:
    """The control claims the audit makes from now on, added to `made` (a new set if None) as it runs."""
    import reader.audit.loop as loop

    made = set() if made is None else made
    make = loop.control_claim

    def recording(claims, evidence):
        control = make(claims, evidence)
        if control is not None:
            made.add(control.claim)
        return control

    monkeypatch.setattr(loop, "control_claim", recording)
    return made


def real_claims(prompt: str, controls: set[str]) -> list[tuple[int, str]]:
    """(number, claim) of the claims a verify prompt asks about, its control claim left out."""
    return [(n, claim) for n, claim, _ in claims_with_evidence(prompt) if claim not in controls]


def control_numbers(prompt: str, controls: set[str]) -> list[int]:
    return [n for n, claim, _ in claims_with_evidence(prompt) if claim in controls]


def yes_but_controls(prompt: str, controls: set[str]) -> str:
    """YES to every claim, NO to the control claim: a credulous verifier that is not obedient."""
    return "\n".join(
        f"[{n}] {'NO' if claim in controls else 'YES'}" for n, claim, _ in claims_with_evidence(prompt)
    )
