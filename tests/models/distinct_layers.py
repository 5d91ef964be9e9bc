"""nn.TransformerEncoder(layer, N) deep-copies one layer, so all N start with the same
weights, and torch.onnx.export stores identical initializers once: the exported model holds
one layer's weights (1/N of a real model's), which stay in cache and flatter every timing.
distinct_layers() gives each layer its own random weights, as a trained model has."""


def distinct_layers(torch, encoder):
    for layer in encoder.layers:
        for module in layer.modules():
            reset = getattr(module, "_reset_parameters", None) or getattr(module, "reset_parameters", None)
            if reset is not None and module is not layer:
                reset()
        with torch.no_grad():  # LayerNorm resets to ones and zeros: those would stay shared
            for norm in (layer.norm1, layer.norm2):
                norm.weight.normal_(1.0, 0.02)
                norm.bias.normal_(0.0, 0.02)
    return encoder
