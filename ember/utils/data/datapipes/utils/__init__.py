"""Helpers of the DataPipes (torch.utils.data.datapipes.utils): the decoders."""
