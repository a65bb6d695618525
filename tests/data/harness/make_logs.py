"""Write the real harness logs that tests/test_inputs_lm_eval.py and test_inputs_inspect.py read.

Not part of CI and not collected by pytest (its name does not start with ``test_``): it needs
inspect_ai and lm-eval, which are no dependencies of itemscore. Run it by hand, in a scratch
virtual environment outside the repository, when a harness changes its log format::

    python3.11 -m venv /tmp/harness-venv
    /tmp/harness-venv/bin/pip install torch==2.13.0   # lm-eval needs torch; a CPU build is enough
    /tmp/harness-venv/bin/pip install inspect_ai lm_eval
    /tmp/harness-venv/bin/python tests/data/harness/make_logs.py   # sets HF_*_OFFLINE=1

Give folder names to write only those: ``inspect``, ``lm-eval``, ``inspect-cases``,
``lm-eval-cases`` (these two hold the cases each harness scores its own way), ``epochs``
(one task over three epochs: attempts), and ``leaderboard`` (one lm-eval task of 120 questions
on eight models, written to ``../leaderboard``).

Both harnesses run offline: the data sets are written here, next to the logs, and the models are
scripted (inspect_ai's built-in ``mockllm`` with outputs chosen per question; an lm-eval ``LM``
subclass registered below). The versions used are recorded in README.md beside this file.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# -- inspect_ai ---------------------------------------------------------------------------------

#: Short-answer questions: (id, question, valid answers, subject).
QA = [
    ("q1", "What is the capital of France?", ["Paris"], "geography"),
    ("q2", "How many legs does a spider have?", ["8", "eight"], "biology"),
    ("q3", "Who wrote Hamlet?", ["William Shakespeare", "Shakespeare"], "literature"),
    ("q4", "What is the chemical symbol for gold?", ["Au"], "chemistry"),
]

#: What each scripted model writes for each question; ``None``: the request fails.
QA_ANSWERS: dict[str, dict[str, str | None]] = {
    "scripted-a": {
        "q1": "The capital of France is Paris.\nANSWER: Paris",
        "q2": "Spiders are arachnids.\nANSWER: eight",
        "q3": "ANSWER: Christopher Marlowe",
        "q4": "Gold's symbol comes from Latin aurum.\nANSWER: Au",
    },
    "scripted-b": {
        "q1": "ANSWER: paris",
        "q2": "I think it is six.",  # no ANSWER line: the scorer extracts nothing
        "q3": "ANSWER: Shakespeare",
        "q4": None,
    },
}

#: Multiple-choice questions: (id, question, choices, correct letter, subject).
MC = [
    ("m1", "Which planet is largest?", ["Mars", "Jupiter", "Venus", "Mercury"], "B", "astronomy"),
    (
        "m2",
        "Which gas do plants take in?",
        ["Oxygen", "Nitrogen", "Carbon dioxide"],
        "C",
        "biology",
    ),
    ("m3", "What is 7 x 6?", ["42", "36", "48", "49"], "A", "arithmetic"),
]
MC_ANSWERS = {"m1": "ANSWER: B", "m2": "ANSWER: A", "m3": "Let me think.\n\nANSWER: A"}


def _register_scripted_provider() -> None:
    """Register ``scripted/NAME``: inspect_ai's mockllm with a token count that stays offline.

    mockllm counts input tokens with tiktoken, which downloads its encoding on first use; this
    machine reaches no network, so the count here is a word count.
    """
    from inspect_ai.model import modelapi
    from inspect_ai.model._providers.mockllm import MockLLM

    @modelapi(name="scripted")
    class Scripted(MockLLM):
        async def count_text_tokens(self, text: str) -> int:
            return len(text.split())


def _scripted(answers: dict[str, str | None], by_question: dict[str, str]) -> Any:
    """A mockllm output function: the answer to the question found in the prompt."""
    from inspect_ai.model import ModelOutput

    def output(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        for question, qid in by_question.items():
            if question in prompt:
                text = answers[qid]
                if text is None:
                    raise RuntimeError(f"scripted failure on {qid}")
                return ModelOutput.from_content(model="mockllm", content=text)
        raise AssertionError(f"no scripted answer for {prompt!r}")

    return output


def _keep(location: str, out: Path) -> None:
    """Copy a log to a stable name, ``TASK_MODEL.EXT``; its content stays as inspect wrote it."""
    from inspect_ai.log import read_eval_log

    header = read_eval_log(location, header_only=True)
    task = header.eval.task
    model = header.eval.model.split("/")[-1]
    shutil.copyfile(location, out / f"{task}_{model}{Path(location).suffix}")


def make_inspect_logs(out: Path) -> None:
    """Run a short-answer task on two scripted models and a multiple-choice task on one."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import choice, pattern
    from inspect_ai.solver import generate, multiple_choice

    _register_scripted_provider()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    qa = Task(
        name="capitals_qa",
        dataset=MemoryDataset(
            [Sample(id=qid, input=q, target=t, metadata={"subject": s}) for qid, q, t, s in QA]
        ),
        solver=generate(),
        # The scorer's `answer` is the text after "ANSWER:", not the completion as written.
        scorer=pattern(r"ANSWER:\s*(.+)"),
    )
    mc = Task(
        name="science_mc",
        dataset=MemoryDataset(
            [
                Sample(id=qid, input=q, choices=c, target=t, metadata={"subject": s})
                for qid, q, c, t, s in MC
            ]
        ),
        solver=multiple_choice(),
        scorer=choice(),
    )
    qa_by_question = {q: qid for qid, q, _, _ in QA}
    mc_by_question = {q: qid for qid, q, _, _, _ in MC}
    for log_format in ("eval", "json"):
        for name, answers in QA_ANSWERS.items():
            model = get_model(
                f"scripted/{name}", custom_outputs=_scripted(answers, qa_by_question), memoize=False
            )
            (log,) = eval(
                qa,
                model=model,
                log_dir=str(out / "raw"),
                log_format=log_format,
                fail_on_error=False,
                display="none",
            )
            _keep(log.location, out)
        model = get_model(
            "scripted/scripted-a",
            custom_outputs=_scripted(MC_ANSWERS, mc_by_question),
            memoize=False,
        )
        (log,) = eval(
            mc,
            model=model,
            log_dir=str(out / "raw"),
            log_format=log_format,
            display="none",
        )
        _keep(log.location, out)
    shutil.rmtree(out / "raw")


