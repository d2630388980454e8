"""`torch.distributed.elastic.multiprocessing`: the worker processes of a launch. ember's
launcher starts and watches them (ember/distributed/run.py); what a worker and the launcher
share about a failure is in `errors`."""
