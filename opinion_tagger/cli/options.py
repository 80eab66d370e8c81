"""The configuration options of ``opinion-tagger train``, made from ``TaggerConfig``'s field metadata
(``opinion_tagger.config``): one option per leaf field, named by its flat name, its help and default from
there; and the configuration that a command line describes."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from opinion_tagger.config import LEAVES, TaggerConfig
from opinion_tagger.errors import TaggerError

RECIPE = (
    "the authors' released trainer (oir/deep-recurrent) uses "
    "--trainer fast --optimizer sgd --momentum 0.7 --lr 0.001 --lr-decay 0.999 --batch-size 80 "
    "--loss-sum --o-weight 0.5 --output-lr-scale 0.1 --l2 1e-4 --activation-l2 1e-4 "
    "--init uniform --clipnorm 0 --dropout 0 --input-dropout 0 --eval-every 5"
)


def add_config_options(p: argparse.ArgumentParser) -> None:
    """One option per leaf field of TaggerConfig (default None: a field not given keeps the value of the
    configuration file or bundle underneath), with the field's default in its help."""
    groups = {"config": p.add_argument_group("model and training configuration")}
    groups["config"].add_argument(
        "--config", type=Path, help="JSON or YAML file with configuration values (options override it)"
    )
    groups["recipe"] = p.add_argument_group("training recipe", RECIPE)
    for name, (_, f) in LEAVES.items():
        meta = f.metadata
        group = groups["recipe" if meta["recipe"] else "config"]
        if "exclusive" in meta:
            key = "exclusive:" + meta["exclusive"]
            group = groups[key] = groups.get(key) or group.add_mutually_exclusive_group()
        flag = meta.get("flag", "--" + name.replace("_", "-"))
        if "const" in meta:  # a flag without a value
            group.add_argument(flag, action="store_const", const=meta["const"], dest=name, help=meta["help"])
            continue
        kind = meta.get("type", type(f.default) if f.default is not None else str)
        shown = f"(default: {f.default})" if f.default is not None else ""
        extra = {k: meta[k] for k in ("choices", "metavar") if k in meta}
        group.add_argument(flag, type=kind, dest=name, help=" ".join(filter(None, (meta["help"], shown))), **extra)


def config_from_args(args, base: TaggerConfig | dict | None = None) -> TaggerConfig:
    """The configuration: ``base`` (e.g. a bundle's; or flat names), then --config (flat names, or a
    configuration's nested form), then the options given."""
    try:
        values = dict(base) if isinstance(base, dict) else base.flat() if base is not None else {}
        if args.config:
            if not args.config.is_file():
                raise TaggerError(f"{args.config}: config file not found")
            loaded = yaml.safe_load(args.config.read_text()) or {}
            loaded = loaded.get("model", loaded) if "version" not in loaded else loaded
            values.update(TaggerConfig.from_dict(loaded).flat() if "version" in loaded else loaded)
        for name in LEAVES:
            v = getattr(args, name, None)
            if v is not None:
                values[name] = v
        if getattr(args, "hidden", None) is not None:
            values["budget"] = None
        return TaggerConfig.from_flat(values)
    except (ValueError, TypeError) as exc:
        raise TaggerError(str(exc)) from None
