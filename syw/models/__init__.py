"""Model families of Dodge et al. (2019) and the trainer they share."""
