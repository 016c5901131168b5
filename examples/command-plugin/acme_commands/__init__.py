"""Example command for localeval: `localeval sample-count DATA`."""
