# Module-level statements after a name's first assignment (found by the
# third blind test): Python runs them all at import; the import of the file
# saw only the name's plain constant assignment (2.0) and used it with no
# error where PyTorch's value is another.
import torch
from torch import nn

AUG = 2.0
AUG *= 3.0  # 6.0
REBOUND = 2.0
REBOUND = REBOUND + 5.0  # 7.0
IN_IF = 2.0
if True:
    IN_IF = 11.0
ITEMS = [2.0]
ITEMS.append(7.0)  # ITEMS[-1] 7.0
TABLE = {"a": 2.0}
TABLE["a"] = 13.0


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)


class AugAssignBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * AUG


class ReboundBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * REBOUND


class InIfBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * IN_IF


class AppendBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * ITEMS[-1]


class ItemAssignBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * TABLE["a"]


class ClassAttrBlock(Base):
    k = 2.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


ClassAttrBlock.k = 9.0

# More forms, run in order as Python runs them (module-level-torch.test).
if AUG > 100.0:
    ELSE = 2.0
elif AUG > 5.0:  # AUG is 6.0 here
    ELSE = 5.0
else:
    ELSE = 3.0
PAIR, (_, *REST) = 2.0, (1.0, 4.0, 8.0)  # REST is [4.0, 8.0]
OPS = {"a": [2.0]}
OPS["a"].extend([3.0, 4.0])
OPS.update(b=OPS["a"].pop())  # b 4.0, a [2.0, 3.0]
del OPS["a"][0]  # a [3.0]
LOOP = 1.0
for i in range(1, 4):
    LOOP += i
    if i == 2:
        break  # LOOP is 4.0
KEY = f"x{len(OPS)}"  # "x2"
NAMES = {KEY: LOOP * 2}


class ElseBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * ELSE  # 5.0


class UnpackBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * (REST[1] - PAIR)  # 6.0


class ContainerOpsBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * (OPS["b"] + OPS["a"][0])  # 7.0


class LoopBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * NAMES["x2"]  # 8.0


class SetattrBlock(Base):
    k = 2.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


setattr(SetattrBlock, "k", SetattrBlock.k * 5.0)  # 10.0
