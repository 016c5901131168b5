"""The pairwise A/B judge: which of two answers is better."""
