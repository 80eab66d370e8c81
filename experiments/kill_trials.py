"""Crash safety of training: SIGKILL a tiny `opinion-tagger train` run at random
moments, resume it after each kill, and compare the final bundle with an
uninterrupted run of the same configuration and seed.

The data is the invented sample corpus (corpora/sample/make_sample.py), converted
once; the model is tiny, so most of each epoch is spent writing the checkpoint and
many kills land in the middle of a write.  Every process is started with
``--resume``; a kill comes a random time (uniform in [0, --window] epochs of the
reference run) after the process reports its first epoch, or when it reports its
second, whichever is first: a process adds at most two epochs, so with the default
--max-epochs (2 x kills + 10) the run is still going when the last kill is sent.

    python -m experiments.kill_trials [--kills 20] [--seed 0] [--window 2] [--fork | --code DIR] [--trainer fast]

Each child is a fresh ``python -m opinion_tagger.cli train`` process; ``--fork`` instead
forks it from this process after TensorFlow is imported here (never used here),
which saves the import at every start (the slow test uses it).  ``--code DIR``
runs another checkout's ``tagger`` (e.g. an older commit) in the child processes.  ``--trainer fast``
trains with the JAX loop instead (a checkpoint after each dev evaluation, here every epoch; no
``--fork``: JAX's threads do not survive one).  Prints: trials run (kills sent), survived (kills after which the
next process went on training), final score equal (the final bundle's dev scores
and per-epoch history equal the uninterrupted run's).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EPOCH_LINE = re.compile(r"epoch (\d+): loss")
TINY = [
    "--task",
    "joint",
    "--cell",
    "elman",
    "--depth",
    "1",
    "--hidden",
    "8",
    "--features",
    "random",
    "--embedding-dim",
    "8",
    "--batch-size",
    "2",
    "--patience",
    "1000",
    "--no-jit",
]
TRAINERS = {"keras": [], "fast": ["--trainer", "fast", "--eval-every", "1"]}


def prepare_data(work: Path, code: Path) -> tuple[Path, Path]:
    """The sample corpus as a CoNLL file (no spaCy at every start) and a one-fold split."""
    spec = importlib.util.spec_from_file_location("make_sample", ROOT / "corpora" / "sample" / "make_sample.py")
    make_sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_sample)
    mpqa = make_sample.write_sample(work / "mpqa")
    conll = work / "sample.conll"
    subprocess.run(
        [sys.executable, "-m", "opinion_tagger.cli", "corpus", "convert", "--mpqa", str(mpqa), "--out", str(conll)],
        env=child_env(code),
        cwd=code,
        check=True,
        capture_output=True,
    )
    split = work / "split"
    split.mkdir(exist_ok=True)
    (split / "doclist.mpqaOriginalSubset").write_text("demo/doc-a\ndemo/doc-b\nother/doc-c\n")
    (split / "filelist_train0").write_text("demo/doc-a\n")
    (split / "filelist_test0").write_text("other/doc-c\n")
    return conll, split


def child_env(code: Path) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(code),
        "TF_NUM_INTRAOP_THREADS": "1",
        "TF_NUM_INTEROP_THREADS": "1",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "PYTHONUNBUFFERED": "1",
    }


class Forked:
    """A forked child that runs ``opinion_tagger.cli.main(argv)``, with Popen's poll/wait/send_signal."""

    def __init__(self, argv: list[str]):
        import opinion_tagger.cli

        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: output to the pipe, exit without the parent's clean-up
            code = 70
            try:
                os.close(read)
                os.dup2(write, 1)
                os.dup2(write, 2)
                sys.stdout = sys.stderr = os.fdopen(write, "w", buffering=1)
                code = opinion_tagger.cli.main(argv[argv.index("train") :])
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(write)
        self.stdout = os.fdopen(read, "r", errors="replace")
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)


def preload(code: Path) -> None:
    """What every child would import, from ``code``: loaded once, before forking (nothing is run)."""
    sys.path.insert(0, str(code))
    import keras  # noqa: F401

    import opinion_tagger.cli  # noqa: F401
    import opinion_tagger.evaluation.scoring  # noqa: F401
    import opinion_tagger.model.network  # noqa: F401
    import opinion_tagger.runtime.sentence_tagger  # noqa: F401
    import opinion_tagger.training.trainer  # noqa: F401


