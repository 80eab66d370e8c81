"""The network and its files: input features (``features``: vocabulary and GloVe
vectors; ``contextual``: MiniLM sub-word vectors), the Keras model (``model``,
with the linear-chain ``crf`` output and its NumPy ``decoding``), model bundles on
disk (``bundle``), the exact NumPy forward pass (``runtime``) and ``predict.Tagger``,
a loaded network that tags tokenised sentences with either back end.

Nothing is imported here, so that tagging with the NumPy back end never starts TensorFlow."""
