"""Turning run results into files and text people and tools read."""