#: Multiple-choice questions with several right letters (all required), and choices that
#: differ only in case: (id, question, choices, target letters, scripted answer).
LETTERS = [
    (
        "x1",
        "Which are citrus fruits?",
        ["Lemon", "Apple", "Lime", "Pear"],
        ["A", "C"],
        "ANSWER: A, C",
    ),
    ("x2", "Which are mammals?", ["Whale", "Shark", "Bat", "Trout"], ["A", "C"], "ANSWER: A"),
    ("x3", "Which are prime numbers?", ["4", "3", "9", "7"], ["B", "D"], "ANSWER: B,D"),
    # "may" and "May" differ only in case: inspect grades the letter, so A is wrong.
    ("x4", "Which is the month?", ["may", "May", "might", "must"], ["B"], "ANSWER: A"),
    ("x5", "Which are colours?", ["Red", "Run", "Blue", "Big"], ["A", "C"], "I am not sure."),
]

#: Short answers scored with includes() and match(): (id, question, target, per epoch answer).
CONTAINS = [
    ("c1", "Name the capital of Italy.", "Rome", ["I am fairly sure it is Rome.", "Rome"]),
    ("c2", "What is six times seven?", "42", ["The answer is 42 or so", "42"]),
    ("c3", "What colour is the sky?", "Blue", ["blue", "BLUE!"]),
    ("c4", "What is the symbol for iron?", "Fe", ["fe.", "Iron is Fe, not FE"]),
]

#: A token limit that one answer exceeds: (id, question, target, answer).
LIMITED = [
    ("t1", "Say yes.", "yes", "yes"),
    ("t2", "Count to twenty in words.", "one", " ".join(["one two three four five"] * 8)),
]


def make_more_inspect_logs(out: Path) -> None:
    """The cases the reader must keep as inspect scored them (all written as .eval).

    ``letters_mc``: multiple_choice(multiple_correct=True) with choice(); ``contains_qa``:
    includes() and match() on free text, two epochs, sample metadata keys named ``group`` and
    ``model``; ``limited_qa``: a token limit one sample hits.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import choice, includes, match
    from inspect_ai.solver import generate, multiple_choice

    _register_scripted_provider()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    raw = out / "raw"
    letters = Task(
        name="letters_mc",
        dataset=MemoryDataset(
            [Sample(id=i, input=q, choices=c, target=t) for i, q, c, t, _ in LETTERS]
        ),
        solver=multiple_choice(multiple_correct=True),
        scorer=choice(),
    )
    contains = Task(
        name="contains_qa",
        dataset=MemoryDataset(
            [
                Sample(
                    id=i,
                    input=q,
                    target=t,
                    metadata={"group": f"g{n % 2}", "model": "from-metadata", "n": n},
                )
                for n, (i, q, t, _) in enumerate(CONTAINS)
            ]
        ),
        solver=generate(),
        scorer=[includes(), match()],
        epochs=2,
    )
    limited = Task(
        name="limited_qa",
        dataset=MemoryDataset([Sample(id=i, input=q, target=t) for i, q, t, _ in LIMITED]),
        solver=generate(),
        scorer=includes(),
        token_limit=60,
    )
    calls: dict[str, int] = {}

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        for _, q, _, _, text in LETTERS:
            if q in prompt:
                return ModelOutput.from_content(model="mockllm", content=text)
        for i, q, _, texts in CONTAINS:
            if q in prompt:
                calls[i] = calls.get(i, 0) + 1
                return ModelOutput.from_content(model="mockllm", content=texts[calls[i] - 1])
        for _, q, _, text in LIMITED:
            if q in prompt:
                return ModelOutput.from_content(model="mockllm", content=text)
        raise AssertionError(f"no scripted answer for {prompt!r}")

    for task in (letters, contains, limited):
        model = get_model("scripted/scripted-a", custom_outputs=answer, memoize=False)
        (log,) = eval(task, model=model, log_dir=str(raw), display="none", fail_on_error=False)
        _keep(log.location, out)
    shutil.rmtree(raw)


#: Five short-answer questions asked three times each: (id, question, target, answer per epoch).
EPOCHS_QA = [
    ("e1", "What is the capital of Spain?", "Madrid", ["Madrid", "Madrid", "Madrid"]),
    ("e2", "What is two plus two?", "4", ["4", "5", "4"]),
    ("e3", "Which planet is red?", "Mars", ["Venus", "Mars", "Jupiter"]),
    ("e4", "What is the boiling point of water in Celsius?", "100", ["90", "80", "70"]),
    ("e5", "Who painted the Mona Lisa?", "Leonardo", ["Leonardo", "Leonardo", "Raphael"]),
]


def make_epochs_logs(out: Path) -> None:
    """One task of five questions over three epochs, scored with match(): attempts."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    _register_scripted_provider()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    raw = out / "raw"
    task = Task(
        name="epochs_qa",
        dataset=MemoryDataset([Sample(id=i, input=q, target=t) for i, q, t, _ in EPOCHS_QA]),
        solver=generate(),
        scorer=match(),
        epochs=3,
    )
    calls: dict[str, int] = {}

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        for i, q, _, texts in EPOCHS_QA:
            if q in prompt:
                calls[i] = calls.get(i, 0) + 1
                return ModelOutput.from_content(model="mockllm", content=texts[calls[i] - 1])
        raise AssertionError(f"no scripted answer for {prompt!r}")

    model = get_model("scripted/scripted-a", custom_outputs=answer, memoize=False)
    (log,) = eval(task, model=model, log_dir=str(raw), display="none", max_samples=1)
    _keep(log.location, out)
    shutil.rmtree(raw)


