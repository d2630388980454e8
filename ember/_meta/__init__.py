"""The meta device: tensors with a shape, a dtype and strides, and no data (PyTorch's
`device("meta")`). Its arrays (`array.ndarray`) and array module (`module`) stand where NumPy's
stand for the CPU, so every op body runs on meta unchanged, computing shapes only."""