@dataclass
class Child:
    """One `train --resume` process; its output is read in a thread and scanned for epoch lines."""

    proc: subprocess.Popen
    started: float
    first_epoch: float | None = None
    epochs: list[int] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    seen: threading.Event = field(default_factory=threading.Event)
    second: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def start(cls, argv: list[str], env: dict, fork: bool = False) -> Child:
        # run in the code's checkout: `python -m` puts the working directory first on sys.path
        proc = (
            Forked(argv)
            if fork
            else subprocess.Popen(
                argv,
                env=env,
                cwd=env["PYTHONPATH"],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
        )
        child = cls(proc, time.perf_counter())
        threading.Thread(target=child._read, daemon=True).start()
        return child

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.output.append(line)
            for m in EPOCH_LINE.finditer(line):
                self.epochs.append(int(m.group(1)))
                if self.first_epoch is None:
                    self.first_epoch = time.perf_counter()
                    self.seen.set()
                elif len(self.epochs) >= 2:
                    self.second.set()
        self.seen.set()
        self.second.set()

    def tail(self, n: int = 3) -> str:
        lines = [x.strip() for x in "".join(self.output).replace("\r", "\n").splitlines() if x.strip()]
        return " | ".join(lines[-n:])


def train_argv(conll: Path, split: Path, out: Path, max_epochs: int, trainer: str = "keras") -> list[str]:
    return [
        sys.executable,
        "-m",
        "opinion_tagger.cli",
        "train",
        "--data",
        "conll",
        str(conll),
        "--datasplit",
        str(split),
        "--fold",
        "0",
        *TINY,
        *TRAINERS[trainer],
        "--max-epochs",
        str(max_epochs),
        "--out",
        str(out),
        "--resume",
    ]


def summary(bundle: Path) -> dict | None:
    """What must equal between runs: dev scores and the per-epoch history."""
    try:
        meta = json.loads((bundle / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    history = [{k: h[k] for k in ("epoch", "loss", "dev_score")} for h in meta["training"]["history"]]
    return {"scores": meta["scores"], "history": history, "best_epoch": meta["training"]["best_epoch"]}


def bundle_loads(bundle: Path, code: Path) -> bool:
    """The final bundle loads (and verifies) in a fresh process, in ONNX Runtime."""
    probe = (
        "import sys; from opinion_tagger.runtime.sentence_tagger import SentenceTagger; "
        "t = SentenceTagger.load(sys.argv[1], backend='onnx'); print(len(t.predict([['A', 'test', '.']])))"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe, str(bundle)], env=child_env(code), cwd=code, capture_output=True, text=True
    )
    return r.returncode == 0


def run_trials(
    kills: int,
    work: Path,
    seed: int = 0,
    max_epochs: int | None = None,
    window: float = 2.0,
    code: Path = ROOT,
    fork: bool = False,
    log=print,
    trainer: str = "keras",
) -> dict:
    """Send ``kills`` SIGKILLs to one training run, resuming after each; returns the figures."""
    rng = random.Random(seed)
    max_epochs = max_epochs or 2 * kills + 10
    env = child_env(code)
    conll, split = prepare_data(work, code)
    if fork:
        os.environ.update(
            {k: env[k] for k in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "TF_CPP_MIN_LOG_LEVEL")}
        )
        preload(code)
    t0 = time.perf_counter()
    ref = Child.start(train_argv(conll, split, work / "reference", max_epochs, trainer), env, fork)
    ref.proc.wait()
    ref_seconds = time.perf_counter() - t0
    if ref.proc.returncode != 0 or ref.first_epoch is None:
        raise RuntimeError(f"the uninterrupted run failed: {ref.tail()}")
    # wall seconds per epoch after the first (training, dev evaluation and checkpoint)
    epoch_s = (time.perf_counter() - ref.first_epoch) / max(1, max_epochs - 1)
    log(f"reference: {max_epochs} epochs in {ref_seconds:.1f}s, {epoch_s * 1000:.0f} ms per epoch")
    out = work / "killed"
    sent = survived = mid_save = 0
    failure = None
    finished = False
    kill_epochs = []
    while not finished and failure is None:
        child = Child.start(train_argv(conll, split, out, max_epochs, trainer), env, fork)
        if sent < kills:
            child.seen.wait()
            child.second.wait(rng.uniform(0, window) * epoch_s)
            if child.proc.poll() is None:
                child.proc.send_signal(signal.SIGKILL)
        child.proc.wait()
        code_ = child.proc.returncode
        if sent and (child.epochs or code_ == 0):  # the previous kill is survived: this process went on
            survived += 1
        mid_save += "skipping incomplete checkpoint" in "".join(child.output)
        if code_ == -signal.SIGKILL:
            sent += 1
            kill_epochs.append(child.epochs[-1] if child.epochs else None)
        elif code_ == 0:
            finished = True
        else:
            failure = f"exit status {code_}: {child.tail()}"
    final = summary(out) if finished else None
    reference = summary(work / "reference")
    figures = {
        "trials": sent,
        "survived": survived,
        "killed_mid_save": mid_save,
        "finished": finished,
        "final_score_equal": final is not None and final == reference,
        "bundle_loads": finished and bundle_loads(out, code),
        "failure": failure,
        "last_epoch_before_each_kill": kill_epochs,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if final is not None and final != reference:
        figures["difference"] = {"reference": reference["history"][-3:], "resumed": final["history"][-3:]}
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    ap.add_argument("--max-epochs", type=int, help="(default: 2 x kills + 10)")
    ap.add_argument("--window", type=float, default=2.0, help="kill within this many epochs of the first one")
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose tagger the children run")
    ap.add_argument("--fork", action="store_true", help="fork the children from this process (faster starts)")
    ap.add_argument("--work", type=Path, help="working directory (default: a temporary one)")
    ap.add_argument("--trainer", choices=sorted(TRAINERS), default="keras")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.fork and args.trainer == "fast":
        ap.error("--fork works with the Keras trainer only (JAX's threads do not survive a fork)")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        f = run_trials(
            args.kills,
            work,
            args.seed,
            args.max_epochs,
            args.window,
            args.code.resolve(),
            args.fork,
            trainer=args.trainer,
        )
    print(f"trials run: {f['trials']}")
    print(f"survived: {f['survived']}")
    print(f"kills that left an incomplete checkpoint (resume fell back): {f['killed_mid_save']}")
    print(f"final score equal: {'yes' if f['final_score_equal'] else 'no'}")
    print(f"final bundle loads: {'yes' if f['bundle_loads'] else 'no'}")
    if f["failure"]:
        print(f"failure: {f['failure']}")
    if "difference" in f:
        print(f"last epochs, reference vs resumed: {json.dumps(f['difference'])}")
    print(f"({f['seconds']}s)")
    if args.json:
        print(json.dumps(f))
    return 0 if f["final_score_equal"] and f["bundle_loads"] else 1


if __name__ == "__main__":
    sys.exit(main())
