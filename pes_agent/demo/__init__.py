"""The offline demo: two deterministic web tools and a recorded conversation to replay."""
