"""MPNet-base's weights for a GPU machine without internet access, rounded to bfloat16 to travel at a third of
their size (see README.md here).

    python -m experiments.device.mpnet_weights pack [--out .dev] [--first MB] [--part MB]   # here
    python -m experiments.device.mpnet_weights unpack TAR                                  # there
    python -m experiments.device.mpnet_weights run-cv ARG...                               # there

``pack`` reads the assembled encoder (``opinion-tagger download --encoder mpnet``) and writes
``--out/mpnet.partN``: one tar, cut into parts for a copy that limits file sizes (the first smaller, to go
beside the wheels and the corpus).  The float32 model is 438 MB, so every matrix (two or more dimensions: the
embeddings and every kernel, 99.9% of the numbers) travels rounded to bfloat16
(round to nearest even), its low and high bytes apart and the high bytes compressed; biases, LayerNorm's
scales and the integer buffers travel exactly.

Rounding is what ``precision: mixed_bfloat16`` does to these matrices anyway: Keras's mixed policy casts each
float32 variable to bfloat16 for the layer's products (and an embedding row when it is read), and rounding
twice to bfloat16 gives the once-rounded value.  So a bfloat16 run (``accurate-mpnet-bf16.yaml``) trains
from the same products on the GPU machine as here; only a float32 computation (the bundle written at the end,
and the test scores measured with it) sees the rounded matrices instead of the original ones.  The run's results
say so: the bundle's ``base_weights`` sha256 is the rebuilt file's, not the pinned one.

``unpack`` (on the GPU machine) rebuilds the float32 ``model.safetensors`` beside the exact ``tokenizer.json``,
``vocab.txt`` and ``config.json`` in ``opinion_tagger.runtime.base_weights.cache_dir()``
($OPINION_TAGGER_CACHE/all-mpnet-base-v2-0.0.1/), checks every tensor against the sha256 ``pack`` computed
from the same rebuilding here, and writes the rebuilt file's sha256 beside it (``model.safetensors.sha256``).
``run-cv`` runs ``python -m experiments.run_cv`` with that sha256 in place of the pinned one, which the rebuilt
file cannot match; ``tokenizer.json`` is still checked against its pin.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import runpy
import sys
import tarfile
from pathlib import Path

import ml_dtypes
import numpy as np

TEXT_FILES = ("config.json", "vocab.txt", "tokenizer.json")
SHA_FILE = "model.safetensors.sha256"


def split_tensors(tensors: dict[str, np.ndarray]) -> tuple[list[str], dict[str, np.ndarray]]:
    """The names of the float32 matrices that travel rounded, and the tensors that travel exactly."""
    rounded = sorted(k for k, v in tensors.items() if v.ndim >= 2 and v.dtype == np.float32)
    return rounded, {k: v for k, v in tensors.items() if k not in rounded}


def planes(tensors: dict[str, np.ndarray], names: list[str]) -> tuple[bytes, bytes]:
    """The bfloat16 roundings of ``names``, concatenated: their low bytes and their high bytes."""
    bits = np.concatenate([tensors[k].astype(ml_dtypes.bfloat16).view(np.uint16).ravel() for k in names])
    as_bytes = bits.view(np.uint8).reshape(-1, 2)  # little-endian: [low, high]
    return as_bytes[:, 0].tobytes(), as_bytes[:, 1].tobytes()


def rebuild(index: dict, low: bytes, high: bytes, exact: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float32 tensors: the rounded matrices widened back, and the exact ones."""
    bits = np.empty((len(low), 2), dtype=np.uint8)
    bits[:, 0] = np.frombuffer(low, dtype=np.uint8)
    bits[:, 1] = np.frombuffer(high, dtype=np.uint8)
    flat = bits.reshape(-1).view(np.uint16).view(ml_dtypes.bfloat16)
    out, at = dict(exact), 0
    for name, shape in index["rounded"]:
        n = int(np.prod(shape))
        out[name] = flat[at : at + n].astype(np.float32).reshape(shape)
        at += n
    if at != len(flat):
        raise SystemExit(f"mpnet_weights: {len(flat) - at} numbers left over after the last matrix")
    return out


