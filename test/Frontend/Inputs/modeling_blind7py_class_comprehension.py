import torch
from torch import nn

SCALE = 2.0


class ClassCompBlock(nn.Module):
    SCALE = 3.0
    # A comprehension in a class body does not see the class's names (its
    # body runs in a function scope that skips the class): Python reads the
    # module's SCALE here, ks == [2.0].
    ks = [SCALE for _ in range(1)]
    # Its first iterable is evaluated in the class body: the class's HALVES.
    HALVES = (0.5,)
    ms = [h for h in HALVES]

    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.proj(hidden_states) * self.ks[0] * self.ms[0]
