"""`torch.cuda.nccl`: NCCL's collectives across the GPUs of one process, one tensor per
device (CuPy's NCCL bindings): every tensor of `inputs` lives on its own GPU, and the
collective runs on all of them at once. Without NCCL, PyTorch's answers for a build without
it."""
import warnings

from ..device import backend_of, device as _device

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # ncclRedOp_t: sum, prod, max, min, avg
_NCCL_DTYPES = {"int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5,
                "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9, "bool": 1}


def _nccl(function):
    """CuPy's NCCL module (PyTorch's error naming `function` where there is none)."""
    try:
        cp = backend_of(_device("cuda")).xp
        from cupy.cuda import nccl
        if not getattr(cp.cuda, "nccl_enabled", True):
            raise ImportError
    except (ImportError, AssertionError, AttributeError):
        raise AttributeError(f"module 'torch._C' has no attribute '{function}'") from None
    return nccl


def is_available(tensors):
    """Whether NCCL can run a collective on `tensors`: dense, contiguous, CUDA, one per
    device."""
    try:
        _nccl("_nccl_all_reduce")
    except AttributeError:
        warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
        return False
    devices = set()
    for tensor in tensors:
        if tensor.is_sparse or not tensor.is_contiguous() or not tensor.is_cuda:
            return False
        if tensor.get_device() in devices:
            return False
        devices.add(tensor.get_device())
    return True


def version():
    """NCCL's version as (major, minor, patch), and a suffix where it has one."""
    code = _nccl("_nccl_version").get_version()
    major, rest = divmod(code, 10000) if code >= 10000 else divmod(code, 1000)
    minor, patch = divmod(rest, 100)
    return major, minor, patch


def unique_id():
    """A new NCCL id (bytes) for init_rank: rank 0 makes it and sends it to the others.
    (CuPy 14 gives and takes the id as bytes; CuPy 13 and earlier as a tuple of ints.)"""
    uid = _nccl("_nccl_unique_id").get_unique_id()
    return uid if isinstance(uid, bytes) else bytes(b % 256 for b in uid)


def init_rank(num_ranks, uid, rank):
    """This process's communicator, `rank` of `num_ranks`, in the clique of id `uid`."""
    nccl = _nccl("_nccl_init_rank")
    try:
        return nccl.NcclCommunicator(num_ranks, bytes(uid), rank)
    except TypeError:  # CuPy 13 and earlier: the id as a tuple of signed chars
        return nccl.NcclCommunicator(num_ranks, tuple(b if b < 128 else b - 256 for b in uid),
                                     rank)


def _check(tensors, name):
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError(f"{name}: expected a non-empty sequence of tensors")
    devices = [t.get_device() for t in tensors]
    if any(d < 0 for d in devices) or len(set(devices)) != len(devices):
        raise RuntimeError(f"{name}: expected one CUDA tensor per device")
    return devices


def _collective(name, inputs, comms, streams, body):
    """Run `body(comm, index, stream)` for each device's tensor inside one NCCL group."""
    nccl = _nccl(f"_nccl_{name}")
    devices = _check(inputs, name)
    if comms is None:
        comms = nccl.NcclCommunicator.initAll(devices)
    cp = backend_of(_device("cuda")).xp
    nccl.groupStart()
    try:
        for i, device_index in enumerate(devices):
            with cp.cuda.Device(device_index):
                stream = streams[i].cuda_stream if streams else \
                    cp.cuda.get_current_stream().ptr
                body(comms[i], i, stream)
    finally:
        nccl.groupEnd()


def _buffer(tensor):
    return tensor._array.data.ptr, tensor.numel(), _NCCL_DTYPES[tensor.dtype.name]


def all_reduce(inputs, outputs=None, op=SUM, streams=None, comms=None):
    """Every output (each input, in place, by default) gets the reduction of all inputs."""
    outputs = inputs if outputs is None else outputs

    def body(comm, i, stream):
        send, count, dtype = _buffer(inputs[i])
        comm.allReduce(send, _buffer(outputs[i])[0], count, dtype, op, stream)
    _collective("all_reduce", inputs, comms, streams, body)


def reduce(inputs, output=None, root=0, op=SUM, streams=None, comms=None, *, outputs=None):
    """The reduction of all inputs lands in `output` (inputs[root] by default)."""
    if outputs is not None:
        if output is not None:
            raise ValueError("'output' and 'outputs' can not be both specified")
        warnings.warn("`nccl.reduce` with an output tensor list is deprecated. Please specify "
                      "a single output tensor with argument 'output' instead instead.",
                      FutureWarning, stacklevel=2)
        output = outputs[root]
    output = inputs[root] if output is None else output

    def body(comm, i, stream):
        send, count, dtype = _buffer(inputs[i])
        receive = _buffer(output)[0] if i == root else send
        comm.reduce(send, receive, count, dtype, op, root, stream)
    _collective("reduce", inputs, comms, streams, body)


def broadcast(inputs, root=0, streams=None, comms=None):
    """inputs[root] is copied into every other input."""
    def body(comm, i, stream):
        buffer, count, dtype = _buffer(inputs[i])
        comm.bcast(buffer, count, dtype, root, stream)
    _collective("broadcast", inputs, comms, streams, body)


def all_gather(inputs, outputs, streams=None, comms=None):
    """Every output gets all inputs, one after another."""
    def body(comm, i, stream):
        send, count, dtype = _buffer(inputs[i])
        comm.allGather(send, _buffer(outputs[i])[0], count, dtype, stream)
    _collective("all_gather", inputs, comms, streams, body)


def reduce_scatter(inputs, outputs, op=SUM, streams=None, comms=None):
    """The reduction of all inputs, split in len(inputs) parts: part i to outputs[i]."""
    def body(comm, i, stream):
        receive, count, dtype = _buffer(outputs[i])
        comm.reduceScatter(_buffer(inputs[i])[0], receive, count, dtype, op, stream)
    _collective("reduce_scatter", inputs, comms, streams, body)
