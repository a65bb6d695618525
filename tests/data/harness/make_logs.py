"""Write the real harness logs that tests/test_inputs_lm_eval.py and test_inputs_inspect.py read.

Not part of CI and not collected by pytest (its name does not start with ``test_``): it needs
inspect_ai and lm-eval, which are no dependencies of itemscore. Run it by hand, in a scratch
virtual environment outside the repository, when a harness changes its log format::

    python3.11 -m venv /tmp/harness-venv
    /tmp/harness-venv/bin/pip install torch==2.13.0   # lm-eval needs torch; a CPU build is enough
    /tmp/harness-venv/bin/pip install inspect_ai lm_eval
    /tmp/harness-venv/bin/python tests/data/harness/make_logs.py   # sets HF_*_OFFLINE=1

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

#: The scripted LM's choice per multiple-choice question (an index into its choices).
LM_CHOICE = {"m1": 1, "m2": 0, "m3": 0}


def _register_scripted_lm() -> None:
    """Register the lm-eval model ``scripted``: answers chosen per question, no weights."""
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    by_question = {q: qid for qid, q, _, _ in QA}
    by_mc_question = {q: qid for qid, q, _, _, _ in MC}

    @register_model("scripted")
    class ScriptedLM(LM):
        def __init__(self, pretrained: str = "scripted-a", **kwargs: Any) -> None:
            super().__init__()
            self.name = pretrained

        def generate_until(self, requests: Any, disable_tqdm: bool = False) -> list[str]:
            out = []
            for request in requests:
                context = request.arguments[0]
                qid = next(qid for q, qid in by_question.items() if q in context)
                out.append(QA_ANSWERS[self.name][qid] or "")
            return out

        def loglikelihood(
            self, requests: Any, disable_tqdm: bool = False
        ) -> list[tuple[float, bool]]:
            out = []
            for request in requests:
                context, continuation = request.arguments
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


if __name__ == "__main__":
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    which = sys.argv[1:] or ["inspect", "lm-eval"]
    if "inspect" in which:
        make_inspect_logs(HERE / "inspect")
    if "lm-eval" in which:
        make_lm_eval_logs(HERE / "lm-eval")