def content_sha256(tensors: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        v = np.ascontiguousarray(tensors[name])
        h.update(f"{name}:{v.dtype}:{list(v.shape)}\n".encode())
        h.update(v.tobytes())
    return h.hexdigest()


def pack(out: Path, first_mb: float, part_mb: float) -> None:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save

    from opinion_tagger.encoders import MPNET
    from opinion_tagger.runtime.base_weights import locate

    src = locate(MPNET)  # checked against the pinned sha256
    tensors = load_file(src / "model.safetensors")
    with safe_open(src / "model.safetensors", framework="numpy") as f:
        metadata = f.metadata()
    names, exact = split_tensors(tensors)
    low, high = planes(tensors, names)
    index = {"rounded": [[k, list(tensors[k].shape)] for k in names], "metadata": metadata}
    index["content_sha256"] = content_sha256(rebuild(index, low, high, exact))
    members = {
        "index.json": json.dumps(index).encode(),
        "exact.safetensors": save(exact),
        "low.bin": low,
        "high.xz": lzma.compress(high, preset=6),
        **{name: (src / name).read_bytes() for name in TEXT_FILES},
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("mpnet.part*"):
        old.unlink()
    cuts = [0, int(first_mb * 2**20)]
    while cuts[-1] < len(data):
        cuts.append(cuts[-1] + int(part_mb * 2**20))
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        (out / f"mpnet.part{k}").write_bytes(data[a:b])
    print(f"{out}/mpnet.part0..{len(cuts) - 2}: {len(data) / 2**20:.1f} MiB ({len(names)} matrices rounded)")


def unpack(path: Path) -> None:
    from safetensors.numpy import load, save_file

    from opinion_tagger.encoders import MPNET
    from opinion_tagger.runtime.base_weights import cache_dir
    from opinion_tagger.storage import sha256_file

    with tarfile.open(path) as tar:
        read = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    index = json.loads(read["index.json"])
    tensors = rebuild(index, read["low.bin"], lzma.decompress(read["high.xz"]), load(read["exact.safetensors"]))
    if content_sha256(tensors) != index["content_sha256"]:
        raise SystemExit(f"mpnet_weights: {path}: the rebuilt tensors differ from those packed")
    dest = cache_dir(MPNET)
    dest.mkdir(parents=True, exist_ok=True)
    for name in TEXT_FILES:
        (dest / name).write_bytes(read[name])
    save_file(tensors, dest / "model.safetensors", metadata=index["metadata"])
    digest = sha256_file(dest / "model.safetensors")
    (dest / SHA_FILE).write_text(digest + "\n")
    print(f"mpnet_weights: {dest}/model.safetensors rebuilt, tensors checked; sha256 {digest}")


def pin_rebuilt() -> None:
    """Put the rebuilt ``model.safetensors``'s sha256 (written by ``unpack``) in place of the pinned one in the
    encoder registry, before anything reads the registry's MPNet entry."""
    import dataclasses

    import opinion_tagger.encoders as registry
    from opinion_tagger.runtime.base_weights import cache_dir

    enc = registry.ENCODERS["mpnet"]
    rebuilt = (cache_dir(enc) / SHA_FILE).read_text().strip()
    pinned = tuple((f, rebuilt if f == "model.safetensors" else h) for f, h in enc.weights.pinned)
    enc = dataclasses.replace(enc, weights=dataclasses.replace(enc.weights, pinned=pinned))
    registry.ENCODERS["mpnet"] = registry.MPNET = enc


def run_cv(argv: list[str]) -> None:
    pin_rebuilt()
    sys.argv = ["experiments.run_cv", *argv]
    runpy.run_module("experiments.run_cv", run_name="__main__", alter_sys=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--out", default=".dev")
    p.add_argument("--first", type=float, default=40.0, help="MiB in the first part (default: %(default)s)")
    p.add_argument("--part", type=float, default=56.0, help="MiB in each further part (default: %(default)s)")
    u = sub.add_parser("unpack")
    u.add_argument("tar")
    r = sub.add_parser("run-cv")
    r.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.command == "pack":
        pack(Path(args.out), args.first, args.part)
    elif args.command == "unpack":
        unpack(Path(args.tar))
    else:
        run_cv(args.args)


if __name__ == "__main__":
    main()
