"""The configuration options of ``opinion-tagger train``: one option per field of the configuration
(``opinion_tagger.config.FIELDS``), and the configuration that a command line describes.

A field's flag comes from its path by one rule (``flag_of``): the field's own name, ``_`` written ``-``
(``model.recurrent.cell``: ``--cell``, ``training.stopping.max_epochs``: ``--max-epochs``), prefixed by its
block's name where fields of two blocks share that name (``model.encoder.fine_tune``: ``--encoder-fine-tune``,
``training.optimizer.name``: ``--optimizer-name``).  A boolean field takes ``--no-`` before its flag for false.
``ALIASES`` keeps the flags the options had before they were derived so (``--lr``, ``--crf``, ``--frames``, ...).
The help of an option is the field's description, with its default.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from opinion_tagger.config import FIELDS, TaggerConfig, check_value, given_fields
from opinion_tagger.config.blocks import OneOf
from opinion_tagger.errors import TaggerError

# An earlier flag: the path of its field, or (path, the value the flag sets without taking one).
ALIASES: dict[str, str | tuple[str, Any]] = {
    "--embedding-dim": "model.embeddings.dim",
    "--fine-tune": "model.embeddings.fine_tune",
    "--contextual": "model.encoder.name",
    "--fine-tune-context": "model.encoder.fine_tune",
    "--context-pooling": "model.encoder.pooling",
    "--crf": ("model.head.output", "crf"),
    "--auxiliary": "model.auxiliary.types",
    "--frames": "model.frames.enabled",
    "--frame-weight": "model.frames.weight",
    "--frame-units": "model.frames.units",
    "--frame-both": "model.frames.both",
    "--frame-dse-intensity": "model.frames.dse_intensity",
    "--frame-detach": "model.frames.detach",
    "--optimizer": "training.optimizer.name",
    "--lr": "training.optimizer.learning_rate",
    "--lr-schedule": "training.schedule.name",
    "--no-jit": ("training.jit_compile", False),
    "--distill-weight": "training.distillation.weight",
    "--distill-copies": "training.distillation.copies",
    "--distill-noise": "training.distillation.noise",
}
# The options of the authors' released recipe (the fast trainer's), shown in a group of their own.
RECIPE_FIELDS = (
    "training.trainer",
    "training.init_scale",
    "training.o_weight",
    "training.stopping.eval_every",
    *(p for p in FIELDS if p.startswith("training.fast.")),
)
EXCLUSIVE = ("model.recurrent.budget", "model.recurrent.hidden")  # hidden units replace the budget's
RECIPE = (
    "the authors' released trainer (oir/deep-recurrent) uses "
    "--trainer fast --optimizer-name sgd --momentum 0.7 --learning-rate 0.001 --lr-decay 0.999 --batch-size 80 "
    "--loss-sum --o-weight 0.5 --output-lr-scale 0.1 --l2 1e-4 --activation-l2 1e-4 "
    "--init uniform --clipnorm 0 --dropout 0 --input-dropout 0 --eval-every 5"
)


def flag_of(paths: typing.Iterable[str] = FIELDS) -> dict[str, str]:
    """Each field's flag, by path: its name with ``-`` for ``_``, its block's name before it where two blocks
    have a field of that name."""
    paths = list(paths)
    shared = Counter(p.rsplit(".", 1)[-1] for p in paths)
    out = {}
    for path in paths:
        names = path.split(".")
        name = names[-1] if shared[names[-1]] == 1 else "_".join(names[-2:])
        out[path] = "--" + name.replace("_", "-")
    return out


FLAGS = flag_of()


def field_type(path: str) -> tuple[Any, tuple[str, ...] | None]:
    """The Python type of a field's values (None aside) and its allowed values, where it has a list of them."""
    annotation, metadata = FIELDS[path].annotation, list(FIELDS[path].metadata)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *more = typing.get_args(annotation)
        metadata += more
    choices = next((m.choices for m in metadata if isinstance(m, OneOf)), None)
    return annotation, choices