# -- lm-evaluation-harness ----------------------------------------------------------------------

GEN_TASK = """\
task: capitals_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: capitals.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answers}}"
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "ANSWER: (.*)"
      - function: take_first
  - name: raw
    filter:
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
metadata:
  version: 1.0
"""

MC_TASK = """\
task: science_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: science.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: label
metric_list:
  - metric: acc
  - metric: acc_norm
metadata:
  version: 1.0
"""

#: generate_until with doc_to_choice: the target is an index into the choices.
CHOICE_GEN_TASK = """\
task: colours_choice_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: colours.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: label
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
metric_list:
  - metric: exact_match
metadata:
  version: 1.0
"""

#: multiple_choice with choices that differ in case, an out-of-range target, and acc_norm.
FRUIT_TASK = """\
task: fruit_mc
tag: fruit_tag
dataset_path: json
dataset_kwargs:
  data_files:
    test: fruit.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: label
metric_list:
  - metric: acc
  - metric: acc_norm
metadata:
  version: 1.0
"""

#: exact_match with the task's own options: regexes, case and punctuation.
STRICT_TASK = """\
task: strict_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: strict.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
    regexes_to_ignore:
      - ","
      - "\\\\$"
      - "(?s).*ANSWER: "
metadata:
  version: 1.0
"""

#: Three samples per document (repeats), voted on by the filter.
REPEAT_TASK = """\
task: repeat_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: strict.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
repeats: 3
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
filter_list:
  - name: maj
    filter:
      - function: regex
        regex_pattern: "ANSWER: (.*)"
      - function: majority_vote
      - function: take_first
metric_list:
  - metric: exact_match
metadata:
  version: 1.0
"""

GROUP_TASK = """\
group: fruit_group
task:
  - fruit_mc
  - colours_choice_gen
aggregate_metric_list:
  - metric: acc
    weight_by_size: true
metadata:
  version: 1.0
"""

#: (id, question, choices, label, scripted answer) of colours_choice_gen.
COLOURS = [
    ("k1", "What colour is grass?", ["green", "red", "blue"], 0, "green"),
    ("k2", "What colour is snow?", ["black", "white"], 1, "White"),
    ("k3", "What colour is coal?", ["black", "white"], 0, "black"),
    ("k4", "What colour is the sun?", ["purple", "yellow"], 1, "orange"),
]

#: (id, question, choices, label, log-likelihood per choice) of fruit_mc. f3's label is out of
#: range; in f4 acc_norm (per character) picks another choice than acc.
FRUIT = [
    ("f1", "Which fruit is red?", ["apple", "Apple", "banana"], 1, [-0.5, -1.0, -3.0]),
    ("f2", "Which fruit is yellow?", ["apple", "banana"], 1, [-2.0, -0.5]),
    ("f3", "Which fruit is purple?", ["plum", "kiwi"], 7, [-0.5, -1.0]),
    ("f4", "Which fruit is large?", ["fig", "watermelon"], 1, [-2.0, -3.0]),
    ("f5", "Which fruit is sour?", ["lemon", "melon"], 0, [-0.4, -0.9]),
    ("f6", "Which fruit is green?", ["lime", "date"], 0, [-1.9, -0.2]),
]

#: (id, question, answer, scripted completions) of strict_gen (the first) and repeat_gen (all).
STRICT = [
    ("s1", "What is 1000 times 3?", "3000", ["ANSWER: 3,000", "ANSWER: 3000", "ANSWER: 30"]),
    ("s2", "How much is the ticket?", "$5", ["ANSWER: 5", "ANSWER: 6", "ANSWER: 6"]),
    ("s3", "Name the river in Paris.", "Seine", ["ANSWER: seine!", "ANSWER: Seine", "x"]),
    ("s4", "Spell the word cat.", "cat", ["ANSWER: c.a.t", "ANSWER: dog", "ANSWER: dog"]),
]

#: The scripted LM's choice per multiple-choice question (an index into its choices).
LM_CHOICE = {"m1": 1, "m2": 0, "m3": 0}


