# An attribute of a dict of config.json (found by the second blind test):
# Python raises AttributeError ('dict' object has no attribute 'skip'); HF's
# config classes that turn such dicts into objects (DeciLM's block_configs)
# would read False. The frontend must not choose a branch.
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.skip = config.block_configs[0].skip
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        if self.skip:
            return hidden_states
        return self.up(hidden_states)
