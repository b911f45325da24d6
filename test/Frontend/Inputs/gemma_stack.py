

# Appended to modeling_gemma.py by test/Frontend/gemma-torch.test (not a
# module on its own): the attention layers of a Gemma-style model in a
# ModuleList, every layer storing its k/v in shared_kv_states, the last
# config.num_kv_shared_layers layers reading those of the layer before them.
class GemmaStyleStack(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList(
            [GemmaStyleAttention(config, layer_idx) for layer_idx in range(config.num_hidden_layers)]
        )

    def forward(self, hidden_states, position_embeddings, attention_mask, shared_kv_states: dict):
        for layer in self.layers:
            attn_output, _ = layer(hidden_states, position_embeddings, attention_mask, shared_kv_states)
            hidden_states = hidden_states + attn_output
        return hidden_states
