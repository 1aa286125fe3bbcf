"""Parts shared by the AllenNLP-style model families (docs/models.md)."""
from syw.models.modules.attention import (
                                      BilinearSimilarity,
                                      TrilinearSimilarity,
                                      dot_similarity,
                                      masked_log_softmax,
                                      masked_softmax,
                                      replace_masked_values,
                                      weighted_sum,
)
from syw.models.modules.cnn_encoder import CnnEncoder, MaxOverTime, conv_max_relu
from syw.models.modules.feedforward import FeedForward, feedforward_from, get_activation, init_linear_
from syw.models.modules.layers import Highway, Maxout, ScalarMix
from syw.models.modules.lstm import LstmEncoder, VariationalDropout, init_lstm_esim_
from syw.models.modules.pooling import SelfAttentivePooling, masked_max, masked_mean, masked_min

__all__ = [
    "BilinearSimilarity", "CnnEncoder", "FeedForward", "Highway", "LstmEncoder", "MaxOverTime",
    "Maxout", "ScalarMix", "SelfAttentivePooling", "TrilinearSimilarity", "VariationalDropout",
    "conv_max_relu", "dot_similarity", "feedforward_from", "get_activation", "init_linear_",
    "init_lstm_esim_", "masked_log_softmax", "masked_max", "masked_mean", "masked_min",
    "masked_softmax", "replace_masked_values", "weighted_sum",
]
