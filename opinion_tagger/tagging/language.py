"""The language check: a tagged document whose text is not English gets a warning, never a silent answer.

The bundled models are trained on English news (MPQA 2.0): on German they find nothing, on Spanish they find
spans that mean nothing.  ``detect`` says which language a document looks like when it is not English, from its
tokens (for HTML, the words a browser shows), and ``check`` puts that on the document (``language``,
``warning``).  It warns only when it is sure:

- a text of fewer than ``MIN_LETTERS`` letters (a few words) is never judged: on so little the guess is noise;
- a text at least ``ENGLISH_SHARE`` of whose words are common English function words (*the*, *of*, *and*,
  *which*, ...; none of them a frequent word of another language written in the Latin alphabet) is English
  without asking the detector.  Every MPQA document passes so (the lowest share is 0.14, the median 0.32);
  the example sentences of spaCy's other languages have less than 0.07 a language, a short Danish or
  Norwegian sentence up to 0.10;
- the rest goes to the detector, `py3langid <https://github.com/adbar/py3langid>`_ (langid.py's naive Bayes
  over byte n-grams, its model in the package: nothing to download; deterministic; NumPy only), which warns
  when it names another language than English with a probability of at least ``MIN_CONFIDENCE``.

Only the first ``SAMPLE_TOKENS`` tokens are read, so the check costs the same on any length of text (a small
share of tagging's time: docs/tagging.md); the detector's model is loaded when a text first reaches it, so
English input never pays for it.  Each of the
10,254 sentences of 40 letters or more of the 535 MPQA documents, taken as a text of its own, passes without
a warning; of the example sentences of spaCy's languages long enough to judge, it warned on 77 of 106 in the
32 languages written in the Latin alphabet and on 30 of 35 in the others (a sentence of Chinese or Japanese
often has fewer than ``MIN_LETTERS`` characters, and is not judged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from opinion_tagger.errors import TaggerError
from opinion_tagger.wording import counted

if TYPE_CHECKING:
    from opinion_tagger.tagging.documents import TaggedDocument

MIN_LETTERS = 40  # letters in a text's words, at least, before it is judged (about eight words)
ENGLISH_SHARE = 0.12  # a text with this share of ENGLISH_WORDS among its words is English
MIN_CONFIDENCE = 0.9  # the detector's probability of another language, at least, for a warning
SAMPLE_TOKENS = 300  # the tokens read of a text, at most

# frequent English function words that are not frequent words of another language in the Latin alphabet (no
# "a", "i", "in", "is", "was", "an", "on", "at", "do", "me", "no", "so")
ENGLISH_WORDS = frozenset(
    "the of and to that for it with as be by this are from or not but which have has had were been will would "
    "they their his her she you there what who its our them said also about more than when can if one these "
    "those into could should after because other just very some only out up does did my your we him how then".split()
)

# the detector's languages by their ISO 639 codes
NAMES = {
    "af": "Afrikaans", "am": "Amharic", "an": "Aragonese", "ar": "Arabic", "ary": "Moroccan Arabic",
    "arz": "Egyptian Arabic", "as": "Assamese", "ace": "Acehnese", "az": "Azerbaijani", "ba": "Bashkir",
    "bcl": "Central Bikol", "be": "Belarusian", "bg": "Bulgarian", "bn": "Bengali", "br": "Breton",
    "bs": "Bosnian", "ca": "Catalan", "crh": "Crimean Tatar", "cs": "Czech", "cy": "Welsh", "da": "Danish",
    "de": "German", "dz": "Dzongkha", "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish",
    "et": "Estonian", "eu": "Basque", "ext": "Extremaduran", "fa": "Persian", "fi": "Finnish", "fo": "Faroese",
    "fr": "French", "fuv": "Nigerian Fulfulde", "fy": "Frisian", "ga": "Irish", "gcf": "Guadeloupean Creole",
    "gcr": "Guianese Creole", "gd": "Scottish Gaelic", "gl": "Galician", "gom": "Konkani", "grc": "Ancient Greek",
    "gu": "Gujarati", "gug": "Guarani", "guw": "Gun", "ha": "Hausa", "hbo": "Ancient Hebrew", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "ht": "Haitian Creole", "hu": "Hungarian", "hy": "Armenian",
    "id": "Indonesian", "ig": "Igbo", "is": "Icelandic", "it": "Italian", "ja": "Japanese", "jv": "Javanese",
    "ka": "Georgian", "kab": "Kabyle", "kik": "Kikuyu", "kk": "Kazakh", "km": "Khmer", "kn": "Kannada",
    "ko": "Korean", "ku": "Kurdish", "ky": "Kyrgyz", "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda",
    "lij": "Ligurian", "ln": "Lingala", "lo": "Lao", "lt": "Lithuanian", "ltg": "Latgalian", "lv": "Latvian",
    "mg": "Malagasy", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi", "ms": "Malay",
    "mt": "Maltese", "my": "Burmese", "ne": "Nepali", "nl": "Dutch", "nn": "Norwegian Nynorsk", "no": "Norwegian",
    "nso": "Northern Sotho", "oc": "Occitan", "om": "Oromo", "or": "Odia", "pa": "Punjabi",
    "pcm": "Nigerian Pidgin", "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "qu": "Quechua",
    "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda", "sa": "Sanskrit", "sdh": "Southern Kurdish",
    "se": "Northern Sami", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "sn": "Shona", "so": "Somali",
    "sq": "Albanian", "sr": "Serbian", "st": "Southern Sotho", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil",
    "te": "Telugu", "tg": "Tajik", "th": "Thai", "tk": "Turkmen", "tl": "Tagalog", "tr": "Turkish", "tt": "Tatar",
    "ug": "Uyghur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "uzs": "Southern Uzbek", "vec": "Venetian",
    "vi": "Vietnamese", "vo": "Volapük", "wa": "Walloon", "wuu": "Wu Chinese", "xh": "Xhosa", "yo": "Yoruba",
    "yue": "Cantonese", "zh": "Chinese", "zu": "Zulu",
}  # fmt: skip
NOT_A_LANGUAGE = "zxx"  # the detector's code for text without linguistic content (numbers, code)


@dataclass(frozen=True)
class Language:
    """A language a text looks like: its ISO 639 code, its English name and the detector's probability."""

    code: str
    name: str
    confidence: float


