"""`torch.distributed._composable`: the APIs applied to a module in place (FSDP2)."""
