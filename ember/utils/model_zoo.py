"""`ember.utils.model_zoo`, torch.utils.model_zoo: the older name of the hub's checkpoint
loader, `load_url` (ember.hub.load_state_dict_from_url: `$TORCH_HOME/hub/checkpoints/`
first, a download otherwise), and the hub's progress bar `tqdm`, which torchvision imports
from here."""
from ..hub import load_state_dict_from_url as load_url, tqdm

__all__ = ["load_url", "tqdm"]
