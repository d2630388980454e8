"""`torch.distributed.elastic`: how a launched job reports its workers' failures. ember's
launcher (`python -m ember.distributed.run`, torchrun) is its agent: it gives each worker an
error file (TORCHELASTIC_ERROR_FILE), which a worker's `@record`-decorated entry point fills
when it fails, and reports the first failure as a `ChildFailedError`
(`multiprocessing.errors`)."""
