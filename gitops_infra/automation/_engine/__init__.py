"""Running the Pulumi engine: private plumbing of :mod:`gitops_infra.automation`.

- ``runner``: the one boundary where ``pulumi.automation`` is called and its errors become ours
  (``run_engine``), the engine's private temporary directory and settings copy;
- ``streamed``: each engine command run alone, its result read from its events;
- ``work``: the engine work the operations share (a preview, an ``up``, a recorded result);
- ``recording``: a Pulumi program run in-process under mocks, its resource graph recorded;
- ``wire``: how the engine marks secret and unknown values;
- ``processes``: which processes of an earlier run are still alive;
- ``compat``: the one door to Pulumi's private internals (``tests/unit/test_layering.py`` holds it so).
"""
