"""The harnesses' own comparisons, for items read with ``rules="harness"``.

A harness-log reader given ``rules="harness"`` (``--read-option rules=harness``) puts into
each item's metadata a ``harness_rule``: a small JSON object saying how the harness compared
that sample. :func:`verdict` applies it to the item's ``output`` and ``expected``, so that a
metric that honours the rule gives, sample for sample, the harness's own verdict. The rule is
data, not code: it survives results.json, and a metric of any package can read it.

Every rule has ``harness`` (``"lm-eval"`` or ``"inspect"``), ``scorer`` (the harness's metric
or scorer name) and ``kind``:

- ``"exact_match"`` (lm-eval ``exact_match``): each regex of ``regexes_to_ignore`` is deleted
  from the output and each valid answer (in order, ``re.sub``), then ``ignore_case`` lowers
  them, ``ignore_punctuation`` deletes ASCII punctuation and ``ignore_numbers`` the digits
  (each a boolean, default false as in lm-eval); then the texts must be equal, as they are
  (no trimming). Several valid answers: any one.
- ``"choice_index"`` (lm-eval ``acc``, ``acc_norm`` of multiple_choice tasks): the output is
  the index of the picked choice, each valid answer the index of a right one; equal as text.
- ``"choice"`` (inspect ``choice()``): output and the one valid answer are letters
  (``"A, C"``); the sets must be equal, every right letter picked and no other.
- ``"includes"`` (inspect ``includes()``): a valid answer occurs in the output; with
  ``ignore_case`` (default true) after ``str.casefold`` of both.
- ``"match"`` (inspect ``match()``): both stripped of white space, case-folded with
  ``ignore_case``, stripped of leading and trailing ASCII punctuation and white space; then by
  ``location``: the output ends with (``"end"``), begins with (``"begin"``), contains
  (``"any"``) or equals (``"exact"``) a valid answer.
- ``"pattern"`` (inspect ``pattern()``): the output (the text the pattern took out) equals a
  valid answer, lower-cased with ``ignore_case``; an empty output never matches.
- ``"logged"``: a comparison itemscore does not redo (a model grader, numeric matching,
  inspect ``f1()``): the harness's own value as logged, in ``value``: a verdict (inspect
  ``"C"``/``"I"``/``"N"``, a number 0 or 1, a boolean) or partial credit (a number between 0
  and 1, as inspect ``f1()`` logs it; inspect's ``"P"``, 0.5), whose mean is the harness's
  headline.
- ``"unscored"``: the harness scored no value for the sample (inspect leaves a sample that
  ended in an error out of every metric): a metric honouring the rule skips it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KINDS", "RULE_KEY", "credit", "verdict"]

#: The metadata key under which readers put the rule.
RULE_KEY = "harness_rule"
#: The kinds of rule :func:`verdict` applies.
KINDS = (
    "choice",
    "choice_index",
    "exact_match",
    "includes",
    "logged",
    "match",
    "pattern",
    "unscored",
)
_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DIGITS = str.maketrans("", "", string.digits)
_LOGGED = {"C": True, "I": False, "N": False}
#: inspect's partial credit, as its ``value_to_float`` reads it.
_PARTIAL = {"P": 0.5}


def verdict(
    output: str | None, expected: Sequence[str] | None, rule: Mapping[str, Any]
) -> bool | None:
    """Whether the harness counts ``output`` right, by ``rule``; ``None``: it left it unscored.

    Args:
        output: The item's output (``None``: the request failed, never right).
        expected: The item's valid answers (``None``: no answer key, never right).
        rule: The item's ``metadata["harness_rule"]``.

    Raises:
        ValueError: a rule of an unknown kind, or a logged value that is not a verdict
            (partial credit: :func:`credit` gives it).
    """
    kind = rule.get("kind")
    if kind == "unscored":
        return None
    if kind == "logged":
        return _logged(rule.get("value"))
    if kind not in KINDS:
        raise ValueError(
            f"The harness rule kind {kind!r} is not one itemscore applies; the kinds are "
            f"{', '.join(map(repr, KINDS))}. Read the log again with this itemscore version."
        )
    if output is None or not expected:
        return False
    answers = list(expected)
    if kind == "exact_match":
        return _lm_eval_exact(output, answers, rule)
    if kind == "choice_index":
        return output.strip() in {a.strip() for a in answers}
    if kind == "choice":
        picked = sorted(_letters(output))
        return bool(picked) and any(picked == sorted(_letters(a)) for a in answers)
    if kind == "includes":
        if rule.get("ignore_case", True):
            return any(a.casefold() in output.casefold() for a in answers)
        return any(a in output for a in answers)
    if kind == "match":
        return any(_inspect_match(output, a, rule) for a in answers)
    # pattern
    if not output:
        return False
    if rule.get("ignore_case", True):
        return output.lower() in {a.lower() for a in answers}
    return output in answers


def credit(
    output: str | None, expected: Sequence[str] | None, rule: Mapping[str, Any]
) -> float | None:
    """The harness's value for ``output``, by ``rule``; ``None``: it left the sample unscored.

    1.0 or 0.0 where the harness gives a verdict (:func:`verdict`); partial credit as logged
    where it gives that (a ``logged`` value between 0 and 1, as inspect ``f1()`` logs it;
    inspect's ``"P"`` is 0.5): the mean of these values is the harness's headline.

    Raises:
        ValueError: a rule of an unknown kind, or a logged value that is neither a verdict nor
            partial credit between 0 and 1.
    """
    if rule.get("kind") == "logged":
        value = rule.get("value")
        if isinstance(value, str) and value in _PARTIAL:
            return _PARTIAL[value]
        if isinstance(value, (int, float)) and _is_partial(value):
            return float(value)
    right = verdict(output, expected, rule)
    return None if right is None else float(right)


def _is_partial(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1


def _logged(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in _LOGGED:
        return _LOGGED[value]
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if _is_partial(value) or (isinstance(value, str) and value in _PARTIAL):
        raise ValueError(
            f"The logged harness value {value!r} is not a verdict but partial credit; "
            "itemscore.integrations.harness_rules.credit gives it as a value."
        )
    raise ValueError(
        f"The logged harness value {value!r} is neither a verdict (one of 'C', 'I', 'N', 0, "
        "1, true, false) nor partial credit (a number between 0 and 1, or 'P'); score this "
        "item with a metric of its own scale."
    )


def _lm_eval_exact(output: str, answers: list[str], rule: Mapping[str, Any]) -> bool:
    texts = [output, *answers]
    for regex in rule.get("regexes_to_ignore") or ():
        texts = [re.sub(regex, "", t) for t in texts]
    if rule.get("ignore_case", False):
        texts = [t.lower() for t in texts]
    if rule.get("ignore_punctuation", False):
        texts = [t.translate(_ASCII_PUNCTUATION) for t in texts]
    if rule.get("ignore_numbers", False):
        texts = [t.translate(_DIGITS) for t in texts]
    return texts[0] in texts[1:]


def _letters(text: str) -> list[str]:
    return [t.upper() for t in text.replace(",", " ").split()]


def _inspect_match(output: str, answer: str, rule: Mapping[str, Any]) -> bool:
    value, target = output.strip(), answer.strip()
    if rule.get("ignore_case", True):
        value, target = value.casefold(), target.casefold()
    edges = string.whitespace + string.punctuation
    value, target = value.strip(edges), target.strip(edges)
    location = rule.get("location", "end")
    if location == "begin":
        return value.startswith(target)
    if location == "exact":
        return value == target
    if location == "any":
        return target in value
    return value.endswith(target)
