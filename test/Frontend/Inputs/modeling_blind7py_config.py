import torch
import torch.nn.functional as F
from torch import nn

from ...activations import ACT2FN

_DEFAULTS = {"eps": 1e-5, "gain": 1.25}


class Counter:
    n = 0


class ConfigBlock(nn.Module):
    scale = 1.0
    tags = ("a",)

    def __init__(self, config, layer_idx=1):
        super().__init__()
        act = getattr(config, "hidden_activation", None) or config.hidden_act
        self.act = ACT2FN[act.lower()]
        h = config.hidden_size if isinstance(config.hidden_size, int) else config.hidden_size[0]
        ratios = getattr(config, "ratios", {"up": 4})
        inter = int(h * ratios["up"])                      # 128
        bias = bool(getattr(config, "mlp_bias", False))    # None -> False
        self.gate = nn.Linear(h, inter, bias=bias) if config.use_gate else None
        self.up = nn.Linear(h, inter, bias=not bias)
        self.down = nn.Linear(inter, h, bias=False)
        scales = config.layer_scales
        self.layer_scale = scales[layer_idx] if isinstance(scales, (list, tuple)) else scales
        self.gain = _DEFAULTS.get("gain", 1.0) * _DEFAULTS.get("missing", 2.0)   # 2.5
        self.scale *= 3.0                                  # instance attr 3.0; class stays 1.0
        self.tags = self.tags + ("b",)                     # instance ("a", "b")
        m1, m2 = config.multipliers
        self.mult = m1 * m2 if any(m > 2 for m in config.multipliers) else 1.0   # 4.5
        self.k = sum(len(t) for t in self.tags) + ConfigBlock.scale              # 2 + 1.0
        self.down_ratio = ratios.get("down", 1.0) if "down" in ratios else 0.0   # 0.5
        self.mode = ("a" + "x" + "b").upper()              # "AXB"

    def forward(self, hidden_states):
        u = self.up(hidden_states)
        if self.gate is not None:
            u = u * self.act(self.gate(hidden_states))
        else:
            u = self.act(u)
        y = self.down(u) * self.layer_scale * self.gain * self.scale
        if self.mode.startswith("AX") and len(self.tags) == 2:
            y = y + hidden_states * self.mult
        return y * self.k * self.down_ratio
