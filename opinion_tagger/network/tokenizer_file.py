"""Reading a wordpiece tokenizer's ``tokenizer.json`` (Hugging Face ``tokenizers``), for every encoder."""

from __future__ import annotations

from pathlib import Path

from opinion_tagger.errors import TaggerError


def read_tokenizer(file: Path, hint: str):
    """A ``tokenizer.json`` in Hugging Face ``tokenizers``, without truncation or padding; a damaged file is
    one line naming it and ``hint`` (how to put it right)."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as exc:  # tokenizers raises its own exception type for a damaged file
        raise TaggerError(f"{file}: cannot read the tokenizer ({str(exc).splitlines()[0]}): {hint}") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer
