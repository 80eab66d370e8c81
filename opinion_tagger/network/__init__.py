"""The network and its files: input features (``features``: vocabulary and GloVe
vectors; ``contextual``: MiniLM sub-word vectors; ``mpnet``: the MPNet-base encoder in Keras, its weights
in ``mpnet_package``), the Keras model (``model``,
with the linear-chain ``crf`` output and its NumPy ``decoding``), model bundles on
disk (``bundle``; ``weights``: a network's weights by path, for a LoRA-tuned encoder),
the network exported to ONNX when a bundle is written (``onnx_export``, TensorFlow) and
run by ONNX Runtime when tagging (``onnx_runtime``, no TensorFlow), the encoder's base
weights (``download``) and ``predict.Tagger``, a loaded network that tags tokenised
sentences with either back end.

Nothing is imported here, so that tagging in ONNX Runtime never starts TensorFlow."""