def _register_scripted_lm() -> None:
    """Register the lm-eval model ``scripted``: answers chosen per question, no weights."""
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    by_question = {q: qid for qid, q, _, _ in QA}
    by_mc_question = {q: qid for qid, q, _, _, _ in MC}
    calls: dict[str, int] = {}

    @register_model("scripted")
    class ScriptedLM(LM):
        def __init__(self, pretrained: str = "scripted-a", **kwargs: Any) -> None:
            super().__init__()
            self.name = pretrained

        def generate_until(self, requests: Any, disable_tqdm: bool = False) -> list[str]:
            out = []
            for request in requests:
                context = request.arguments[0]
                out.append(self._generate(context))
            return out

        def _generate(self, context: str) -> str:
            qid = next((qid for q, qid in by_question.items() if q in context), None)
            if qid is not None:
                return QA_ANSWERS[self.name][qid] or ""
            for _, question, _, _, text in COLOURS:
                if question in context:
                    return text
            for sid, question, _, texts in STRICT:
                if question in context:
                    if context.startswith("Q: "):  # repeat_gen: the next of the three
                        calls[sid] = calls.get(sid, 0) + 1
                        return texts[(calls[sid] - 1) % len(texts)]
                    return texts[0]
            raise AssertionError(f"no scripted answer for {context!r}")

        def loglikelihood(
            self, requests: Any, disable_tqdm: bool = False
        ) -> list[tuple[float, bool]]:
            out = []
            for request in requests:
                context, continuation = request.arguments
                fruit = next((f for f in FRUIT if f[1] in context), None)
                if fruit is not None:
                    lls = fruit[4]
                    index = fruit[2].index(continuation.strip())
                    out.append((lls[index], lls[index] == max(lls)))
                    continue
                qid = next(qid for q, qid in by_mc_question.items() if q in context)
                choices = next(c for i, _, c, _, _ in MC if i == qid)
                index = choices.index(continuation.strip())
                if index == LM_CHOICE[qid]:
                    out.append((-0.25, True))
                else:
                    out.append((-1.5 - 0.5 * index, False))
            return out

        def loglikelihood_rolling(self, requests: Any, disable_tqdm: bool = False) -> Any:
            raise NotImplementedError


def make_lm_eval_logs(out: Path) -> None:
    """Run a generate_until task on two scripted models and a multiple_choice task on one."""
    from lm_eval.__main__ import cli_evaluate

    _register_scripted_lm()
    if out.exists():
        shutil.rmtree(out)
    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "capitals_gen.yaml").write_text(GEN_TASK)
    (tasks / "science_mc.yaml").write_text(MC_TASK)
    with (tasks / "capitals.jsonl").open("w") as f:
        for qid, question, answers, subject in QA:
            row = {"id": qid, "question": question, "answers": answers, "subject": subject}
            f.write(json.dumps(row) + "\n")
    with (tasks / "science.jsonl").open("w") as f:
        for qid, question, choices, letter, subject in MC:
            label = "ABCD".index(letter)
            row = {"id": qid, "question": question, "choices": choices, "label": label}
            f.write(json.dumps(row | {"subject": subject}) + "\n")
    cwd = os.getcwd()
    os.chdir(tasks)  # the data files are named relative to here, so no local path is logged
    try:
        for model, task in [
            ("scripted-a", "capitals_gen,science_mc"),
            ("scripted-b", "capitals_gen"),
        ]:
            sys.argv = [
                "lm_eval",
                "run",
                "--model",
                "scripted",
                "--model_args",
                f"pretrained={model}",
                "--tasks",
                task,
                "--include_path",
                str(tasks),
                "--log_samples",
                "--output_path",
                str(out / "results"),
            ]
            cli_evaluate()
    finally:
        os.chdir(cwd)


