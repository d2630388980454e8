"""`ember.utils`, as `torch.utils`. This package file imports nothing, so the ground-floor
`ember.utils.hooks` loads alone; `import ember` brings `data` and `checkpoint`."""
