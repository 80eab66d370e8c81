"""The runtime: everything tagging needs, and nothing else.

Reading and checking bundles (``bundle``), the vocabulary and GloVe (``vocabulary``, ``word_table``),
sentences into arrays and back (``batching``, ``decoding``), BIO tags into spans (``bio``), an encoder's
wordpieces and its base weights (``wordpieces``, ``base_weights``), the network in ONNX Runtime
(``onnx_network``) behind the ``Network`` protocol (``network``: other back ends are plug-ins), and
``SentenceTagger`` (``sentence_tagger``), which tags tokenised sentences.  Its libraries: ONNX Runtime, NumPy,
tokenizers, safetensors, pyarrow; it never imports Keras, TensorFlow, JAX, the training stack or the corpus
readers (the import contracts in ``pyproject.toml``, which ``lint-imports`` checks, those inside functions too)."""