def make_more_lm_eval_logs(out: Path) -> None:
    """The cases the reader must keep as lm-eval scored them, in a folder of their own.

    One run of scripted-a over the group ``fruit_group`` (``fruit_mc``: case-different choices,
    an out-of-range target, acc_norm; ``colours_choice_gen``: generate_until with
    doc_to_choice), ``strict_gen`` (exact_match with regexes_to_ignore, ignore_case and
    ignore_punctuation) and ``repeat_gen`` (repeats: 3, majority vote).
    """
    from lm_eval.__main__ import cli_evaluate

    _register_scripted_lm()
    if out.exists():
        shutil.rmtree(out)
    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "colours_choice_gen.yaml").write_text(CHOICE_GEN_TASK)
    (tasks / "fruit_mc.yaml").write_text(FRUIT_TASK)
    (tasks / "strict_gen.yaml").write_text(STRICT_TASK)
    (tasks / "repeat_gen.yaml").write_text(
        REPEAT_TASK.replace("Question: {{question}}", "Q: {{question}}").replace("Answer:", "A:")
    )
    (tasks / "fruit_group.yaml").write_text(GROUP_TASK)
    with (tasks / "colours.jsonl").open("w") as f:
        for kid, question, choices, label, _ in COLOURS:
            f.write(
                json.dumps({"id": kid, "question": question, "choices": choices, "label": label})
            )
            f.write("\n")
    with (tasks / "fruit.jsonl").open("w") as f:
        for fid, question, choices, label, _ in FRUIT:
            f.write(
                json.dumps({"id": fid, "question": question, "choices": choices, "label": label})
            )
            f.write("\n")
    with (tasks / "strict.jsonl").open("w") as f:
        for sid, question, answer, _ in STRICT:
            f.write(json.dumps({"id": sid, "question": question, "answer": answer}) + "\n")
    cwd = os.getcwd()
    os.chdir(tasks)
    try:
        sys.argv = [
            "lm_eval",
            "run",
            "--model",
            "scripted",
            "--model_args",
            "pretrained=scripted-a",
            "--tasks",
            "fruit_group,strict_gen,repeat_gen",
            "--include_path",
            str(tasks),
            "--log_samples",
            "--output_path",
            str(out / "results"),
        ]
        cli_evaluate()
    finally:
        os.chdir(cwd)


# -- a leaderboard: one task, many questions, several models -------------------------------------

#: The models of the leaderboard and their abilities on the item-response scale of
#: ``LEADERBOARD_QUESTIONS``' difficulties. Chosen so that some models are close (a leaderboard
#: whose adjacent places cannot all be told apart) and some far apart; not in name order.
LEADERBOARD_MODELS = {
    "model-c": 2.6,
    "model-f": 2.4,
    "model-a": 2.3,
    "model-h": 1.4,
    "model-b": 1.2,
    "model-e": 0.4,
    "model-d": 0.3,
    "model-g": -0.8,
}
#: Questions of ``arith_gen``.
LEADERBOARD_N = 120


def leaderboard_questions() -> list[dict[str, Any]]:
    """The ``arith_gen`` questions: six kinds of sums and products, harder kind by kind.

    Each has an ``id``, ``question``, ``answer`` (the exact result, as text), ``kind`` and
    ``difficulty`` (on the scale of ``LEADERBOARD_MODELS``: the kind's level plus noise).
    """
    import random

    rng = random.Random(2026)
    kinds = [
        ("add2", lambda: (rng.randint(10, 99), "+", rng.randint(10, 99))),
        ("add3", lambda: (rng.randint(100, 999), "+", rng.randint(100, 999))),
        ("sub3", lambda: (rng.randint(500, 999), "-", rng.randint(100, 499))),
        ("mul21", lambda: (rng.randint(10, 99), "*", rng.randint(2, 9))),
        ("mul22", lambda: (rng.randint(10, 99), "*", rng.randint(10, 99))),
        ("mul32", lambda: (rng.randint(100, 999), "*", rng.randint(10, 99))),
    ]
    out = []
    for n in range(LEADERBOARD_N):
        level = n % len(kinds)
        kind, draw = kinds[level]
        a, op, b = draw()
        value = a + b if op == "+" else a - b if op == "-" else a * b
        out.append(
            {
                "id": f"a{n:03d}",
                "question": f"What is {a} {'x' if op == '*' else op} {b}?",
                "answer": str(value),
                "kind": kind,
                "difficulty": round(-2.0 + 0.9 * level + rng.gauss(0.0, 0.7), 3),
            }
        )
    return out


