"""From a trained Keras network to a bundle (the ``train`` extra): the ONNX export (``onnx_export``, with the
recurrent layers as ONNX operators, ``onnx_recurrent``, and fused layer norms, ``onnx_fusion``) and writing
bundles (``bundle_writer``)."""
