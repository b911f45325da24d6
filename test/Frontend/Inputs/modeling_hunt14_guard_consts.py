import torch
from torch import nn


class GuardConstsBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.q_proj = nn.Linear(config.hidden_size, 16, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, 16, bias=False) if config.use_k else None
        self.v_proj = nn.Linear(config.hidden_size, 16, bias=False) if config.use_v else None
        self.w_proj = nn.Linear(config.hidden_size, 16, bias=True)

    def forward(self, hidden_states):
        q = self.q_proj(hidden_states)
        # k_proj is None and the flag false: Python never calls it
        if self.k_proj is not None and self.config.flag_b:
            k = self.k_proj(hidden_states)
        else:
            k = q * 2.0
        # a guard `and` True: the guard decides
        if self.v_proj is not None and self.config.flag_a:
            v = self.v_proj(hidden_states)
        else:
            v = q * 0.5
        # `not` of a guard, `or` False
        w = self.w_proj(hidden_states) if not self.w_proj is None or self.config.flag_b else q
        return q + k + v + w
