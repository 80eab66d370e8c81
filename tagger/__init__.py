"""opinion-tagger: deep bidirectional RNN taggers for opinion expressions (DSE, ESE)."""

__version__ = "0.1.0"
