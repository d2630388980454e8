"""Records PyTorch's outcome for every entry of the wrong-call table into expected.json:
`python -m tests.wrong_calls.record` (needs torch). Rerun it when entries are added."""
import json
import os

from .cases import CASES, outcome

PATH = os.path.join(os.path.dirname(__file__), "expected.json")


def main():
    import torch
    torch.manual_seed(0)
    expected = {name: outcome(call, torch) for name, call in CASES}
    with open(PATH, "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(expected)} cases recorded in {PATH}")


if __name__ == "__main__":
    main()