def language_name(code: str) -> str:
    """``German`` for ``de``; a code the table lacks stands for itself."""
    return NAMES.get(code, code)


def warning_text(language: Language) -> str:
    """The warning a document of ``language`` carries."""
    return (
        f"the text looks like {language.name} ({language.code}), not English: the models are trained on English, "
        "so the spans may be missing or wrong"
    )


@lru_cache(maxsize=1)
def _identifier() -> Any:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise TaggerError(
            "the language check needs py3langid (pip install py3langid); or turn it off: --lang-check off, "
            "OpinionTagger.load(lang_check=False)"
        ) from None
    try:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    except Exception as exc:  # a damaged installation: one line, not a traceback
        raise TaggerError(
            f"the language check cannot load py3langid's model ({type(exc).__name__}: {str(exc)[:200]}); reinstall "
            "py3langid, or turn the check off: --lang-check off"
        ) from None


def detect(tokens: Sequence[str]) -> Language | None:
    """The language a text looks like when it is not English and the check is sure (see the module), else None.
    ``tokens``: the text's tokens in order (only the first ``SAMPLE_TOKENS`` are read)."""
    sample = tokens[:SAMPLE_TOKENS]
    words = [t.lower() for t in sample if t.isalpha()]
    if sum(map(len, words)) < MIN_LETTERS:
        return None
    if sum(w in ENGLISH_WORDS for w in words) >= ENGLISH_SHARE * len(words):
        return None
    code, confidence = _identifier().classify(" ".join(sample))
    if code in ("en", NOT_A_LANGUAGE) or confidence < MIN_CONFIDENCE:
        return None
    return Language(code, language_name(code), round(float(confidence), 4))


def check(doc: TaggedDocument) -> TaggedDocument:
    """``doc`` with ``language`` and ``warning`` set when its text is not English (``detect``); a document that
    was not tagged (``error`` set) is left as it is."""
    if doc.error is not None:
        return doc
    tokens: list[str] = []
    for sentence in doc.sentences:
        tokens.extend(t.text for t in sentence.tokens)
        if len(tokens) >= SAMPLE_TOKENS:
            break
    found = detect(tokens)
    if found is not None:
        doc.language, doc.warning = found.code, warning_text(found)
    return doc


def summary_line(counts: dict[str, int]) -> str | None:
    """One line for standard error on the records that look like other languages (``counts``: records by
    language code), most first: ``3 records look like German (de), 1 like Spanish (es); ...``; None for none."""
    if not any(counts.values()):
        return None
    ranked = sorted(((n, code) for code, n in counts.items() if n), key=lambda x: (-x[0], x[1]))
    (n, code), rest = ranked[0], ranked[1:]
    first = f"{counted(n, 'record')} {'looks' if n == 1 else 'look'} like {language_name(code)} ({code})"
    line = ", ".join([first, *(f"{m} like {language_name(c)} ({c})" for m, c in rest)])
    return f"{line}; the models are trained on English, so their spans may be missing or wrong"
