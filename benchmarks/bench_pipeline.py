"""The run table's targets (issue 17): the command line on the 1M-line QA file, end to end.

Each figure is a paired ratio of whole processes, run alternately, medians of the rounds:

- ``itemscore score FILE -m exact_match -m token_f1 -m answered_rate`` (serial, no ``--out``)
  against ``../shared/bench/pipeline_floor.py FILE`` — a ``json.loads`` loop over the file and
  the same-rules loop in one process: the sum the target is stated against;
- the serial read pass alone (plan, parse, convert, check, spool, hash) against the
  ``json.loads`` loop, each timed inside its process, imports left out;
- ``--workers 2`` against serial; ``--dask`` on a 2-worker local cluster against the pool;
- with every report (``--out``) against without, and the peak memory of the whole process tree
  (sampled from ``/proc``, children included) against the file's size; ``items.parquet``'s size
  against the file's.

``ITEMSCORE_BENCH_PIPELINE=100k`` (or ``1m``, the default) picks the file; ``..._ROUNDS`` the
rounds (default 3). ``ITEMSCORE_BENCH_SCALE=10m`` (ten copies of the 1M file as one JSON lines
file) or ``100m`` (a hundred copies as 100 Parquet partitions), unique ids, adds a run at that
scale, ``--workers auto`` with every report: its time and the driver's own peak memory;
``python benchmarks/bench_pipeline.py 10m`` (or ``100m``) runs that check alone.
``compare-50m`` (or any ``compare-<N>m``) scores two runs of N million items as Parquet
partitions (the QA file, and one with other outputs), then times ``itemscore compare`` of
the two and takes its peak memory.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _data import qa_file, shared_bench

METRICS = ["-m", "exact_match", "-m", "token_f1", "-m", "answered_rate"]
ITEMSCORE = str(Path(sys.executable).with_name("itemscore"))


def _proc_bytes(pid: int, file: str, field: str) -> int:
    """A size ``/proc/PID/FILE`` gives in kB on its ``FIELD:`` line, in bytes (0: none)."""
    try:
        with open(f"/proc/{pid}/{file}") as handle:
            for line in handle:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _pss(pid: int) -> int:
    """The proportional set size of ``pid``: its own pages, and its share of shared ones."""
    return _proc_bytes(pid, "smaps_rollup", "Pss")


def _tree_rss(root: int) -> tuple[int, int]:
    """Resident bytes of ``root`` and every process below it, now, and their PSS.

    Forked workers share the driver's pages until they write them: the sum of resident sizes
    counts those pages once per process, the sum of PSS once in all.
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, proportional, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        proportional += _pss(pid)
        todo.extend(children.get(pid, []))
    return total, proportional


def _high_water(pid: int) -> int:
    """The peak resident bytes of ``pid`` itself so far (``VmHWM``), or 0 once it is gone."""
    return _proc_bytes(pid, "status", "VmHWM")


#: The driver's own peak (``VmHWM``) of the last :func:`run`.
DRIVER_PEAK = [0]


def run(command: list[str]) -> tuple[float, tuple[int, int]]:
    """Seconds and peak resident bytes (and PSS) of the process tree of ``command``.

    The peak of the command's own process is left in :data:`DRIVER_PEAK`.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, peak_pss = 0, 0
    DRIVER_PEAK[0] = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        while not done.is_set():
            resident, proportional = _tree_rss(proc.pid)
            peak, peak_pss = max(peak, resident), max(peak_pss, proportional)
            DRIVER_PEAK[0] = max(DRIVER_PEAK[0], _high_water(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    done.set()
    sampler.join()
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {err.decode()[-2000:]}")
    return elapsed, (peak, peak_pss)


def _peak(peaks: list[tuple[int, int]], size: int) -> str:
    resident = max(p[0] for p in peaks)
    proportional = max(p[1] for p in peaks)
    return (
        f"{resident / 2**20:.0f} MiB = {resident / size:.2f}x the file "
        f"(PSS {proportional / 2**20:.0f} MiB = {proportional / size:.2f}x)"
    )


def paired(
    a: list[str], b: list[str], rounds: int
) -> tuple[list[float], list[float], list[tuple[int, int]]]:
    """Alternate ``a`` and ``b``; the times of each and the peaks of ``a``."""
    times_a, times_b, peaks = [], [], []
    for r in range(rounds):
        order = [(a, times_a), (b, times_b)] if r % 2 == 0 else [(b, times_b), (a, times_a)]
        for command, times in order:
            seconds, peak = run(command)
            times.append(seconds)
            if command is a:
                peaks.append(peak)
    return times_a, times_b, peaks


def _ratio(a: list[float], b: list[float]) -> str:
    ratios = sorted(x / y for x, y in zip(a, b))
    return (
        f"{statistics.median(ratios):.2f}x (pairs {ratios[0]:.2f}-{ratios[-1]:.2f}; "
        f"{statistics.median(a):.1f} s against {statistics.median(b):.1f} s)"
    )


def main() -> None:
    size = os.environ.get("ITEMSCORE_BENCH_PIPELINE", "1m")
    rounds = int(os.environ.get("ITEMSCORE_BENCH_PIPELINE_ROUNDS", "3"))
    path = qa_file(size)
    shared = shared_bench()
    assert shared is not None
    floor = [sys.executable, str(shared / "pipeline_floor.py"), str(path)]
    serial = [ITEMSCORE, "score", str(path), *METRICS, "-q"]
    size_mb = path.stat().st_size / 2**20
    print(f"{path.name}: {size_mb:.0f} MiB, {rounds} rounds, load {os.getloadavg()[0]:.1f}")

    a, b, peaks = paired(serial, floor, rounds)
    print(f"  serial against the json.loads + same-rules floor: {_ratio(a, b)} (target <= 1.3x)")
    print(f"  serial peak memory: {_peak(peaks, path.stat().st_size)}")

    a, b = paired_inside(
        [sys.executable, __file__, "--read", str(path)],
        [sys.executable, __file__, "--loads", str(path)],
        rounds,
    )
    print(f"  the read pass alone against the json.loads loop: {_ratio(a, b)} (target <= 2x)")

    workers = [*serial, "--workers", "2"]
    a, b, peaks = paired(workers, serial, rounds)
    print(f"  serial against --workers 2: {_ratio(b, a)} (target >= 1.7x)")
    print(f"  --workers 2 peak memory of the process tree: {_peak(peaks, path.stat().st_size)}")

    a, b, _ = paired(
        [sys.executable, __file__, "--dask", str(path)],
        [sys.executable, __file__, "--pool", str(path)],
        rounds,
    )
    print(f"  Dask (2 local workers) against the pool (2 workers): {_ratio(a, b)} (target <= 1.3x)")

    with tempfile.TemporaryDirectory(prefix="itemscore-bench-") as folder:
        out = Path(folder) / "out"
        with_out = [*serial, "--out", str(out)]
        a, b, peaks = paired(with_out, serial, rounds)
        print(f"  with every report against without: {_ratio(a, b)} (target <= 1.3x)")
        print(
            "  with every report, peak memory of the process tree: "
            f"{_peak(peaks, path.stat().st_size)} (target <= 1.5x)"
        )
        parquet = (out / "items.parquet").stat().st_size
        print(
            f"  items.parquet: {parquet / 2**20:.0f} MiB = "
            f"{parquet / path.stat().st_size:.2f}x the file (target <= 0.5x)"
        )
    scale = os.environ.get("ITEMSCORE_BENCH_SCALE")
    if scale and scale.startswith("compare-"):
        compare_at_scale(int(scale.removeprefix("compare-").removesuffix("m")))
    elif scale:
        at_scale(scale)


def paired_inside(a: list[str], b: list[str], rounds: int) -> tuple[list[float], list[float]]:
    """Alternate ``a`` and ``b``, each printing the seconds of its own work; those seconds."""
    times_a: list[float] = []
    times_b: list[float] = []
    for r in range(rounds):
        order = [(a, times_a), (b, times_b)] if r % 2 == 0 else [(b, times_b), (a, times_a)]
        for command, times in order:
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            times.append(float(done.stdout.split()[-1]))
    return times_a, times_b


def _read_pass(path: str) -> None:
    """The serial read pass of ``itemscore score`` (plan, parse, convert, check, spool, hash).

    Prints its seconds, imports left out, as ``_loads`` does.
    """
    from itemscore.cli._memory import arrow_without_pandas, settle

    settle()  # as the command line allocates
    arrow_without_pandas()
    from itemscore._settings import RunSettings
    from itemscore.engine._files import _parts, _read_all, _spool_folder
    from itemscore.executors import resolve_executor
    from itemscore.inputs import open_source

    engine = resolve_executor("serial").open()
    start = time.perf_counter()
    with open_source(path) as source, _spool_folder() as spool:
        checks = source.checks(spool)  # each part's digest and ids go to it as it is read
        _read_all(engine, _parts(source, engine), spool, RunSettings(), None, checks)
        checks.finish(needing=["exact_match"])
    print(time.perf_counter() - start)


def _loads(path: str) -> None:
    """``json.loads`` of every line; prints its seconds."""
    start = time.perf_counter()
    loads = json.loads
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            loads(line)
    print(time.perf_counter() - start)


def _python_run(path: str, executor: str) -> None:
    """One run of ``score()`` on ``path`` (the Dask and pool comparison, through the API)."""
    import itemscore
    from itemscore._run import score_opened
    from itemscore.engine._files import Keep
    from itemscore.inputs import open_source

    del itemscore
    with open_source(path) as source:
        score_opened(
            source,
            ["exact_match", "token_f1", "answered_rate"],
            keep=Keep("none"),
            executor=executor,
            workers=2,
        )


def _ten_million_lines(folder: Path) -> Path:
    """Ten copies of the 1M QA file, one JSON lines file, with unique ids."""
    big = folder / "qa-10m.jsonl"
    with open(qa_file("1m"), encoding="utf-8") as handle, open(big, "w", encoding="utf-8") as out:
        lines = handle.readlines()
        for copy in range(10):
            for line in lines:
                row = json.loads(line)
                row["id"] = f"{row['id']}-{copy}"
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return big


def _qa_rows() -> list[dict[str, Any]]:
    """The 1M QA file's rows, each answer key a list (one Parquet type for every row)."""
    with open(qa_file("1m"), encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    for row in rows:
        if isinstance(row.get("expected"), str):
            row["expected"] = [row["expected"]]
    return rows


def _copies(table: Any, parts: Path, copies: int) -> Path:
    """``copies`` copies of ``table`` as Parquet partitions in ``parts``, ids made unique."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts.mkdir()
    ids = table.column("id")
    for copy in range(copies):
        renamed = table.set_column(0, "id", pc.binary_join_element_wise(ids, f"{copy}", "-"))
        pq.write_table(renamed, parts / f"part-{copy:03d}.parquet", row_group_size=1 << 17)
    return parts


def _hundred_million_rows(folder: Path) -> Path:
    """A hundred copies of the 1M QA file as a folder of Parquet partitions, unique ids."""
    import pyarrow as pa

    return _copies(pa.Table.from_pylist(_qa_rows()), folder / "qa-100m", 100)


def _paired_runs(folder: Path, copies: int) -> tuple[Path, Path]:
    """Two runs' data of ``copies`` million rows each: the QA file, and one with other outputs.

    The second has every tenth output emptied and every seventh set to its first answer, so
    that both metrics differ between the runs (the ids and questions are the same).
    """
    import pyarrow as pa

    rows = _qa_rows()
    table = pa.Table.from_pylist(rows)
    outputs = []
    for index, row in enumerate(rows):
        answers = row.get("expected") or [""]
        outputs.append("" if index % 10 == 3 else answers[0] if index % 7 == 2 else row["output"])
    del rows
    changed = table.set_column(
        table.schema.get_field_index("output"), "output", pa.array(outputs, pa.string())
    )
    return (
        _copies(table, folder / "baseline", copies),
        _copies(changed, folder / "candidate", copies),
    )


def compare_at_scale(copies: int) -> None:
    """``itemscore compare`` of two saved runs of ``copies`` million items: time, peak memory."""
    with tempfile.TemporaryDirectory(prefix=f"itemscore-compare-{copies}m-") as folder:
        root = Path(folder)
        results = []
        for data in _paired_runs(root, copies):
            out = root / f"out-{data.name}"
            seconds, _ = run(
                [
                    ITEMSCORE,
                    "score",
                    str(data),
                    *METRICS,
                    "--workers",
                    "auto",
                    "--out",
                    str(out),
                    "-q",
                ]
            )
            print(f"  scored {data.name}: {seconds:.0f} s")
            shutil.rmtree(data)
            results.append(str(out / "results.json"))
        seconds, peak = run([ITEMSCORE, "compare", *results, "--json"])
        print(
            f"  compare of two {copies}M-item runs: {seconds:.0f} s, peak "
            f"{DRIVER_PEAK[0] / 2**20:.0f} MiB (process tree {peak[0] / 2**20:.0f} MiB; "
            "target < 1 GB)"
        )


#: The opt-in scales: the data each makes, and the targets it is held to (issue 37).
SCALES = {
    "10m": (_ten_million_lines, "< 240 s; driver <= 300 MB"),
    "100m": (_hundred_million_rows, "driver < 500 MB"),
}


def at_scale(scale: str) -> None:
    """``--workers auto`` with every report on the scale's data: time and peak memory."""
    make, targets = SCALES[scale]
    with tempfile.TemporaryDirectory(prefix=f"itemscore-{scale}-") as folder:
        data = make(Path(folder))
        print(f"{data.name}: {scale} items, load {os.getloadavg()[0]:.1f}")
        report = Path(folder) / "out"
        command = [ITEMSCORE, "score", str(data), *METRICS, "--workers", "auto"]
        seconds, peak = run([*command, "--out", str(report), "-q"])
        print(
            f"  {scale}, --workers auto, every report: {seconds:.0f} s, driver peak "
            f"{DRIVER_PEAK[0] / 2**20:.0f} MiB, process tree {peak[0] / 2**30:.2f} GiB, PSS "
            f"{peak[1] / 2**30:.2f} GiB (targets: {targets})"
        )
        shutil.rmtree(report, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--dask", "--pool"):
        _python_run(sys.argv[2], "dask" if sys.argv[1] == "--dask" else "process")
    elif len(sys.argv) == 3 and sys.argv[1] == "--read":
        _read_pass(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--loads":
        _loads(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] in SCALES:
        at_scale(sys.argv[1])
    elif len(sys.argv) == 2 and sys.argv[1].startswith("compare-"):
        compare_at_scale(int(sys.argv[1].removeprefix("compare-").removesuffix("m")))
    else:
        main()
