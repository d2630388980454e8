"""`python -m ember.distributed.launch` (`python -m torch.distributed.launch` under
ember.compat): PyTorch's legacy launcher, which is torchrun (ember/distributed/run.py) with
one more flag. Without `--use-env` (`--use_env`) each worker is also told its local rank as
an argument, `--local-rank=N`, placed before the script's own arguments; with it, only the
LOCAL_RANK variable (which torchrun always sets) tells it. Its `main` warns, as PyTorch's
does, that the module is deprecated in favour of torchrun."""
import functools
import warnings

from .run import end_workers_on_signals, get_args_parser, run

_DEPRECATION = ("The module torch.distributed.launch is deprecated\n"
                "and will be removed in future. Use torchrun.\n"
                "Note that --use-env is set by default in torchrun.\n"
                "If your script expects `--local-rank` argument to be set, please\n"
                "change it to read from `os.environ['LOCAL_RANK']` instead. See \n"
                "https://pytorch.org/docs/stable/distributed.html#launch-utility for \n"
                "further instructions\n")


def parse_args(args):
    parser = get_args_parser()
    parser.add_argument("--use-env", "--use_env", default=False, action="store_true",
                        help="Use environment variable to pass 'local rank'. For legacy "
                             "reasons, the default value is False. If set to True, the script "
                             "will not pass --local-rank as argument, and will instead set "
                             "LOCAL_RANK.")
    return parser.parse_args(args)


def launch(args):
    if args.no_python and not args.use_env:
        raise ValueError("When using the '--no-python' flag, you must also set the "
                         "'--use-env' flag.")
    run(args)


def _deprecated(message):
    def decorate(fn):
        @functools.wraps(fn)
        def warned(*args, **kwargs):
            warnings.warn(message, FutureWarning, stacklevel=2)
            return fn(*args, **kwargs)
        warned.__deprecated__ = message
        return warned
    return decorate


@_deprecated(_DEPRECATION)
def main(args=None):
    end_workers_on_signals()
    args = parse_args(args)
    launch(args)


if __name__ == "__main__":
    main()
