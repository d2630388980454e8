"""A process Pool whose task queues are `queue.SimpleQueue`s (items pickle with the tensor
reductions) and whose workers collect garbage after their last task, so the destructors of
what they held run."""
import gc
import multiprocessing.pool
import multiprocessing.util

from .queue import SimpleQueue

__all__ = ["Pool", "clean_worker"]


def clean_worker(*args, **kwargs):
    multiprocessing.pool.worker(*args, **kwargs)
    gc.collect()


class Pool(multiprocessing.pool.Pool):
    def _setup_queues(self):
        self._inqueue = SimpleQueue()
        self._outqueue = SimpleQueue()
        self._quick_put = self._inqueue._writer.send
        self._quick_get = self._outqueue._reader.recv

    def _repopulate_pool(self):
        return self._repopulate_pool_static(self._ctx, self.Process, self._processes,
                                            self._pool, self._inqueue, self._outqueue,
                                            self._initializer, self._initargs,
                                            self._maxtasksperchild, self._wrap_exception)

    @staticmethod
    def _repopulate_pool_static(ctx, Process, processes, pool, inqueue, outqueue, initializer,
                                initargs, maxtasksperchild, wrap_exception):
        """multiprocessing's own, with `clean_worker` as each worker's target."""
        for _ in range(processes - len(pool)):
            w = Process(ctx, target=clean_worker,
                        args=(inqueue, outqueue, initializer, initargs, maxtasksperchild,
                              wrap_exception))
            w.name = w.name.replace("Process", "PoolWorker")
            w.daemon = True
            w.start()
            pool.append(w)
            multiprocessing.util.debug("added worker")
