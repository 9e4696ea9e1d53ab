"""The auto-tuner: pypto-lower's decisions searched on the simulator.

One module per job (docs/tuning.md): `space` (what can be chosen, pruned by
the tiling model), `search` (which candidates to measure next), `evaluate`
(one candidate lowered and simulated, in a worker), `executors` (a local
process pool or Ray), `key` and `cache` (the persistent results),
`tuner` (the search as a whole), `report` (the table, JSON and plot).
"""
