"""The Keras networks (the ``train`` extra): the recurrent cells' layers and the network (``network``), the
linear-chain CRF layer (``crf``), the MiniLM-L6 and MPNet-base encoders (``minilm``, ``mpnet``), the starting
vocabulary and word vectors (``embeddings``), weights by path (``weights``) and the Keras back end of the
runtime (``keras_backend``)."""
