"""The machinery under `ember.library` (PyTorch keeps its own in torch._library): schema
inference and parsing, the operator object and its torch.ops view, and opcheck."""
