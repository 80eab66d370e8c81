"""The Keras networks (the ``train`` extra): the recurrent cells' layers and the network (``network``), the
linear-chain CRF layer (``crf``), the MiniLM-L6 and MPNet-base encoders (``minilm``, ``mpnet``), the starting
vocabulary and word vectors (``embeddings``), weights by path (``weights``) and the Keras back end of the
runtime (``keras_backend``).

Importing this package gives Keras its back end (TensorFlow) and TensorFlow its C++ log level (3: fatal errors only)
where the environment sets neither: it is imported before any of its modules imports Keras, which reads
``KERAS_BACKEND`` once.  Importing ``opinion_tagger`` itself sets nothing."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
