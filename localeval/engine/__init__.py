"""The run engine: scoring a stream of samples."""