def _leaderboard_answer(model: str, question: dict[str, Any]) -> str:
    """What ``model`` writes: right with the item-response chance, else a slip or no answer.

    The draw is seeded by the model and question, so every run writes the same answers.
    """
    import math
    import random

    rng = random.Random(f"{model}:{question['id']}")
    ability = LEADERBOARD_MODELS[model]
    right = rng.random() < 1.0 / (1.0 + math.exp(-(ability - question["difficulty"])))
    value = int(question["answer"])
    if right:
        return f"Working it out.\nANSWER: {value}"
    if rng.random() < 0.2:
        return "I cannot work this one out."  # no ANSWER line: the filter extracts nothing
    slip = rng.choice([1, -1]) * 10 ** rng.randint(0, max(0, len(str(abs(value))) - 1))
    return f"Working it out.\nANSWER: {value + slip}"


def make_leaderboard_logs(out: Path) -> None:
    """Run ``arith_gen`` (``LEADERBOARD_N`` questions) on every model of ``LEADERBOARD_MODELS``."""
    from lm_eval.__main__ import cli_evaluate
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    questions = leaderboard_questions()
    by_question = {q["question"]: q for q in questions}

    @register_model("scripted-solver")
    class ScriptedSolver(LM):
        def __init__(self, pretrained: str = "model-a", **kwargs: Any) -> None:
            super().__init__()
            self.name = pretrained

        def generate_until(self, requests: Any, disable_tqdm: bool = False) -> list[str]:
            out = []
            for request in requests:
                context = request.arguments[0]
                question = next(q for text, q in by_question.items() if text in context)
                out.append(_leaderboard_answer(self.name, question))
            return out

        def loglikelihood(self, requests: Any, disable_tqdm: bool = False) -> Any:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: Any, disable_tqdm: bool = False) -> Any:
            raise NotImplementedError

    if out.exists():
        shutil.rmtree(out / "tasks", ignore_errors=True)
        shutil.rmtree(out / "results", ignore_errors=True)
    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "arith_gen.yaml").write_text(ARITH_TASK)
    with (tasks / "arith.jsonl").open("w") as f:
        for q in questions:
            row = {k: q[k] for k in ("id", "question", "answer", "kind")}
            f.write(json.dumps(row) + "\n")
    cwd = os.getcwd()
    os.chdir(tasks)  # the data file is named relative to here, so no local path is logged
    try:
        for model in sorted(LEADERBOARD_MODELS):
            sys.argv = [
                "lm_eval",
                "run",
                "--model",
                "scripted-solver",
                "--model_args",
                f"pretrained={model}",
                "--tasks",
                "arith_gen",
                "--include_path",
                str(tasks),
                "--log_samples",
                "--output_path",
                str(out / "results"),
            ]
            cli_evaluate()
    finally:
        os.chdir(cwd)


ARITH_TASK = """\
task: arith_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: arith.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "ANSWER: (-?\\\\d+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


if __name__ == "__main__":
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    which = sys.argv[1:] or [
        "inspect",
        "lm-eval",
        "inspect-cases",
        "lm-eval-cases",
        "epochs",
        "leaderboard",
    ]
    if "inspect" in which:
        make_inspect_logs(HERE / "inspect")
    if "lm-eval" in which:
        make_lm_eval_logs(HERE / "lm-eval")
    if "inspect-cases" in which:
        make_more_inspect_logs(HERE / "inspect-cases")
    if "lm-eval-cases" in which:
        make_more_lm_eval_logs(HERE / "lm-eval-cases")
    if "epochs" in which:
        make_epochs_logs(HERE / "epochs")
    if "leaderboard" in which:
        make_leaderboard_logs(HERE.parent / "leaderboard")
