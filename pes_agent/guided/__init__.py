"""Guided mode: a small model picks among grounded options instead of writing plans and values.

Every decision of a run becomes a choice a 135M-parameter model makes well: one tool per part of the
request, among the few its words and values point to; the steps a part implies, added by data flow
(``dataflow``); each argument among values found in the request or in earlier results
(``grounding``, ``choices``); the answer checked against what the steps found (``answer``).

- ``prompts``: the guided planning, step and answer prompts and their reply schemas;
- ``replies``: those replies turned into plans and calls;
- ``step``: a guided tool step's turn inside the item loop;
- ``grounding``, ``choices``, ``arithmetic``, ``quotes``, ``dataflow``: where options come from.

Nothing here knows a tool, a domain or a benchmark.
"""
