"""Data readers and downloaders for the data sets of Dodge et al. (2019)."""
