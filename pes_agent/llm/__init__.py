"""Model providers, reply parsing and token counting."""
