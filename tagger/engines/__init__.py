"""Engines that tag large inputs beyond one process.

``partitions``: cutting inputs into partitions, tagging one partition into one
output file (atomic, with a ``.done.json`` record) and restarting; no engine.
``ray_engine``: runs the partitions on a Ray cluster (Ray Data, a pool of actors
that each load the model once).  Nothing here is imported by the local engine
(``opinion-tagger tag`` without ``--engine``).
"""
