"""Back ends of the runtime that need more than the core: each an entry point of ``opinion_tagger.backends``
(``opinion_tagger.runtime.network``), loaded only when asked for, with an extra of its own.  ``openvino``
(``openvino_backend``, the ``bf16`` extra): ``--precision bf16``.  (``keras``, the trained Keras network, is in
``opinion_tagger.model.keras_backend``, with the networks it loads.)"""
