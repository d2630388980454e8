"""The modules of `ember.utils.benchmark`, at PyTorch's paths."""
