"""The runtime: everything tagging needs, and nothing else.

Reading and checking bundles (``bundle``), the vocabulary and GloVe (``vocabulary``, ``word_table``),
sentences into arrays and back (``batching``, ``decoding``), an encoder's wordpieces and its base weights
(``wordpieces``, ``base_weights``), the network in ONNX Runtime (``onnx_network``) behind the ``Network``
protocol (``network``: other back ends are plug-ins), and ``SentenceTagger`` (``sentence_tagger``), which tags
tokenised sentences.  Its libraries: ONNX Runtime, NumPy, tokenizers, safetensors, pyarrow; it never imports
Keras, TensorFlow, JAX or the training stack (``tests/test_layout.py`` checks every import, those inside
functions too)."""
