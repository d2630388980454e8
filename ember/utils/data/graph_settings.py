"""Settings applied across a DataPipe graph (torch.utils.data.graph_settings): sharding, shuffle
on/off, and per-epoch shuffle seeds, as the DataLoader applies them."""
import warnings

from .datapipes.iter.sharding import SHARDING_PRIORITIES, _ShardingIterDataPipe
from .graph import traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed",
           "apply_shuffle_settings", "get_all_graph_pipes"]


def get_all_graph_pipes(graph):
    found, seen = [], set()

    def walk(graph):
        for key, (datapipe, children) in graph.items():
            if key not in seen:
                seen.add(key)
                found.append(datapipe)
                walk(children)
    walk(graph)
    return found


def _is_sharding_datapipe(datapipe):
    return isinstance(datapipe, _ShardingIterDataPipe) or (
        hasattr(datapipe, "apply_sharding") and callable(datapipe.apply_sharding))


def apply_sharding(datapipe, num_of_instances, instance_id,
                   sharding_group=SHARDING_PRIORITIES.DEFAULT):
    """Shards at every sharding DataPipe; one behind another would lose data, so refused."""
    def walk(graph, prev_applied=None):
        for _, (dp, children) in graph.items():
            applied = None
            if _is_sharding_datapipe(dp):
                if prev_applied is not None:
                    raise RuntimeError("Sharding twice on a single pipeline is likely unintended "
                                       "and will cause data loss. Sharding already applied to "
                                       f"{prev_applied} while trying to apply to {dp}")
                try:
                    dp.apply_sharding(num_of_instances, instance_id,
                                      sharding_group=sharding_group)
                except TypeError:  # older DataPipes without sharding groups
                    dp.apply_sharding(num_of_instances, instance_id)
                applied = dp
            walk(children, applied if applied is not None else prev_applied)
    walk(traverse_dps(datapipe))
    return datapipe


def _is_shuffle_datapipe(datapipe):
    return all(hasattr(datapipe, name) and callable(getattr(datapipe, name))
               for name in ("set_shuffle", "set_seed"))


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turns every shuffle DataPipe on or off; with shuffle=True and none in the graph, a
    Shuffler is appended."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(traverse_dps(datapipe))
                 if _is_shuffle_datapipe(dp)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.")
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the "
                  "future releases.\nPlease use `apply_random_seed` instead.")
    return apply_random_seed(datapipe, rng)


def apply_random_seed(datapipe, rng):
    """Seeds every shuffle DataPipe from `rng` (an ember Generator), the same in every worker
    so that they shard one shuffled order."""
    from ... import dtypes
    from ...ops.creation import empty
    seen = set()
    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if id(dp) in seen:
            continue
        seen.add(id(dp))
        if _is_shuffle_datapipe(dp):
            dp.set_seed(int(empty((), dtype=dtypes.int64).random_(generator=rng).item()))
    return datapipe
