"""ELMo (Peters et al., 2018) and the biLM behind it: the character encoder, the highway LSTM stack,
the scalar mix, the weight files, and the small biLM pretrained here in place of the published one."""
