"""`torch.nn.parallel.replicate`: copies of a module, one per device, for data parallelism.
Each replica is a shallow copy of every submodule whose parameters and buffers are the
broadcast copies on its device. Without `detach` those copies stay in the autograd graph of
the originals (they are not Parameters), so a loss on any replica sends gradients back to the
original parameters, as PyTorch's replicas do."""
from . import comm

__all__ = ["replicate"]


def _broadcast(tensors, devices, detach):
    """Per device, copies of `tensors` there: differentiable unless `detach`."""
    if not tensors:
        return []
    if detach:
        return [list(copies) for copies in comm.broadcast_coalesced(tensors, devices)]
    # on the tensors' own device a view stands in for the copy: a graph node, not the leaf
    return [[t.view_as(t) if t.get_device() == d else t.to(comm._target(d)) for t in tensors]
            for d in devices]


def replicate(network, devices, detach=False):
    """One replica of `network` per device of `devices`."""
    if not devices:
        return []
    devices = [comm._get_device_index(x, True) for x in devices]
    params = list(network.parameters())
    param_index = {id(p): i for i, p in enumerate(params)}
    param_copies = _broadcast(params, devices, detach)
    buffers = list(network.buffers())
    # buffers that require grad are followed by autograd as parameters are; the rest never
    graph_buffers = [b for b in buffers if b.requires_grad and not detach]
    plain_buffers = [b for b in buffers if not (b.requires_grad and not detach)]
    buffer_place = {id(b): (0, i) for i, b in enumerate(graph_buffers)}
    buffer_place.update({id(b): (1, i) for i, b in enumerate(plain_buffers)})
    buffer_copies = (_broadcast(graph_buffers, devices, detach),
                     _broadcast(plain_buffers, devices, True))
    modules = list(network.modules())
    module_index = {id(m): i for i, m in enumerate(modules)}
    copies = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    for j in range(len(devices)):
        for i, module in enumerate(modules):
            replica = copies[j][i]
            replica._former_parameters = {}
            for key, child in module._modules.items():
                if child is None:
                    replica._modules[key] = None
                else:
                    setattr(replica, key, copies[j][module_index[id(child)]])
            for key, param in module._parameters.items():
                if param is None:
                    replica._parameters[key] = None
                else:
                    copy = param_copies[j][param_index[id(param)]]
                    setattr(replica, key, copy)
                    replica._former_parameters[key] = copy
            for key, buf in module._buffers.items():
                if buf is None:
                    replica._buffers[key] = None
                else:
                    group, idx = buffer_place[id(buf)]
                    setattr(replica, key, buffer_copies[group][j][idx])
    return [copies[j][0] for j in range(len(devices))]