def _shown_default(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _value_of(path: str) -> Any:
    """The argparse type of a number field's option: the text as the field's type, checked as the field takes it
    (a value out of range is a usage error naming the option)."""
    kind, _ = field_type(path)

    def value(text: str) -> Any:
        try:
            number = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text} is not {'an integer' if kind is int else 'a number'}") from None
        try:
            return check_value(path, number)
        except TaggerError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{path}: ")) from None

    value.__name__ = kind.__name__  # argparse names the type in its message for a value it cannot convert
    return value


def add_config_options(p: argparse.ArgumentParser) -> None:
    """One option per field (default None: a field not given keeps the value of the configuration file or
    bundle underneath), the earlier flags beside it, the field's default in its help."""
    groups = {"config": p.add_argument_group("model and training configuration")}
    groups["config"].add_argument(
        "--config",
        type=Path,
        help="JSON or YAML file with a configuration: nested blocks, fields by path (model.recurrent.cell: lstm) "
        "or a bundle's config.json; the options override it",
    )
    groups["recipe"] = p.add_argument_group("training recipe", RECIPE)
    exclusive = groups["config"].add_mutually_exclusive_group()
    synonyms: dict[str, list[str]] = {}
    for flag, target in ALIASES.items():
        if isinstance(target, str):
            synonyms.setdefault(target, []).append(flag)
    for path, f in FIELDS.items():
        group: Any = exclusive if path in EXCLUSIVE else groups["recipe" if path in RECIPE_FIELDS else "config"]
        flags = [FLAGS[path], *synonyms.get(path, ())]
        kind, choices = field_type(path)
        shown = f" (default: {_shown_default(f.default)})" if f.default is not None else ""
        help = (f.description or "") + shown
        if kind is bool:  # --flag, --no-flag; an earlier flag sets true
            group.add_argument(FLAGS[path], action=argparse.BooleanOptionalAction, dest=path, help=help)
            for flag in flags[1:]:
                group.add_argument(flag, action="store_const", const=True, dest=path, help=f"as {FLAGS[path]}")
            continue
        metavar = None if choices else FLAGS[path].removeprefix("--").replace("-", "_").upper()
        kind = _value_of(path) if kind in (int, float) else kind  # a number out of range: a usage error
        group.add_argument(*flags, type=kind, choices=choices, metavar=metavar, dest=path, help=help)
    for flag, target in ALIASES.items():
        if not isinstance(target, str):
            path, value = target
            same = f"--no-{FLAGS[path][2:]}" if value is False else f"{FLAGS[path]} {_shown_default(value)}"
            groups["config"].add_argument(flag, action="store_const", const=value, dest=path, help=f"as {same}")


def config_from_args(args: argparse.Namespace, base: TaggerConfig | Mapping | None = None) -> TaggerConfig:
    """The configuration: ``base`` (e.g. a bundle's, or a dictionary as ``TaggerConfig.from_dict`` reads one),
    then --config, then the options given."""
    values = base.dotted() if isinstance(base, TaggerConfig) else given_fields(base or {})
    if args.config:
        if not args.config.is_file():
            raise TaggerError(f"{args.config}: config file not found")
        try:
            loaded = yaml.safe_load(args.config.read_text()) or {}
            for path, value in given_fields(loaded).items():  # each value as its field takes it, named by the file
                if not isinstance(value, Mapping):  # (an empty block gives nothing)
                    values[path] = check_value(path, value)
        except yaml.YAMLError as exc:
            raise TaggerError(f"{args.config}: invalid YAML or JSON ({str(exc).splitlines()[0]})") from None
        except TaggerError as exc:
            raise TaggerError(f"{args.config}: {exc}") from None
    for path in FIELDS:
        value = getattr(args, path, None)
        if value is not None:
            values[path] = value
    if getattr(args, "model.recurrent.hidden", None) is not None:
        values["model.recurrent.budget"] = None
    return TaggerConfig.from_dict(values)
