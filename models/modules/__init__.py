"""Parts shared by the AllenNLP-style model families (docs/models.md)."""
from models.modules.attention import (BilinearSimilarity, TrilinearSimilarity, dot_similarity,
                                      masked_log_softmax, masked_softmax, replace_masked_values,
                                      weighted_sum)
from models.modules.cnn_encoder import CnnEncoder, MaxOverTime, conv_max_relu
from models.modules.feedforward import FeedForward, feedforward_from, get_activation, init_linear_
from models.modules.layers import Highway, Maxout, ScalarMix
from models.modules.lstm import LstmEncoder, VariationalDropout, init_lstm_esim_
from models.modules.pooling import SelfAttentivePooling, masked_max, masked_mean, masked_min

__all__ = [
    "BilinearSimilarity", "CnnEncoder", "FeedForward", "Highway", "LstmEncoder", "MaxOverTime",
    "Maxout", "ScalarMix", "SelfAttentivePooling", "TrilinearSimilarity", "VariationalDropout",
    "conv_max_relu", "dot_similarity", "feedforward_from", "get_activation", "init_linear_",
    "init_lstm_esim_", "masked_log_softmax", "masked_max", "masked_mean", "masked_min",
    "masked_softmax", "replace_masked_values", "weighted_sum",
]
