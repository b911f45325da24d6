import torch
from torch import nn


class Looping(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        while True:
            hidden_states = self.proj(hidden_states)
        return hidden_states


class TensorType(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        if isinstance(hidden_states, torch.LongTensor):
            hidden_states = hidden_states.float()
        return self.proj(hidden_states)


class IsinstanceArity(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        assert isinstance(hidden_states)
        return self.proj(hidden_states)


class ExpandedHead(nn.Module):
    """One key/value head expanded to the query's heads (GPTBigCode's SDPA
    attention) is a broadcast only the attention may read."""

    def __init__(self, config):
        super().__init__()
        self.kv = nn.Linear(config.hidden_size, 32, bias=False)

    def forward(self, hidden_states):
        key, value = self.kv(hidden_states).split((16, 16), dim=-1)
        key = key.unsqueeze(1).expand(-1, 4, -1, -1)
        return key + 1.0


class ExpandedTokens(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.kv = nn.Linear(config.hidden_size, 16, bias=False)

    def forward(self, hidden_states):
        key = self.kv(hidden_states)
        return key.expand(1, -1, 32)


class BadPermute(nn.Module):
    """A permutation with a dimension out of range (PyTorch raises)."""

    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        x = self.proj(hidden_states).view(1, -1, 4, 16)
        return x.permute(0, 2, 1, 7)


class NegTokens(nn.Module):
    """-q_len (a mask slice `[:, :, -q_len:]`): the token count is not a
    number at import (it had been the frontend's own TypeError text)."""

    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        start = -q_len
        return self.proj(hidden_states)[:, start:]
